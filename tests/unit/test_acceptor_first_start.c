/* SPDX-License-Identifier: BSD-3-Clause */
/* An acceptor starting without its state (acceptor/recovery.c): a cluster's first start, which
 * needs no answer from another acceptor; a store that served a log before, and a whole cluster
 * restarted without its state, which begin a new log (a generation) and agree on one. */
#include "check_main.h"
#include <paxos/acceptor.h>
#include <paxos/learner.h>
#include <paxos/storage_backends.h>

#include <stdlib.h>
#include <string.h>

#include "acceptor_fixture.h"

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

Suite *test_suite(void)
{
	Suite *s = suite_create("acceptor_first_start");
	TCase *tc = tcase_create("first_start");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, first_start_needs_no_acceptor_answer);
	tcase_add_test(tc, first_start_waits_for_an_absent_proposer_and_every_acceptor);
	tcase_add_test(tc, restarted_proposers_are_no_first_start);
	tcase_add_test(tc, acceptor_that_accepted_is_no_first_start);
	tcase_add_test(tc, proposer_that_accepted_is_no_first_start);
	tcase_add_test(tc, first_start_peers_recovered_meanwhile);
	tcase_add_test(tc, first_start_of_a_store_that_served_begins_a_new_log);
	tcase_add_test(tc, first_start_of_a_store_that_served_joins_an_answer);
	tcase_add_test(tc, whole_cluster_restarted_begins_a_new_log);
	tcase_add_test(tc, new_log_needs_every_acceptor_recovering);
	tcase_add_test(tc, new_log_waits_for_a_proposer_that_ran_before);
	tcase_add_test(tc, new_log_waits_while_older_nodes_are_live);
	tcase_add_test(tc, founder_joins_the_new_log_at_once);
	tcase_add_test(tc, whole_restart_agrees_on_one_generation);
	suite_add_tcase(s, tc);
	return s;
}
