/* SPDX-License-Identifier: BSD-3-Clause */
/* Wire codec: version 5, the release before, which a rolling upgrade runs beside. */
#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "codec_fixture.h"
#include "origin.h"
#include "support.h"

/* ---- wire version 5: the release before, which a rolling upgrade runs beside ---- */

static const struct paxos_header header_v5 = {
    .role = PAXOS_ROLE_ACCEPTOR, .sender_id = 2, .version = 5, .speech = PAXOS_WIRE_NATIVE};

/* The messages version 6 added fields to, as version 5 wrote them: the same fields but the
 * generation (and acceptor state's recovering, recovery's founder) last. Written here field by
 * field, not from the codec's table. */
static void craft_v5_messages(struct craft *c)
{
	msgpack_packer *pk = &c->pk;
	msgpack_pack_array(pk, 4); /* accept */
	msgpack_pack_uint32(pk, PAXOS_MSG_ACCEPT);
	msgpack_pack_uint64(pk, 11);
	msgpack_pack_uint64(pk, 201);
	msgpack_pack_bin(pk, 3);
	msgpack_pack_bin_body(pk, payload, 3);
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
	m[i++] =
	    (struct paxos_message){PAXOS_MSG_ACCEPT, .u.accept = {11, 201, pv(3), true, 4, 10}};
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
	case PAXOS_MSG_ACCEPT:
		m->u.accept.chosen_from = m->u.accept.chosen_to = 0;
		m->u.accept.spares_rest = false;
		break;
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
		/* Version 5's under a version 6 header (an accept's range is optional: without
		 * it, the accept is version 5's in both). */
		if (m[i].type == PAXOS_MSG_ACCEPT)
			continue;
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

Suite *test_suite(void)
{
	Suite *s = suite_create("codec");
	TCase *tc;
	tc = tcase_create("wire5");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_decode_wire_5);
	tcase_add_test(tc, test_wire_5_field_counts);
	tcase_add_test(tc, test_encode_wire_5);
	tcase_add_test(tc, test_wire_speech);
	suite_add_tcase(s, tc);
	return s;
}
