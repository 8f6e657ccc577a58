/* The acceptor's recovery from lost state and its duplicate check (acceptor/recovery.c, through
 * paxos_acceptor_join and the acceptor's messages and ticks). */
#include <check.h>
#include <paxos/acceptor.h>

#include <stdlib.h>

#include "acceptor_fixture.h"

/* ---- recovery from lost state and duplicates (paxos_acceptor_join) ---- */

static void join(bool amnesiac, uint64_t incarnation)
{
	struct paxos_acceptor_membership m = {.acceptors = 5,
					      .proposers = 2,
					      .incarnation = incarnation,
					      .amnesiac = amnesiac,
					      .recovery_ticks = 0};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
}

static int info(uint32_t role, uint32_t sender, uint64_t incarnation, paxos_iid iid,
		paxos_ballot ballot)
{
	struct paxos_message m = {.type = PAXOS_MSG_RECOVER_INFO};
	m.u.recover_info =
	    (struct paxos_recover_info){role, sender, ACCEPTOR_ID, incarnation, iid, ballot};
	return paxos_acceptor_handle(acc, &m, &out->emitter);
}

static int hello(uint32_t id, uint64_t incarnation, bool recovering)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_HELLO};
	m.u.acceptor_hello = (struct paxos_acceptor_hello){id, incarnation, recovering};
	return paxos_acceptor_handle(acc, &m, &out->emitter);
}

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
	only(PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS);
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
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_RECOVER_INFO, PAXOS_GROUP_ACCEPTORS), 1);
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

/* Two acceptors with one id: the newer stops once the older still speaks two ticks later;
 * the older only counts the newer. */
START_TEST(duplicate_acceptor_newer_stops)
{
	join(false, 50);
	ck_assert_int_eq(hello(ACCEPTOR_ID, 50, false), PAXOS_OK); /* our own, looped back */
	ck_assert_uint_eq(counters.duplicate_acceptors, 0);
	ck_assert_int_eq(hello(ACCEPTOR_ID, 60, false), PAXOS_OK); /* a newer one */
	ck_assert_uint_eq(paxos_acceptor_duplicate(acc), 60);
	ck_assert_int_eq(hello(ACCEPTOR_ID, 40, false), PAXOS_OK); /* an older one */
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_int_eq(hello(ACCEPTOR_ID, 40, false), PAXOS_OK); /* maybe a late datagram */
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_int_eq(hello(ACCEPTOR_ID, 40, false), PAXOS_E_DUPLICATE); /* it lives */
	ck_assert_uint_eq(paxos_acceptor_duplicate(acc), 40);
	ck_assert_uint_eq(counters.duplicate_acceptors, 4);
}
END_TEST

int main(void)
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
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
