/* SPDX-License-Identifier: BSD-3-Clause */
/* Wire codec: hostile input (malformed, truncated, random), and the status strings. */
#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "codec_fixture.h"
#include "origin.h"
#include "support.h"

/* ---- malformed input ---- */

/* Every prefix of a valid datagram is malformed, except those ending exactly on a message
 * boundary: they are valid datagrams with fewer messages. */
START_TEST(test_every_truncation)
{
	static uint8_t buf[1024];
	struct paxos_message m[SAMPLE_MESSAGES];
	size_t count = sample_messages(m);
	size_t boundary[SAMPLE_MESSAGES + 1];
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
		int rc = decode_exact(buf, cut, &h, SAMPLE_MESSAGES, m, &n);
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
	    0, 3, 6, 5, 7, 4, 3, 2, 6, 2, 4, 3, 3, 3, 7, 3, 9, 2, 5, 4, 4, 4, 5, 6, 7, 4};

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
				else if ((t == PAXOS_MSG_ACCEPT && i == 4) ||
					 (t == PAXOS_MSG_ACCEPTED && i == 5) ||
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
	/* chosen: a ballot, and a range from instance 1 up with from <= to. */
	expect_msg(PAXOS_MSG_CHOSEN, (int64_t[]){101, 3, 3}, 3, PAXOS_OK);
	expect_msg(PAXOS_MSG_CHOSEN, (int64_t[]){101, 4, 3}, 3, PAXOS_E_MALFORMED);
	expect_msg(PAXOS_MSG_CHOSEN, (int64_t[]){101, 0, 3}, 3, PAXOS_E_MALFORMED);
	expect_msg(PAXOS_MSG_CHOSEN, (int64_t[]){0, 1, 3}, 3, PAXOS_E_MALFORMED);

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

	/* accept: the range of chosen instances, both ends or none, from <= to. */
	const int64_t ranges[][2] = {{0, 0}, {1, 1}, {3, 9}, {9, 3}, {0, 5}, {5, 0}};
	for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
		craft_good_header(&c);
		msgpack_pack_array(&c.pk, 7);
		msgpack_pack_uint32(&c.pk, PAXOS_MSG_ACCEPT);
		msgpack_pack_uint64(&c.pk, 10);
		msgpack_pack_uint64(&c.pk, 101);
		msgpack_pack_bin_with_body(&c.pk, "v", 1);
		msgpack_pack_false(&c.pk);
		msgpack_pack_int64(&c.pk, ranges[r][0]);
		msgpack_pack_int64(&c.pk, ranges[r][1]);
		craft_expect(&c, r < 3 ? PAXOS_OK : PAXOS_E_MALFORMED);
	}
	/* The encoder refuses one it could not write whole. */
	uint8_t buf[64];
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, sizeof(buf), &test_header);
	struct paxos_message m = {PAXOS_MSG_ACCEPT, .u.accept = {10, 101, {NULL, 0}, false, 0, 5}};
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_E_INVALID);
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
	struct paxos_message m[SAMPLE_MESSAGES];
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
	/* The leader's word on what was chosen speaks for its ballot's proposer, and is screened
	 * as its accepts are: a ballot beyond any epoch is implausible. */
	m = (struct paxos_message){.type = PAXOS_MSG_CHOSEN, .u.chosen = {5 * 100 + 2, 1, 1}};
	ck_assert(paxos_msg_proposer(&m, &id));
	ck_assert_uint_eq(id, 2);
	ck_assert(paxos_msg_plausible(&m));
	m.u.chosen.ballot = UINT64_MAX;
	ck_assert(!paxos_msg_plausible(&m));
	ck_assert_int_eq(paxos_msg_group(PAXOS_MSG_CHOSEN), PAXOS_GROUP_ACCEPTORS);
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
	    "change",       "snapshot_ask", "snapshot_offer", "snapshot_chunk", "chosen"};
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
	TCase *tc;
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
	tcase_add_test(tc, test_snapshot_bounds);
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
