/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: paxos_config_parse on arbitrary bytes, handed over in a buffer of exactly
 * their length (no terminating NUL) so that reading past the end shows under ASan. A parse
 * that succeeds must yield a configuration inside the documented ranges; one that fails must
 * leave the caller's configuration untouched and say why.
 */
#include <paxos/storage_backends.h>
#include <paxos/options.h>
#include <paxos/acceptor.h>
#include <paxos/config.h>
#include <paxos/learner.h>
#include <paxos/proposer.h>
#include <paxos/storage.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_fields.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_config: %s:%d: invariant failed: %s\n", __FILE__,    \
				__LINE__, #cond);                                                  \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static void check_config(const struct paxos_config *c)
{
	for (int g = 0; g < PAXOS_GROUP_COUNT; g++) {
		CHECK(IN_MULTICAST(ntohl(c->groups[g].addr.s_addr)));
		CHECK(c->groups[g].port != 0);
		for (int k = 0; k < g; k++)
			CHECK(c->groups[g].addr.s_addr != c->groups[k].addr.s_addr ||
			      c->groups[g].port != c->groups[k].port);
	}
	CHECK(c->multicast_ttl <= 255);
	CHECK(c->max_datagram >= 512 && c->max_datagram <= 65507);
	CHECK(paxos_config_max_value(c) >= 1);
	CHECK(c->socket_buffer >= 65536 && c->socket_buffer <= 268435456);
	CHECK(c->acceptors >= 1 && c->acceptors <= PAXOS_MAX_ACCEPTORS);
	CHECK(c->proposers >= 1 && c->proposers <= PAXOS_MAX_PROPOSERS);
	CHECK(c->leader < c->proposers);
	CHECK(c->proposer_window >= 1 && c->proposer_window <= 65536);
	CHECK(c->proposer_concurrency >= 1 && c->proposer_concurrency <= c->proposer_window);
	CHECK(c->pending_size >= 1 && c->pending_size <= 1048576);
	CHECK(c->phase1_timeout_ms >= 1 && c->phase1_timeout_ms <= 600000);
	CHECK(c->phase2_timeout_ms >= 1 && c->phase2_timeout_ms <= 600000);
	CHECK(c->learner_window >= 16 && c->learner_window <= 1048576);
	CHECK(c->hole_check_ms >= 1 && c->hole_check_ms <= 600000);
	CHECK(c->repeat_batch >= 1 && c->repeat_batch <= PAXOS_ACCEPTOR_MAX_REPEAT);
	CHECK(c->learner_start == PAXOS_START_FROM_FIRST ||
	      c->learner_start == PAXOS_START_FROM_CURRENT);
	CHECK(c->acceptor_repeat_ms >= 1 && c->acceptor_repeat_ms <= 600000);
	CHECK(c->counters_interval_ms <= 3600000);
	CHECK(c->election == PAXOS_ELECTION_AUTO || c->election == PAXOS_ELECTION_MANUAL);
	CHECK(c->heartbeat_interval_ms >= 1 && c->heartbeat_timeout_ms > c->heartbeat_interval_ms);
	CHECK(memchr(c->storage, '\0', sizeof(c->storage)) != NULL);
	CHECK(strcmp(c->storage, "memory") == 0 || strcmp(c->storage, "lmdb") == 0 ||
	      strcmp(c->storage, "bdb") == 0);
	CHECK(memchr(c->storage_path, '\0', sizeof(c->storage_path)) != NULL);
	CHECK(memchr(c->auth_key_file, '\0', sizeof(c->auth_key_file)) != NULL);
	/* The parser resolves durability to the backend's default when the file names none. */
	CHECK(c->durability > PAXOS_DURABILITY_UNSET && c->durability < PAXOS_DURABILITY_COUNT);
	CHECK(c->lmdb_map_size >= (1ull << 20) && c->lmdb_map_size <= (1ull << 40));
	CHECK(c->memory_retention <= PAXOS_MEMORY_MAX_RETENTION);
	/* Accepted limits leave buffers the machine can hold (check_memory). */
	struct paxos_learner_options lo;
	paxos_learner_options_from_config(&lo, c);
	CHECK(paxos_learner_memory(&lo) <= paxos_config_memory_ceiling());
	struct paxos_proposer_options po;
	paxos_proposer_options_from_config(&po, c, 0);
	CHECK(paxos_proposer_memory(&po) <= paxos_config_memory_ceiling());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy: libFuzzer's own buffer is exact too, but the replay driver's may
	 * not be, and a read one byte past the end is what this target is here to catch. */
	char *text = malloc(size ? size : 1);
	CHECK(text != NULL);
	if (size)
		memcpy(text, data, size);

	struct paxos_config cfg, before;
	memset(&cfg, 0xa5, sizeof(cfg));
	before = cfg;
	char err[256];
	memset(err, 'x', sizeof(err));
	int rc = paxos_config_parse(&cfg, text, size, "fuzz.conf", err, sizeof(err));
	CHECK(memchr(err, '\0', sizeof(err)) != NULL);
	if (rc == PAXOS_OK) {
		CHECK(err[0] == '\0');
		check_config(&cfg);
	} else {
		CHECK(rc == PAXOS_E_CONFIG);
		CHECK(strncmp(err, "fuzz.conf:", 10) == 0);
		CHECK(memcmp(&cfg, &before, sizeof(cfg)) == 0);
	}
	free(text);
	return 0;
}
