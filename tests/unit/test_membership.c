/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Changing the acceptor set through the log (paxos/membership.h): the history's rules (a
 * command made against the newest configuration takes effect alpha instances after its own,
 * any other is ignored), and how the learner core counts votes with it: only the members of
 * each instance's configuration, with its quorum, and nothing decided while that
 * configuration is not known; an acceptor's recovery over several configurations (the
 * proposer core: test_membership_proposer.c).
 */
#include "check_main.h"
#include <paxos/acceptor.h>
#include <paxos/learner.h>
#include <paxos/membership.h>
#include <paxos/proposer.h>
#include <paxos/storage_backends.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "support.h"

START_TEST(test_history)
{
	ck_assert_ptr_null(paxos_membership_new(0, 4));
	ck_assert_ptr_null(paxos_membership_new(7, 0));
	struct paxos_membership *m = paxos_membership_new(0x7, 4);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(paxos_membership_members(m, 1), 0x7);
	ck_assert_uint_eq(paxos_membership_quorum(m, 1), 2);
	ck_assert(paxos_membership_known(m, 4));
	ck_assert(!paxos_membership_known(m, 5));
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value plain = value_of("hello");
	ck_assert_int_eq(paxos_membership_apply(m, 1, &plain), 0);
	ck_assert_uint_eq(paxos_membership_applied(m), 1);
	ck_assert(paxos_membership_known(m, 5));
	/* Grow to 5 in instance 2: from 6 on. */
	struct paxos_value grow = support_command(1, 0x1f, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 2, &grow), 1);
	ck_assert(paxos_membership_pending(m));
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 2);
	ck_assert_uint_eq(paxos_membership_latest(m)->first, 6);
	ck_assert_uint_eq(paxos_membership_members(m, 5), 0x7);
	ck_assert_uint_eq(paxos_membership_members(m, 6), 0x1f);
	ck_assert_uint_eq(paxos_membership_quorum(m, 6), 3);
	/* Again (a retry chosen twice), or made against configuration 1 (two at once): ignored. */
	ck_assert_int_eq(paxos_membership_apply(m, 3, &grow), 0);
	struct paxos_value other = support_command(1, 0xb, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 4, &other), 0);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 2);
	/* Instances at or below applied change nothing. */
	struct paxos_value shrink = support_command(2, 0x7, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 4, &shrink), 0);
	ck_assert(paxos_membership_pending(m));
	ck_assert_int_eq(paxos_membership_apply(m, 5, &plain), 0);
	ck_assert(!paxos_membership_pending(m));
	/* A gap counts as skipped; then shrink in 9, from 13 on. */
	ck_assert_int_eq(paxos_membership_apply(m, 9, &shrink), 1);
	ck_assert_uint_eq(paxos_membership_applied(m), 9);
	ck_assert_uint_eq(paxos_membership_members(m, 12), 0x1f);
	ck_assert_uint_eq(paxos_membership_members(m, 13), 0x7);
	ck_assert_uint_eq(paxos_membership_at(m, 13)->id, 3);
	ck_assert_uint_eq(paxos_membership_members(m, 2), 0x7); /* configuration 1 still there */
	paxos_membership_skip_to(m, 20);
	ck_assert_uint_eq(paxos_membership_applied(m), 20);
	ck_assert(paxos_membership_known(m, 24) && !paxos_membership_known(m, 25));
	paxos_membership_free(m);
}
END_TEST

START_TEST(test_no_change_and_overflow)
{
	struct paxos_membership *m = paxos_membership_new(0x7, 1);
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value same = support_command(1, 0x7, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 1, &same), 0);
	struct paxos_value none = support_command(1, 0, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 2, &none), 0);
	/* More changes than the history holds: the oldest go, the newest stay right. */
	paxos_iid iid = 3;
	for (uint32_t k = 1; k <= 2 * PAXOS_MEMBERSHIP_HISTORY; k++, iid++) {
		struct paxos_value c = support_command(k, k % 2 ? 0xf : 0x7, buf);
		ck_assert_int_eq(paxos_membership_apply(m, iid, &c), 1);
		ck_assert_uint_eq(paxos_membership_members(m, iid + 1), k % 2 ? 0xf : 0x7);
	}
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 2 * PAXOS_MEMBERSHIP_HISTORY + 1);
	paxos_membership_free(m);
}
END_TEST

/* Ordinary values are never taken for commands: one length check, then the marker. */
START_TEST(test_command_format)
{
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value c = support_command(41, 0x19, buf);
	uint32_t from = 0, members = 0;
	ck_assert(paxos_membership_is_command(&c));
	ck_assert_int_eq(paxos_membership_decode(&c, &from, &members), PAXOS_OK);
	ck_assert_uint_eq(from, 41);
	ck_assert_uint_eq(members, 0x19);
	uint8_t frame[64];
	uint32_t used = 0;
	struct paxos_value twelve = value_of("twelve bytes");
	ck_assert_int_eq(paxos_batch_append(frame, sizeof(frame), &used, &twelve), PAXOS_OK);
	struct paxos_value f = {frame, used}; /* a frame of 16 bytes */
	ck_assert_uint_eq(f.len, PAXOS_MEMBERSHIP_COMMAND_LEN);
	ck_assert(!paxos_membership_is_command(&f));
	ck_assert_int_eq(paxos_membership_decode(&f, &from, &members), PAXOS_E_MALFORMED);
	uint8_t skip[PAXOS_BATCH_SKIP_LEN];
	paxos_batch_write_skip(skip);
	struct paxos_value s = {skip, sizeof(skip)};
	ck_assert(!paxos_membership_is_command(&s));
	ck_assert(!paxos_batch_is_skip(&c));
	ck_assert(!paxos_membership_is_command(NULL));
}
END_TEST

/* ---- the learner ---- */

static paxos_iid delivered[64];
static uint32_t delivered_n;

static void on_deliver(void *arg, paxos_iid iid, const struct paxos_value *v)
{
	(void)arg;
	(void)v;
	delivered[delivered_n++] = iid;
}

static struct paxos_learner *learner_with(struct paxos_membership *m, struct paxos_counters *c)
{
	struct paxos_learner_options o = {.acceptors = 8,
					  .window = 32,
					  .max_value = 64,
					  .repeat_batch = 8,
					  .hole_check = 1000,
					  .deliver = on_deliver,
					  .membership = m};
	delivered_n = 0;
	return paxos_learner_new(&o, c);
}

static void accepted(struct paxos_learner *l, paxos_iid iid, uint32_t acceptor, paxos_ballot b,
		     const struct paxos_value *v)
{
	struct paxos_message msg = {.type = PAXOS_MSG_ACCEPTED};
	msg.u.accepted =
	    (struct paxos_accepted){.iid = iid, .ballot = b, .acceptor_id = acceptor, .value = *v};
	paxos_learner_handle(l, &msg, 1, NULL);
}

/* Votes count only from the members of the instance's configuration, with its quorum. */
START_TEST(test_learner_counts_members)
{
	struct paxos_counters c = {0};
	struct paxos_membership *m = paxos_membership_new(0x7, 2); /* 0, 1, 2 */
	struct paxos_learner *l = learner_with(m, &c);
	struct paxos_value v = value_of("v");
	accepted(l, 1, 5, 100, &v); /* not a member */
	accepted(l, 1, 6, 100, &v);
	ck_assert_uint_eq(delivered_n, 0);
	accepted(l, 1, 0, 100, &v);
	ck_assert_uint_eq(delivered_n, 0);
	accepted(l, 1, 2, 100, &v);
	ck_assert_uint_eq(delivered_n, 1);
	/* Instance 2 replaces acceptor 2 by 3, from instance 4 on. */
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value cmd = support_command(1, 0xb, buf);
	accepted(l, 2, 0, 100, &cmd);
	accepted(l, 2, 1, 100, &cmd);
	ck_assert_uint_eq(delivered_n, 2);
	ck_assert_uint_eq(paxos_membership_members(m, 4), 0xb);
	accepted(l, 3, 2, 100, &v); /* instance 3: still 0, 1, 2 */
	accepted(l, 3, 3, 100, &v);
	ck_assert_uint_eq(delivered_n, 2);
	accepted(l, 3, 1, 100, &v);
	ck_assert_uint_eq(delivered_n, 3);
	accepted(l, 4, 2, 100, &v); /* instance 4: 0, 1, 3; 2 no longer counts */
	accepted(l, 4, 0, 100, &v);
	ck_assert_uint_eq(delivered_n, 3);
	accepted(l, 4, 3, 100, &v);
	ck_assert_uint_eq(delivered_n, 4);
	paxos_learner_free(l);
	paxos_membership_free(m);
}
END_TEST

/* An instance whose configuration is not known keeps its votes and is decided once it is. */
START_TEST(test_learner_waits_for_configuration)
{
	struct paxos_counters c = {0};
	struct paxos_membership *m = paxos_membership_new(0x7, 2);
	struct paxos_learner *l = learner_with(m, &c);
	struct paxos_value v = value_of("v");
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value grow = support_command(1, 0x1f, buf); /* in 1: 0..4 from 3 on */
	/* Instance 3, voted by 0, 1 and 3 before 1 is known: a quorum of 3 only with 3. */
	accepted(l, 3, 0, 100, &v);
	accepted(l, 3, 1, 100, &v);
	accepted(l, 3, 3, 100, &v);
	ck_assert_uint_eq(delivered_n, 0);
	accepted(l, 1, 0, 100, &grow);
	accepted(l, 1, 1, 100, &grow);
	ck_assert_uint_eq(delivered_n, 1);
	/* Instance 2: the old configuration, two votes are a quorum. */
	accepted(l, 2, 0, 100, &v);
	accepted(l, 2, 2, 100, &v);
	ck_assert_uint_eq(delivered_n, 3);
	ck_assert_uint_eq(delivered[2], 3);
	/* Without acceptor 3's vote instance 3 would have needed a third member. */
	paxos_learner_free(l);
	paxos_membership_free(m);
}
END_TEST

/* hold_changes: after delivering a change the learner delivers nothing more, though later
 * instances close, until its driver kept the change; then they follow, in order. */
START_TEST(test_learner_holds_after_change)
{
	struct paxos_counters c = {0};
	struct paxos_membership *m = paxos_membership_new(0x7, 2);
	struct paxos_learner_options o = {.acceptors = 8,
					  .window = 32,
					  .max_value = 64,
					  .repeat_batch = 8,
					  .hole_check = 1000,
					  .deliver = on_deliver,
					  .membership = m,
					  .hold_changes = true};
	delivered_n = 0;
	struct paxos_learner *l = paxos_learner_new(&o, &c);
	struct paxos_value v = value_of("v");
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value grow = support_command(1, 0xf, buf); /* in 2: 0..3 from 4 on */
	for (paxos_iid i = 3; i <= 4; i++) {
		accepted(l, i, 0, 100, &v);
		accepted(l, i, 1, 100, &v);
	}
	accepted(l, 1, 0, 100, &v);
	accepted(l, 1, 1, 100, &v);
	ck_assert(!paxos_learner_change_held(l));
	accepted(l, 2, 0, 100, &grow);
	accepted(l, 2, 1, 100, &grow);
	/* 1 and the change are delivered, 3 waits although it is closed. */
	ck_assert_uint_eq(delivered_n, 2);
	ck_assert(paxos_learner_change_held(l));
	ck_assert_uint_eq(paxos_learner_next_iid(l), 3);
	/* Instance 4 is of configuration 2: with 0 and 1 of its four members it is not closed. */
	ck_assert_int_eq(paxos_learner_step_change_kept(l), PAXOS_OK);
	ck_assert(!paxos_learner_change_held(l));
	struct paxos_learner_ready rd;
	ck_assert(paxos_learner_ready(l, &rd));
	uint32_t delivered_events = 0;
	for (size_t i = 0; i < rd.event_count; i++)
		if (rd.events[i].kind == PAXOS_LEARNER_DELIVERED) {
			ck_assert_uint_eq(rd.events[i].iid, 3);
			delivered_events++;
		}
	ck_assert_uint_eq(delivered_events, 1);
	ck_assert_int_eq(paxos_learner_step_change_kept(l), PAXOS_E_INVALID); /* not advanced */
	paxos_learner_advance(l);
	accepted(l, 4, 2, 100, &v);
	ck_assert_uint_eq(paxos_learner_next_iid(l), 5);
	paxos_learner_free(l);
	paxos_membership_free(m);
}
END_TEST

/* A learner that starts at instance 10 takes everything below for applied: 10 and 11 are
 * decided with configuration 1, 12 waits for 10's delivery. */
START_TEST(test_learner_starts_later)
{
	struct paxos_counters c = {0};
	struct paxos_membership *m = paxos_membership_new(0x7, 2);
	struct paxos_learner_options o = {.acceptors = 8,
					  .window = 32,
					  .max_value = 64,
					  .repeat_batch = 8,
					  .hole_check = 1000,
					  .start_iid = 10,
					  .deliver = on_deliver,
					  .membership = m};
	delivered_n = 0;
	struct paxos_learner *l = paxos_learner_new(&o, &c);
	ck_assert_uint_eq(paxos_membership_applied(m), 9);
	struct paxos_value v = value_of("v");
	accepted(l, 12, 0, 100, &v);
	accepted(l, 12, 1, 100, &v);
	accepted(l, 11, 0, 100, &v);
	accepted(l, 11, 1, 100, &v);
	ck_assert_uint_eq(delivered_n, 0);
	accepted(l, 10, 1, 100, &v);
	accepted(l, 10, 2, 100, &v);
	ck_assert_uint_eq(delivered_n, 3);
	paxos_learner_free(l);
	paxos_membership_free(m);
}
END_TEST

/* ---- acceptor recovery over several configurations ---- */

static void answer(struct paxos_acceptor *a, uint32_t from, uint64_t incarnation)
{
	struct paxos_message m = {.type = PAXOS_MSG_RECOVER_INFO};
	m.u.recover_info = (struct paxos_recover_info){.role = PAXOS_ROLE_ACCEPTOR,
						       .sender_id = from,
						       .acceptor_id = 0,
						       .incarnation = incarnation,
						       .highest_iid = 10,
						       .highest_ballot = 1000};
	struct recorder *r = recorder_new();
	paxos_acceptor_handle(a, &m, &r->emitter);
	recorder_free(r);
}

/* Acceptor 0 recovers with configurations {0,1,3} and {0,1,2}: answers from 1 and 3 cover
 * the newest, not the older one (2's quorum {0,2} is unheard), so it waits for 2 too. */
START_TEST(test_recovery_covers_every_configuration)
{
	struct paxos_counters c = {0};
	struct paxos_storage *st = paxos_storage_memory_new();
	struct paxos_acceptor *a =
	    paxos_acceptor_new(&(struct paxos_acceptor_options){.id = 0}, st, &c);
	struct paxos_acceptor_membership m = {
	    .proposers = 0, .incarnation = 9, .amnesiac = true, .configurations = {0xb, 0x7}};
	ck_assert_int_eq(paxos_acceptor_join(a, &m), PAXOS_OK);
	ck_assert(paxos_acceptor_recovering(a));
	answer(a, 3, 9);
	answer(a, 5, 9); /* in no configuration: counts for none */
	ck_assert(paxos_acceptor_recovering(a));
	answer(a, 1, 9);
	ck_assert(paxos_acceptor_recovering(a));
	answer(a, 2, 9);
	ck_assert(!paxos_acceptor_recovering(a));
	ck_assert_uint_eq(paxos_acceptor_floor(a), 10);
	paxos_acceptor_free(a);
	paxos_storage_destroy(st);
}
END_TEST

static void proposer_answer(struct paxos_acceptor *a, uint32_t from)
{
	struct paxos_message m = {.type = PAXOS_MSG_RECOVER_INFO};
	m.u.recover_info = (struct paxos_recover_info){.role = PAXOS_ROLE_PROPOSER,
						       .sender_id = from,
						       .acceptor_id = 0,
						       .incarnation = 9,
						       .highest_iid = 10,
						       .highest_ballot = 1000 + from};
	struct recorder *r = recorder_new();
	paxos_acceptor_handle(a, &m, &r->emitter);
	recorder_free(r);
}

/* With a proposer set, recovery waits for its members only: proposer 0 was removed (set
 * {1,2} of 4 proposers), so 1 and 2 answering is enough, and 3's answer counts for nothing. */
START_TEST(test_recovery_asks_the_proposer_set)
{
	struct paxos_counters c = {0};
	struct paxos_storage *st = paxos_storage_memory_new();
	struct paxos_acceptor *a =
	    paxos_acceptor_new(&(struct paxos_acceptor_options){.id = 0}, st, &c);
	struct paxos_acceptor_membership m = {.acceptors = 3,
					      .proposers = 4,
					      .incarnation = 9,
					      .amnesiac = true,
					      .proposer_set = 0x6};
	ck_assert_int_eq(paxos_acceptor_join(a, &m), PAXOS_OK);
	answer(a, 1, 9);
	answer(a, 2, 9);
	ck_assert(paxos_acceptor_recovering(a));
	struct paxos_acceptor_recovery_wait w;
	paxos_acceptor_recovery_wait(a, &w);
	ck_assert_uint_eq(w.proposers_silent, 2);
	proposer_answer(a, 3); /* not in the set: not waited for, its ballot counts */
	proposer_answer(a, 1);
	ck_assert(paxos_acceptor_recovering(a));
	paxos_acceptor_recovery_wait(a, &w);
	ck_assert_uint_eq(w.proposers_silent, 1);
	proposer_answer(a, 2);
	ck_assert(!paxos_acceptor_recovering(a));
	ck_assert_uint_eq(paxos_acceptor_fence(a), 1003);
	paxos_acceptor_free(a);
	paxos_storage_destroy(st);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("membership");
	TCase *t = tcase_create("membership");
	tcase_add_test(t, test_history);
	tcase_add_test(t, test_no_change_and_overflow);
	tcase_add_test(t, test_command_format);
	tcase_add_test(t, test_learner_counts_members);
	tcase_add_test(t, test_learner_waits_for_configuration);
	tcase_add_test(t, test_learner_starts_later);
	tcase_add_test(t, test_learner_holds_after_change);
	tcase_add_test(t, test_recovery_covers_every_configuration);
	tcase_add_test(t, test_recovery_asks_the_proposer_set);
	suite_add_tcase(s, t);
	return s;
}
