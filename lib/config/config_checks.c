/* SPDX-License-Identifier: BSD-3-Clause */
/* paxos.conf: the checks across keys once the whole file is read (members and their addresses,
 * partitions, durability, the memory the settings ask for). */
#include <paxos/storage_backends.h>
#include <paxos/options.h>
#include <paxos/config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <paxos/acceptor.h>
#include <paxos/learner.h>
#include <paxos/proposer.h>
#include <paxos/storage.h>

#include "error.h"
#include "batch.h"
#include "auth.h"
#include "codec.h"
#include "config_fields.h"
#include "config_keys.h"
#include "parsing.h"

/* Line where the later of two keys was set (the one that made them conflict); 0 if neither. */
static unsigned later_line(const struct config_parse *p, const char *a, const char *b)
{
	unsigned la = p->set_on_line[config_find_key(a) - config_keys];
	unsigned lb = p->set_on_line[config_find_key(b) - config_keys];
	return la > lb ? la : lb;
}

static const struct config_key *group_key(size_t group)
{
	size_t offset = FIELD(groups) + group * sizeof(struct paxos_endpoint);

	for (size_t i = 0; i < config_key_count; i++)
		if (config_keys[i].type == KEY_GROUP && config_keys[i].offset == offset)
			return &config_keys[i];
	return NULL; /* unreachable: every group has a row */
}

/* Gives an unset durability the backend's default; refuses a mode the backend lacks. */
int config_resolve_durability(struct config_parse *p)
{
	struct paxos_config *c = &p->cfg;
	const struct storage_backend *b = config_find_backend(c->storage);
	char names[128];

	if (!b) /* unreachable: the storage key only takes listed names */
		return config_error(p, p->line, config_find_key("storage"), "unknown backend");
	if (c->durability == PAXOS_DURABILITY_UNSET) {
		c->durability = b->default_mode;
		return PAXOS_OK;
	}
	if (b->modes & (1u << c->durability))
		return PAXOS_OK;
	config_join_modes(b->modes, names, sizeof(names));
	return config_error(p, later_line(p, "durability", "storage"),
			    config_find_key("durability"),
			    "'%s' is not valid for storage %s (valid: %s)",
			    paxos_durability_name(c->durability), b->name, names);
}

uint64_t paxos_config_memory_ceiling(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || page_size <= 0)
		return UINT64_MAX;
	return (uint64_t)pages * (uint64_t)page_size / 2;
}

static double gib(uint64_t bytes)
{
	return (double)bytes / (double)(1ull << 30);
}

/*
 * The learner's and the proposer's buffers are allocated whole when they start, and filled as
 * instances go by: limits whose product the machine cannot hold would fail there ("out of
 * memory"), or later with the OOM killer. Refused here instead, naming the keys and the size.
 */
static int check_memory(struct config_parse *p)
{
	const struct paxos_config *c = &p->cfg;
	uint64_t ceiling = paxos_config_memory_ceiling();
	struct paxos_learner_options lo;
	paxos_learner_options_from_config(&lo, c);
	uint64_t need = paxos_learner_memory(&lo);
	if (need > ceiling)
		return config_error(
		    p, later_line(p, "learner-window", "max-datagram"),
		    config_find_key("learner-window"),
		    "%u instances x max-datagram %u bytes need %.1f GiB (%llu bytes) of "
		    "learner buffers, more than half this machine's memory (%.1f GiB); "
		    "lower learner-window or max-datagram",
		    c->learner_window, c->max_datagram, gib(need), (unsigned long long)need,
		    gib(ceiling));
	struct paxos_proposer_options po;
	paxos_proposer_options_from_config(&po, c, 0);
	need = paxos_proposer_memory(&po);
	if (need > ceiling) {
		unsigned line = later_line(p, "pending-list-size", "proposer-window");
		unsigned datagram = later_line(p, "max-datagram", "max-datagram");
		return config_error(
		    p, line > datagram ? line : datagram, config_find_key("pending-list-size"),
		    "%u values and proposer-window %u x max-datagram %u bytes need %.1f "
		    "GiB (%llu bytes) of proposer buffers, more than half this machine's "
		    "memory (%.1f GiB); lower one of them",
		    c->pending_size, c->proposer_window, c->max_datagram, gib(need),
		    (unsigned long long)need, gib(ceiling));
	}
	return PAXOS_OK;
}

/* "acceptor 1" or "proposer 0" for the member i of all acceptors then all proposers. */
static const struct paxos_endpoint *member(const struct paxos_config *c, size_t i, char *name,
					   size_t cap)
{
	bool acceptor = i < PAXOS_MAX_ACCEPTORS;
	size_t id = acceptor ? i : i - PAXOS_MAX_ACCEPTORS;
	snprintf(name, cap, "%s %zu", acceptor ? "acceptor" : "proposer", id);
	return acceptor ? &c->acceptor_address[id] : &c->proposer_address[id];
}

static unsigned member_line(const struct config_parse *p, size_t i)
{
	return i < PAXOS_MAX_ACCEPTORS ? p->acceptor_line[i]
				       : p->proposer_line[i - PAXOS_MAX_ACCEPTORS];
}

/* Member addresses: known ids only, each address once, and with transport unicast one for
 * every acceptor and proposer (but acceptors added later, see below). */
static int check_members(struct config_parse *p)
{
	const struct paxos_config *c = &p->cfg;
	const size_t total = PAXOS_MAX_ACCEPTORS + PAXOS_MAX_PROPOSERS;
	const struct config_key *transport = config_find_key("transport");
	char name[32], other[32], addr[INET_ADDRSTRLEN];

	for (size_t i = 0; i < total; i++) {
		const struct paxos_endpoint *e = member(c, i, name, sizeof(name));
		bool acceptor = i < PAXOS_MAX_ACCEPTORS;
		size_t id = acceptor ? i : i - PAXOS_MAX_ACCEPTORS;
		uint32_t count = acceptor ? c->acceptors : c->proposers;
		if (e->port && id >= count)
			return config_error(p, member_line(p, i),
					    config_find_key(acceptor ? "acceptor" : "proposer"),
					    "unknown id %zu: ids are below %s (%u)", id,
					    acceptor ? "acceptors" : "proposers", count);
		/* With membership-alpha, an acceptor that is no member at the start may have its
		 * address carried by the command that adds it (paxos-admin add-acceptor ID
		 * HOST:PORT) instead. */
		bool later = acceptor && c->membership_alpha && c->initial_members &&
			     id >= c->initial_members;
		if (!e->port && id < count && c->transport == PAXOS_TRANSPORT_UNICAST && !later)
			return config_error(p, p->set_on_line[transport - config_keys], transport,
					    "unicast needs every member's address, and %s has none "
					    "(add a line '%s HOST:PORT')",
					    name, name);
		for (size_t j = 0; e->port && j < i; j++) {
			const struct paxos_endpoint *f = member(c, j, other, sizeof(other));
			if (f->port != e->port || f->addr.s_addr != e->addr.s_addr)
				continue;
			inet_ntop(AF_INET, &e->addr, addr, sizeof(addr));
			return config_error(p, member_line(p, i),
					    config_find_key(acceptor ? "acceptor" : "proposer"),
					    "%s:%u of %s is also the address of %s", addr, e->port,
					    name, other);
		}
	}
	/* The unicast transport puts one byte before every datagram (lib/net/unicast.c). */
	if (c->transport == PAXOS_TRANSPORT_UNICAST && c->max_datagram > 65506)
		return config_error(
		    p, later_line(p, "max-datagram", "transport"), config_find_key("max-datagram"),
		    "%u is above 65506, the most the unicast transport carries", c->max_datagram);
	return PAXOS_OK;
}

/* Partitions > 1: their ports and storage paths, and the acceptors of each (partitions.c). */
static int check_partitions(struct config_parse *p)
{
	char why[256];
	uint32_t sets[PAXOS_MAX_PARTITIONS];
	if (config_partition_sets(&p->cfg, sets, why, sizeof(why)) != 0)
		return config_error(p, later_line(p, "partition-acceptors", "partitions"),
				    config_find_key("partition-acceptors"), "%s", why);
	if (p->cfg.membership_alpha && strcmp(p->cfg.partition_acceptors, "all") != 0)
		return config_error(p, later_line(p, "partition-acceptors", "membership-alpha"),
				    config_find_key("partition-acceptors"),
				    "'%s' needs membership-alpha 0: a partition's acceptors are "
				    "fixed by this line, not changed through its log",
				    p->cfg.partition_acceptors);
	if (config_partitions_conflict(&p->cfg, why, sizeof(why)) == 0)
		return PAXOS_OK;
	return config_error(p, later_line(p, "partitions", "partitions"),
			    config_find_key("partitions"), "%s", why);
}

/* Rules that involve more than one key, checked once the whole file is read. */
int config_check_cross(struct config_parse *p)
{
	const struct paxos_config *c = &p->cfg;
	int rc = config_resolve_durability(p);

	if (rc != PAXOS_OK)
		return rc;

	if (c->leader >= c->proposers)
		return config_error(p, later_line(p, "leader", "proposers"),
				    config_find_key("leader"),
				    "%u must be less than proposers (%u)", c->leader, c->proposers);
	/* A timeout within one interval would declare live proposers dead between beats. */
	if (c->heartbeat_timeout_ms <= c->heartbeat_interval_ms)
		return config_error(p,
				    later_line(p, "heartbeat-timeout-ms", "heartbeat-interval-ms"),
				    config_find_key("heartbeat-timeout-ms"),
				    "%u must be greater than heartbeat-interval-ms (%u)",
				    c->heartbeat_timeout_ms, c->heartbeat_interval_ms);
	/* Merging learners agree on the order only if each cuts every log from its start. */
	if (c->learner_merge && c->learner_start == PAXOS_START_FROM_CURRENT)
		return config_error(
		    p, later_line(p, "learner-merge", "learner-start"),
		    config_find_key("learner-merge"),
		    "needs learner-start first: a learner that starts at the current "
		    "instance would merge the partitions in another order than the "
		    "others");
	if (c->initial_members > c->acceptors || (c->initial_members && !c->membership_alpha))
		return config_error(p, later_line(p, "initial-members", "acceptors"),
				    config_find_key("initial-members"),
				    "%u must not exceed acceptors (%u), and needs membership-alpha",
				    c->initial_members, c->acceptors);
	if (c->initial_proposers > c->proposers || (c->initial_proposers && !c->membership_alpha))
		return config_error(p, later_line(p, "initial-proposers", "proposers"),
				    config_find_key("initial-proposers"),
				    "%u must not exceed proposers (%u), and needs membership-alpha",
				    c->initial_proposers, c->proposers);
	if (c->membership_alpha && c->proposers > 32)
		return config_error(
		    p, later_line(p, "membership-alpha", "proposers"),
		    config_find_key("membership-alpha"),
		    "needs at most 32 proposers (the proposer set of a configuration "
		    "has one bit per id), not %u",
		    c->proposers);
	if (c->proposer_concurrency > c->proposer_window)
		return config_error(p, later_line(p, "proposer-concurrency", "proposer-window"),
				    config_find_key("proposer-concurrency"),
				    "%u must not exceed proposer-window (%u)",
				    c->proposer_concurrency, c->proposer_window);
	for (size_t i = 0; i < PAXOS_GROUP_COUNT; i++) {
		for (size_t j = 0; j < i; j++) {
			const struct paxos_endpoint *a = &c->groups[i], *b = &c->groups[j];
			if (a->addr.s_addr != b->addr.s_addr || a->port != b->port)
				continue;
			char addr[INET_ADDRSTRLEN];
			inet_ntop(AF_INET, &a->addr, addr, sizeof(addr));
			const struct config_key *ki = group_key(i), *kj = group_key(j);
			unsigned line = later_line(p, ki->name, kj->name);
			return config_error(p, line, ki, "%s:%u is also used by %s", addr, a->port,
					    kj->name);
		}
	}
	rc = check_members(p);
	if (rc == PAXOS_OK)
		rc = check_partitions(p);
	if (rc != PAXOS_OK)
		return rc;
	return check_memory(p);
}
