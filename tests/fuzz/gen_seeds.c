/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes the decode seed corpus: one valid datagram per message type, some with edge values,
 * and a batch of all types in one datagram, also in the wire version before (as a node of it
 * writes it, and as a newer node speaking it for one does). Run once; the output is committed in
 * tests/fuzz/corpus/decode/. Usage: fuzz_gen_seeds DIR
 */
#include "codec.h"

#include <stdio.h>
#include <string.h>

static const uint8_t payload[] = "a client value";
static const struct paxos_value value = {payload, sizeof(payload) - 1};
static const struct paxos_value empty = {NULL, 0};
static const uint8_t hashes[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const uint8_t mac[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static int write_datagram_as(const char *dir, const char *name, const struct paxos_header *hp,
			     const struct paxos_message *m, size_t count)
{
	static uint8_t buf[8192];
	struct paxos_header h = *hp;
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, sizeof(buf), &h);
	for (size_t i = 0; i < count; i++)
		if (paxos_encoder_add(&e, &m[i]) != PAXOS_OK) {
			fprintf(stderr, "%s: message %zu does not encode\n", name, i);
			return -1;
		}
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, e.len, f) != e.len || fclose(f) != 0) {
		perror(path);
		return -1;
	}
	return 0;
}

static int write_datagram(const char *dir, const char *name, enum paxos_role role,
			  const struct paxos_message *m, size_t count)
{
	const struct paxos_header h = {.role = role, .sender_id = 1};
	return write_datagram_as(dir, name, &h, m, count);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	const struct paxos_message m[] = {
	    {.type = PAXOS_MSG_PREPARE, .u.prepare = {1, 101}},
	    {.type = PAXOS_MSG_PROMISE, .u.promise = {7, 201, 101, value, 2}},
	    {.type = PAXOS_MSG_ACCEPT, .u.accept = {7, 201, value, true, 3, 6}},
	    {.type = PAXOS_MSG_ACCEPTED, .u.accepted = {7, 201, value, 1, true, false, 2}},
	    {.type = PAXOS_MSG_REJECT, .u.reject = {9, 301, 0}},
	    {.type = PAXOS_MSG_REPEAT, .u.repeat = {3, 300}},
	    {.type = PAXOS_MSG_TRIM, .u.trim = {100}},
	    {.type = PAXOS_MSG_ACCEPTOR_STATE, .u.acceptor_state = {2, 5000, 100, 2, true}},
	    {.type = PAXOS_MSG_CLIENT_VALUE, .u.client_value = {value, 0x1122334455667788ull}},
	    {.type = PAXOS_MSG_TRIMMED, .u.trimmed = {1, 100, 2}},
	    {.type = PAXOS_MSG_HEARTBEAT, .u.heartbeat = {1, 42}},
	    {.type = PAXOS_MSG_LEADER, .u.leader = {PAXOS_LEADER_AUTO, 1700000000000001ull}},
	    {.type = PAXOS_MSG_REPAIR, .u.repair = {40, 52}},
	    {.type = PAXOS_MSG_ACCEPTOR_HELLO,
	     .u.acceptor_hello = {1, 1700000000000001ull, true, 12, 9000000000000000001ull, 2}},
	    {.type = PAXOS_MSG_RECOVER_ASK, .u.recover_ask = {1, 1700000000000001ull}},
	    {.type = PAXOS_MSG_RECOVER_INFO,
	     .u.recover_info = {PAXOS_ROLE_ACCEPTOR, 2, 1, 1700000000000001ull, 900, 4294967398ull,
				3, true}},
	    {.type = PAXOS_MSG_REFUSED, .u.refused = {1, 12, {hashes, sizeof(hashes)}}},
	    {.type = PAXOS_MSG_CHANGE,
	     .u.change = {{hashes, sizeof(hashes)}, PAXOS_CHANGE_FORCE, {mac, sizeof(mac)}}},
	    {.type = PAXOS_MSG_SNAPSHOT_ASK, .u.snapshot_ask = {77, 100, 0, 0}},
	    {.type = PAXOS_MSG_SNAPSHOT_OFFER, .u.snapshot_offer = {9, 77, 120, 5000, 1234567}},
	    {.type = PAXOS_MSG_SNAPSHOT_CHUNK,
	     .u.snapshot_chunk = {77, 120, 5000, 1234567, 4000, value}},
	    {.type = PAXOS_MSG_CHOSEN, .u.chosen = {301, 3, 300}},
	};
	static const enum paxos_role sender[PAXOS_MSG_TYPE_MAX + 1] = {
	    [PAXOS_MSG_PREPARE] = PAXOS_ROLE_PROPOSER,
	    [PAXOS_MSG_PROMISE] = PAXOS_ROLE_ACCEPTOR,
	    [PAXOS_MSG_ACCEPT] = PAXOS_ROLE_PROPOSER,
	    [PAXOS_MSG_ACCEPTED] = PAXOS_ROLE_ACCEPTOR,
	    [PAXOS_MSG_REJECT] = PAXOS_ROLE_ACCEPTOR,
	    [PAXOS_MSG_REPEAT] = PAXOS_ROLE_LEARNER,
	    [PAXOS_MSG_TRIM] = PAXOS_ROLE_LEARNER,
	    [PAXOS_MSG_ACCEPTOR_STATE] = PAXOS_ROLE_ACCEPTOR,
	    [PAXOS_MSG_CLIENT_VALUE] = PAXOS_ROLE_CLIENT,
	    [PAXOS_MSG_TRIMMED] = PAXOS_ROLE_ACCEPTOR,
	    [PAXOS_MSG_HEARTBEAT] = PAXOS_ROLE_PROPOSER,
	    [PAXOS_MSG_LEADER] = PAXOS_ROLE_CLIENT,
	    [PAXOS_MSG_REPAIR] = PAXOS_ROLE_LEARNER,
	    [PAXOS_MSG_ACCEPTOR_HELLO] = PAXOS_ROLE_ACCEPTOR,
	    [PAXOS_MSG_RECOVER_ASK] = PAXOS_ROLE_ACCEPTOR,
	    [PAXOS_MSG_RECOVER_INFO] = PAXOS_ROLE_PROPOSER,
	    [PAXOS_MSG_REFUSED] = PAXOS_ROLE_PROPOSER,
	    [PAXOS_MSG_CHANGE] = PAXOS_ROLE_CLIENT,
	    [PAXOS_MSG_SNAPSHOT_ASK] = PAXOS_ROLE_CLIENT,
	    [PAXOS_MSG_SNAPSHOT_OFFER] = PAXOS_ROLE_CLIENT,
	    [PAXOS_MSG_SNAPSHOT_CHUNK] = PAXOS_ROLE_CLIENT,
	    [PAXOS_MSG_CHOSEN] = PAXOS_ROLE_PROPOSER,
	};
	const size_t count = sizeof(m) / sizeof(m[0]);
	char name[64];
	int rc = 0;

	for (size_t i = 0; i < count; i++) {
		snprintf(name, sizeof(name), "%02d-%s", (int)m[i].type,
			 paxos_msg_type_name(m[i].type));
		rc |= write_datagram(dir, name, sender[m[i].type], &m[i], 1);
	}
	rc |= write_datagram(dir, "batch-all-types", PAXOS_ROLE_PROPOSER, m, count);
	rc |= write_datagram(dir, "header-only", PAXOS_ROLE_CLIENT, NULL, 0);
	struct paxos_header before = {.role = PAXOS_ROLE_ACCEPTOR,
				      .sender_id = 1,
				      .version = PAXOS_WIRE_VERSION_MIN,
				      .speech = PAXOS_WIRE_NATIVE};
	/* The types the version before has (those added since are never sent in it). */
	struct paxos_message older[sizeof(m) / sizeof(m[0])];
	size_t older_count = 0;
	for (size_t i = 0; i < count; i++)
		if (m[i].type < PAXOS_MSG_CHANGE)
			older[older_count++] = m[i];
	rc |= write_datagram_as(dir, "batch-all-types-before", &before, older, older_count);
	before.speech = PAXOS_WIRE_DOWN;
	rc |= write_datagram_as(dir, "batch-all-types-before-down", &before, older, older_count);

	/* Edges: largest numbers, empty values, a non-final accepted, a valueless one. */
	const struct paxos_message edge[] = {
	    {.type = PAXOS_MSG_PREPARE, .u.prepare = {UINT64_MAX, UINT32_MAX}},
	    {.type = PAXOS_MSG_PROMISE, .u.promise = {UINT64_MAX, UINT32_MAX, 0, empty, 31}},
	    {.type = PAXOS_MSG_ACCEPT, .u.accept = {UINT64_MAX, UINT32_MAX, empty}},
	    {.type = PAXOS_MSG_ACCEPTED, .u.accepted = {UINT64_MAX, UINT32_MAX, empty, 31, false}},
	    {.type = PAXOS_MSG_ACCEPTED,
	     .u.accepted = {UINT64_MAX, UINT32_MAX, empty, 31, false, true}},
	    {.type = PAXOS_MSG_REPEAT, .u.repeat = {0, UINT64_MAX}},
	    {.type = PAXOS_MSG_TRIM, .u.trim = {UINT64_MAX}},
	    {.type = PAXOS_MSG_HEARTBEAT, .u.heartbeat = {PAXOS_MAX_PROPOSERS - 1, UINT64_MAX}},
	    {.type = PAXOS_MSG_LEADER, .u.leader = {0}},
	};
	rc |= write_datagram(dir, "batch-edges", PAXOS_ROLE_PROPOSER, edge,
			     sizeof(edge) / sizeof(edge[0]));
	return rc ? 1 : 0;
}
