/* SPDX-License-Identifier: BSD-3-Clause */
/* Wire codec: round trips of every message type, and the encoder's limits. */
#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "codec_fixture.h"
#include "origin.h"
#include "support.h"

/* ---- round trips ---- */

START_TEST(test_roundtrip_each_type)
{
	struct paxos_message m[SAMPLE_MESSAGES];
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
	m = (struct paxos_message){PAXOS_MSG_ACCEPT, .u.accept = {I, B, pv(43), true, 1, I}};
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
	    0, 3, 6, 5, 7, 4, 3, 2, 6, 2, 4, 3, 3, 3, 7, 3, 9, 2, 5, 4, 4, 4, 5, 6, 7, 4};
	const struct paxos_value *v = paxos_msg_value(m);
	/* A client value without a submission id leaves it out, an accept without a range of
	 * chosen instances that range. */
	msgpack_pack_array(pk, fields[m->type] +
				   (m->type == PAXOS_MSG_CLIENT_VALUE && m->u.client_value.id) +
				   (m->type == PAXOS_MSG_ACCEPT && m->u.accept.chosen_to ? 2 : 0));
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
		if (m->u.accept.spares_rest)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		if (m->u.accept.chosen_to) {
			msgpack_pack_uint64(pk, m->u.accept.chosen_from);
			msgpack_pack_uint64(pk, m->u.accept.chosen_to);
		}
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
	case PAXOS_MSG_CHOSEN:
		msgpack_pack_uint64(pk, m->u.chosen.ballot);
		msgpack_pack_uint64(pk, m->u.chosen.from);
		msgpack_pack_uint64(pk, m->u.chosen.to);
		return;
	}
}

/* The encoder writes msgpack by hand: its bytes are exactly what msgpack-c's packer writes,
 * for every type and at every integer and bin length boundary. */
START_TEST(test_bytes_match_msgpack)
{
	static uint8_t buf[BIG_BUF], big[70000];
	struct paxos_message m[2 * SAMPLE_MESSAGES];
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
	struct paxos_message m[SAMPLE_MESSAGES];
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

	struct paxos_message expected[2 * SAMPLE_MESSAGES];
	for (size_t i = 0; i < 2 * count; i++)
		expected[i] = m[i % count];
	ck_assert_int_eq(decode_exact(buf, e.len, &h, 2 * SAMPLE_MESSAGES, expected, &n), PAXOS_OK);
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
	/* The value is the last field but the spares' flag (one byte). */
	ck_assert_ptr_eq(v->data, buf + e.len - 11);
	buf[e.len - 11] = 'X';
	ck_assert_int_eq(v->data[0], 'X');
}
END_TEST

/* The decoder keeps its one zone: no allocation per datagram, even after bad input. */
START_TEST(test_decoder_reuses_zone)
{
	static uint8_t buf[1024];
	struct paxos_message m[SAMPLE_MESSAGES], out[SAMPLE_MESSAGES];
	size_t count = sample_messages(m), n;
	struct paxos_encoder e;
	struct paxos_header h;

	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	for (size_t i = 0; i < count; i++)
		ck_assert_int_eq(paxos_encoder_add(&e, &m[i]), PAXOS_OK);
	msgpack_zone *zone = dec.unpacked.zone;
	ck_assert_ptr_nonnull(zone);
	for (int i = 0; i < 100; i++) {
		ck_assert_int_eq(paxos_decode(&dec, buf, e.len, &h, out, SAMPLE_MESSAGES, &n),
				 PAXOS_OK);
		ck_assert_uint_eq(n, count);
		ck_assert_int_eq(paxos_decode(&dec, buf, e.len - 1, &h, out, SAMPLE_MESSAGES, &n),
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
	uint8_t buf[1024];
	struct paxos_message m[SAMPLE_MESSAGES];
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

Suite *test_suite(void)
{
	Suite *s = suite_create("codec");
	TCase *tc;
	tc = tcase_create("roundtrip");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_roundtrip_each_type);
	tcase_add_test(tc, test_roundtrip_empty_values);
	tcase_add_test(tc, test_roundtrip_valueless_accepted);
	tcase_add_test(tc, test_wire_version_of_a_datagram);
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
	return s;
}
