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

uint32_t paxos_config_partitions(const struct paxos_config *cfg)
{
	return cfg ? cfg->partitions : 0;
}

int paxos_config_partition(const struct paxos_config *cfg, uint32_t p, struct paxos_config *out)
{
	if (!cfg || !out || p >= cfg->partitions)
		return PAXOS_E_INVALID;
	if (out != cfg)
		*out = *cfg;
	out->partition = p;
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
