/* SPDX-License-Identifier: BSD-3-Clause */
/* Wire codec: round trips, encoder limits, and hostile input. */
#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "origin.h"
#include "support.h"

#define BIG_BUF 65536

static struct paxos_decoder dec;

static void setup(void)
{
	paxos_decoder_init(&dec);
}

static void teardown(void)
{
	paxos_decoder_destroy(&dec);
}

static const struct paxos_header test_header = {.role = PAXOS_ROLE_PROPOSER, .sender_id = 7};

/* ---- helpers ---- */

static bool value_inside(const struct paxos_value *v, const uint8_t *buf, size_t len)
{
	uintptr_t start = (uintptr_t)buf, p = (uintptr_t)v->data;
	return p >= start && p - start <= len && v->len <= len - (p - start);
}

static bool value_eq(const struct paxos_value *a, const struct paxos_value *b)
{
	return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

static void assert_msg_eq(const struct paxos_message *a, const struct paxos_message *b)
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
static int decode_exact(const uint8_t *src, size_t len, struct paxos_header *h, size_t max,
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

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* xorshift64: deterministic, so failures reproduce. */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static const uint8_t payload[] = "the quick brown fox jumps over the lazy dog";

static struct paxos_value pv(size_t len)
{
	return (struct paxos_value){payload, (uint32_t)len};
}

/* One message of each type, with ordinary field values. */
static size_t sample_messages(struct paxos_message *m)
{
	size_t i = 0;
	m[i++] = (struct paxos_message){PAXOS_MSG_PREPARE, .u.prepare = {10, 101}};
	m[i++] = (struct paxos_message){PAXOS_MSG_PROMISE, .u.promise = {10, 101, 1, pv(5), 2}};
	m[i++] = (struct paxos_message){PAXOS_MSG_ACCEPT, .u.accept = {11, 201, pv(9)}};
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
	return i;
}

/* Encode m alone, decode it and compare; the value must alias the datagram. */
static void roundtrip(const struct paxos_message *m)
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

/* A raw datagram built with msgpack's own packer, for input our encoder would not make. */
struct craft {
	msgpack_sbuffer sb;
	msgpack_packer pk;
};

static void craft_init(struct craft *c)
{
	msgpack_sbuffer_init(&c->sb);
	msgpack_packer_init(&c->pk, &c->sb, msgpack_sbuffer_write);
}

static void craft_header(struct craft *c, uint64_t magic, uint64_t version, uint64_t role,
			 uint64_t sender)
{
	msgpack_pack_array(&c->pk, 4);
	msgpack_pack_uint64(&c->pk, magic);
	msgpack_pack_uint64(&c->pk, version);
	msgpack_pack_uint64(&c->pk, role);
	msgpack_pack_uint64(&c->pk, sender);
}

static void craft_good_header(struct craft *c)
{
	craft_init(c);
	craft_header(c, PAXOS_WIRE_MAGIC, PAXOS_WIRE_VERSION, PAXOS_ROLE_ACCEPTOR, 3);
}

static int craft_decode(struct craft *c, size_t *n)
{
	struct paxos_header h;
	int rc = decode_exact((const uint8_t *)c->sb.data, c->sb.size, &h, 16, NULL, n);
	msgpack_sbuffer_destroy(&c->sb);
	return rc;
}

static void craft_expect(struct craft *c, int rc)
{
	size_t n;
	ck_assert_int_eq(craft_decode(c, &n), rc);
}

/* ---- round trips ---- */

START_TEST(test_roundtrip_each_type)
{
	struct paxos_message m[24];
	size_t count = sample_messages(m);
	for (size_t i = 0; i < count; i++)
		roundtrip(&m[i]);
}
END_TEST

START_TEST(test_roundtrip_empty_values)
{
	struct paxos_value empty = {NULL, 0};
	struct paxos_message m;

	m = (struct paxos_message){PAXOS_MSG_PROMISE, .u.promise = {1, 100, 0, empty, 0}};
	roundtrip(&m);
	m = (struct paxos_message){PAXOS_MSG_ACCEPT, .u.accept = {1, 100, empty}};
	roundtrip(&m);
	m = (struct paxos_message){PAXOS_MSG_ACCEPTED, .u.accepted = {1, 100, empty, 3, false}};
	roundtrip(&m);
	m = (struct paxos_message){PAXOS_MSG_CLIENT_VALUE, .u.client_value = {empty}};
	roundtrip(&m);
	/* A non-NULL pointer with length 0 is an empty value too. */
	m = (struct paxos_message){PAXOS_MSG_CLIENT_VALUE, .u.client_value = {pv(0)}};
	roundtrip(&m);
}
END_TEST

/* A valueless accepted leaves its value out: it decodes as valueless (not as an empty value),
 * and what a value would take is not on the wire. */
START_TEST(test_roundtrip_valueless_accepted)
{
	static uint8_t buf[BIG_BUF];
	struct paxos_message m = {PAXOS_MSG_ACCEPTED,
				  .u.accepted = {9, 100, pv(0), 2, false, true}};
	roundtrip(&m);
	m.u.accepted.final = true;
	roundtrip(&m);

	struct paxos_encoder e;
	struct paxos_header h;
	struct paxos_message out[1];
	size_t n;
	m.u.accepted.value = pv(1000); /* ignored: the message says it has none */
	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	ck_assert_uint_lt(e.len, 64);
	ck_assert_int_eq(paxos_decode(&dec, buf, e.len, &h, out, 1, &n), PAXOS_OK);
	ck_assert(out[0].u.accepted.valueless);
	ck_assert_uint_eq(out[0].u.accepted.value.len, 0);
	ck_assert_ptr_null(paxos_msg_value(&out[0]));
	/* An empty value is not a missing one. */
	m = (struct paxos_message){PAXOS_MSG_ACCEPTED, .u.accepted = {9, 100, pv(0), 2, false}};
	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	ck_assert_int_eq(paxos_decode(&dec, buf, e.len, &h, out, 1, &n), PAXOS_OK);
	ck_assert(!out[0].u.accepted.valueless);
}
END_TEST

/* The version of a datagram another libpaxos wrote can be read, to say why it is dropped. */
START_TEST(test_wire_version_of_a_datagram)
{
	static uint8_t buf[BIG_BUF];
	struct paxos_encoder e;
	uint32_t v = 0;
	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	ck_assert(paxos_wire_version(buf, e.len, &v));
	ck_assert_uint_eq(v, PAXOS_WIRE_VERSION);
	const uint8_t old[] = {0x94, 0xcd, 0x50, 0x58, 0x02, 0x01, 0x00};
	ck_assert(paxos_wire_version(old, sizeof(old), &v));
	ck_assert_uint_eq(v, 2);
	const uint8_t wrong_magic[] = {0x94, 0xcd, 0x50, 0x59, 0x03, 0x01, 0x00};
	ck_assert(!paxos_wire_version(wrong_magic, sizeof(wrong_magic), &v));
	ck_assert(!paxos_wire_version(old, 4, &v));
}
END_TEST

/* ---- wire version 5: the release before, which a rolling upgrade runs beside ---- */

static const struct paxos_header header_v5 = {
    .role = PAXOS_ROLE_ACCEPTOR, .sender_id = 2, .version = 5, .speech = PAXOS_WIRE_NATIVE};

/* The messages version 6 added fields to, as version 5 wrote them: the same fields but the
 * generation (and acceptor state's recovering, recovery's founder) last. Written here field by
 * field, not from the codec's table. */
static void craft_v5_messages(struct craft *c)
{
	msgpack_packer *pk = &c->pk;
	msgpack_pack_array(pk, 6); /* accepted */
	msgpack_pack_uint32(pk, PAXOS_MSG_ACCEPTED);
	msgpack_pack_uint64(pk, 11);
	msgpack_pack_uint64(pk, 201);
	msgpack_pack_bin(pk, 3);
	msgpack_pack_bin_body(pk, payload, 3);
	msgpack_pack_uint32(pk, 1);
	msgpack_pack_true(pk);
	msgpack_pack_array(pk, 4); /* acceptor state */
	msgpack_pack_uint32(pk, PAXOS_MSG_ACCEPTOR_STATE);
	msgpack_pack_uint32(pk, 4);
	msgpack_pack_uint64(pk, 12);
	msgpack_pack_uint64(pk, 2);
	msgpack_pack_array(pk, 3); /* trimmed */
	msgpack_pack_uint32(pk, PAXOS_MSG_TRIMMED);
	msgpack_pack_uint32(pk, 2);
	msgpack_pack_uint64(pk, 40);
	msgpack_pack_array(pk, 6); /* acceptor hello */
	msgpack_pack_uint32(pk, PAXOS_MSG_ACCEPTOR_HELLO);
	msgpack_pack_uint32(pk, 2);
	msgpack_pack_uint64(pk, 1700000000123456ull);
	msgpack_pack_true(pk);
	msgpack_pack_uint64(pk, 300);
	msgpack_pack_uint64(pk, 9876543210ull);
	msgpack_pack_array(pk, 7); /* recover info */
	msgpack_pack_uint32(pk, PAXOS_MSG_RECOVER_INFO);
	msgpack_pack_uint32(pk, PAXOS_ROLE_PROPOSER);
	msgpack_pack_uint32(pk, 1);
	msgpack_pack_uint32(pk, 2);
	msgpack_pack_uint64(pk, 77);
	msgpack_pack_uint64(pk, 4000);
	msgpack_pack_uint64(pk, 4294967398ull);
}

/* The same messages as paxos_message, with what version 6 added set. */
static size_t v6_messages(struct paxos_message *m)
{
	size_t i = 0;
	m[i++] = (struct paxos_message){PAXOS_MSG_ACCEPTED,
					.u.accepted = {11, 201, pv(3), 1, true, false, 7}};
	m[i++] = (struct paxos_message){PAXOS_MSG_ACCEPTOR_STATE,
					.u.acceptor_state = {4, 12, 2, 300, true}};
	m[i++] = (struct paxos_message){PAXOS_MSG_TRIMMED, .u.trimmed = {2, 40, 1ull << 40}};
	m[i++] = (struct paxos_message){
	    PAXOS_MSG_ACCEPTOR_HELLO,
	    .u.acceptor_hello = {2, 1700000000123456ull, true, 300, 9876543210ull, 65536}};
	m[i++] = (struct paxos_message){
	    PAXOS_MSG_RECOVER_INFO,
	    .u.recover_info = {PAXOS_ROLE_PROPOSER, 1, 2, 77, 4000, 4294967398ull, 3, true}};
	return i;
}

/* What version 6 added reads as 0 in a datagram of version 5. */
static void drop_v6_fields(struct paxos_message *m)
{
	switch (m->type) {
	case PAXOS_MSG_ACCEPTED:
		m->u.accepted.generation = 0;
		break;
	case PAXOS_MSG_ACCEPTOR_STATE:
		m->u.acceptor_state.generation = 0;
		m->u.acceptor_state.recovering = false;
		break;
	case PAXOS_MSG_TRIMMED:
		m->u.trimmed.generation = 0;
		break;
	case PAXOS_MSG_ACCEPTOR_HELLO:
		m->u.acceptor_hello.generation = 0;
		break;
	case PAXOS_MSG_RECOVER_INFO:
		m->u.recover_info.generation = 0;
		m->u.recover_info.founder = false;
		break;
	case PAXOS_MSG_CLIENT_VALUE:
		m->u.client_value.id = 0;
		break;
	case PAXOS_MSG_LEADER:
		m->u.leader.sent_at = 0;
		break;
	default:
		break;
	}
}

/* A datagram of version 5 decodes: its header says so, the fields 6 added are 0. */
START_TEST(test_decode_wire_5)
{
	struct craft c;
	struct paxos_header h;
	struct paxos_message want[8];
	size_t n, count = v6_messages(want);
	for (size_t i = 0; i < count; i++)
		drop_v6_fields(&want[i]);

	craft_init(&c);
	craft_header(&c, PAXOS_WIRE_MAGIC, 5, PAXOS_ROLE_ACCEPTOR, 2);
	craft_v5_messages(&c);
	ck_assert_int_eq(decode_exact((const uint8_t *)c.sb.data, c.sb.size, &h, 16, want, &n),
			 PAXOS_OK);
	ck_assert_uint_eq(n, count);
	ck_assert_uint_eq(h.version, 5);
	ck_assert_int_eq(h.speech, PAXOS_WIRE_NATIVE);
	ck_assert_int_eq(h.role, PAXOS_ROLE_ACCEPTOR);
	ck_assert_uint_eq(h.sender_id, 2);
	msgpack_sbuffer_destroy(&c.sb);

	/* Version 6's datagrams say 6. */
	uint8_t buf[64];
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	ck_assert_int_eq(decode_exact(buf, e.len, &h, 1, NULL, &n), PAXOS_OK);
	ck_assert_uint_eq(h.version, PAXOS_WIRE_VERSION);
}
END_TEST

/* Each version's field counts are its own: a version 5 header over version 6's fields, or the
 * other way round, is malformed, and so are versions beyond the two. */
START_TEST(test_wire_5_field_counts)
{
	static uint8_t buf[BIG_BUF];
	struct paxos_encoder e;
	struct paxos_message m[8];
	struct craft c;
	size_t n, count = v6_messages(m);

	for (size_t i = 0; i < count; i++) {
		/* Version 6's message under a version 5 header. */
		paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
		ck_assert_int_eq(paxos_encoder_add(&e, &m[i]), PAXOS_OK);
		buf[4] = 5; /* the header's version: a fixint */
		struct paxos_header h;
		ck_assert_int_eq(decode_exact(buf, e.len, &h, 2, NULL, &n), PAXOS_E_MALFORMED);
		/* Version 5's under a version 6 header. */
		struct paxos_header h5 = header_v5;
		paxos_encoder_init(&e, buf, sizeof(buf), &h5);
		ck_assert_int_eq(paxos_encoder_add(&e, &m[i]), PAXOS_OK);
		ck_assert_uint_eq(buf[4], 5);
		buf[4] = PAXOS_WIRE_VERSION;
		ck_assert_int_eq(decode_exact(buf, e.len, &h, 2, NULL, &n), PAXOS_E_MALFORMED);
	}
	const uint64_t others[] = {PAXOS_WIRE_VERSION_MIN - 1, PAXOS_WIRE_VERSION + 1};
	for (size_t i = 0; i < 2; i++) {
		craft_init(&c);
		craft_header(&c, PAXOS_WIRE_MAGIC, others[i], PAXOS_ROLE_ACCEPTOR, 2);
		craft_v5_messages(&c);
		craft_expect(&c, PAXOS_E_MALFORMED);
	}
}
END_TEST

/* Encoding for a node of version 5 writes what version 5 wrote, byte for byte, and every type
 * round-trips through it with what 6 added left out. */
START_TEST(test_encode_wire_5)
{
	static uint8_t buf[BIG_BUF];
	static struct paxos_message out[32];
	struct paxos_encoder e;
	struct paxos_message m[32];
	struct paxos_header h = header_v5;
	struct craft c;
	size_t n, count = v6_messages(m);

	paxos_encoder_init(&e, buf, sizeof(buf), &h);
	ck_assert_uint_eq(e.version, 5);
	for (size_t i = 0; i < count; i++)
		ck_assert_int_eq(paxos_encoder_add(&e, &m[i]), PAXOS_OK);
	craft_init(&c);
	craft_header(&c, PAXOS_WIRE_MAGIC, 5, PAXOS_ROLE_ACCEPTOR, 2);
	craft_v5_messages(&c);
	ck_assert_uint_eq(e.len, c.sb.size);
	ck_assert_mem_eq(buf, c.sb.data, e.len);
	msgpack_sbuffer_destroy(&c.sb);

	/* The messages version 6 added do not go out in version 5 at all. */
	size_t all = sample_messages(m);
	count = 0;
	paxos_encoder_init(&e, buf, sizeof(buf), &h);
	for (size_t i = 0; i < all; i++) {
		if (m[i].type >= PAXOS_MSG_CHANGE) {
			ck_assert_int_eq(paxos_encoder_add(&e, &m[i]), PAXOS_E_INVALID);
			continue;
		}
		m[count] = m[i];
		ck_assert_int_eq(paxos_encoder_add(&e, &m[count]), PAXOS_OK);
		drop_v6_fields(&m[count++]);
	}
	ck_assert_int_eq(paxos_decode(&dec, buf, e.len, &h, out, 32, &n), PAXOS_OK);
	ck_assert_uint_eq(n, count);
	ck_assert_uint_eq(h.version, 5);
	for (size_t i = 0; i < count; i++)
		assert_msg_eq(&out[i], &m[i]);

	/* A version outside the two spoken is taken as ours. */
	h = (struct paxos_header){.role = PAXOS_ROLE_LEARNER, .sender_id = 1, .version = 4};
	paxos_encoder_init(&e, buf, sizeof(buf), &h);
	ck_assert_uint_eq(e.version, PAXOS_WIRE_VERSION);
}
END_TEST

/* How a header writes its version tells a node speaking down for an older one from an older
 * node; every form decodes alike, as version 5's decoder reads integers of any width. */
START_TEST(test_wire_speech)
{
	static uint8_t buf[BIG_BUF];
	struct paxos_encoder e;
	struct paxos_header h = header_v5, out;
	struct paxos_message m = {PAXOS_MSG_TRIM, .u.trim = {9}};
	const uint8_t native[] = {0x94, 0xcd, 0x50, 0x58, 0x05};
	const uint8_t down[] = {0x94, 0xcd, 0x50, 0x58, 0xcc, 0x05};
	const uint8_t relayed[] = {0x94, 0xcd, 0x50, 0x58, 0xcd, 0x00, 0x05};
	const struct {
		enum paxos_wire_speech speech;
		const uint8_t *head;
		size_t len;
	} forms[] = {{PAXOS_WIRE_NATIVE, native, sizeof(native)},
		     {PAXOS_WIRE_DOWN, down, sizeof(down)},
		     {PAXOS_WIRE_DOWN_RELAYED, relayed, sizeof(relayed)}};
	size_t n;

	for (size_t i = 0; i < 3; i++) {
		h.speech = forms[i].speech;
		paxos_encoder_init(&e, buf, sizeof(buf), &h);
		ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
		ck_assert_mem_eq(buf, forms[i].head, forms[i].len);
		ck_assert_int_eq(decode_exact(buf, e.len, &out, 1, &m, &n), PAXOS_OK);
		ck_assert_uint_eq(n, 1);
		ck_assert_uint_eq(out.version, 5);
		ck_assert_int_eq(out.speech, forms[i].speech);
	}
	/* A node's own version is always written natively. */
	h = (struct paxos_header){.role = PAXOS_ROLE_PROPOSER,
				  .sender_id = 1,
				  .version = PAXOS_WIRE_VERSION,
				  .speech = PAXOS_WIRE_DOWN};
	paxos_encoder_init(&e, buf, sizeof(buf), &h);
	ck_assert_uint_eq(buf[4], PAXOS_WIRE_VERSION);
	ck_assert_int_eq(decode_exact(buf, e.len, &out, 1, NULL, &n), PAXOS_OK);
	ck_assert_int_eq(out.speech, PAXOS_WIRE_NATIVE);
}
END_TEST

START_TEST(test_roundtrip_extremes)
{
	const uint64_t I = UINT64_MAX;
	const paxos_ballot B = UINT64_MAX;
	const uint32_t A = PAXOS_MAX_ACCEPTORS - 1;
	struct paxos_message m;

	m = (struct paxos_message){PAXOS_MSG_PREPARE, .u.prepare = {I, B}};
	roundtrip(&m);
	m = (struct paxos_message){PAXOS_MSG_PREPARE, .u.prepare = {0, 0}};
	roundtrip(&m);
	m = (struct paxos_message){PAXOS_MSG_PROMISE, .u.promise = {I, B, B, pv(1), A}};
	roundtrip(&m);
	m = (struct paxos_message){PAXOS_MSG_ACCEPT, .u.accept = {I, B, pv(43)}};
	roundtrip(&m);
	m = (struct paxos_message){PAXOS_MSG_ACCEPTED, .u.accepted = {I, B, pv(2), A, true}};
	roundtrip(&m);
	m = (struct paxos_message){PAXOS_MSG_ACCEPTED, .u.accepted = {I, B, pv(2), A, false}};
	roundtrip(&m);
	m = (struct paxos_message){PAXOS_MSG_REJECT, .u.reject = {I, B, A}};
	roundtrip(&m);
	m = (struct paxos_message){PAXOS_MSG_REPEAT, .u.repeat = {I, I}};
	roundtrip(&m);
	m = (struct paxos_message){PAXOS_MSG_REPEAT, .u.repeat = {0, I}};
	roundtrip(&m);
	m = (struct paxos_message){PAXOS_MSG_TRIM, .u.trim = {I}};
	roundtrip(&m);
	m = (struct paxos_message){PAXOS_MSG_ACCEPTOR_STATE, .u.acceptor_state = {A, I, I}};
	roundtrip(&m);

	/* Every boundary where msgpack switches integer width. */
	const uint64_t widths[] = {0,     127,         128,        255,   256, 65535,
				   65536, 0xffffffffu, 1ull << 32, I - 1, I};
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		m = (struct paxos_message){PAXOS_MSG_TRIM, .u.trim = {widths[i]}};
		roundtrip(&m);
		if (widths[i] <= B) {
			m = (struct paxos_message){PAXOS_MSG_PREPARE,
						   .u.prepare = {1, (uint32_t)widths[i]}};
			roundtrip(&m);
		}
	}
}
END_TEST

/* msgpack-c's packing of m, field by field: the wire format the hand-written encoder keeps. */
static void pack_reference(msgpack_packer *pk, const struct paxos_message *m)
{
	static const uint32_t fields[PAXOS_MSG_TYPE_MAX + 1] = {
	    0, 3, 6, 4, 7, 4, 3, 2, 6, 2, 4, 3, 3, 3, 7, 3, 9, 2, 5, 4, 4, 4, 5, 6, 7};
	const struct paxos_value *v = paxos_msg_value(m);
	/* A client value without a submission id leaves it out. */
	msgpack_pack_array(pk, fields[m->type] +
				   (m->type == PAXOS_MSG_CLIENT_VALUE && m->u.client_value.id));
	msgpack_pack_uint32(pk, (uint32_t)m->type);
	switch (m->type) {
	case PAXOS_MSG_PREPARE:
		msgpack_pack_uint64(pk, m->u.prepare.iid);
		msgpack_pack_uint64(pk, m->u.prepare.ballot);
		return;
	case PAXOS_MSG_PROMISE:
		msgpack_pack_uint64(pk, m->u.promise.iid);
		msgpack_pack_uint64(pk, m->u.promise.ballot);
		msgpack_pack_uint64(pk, m->u.promise.value_ballot);
		msgpack_pack_bin_with_body(pk, v->data, v->len);
		msgpack_pack_uint32(pk, m->u.promise.acceptor_id);
		return;
	case PAXOS_MSG_ACCEPT:
		msgpack_pack_uint64(pk, m->u.accept.iid);
		msgpack_pack_uint64(pk, m->u.accept.ballot);
		msgpack_pack_bin_with_body(pk, v->data, v->len);
		return;
	case PAXOS_MSG_ACCEPTED:
		msgpack_pack_uint64(pk, m->u.accepted.iid);
		msgpack_pack_uint64(pk, m->u.accepted.ballot);
		msgpack_pack_bin_with_body(pk, v->data, v->len);
		msgpack_pack_uint32(pk, m->u.accepted.acceptor_id);
		if (m->u.accepted.final)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		msgpack_pack_uint64(pk, m->u.accepted.generation);
		return;
	case PAXOS_MSG_REJECT:
		msgpack_pack_uint64(pk, m->u.reject.iid);
		msgpack_pack_uint64(pk, m->u.reject.ballot);
		msgpack_pack_uint32(pk, m->u.reject.acceptor_id);
		return;
	case PAXOS_MSG_REPEAT:
		msgpack_pack_uint64(pk, m->u.repeat.from);
		msgpack_pack_uint64(pk, m->u.repeat.to);
		return;
	case PAXOS_MSG_TRIM:
		msgpack_pack_uint64(pk, m->u.trim.iid);
		return;
	case PAXOS_MSG_ACCEPTOR_STATE:
		msgpack_pack_uint32(pk, m->u.acceptor_state.acceptor_id);
		msgpack_pack_uint64(pk, m->u.acceptor_state.highest_accepted);
		msgpack_pack_uint64(pk, m->u.acceptor_state.trim_iid);
		msgpack_pack_uint64(pk, m->u.acceptor_state.generation);
		if (m->u.acceptor_state.recovering)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		return;
	case PAXOS_MSG_CLIENT_VALUE:
		msgpack_pack_bin_with_body(pk, v->data, v->len);
		if (m->u.client_value.id)
			msgpack_pack_uint64(pk, m->u.client_value.id);
		return;
	case PAXOS_MSG_TRIMMED:
		msgpack_pack_uint32(pk, m->u.trimmed.acceptor_id);
		msgpack_pack_uint64(pk, m->u.trimmed.iid);
		msgpack_pack_uint64(pk, m->u.trimmed.generation);
		return;
	case PAXOS_MSG_HEARTBEAT:
		msgpack_pack_uint32(pk, m->u.heartbeat.proposer_id);
		msgpack_pack_uint64(pk, m->u.heartbeat.next_iid);
		return;
	case PAXOS_MSG_LEADER:
		msgpack_pack_uint32(pk, m->u.leader.leader_id);
		msgpack_pack_uint64(pk, m->u.leader.sent_at);
		return;
	case PAXOS_MSG_REPAIR:
		msgpack_pack_uint64(pk, m->u.repair.from);
		msgpack_pack_uint64(pk, m->u.repair.to);
		return;
	case PAXOS_MSG_ACCEPTOR_HELLO:
		msgpack_pack_uint32(pk, m->u.acceptor_hello.acceptor_id);
		msgpack_pack_uint64(pk, m->u.acceptor_hello.incarnation);
		if (m->u.acceptor_hello.recovering)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		msgpack_pack_uint64(pk, m->u.acceptor_hello.age);
		msgpack_pack_uint64(pk, m->u.acceptor_hello.echo);
		msgpack_pack_uint64(pk, m->u.acceptor_hello.generation);
		return;
	case PAXOS_MSG_RECOVER_ASK:
		msgpack_pack_uint32(pk, m->u.recover_ask.acceptor_id);
		msgpack_pack_uint64(pk, m->u.recover_ask.incarnation);
		return;
	case PAXOS_MSG_RECOVER_INFO:
		msgpack_pack_uint32(pk, m->u.recover_info.role);
		msgpack_pack_uint32(pk, m->u.recover_info.sender_id);
		msgpack_pack_uint32(pk, m->u.recover_info.acceptor_id);
		msgpack_pack_uint64(pk, m->u.recover_info.incarnation);
		msgpack_pack_uint64(pk, m->u.recover_info.highest_iid);
		msgpack_pack_uint64(pk, m->u.recover_info.highest_ballot);
		msgpack_pack_uint64(pk, m->u.recover_info.generation);
		if (m->u.recover_info.founder)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		return;
	case PAXOS_MSG_CONFIG_ASK:
		msgpack_pack_uint64(pk, m->u.config_ask.nonce);
		return;
	case PAXOS_MSG_CONFIG_INFO:
		msgpack_pack_uint32(pk, m->u.config_info.acceptor_id);
		msgpack_pack_uint64(pk, m->u.config_info.nonce);
		if (m->u.config_info.settled)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		msgpack_pack_bin(pk, m->u.config_info.history.len);
		msgpack_pack_bin_body(pk, m->u.config_info.history.data,
				      m->u.config_info.history.len);
		return;
	case PAXOS_MSG_CONFIG_PUSH:
		msgpack_pack_uint32(pk, m->u.config_push.proposer_id);
		if (m->u.config_push.settled)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		msgpack_pack_bin(pk, m->u.config_push.history.len);
		msgpack_pack_bin_body(pk, m->u.config_push.history.data,
				      m->u.config_push.history.len);
		return;
	case PAXOS_MSG_REFUSED:
		msgpack_pack_uint32(pk, m->u.refused.proposer_id);
		msgpack_pack_uint32(pk, m->u.refused.dropped);
		msgpack_pack_bin(pk, m->u.refused.hashes.len);
		msgpack_pack_bin_body(pk, m->u.refused.hashes.data, m->u.refused.hashes.len);
		return;
	case PAXOS_MSG_CHANGE:
		msgpack_pack_bin(pk, m->u.change.command.len);
		msgpack_pack_bin_body(pk, m->u.change.command.data, m->u.change.command.len);
		msgpack_pack_uint32(pk, m->u.change.flags);
		msgpack_pack_bin(pk, m->u.change.mac.len);
		msgpack_pack_bin_body(pk, m->u.change.mac.data, m->u.change.mac.len);
		return;
	case PAXOS_MSG_SNAPSHOT_ASK:
		msgpack_pack_uint64(pk, m->u.snapshot_ask.nonce);
		msgpack_pack_uint64(pk, m->u.snapshot_ask.iid);
		msgpack_pack_uint64(pk, m->u.snapshot_ask.server);
		msgpack_pack_uint64(pk, m->u.snapshot_ask.offset);
		return;
	case PAXOS_MSG_SNAPSHOT_OFFER:
		msgpack_pack_uint64(pk, m->u.snapshot_offer.server);
		msgpack_pack_uint64(pk, m->u.snapshot_offer.nonce);
		msgpack_pack_uint64(pk, m->u.snapshot_offer.iid);
		msgpack_pack_uint64(pk, m->u.snapshot_offer.total);
		msgpack_pack_uint64(pk, m->u.snapshot_offer.checksum);
		return;
	case PAXOS_MSG_SNAPSHOT_CHUNK:
		msgpack_pack_uint64(pk, m->u.snapshot_chunk.nonce);
		msgpack_pack_uint64(pk, m->u.snapshot_chunk.iid);
		msgpack_pack_uint64(pk, m->u.snapshot_chunk.total);
		msgpack_pack_uint64(pk, m->u.snapshot_chunk.checksum);
		msgpack_pack_uint64(pk, m->u.snapshot_chunk.offset);
		msgpack_pack_bin(pk, m->u.snapshot_chunk.bytes.len);
		msgpack_pack_bin_body(pk, m->u.snapshot_chunk.bytes.data,
				      m->u.snapshot_chunk.bytes.len);
		return;
	}
}

/* The encoder writes msgpack by hand: its bytes are exactly what msgpack-c's packer writes,
 * for every type and at every integer and bin length boundary. */
START_TEST(test_bytes_match_msgpack)
{
	static uint8_t buf[BIG_BUF], big[70000];
	struct paxos_message m[48];
	size_t count = sample_messages(m);
	const uint64_t widths[] = {0,     127,   128,         255,        256,
				   65535, 65536, 0xffffffffu, 1ull << 32, UINT64_MAX};
	const uint32_t lens[] = {0, 31, 32, 255, 256, 65535, 65536};
	const struct paxos_header h = {.role = PAXOS_ROLE_LEARNER, .sender_id = 0xffffffffu};

	for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
		m[count++] =
		    (struct paxos_message){PAXOS_MSG_REPEAT, .u.repeat = {widths[w], widths[w]}};
		m[count++] = (struct paxos_message){PAXOS_MSG_TRIM, .u.trim = {widths[w]}};
	}
	for (size_t k = 0; k < count; k++) {
		struct craft c;
		struct paxos_encoder e;
		craft_init(&c);
		craft_header(&c, PAXOS_WIRE_MAGIC, PAXOS_WIRE_VERSION, h.role, h.sender_id);
		pack_reference(&c.pk, &m[k]);
		paxos_encoder_init(&e, buf, sizeof(buf), &h);
		ck_assert_int_eq(paxos_encoder_add(&e, &m[k]), PAXOS_OK);
		ck_assert_uint_eq(e.len, c.sb.size);
		ck_assert(memcmp(buf, c.sb.data, e.len) == 0);
		msgpack_sbuffer_destroy(&c.sb);
	}
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		struct paxos_message a = {PAXOS_MSG_ACCEPT, .u.accept = {1, 2, {big, lens[l]}}};
		struct craft c;
		struct paxos_encoder e;
		static uint8_t out[80000];
		craft_init(&c);
		craft_header(&c, PAXOS_WIRE_MAGIC, PAXOS_WIRE_VERSION, h.role, h.sender_id);
		pack_reference(&c.pk, &a);
		paxos_encoder_init(&e, out, sizeof(out), &h);
		ck_assert_int_eq(paxos_encoder_add(&e, &a), PAXOS_OK);
		ck_assert_uint_eq(e.len, c.sb.size);
		ck_assert(memcmp(out, c.sb.data, e.len) == 0);
		msgpack_sbuffer_destroy(&c.sb);
	}
}
END_TEST

/* Other writers may use any msgpack integer form for a non-negative number (wider than
 * needed, signed), and array16/array32 headers: the decoder reads them as msgpack-c does. */
START_TEST(test_decodes_any_integer_form)
{
	struct craft c;
	struct paxos_header h;
	struct paxos_message out[1];
	size_t n;

	craft_good_header(&c);
	/* [PREPARE, 5, 7] as array16, uint64 type, uint32 iid, int8 ballot. */
	msgpack_sbuffer_write(&c.sb, "\xdc\x00\x03", 3);
	msgpack_sbuffer_write(&c.sb, "\xcf\0\0\0\0\0\0\0\x01", 9);
	msgpack_sbuffer_write(&c.sb, "\xce\0\0\0\x05", 5);
	msgpack_sbuffer_write(&c.sb, "\xd0\x07", 2);
	/* [TRIM, 9] as array32 with an int64 iid. */
	msgpack_sbuffer_write(&c.sb, "\xdd\0\0\0\x02\x07", 6);
	msgpack_sbuffer_write(&c.sb, "\xd3\0\0\0\0\0\0\0\x09", 9);
	struct paxos_message two[2];
	ck_assert_int_eq(paxos_decode(&dec, (const uint8_t *)c.sb.data, c.sb.size, &h, two, 2, &n),
			 PAXOS_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(two[0].type, PAXOS_MSG_PREPARE);
	ck_assert_uint_eq(two[0].u.prepare.iid, 5);
	ck_assert_uint_eq(two[0].u.prepare.ballot, 7);
	ck_assert_int_eq(two[1].type, PAXOS_MSG_TRIM);
	ck_assert_uint_eq(two[1].u.trim.iid, 9);
	msgpack_sbuffer_destroy(&c.sb);

	/* A negative int16 where the iid goes is not a number we take. */
	craft_good_header(&c);
	msgpack_sbuffer_write(&c.sb, "\x92\x07\xd1\xff\xfe", 5);
	ck_assert_int_eq(paxos_decode(&dec, (const uint8_t *)c.sb.data, c.sb.size, &h, out, 1, &n),
			 PAXOS_E_MALFORMED);
	msgpack_sbuffer_destroy(&c.sb);
	/* A bin 32 length past the end of the datagram. */
	craft_good_header(&c);
	msgpack_sbuffer_write(&c.sb,
			      "\x92\x09\xc6\x00\x01\x00\x00"
			      "ab",
			      9);
	ck_assert_int_eq(paxos_decode(&dec, (const uint8_t *)c.sb.data, c.sb.size, &h, out, 1, &n),
			 PAXOS_E_MALFORMED);
	msgpack_sbuffer_destroy(&c.sb);
}
END_TEST

START_TEST(test_header_roundtrip)
{
	uint8_t buf[64];
	const uint32_t senders[] = {0, 1, 127, 65536, UINT32_MAX};
	struct paxos_encoder e;
	struct paxos_header h, out;
	size_t n = 99;

	for (int role = 0; role < PAXOS_ROLE_COUNT; role++) {
		for (size_t s = 0; s < sizeof(senders) / sizeof(senders[0]); s++) {
			h = (struct paxos_header){.role = (enum paxos_role)role,
						  .sender_id = senders[s]};
			paxos_encoder_init(&e, buf, sizeof(buf), &h);
			ck_assert_uint_eq(e.len, e.header_len);
			ck_assert_uint_gt(e.len, 0);
			/* A datagram without messages is valid. */
			ck_assert_int_eq(decode_exact(buf, e.len, &out, 4, NULL, &n), PAXOS_OK);
			ck_assert_uint_eq(n, 0);
			ck_assert_int_eq(out.role, role);
			ck_assert_uint_eq(out.sender_id, senders[s]);
		}
	}
}
END_TEST

START_TEST(test_several_messages)
{
	static uint8_t buf[4096];
	struct paxos_message m[24];
	size_t count = sample_messages(m);
	struct paxos_encoder e;
	struct paxos_header h;
	size_t n;

	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	/* Twice over, so the same type repeats within one datagram. */
	for (size_t i = 0; i < count; i++)
		ck_assert_int_eq(paxos_encoder_add(&e, &m[i]), PAXOS_OK);
	for (size_t i = 0; i < count; i++)
		ck_assert_int_eq(paxos_encoder_add(&e, &m[i]), PAXOS_OK);
	ck_assert_uint_eq(e.count, 2 * count);

	struct paxos_message expected[48];
	for (size_t i = 0; i < 2 * count; i++)
		expected[i] = m[i % count];
	ck_assert_int_eq(decode_exact(buf, e.len, &h, 48, expected, &n), PAXOS_OK);
	ck_assert_uint_eq(n, 2 * count);
}
END_TEST

/* Decoded values alias the datagram: msgpack-c points bin objects into its input, and the
 * codec passes that pointer on. */
START_TEST(test_zero_copy)
{
	static uint8_t buf[256];
	struct paxos_encoder e;
	struct paxos_header h;
	struct paxos_message out[1];
	size_t n;
	struct paxos_message m = {PAXOS_MSG_ACCEPT, .u.accept = {5, 105, pv(10)}};

	/* msgpack-c itself. */
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_unpacked u;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_bin_with_body(&pk, payload, 10);
	msgpack_unpacked_init(&u);
	ck_assert_int_eq(msgpack_unpack_next(&u, sb.data, sb.size, NULL), MSGPACK_UNPACK_SUCCESS);
	ck_assert_int_eq(u.data.type, MSGPACK_OBJECT_BIN);
	ck_assert_ptr_eq(u.data.via.bin.ptr, sb.data + sb.size - 10);
	msgpack_unpacked_destroy(&u);
	msgpack_sbuffer_destroy(&sb);

	/* The codec. */
	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	ck_assert_int_eq(paxos_decode(&dec, buf, e.len, &h, out, 1, &n), PAXOS_OK);
	const struct paxos_value *v = &out[0].u.accept.value;
	ck_assert_ptr_eq(v->data, buf + e.len - 10); /* the value is the last field */
	buf[e.len - 10] = 'X';
	ck_assert_int_eq(v->data[0], 'X');
}
END_TEST

/* The decoder keeps its one zone: no allocation per datagram, even after bad input. */
START_TEST(test_decoder_reuses_zone)
{
	static uint8_t buf[1024];
	struct paxos_message m[24], out[24];
	size_t count = sample_messages(m), n;
	struct paxos_encoder e;
	struct paxos_header h;

	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	for (size_t i = 0; i < count; i++)
		ck_assert_int_eq(paxos_encoder_add(&e, &m[i]), PAXOS_OK);
	msgpack_zone *zone = dec.unpacked.zone;
	ck_assert_ptr_nonnull(zone);
	for (int i = 0; i < 100; i++) {
		ck_assert_int_eq(paxos_decode(&dec, buf, e.len, &h, out, 24, &n), PAXOS_OK);
		ck_assert_uint_eq(n, count);
		ck_assert_int_eq(paxos_decode(&dec, buf, e.len - 1, &h, out, 24, &n),
				 PAXOS_E_MALFORMED);
		ck_assert_ptr_eq(dec.unpacked.zone, zone);
	}
}
END_TEST

/* Values of max_datagram - PAXOS_WIRE_OVERHEAD bytes fit, with every other field at its
 * widest encoding. */
START_TEST(test_overhead_bound)
{
	const size_t sizes[] = {512, 1500, 8192, 65507};
	const struct paxos_header h = {.role = PAXOS_ROLE_CLIENT, .sender_id = UINT32_MAX};
	const uint64_t I = UINT64_MAX;
	const paxos_ballot B = UINT64_MAX;
	const uint32_t A = PAXOS_MAX_ACCEPTORS - 1;
	uint8_t *value = malloc(65507);
	memset(value, 0xab, 65507);

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t cap = sizes[s];
		struct paxos_value v = {value, (uint32_t)(cap - PAXOS_WIRE_OVERHEAD)};
		struct paxos_message m[4] = {
		    {PAXOS_MSG_ACCEPTED, .u.accepted = {I, B, v, A, true}},
		    {PAXOS_MSG_PROMISE, .u.promise = {I, B, B, v, A}},
		    {PAXOS_MSG_ACCEPT, .u.accept = {I, B, v}},
		    {PAXOS_MSG_CLIENT_VALUE, .u.client_value = {v, UINT64_MAX}},
		};
		uint8_t *buf = malloc(cap);
		for (size_t i = 0; i < 4; i++) {
			struct paxos_encoder e;
			struct paxos_header out;
			size_t n;
			paxos_encoder_init(&e, buf, cap, &h);
			ck_assert_int_eq(paxos_encoder_add(&e, &m[i]), PAXOS_OK);
			ck_assert_uint_le(e.len, cap);
			ck_assert_int_eq(decode_exact(buf, e.len, &out, 1, &m[i], &n), PAXOS_OK);
			ck_assert_uint_eq(n, 1);
		}
		free(buf);
	}
	free(value);
}
END_TEST

/* ---- encoder limits ---- */

START_TEST(test_encoder_full)
{
	uint8_t buf[300];
	uint8_t snapshot[300];
	struct paxos_message added[32];
	struct paxos_encoder e;
	struct paxos_header h;
	size_t count = 0, n;

	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	for (;;) {
		struct paxos_message m = {PAXOS_MSG_ACCEPTED,
					  .u.accepted = {count + 1, 100, pv(40), 2, count % 2}};
		size_t len = e.len;
		memcpy(snapshot, buf, len);
		int rc = paxos_encoder_add(&e, &m);
		if (rc == PAXOS_E_FULL) {
			ck_assert_uint_eq(e.len, len);
			ck_assert_mem_eq(buf, snapshot, len);
			break;
		}
		ck_assert_int_eq(rc, PAXOS_OK);
		ck_assert_uint_le(e.len, sizeof(buf));
		added[count++] = m;
	}
	ck_assert_uint_gt(count, 2);
	ck_assert_uint_eq(e.count, count);

	/* A smaller message may still fit in what is left. */
	struct paxos_message trim = {PAXOS_MSG_TRIM, .u.trim = {1}};
	ck_assert_int_eq(paxos_encoder_add(&e, &trim), PAXOS_OK);
	added[count++] = trim;

	ck_assert_int_eq(decode_exact(buf, e.len, &h, 32, added, &n), PAXOS_OK);
	ck_assert_uint_eq(n, count);
}
END_TEST

/* The encoder stops at the decoder's message limit, even with bytes to spare. */
START_TEST(test_encoder_message_limit)
{
	static uint8_t buf[65507];
	struct paxos_encoder e;
	struct paxos_header h;
	struct paxos_message m = {PAXOS_MSG_TRIM, .u.trim = {9}};
	size_t n;

	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	for (unsigned i = 0; i < PAXOS_MAX_MESSAGES_PER_DATAGRAM; i++)
		ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_E_FULL);
	ck_assert_uint_lt(e.len, sizeof(buf) / 2);

	ck_assert_int_eq(decode_exact(buf, e.len, &h, PAXOS_MAX_MESSAGES_PER_DATAGRAM, NULL, &n),
			 PAXOS_OK);
	ck_assert_uint_eq(n, PAXOS_MAX_MESSAGES_PER_DATAGRAM);
	ck_assert_int_eq(
	    decode_exact(buf, e.len, &h, PAXOS_MAX_MESSAGES_PER_DATAGRAM - 1, NULL, &n),
	    PAXOS_E_MALFORMED);
}
END_TEST

START_TEST(test_encoder_reset)
{
	uint8_t buf[512];
	struct paxos_message m[24];
	size_t count = sample_messages(m), n;
	struct paxos_encoder e;
	struct paxos_header h;

	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	size_t header_len = e.len;
	for (size_t i = 0; i < count; i++)
		ck_assert_int_eq(paxos_encoder_add(&e, &m[i]), PAXOS_OK);
	ck_assert_uint_gt(e.len, header_len);

	paxos_encoder_reset(&e);
	ck_assert_uint_eq(e.len, header_len);
	ck_assert_uint_eq(e.header_len, header_len);
	ck_assert_uint_eq(e.count, 0);
	ck_assert_int_eq(decode_exact(buf, e.len, &h, 16, NULL, &n), PAXOS_OK);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(h.sender_id, test_header.sender_id);
	ck_assert_int_eq(h.role, test_header.role);

	/* Only what is added after the reset is in the next datagram. */
	ck_assert_int_eq(paxos_encoder_add(&e, &m[5]), PAXOS_OK);
	ck_assert_int_eq(paxos_encoder_add(&e, &m[2]), PAXOS_OK);
	struct paxos_message expected[2] = {m[5], m[2]};
	ck_assert_int_eq(decode_exact(buf, e.len, &h, 16, expected, &n), PAXOS_OK);
	ck_assert_uint_eq(n, 2);

	/* Reset also clears a full datagram. */
	struct paxos_message big = {PAXOS_MSG_CLIENT_VALUE, .u.client_value = {pv(40)}};
	while (paxos_encoder_add(&e, &big) == PAXOS_OK)
		;
	paxos_encoder_reset(&e);
	ck_assert_int_eq(paxos_encoder_add(&e, &big), PAXOS_OK);
	ck_assert_int_eq(decode_exact(buf, e.len, &h, 16, &big, &n), PAXOS_OK);
	ck_assert_uint_eq(n, 1);
}
END_TEST

START_TEST(test_encoder_rejects_invalid)
{
	uint8_t buf[256];
	struct paxos_encoder e;
	struct paxos_value dangling = {NULL, 3};
	struct paxos_message bad[] = {
	    {(enum paxos_msg_type)0, .u.trim = {1}},
	    {(enum paxos_msg_type)(PAXOS_MSG_TYPE_MAX + 1), .u.trim = {1}},
	    {PAXOS_MSG_REPEAT, .u.repeat = {5, 4}},
	    {PAXOS_MSG_PROMISE, .u.promise = {1, 1, 0, pv(1), PAXOS_MAX_ACCEPTORS}},
	    {PAXOS_MSG_ACCEPTED, .u.accepted = {1, 1, pv(1), PAXOS_MAX_ACCEPTORS, false}},
	    {PAXOS_MSG_REJECT, .u.reject = {1, 1, UINT32_MAX}},
	    {PAXOS_MSG_ACCEPTOR_STATE, .u.acceptor_state = {PAXOS_MAX_ACCEPTORS, 1, 1}},
	    {PAXOS_MSG_ACCEPT, .u.accept = {1, 1, dangling}},
	    {PAXOS_MSG_CLIENT_VALUE, .u.client_value = {dangling}},
	};

	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(paxos_encoder_add(&e, &bad[i]), PAXOS_E_INVALID);
		ck_assert_uint_eq(e.len, e.header_len);
		ck_assert_uint_eq(e.count, 0);
	}
}
END_TEST

START_TEST(test_encoder_tiny_buffer)
{
	uint8_t buf[4];
	struct paxos_encoder e;
	struct paxos_message m = {PAXOS_MSG_TRIM, .u.trim = {1}};

	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	ck_assert_uint_eq(e.len, 0);
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_E_FULL);
	ck_assert_uint_eq(e.len, 0);
}
END_TEST

/* ---- malformed input ---- */

/* Every prefix of a valid datagram is malformed, except those ending exactly on a message
 * boundary: they are valid datagrams with fewer messages. */
START_TEST(test_every_truncation)
{
	static uint8_t buf[1024];
	struct paxos_message m[24];
	size_t count = sample_messages(m);
	size_t boundary[25];
	struct paxos_encoder e;
	struct paxos_header h;
	size_t n;

	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	boundary[0] = e.len;
	for (size_t i = 0; i < count; i++) {
		ck_assert_int_eq(paxos_encoder_add(&e, &m[i]), PAXOS_OK);
		boundary[i + 1] = e.len;
	}
	size_t next = 0;
	for (size_t cut = 0; cut <= e.len; cut++) {
		int rc = decode_exact(buf, cut, &h, 24, m, &n);
		if (next <= count && cut == boundary[next]) {
			ck_assert_msg(rc == PAXOS_OK, "cut %zu at boundary %zu", cut, next);
			ck_assert_uint_eq(n, next);
			next++;
		} else {
			ck_assert_msg(rc == PAXOS_E_MALFORMED, "cut %zu decoded", cut);
		}
	}
	ck_assert_uint_eq(next, count + 1);
}
END_TEST

START_TEST(test_bad_header)
{
	struct craft c;
	size_t n;

	craft_good_header(&c);
	craft_expect(&c, PAXOS_OK);

	craft_init(&c);
	craft_header(&c, PAXOS_WIRE_MAGIC + 1, PAXOS_WIRE_VERSION, 0, 1);
	craft_expect(&c, PAXOS_E_MALFORMED);
	craft_init(&c);
	craft_header(&c, 0, PAXOS_WIRE_VERSION, 0, 1);
	craft_expect(&c, PAXOS_E_MALFORMED);
	craft_init(&c);
	craft_header(&c, PAXOS_WIRE_MAGIC, PAXOS_WIRE_VERSION + 1, 0, 1);
	craft_expect(&c, PAXOS_E_MALFORMED);
	craft_init(&c);
	craft_header(&c, PAXOS_WIRE_MAGIC, 0, 0, 1);
	craft_expect(&c, PAXOS_E_MALFORMED);
	craft_init(&c);
	craft_header(&c, PAXOS_WIRE_MAGIC, PAXOS_WIRE_VERSION, PAXOS_ROLE_COUNT, 1);
	craft_expect(&c, PAXOS_E_MALFORMED);
	craft_init(&c);
	craft_header(&c, PAXOS_WIRE_MAGIC, PAXOS_WIRE_VERSION, 0, (uint64_t)UINT32_MAX + 1);
	craft_expect(&c, PAXOS_E_MALFORMED);

	/* Negative role. */
	craft_init(&c);
	msgpack_pack_array(&c.pk, 4);
	msgpack_pack_uint32(&c.pk, PAXOS_WIRE_MAGIC);
	msgpack_pack_uint32(&c.pk, PAXOS_WIRE_VERSION);
	msgpack_pack_int32(&c.pk, -1);
	msgpack_pack_uint32(&c.pk, 1);
	craft_expect(&c, PAXOS_E_MALFORMED);

	/* Too few and too many header fields. */
	for (int fields = 0; fields <= 6; fields++) {
		if (fields == 4)
			continue;
		craft_init(&c);
		msgpack_pack_array(&c.pk, fields);
		const uint32_t vals[6] = {PAXOS_WIRE_MAGIC, PAXOS_WIRE_VERSION, 0, 1, 1, 1};
		for (int i = 0; i < fields; i++)
			msgpack_pack_uint32(&c.pk, vals[i]);
		craft_expect(&c, PAXOS_E_MALFORMED);
	}

	/* Header as a map, as a bare number; a message where the header should be. */
	craft_init(&c);
	msgpack_pack_map(&c.pk, 1);
	msgpack_pack_uint32(&c.pk, PAXOS_WIRE_MAGIC);
	msgpack_pack_uint32(&c.pk, PAXOS_WIRE_VERSION);
	craft_expect(&c, PAXOS_E_MALFORMED);
	craft_init(&c);
	msgpack_pack_uint32(&c.pk, PAXOS_WIRE_MAGIC);
	craft_expect(&c, PAXOS_E_MALFORMED);
	craft_init(&c);
	msgpack_pack_array(&c.pk, 2);
	msgpack_pack_uint32(&c.pk, PAXOS_MSG_TRIM);
	msgpack_pack_uint32(&c.pk, 1);
	craft_expect(&c, PAXOS_E_MALFORMED);

	/* Nothing at all. */
	struct paxos_header h;
	ck_assert_int_eq(decode_exact(NULL, 0, &h, 4, NULL, &n), PAXOS_E_MALFORMED);
	struct paxos_message out[1];
	ck_assert_int_eq(paxos_decode(&dec, NULL, 0, &h, out, 1, &n), PAXOS_E_MALFORMED);
}
END_TEST

START_TEST(test_bad_type)
{
	struct craft c;
	const int64_t types[] = {0, PAXOS_MSG_TYPE_MAX + 1, 255, 65536, -1, -128};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		craft_good_header(&c);
		msgpack_pack_array(&c.pk, 2);
		msgpack_pack_int64(&c.pk, types[i]);
		msgpack_pack_uint32(&c.pk, 1);
		craft_expect(&c, PAXOS_E_MALFORMED);
	}
	/* Type as a string, as a bool; an empty message array; a map message. */
	craft_good_header(&c);
	msgpack_pack_array(&c.pk, 2);
	msgpack_pack_str_with_body(&c.pk, "\x07", 1);
	msgpack_pack_uint32(&c.pk, 1);
	craft_expect(&c, PAXOS_E_MALFORMED);
	craft_good_header(&c);
	msgpack_pack_array(&c.pk, 2);
	msgpack_pack_true(&c.pk);
	msgpack_pack_uint32(&c.pk, 1);
	craft_expect(&c, PAXOS_E_MALFORMED);
	craft_good_header(&c);
	msgpack_pack_array(&c.pk, 0);
	craft_expect(&c, PAXOS_E_MALFORMED);
	craft_good_header(&c);
	msgpack_pack_map(&c.pk, 1);
	msgpack_pack_uint32(&c.pk, PAXOS_MSG_TRIM);
	msgpack_pack_uint32(&c.pk, 1);
	craft_expect(&c, PAXOS_E_MALFORMED);
}
END_TEST

/* Pack a well-formed field list for type t, then decode with one field too few or too many. */
START_TEST(test_wrong_field_count)
{
	static const uint32_t fields[PAXOS_MSG_TYPE_MAX + 1] = {
	    0, 3, 6, 4, 7, 4, 3, 2, 6, 2, 4, 3, 3, 3, 7, 3, 9, 2, 5, 4, 4, 4, 5, 6, 7};

	for (uint32_t t = PAXOS_MSG_PREPARE; t <= PAXOS_MSG_TYPE_MAX; t++) {
		for (int delta = -1; delta <= 1; delta++) {
			struct craft c;
			uint32_t count = fields[t] + (uint32_t)delta;
			craft_good_header(&c);
			msgpack_pack_array(&c.pk, count);
			msgpack_pack_uint32(&c.pk, t);
			/* Fields that are valid for their position where a value is expected. */
			for (uint32_t i = 1; i < count; i++) {
				bool bin = (t == PAXOS_MSG_PROMISE && i == 4) ||
					   (t == PAXOS_MSG_ACCEPT && i == 3) ||
					   (t == PAXOS_MSG_ACCEPTED && i == 3) ||
					   (t == PAXOS_MSG_CLIENT_VALUE && i == 1) ||
					   (t == PAXOS_MSG_CONFIG_INFO && i == 4) ||
					   (t == PAXOS_MSG_CONFIG_PUSH && i == 3) ||
					   (t == PAXOS_MSG_SNAPSHOT_CHUNK && i == 6);
				if (t == PAXOS_MSG_REFUSED && i == 3)
					msgpack_pack_bin_with_body(&c.pk, "8 bytes.", 8);
				else if (t == PAXOS_MSG_CHANGE && i == 1)
					msgpack_pack_bin_with_body(&c.pk, "a command of 16 b", 16);
				else if (t == PAXOS_MSG_CHANGE && i == 3)
					msgpack_pack_bin_with_body(
					    &c.pk, "a MAC of thirty-two bytes, that.", 32);
				else if (t == PAXOS_MSG_SNAPSHOT_CHUNK && i == 5)
					msgpack_pack_uint32(&c.pk, 0); /* offset: 1 byte of 1 */
				else if (bin)
					msgpack_pack_bin_with_body(&c.pk, "v", 1);
				else if ((t == PAXOS_MSG_ACCEPTED && i == 5) ||
					 (t == PAXOS_MSG_ACCEPTOR_STATE && i == 5) ||
					 (t == PAXOS_MSG_RECOVER_INFO && i == 8) ||
					 (t == PAXOS_MSG_ACCEPTOR_HELLO && i == 3) ||
					 (t == PAXOS_MSG_CONFIG_INFO && i == 3) ||
					 (t == PAXOS_MSG_CONFIG_PUSH && i == 2))
					msgpack_pack_true(&c.pk);
				else
					msgpack_pack_uint32(&c.pk, 1);
			}
			/* A client value may name its submission in a third field. */
			bool ok = delta == 0 || (t == PAXOS_MSG_CLIENT_VALUE && delta == 1);
			craft_expect(&c, ok ? PAXOS_OK : PAXOS_E_MALFORMED);
		}
	}
}
END_TEST

/* A message [type, fields...] with field `bad_at` replaced by a packing of the caller's. */
enum bad_field { NEG_ONE, U32_OVER, U64_MAX_VAL, ACC_OVER, STR, NIL, FLOAT, BOOL_T, ARRAY };

static void pack_bad(msgpack_packer *pk, enum bad_field b)
{
	switch (b) {
	case NEG_ONE:
		msgpack_pack_int32(pk, -1);
		break;
	case U32_OVER:
		msgpack_pack_uint64(pk, (uint64_t)UINT32_MAX + 1);
		break;
	case U64_MAX_VAL:
		msgpack_pack_uint64(pk, UINT64_MAX);
		break;
	case ACC_OVER:
		msgpack_pack_uint32(pk, PAXOS_MAX_ACCEPTORS);
		break;
	case STR:
		msgpack_pack_str_with_body(pk, "abc", 3);
		break;
	case NIL:
		msgpack_pack_nil(pk);
		break;
	case FLOAT:
		msgpack_pack_double(pk, 1.0);
		break;
	case BOOL_T:
		msgpack_pack_true(pk);
		break;
	case ARRAY:
		msgpack_pack_array(pk, 1);
		msgpack_pack_uint32(pk, 1);
		break;
	}
}

/* Accepted: [4, iid, ballot, value, acceptor_id, final, generation]; field i replaced by b. */
static int accepted_with(uint32_t i, enum bad_field b)
{
	struct craft c;
	size_t n;
	craft_good_header(&c);
	msgpack_pack_array(&c.pk, 7);
	msgpack_pack_uint32(&c.pk, PAXOS_MSG_ACCEPTED);
	for (uint32_t f = 1; f < 7; f++) {
		if (f == i)
			pack_bad(&c.pk, b);
		else if (f == 3)
			msgpack_pack_bin_with_body(&c.pk, "abc", 3);
		else if (f == 5)
			msgpack_pack_false(&c.pk);
		else
			msgpack_pack_uint32(&c.pk, 1);
	}
	return craft_decode(&c, &n);
}

/* A chunk's bytes lie within its snapshot; an offer names its server. */
START_TEST(test_snapshot_bounds)
{
	static uint8_t buf[4096];
	struct paxos_encoder e;
	struct paxos_message m = {PAXOS_MSG_SNAPSHOT_CHUNK,
				  .u.snapshot_chunk = {1, 10, 100, 7, 90, pv(10)}};
	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	m.u.snapshot_chunk.offset = 91;
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_E_INVALID);
	m.u.snapshot_chunk.offset = 101;
	m.u.snapshot_chunk.bytes = pv(0);
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_E_INVALID);
	m = (struct paxos_message){PAXOS_MSG_SNAPSHOT_OFFER,
				   .u.snapshot_offer = {0, 1, 10, 100, 7}};
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_E_INVALID);
	m.u.snapshot_offer.server = 5;
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
}
END_TEST

START_TEST(test_bad_field_values)
{
	/* iid: uint64, so only its own width limits it. */
	ck_assert_int_eq(accepted_with(1, U64_MAX_VAL), PAXOS_OK);
	ck_assert_int_eq(accepted_with(1, U32_OVER), PAXOS_OK);
	ck_assert_int_eq(accepted_with(1, NEG_ONE), PAXOS_E_MALFORMED);
	ck_assert_int_eq(accepted_with(1, FLOAT), PAXOS_E_MALFORMED);
	ck_assert_int_eq(accepted_with(1, NIL), PAXOS_E_MALFORMED);
	ck_assert_int_eq(accepted_with(1, BOOL_T), PAXOS_E_MALFORMED);
	ck_assert_int_eq(accepted_with(1, STR), PAXOS_E_MALFORMED);
	/* ballot: uint64, the whole range (msgpack has no larger integer to reject). */
	ck_assert_int_eq(accepted_with(2, U32_OVER), PAXOS_OK);
	ck_assert_int_eq(accepted_with(2, U64_MAX_VAL), PAXOS_OK);
	ck_assert_int_eq(accepted_with(2, NEG_ONE), PAXOS_E_MALFORMED);
	ck_assert_int_eq(accepted_with(2, FLOAT), PAXOS_E_MALFORMED);
	ck_assert_int_eq(accepted_with(2, ARRAY), PAXOS_E_MALFORMED);
	/* value: bin, or nil for a valueless one. */
	ck_assert_int_eq(accepted_with(3, STR), PAXOS_E_MALFORMED);
	ck_assert_int_eq(accepted_with(3, NIL), PAXOS_OK);
	ck_assert_int_eq(accepted_with(3, ARRAY), PAXOS_E_MALFORMED);
	/* acceptor_id: below PAXOS_MAX_ACCEPTORS. */
	ck_assert_int_eq(accepted_with(4, ACC_OVER), PAXOS_E_MALFORMED);
	ck_assert_int_eq(accepted_with(4, U32_OVER), PAXOS_E_MALFORMED);
	ck_assert_int_eq(accepted_with(4, NEG_ONE), PAXOS_E_MALFORMED);
	/* final: bool only. */
	ck_assert_int_eq(accepted_with(5, BOOL_T), PAXOS_OK);
	ck_assert_int_eq(accepted_with(5, NEG_ONE), PAXOS_E_MALFORMED);
	ck_assert_int_eq(accepted_with(5, NIL), PAXOS_E_MALFORMED);
	ck_assert_int_eq(accepted_with(5, ARRAY), PAXOS_E_MALFORMED);
	/* generation: uint64, the whole range. */
	ck_assert_int_eq(accepted_with(6, U64_MAX_VAL), PAXOS_OK);
	ck_assert_int_eq(accepted_with(6, NEG_ONE), PAXOS_E_MALFORMED);
	ck_assert_int_eq(accepted_with(6, BOOL_T), PAXOS_E_MALFORMED);
	ck_assert_int_eq(accepted_with(6, NIL), PAXOS_E_MALFORMED);
}
END_TEST

static void expect_msg(uint32_t type, const int64_t *vals, uint32_t count, int rc)
{
	struct craft c;
	craft_good_header(&c);
	msgpack_pack_array(&c.pk, count + 1);
	msgpack_pack_uint32(&c.pk, type);
	for (uint32_t i = 0; i < count; i++)
		msgpack_pack_int64(&c.pk, vals[i]);
	craft_expect(&c, rc);
}

/* Acceptor state [8, id, highest, trim 3, generation 1, recovering false]. */
static void expect_state(int64_t id, int64_t highest, int rc)
{
	struct craft c;
	craft_good_header(&c);
	msgpack_pack_array(&c.pk, 6);
	msgpack_pack_uint32(&c.pk, PAXOS_MSG_ACCEPTOR_STATE);
	msgpack_pack_int64(&c.pk, id);
	msgpack_pack_int64(&c.pk, highest);
	msgpack_pack_int64(&c.pk, 3);
	msgpack_pack_int64(&c.pk, 1);
	msgpack_pack_false(&c.pk);
	craft_expect(&c, rc);
}

START_TEST(test_bad_ids_and_ranges)
{
	const int64_t acc = PAXOS_MAX_ACCEPTORS, big = (int64_t)UINT32_MAX + 1;

	expect_msg(PAXOS_MSG_REJECT, (int64_t[]){1, 1, acc - 1}, 3, PAXOS_OK);
	expect_msg(PAXOS_MSG_REJECT, (int64_t[]){1, 1, acc}, 3, PAXOS_E_MALFORMED);
	expect_msg(PAXOS_MSG_REJECT, (int64_t[]){1, big, 1}, 3, PAXOS_OK); /* 64-bit ballot */
	expect_msg(PAXOS_MSG_REJECT, (int64_t[]){1, -1, 1}, 3, PAXOS_E_MALFORMED);
	expect_msg(PAXOS_MSG_REJECT, (int64_t[]){-5, 1, 1}, 3, PAXOS_E_MALFORMED);
	/* An acceptor state's last field is a bool: numbers there are malformed. */
	expect_state(acc - 1, 5, PAXOS_OK);
	expect_state(acc, 5, PAXOS_E_MALFORMED);
	expect_state(1, -1, PAXOS_E_MALFORMED);
	expect_msg(PAXOS_MSG_ACCEPTOR_STATE, (int64_t[]){1, 5, 3, 1, 0}, 5, PAXOS_E_MALFORMED);
	expect_msg(PAXOS_MSG_PREPARE, (int64_t[]){1, big - 1}, 2, PAXOS_OK);
	expect_msg(PAXOS_MSG_PREPARE, (int64_t[]){1, big}, 2, PAXOS_OK);
	expect_msg(PAXOS_MSG_PREPARE, (int64_t[]){1, INT64_MAX}, 2, PAXOS_OK);
	expect_msg(PAXOS_MSG_PREPARE, (int64_t[]){1, -1}, 2, PAXOS_E_MALFORMED);
	expect_msg(PAXOS_MSG_PREPARE, (int64_t[]){INT64_MIN, 1}, 2, PAXOS_E_MALFORMED);
	expect_msg(PAXOS_MSG_TRIM, (int64_t[]){-1}, 1, PAXOS_E_MALFORMED);
	/* repeat needs from <= to. */
	expect_msg(PAXOS_MSG_REPEAT, (int64_t[]){4, 4}, 2, PAXOS_OK);
	expect_msg(PAXOS_MSG_REPEAT, (int64_t[]){5, 4}, 2, PAXOS_E_MALFORMED);

	/* promise: value_ballot is a uint64 (any), acceptor_id bounded. */
	struct craft c;
	for (int bad = 0; bad < 4; bad++) {
		craft_good_header(&c);
		msgpack_pack_array(&c.pk, 6);
		msgpack_pack_uint32(&c.pk, PAXOS_MSG_PROMISE);
		msgpack_pack_uint32(&c.pk, 1);
		msgpack_pack_uint64(&c.pk, UINT64_MAX);
		if (bad == 1)
			msgpack_pack_int64(&c.pk, -1);
		else
			msgpack_pack_uint64(&c.pk, bad == 3 ? UINT64_MAX : 0);
		msgpack_pack_bin_with_body(&c.pk, "", 0);
		msgpack_pack_uint32(&c.pk, bad == 2 ? PAXOS_MAX_ACCEPTORS : 0);
		craft_expect(&c, bad == 1 || bad == 2 ? PAXOS_E_MALFORMED : PAXOS_OK);
	}
}
END_TEST

/* Raw bytes after a valid header. */
static int header_then(const uint8_t *tail, size_t tail_len, size_t *n)
{
	uint8_t buf[128];
	struct paxos_encoder e;
	struct paxos_header h;
	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	ck_assert_uint_le(e.len + tail_len, sizeof(buf));
	memcpy(buf + e.len, tail, tail_len);
	return decode_exact(buf, e.len + tail_len, &h, 16, NULL, n);
}

START_TEST(test_bad_lengths_and_garbage)
{
	size_t n;
	/* client_value whose bin says 10 bytes but carries 3. */
	const uint8_t short_bin[] = {0x92, 0x09, 0xc4, 0x0a, 'a', 'b', 'c'};
	ck_assert_int_eq(header_then(short_bin, sizeof(short_bin), &n), PAXOS_E_MALFORMED);
	/* bin 32 claiming 4 GiB. */
	const uint8_t huge_bin[] = {0x92, 0x09, 0xc6, 0xff, 0xff, 0xff, 0xff, 'a'};
	ck_assert_int_eq(header_then(huge_bin, sizeof(huge_bin), &n), PAXOS_E_MALFORMED);
	/* The same message with the right length decodes. */
	const uint8_t good_bin[] = {0x92, 0x09, 0xc4, 0x03, 'a', 'b', 'c'};
	ck_assert_int_eq(header_then(good_bin, sizeof(good_bin), &n), PAXOS_OK);
	ck_assert_uint_eq(n, 1);
	/* A string where the value belongs. */
	const uint8_t str_value[] = {0x92, 0x09, 0xa3, 'a', 'b', 'c'};
	ck_assert_int_eq(header_then(str_value, sizeof(str_value), &n), PAXOS_E_MALFORMED);
	/* Arrays claiming far more elements than there are bytes. */
	const uint8_t huge_array16[] = {0xdc, 0xff, 0xff, 0x07, 0x01};
	ck_assert_int_eq(header_then(huge_array16, sizeof(huge_array16), &n), PAXOS_E_MALFORMED);
	const uint8_t huge_array32[] = {0xdd, 0xff, 0xff, 0xff, 0xff, 0x07, 0x01};
	ck_assert_int_eq(header_then(huge_array32, sizeof(huge_array32), &n), PAXOS_E_MALFORMED);
	const uint8_t nested_huge[] = {0x93, 0x03, 0x01, 0xdd, 0xff, 0xff, 0xff, 0xff};
	ck_assert_int_eq(header_then(nested_huge, sizeof(nested_huge), &n), PAXOS_E_MALFORMED);
	const uint8_t huge_map[] = {0x92, 0x07, 0xdf, 0xff, 0xff, 0xff, 0xff};
	ck_assert_int_eq(header_then(huge_map, sizeof(huge_map), &n), PAXOS_E_MALFORMED);
	/* Any valid msgpack encoding of the right shape is fine: array 16, uint 64. */
	const uint8_t wide_trim[] = {0xdc, 0x00, 0x02, 0x07, 0xcf, 0, 0, 0, 0, 0, 0, 0, 5};
	ck_assert_int_eq(header_then(wide_trim, sizeof(wide_trim), &n), PAXOS_OK);
	ck_assert_uint_eq(n, 1);
	/* Trailing bytes after a valid message: a reserved byte, a bare number, a half
	 * message. */
	const uint8_t trailing_c1[] = {0x92, 0x07, 0x05, 0xc1};
	ck_assert_int_eq(header_then(trailing_c1, sizeof(trailing_c1), &n), PAXOS_E_MALFORMED);
	const uint8_t trailing_int[] = {0x92, 0x07, 0x05, 0x01};
	ck_assert_int_eq(header_then(trailing_int, sizeof(trailing_int), &n), PAXOS_E_MALFORMED);
	const uint8_t trailing_half[] = {0x92, 0x07, 0x05, 0x92, 0x07};
	ck_assert_int_eq(header_then(trailing_half, sizeof(trailing_half), &n), PAXOS_E_MALFORMED);
	/* Nil, reserved byte, ext right after the header. */
	const uint8_t nil[] = {0xc0};
	ck_assert_int_eq(header_then(nil, sizeof(nil), &n), PAXOS_E_MALFORMED);
	const uint8_t ext[] = {0x92, 0x07, 0xd4, 0x01, 0x05};
	ck_assert_int_eq(header_then(ext, sizeof(ext), &n), PAXOS_E_MALFORMED);
}
END_TEST

START_TEST(test_too_many_messages)
{
	uint8_t buf[256];
	struct paxos_encoder e;
	struct paxos_header h;
	struct paxos_message m = {PAXOS_MSG_TRIM, .u.trim = {4}};
	size_t n;

	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	ck_assert_int_eq(decode_exact(buf, e.len, &h, 3, NULL, &n), PAXOS_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(decode_exact(buf, e.len, &h, 2, NULL, &n), PAXOS_E_MALFORMED);
	ck_assert_int_eq(decode_exact(buf, e.len, &h, 0, NULL, &n), PAXOS_E_MALFORMED);
	/* max 0 still accepts a datagram without messages. */
	paxos_encoder_reset(&e);
	ck_assert_int_eq(decode_exact(buf, e.len, &h, 0, NULL, &n), PAXOS_OK);
	ck_assert_uint_eq(n, 0);
}
END_TEST

/* ---- random input ---- */

START_TEST(test_random_buffers)
{
	uint8_t buf[300];
	struct paxos_encoder e;
	struct paxos_header h;
	size_t n, ok = 0;

	rng_state = 0x9e3779b97f4a7c15ull;
	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	size_t header_len = e.len;
	uint8_t header[32];
	memcpy(header, buf, header_len);
	for (int i = 0; i < 20000; i++) {
		/* Half start with a valid header so the message decoder sees garbage too. */
		size_t start = (i % 2) ? header_len : 0;
		size_t len = start + rng() % (sizeof(buf) - header_len);
		if (start)
			memcpy(buf, header, header_len);
		for (size_t j = start; j < len; j++)
			buf[j] = (uint8_t)rng();
		if (decode_exact(buf, len, &h, PAXOS_MAX_MESSAGES_PER_DATAGRAM, NULL, &n) ==
		    PAXOS_OK)
			ok++;
	}
	/* The header-only prefix (len == header_len) is valid, so a few succeed. */
	ck_assert_uint_gt(ok, 0);
}
END_TEST

START_TEST(test_random_bit_flips)
{
	static uint8_t valid[1024];
	uint8_t buf[1024];
	struct paxos_message m[24];
	size_t count = sample_messages(m);
	struct paxos_encoder e;
	struct paxos_header h;
	size_t n, ok = 0, bad = 0;

	paxos_encoder_init(&e, valid, sizeof(valid), &test_header);
	for (size_t i = 0; i < count; i++)
		ck_assert_int_eq(paxos_encoder_add(&e, &m[i]), PAXOS_OK);

	rng_state = 0x0123456789abcdefull;
	for (int i = 0; i < 20000; i++) {
		memcpy(buf, valid, e.len);
		int flips = 1 + (int)(rng() % 4);
		for (int f = 0; f < flips; f++) {
			uint64_t r = rng();
			buf[(r >> 3) % e.len] ^= (uint8_t)(1u << (r & 7));
		}
		/* Sometimes also cut it short. */
		size_t len = (i % 4 == 0) ? rng() % (e.len + 1) : e.len;
		if (decode_exact(buf, len, &h, 16, NULL, &n) == PAXOS_OK)
			ok++;
		else
			bad++;
	}
	/* Flips in values or numbers keep datagrams valid; flips in structure do not. */
	ck_assert_uint_gt(ok, 0);
	ck_assert_uint_gt(bad, 0);
}
END_TEST

/* Which proposer a message speaks for: its ballot's, or the heartbeat's sender. */
START_TEST(test_message_proposer)
{
	uint32_t id = 99;
	struct paxos_message m = {.type = PAXOS_MSG_PREPARE, .u.prepare.ballot = 7 * 100 + 3};
	ck_assert(paxos_msg_proposer(&m, &id));
	ck_assert_uint_eq(id, 3);
	m = (struct paxos_message){.type = PAXOS_MSG_ACCEPT, .u.accept.ballot = UINT64_MAX};
	ck_assert(paxos_msg_proposer(&m, &id));
	ck_assert_uint_eq(id, UINT64_MAX % 100);
	m = (struct paxos_message){.type = PAXOS_MSG_HEARTBEAT, .u.heartbeat.proposer_id = 1};
	ck_assert(paxos_msg_proposer(&m, &id));
	ck_assert_uint_eq(id, 1);
	m = (struct paxos_message){.type = PAXOS_MSG_PROMISE};
	ck_assert(!paxos_msg_proposer(&m, &id));
	m = (struct paxos_message){.type = PAXOS_MSG_TRIM};
	ck_assert(!paxos_msg_proposer(&m, &id));
}
END_TEST

/* Which address speaks for a member id (lib/node/origin.h): the first heard, while it talks;
 * another only once that one was silent for the table's silence. */
START_TEST(test_origin_one_address_per_member)
{
	static struct origin_table t = {.silence = 200000};
	const uint64_t a = 0x7f0000019c40, b = 0x7f0000019c41;
	struct origin was;
	ck_assert_int_eq(origin_check(&t, PAXOS_ROLE_ACCEPTOR, 1, a, 1000, &was), ORIGIN_NEW);
	ck_assert_uint_eq(was.address, 0);
	ck_assert_int_eq(origin_check(&t, PAXOS_ROLE_ACCEPTOR, 1, a, 50000, &was), ORIGIN_SAME);
	/* A forger's socket while acceptor 1 talks: dropped, again and again. */
	ck_assert_int_eq(origin_check(&t, PAXOS_ROLE_ACCEPTOR, 1, b, 100000, &was),
			 ORIGIN_IMPOSTOR);
	ck_assert_uint_eq(was.address, a);
	ck_assert_uint_eq(was.heard, 50000);
	ck_assert_int_eq(origin_check(&t, PAXOS_ROLE_ACCEPTOR, 1, b, 249999, &was),
			 ORIGIN_IMPOSTOR);
	/* Other ids and roles are apart: b may speak for acceptor 2 and proposer 1. */
	ck_assert_int_eq(origin_check(&t, PAXOS_ROLE_ACCEPTOR, 2, b, 100000, &was), ORIGIN_NEW);
	ck_assert_int_eq(origin_check(&t, PAXOS_ROLE_PROPOSER, 1, b, 100000, &was), ORIGIN_NEW);
	/* Acceptor 1 restarted on a new port: believed once the old one was silent long enough,
	 * and the old address is then the stranger. */
	ck_assert_int_eq(origin_check(&t, PAXOS_ROLE_ACCEPTOR, 1, b, 250000, &was), ORIGIN_NEW);
	ck_assert_uint_eq(was.address, a);
	ck_assert_int_eq(origin_check(&t, PAXOS_ROLE_ACCEPTOR, 1, a, 260000, &was),
			 ORIGIN_IMPOSTOR);
	/* A clock read behind the last hearing is no silence. */
	ck_assert_int_eq(origin_check(&t, PAXOS_ROLE_ACCEPTOR, 1, a, 10, &was), ORIGIN_IMPOSTOR);
	/* What has no id worth claiming, or no address, passes. */
	ck_assert_int_eq(origin_check(&t, PAXOS_ROLE_LEARNER, 1, a, 260000, &was), ORIGIN_SAME);
	ck_assert_int_eq(origin_check(&t, PAXOS_ROLE_CLIENT, 1, a, 260000, &was), ORIGIN_SAME);
	ck_assert_int_eq(
	    origin_check(&t, PAXOS_ROLE_ACCEPTOR, PAXOS_MAX_ACCEPTORS, a, 260000, &was),
	    ORIGIN_SAME);
	ck_assert_int_eq(origin_check(&t, PAXOS_ROLE_ACCEPTOR, 1, 0, 260000, &was), ORIGIN_SAME);
}
END_TEST

/* ---- status strings ---- */

/* The node's screening helpers: which ballots are plausible, which acceptor a message names. */
START_TEST(test_message_screening_helpers)
{
	const paxos_ballot implausible = ((uint64_t)PAXOS_PLAUSIBLE_EPOCHS << 32) * 100;
	struct paxos_message m = {.type = PAXOS_MSG_PREPARE};
	m.u.prepare.ballot = implausible - 1;
	ck_assert(paxos_msg_plausible(&m));
	m.u.prepare.ballot = implausible;
	ck_assert(!paxos_msg_plausible(&m));
	m = (struct paxos_message){.type = PAXOS_MSG_PROMISE};
	m.u.promise.ballot = 101;
	m.u.promise.value_ballot = UINT64_MAX;
	ck_assert(!paxos_msg_plausible(&m));
	m = (struct paxos_message){.type = PAXOS_MSG_ACCEPT, .u.accept.ballot = UINT64_MAX};
	ck_assert(!paxos_msg_plausible(&m));
	m = (struct paxos_message){.type = PAXOS_MSG_ACCEPTED, .u.accepted.ballot = UINT64_MAX};
	ck_assert(!paxos_msg_plausible(&m));
	m = (struct paxos_message){.type = PAXOS_MSG_REJECT, .u.reject.ballot = UINT64_MAX};
	ck_assert(!paxos_msg_plausible(&m));
	m = (struct paxos_message){.type = PAXOS_MSG_TRIM, .u.trim.iid = UINT64_MAX};
	ck_assert(paxos_msg_plausible(&m)); /* no ballot */

	uint32_t id = 99;
	const enum paxos_msg_type naming[] = {PAXOS_MSG_PROMISE, PAXOS_MSG_ACCEPTED,
					      PAXOS_MSG_REJECT, PAXOS_MSG_ACCEPTOR_STATE,
					      PAXOS_MSG_TRIMMED};
	for (size_t i = 0; i < sizeof(naming) / sizeof(naming[0]); i++) {
		m = (struct paxos_message){.type = naming[i]};
		switch (naming[i]) {
		case PAXOS_MSG_PROMISE:
			m.u.promise.acceptor_id = 5;
			break;
		case PAXOS_MSG_ACCEPTED:
			m.u.accepted.acceptor_id = 5;
			break;
		case PAXOS_MSG_REJECT:
			m.u.reject.acceptor_id = 5;
			break;
		case PAXOS_MSG_ACCEPTOR_STATE:
			m.u.acceptor_state.acceptor_id = 5;
			break;
		default:
			m.u.trimmed.acceptor_id = 5;
			break;
		}
		id = 99;
		ck_assert(paxos_msg_acceptor(&m, &id));
		ck_assert_uint_eq(id, 5);
	}
	const enum paxos_msg_type anonymous[] = {PAXOS_MSG_PREPARE,   PAXOS_MSG_ACCEPT,
						 PAXOS_MSG_REPEAT,    PAXOS_MSG_TRIM,
						 PAXOS_MSG_HEARTBEAT, PAXOS_MSG_CLIENT_VALUE};
	for (size_t i = 0; i < sizeof(anonymous) / sizeof(anonymous[0]); i++) {
		m = (struct paxos_message){.type = anonymous[i]};
		ck_assert(!paxos_msg_acceptor(&m, &id));
	}
}
END_TEST

START_TEST(test_status_strings)
{
	const int codes[] = {PAXOS_OK,        PAXOS_E_INVALID, PAXOS_E_TOO_BIG, PAXOS_E_NOMEM,
			     PAXOS_E_IO,      PAXOS_E_CONFIG,  PAXOS_E_FULL,    PAXOS_E_MALFORMED,
			     PAXOS_E_STORAGE, PAXOS_E_TRIMMED, PAXOS_E_TIMEOUT, PAXOS_E_DUPLICATE};
	const size_t ncodes = sizeof(codes) / sizeof(codes[0]);
	const char *unknown = paxos_strerror(12345);

	ck_assert_ptr_nonnull(unknown);
	ck_assert_str_eq(paxos_strerror(-100), unknown);
	for (size_t i = 0; i < ncodes; i++) {
		const char *s = paxos_strerror(codes[i]);
		ck_assert_ptr_nonnull(s);
		ck_assert_str_ne(s, unknown);
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(s, paxos_strerror(codes[j]));
	}
	ck_assert_str_eq(paxos_strerror(PAXOS_E_MALFORMED), "malformed datagram");

	const char *names[] = {
	    "prepare",      "promise",      "accept",         "accepted",       "reject",
	    "repeat",       "trim",         "acceptor_state", "client_value",   "trimmed",
	    "heartbeat",    "leader",       "repair",         "acceptor_hello", "recover_ask",
	    "recover_info", "config_ask",   "config_info",    "config_push",    "refused",
	    "change",       "snapshot_ask", "snapshot_offer", "snapshot_chunk"};
	for (int t = PAXOS_MSG_PREPARE; t <= PAXOS_MSG_TYPE_MAX; t++)
		ck_assert_str_eq(paxos_msg_type_name((enum paxos_msg_type)t), names[t - 1]);
	ck_assert_str_eq(paxos_msg_type_name((enum paxos_msg_type)0), "unknown");
	ck_assert_str_eq(paxos_msg_type_name((enum paxos_msg_type)(PAXOS_MSG_TYPE_MAX + 1)),
			 "unknown");
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("codec");
	TCase *tc = tcase_create("roundtrip");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_roundtrip_each_type);
	tcase_add_test(tc, test_snapshot_bounds);
	tcase_add_test(tc, test_roundtrip_empty_values);
	tcase_add_test(tc, test_roundtrip_valueless_accepted);
	tcase_add_test(tc, test_wire_version_of_a_datagram);
	tcase_add_test(tc, test_decode_wire_5);
	tcase_add_test(tc, test_wire_5_field_counts);
	tcase_add_test(tc, test_encode_wire_5);
	tcase_add_test(tc, test_wire_speech);
	tcase_add_test(tc, test_roundtrip_extremes);
	tcase_add_test(tc, test_bytes_match_msgpack);
	tcase_add_test(tc, test_decodes_any_integer_form);
	tcase_add_test(tc, test_header_roundtrip);
	tcase_add_test(tc, test_several_messages);
	tcase_add_test(tc, test_zero_copy);
	tcase_add_test(tc, test_decoder_reuses_zone);
	tcase_add_test(tc, test_overhead_bound);
	suite_add_tcase(s, tc);

	tc = tcase_create("encoder");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_encoder_full);
	tcase_add_test(tc, test_encoder_message_limit);
	tcase_add_test(tc, test_encoder_reset);
	tcase_add_test(tc, test_encoder_rejects_invalid);
	tcase_add_test(tc, test_encoder_tiny_buffer);
	suite_add_tcase(s, tc);

	tc = tcase_create("malformed");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_every_truncation);
	tcase_add_test(tc, test_bad_header);
	tcase_add_test(tc, test_bad_type);
	tcase_add_test(tc, test_wrong_field_count);
	tcase_add_test(tc, test_bad_field_values);
	tcase_add_test(tc, test_bad_ids_and_ranges);
	tcase_add_test(tc, test_bad_lengths_and_garbage);
	tcase_add_test(tc, test_too_many_messages);
	suite_add_tcase(s, tc);

	tc = tcase_create("fuzz");
	tcase_add_checked_fixture(tc, setup, teardown);
	/* Generous: the same cases run under valgrind. */
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_random_buffers);
	tcase_add_test(tc, test_random_bit_flips);
	suite_add_tcase(s, tc);

	tc = tcase_create("status");
	tcase_add_test(tc, test_status_strings);
	tcase_add_test(tc, test_message_screening_helpers);
	tcase_add_test(tc, test_origin_one_address_per_member);
	tcase_add_test(tc, test_message_proposer);
	suite_add_tcase(s, tc);
	return s;
}
