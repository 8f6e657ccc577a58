/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitions (paxos.conf "partitions"): where each one lives, derived from the configuration
 * (partition P adds P * PAXOS_PARTITION_PORT_STEP to every port and stores under
 * storage-path/partition-P), and the rule the parser checks: no two partitions share a port,
 * and the storage paths fit.
 */
#include "config_keys.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The endpoints partition 0 uses: the groups (multicast) or the members' addresses
 * (unicast); partition P uses each with PAXOS_PARTITION_PORT_STEP * P added to its port. */
static size_t partition_bases(const struct paxos_config *c, const struct paxos_endpoint **bases)
{
	size_t count = 0;
	if (c->transport == PAXOS_TRANSPORT_MULTICAST) {
		for (size_t g = 0; g < PAXOS_GROUP_COUNT; g++)
			bases[count++] = &c->groups[g];
		return count;
	}
	for (uint32_t i = 0; i < c->acceptors; i++)
		bases[count++] = &c->acceptor_address[i];
	for (uint32_t i = 0; i < c->proposers; i++)
		bases[count++] = &c->proposer_address[i];
	return count;
}

/* Says why in why (cap bytes): the conflict's answer. */
static int conflict(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
	return -1;
}

int config_partitions_conflict(const struct paxos_config *c, char *why, size_t cap)
{
	if (c->partitions <= 1)
		return 0;
	const struct paxos_endpoint
	    *bases[PAXOS_GROUP_COUNT + PAXOS_MAX_ACCEPTORS + PAXOS_MAX_PROPOSERS];
	size_t count = partition_bases(c, bases);
	uint32_t span = (c->partitions - 1) * PAXOS_PARTITION_PORT_STEP;
	for (size_t b = 0; b < count; b++)
		if (bases[b]->port + span > 65535)
			return conflict(why, cap, "%u partitions need port %u plus %u, above 65535",
					c->partitions, bases[b]->port, span);
	/* Ports of (partition i, endpoint a) and (j, b) coincide when their distance is a
	 * multiple of the step below the partitions' span. */
	for (size_t a = 0; a < count; a++)
		for (size_t b = 0; b < count; b++) {
			if (a == b || bases[a]->addr.s_addr != bases[b]->addr.s_addr ||
			    bases[a]->port >= bases[b]->port)
				continue;
			uint32_t d = (uint32_t)bases[b]->port - bases[a]->port;
			if (d % PAXOS_PARTITION_PORT_STEP || d > span)
				continue;
			char addr[INET_ADDRSTRLEN];
			inet_ntop(AF_INET, &bases[b]->addr, addr, sizeof(addr));
			return conflict(why, cap,
					"partition %u would use %s:%u, which partition 0 uses "
					"already (each partition adds %u to every port)",
					d / PAXOS_PARTITION_PORT_STEP, addr, bases[b]->port,
					PAXOS_PARTITION_PORT_STEP);
		}
	if (strlen(c->storage_path) + sizeof("/partition-64") - 1 > PAXOS_PATH_MAX)
		return conflict(why, cap,
				"storage-path is too long for partitions: each partition stores "
				"under storage-path/partition-P, at most %u characters",
				PAXOS_PATH_MAX);
	return 0;
}

/* "0-2,5": acceptor ids and ranges below acceptors, into *mask; the text ends at end. */
static int parse_set(const char *text, const char *end, uint32_t acceptors, uint32_t *mask,
		     char *why, size_t cap)
{
	const char *at = text;
	*mask = 0;
	while (at < end) {
		char *stop;
		if (*at < '0' || *at > '9')
			break;
		unsigned long lo = strtoul(at, &stop, 10), hi = lo;
		if (stop < end && *stop == '-') {
			at = stop + 1;
			if (at >= end || *at < '0' || *at > '9')
				break;
			hi = strtoul(at, &stop, 10);
		}
		if (stop > end)
			break;
		if (lo > hi)
			return conflict(why, cap, "%lu-%lu is not a range (the first id is higher)",
					lo, hi);
		if (hi >= acceptors)
			return conflict(why, cap,
					"unknown acceptor id %lu: ids are below acceptors (%u)", hi,
					acceptors);
		for (unsigned long i = lo; i <= hi; i++)
			*mask |= 1u << i;
		at = stop;
		if (at < end && *at == ',' && at + 1 < end)
			at++;
		else if (at < end)
			break;
	}
	if (at != end || !*mask)
		return conflict(why, cap,
				"'%.*s' is not a set of acceptor ids (such as 0-2 or 0,2,4): "
				"every partition needs at least one acceptor",
				(int)(end - text), text);
	return 0;
}

int config_partition_sets(const struct paxos_config *c, uint32_t *sets, char *why, size_t cap)
{
	const char *text = c->partition_acceptors;
	uint32_t n = c->acceptors, all = n >= 32 ? UINT32_MAX : (1u << n) - 1;
	if (!text[0] || strcmp(text, "all") == 0) {
		for (uint32_t p = 0; p < c->partitions; p++)
			sets[p] = all;
		return 0;
	}
	if (strcmp(text, "spread") == 0) {
		/* Disjoint sets of acceptors / partitions each when that is at least 3; else sets
		 * of 3 (all acceptors when fewer), each starting where the one before ended. */
		uint32_t size = n / c->partitions;
		if (size < 3)
			size = n < 3 ? n : 3;
		for (uint32_t p = 0; p < c->partitions; p++) {
			sets[p] = 0;
			for (uint32_t j = 0; j < size; j++)
				sets[p] |= 1u << ((p * size + j) % n);
		}
		return 0;
	}
	uint32_t p = 0;
	const char *at = text;
	for (;;) {
		const char *end = strchr(at, '/');
		if (!end)
			end = at + strlen(at);
		if (p == c->partitions)
			return conflict(why, cap,
					"'%s' names more sets than partitions (%u): one set per "
					"partition, separated by '/'",
					text, c->partitions);
		if (parse_set(at, end, n, &sets[p], why, cap) != 0)
			return -1;
		p++;
		if (!*end)
			break;
		at = end + 1;
	}
	if (p != c->partitions)
		return conflict(why, cap,
				"'%s' names %u set%s, but there are %u partitions: one set per "
				"partition, separated by '/' (or all, or spread)",
				text, p, p == 1 ? "" : "s", c->partitions);
	return 0;
}

/* The acceptors of partition p (every acceptor when the configuration is not valid). */
static uint32_t partition_set(const struct paxos_config *c, uint32_t p)
{
	uint32_t sets[PAXOS_MAX_PARTITIONS];
	char why[256];
	if (p >= c->partitions || config_partition_sets(c, sets, why, sizeof(why)) != 0)
		return c->acceptors >= 32 ? UINT32_MAX : (1u << c->acceptors) - 1;
	return sets[p];
}

int paxos_config_partition_acceptor(const struct paxos_config *cfg, uint32_t p, uint32_t id,
				    uint32_t *local)
{
	if (!cfg || p >= cfg->partitions || id >= cfg->acceptors)
		return PAXOS_E_INVALID;
	uint32_t set = partition_set(cfg, p);
	if (!(set >> id & 1))
		return PAXOS_E_INVALID;
	if (local)
		*local = (uint32_t)__builtin_popcount(set & ((1u << id) - 1));
	return PAXOS_OK;
}

uint32_t paxos_config_partitions(const struct paxos_config *cfg)
{
	return cfg ? cfg->partitions : 0;
}

int paxos_config_partition(const struct paxos_config *cfg, uint32_t p, struct paxos_config *out)
{
	if (!cfg || !out || p >= cfg->partitions)
		return PAXOS_E_INVALID;
	uint32_t set = partition_set(cfg, p), acceptors = cfg->acceptors;
	if (out != cfg)
		*out = *cfg;
	out->partition = p;
	if (set != (acceptors >= 32 ? UINT32_MAX : (1u << acceptors) - 1)) {
		/* The partition's own acceptors, numbered 0.. in the order of their ids: its
		 * quorums, recovery and learners count only them. */
		uint32_t k = 0;
		for (uint32_t id = 0; id < acceptors; id++)
			if (set >> id & 1)
				out->acceptor_address[k++] = out->acceptor_address[id];
		memset(&out->acceptor_address[k], 0,
		       (PAXOS_MAX_ACCEPTORS - k) * sizeof(out->acceptor_address[0]));
		out->acceptors = k;
	}
	snprintf(out->partition_acceptors, sizeof(out->partition_acceptors), "all");
	if (p == 0)
		return PAXOS_OK;
	uint16_t add = (uint16_t)(p * PAXOS_PARTITION_PORT_STEP);
	for (size_t g = 0; g < PAXOS_GROUP_COUNT; g++)
		out->groups[g].port = (uint16_t)(out->groups[g].port + add);
	for (uint32_t i = 0; i < PAXOS_MAX_ACCEPTORS; i++)
		if (out->acceptor_address[i].port)
			out->acceptor_address[i].port =
			    (uint16_t)(out->acceptor_address[i].port + add);
	for (uint32_t i = 0; i < PAXOS_MAX_PROPOSERS; i++)
		if (out->proposer_address[i].port)
			out->proposer_address[i].port =
			    (uint16_t)(out->proposer_address[i].port + add);
	/* One metrics server per process: partition 0's. */
	out->metrics_listen.port = 0;
	char path[sizeof(out->storage_path)];
	int n = snprintf(path, sizeof(path), "%s/partition-%u", cfg->storage_path, p);
	if (n < 0 || (size_t)n >= sizeof(path))
		return PAXOS_E_INVALID; /* the parser leaves room for it */
	memcpy(out->storage_path, path, sizeof(path));
	return PAXOS_OK;
}
