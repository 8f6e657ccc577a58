/* SPDX-License-Identifier: BSD-3-Clause */
/* The acceptor's recovery from lost state and its duplicate check (acceptor/recovery.c, through
 * paxos_acceptor_join and the acceptor's messages and ticks); first starts and new logs are
 * test_acceptor_first_start.c's. */
#include "check_main.h"
#include <paxos/acceptor.h>
#include <paxos/learner.h>
#include <paxos/storage_backends.h>

#include <stdlib.h>
#include <string.h>

#include "acceptor_fixture.h"

/* ---- recovery from lost state and duplicates (paxos_acceptor_join) ---- */

/*
 * 5 acceptors: a recovering one needs 5 - 3 + 1 = 3 other acceptors and both proposers. It
 * votes for nothing meanwhile (but says hello and asks the proposers every tick); then only
 * above the highest instance and ballot it heard of, rejecting lower ballots with the fence.
 */
START_TEST(amnesiac_votes_only_after_recovery_above_floor_and_fence)
{
	join(true, 77);
	ck_assert(paxos_acceptor_recovering(acc));
	/* No vote; each batch that withheld one asks the proposers at once (a proposer is at
	 * work), not only at the next tick. */
	ck_assert_int_eq(prepare(50, 901), PAXOS_OK);
	ck_assert_int_eq(accept_text(50, 901, "x"), PAXOS_OK);
	ck_assert_uint_eq(out->count, 2);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_RECOVER_ASK, PAXOS_GROUP_PROPOSERS), 2);
	ck_assert_uint_eq(recorder_find(out, PAXOS_MSG_RECOVER_ASK, 0)->u.recover_ask.incarnation,
			  77);
	ck_assert_uint_eq(counters.votes_withheld, 2);
	recorder_clear(out);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_ACCEPTOR_HELLO, PAXOS_GROUP_ACCEPTORS), 1);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_RECOVER_ASK, PAXOS_GROUP_PROPOSERS), 1);
	ck_assert(recorder_find(out, PAXOS_MSG_ACCEPTOR_HELLO, 0)->u.acceptor_hello.recovering);
	recorder_clear(out);

	info(PAXOS_ROLE_ACCEPTOR, 0, 77, 40, 500);
	info(PAXOS_ROLE_ACCEPTOR, 1, 76, 99, 9999); /* an earlier incarnation's question */
	info(PAXOS_ROLE_ACCEPTOR, ACCEPTOR_ID, 77, 99, 9999); /* ourselves */
	info(PAXOS_ROLE_ACCEPTOR, 1, 77, 42, 601);
	info(PAXOS_ROLE_PROPOSER, 0, 77, 45, 700);
	info(PAXOS_ROLE_ACCEPTOR, 4, 77, 41, 600);
	ck_assert(paxos_acceptor_recovering(acc)); /* proposer 1 has not answered */
	info(PAXOS_ROLE_PROPOSER, 1, 77, 30, 801);
	ck_assert(!paxos_acceptor_recovering(acc));
	ck_assert_uint_eq(paxos_acceptor_floor(acc), 45);
	ck_assert_uint_eq(paxos_acceptor_fence(acc), 801);
	ck_assert_uint_eq(counters.recoveries, 1);
	/* The prepare withheld meanwhile is answered now: above the floor and the fence. */
	const struct paxos_message *late = only(PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS);
	ck_assert_uint_eq(late->u.promise.iid, 50);
	ck_assert_uint_eq(late->u.promise.ballot, 901);
	recorder_clear(out);

	ck_assert_int_eq(prepare(45, 901), PAXOS_OK); /* at the floor */
	ck_assert_uint_eq(out->count, 0);
	/* At the fence: the reject names the fence + 1, for the proposer to go above it. */
	ck_assert_int_eq(prepare(46, 801), PAXOS_OK);
	ck_assert_uint_eq(only(PAXOS_MSG_REJECT, PAXOS_GROUP_PROPOSERS)->u.reject.ballot, 802);
	recorder_clear(out);
	ck_assert_int_eq(accept_text(46, 700, "old"), PAXOS_OK);
	ck_assert_uint_eq(only(PAXOS_MSG_REJECT, PAXOS_GROUP_PROPOSERS)->u.reject.ballot, 802);
	recorder_clear(out);
	ck_assert_int_eq(prepare(46, 901), PAXOS_OK);
	only(PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS);
	recorder_clear(out);
	ck_assert_int_eq(accept_text(46, 901, "new"), PAXOS_OK);
	only(PAXOS_MSG_ACCEPTED, PAXOS_GROUP_VOTES);
	recorder_clear(out);
	/* At or below the floor no promise, but an accept above the fence is taken: its
	 * proposer ran phase 1 with a quorum without us, so instances there still close. */
	ck_assert_int_eq(prepare(40, 902), PAXOS_OK);
	ck_assert_uint_eq(out->count, 0);
	ck_assert_int_eq(accept_text(40, 801, "old"), PAXOS_OK);
	ck_assert_uint_eq(only(PAXOS_MSG_REJECT, PAXOS_GROUP_PROPOSERS)->u.reject.ballot, 802);
	recorder_clear(out);
	ck_assert_int_eq(accept_text(40, 902, "repaired"), PAXOS_OK);
	ck_assert_uint_eq(only(PAXOS_MSG_ACCEPTED, PAXOS_GROUP_VOTES)->u.accepted.ballot, 902);
	ck_assert_uint_eq(stored(40).accepted, 902);
	recorder_clear(out);
	/* The rejects at or below the fence are counted apart from those of a higher promise. */
	ck_assert_uint_eq(counters.fence_rejects, 3);
	ck_assert_uint_eq(counters.rejects_sent, 0);
	ck_assert_int_eq(prepare(46, 850), PAXOS_OK); /* above the fence, below the promise */
	ck_assert_uint_eq(only(PAXOS_MSG_REJECT, PAXOS_GROUP_PROPOSERS)->u.reject.ballot, 901);
	ck_assert_uint_eq(counters.rejects_sent, 1);
	ck_assert_uint_eq(counters.fence_rejects, 3);
}
END_TEST

/*
 * The double crash: three of five acceptors and every proposer lost their state. A recovering
 * acceptor does not answer another one (it knows nothing of its earlier life), and answers
 * from proposers that are not in their first life do not make up for the missing acceptor:
 * it keeps withholding its votes, and says what it waits for.
 */
START_TEST(recovering_acceptors_do_not_vouch_for_each_other)
{
	struct paxos_acceptor_membership m = {
	    .acceptors = 5, .proposers = 2, .incarnation = 77, .amnesiac = true};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
	/* Acceptor 0 recovers too: we do not answer it, it does not answer us. */
	ck_assert_int_eq(hello(0, 5, true), PAXOS_OK);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_RECOVER_INFO, -1), 0);
	/* Restarted proposers (epoch 2) that sent nothing in this life. */
	paxos_ballot epoch2 = ((2ull << 32) | 1u) * 100u;
	info(PAXOS_ROLE_PROPOSER, 0, 77, 0, epoch2 - 1);
	info(PAXOS_ROLE_PROPOSER, 1, 77, 0, epoch2);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert(paxos_acceptor_recovering(acc));
	struct paxos_acceptor_recovery_wait w;
	paxos_acceptor_recovery_wait(acc, &w);
	ck_assert_uint_eq(w.acceptors_needed, 3);
	ck_assert_uint_eq(w.acceptors_answered, 0);
	ck_assert_uint_eq(w.acceptors_silent, 1u << 0 | 1u << 1 | 1u << 2 | 1u << 4);
	ck_assert_uint_eq(w.acceptors_recovering, 1u << 0);
	ck_assert_uint_eq(w.proposers_silent, 0);
	ck_assert_int_eq(prepare(5, epoch2 + 100), PAXOS_OK);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_PROMISE, -1), 0);
	/* Acceptors 1 and 2 hold their state and answer; 0 cannot, 4 lost it: withheld. */
	info(PAXOS_ROLE_ACCEPTOR, 1, 77, 194, 500);
	info(PAXOS_ROLE_ACCEPTOR, 2, 77, 150, 500);
	ck_assert(paxos_acceptor_recovering(acc));
	paxos_acceptor_recovery_wait(acc, &w);
	ck_assert_uint_eq(w.acceptors_answered, 2);
	ck_assert_uint_eq(w.acceptors_silent, 1u << 0 | 1u << 4);
	/* Once acceptor 0 holds a state again (it recovered, with the floor it set), it does. */
	info(PAXOS_ROLE_ACCEPTOR, 0, 77, 319, 500);
	ck_assert(!paxos_acceptor_recovering(acc));
	ck_assert_uint_eq(paxos_acceptor_floor(acc), 319);
}
END_TEST

/* Restored once its node's learner delivered everything up to the floor; the acceptor state
 * it reports never names an instance below its floor (the current instance for new
 * learners). */
START_TEST(restored_once_decisions_reach_the_floor)
{
	struct paxos_acceptor_membership m = {
	    .acceptors = 5, .proposers = 1, .incarnation = 77, .amnesiac = true};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
	ck_assert(!paxos_acceptor_restored(acc));
	info(PAXOS_ROLE_ACCEPTOR, 0, 77, 30, 500);
	info(PAXOS_ROLE_ACCEPTOR, 1, 77, 25, 500);
	info(PAXOS_ROLE_ACCEPTOR, 2, 77, 20, 500);
	info(PAXOS_ROLE_PROPOSER, 0, 77, 31, 600);
	ck_assert(!paxos_acceptor_recovering(acc));
	ck_assert(!paxos_acceptor_restored(acc));
	recorder_clear(out);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(
	    recorder_find(out, PAXOS_MSG_ACCEPTOR_STATE, 0)->u.acceptor_state.highest_accepted, 31);
	paxos_acceptor_decided(acc, 30);
	ck_assert(!paxos_acceptor_restored(acc));
	paxos_acceptor_decided(acc, 31);
	ck_assert(paxos_acceptor_restored(acc));
}
END_TEST

/* The prepares withheld while recovering are answered when recovery ends, here at the tick
 * that ends the proposers' recovery_ticks: the highest ballot per instance, and not an
 * instance at or below the floor; once only. */
START_TEST(withheld_prepares_answered_when_recovery_ends)
{
	struct paxos_acceptor_membership m = {.acceptors = 5,
					      .proposers = 2,
					      .incarnation = 77,
					      .amnesiac = true,
					      .recovery_ticks = 2};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
	ck_assert_int_eq(prepare(10, 301), PAXOS_OK);
	ck_assert_int_eq(prepare(10, 401), PAXOS_OK);
	ck_assert_int_eq(prepare(20, 301), PAXOS_OK);
	ck_assert_int_eq(prepare(5, 901), PAXOS_OK); /* at the floor, once recovered */
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_RECOVER_ASK, PAXOS_GROUP_PROPOSERS), 4);
	ck_assert_uint_eq(out->count, 4);
	recorder_clear(out);
	info(PAXOS_ROLE_ACCEPTOR, 0, 77, 5, 200);
	info(PAXOS_ROLE_ACCEPTOR, 1, 77, 4, 200);
	info(PAXOS_ROLE_ACCEPTOR, 2, 77, 3, 100);
	ck_assert(paxos_acceptor_recovering(acc)); /* the proposers have 2 ticks to answer */
	ck_assert_uint_eq(out->count, 0);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_PROMISE, -1), 0);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert(!paxos_acceptor_recovering(acc));
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS), 2);
	const struct paxos_message *p = recorder_find(out, PAXOS_MSG_PROMISE, 0);
	ck_assert_uint_eq(p->u.promise.iid, 10);
	ck_assert_uint_eq(p->u.promise.ballot, 401);
	p = recorder_find(out, PAXOS_MSG_PROMISE, 1);
	ck_assert_uint_eq(p->u.promise.iid, 20);
	ck_assert_uint_eq(p->u.promise.ballot, 301);
	ck_assert_uint_eq(counters.promises_sent, 2);
	recorder_clear(out);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_PROMISE, -1), 0);
}
END_TEST

/* A recovering acceptor that hears a peer which has not answered it says hello again in the
 * same batch (its first hello may have gone out before the peer listened); not once the peer
 * answered. */
START_TEST(recovering_acceptor_greets_a_late_peer)
{
	join(true, 77);
	ck_assert_int_eq(hello(0, 5, true), PAXOS_OK);
	/* Recovering itself, it has nothing to vouch for: no answer. */
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_RECOVER_INFO, PAXOS_GROUP_ACCEPTORS), 0);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_ACCEPTOR_HELLO, PAXOS_GROUP_ACCEPTORS), 1);
	ck_assert(recorder_find(out, PAXOS_MSG_ACCEPTOR_HELLO, 0)->u.acceptor_hello.recovering);
	recorder_clear(out);
	/* Once per peer and tick: hellos cannot make hellos at the network's pace. */
	ck_assert_int_eq(hello(0, 5, false), PAXOS_OK);
	ck_assert_uint_eq(out->count, 0);
	ck_assert_int_eq(hello(1, 6, false), PAXOS_OK); /* another peer */
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_ACCEPTOR_HELLO, PAXOS_GROUP_ACCEPTORS), 1);
	recorder_clear(out);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	recorder_clear(out);
	ck_assert_int_eq(hello(0, 5, false), PAXOS_OK);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_ACCEPTOR_HELLO, PAXOS_GROUP_ACCEPTORS), 1);
	recorder_clear(out);
	info(PAXOS_ROLE_ACCEPTOR, 0, 77, 1, 100);
	ck_assert_int_eq(hello(0, 5, false), PAXOS_OK);
	ck_assert_uint_eq(out->count, 0);
}
END_TEST

/* Values learned as final are safe to give, recovering or not. */
START_TEST(recovering_acceptor_answers_with_final_values)
{
	join(true, 77);
	ck_assert_int_eq(
	    paxos_acceptor_learned(acc, 9, &(struct paxos_value){(const uint8_t *)"v", 1}),
	    PAXOS_OK);
	ck_assert_int_eq(accept_text(9, 301, "other"), PAXOS_OK);
	const struct paxos_message *m = only(PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS);
	ck_assert(m->u.accepted.final);
	ck_assert(value_is(&m->u.accepted.value, "v"));
}
END_TEST

/* A recovering acceptor's hello is answered with what this one accepted and promised. */
START_TEST(hello_of_recovering_acceptor_is_answered)
{
	join(false, 50);
	ck_assert_int_eq(prepare(7, 401), PAXOS_OK);
	ck_assert_int_eq(accept_text(6, 401, "x"), PAXOS_OK);
	recorder_clear(out);
	ck_assert_int_eq(hello(1, 90, false), PAXOS_OK);
	ck_assert_uint_eq(out->count, 0);
	ck_assert_int_eq(hello(1, 90, true), PAXOS_OK);
	const struct paxos_recover_info *r =
	    &only(PAXOS_MSG_RECOVER_INFO, PAXOS_GROUP_ACCEPTORS)->u.recover_info;
	ck_assert_uint_eq(r->role, PAXOS_ROLE_ACCEPTOR);
	ck_assert_uint_eq(r->sender_id, ACCEPTOR_ID);
	ck_assert_uint_eq(r->acceptor_id, 1);
	ck_assert_uint_eq(r->incarnation, 90);
	ck_assert_uint_eq(r->highest_iid, 6);
	ck_assert_uint_eq(r->highest_ballot, 401);
}
END_TEST

/*
 * Two acceptors with one id: the one that started later stops, once a hello that echoes its
 * own incarnation shows the other runs now. Ages count ticks, not wall clocks, so an
 * incarnation number says nothing about which is older; a hello that does not echo ours (a
 * late one of a crashed predecessor, or a replay) never stops anyone, however often.
 */
START_TEST(duplicate_acceptor_newer_stops)
{
	join(false, 50);
	ck_assert_int_eq(hello(ACCEPTOR_ID, 50, false), PAXOS_OK); /* our own, looped back */
	ck_assert_uint_eq(counters.duplicate_acceptors, 0);
	for (int t = 0; t < 5; t++)
		ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	recorder_clear(out);
	/* A replayed or late hello of an earlier life: counted, echoed at once, harmless. */
	for (int k = 0; k < 4; k++) {
		ck_assert_int_eq(hello_from(ACCEPTOR_ID, 40, false, 1000, 0), PAXOS_OK);
		ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	}
	ck_assert_uint_eq(paxos_acceptor_duplicate(acc), 40);
	ck_assert_uint_eq(counters.duplicate_acceptors, 4);
	const struct paxos_message *h = recorder_find(out, PAXOS_MSG_ACCEPTOR_HELLO, 0);
	ck_assert_uint_eq(h->u.acceptor_hello.echo, 40);
	ck_assert_uint_eq(h->u.acceptor_hello.incarnation, 50);
	/* A younger one that heard us (a higher or lower incarnation: no matter): it stops, we
	 * go on and know it. */
	ck_assert_int_eq(hello_from(ACCEPTOR_ID, 7, false, 2, 50), PAXOS_OK);
	ck_assert(paxos_acceptor_duplicate_newer(acc));
	ck_assert_int_eq(hello_from(ACCEPTOR_ID, 90, false, 1, 50), PAXOS_OK);
	/* An older one that heard us: we are the newer, we stop. */
	ck_assert_int_eq(hello_from(ACCEPTOR_ID, 40, false, 1000, 50), PAXOS_E_DUPLICATE);
}
END_TEST

/*
 * Without authentication (duplicate_ticks 3) a hello of an older duplicate stops this acceptor
 * only once heard on 3 ticks within 6: one forged datagram, or a burst of them within one tick,
 * does not; hellos further apart than that do not add up.
 */
START_TEST(unauthenticated_duplicate_needs_several_ticks)
{
	struct paxos_acceptor_membership m = {
	    .acceptors = 5, .proposers = 2, .incarnation = 50, .duplicate_ticks = 3};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
	for (int k = 0; k < 5; k++)
		ck_assert_int_eq(hello_from(ACCEPTOR_ID, 40, false, 1000, 50), PAXOS_OK);
	ck_assert_uint_eq(paxos_acceptor_duplicate_older_heard(acc), 1);
	/* One a tick, but 6 ticks apart: never 3 within 6 ticks. */
	for (int k = 0; k < 4; k++) {
		for (int t = 0; t < 6; t++)
			ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
		ck_assert_int_eq(hello_from(ACCEPTOR_ID, 40, false, 1000, 50), PAXOS_OK);
	}
	/* On 3 ticks in a row: as a duplicate that runs says hello. */
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_int_eq(hello_from(ACCEPTOR_ID, 40, false, 1000, 50), PAXOS_OK);
	ck_assert_uint_eq(paxos_acceptor_duplicate_older_heard(acc), 2);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_int_eq(hello_from(ACCEPTOR_ID, 40, false, 1000, 50), PAXOS_E_DUPLICATE);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("acceptor_recovery");
	TCase *tc = tcase_create("recovery");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, amnesiac_votes_only_after_recovery_above_floor_and_fence);
	tcase_add_test(tc, withheld_prepares_answered_when_recovery_ends);
	tcase_add_test(tc, recovering_acceptor_greets_a_late_peer);
	tcase_add_test(tc, recovering_acceptor_answers_with_final_values);
	tcase_add_test(tc, hello_of_recovering_acceptor_is_answered);
	tcase_add_test(tc, duplicate_acceptor_newer_stops);
	tcase_add_test(tc, unauthenticated_duplicate_needs_several_ticks);
	tcase_add_test(tc, recovering_acceptors_do_not_vouch_for_each_other);
	tcase_add_test(tc, restored_once_decisions_reach_the_floor);
	suite_add_tcase(s, tc);
	return s;
}
