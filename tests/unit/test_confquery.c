/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Configuration requests (PAXOS_MSG_CONFIG_ASK / CONFIG_INFO): the history on the wire
 * (paxos_membership_encode / decode_history), bad bytes refused, and the adoption rule
 * (paxos_membership_vouched, paxos_membership_adopt): the newest configuration a quorum of its
 * own members vouch for, never one that disagrees with what the asker knows.
 */
#include "check_main.h"
#include <arpa/inet.h>
#include <paxos/membership.h>
#include <stdlib.h>
#include <string.h>

#include "confquery_fixture.h"
#include "support.h"

static struct paxos_membership *copy(const struct paxos_membership *m)
{
	uint8_t buf[PAXOS_MEMBERSHIP_ENCODED_MAX];
	size_t len = paxos_membership_encode(m, buf, sizeof(buf));
	ck_assert_uint_gt(len, 0);
	struct paxos_membership *c = paxos_membership_decode_history(buf, len, ALPHA);
	ck_assert_ptr_nonnull(c);
	return c;
}

static void assert_same(const struct paxos_membership *a, const struct paxos_membership *b)
{
	uint32_t na, nb;
	const struct paxos_configuration *ha = paxos_membership_history(a, &na);
	const struct paxos_configuration *hb = paxos_membership_history(b, &nb);
	ck_assert_uint_eq(na, nb);
	for (uint32_t k = 0; k < na; k++) {
		ck_assert_uint_eq(ha[k].first, hb[k].first);
		ck_assert_uint_eq(ha[k].id, hb[k].id);
		ck_assert_uint_eq(ha[k].members, hb[k].members);
		ck_assert_uint_eq(ha[k].proposers, hb[k].proposers);
	}
	ck_assert_uint_eq(paxos_membership_applied(a), paxos_membership_applied(b));
	ck_assert(paxos_membership_agrees(a, b) && paxos_membership_agrees(b, a));
}

START_TEST(test_encode_roundtrip)
{
	struct paxos_membership *m = history(3, 45);
	uint8_t cmd[PAXOS_MEMBERSHIP_COMMAND_MAX];
	paxos_membership_command_at(4, 0x1b, 4, 0x0900000a, 7205, cmd);
	struct paxos_value v = {cmd, sizeof(cmd)};
	ck_assert_int_eq(paxos_membership_apply(m, 46, &v), 1);
	struct paxos_membership *c = copy(m);
	assert_same(m, c);
	uint32_t addr;
	uint16_t port;
	ck_assert(paxos_membership_address(c, 4, &addr, &port));
	ck_assert_uint_eq(addr, 0x0900000a);
	ck_assert_uint_eq(port, 7205);
	ck_assert(!paxos_membership_address(c, 3, &addr, &port));
	/* Too small a buffer: nothing written. */
	uint8_t small[PAXOS_MEMBERSHIP_ENCODED_MAX - 1];
	ck_assert_uint_eq(paxos_membership_encode(m, small, sizeof(small)), 0);
	paxos_membership_free(c);
	paxos_membership_free(m);
}
END_TEST

/* Cut, grown, another window, bytes changed: never a history that could not be the log's,
 * never a crash. */
START_TEST(test_decode_refuses_bad_bytes)
{
	struct paxos_membership *m = history(2, 25);
	uint8_t buf[PAXOS_MEMBERSHIP_ENCODED_MAX + 8];
	size_t len = paxos_membership_encode(m, buf, sizeof(buf));
	for (size_t cut = 0; cut < len; cut++)
		ck_assert_ptr_null(paxos_membership_decode_history(buf, cut, ALPHA));
	buf[len] = 0;
	ck_assert_ptr_null(paxos_membership_decode_history(buf, len + 1, ALPHA));
	ck_assert_ptr_null(paxos_membership_decode_history(buf, len, ALPHA + 1));
	ck_assert_ptr_null(paxos_membership_decode_history(NULL, len, ALPHA));
	/* Every byte flipped in turn: a history restore() takes, or NULL. */
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			buf[i] ^= (uint8_t)(1u << bit);
			struct paxos_membership *d =
			    paxos_membership_decode_history(buf, len, ALPHA);
			if (d) {
				uint32_t n;
				const struct paxos_configuration *h =
				    paxos_membership_history(d, &n);
				struct paxos_membership *r = paxos_membership_restore(
				    h, n, paxos_membership_applied(d), ALPHA);
				ck_assert_ptr_nonnull(r);
				paxos_membership_free(r);
				paxos_membership_free(d);
			}
			buf[i] ^= (uint8_t)(1u << bit);
		}
	}
	/* A configuration id out of sequence. */
	buf[14 + 20 + 8] += 1;
	ck_assert_ptr_null(paxos_membership_decode_history(buf, len, ALPHA));
	paxos_membership_free(m);
}
END_TEST

START_TEST(test_agrees)
{
	struct paxos_membership *a = history(3, 40), *b = history(1, 12);
	ck_assert(paxos_membership_agrees(a, b));
	ck_assert(paxos_membership_agrees(b, a));
	/* Another cluster: configuration 2 made of other members. */
	struct paxos_membership *other = paxos_membership_create(0x7, 0x3, ALPHA);
	change(other, 10, 0x5);
	ck_assert(!paxos_membership_agrees(other, a));
	ck_assert(!paxos_membership_agrees(a, other));
	/* Another first configuration (initial-members). */
	struct paxos_membership *first = paxos_membership_create(0x1f, 0x3, ALPHA);
	ck_assert(!paxos_membership_agrees(first, b));
	paxos_membership_free(first);
	paxos_membership_free(other);
	paxos_membership_free(b);
	paxos_membership_free(a);
}
END_TEST

/* A fresh cluster: everyone answers with configuration 1; a quorum of it settles it. */
START_TEST(test_vouched_first_start)
{
	struct paxos_membership *known = history(0, 0);
	const struct paxos_membership *answers[PAXOS_MAX_ACCEPTORS] = {0};
	uint32_t id = 0;
	ck_assert_int_eq(paxos_membership_vouched(answers, PAXOS_MAX_ACCEPTORS, known, &id), -1);
	struct paxos_membership *a0 = history(0, 0), *a2 = history(0, 0);
	answers[0] = a0;
	ck_assert_int_eq(paxos_membership_vouched(answers, PAXOS_MAX_ACCEPTORS, known, &id), -1);
	answers[2] = a2;
	ck_assert_int_ge(paxos_membership_vouched(answers, PAXOS_MAX_ACCEPTORS, known, &id), 0);
	ck_assert_uint_eq(id, 1);
	paxos_membership_free(a0);
	paxos_membership_free(a2);
	paxos_membership_free(known);
}
END_TEST

/* After three changes ({0,3,4} in force), a process that knows only paxos.conf's
 * configuration 1 hears removed acceptors 1 and 2 (old histories: a quorum of configuration
 * 1) and the members 0, 3 and 4: it takes configuration 4 once a quorum of {0,3,4} vouch for
 * it, and not before. */
START_TEST(test_vouched_newest_beats_stale)
{
	struct paxos_membership *known = history(0, 0);
	struct paxos_membership *old1 = history(1, 12), *old2 = history(2, 25);
	struct paxos_membership *m0 = history(3, 100), *m3 = history(3, 120), *m4 = history(3, 90);
	const struct paxos_membership *answers[PAXOS_MAX_ACCEPTORS] = {0};
	uint32_t id = 0;
	answers[1] = old1;
	answers[2] = old2;
	/* Acceptor 2 knows configuration 3 ({0,1,3}), acceptor 1 only 2 ({0,1,2,3}): neither
	 * has a quorum of its own members behind it, and configuration 1 is nobody's newest. */
	int k = paxos_membership_vouched(answers, PAXOS_MAX_ACCEPTORS, known, &id);
	ck_assert_int_eq(k, -1);
	answers[0] = m0;
	k = paxos_membership_vouched(answers, PAXOS_MAX_ACCEPTORS, known, &id);
	/* 0, 1, 2 have configuration 2 ({0,1,2,3}): 3 of 4, a quorum; 3 ({0,1,3}) only by 0. */
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(id, 2);
	answers[3] = m3;
	k = paxos_membership_vouched(answers, PAXOS_MAX_ACCEPTORS, known, &id);
	ck_assert_uint_eq(id, 4); /* {0,3,4}: 0 and 3 are a quorum */
	ck_assert_int_eq(k, 3);   /* the one applied furthest */
	answers[4] = m4;
	k = paxos_membership_vouched(answers, PAXOS_MAX_ACCEPTORS, known, &id);
	ck_assert_int_eq(k, 3);
	ck_assert_uint_eq(id, 4);
	/* Adopted: the asker's history is the members' from then on. */
	ck_assert_int_eq(paxos_membership_adopt(known, answers[k]), 1);
	assert_same(known, m3);
	ck_assert_uint_eq(paxos_membership_members(known, 121), 0x19);
	ck_assert_int_eq(paxos_membership_adopt(known, old2), 0); /* never back */
	ck_assert_int_eq(paxos_membership_adopt(known, m3), 0);
	paxos_membership_free(m4);
	paxos_membership_free(m3);
	paxos_membership_free(m0);
	paxos_membership_free(old2);
	paxos_membership_free(old1);
	paxos_membership_free(known);
}
END_TEST

/* Answers that disagree with what the asker knows (a forged one, another cluster's) vouch for
 * nothing, even a quorum of them; a member outside the configuration does not count. */
START_TEST(test_vouched_ignores_disagreeing)
{
	struct paxos_membership *known = history(1, 12);
	struct paxos_membership *forged = paxos_membership_create(0x7, 0x3, ALPHA);
	change(forged, 10, 0x6); /* configuration 2 of other members */
	paxos_membership_skip_to(forged, 50);
	const struct paxos_membership *answers[PAXOS_MAX_ACCEPTORS] = {0};
	answers[1] = forged;
	answers[2] = forged;
	uint32_t id = 0;
	ck_assert_int_eq(paxos_membership_vouched(answers, PAXOS_MAX_ACCEPTORS, known, &id), -1);
	ck_assert_int_eq(paxos_membership_adopt(known, forged), PAXOS_E_INVALID);
	/* Acceptors 5 and 6 answer with the true history: not members of configuration 2. */
	struct paxos_membership *h = history(1, 40);
	answers[1] = answers[2] = NULL;
	answers[5] = answers[6] = h;
	ck_assert_int_eq(paxos_membership_vouched(answers, PAXOS_MAX_ACCEPTORS, known, &id), -1);
	answers[0] = answers[3] = h;
	ck_assert_int_eq(paxos_membership_vouched(answers, PAXOS_MAX_ACCEPTORS, known, &id), -1);
	answers[1] = h; /* 0, 1, 3: 3 of {0,1,2,3} */
	ck_assert_int_ge(paxos_membership_vouched(answers, PAXOS_MAX_ACCEPTORS, known, &id), 0);
	ck_assert_uint_eq(id, 2);
	paxos_membership_free(h);
	paxos_membership_free(forged);
	paxos_membership_free(known);
}
END_TEST

/* An address the asker set (an acceptor about to be added) stays when it adopts. */
START_TEST(test_adopt_keeps_own_addresses)
{
	struct paxos_membership *m = history(0, 0), *h = history(2, 30);
	paxos_membership_set_address(m, 5, 0x0a00000a, 9000);
	ck_assert_int_eq(paxos_membership_adopt(m, h), 1);
	uint32_t addr;
	uint16_t port;
	ck_assert(paxos_membership_address(m, 5, &addr, &port));
	ck_assert_uint_eq(port, 9000);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 3);
	paxos_membership_free(h);
	paxos_membership_free(m);
}
END_TEST

/* A learner that started at the current instance skipped its history there; an answer with a
 * newer configuration applied less far must not take it back, or the instances past the
 * answer's applied + alpha would have no known configuration, and the learner, which only
 * moves it by delivering them, would wait for ever. */
START_TEST(test_adopt_keeps_a_skip_ahead)
{
	struct paxos_membership *m = history(0, 0), *h = history(2, 30);
	paxos_membership_skip_to(m, 1000); /* learner-start current, at instance 1001 */
	ck_assert(!paxos_membership_known(h, 1001));
	ck_assert_int_eq(paxos_membership_adopt(m, h), 1);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 3);
	ck_assert_uint_eq(paxos_membership_applied(m), 1000);
	ck_assert(paxos_membership_known(m, 1001));
	ck_assert_uint_eq(paxos_membership_members(m, 1001), 0xb);
	paxos_membership_free(h);
	paxos_membership_free(m);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("confquery");
	TCase *t = tcase_create("confquery");
	tcase_add_test(t, test_encode_roundtrip);
	tcase_add_test(t, test_decode_refuses_bad_bytes);
	tcase_add_test(t, test_agrees);
	tcase_add_test(t, test_vouched_first_start);
	tcase_add_test(t, test_vouched_newest_beats_stale);
	tcase_add_test(t, test_vouched_ignores_disagreeing);
	tcase_add_test(t, test_adopt_keeps_own_addresses);
	tcase_add_test(t, test_adopt_keeps_a_skip_ahead);
	suite_add_tcase(s, t);
	return s;
}
