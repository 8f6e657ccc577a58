/* SPDX-License-Identifier: BSD-3-Clause */
/* The acceptor's recovery from lost state and its duplicate check (acceptor/recovery.c, through
 * paxos_acceptor_join and the acceptor's messages and ticks). */
#include "check_main.h"
#include <paxos/acceptor.h>
#include <paxos/learner.h>
#include <paxos/storage_backends.h>

#include <stdlib.h>
#include <string.h>

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
	m.u.recover_info = (struct paxos_recover_info){role, sender, ACCEPTOR_ID, incarnation,
						       iid,  ballot, 0,           false};
	return paxos_acceptor_handle(acc, &m, &out->emitter);
}

static int hello_from(uint32_t id, uint64_t incarnation, bool recovering, uint64_t age,
		      uint64_t echo)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_HELLO};
	m.u.acceptor_hello =
	    (struct paxos_acceptor_hello){id, incarnation, recovering, age, echo, 0};
	return paxos_acceptor_handle(acc, &m, &out->emitter);
}

static int hello(uint32_t id, uint64_t incarnation, bool recovering)
{
	return hello_from(id, incarnation, recovering, 0, 0);
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

/* A first start: every proposer answers from its first life (epoch 1 or below) without having
 * sent an accept, so nothing was ever accepted anywhere: no acceptor answer is needed. */
START_TEST(first_start_needs_no_acceptor_answer)
{
	struct paxos_acceptor_membership m = {
	    .acceptors = 5, .proposers = 2, .incarnation = 77, .amnesiac = true};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
	paxos_ballot epoch1 = ((1ull << 32) | 1u) * 100u;
	info(PAXOS_ROLE_PROPOSER, 0, 77, 0, epoch1 + 200); /* it prepared, sent no accept */
	ck_assert(paxos_acceptor_recovering(acc));
	info(PAXOS_ROLE_PROPOSER, 1, 77, 0, epoch1 - 1);
	ck_assert(!paxos_acceptor_recovering(acc));
	ck_assert_uint_eq(paxos_acceptor_floor(acc), 0);
	ck_assert_uint_eq(paxos_acceptor_fence(acc), epoch1 + 200);
}
END_TEST

/* A first start with a proposer that is not running: waited for recovery_ticks, and then only
 * once every other acceptor was heard recovering or holding nothing. */
START_TEST(first_start_waits_for_an_absent_proposer_and_every_acceptor)
{
	struct paxos_acceptor_membership m = {.acceptors = 5,
					      .proposers = 2,
					      .incarnation = 77,
					      .amnesiac = true,
					      .recovery_ticks = 2};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
	paxos_ballot epoch1 = ((1ull << 32) | 1u) * 100u;
	info(PAXOS_ROLE_PROPOSER, 0, 77, 0, epoch1);
	for (uint32_t id = 0; id < 3; id++)
		ck_assert_int_eq(hello(id, 10 + id, true), PAXOS_OK);
	for (int t = 0; t < 3; t++)
		ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert(paxos_acceptor_recovering(acc)); /* acceptor 4 was never heard */
	info(PAXOS_ROLE_ACCEPTOR, 4, 77, 0, 0);    /* it holds its state, and nothing */
	ck_assert(!paxos_acceptor_recovering(acc));
	ck_assert_uint_eq(paxos_acceptor_floor(acc), 0);
}
END_TEST

/* Every acceptor restarted without its state, and the proposers too: those say they ran
 * before (ballot 0) until they may answer. That is no first start, though every acceptor
 * recovers and the proposers' wait ran out: votes stay withheld. */
START_TEST(restarted_proposers_are_no_first_start)
{
	struct paxos_acceptor_membership m = {.acceptors = 5,
					      .proposers = 2,
					      .incarnation = 77,
					      .amnesiac = true,
					      .recovery_ticks = 2};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
	info(PAXOS_ROLE_PROPOSER, 0, 77, 0, 0);
	for (uint32_t id = 0; id < 5; id++)
		if (id != ACCEPTOR_ID)
			ck_assert_int_eq(hello(id, 10 + id, true), PAXOS_OK);
	for (int t = 0; t < 4; t++)
		ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert(paxos_acceptor_recovering(acc));
	struct paxos_acceptor_recovery_wait w;
	paxos_acceptor_recovery_wait(acc, &w);
	ck_assert_uint_eq(w.proposers_silent, 2); /* "ran before" is no answer */
}
END_TEST

/* One acceptor that holds its state and accepted something: no first start, whatever the
 * proposers say. */
START_TEST(acceptor_that_accepted_is_no_first_start)
{
	struct paxos_acceptor_membership m = {
	    .acceptors = 5, .proposers = 2, .incarnation = 77, .amnesiac = true};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
	paxos_ballot epoch1 = ((1ull << 32) | 1u) * 100u;
	info(PAXOS_ROLE_ACCEPTOR, 4, 77, 194, epoch1);
	info(PAXOS_ROLE_PROPOSER, 0, 77, 0, epoch1);
	info(PAXOS_ROLE_PROPOSER, 1, 77, 0, epoch1 - 1);
	ck_assert(paxos_acceptor_recovering(acc));
}
END_TEST

/* Not a first start: one proposer sent an accept (or is in a later epoch). */
START_TEST(proposer_that_accepted_is_no_first_start)
{
	struct paxos_acceptor_membership m = {
	    .acceptors = 5, .proposers = 2, .incarnation = 77, .amnesiac = true};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
	paxos_ballot epoch1 = ((1ull << 32) | 1u) * 100u;
	info(PAXOS_ROLE_PROPOSER, 0, 77, 12, epoch1);
	info(PAXOS_ROLE_PROPOSER, 1, 77, 0, epoch1 - 1);
	ck_assert(paxos_acceptor_recovering(acc));
	info(PAXOS_ROLE_ACCEPTOR, 0, 77, 12, epoch1);
	info(PAXOS_ROLE_ACCEPTOR, 1, 77, 10, epoch1);
	ck_assert(paxos_acceptor_recovering(acc));
	info(PAXOS_ROLE_ACCEPTOR, 2, 77, 11, epoch1);
	ck_assert(!paxos_acceptor_recovering(acc));
	ck_assert_uint_eq(paxos_acceptor_floor(acc), 12);
}
END_TEST

/* hello_from with a generation: a recovering acceptor's hello carries the highest it voted in. */
static int hello_gen(uint32_t id, uint64_t incarnation, bool recovering, uint64_t generation)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_HELLO};
	m.u.acceptor_hello = (struct paxos_acceptor_hello){.acceptor_id = id,
							   .incarnation = incarnation,
							   .recovering = recovering,
							   .generation = generation};
	return paxos_acceptor_handle(acc, &m, &out->emitter);
}

/* A peer's answer with the log it serves and whether we founded it. */
static int answer_gen(uint32_t sender, uint64_t generation, bool founder)
{
	struct paxos_message m = {.type = PAXOS_MSG_RECOVER_INFO};
	m.u.recover_info = (struct paxos_recover_info){.role = PAXOS_ROLE_ACCEPTOR,
						       .sender_id = sender,
						       .acceptor_id = ACCEPTOR_ID,
						       .incarnation = 77,
						       .highest_iid = 0,
						       .highest_ballot = 0,
						       .generation = generation,
						       .founder = founder};
	return paxos_acceptor_handle(acc, &m, &out->emitter);
}

static void join_kept(uint64_t generation)
{
	struct paxos_acceptor_membership m = {.acceptors = 5,
					      .proposers = 2,
					      .incarnation = 77,
					      .amnesiac = true,
					      .recovery_ticks = 2,
					      .generation = generation};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
}

/*
 * A first start where this acceptor came up last: the others recovered (a first start) and
 * the proposers' accepts went to them, but the hellos heard from them are from before, when
 * they recovered too, and their answers have not come. That is no lost log: the acceptor waits
 * for their hellos to say again that they recover, hears their answers instead, and joins
 * their log (generation 0) rather than beginning one of its own.
 */
START_TEST(first_start_peers_recovered_meanwhile)
{
	join_kept(0);
	for (uint32_t id = 0; id < 5; id++)
		if (id != ACCEPTOR_ID)
			ck_assert_int_eq(hello_gen(id, 10 + id, true, 0), PAXOS_OK);
	paxos_ballot epoch1 = ((1ull << 32) | 1u) * 100u;
	info(PAXOS_ROLE_PROPOSER, 0, 77, 5, epoch1);
	info(PAXOS_ROLE_PROPOSER, 1, 77, 5, epoch1 + 1);
	ck_assert(paxos_acceptor_recovering(acc));
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert(paxos_acceptor_recovering(acc));
	for (uint32_t id = 0, answered = 0; id < 5 && answered < 3; id++)
		if (id != ACCEPTOR_ID) {
			ck_assert_int_eq(answer_gen(id, 0, false), PAXOS_OK);
			answered++;
		}
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert(!paxos_acceptor_recovering(acc));
	ck_assert_int_ne(paxos_acceptor_began_log(acc), PAXOS_ACCEPTOR_LOG_LOST);
	ck_assert_uint_eq(paxos_acceptor_generation(acc), 0);
	ck_assert_uint_eq(counters.new_logs_begun, 0);
}
END_TEST

/*
 * The proposers start their first epoch (their epoch files removed by hand), but this
 * acceptor's store served the log of generation 3 before: that log is lost, not never begun.
 * A first start would keep generation 3 and name the new log like the old one, so the acceptor
 * waits until every other acceptor is heard recovering, then begins generation 4 (one above
 * the highest kept, 3 here) with floor 0.
 */
START_TEST(first_start_of_a_store_that_served_begins_a_new_log)
{
	struct paxos_acceptor_membership m = {.acceptors = 5,
					      .proposers = 2,
					      .incarnation = 77,
					      .amnesiac = true,
					      .recovery_ticks = 2,
					      .generation = 3,
					      .served_before = true};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
	paxos_ballot epoch1 = ((1ull << 32) | 1u) * 100u;
	info(PAXOS_ROLE_PROPOSER, 0, 77, 0, epoch1);
	info(PAXOS_ROLE_PROPOSER, 1, 77, 0, epoch1 + 1);
	ck_assert(paxos_acceptor_recovering(acc)); /* no other acceptor heard yet */
	for (uint32_t id = 0; id < 5; id++)
		if (id != ACCEPTOR_ID && id != 4)
			ck_assert_int_eq(hello_gen(id, 10 + id, true, 3), PAXOS_OK);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert(paxos_acceptor_recovering(acc)); /* acceptor 4 not yet */
	ck_assert_int_eq(hello_gen(4, 14, true, 2), PAXOS_OK);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert(!paxos_acceptor_recovering(acc));
	ck_assert_int_eq(paxos_acceptor_began_log(acc), PAXOS_ACCEPTOR_LOG_LOST);
	ck_assert_uint_eq(paxos_acceptor_generation(acc), 4);
	ck_assert_uint_eq(paxos_acceptor_floor(acc), 0);
	ck_assert_uint_eq(counters.new_logs_begun, 1);
}
END_TEST

/* The same start where another acceptor answers (it began the new log already, or never
 * lost its state): that is the log to join, as at any first start. */
START_TEST(first_start_of_a_store_that_served_joins_an_answer)
{
	struct paxos_acceptor_membership m = {.acceptors = 5,
					      .proposers = 2,
					      .incarnation = 77,
					      .amnesiac = true,
					      .generation = 3,
					      .served_before = true};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
	paxos_ballot epoch1 = ((1ull << 32) | 1u) * 100u;
	ck_assert_int_eq(answer_gen(0, 4, true), PAXOS_OK);
	info(PAXOS_ROLE_PROPOSER, 0, 77, 0, epoch1);
	info(PAXOS_ROLE_PROPOSER, 1, 77, 0, epoch1 + 1);
	ck_assert(!paxos_acceptor_recovering(acc));
	ck_assert_int_ne(paxos_acceptor_began_log(acc), PAXOS_ACCEPTOR_LOG_LOST);
	ck_assert_uint_eq(paxos_acceptor_generation(acc), 4);
	ck_assert_uint_eq(counters.new_logs_begun, 0);
}
END_TEST

/*
 * A whole memory cluster restarted: every acceptor recovers (their hellos say so, with the
 * generation each voted in last), none answers, and both proposers ran before and answered.
 * The log is lost: a new one begins, one above the highest generation kept, with floor 0 and
 * the proposers' ballots as fence; what this acceptor sends to learners carries it.
 */
START_TEST(whole_cluster_restarted_begins_a_new_log)
{
	join_kept(4);
	paxos_ballot epoch3 = ((3ull << 32) | 0u) * 100u;
	for (uint32_t id = 0; id < 5; id++)
		if (id != ACCEPTOR_ID)
			ck_assert_int_eq(hello_gen(id, 10 + id, true, id == 1 ? 6 : 4), PAXOS_OK);
	info(PAXOS_ROLE_PROPOSER, 0, 77, 0, 0); /* ran before: its answer comes later */
	ck_assert(paxos_acceptor_recovering(acc));
	info(PAXOS_ROLE_PROPOSER, 0, 77, 0, epoch3 - 1);
	ck_assert(paxos_acceptor_recovering(acc)); /* proposer 1 has not answered */
	info(PAXOS_ROLE_PROPOSER, 1, 77, 2000, epoch3 + 1 - 1);
	/* Its accepts went somewhere: the peers' hellos from before may be stale, and the next
	 * ones (each tick) say again that they recover. */
	ck_assert(paxos_acceptor_recovering(acc));
	for (uint32_t id = 0; id < 5; id++)
		if (id != ACCEPTOR_ID)
			ck_assert_int_eq(hello_gen(id, 10 + id, true, id == 1 ? 6 : 4), PAXOS_OK);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert(!paxos_acceptor_recovering(acc));
	ck_assert_int_eq(paxos_acceptor_began_log(acc), PAXOS_ACCEPTOR_LOG_LOST);
	ck_assert_uint_eq(paxos_acceptor_generation(acc), 7);
	ck_assert_uint_eq(paxos_acceptor_floor(acc), 0); /* the old log's instances are gone */
	ck_assert_uint_eq(paxos_acceptor_fence(acc), epoch3);
	ck_assert_uint_eq(counters.new_logs_begun, 1);
	/* Instance 1 of the new log: promised above the fence, accepted with the generation. */
	recorder_clear(out);
	ck_assert_int_eq(prepare(1, epoch3 + 100), PAXOS_OK);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS), 1);
	ck_assert_int_eq(accept_text(1, epoch3 + 100, "new"), PAXOS_OK);
	ck_assert_uint_eq(recorder_find(out, PAXOS_MSG_ACCEPTED, 0)->u.accepted.generation, 7);
	recorder_clear(out);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	const struct paxos_acceptor_state *state =
	    &recorder_find(out, PAXOS_MSG_ACCEPTOR_STATE, 0)->u.acceptor_state;
	ck_assert_uint_eq(state->generation, 7);
	ck_assert(!state->recovering);
	ck_assert_uint_eq(
	    recorder_find(out, PAXOS_MSG_ACCEPTOR_HELLO, 0)->u.acceptor_hello.generation, 7);
	/* A peer still recovering that was heard recovering then founded the log with us. */
	recorder_clear(out);
	ck_assert_int_eq(hello_gen(1, 11, true, 6), PAXOS_OK);
	const struct paxos_recover_info *r =
	    &only(PAXOS_MSG_RECOVER_INFO, PAXOS_GROUP_ACCEPTORS)->u.recover_info;
	ck_assert_uint_eq(r->generation, 7);
	ck_assert(r->founder);
	/* Another life of it (another incarnation) did not: it recovers as any acceptor. */
	recorder_clear(out);
	ck_assert_int_eq(hello_gen(1, 99, true, 6), PAXOS_OK);
	ck_assert(!only(PAXOS_MSG_RECOVER_INFO, PAXOS_GROUP_ACCEPTORS)->u.recover_info.founder);
}
END_TEST

/* Not while one acceptor is not heard recovering (it may hold the log), nor while a proposer
 * that said it ran before has not answered (what it sent may still arrive): votes stay
 * withheld, and the acceptor state says so. */
START_TEST(new_log_needs_every_acceptor_recovering)
{
	join_kept(1);
	paxos_ballot epoch2 = ((2ull << 32) | 0u) * 100u;
	for (uint32_t id = 0; id < 4; id++) /* acceptor 4 is not heard */
		if (id != ACCEPTOR_ID)
			ck_assert_int_eq(hello_gen(id, 10 + id, true, 1), PAXOS_OK);
	info(PAXOS_ROLE_PROPOSER, 0, 77, 0, epoch2 - 1);
	info(PAXOS_ROLE_PROPOSER, 1, 77, 0, epoch2);
	for (int t = 0; t < 4; t++)
		ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert(paxos_acceptor_recovering(acc));
	ck_assert(recorder_find(out, PAXOS_MSG_ACCEPTOR_STATE, 0)->u.acceptor_state.recovering);
	ck_assert_uint_eq(
	    recorder_find(out, PAXOS_MSG_ACCEPTOR_STATE, 0)->u.acceptor_state.generation, 1);
	/* Acceptor 4 holds its state: it answers, the log is not lost. */
	ck_assert_int_eq(hello_gen(4, 14, false, 1), PAXOS_OK);
	info(PAXOS_ROLE_ACCEPTOR, 4, 77, 0, 0);
	ck_assert(paxos_acceptor_recovering(acc)); /* 1 of the 3 answers it needs */
	ck_assert_uint_eq(counters.new_logs_begun, 0);
}
END_TEST

START_TEST(new_log_waits_for_a_proposer_that_ran_before)
{
	join_kept(1);
	for (uint32_t id = 0; id < 5; id++)
		if (id != ACCEPTOR_ID)
			ck_assert_int_eq(hello_gen(id, 10 + id, true, 1), PAXOS_OK);
	paxos_ballot epoch2 = ((2ull << 32) | 0u) * 100u;
	info(PAXOS_ROLE_PROPOSER, 0, 77, 0, epoch2 - 1);
	info(PAXOS_ROLE_PROPOSER, 1, 77, 0, 0); /* ran before, answers after its grace */
	for (int t = 0; t < 4; t++)             /* past recovery_ticks */
		ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert(paxos_acceptor_recovering(acc));
	info(PAXOS_ROLE_PROPOSER, 1, 77, 0, epoch2 + 1 - 1);
	ck_assert(!paxos_acceptor_recovering(acc));
	ck_assert_uint_eq(paxos_acceptor_generation(acc), 2);
}
END_TEST

/* Nodes of the release before are live (their messages carry no generation): the whole
 * restarted cluster waits, and begins the new log once they are gone. */
START_TEST(new_log_waits_while_older_nodes_are_live)
{
	join_kept(1);
	paxos_acceptor_set_old_peers(acc, true);
	for (uint32_t id = 0; id < 5; id++)
		if (id != ACCEPTOR_ID)
			ck_assert_int_eq(hello_gen(id, 10 + id, true, 1), PAXOS_OK);
	paxos_ballot epoch2 = ((2ull << 32) | 0u) * 100u;
	info(PAXOS_ROLE_PROPOSER, 0, 77, 0, epoch2 - 1);
	info(PAXOS_ROLE_PROPOSER, 1, 77, 0, epoch2);
	for (int t = 0; t < 4; t++)
		ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert(paxos_acceptor_recovering(acc));
	ck_assert_uint_eq(counters.new_logs_begun, 0);
	paxos_acceptor_set_old_peers(acc, false);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert(!paxos_acceptor_recovering(acc));
	ck_assert_int_eq(paxos_acceptor_began_log(acc), PAXOS_ACCEPTOR_LOG_LOST);
	ck_assert_uint_eq(paxos_acceptor_generation(acc), 2);
}
END_TEST

/*
 * An acceptor that comes to the new log after the others began it: they answer that this
 * incarnation was recovering when they began it, so it never voted in it, and it joins at once
 * (no quorum of answers: the others that recover too never answer). One not named a founder
 * recovers as before; and a log no higher than one it voted in is never joined that way.
 */
START_TEST(founder_joins_the_new_log_at_once)
{
	join_kept(3);
	ck_assert_int_eq(answer_gen(0, 4, true), PAXOS_OK);
	ck_assert(!paxos_acceptor_recovering(acc));
	ck_assert_uint_eq(paxos_acceptor_generation(acc), 4);
	ck_assert_uint_eq(paxos_acceptor_floor(acc), 0);
	ck_assert_int_eq(paxos_acceptor_began_log(acc), PAXOS_ACCEPTOR_LOG_JOINED);
	ck_assert_uint_eq(counters.new_logs_begun, 0);

	paxos_acceptor_free(acc);
	acc =
	    paxos_acceptor_new(&(struct paxos_acceptor_options){.id = ACCEPTOR_ID}, st, &counters);
	join_kept(4);
	ck_assert_int_eq(answer_gen(0, 4, true), PAXOS_OK); /* it may have voted in 4 */
	ck_assert_int_eq(answer_gen(1, 4, false), PAXOS_OK);
	ck_assert(paxos_acceptor_recovering(acc));
	ck_assert_int_eq(answer_gen(2, 4, false), PAXOS_OK);
	info(PAXOS_ROLE_PROPOSER, 0, 77, 0, 100);
	info(PAXOS_ROLE_PROPOSER, 1, 77, 0, 101);
	ck_assert(!paxos_acceptor_recovering(acc)); /* three answers: recovered as before */
	ck_assert_uint_eq(paxos_acceptor_generation(acc), 4);
}
END_TEST

/* ---- a whole cluster restarted: three acceptor cores and a learner ---- */

#define TRIO 3u

struct trio {
	struct paxos_storage *st[TRIO];
	struct paxos_acceptor *a[TRIO];
	struct recorder *out[TRIO];
	struct paxos_counters c[TRIO], lc;
	struct paxos_learner *learner;
	paxos_ballot proposer_below; /* the restarted proposer's answer: below its first ballot */
	uint32_t answered;           /* acceptors the proposer answers, one bit each */
};

/* Routes what the acceptors emitted until none emits more: hellos and recovery answers to the
 * other acceptors, recovery questions to the proposer (which answers those in answered),
 * states and accepteds to the learner. */
static void trio_route(struct trio *t)
{
	static struct paxos_message queue[4 * RECORDER_MAX];
	for (int pass = 0; pass < 20; pass++) {
		bool any = false;
		for (uint32_t i = 0; i < TRIO; i++) {
			size_t n = t->out[i]->count;
			memcpy(queue, t->out[i]->msg, n * sizeof(queue[0]));
			recorder_clear(t->out[i]);
			for (size_t k = 0; k < n; k++) {
				const struct paxos_message *m = &queue[k];
				any = true;
				if (m->type == PAXOS_MSG_ACCEPTOR_HELLO ||
				    m->type == PAXOS_MSG_RECOVER_INFO) {
					for (uint32_t j = 0; j < TRIO; j++)
						if (j != i)
							paxos_acceptor_handle(t->a[j], m,
									      &t->out[j]->emitter);
				} else if (m->type == PAXOS_MSG_RECOVER_ASK &&
					   (t->answered & (1u << i))) {
					struct paxos_message r = {.type = PAXOS_MSG_RECOVER_INFO};
					r.u.recover_info = (struct paxos_recover_info){
					    .role = PAXOS_ROLE_PROPOSER,
					    .sender_id = 0,
					    .acceptor_id = i,
					    .incarnation = m->u.recover_ask.incarnation,
					    .highest_ballot = t->proposer_below};
					paxos_acceptor_handle(t->a[i], &r, &t->out[i]->emitter);
				} else if (m->type == PAXOS_MSG_ACCEPTOR_STATE ||
					   m->type == PAXOS_MSG_ACCEPTED) {
					paxos_learner_handle(t->learner, m, 0, NULL);
				}
			}
		}
		if (!any)
			return;
	}
}

static void trio_tick(struct trio *t)
{
	for (uint32_t i = 0; i < TRIO; i++)
		ck_assert_int_eq(paxos_acceptor_tick(t->a[i], &t->out[i]->emitter), PAXOS_OK);
	trio_route(t);
}

/*
 * The three acceptors restart without their state, keeping the generations their files say (2,
 * 5, and none: acceptor 2's file was lost). The proposer (restarted) answers acceptors 0 and 1
 * first: they hear every acceptor recovering and begin the same new log, one above the highest
 * kept (6); acceptor 2, answered later, is told it founded that log and joins it. A learner
 * that delivered log 5 moves to log 6 once a quorum serves it, and starts again at instance 1.
 */
START_TEST(whole_restart_agrees_on_one_generation)
{
	static struct trio t;
	memset(&t, 0, sizeof(t));
	const uint64_t kept[TRIO] = {2, 5, 0};
	struct paxos_learner_options lo = {.acceptors = TRIO,
					   .window = 16,
					   .max_value = 64,
					   .repeat_batch = 4,
					   .hole_check = 1000};
	t.learner = paxos_learner_new(&lo, &t.lc);
	ck_assert_ptr_nonnull(t.learner);
	/* The learner delivered instance 1 of log 5 (the acceptors' states named the log). */
	for (uint32_t i = 0; i < 2; i++) {
		struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_STATE};
		m.u.acceptor_state =
		    (struct paxos_acceptor_state){.acceptor_id = i, .generation = 5};
		paxos_learner_handle(t.learner, &m, 0, NULL);
	}
	for (uint32_t i = 0; i < 2; i++) {
		struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
		m.u.accepted = (struct paxos_accepted){.iid = 1,
						       .ballot = 101,
						       .value = value_of("old"),
						       .acceptor_id = i,
						       .generation = 5};
		paxos_learner_handle(t.learner, &m, 0, NULL);
	}
	ck_assert_uint_eq(paxos_learner_generation(t.learner), 5);
	ck_assert_uint_eq(paxos_learner_next_iid(t.learner), 2);
	for (uint32_t i = 0; i < TRIO; i++) {
		t.st[i] = paxos_storage_memory_new();
		t.a[i] =
		    paxos_acceptor_new(&(struct paxos_acceptor_options){.id = i}, t.st[i], &t.c[i]);
		t.out[i] = recorder_new();
		struct paxos_acceptor_membership m = {.acceptors = TRIO,
						      .proposers = 1,
						      .incarnation = 100 + i,
						      .amnesiac = true,
						      .recovery_ticks = 20,
						      .generation = kept[i]};
		ck_assert_int_eq(paxos_acceptor_join(t.a[i], &m), PAXOS_OK);
	}
	t.proposer_below = ((3ull << 32) * PAXOS_MAX_PROPOSERS) - 1; /* epoch 3 */
	trio_tick(&t); /* hellos: each hears the others recovering */
	for (uint32_t i = 0; i < TRIO; i++)
		ck_assert(paxos_acceptor_recovering(t.a[i]));
	t.answered = 3; /* the proposer's answers reach acceptors 0 and 1 */
	trio_tick(&t);
	for (uint32_t i = 0; i < 2; i++) {
		ck_assert(!paxos_acceptor_recovering(t.a[i]));
		ck_assert_int_eq(paxos_acceptor_began_log(t.a[i]), PAXOS_ACCEPTOR_LOG_LOST);
		ck_assert_uint_eq(paxos_acceptor_generation(t.a[i]), 6);
	}
	/* Acceptor 2 was answered by the two that began the log: it founded it too. */
	trio_tick(&t);
	ck_assert(!paxos_acceptor_recovering(t.a[2]));
	ck_assert_int_eq(paxos_acceptor_began_log(t.a[2]), PAXOS_ACCEPTOR_LOG_JOINED);
	ck_assert_uint_eq(paxos_acceptor_generation(t.a[2]), 6);
	ck_assert_uint_eq(paxos_acceptor_floor(t.a[2]), 0);
	/* The states of log 6 moved the learner; the old log's instance 1 is not delivered
	 * again, the new log's is, once a quorum accepts it. */
	trio_tick(&t);
	ck_assert_uint_eq(paxos_learner_generation(t.learner), 6);
	ck_assert_uint_eq(t.lc.new_logs, 1);
	ck_assert_uint_eq(paxos_learner_next_iid(t.learner), 1);
	struct paxos_message a2 = {.type = PAXOS_MSG_ACCEPT};
	a2.u.accept = (struct paxos_accept){
	    .iid = 1, .ballot = t.proposer_below + 1 + 100, .value = value_of("new")};
	for (uint32_t i = 0; i < TRIO; i++)
		ck_assert_int_eq(paxos_acceptor_handle(t.a[i], &a2, &t.out[i]->emitter), PAXOS_OK);
	paxos_learner_handle(t.learner, &a2, 0, NULL); /* learners hear the leader's accepts */
	trio_route(&t);
	ck_assert_uint_eq(paxos_learner_next_iid(t.learner), 2);
	ck_assert_uint_eq(t.lc.instances_delivered, 2);
	for (uint32_t i = 0; i < TRIO; i++) {
		paxos_acceptor_free(t.a[i]);
		paxos_storage_destroy(t.st[i]);
		recorder_free(t.out[i]);
	}
	paxos_learner_free(t.learner);
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
	tcase_add_test(tc, first_start_needs_no_acceptor_answer);
	tcase_add_test(tc, proposer_that_accepted_is_no_first_start);
	tcase_add_test(tc, first_start_waits_for_an_absent_proposer_and_every_acceptor);
	tcase_add_test(tc, acceptor_that_accepted_is_no_first_start);
	tcase_add_test(tc, restarted_proposers_are_no_first_start);
	tcase_add_test(tc, restored_once_decisions_reach_the_floor);
	tcase_add_test(tc, whole_cluster_restarted_begins_a_new_log);
	tcase_add_test(tc, first_start_peers_recovered_meanwhile);
	tcase_add_test(tc, first_start_of_a_store_that_served_begins_a_new_log);
	tcase_add_test(tc, first_start_of_a_store_that_served_joins_an_answer);
	tcase_add_test(tc, new_log_needs_every_acceptor_recovering);
	tcase_add_test(tc, new_log_waits_for_a_proposer_that_ran_before);
	tcase_add_test(tc, new_log_waits_while_older_nodes_are_live);
	tcase_add_test(tc, founder_joins_the_new_log_at_once);
	tcase_add_test(tc, whole_restart_agrees_on_one_generation);
	suite_add_tcase(s, tc);
	return s;
}
