/* SPDX-License-Identifier: BSD-3-Clause */
/* The wire codec's unit tests' shared part (codec_fixture.h). */
#include "codec_fixture.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

struct paxos_decoder dec;

void setup(void)
{
	paxos_decoder_init(&dec);
}

void teardown(void)
{
	paxos_decoder_destroy(&dec);
}

const struct paxos_header test_header = {.role = PAXOS_ROLE_PROPOSER, .sender_id = 7};

/* ---- helpers ---- */

bool value_inside(const struct paxos_value *v, const uint8_t *buf, size_t len)
{
	uintptr_t start = (uintptr_t)buf, p = (uintptr_t)v->data;
	return p >= start && p - start <= len && v->len <= len - (p - start);
}

bool value_eq(const struct paxos_value *a, const struct paxos_value *b)
{
	return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

void assert_msg_eq(const struct paxos_message *a, const struct paxos_message *b)
{
	ck_assert_int_eq(a->type, b->type);
	switch (a->type) {
	case PAXOS_MSG_PREPARE:
		ck_assert_uint_eq(a->u.prepare.iid, b->u.prepare.iid);
		ck_assert_uint_eq(a->u.prepare.ballot, b->u.prepare.ballot);
		break;
	case PAXOS_MSG_PROMISE:
		ck_assert_uint_eq(a->u.promise.iid, b->u.promise.iid);
		ck_assert_uint_eq(a->u.promise.ballot, b->u.promise.ballot);
		ck_assert_uint_eq(a->u.promise.value_ballot, b->u.promise.value_ballot);
		ck_assert_uint_eq(a->u.promise.acceptor_id, b->u.promise.acceptor_id);
		break;
	case PAXOS_MSG_ACCEPT:
		ck_assert_uint_eq(a->u.accept.iid, b->u.accept.iid);
		ck_assert_uint_eq(a->u.accept.ballot, b->u.accept.ballot);
		ck_assert_uint_eq(a->u.accept.chosen_from, b->u.accept.chosen_from);
		ck_assert_uint_eq(a->u.accept.chosen_to, b->u.accept.chosen_to);
		ck_assert_int_eq(a->u.accept.spares_rest, b->u.accept.spares_rest);
		break;
	case PAXOS_MSG_ACCEPTED:
		ck_assert_uint_eq(a->u.accepted.iid, b->u.accepted.iid);
		ck_assert_uint_eq(a->u.accepted.ballot, b->u.accepted.ballot);
		ck_assert_uint_eq(a->u.accepted.acceptor_id, b->u.accepted.acceptor_id);
		ck_assert_int_eq(a->u.accepted.final, b->u.accepted.final);
		ck_assert_uint_eq(a->u.accepted.generation, b->u.accepted.generation);
		ck_assert_int_eq(a->u.accepted.valueless, b->u.accepted.valueless);
		break;
	case PAXOS_MSG_REJECT:
		ck_assert_uint_eq(a->u.reject.iid, b->u.reject.iid);
		ck_assert_uint_eq(a->u.reject.ballot, b->u.reject.ballot);
		ck_assert_uint_eq(a->u.reject.acceptor_id, b->u.reject.acceptor_id);
		break;
	case PAXOS_MSG_REPEAT:
		ck_assert_uint_eq(a->u.repeat.from, b->u.repeat.from);
		ck_assert_uint_eq(a->u.repeat.to, b->u.repeat.to);
		break;
	case PAXOS_MSG_TRIM:
		ck_assert_uint_eq(a->u.trim.iid, b->u.trim.iid);
		break;
	case PAXOS_MSG_ACCEPTOR_STATE:
		ck_assert_uint_eq(a->u.acceptor_state.acceptor_id, b->u.acceptor_state.acceptor_id);
		ck_assert_uint_eq(a->u.acceptor_state.highest_accepted,
				  b->u.acceptor_state.highest_accepted);
		ck_assert_uint_eq(a->u.acceptor_state.trim_iid, b->u.acceptor_state.trim_iid);
		ck_assert_uint_eq(a->u.acceptor_state.generation, b->u.acceptor_state.generation);
		ck_assert_int_eq(a->u.acceptor_state.recovering, b->u.acceptor_state.recovering);
		break;
	case PAXOS_MSG_CLIENT_VALUE:
		ck_assert_uint_eq(a->u.client_value.id, b->u.client_value.id);
		break;
	case PAXOS_MSG_TRIMMED:
		ck_assert_uint_eq(a->u.trimmed.acceptor_id, b->u.trimmed.acceptor_id);
		ck_assert_uint_eq(a->u.trimmed.iid, b->u.trimmed.iid);
		ck_assert_uint_eq(a->u.trimmed.generation, b->u.trimmed.generation);
		break;
	case PAXOS_MSG_HEARTBEAT:
		ck_assert_uint_eq(a->u.heartbeat.proposer_id, b->u.heartbeat.proposer_id);
		ck_assert_uint_eq(a->u.heartbeat.next_iid, b->u.heartbeat.next_iid);
		break;
	case PAXOS_MSG_LEADER:
		ck_assert_uint_eq(a->u.leader.leader_id, b->u.leader.leader_id);
		ck_assert_uint_eq(a->u.leader.sent_at, b->u.leader.sent_at);
		break;
	case PAXOS_MSG_REPAIR:
		ck_assert_uint_eq(a->u.repair.from, b->u.repair.from);
		ck_assert_uint_eq(a->u.repair.to, b->u.repair.to);
		break;
	case PAXOS_MSG_ACCEPTOR_HELLO:
		ck_assert_uint_eq(a->u.acceptor_hello.acceptor_id, b->u.acceptor_hello.acceptor_id);
		ck_assert_uint_eq(a->u.acceptor_hello.incarnation, b->u.acceptor_hello.incarnation);
		ck_assert_int_eq(a->u.acceptor_hello.recovering, b->u.acceptor_hello.recovering);
		ck_assert_uint_eq(a->u.acceptor_hello.age, b->u.acceptor_hello.age);
		ck_assert_uint_eq(a->u.acceptor_hello.echo, b->u.acceptor_hello.echo);
		ck_assert_uint_eq(a->u.acceptor_hello.generation, b->u.acceptor_hello.generation);
		break;
	case PAXOS_MSG_RECOVER_ASK:
		ck_assert_uint_eq(a->u.recover_ask.acceptor_id, b->u.recover_ask.acceptor_id);
		ck_assert_uint_eq(a->u.recover_ask.incarnation, b->u.recover_ask.incarnation);
		break;
	case PAXOS_MSG_RECOVER_INFO:
		ck_assert_uint_eq(a->u.recover_info.role, b->u.recover_info.role);
		ck_assert_uint_eq(a->u.recover_info.sender_id, b->u.recover_info.sender_id);
		ck_assert_uint_eq(a->u.recover_info.acceptor_id, b->u.recover_info.acceptor_id);
		ck_assert_uint_eq(a->u.recover_info.incarnation, b->u.recover_info.incarnation);
		ck_assert_uint_eq(a->u.recover_info.highest_iid, b->u.recover_info.highest_iid);
		ck_assert_uint_eq(a->u.recover_info.highest_ballot,
				  b->u.recover_info.highest_ballot);
		ck_assert_uint_eq(a->u.recover_info.generation, b->u.recover_info.generation);
		ck_assert_int_eq(a->u.recover_info.founder, b->u.recover_info.founder);
		break;
	case PAXOS_MSG_CONFIG_ASK:
		ck_assert_uint_eq(a->u.config_ask.nonce, b->u.config_ask.nonce);
		break;
	case PAXOS_MSG_CONFIG_INFO:
		ck_assert_uint_eq(a->u.config_info.acceptor_id, b->u.config_info.acceptor_id);
		ck_assert_uint_eq(a->u.config_info.nonce, b->u.config_info.nonce);
		ck_assert_int_eq(a->u.config_info.settled, b->u.config_info.settled);
		ck_assert(value_eq(&a->u.config_info.history, &b->u.config_info.history));
		break;
	case PAXOS_MSG_REFUSED:
		ck_assert_uint_eq(a->u.refused.proposer_id, b->u.refused.proposer_id);
		ck_assert_uint_eq(a->u.refused.dropped, b->u.refused.dropped);
		ck_assert(value_eq(&a->u.refused.hashes, &b->u.refused.hashes));
		break;
	case PAXOS_MSG_SNAPSHOT_ASK:
		ck_assert_uint_eq(a->u.snapshot_ask.nonce, b->u.snapshot_ask.nonce);
		ck_assert_uint_eq(a->u.snapshot_ask.iid, b->u.snapshot_ask.iid);
		ck_assert_uint_eq(a->u.snapshot_ask.server, b->u.snapshot_ask.server);
		ck_assert_uint_eq(a->u.snapshot_ask.offset, b->u.snapshot_ask.offset);
		break;
	case PAXOS_MSG_SNAPSHOT_OFFER:
		ck_assert_uint_eq(a->u.snapshot_offer.server, b->u.snapshot_offer.server);
		ck_assert_uint_eq(a->u.snapshot_offer.nonce, b->u.snapshot_offer.nonce);
		ck_assert_uint_eq(a->u.snapshot_offer.iid, b->u.snapshot_offer.iid);
		ck_assert_uint_eq(a->u.snapshot_offer.total, b->u.snapshot_offer.total);
		ck_assert_uint_eq(a->u.snapshot_offer.checksum, b->u.snapshot_offer.checksum);
		break;
	case PAXOS_MSG_SNAPSHOT_CHUNK:
		ck_assert_uint_eq(a->u.snapshot_chunk.nonce, b->u.snapshot_chunk.nonce);
		ck_assert_uint_eq(a->u.snapshot_chunk.iid, b->u.snapshot_chunk.iid);
		ck_assert_uint_eq(a->u.snapshot_chunk.total, b->u.snapshot_chunk.total);
		ck_assert_uint_eq(a->u.snapshot_chunk.checksum, b->u.snapshot_chunk.checksum);
		ck_assert_uint_eq(a->u.snapshot_chunk.offset, b->u.snapshot_chunk.offset);
		ck_assert(value_eq(&a->u.snapshot_chunk.bytes, &b->u.snapshot_chunk.bytes));
		break;
	case PAXOS_MSG_CHOSEN:
		ck_assert_uint_eq(a->u.chosen.ballot, b->u.chosen.ballot);
		ck_assert_uint_eq(a->u.chosen.from, b->u.chosen.from);
		ck_assert_uint_eq(a->u.chosen.to, b->u.chosen.to);
		break;
	case PAXOS_MSG_CONFIG_PUSH:
		ck_assert_uint_eq(a->u.config_push.proposer_id, b->u.config_push.proposer_id);
		ck_assert_int_eq(a->u.config_push.settled, b->u.config_push.settled);
		ck_assert(value_eq(&a->u.config_push.history, &b->u.config_push.history));
		break;
	case PAXOS_MSG_CHANGE:
		ck_assert(value_eq(&a->u.change.command, &b->u.change.command));
		ck_assert_uint_eq(a->u.change.flags, b->u.change.flags);
		ck_assert(value_eq(&a->u.change.mac, &b->u.change.mac));
		break;
	}
	const struct paxos_value *va = paxos_msg_value(a), *vb = paxos_msg_value(b);
	if (va)
		ck_assert(value_eq(va, vb));
}

/*
 * Decode a heap copy of exactly len bytes, so valgrind sees any read past the end. If
 * expected is given, decoded messages must equal its first *n entries; decoded values must
 * always lie inside the datagram.
 */
int decode_exact(const uint8_t *src, size_t len, struct paxos_header *h, size_t max,
		 const struct paxos_message *expected, size_t *n)
{
	static struct paxos_message out[PAXOS_MAX_MESSAGES_PER_DATAGRAM];
	uint8_t *copy = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(copy);
	if (len)
		memcpy(copy, src, len);
	if (max > PAXOS_MAX_MESSAGES_PER_DATAGRAM)
		max = PAXOS_MAX_MESSAGES_PER_DATAGRAM;
	int rc = paxos_decode(&dec, copy, len, h, out, max, n);
	if (rc == PAXOS_OK) {
		ck_assert_uint_le(*n, max);
		ck_assert_int_lt(h->role, PAXOS_ROLE_COUNT);
		for (size_t i = 0; i < *n; i++) {
			ck_assert_int_ge(out[i].type, PAXOS_MSG_PREPARE);
			ck_assert_int_le(out[i].type, PAXOS_MSG_TYPE_MAX);
			const struct paxos_value *v = paxos_msg_value(&out[i]);
			if (v)
				ck_assert(value_inside(v, copy, len));
			if (expected)
				assert_msg_eq(&out[i], &expected[i]);
		}
	} else {
		ck_assert_int_eq(rc, PAXOS_E_MALFORMED);
		ck_assert_uint_eq(*n, 0);
	}
	free(copy);
	return rc;
}

uint64_t rng_state;

uint64_t rng(void)
{
	/* xorshift64: deterministic, so failures reproduce. */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

const uint8_t payload[] = "the quick brown fox jumps over the lazy dog";

struct paxos_value pv(size_t len)
{
	return (struct paxos_value){payload, (uint32_t)len};
}

/* One message of each type, with ordinary field values. */
size_t sample_messages(struct paxos_message *m)
{
	size_t i = 0;
	m[i++] = (struct paxos_message){PAXOS_MSG_PREPARE, .u.prepare = {10, 101}};
	m[i++] = (struct paxos_message){PAXOS_MSG_PROMISE, .u.promise = {10, 101, 1, pv(5), 2}};
	m[i++] =
	    (struct paxos_message){PAXOS_MSG_ACCEPT, .u.accept = {11, 201, pv(9), true, 3, 10}};
	m[i++] = (struct paxos_message){PAXOS_MSG_ACCEPTED,
					.u.accepted = {11, 201, pv(3), 1, true, false, 7}};
	m[i++] = (struct paxos_message){PAXOS_MSG_REJECT, .u.reject = {12, 301, 0}};
	m[i++] = (struct paxos_message){PAXOS_MSG_REPEAT, .u.repeat = {3, 9}};
	m[i++] = (struct paxos_message){PAXOS_MSG_TRIM, .u.trim = {2}};
	m[i++] = (struct paxos_message){PAXOS_MSG_ACCEPTOR_STATE,
					.u.acceptor_state = {4, 12, 2, 300, true}};
	m[i++] = (struct paxos_message){PAXOS_MSG_CLIENT_VALUE,
					.u.client_value = {pv(20), (1ull << 62) + 5}};
	m[i++] = (struct paxos_message){PAXOS_MSG_TRIMMED, .u.trimmed = {2, 40, 1ull << 40}};
	m[i++] = (struct paxos_message){PAXOS_MSG_HEARTBEAT, .u.heartbeat = {1, 77}};
	m[i++] = (struct paxos_message){PAXOS_MSG_LEADER, .u.leader = {1, 1700000000123456ull}};
	m[i++] = (struct paxos_message){PAXOS_MSG_REPAIR, .u.repair = {7, 9}};
	m[i++] = (struct paxos_message){
	    PAXOS_MSG_ACCEPTOR_HELLO,
	    .u.acceptor_hello = {2, 1700000000123456ull, true, 300, 9876543210ull, 65536}};
	m[i++] = (struct paxos_message){PAXOS_MSG_RECOVER_ASK, .u.recover_ask = {2, 77}};
	m[i++] = (struct paxos_message){
	    PAXOS_MSG_RECOVER_INFO,
	    .u.recover_info = {PAXOS_ROLE_PROPOSER, 1, 2, 77, 4000, 4294967398ull, 3, true}};
	m[i++] = (struct paxos_message){PAXOS_MSG_CONFIG_ASK, .u.config_ask = {0x1234567890ull}};
	m[i++] = (struct paxos_message){PAXOS_MSG_CONFIG_INFO,
					.u.config_info = {3, 0x1234567890ull, true, pv(40)}};
	m[i++] = (struct paxos_message){PAXOS_MSG_CONFIG_PUSH, .u.config_push = {1, true, pv(40)}};
	m[i++] = (struct paxos_message){PAXOS_MSG_REFUSED, .u.refused = {1, 300, pv(16)}};
	m[i++] = (struct paxos_message){
	    PAXOS_MSG_CHANGE, .u.change = {pv(16), PAXOS_CHANGE_FORCE, pv(PAXOS_CHANGE_MAC_BYTES)}};
	m[i++] = (struct paxos_message){PAXOS_MSG_SNAPSHOT_ASK,
					.u.snapshot_ask = {0x1234567890ull, 4000, 0, 0}};
	m[i++] = (struct paxos_message){
	    PAXOS_MSG_SNAPSHOT_OFFER,
	    .u.snapshot_offer = {0xfedcba9876543210ull, 0x1234567890ull, 4000, 70000, 1ull << 63}};
	m[i++] = (struct paxos_message){
	    PAXOS_MSG_SNAPSHOT_CHUNK,
	    .u.snapshot_chunk = {0x1234567890ull, 4000, 70000, 1ull << 63, 8100, pv(30)}};
	m[i++] = (struct paxos_message){PAXOS_MSG_CHOSEN, .u.chosen = {4294967398ull, 300, 70000}};
	return i;
}

/* Encode m alone, decode it and compare; the value must alias the datagram. */
void roundtrip(const struct paxos_message *m)
{
	static uint8_t buf[BIG_BUF];
	struct paxos_encoder e;
	struct paxos_header h;
	struct paxos_message out[2];
	size_t n;

	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	ck_assert_int_eq(paxos_encoder_add(&e, m), PAXOS_OK);
	ck_assert_uint_eq(e.count, 1);
	ck_assert_int_eq(paxos_decode(&dec, buf, e.len, &h, out, 2, &n), PAXOS_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(h.role, test_header.role);
	ck_assert_uint_eq(h.sender_id, test_header.sender_id);
	assert_msg_eq(&out[0], m);
	const struct paxos_value *v = paxos_msg_value(&out[0]);
	if (v)
		ck_assert(value_inside(v, buf, e.len));
	ck_assert_int_eq(decode_exact(buf, e.len, &h, 2, m, &n), PAXOS_OK);
}

void craft_init(struct craft *c)
{
	msgpack_sbuffer_init(&c->sb);
	msgpack_packer_init(&c->pk, &c->sb, msgpack_sbuffer_write);
}

void craft_header(struct craft *c, uint64_t magic, uint64_t version, uint64_t role, uint64_t sender)
{
	msgpack_pack_array(&c->pk, 4);
	msgpack_pack_uint64(&c->pk, magic);
	msgpack_pack_uint64(&c->pk, version);
	msgpack_pack_uint64(&c->pk, role);
	msgpack_pack_uint64(&c->pk, sender);
}

void craft_good_header(struct craft *c)
{
	craft_init(c);
	craft_header(c, PAXOS_WIRE_MAGIC, PAXOS_WIRE_VERSION, PAXOS_ROLE_ACCEPTOR, 3);
}

int craft_decode(struct craft *c, size_t *n)
{
	struct paxos_header h;
	int rc = decode_exact((const uint8_t *)c->sb.data, c->sb.size, &h, 16, NULL, n);
	msgpack_sbuffer_destroy(&c->sb);
	return rc;
}

void craft_expect(struct craft *c, int rc)
{
	size_t n;
	ck_assert_int_eq(craft_decode(c, &n), rc);
}
