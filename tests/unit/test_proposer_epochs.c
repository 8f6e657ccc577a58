/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proposer's incarnations and logs: epochs and the ballots they give, the answer to a
 * recovering acceptor, a new log, and epochs raised by a reject from a later incarnation
 * (proposer_fixture.h).
 */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "config_fields.h"
#include "proposer_fixture.h"
#include "support.h"

/* Epoch e's first ballot is (e * 2^32 + 1) * n + id; a restarted proposer gets e + 1. */
START_TEST(test_epoch_sets_first_ballot)
{
	struct sim *s = sim_new(2, 1, 4);
	paxos_proposer_free(s->p);
	struct paxos_proposer_options o = sim_options(2, 1, 4);
	o.epoch = 5;
	s->p = paxos_proposer_new(&o, &s->counters);
	ck_assert_uint_eq(paxos_proposer_epoch(s->p), 5);
	lead(s);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	run(s);
	paxos_ballot first = ((5ull << 32) + 1) * PAXOS_MAX_PROPOSERS + 2;
	ck_assert_uint_eq(s->prepares[1][0], first);
	ck_assert_uint_eq(s->prepares[2][0], first);
	ck_assert_uint_eq(s->acc[0][1].accepted, first);
	ck_assert_str_eq(s->delivered[0], "a");
	/* Leading again later never goes back to a ballot used before. */
	paxos_proposer_set_leader(s->p, false, 0, s->now, &s->out);
	paxos_proposer_set_leader(s->p, true, 2, s->now, &s->out);
	ck_assert_uint_eq(s->nprepares[2], 2);
	ck_assert_uint_eq(s->prepares[2][1], first + PAXOS_MAX_PROPOSERS);
	sim_free(s);
}
END_TEST

/* A recovering acceptor asks: the answer from a recorder, or NULL when there is none. */
static struct paxos_recover_info *ask_recovery(struct paxos_proposer *p, paxos_time now,
					       struct recorder *r, struct paxos_recover_info *info)
{
	struct paxos_message m = {.type = PAXOS_MSG_RECOVER_ASK};
	m.u.recover_ask.acceptor_id = 1;
	m.u.recover_ask.incarnation = 42;
	recorder_clear(r);
	paxos_proposer_handle(p, &m, now, &r->emitter);
	const struct paxos_message *a = recorder_find(r, PAXOS_MSG_RECOVER_INFO, 0);
	if (!a)
		return NULL;
	*info = a->u.recover_info;
	return info;
}

/* A restarted proposer (epoch above 1) answers a recovering acceptor only once it has run for
 * recovery_grace: what its earlier life sent may still be on its way, and its answer covers
 * only this life; until then it says that it ran before. In its first life it answers at
 * once. */
START_TEST(test_restarted_proposer_answers_recovery_after_grace)
{
	struct recorder *r = recorder_new();
	struct paxos_recover_info info;
	struct paxos_proposer_options o = sim_options(2, 1, 4);
	o.recovery_grace = 2000000;
	o.epoch = 1;
	struct paxos_proposer *first = paxos_proposer_new(&o, NULL);
	ck_assert_ptr_nonnull(ask_recovery(first, 1000, r, &info));
	ck_assert_uint_eq(info.highest_iid, 0);
	ck_assert_uint_eq(info.incarnation, 42);
	paxos_proposer_free(first);

	o.epoch = 3;
	struct paxos_proposer *again = paxos_proposer_new(&o, NULL);
	paxos_proposer_tick(again, 5000000, &r->emitter); /* its life starts here */
	/* Meanwhile it says only that it ran before: ballot 0, which no answer has. */
	ck_assert_ptr_nonnull(ask_recovery(again, 5000000, r, &info));
	ck_assert_uint_eq(info.highest_ballot, 0);
	ck_assert_uint_eq(info.highest_iid, 0);
	ck_assert_ptr_nonnull(ask_recovery(again, 6999999, r, &info));
	ck_assert_uint_eq(info.highest_ballot, 0);
	ck_assert_ptr_nonnull(ask_recovery(again, 7000000, r, &info));
	/* Below its first ballot: every ballot of its earlier lives. */
	ck_assert_uint_eq(info.highest_ballot, ((3ull << 32) + 1) * PAXOS_MAX_PROPOSERS + 2 - 1);
	paxos_proposer_free(again);
	recorder_free(r);
}
END_TEST

/* The acceptors began a new log: the leader's window starts over at its instance 1 (phase 1
 * for the whole window again), and a recovering acceptor of the new log is told of no accept
 * of the old one. */
START_TEST(test_new_log_starts_the_window_over)
{
	struct paxos_counters c = {0};
	struct paxos_proposer_options o = {.id = 2,
					   .acceptors = 3,
					   .window = 5,
					   .concurrency = 2,
					   .pending_size = 8,
					   .max_value = 16,
					   .phase1_timeout = 100,
					   .phase2_timeout = 100};
	struct paxos_proposer *p = paxos_proposer_new(&o, &c);
	struct recorder *r = recorder_new();
	paxos_proposer_set_leader(p, true, 1, 0, &r->emitter);
	for (paxos_iid iid = 1; iid <= 3; iid++)
		paxos_proposer_delivered(p, iid, NULL, 0, &r->emitter);
	recorder_clear(r);
	paxos_proposer_new_log(p, 0, &r->emitter);
	ck_assert(paxos_proposer_is_leader(p));
	ck_assert_uint_eq(recorder_count(r, PAXOS_MSG_PREPARE, PAXOS_GROUP_ACCEPTORS), 5);
	for (size_t i = 0; i < 5; i++)
		ck_assert_uint_eq(recorder_find(r, PAXOS_MSG_PREPARE, i)->u.prepare.iid, i + 1);
	struct paxos_recover_info info;
	ck_assert_ptr_nonnull(ask_recovery(p, 0, r, &info));
	ck_assert_uint_eq(info.highest_iid, 0);
	/* A follower starts over too, and sends nothing. */
	paxos_proposer_set_leader(p, false, 0, 0, &r->emitter);
	paxos_proposer_delivered(p, 1, NULL, 0, &r->emitter);
	recorder_clear(r);
	paxos_proposer_new_log(p, 0, &r->emitter);
	ck_assert_uint_eq(r->count, 0);
	paxos_proposer_set_leader(p, true, 1, 0, &r->emitter);
	ck_assert_uint_eq(recorder_find(r, PAXOS_MSG_PREPARE, 0)->u.prepare.iid, 1);
	recorder_free(r);
	paxos_proposer_free(p);
}
END_TEST

/*
 * A leader started at instance 4 (a learner started from a snapshot) had "a" and "b" chosen
 * at 4 and 5 before it heard that the acceptors began a new log: the new log holds them above
 * instances 1..3 that nobody proposed. After the new log it fills those with skips before
 * anything else, so that its learners are not held there until client values come; "a" and
 * "b" are delivered once, where the new log has them, and a new value goes after them.
 */
START_TEST(test_new_log_fills_the_holes_below_our_instances)
{
	struct sim *s = sim_new(8, 4, 8);
	paxos_proposer_set_leader(s->p, true, 4, s->now, &s->out);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "b"), PAXOS_OK);
	run(s);
	ck_assert(s->learn[4].closed);
	ck_assert(s->learn[5].closed);
	ck_assert_uint_eq(s->ninstances, 0); /* the learner waits at 1 */
	paxos_proposer_new_log(s->p, s->now, &s->out);
	run(s);
	ck_assert_uint_eq(s->nskips, 3);
	ck_assert_uint_eq(s->ndelivered, 2);
	ck_assert_str_eq(s->delivered[0], "a");
	ck_assert_uint_eq(s->delivered_iid[0], 4);
	ck_assert_str_eq(s->delivered[1], "b");
	ck_assert_uint_eq(s->delivered_iid[1], 5);
	ck_assert_int_eq(submit(s, "c"), PAXOS_OK);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 3);
	ck_assert_str_eq(s->delivered[2], "c");
	ck_assert_uint_eq(s->delivered_iid[2], 6);
	sim_free(s);
}
END_TEST

/* A reject from a later incarnation's ballot: INCREMENTSKIP lands in that epoch's range, so
 * the proposer takes that epoch and returns it in its ready (a storage write its sender makes
 * before the ballot leaves) before it emits the ballot; or, without raise_epochs, does not
 * use it at all. */
static struct sim *sim_behind(paxos_ballot theirs, bool report)
{
	struct sim *s = sim_new(1, 1, 4);
	paxos_proposer_free(s->p);
	struct paxos_proposer_options o = sim_options(1, 1, 4);
	o.epoch = 1;
	o.raise_epochs = report;
	s->p = paxos_proposer_new(&o, &s->counters);
	raised_to = 0;
	prepares_before_raise = UINT32_MAX;
	for (uint32_t a = 0; a < NACC; a++)
		s->acc[a][1].promised = theirs;
	lead(s);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	run(s);
	return s;
}

static struct sim *sim_behind_later_epoch(bool report)
{
	/* epoch 3, round 7 */
	return sim_behind(((3ull << 32) + 7) * PAXOS_MAX_PROPOSERS + 1, report);
}

START_TEST(test_skip_into_later_epoch_raises_epoch)
{
	struct sim *s = sim_behind_later_epoch(true);
	ck_assert_uint_eq(raised_to, 3);
	ck_assert_uint_eq(paxos_proposer_epoch(s->p), 3);
	ck_assert_uint_eq(s->counters.epochs_raised, 1);
	ck_assert_uint_eq(s->nprepares[1], 2);
	ck_assert_uint_eq(s->prepares[1][1], ((3ull << 32) + 8) * PAXOS_MAX_PROPOSERS + 2);
	/* Reported while only the prepare of epoch 1 had gone out: the write comes first. */
	ck_assert_uint_eq(prepares_before_raise, 1);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "a");
	sim_free(s);
}
END_TEST

START_TEST(test_skip_into_later_epoch_refused)
{
	struct sim *s = sim_behind_later_epoch(false);
	ck_assert_uint_eq(raised_to, 0);
	ck_assert_uint_eq(paxos_proposer_epoch(s->p), 1);
	for (int round = 0; round < 3; round++) {
		advance(s, PHASE1_TIMEOUT);
		run(s);
	}
	/* Only ballots of its own epoch went out, and nothing could be chosen with them. */
	ck_assert_uint_ge(s->nprepares[1], 2);
	for (uint32_t k = 0; k < s->nprepares[1]; k++)
		ck_assert_uint_lt(s->prepares[1][k], (2ull << 32) * PAXOS_MAX_PROPOSERS);
	ck_assert_uint_eq(s->counters.epochs_raised, 0);
	ck_assert_uint_eq(s->ndelivered, 0);
	sim_free(s);
}
END_TEST

/* A reject far ahead, yet plausible: the proposer raises to exactly the epoch that ballot
 * needs, once, not to the end of the epoch space. */
START_TEST(test_far_reject_raises_only_as_needed)
{
	uint64_t far = PAXOS_PLAUSIBLE_EPOCHS - 1000;
	struct sim *s = sim_behind(((far << 32) + 7) * PAXOS_MAX_PROPOSERS + 1, true);
	ck_assert_uint_eq(raised_to, far);
	ck_assert_uint_eq(paxos_proposer_epoch(s->p), far);
	ck_assert_uint_eq(s->counters.epochs_raised, 1);
	ck_assert_uint_eq(s->ndelivered, 1);
	sim_free(s);
}
END_TEST

/* Rejects and promises with a ballot beyond every plausible epoch (a forgery or a bug) are
 * dropped and counted: the epoch is not raised, and nothing else changes. */
START_TEST(test_implausible_ballots_dropped)
{
	paxos_ballot forged = ((uint64_t)(PAXOS_PROPOSER_EPOCH_LIMIT - 1) << 32) * 100 + 1;
	ck_assert(!paxos_ballot_plausible(forged));
	ck_assert(!paxos_ballot_plausible(UINT64_MAX));
	ck_assert(paxos_ballot_plausible(
	    (((uint64_t)PAXOS_PLAUSIBLE_EPOCHS << 32) - 1) * PAXOS_MAX_PROPOSERS + 99));
	ck_assert(!paxos_ballot_plausible(((uint64_t)PAXOS_PLAUSIBLE_EPOCHS << 32) *
					  PAXOS_MAX_PROPOSERS));
	struct sim *s = sim_behind(forged, true);
	ck_assert_uint_eq(raised_to, 0);
	ck_assert_uint_eq(paxos_proposer_epoch(s->p), 1);
	ck_assert_uint_eq(s->counters.epochs_raised, 0);
	ck_assert_uint_ge(s->counters.implausible_ballots, 2); /* a quorum rejected */
	ck_assert_uint_eq(s->counters.rejects_received, 0);
	/* A promise with an implausible value ballot is dropped too. */
	struct paxos_message m = {.type = PAXOS_MSG_PROMISE};
	m.u.promise = (struct paxos_promise){.iid = 1, .ballot = 102, .value_ballot = UINT64_MAX};
	uint64_t before = s->counters.implausible_ballots;
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	ck_assert_uint_eq(s->counters.implausible_ballots, before + 1);
	sim_free(s);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("proposer_epochs");
	TCase *t = tcase_create("epochs");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_epoch_sets_first_ballot);
	tcase_add_test(t, test_restarted_proposer_answers_recovery_after_grace);
	tcase_add_test(t, test_new_log_starts_the_window_over);
	tcase_add_test(t, test_new_log_fills_the_holes_below_our_instances);
	tcase_add_test(t, test_skip_into_later_epoch_raises_epoch);
	tcase_add_test(t, test_skip_into_later_epoch_refused);
	tcase_add_test(t, test_far_reject_raises_only_as_needed);
	tcase_add_test(t, test_implausible_ballots_dropped);
	suite_add_tcase(s, t);
	return s;
}
