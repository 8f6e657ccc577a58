/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proposer's values: values found in phase 1, takeovers, deliveries that move the window,
 * exactly once under loss, batching and flow control (proposer_fixture.h).
 */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "config_fields.h"
#include "proposer_fixture.h"
#include "support.h"

START_TEST(test_found_value_proposed_without_client)
{
	struct sim *s = sim_new(3, 1, 4);
	seed_accepted(s, 0, 1, 101, "orphan"); /* acceptor 0 answers first */
	lead(s);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "orphan");
	ck_assert_uint_eq(s->counters.values_proposed, 0);
	sim_free(s);
}
END_TEST

START_TEST(test_other_proposers_value_wins_client_value_moves)
{
	struct sim *s = sim_new(3, 1, 4);
	lead(s);
	run(s);
	ck_assert_int_eq(submit(s, "mine"), PAXOS_OK); /* accept(1, 102, mine) in flight */
	/* Meanwhile proposer 5 got "foreign" accepted at ballot 105 by a quorum. */
	seed_accepted(s, 0, 1, 105, "foreign");
	seed_accepted(s, 1, 1, 105, "foreign");
	run(s);
	/* Rejected, phase 1 at INCREMENTSKIP(102, 105) = 202 finds "foreign" (R1); "mine"
	 * goes back to the head of the list and into instance 2. */
	ck_assert_uint_eq(s->prepares[1][1], 202);
	ck_assert_uint_eq(s->counters.values_requeued, 1);
	ck_assert_uint_eq(s->ndelivered, 2);
	ck_assert_str_eq(s->delivered[0], "foreign");
	ck_assert_str_eq(s->delivered[1], "mine");
	sim_free(s);
}
END_TEST

/*
 * A new leader holds values every proposer queued, and the old leader got "x" chosen in
 * instance 3. Phase 1 answers for instances 1 and 2 come first and find nothing; proposing
 * "x" there before instance 3 reported it would choose it twice. The leader waits until
 * phase 1 finished across its window: "x" is adopted in 3 and leaves the list.
 */
START_TEST(test_takeover_adopts_before_proposing)
{
	struct sim *s = sim_new(3, 3, 8);
	const char *values[] = {"x", "y", "z"};
	for (int i = 0; i < 3; i++) {
		struct paxos_value v = value_of(values[i]);
		ck_assert_int_eq(paxos_proposer_queue(s->p, &v), PAXOS_OK);
	}
	seed_accepted(s, 0, 3, 101, "x");
	seed_accepted(s, 1, 3, 101, "x");
	lead(s);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 3);
	ck_assert_str_eq(s->delivered[0], "y");
	ck_assert_str_eq(s->delivered[1], "z");
	ck_assert_str_eq(s->delivered[2], "x");
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 0);
	sim_free(s);
}
END_TEST

START_TEST(test_stop_leading_requeues_in_order)
{
	struct sim *s = sim_new(4, 3, 8);
	lead(s);
	run(s);
	s->drop[PAXOS_MSG_ACCEPT] = true;
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "b"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "c"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "d"), PAXOS_OK);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	paxos_proposer_set_leader(s->p, false, 0, s->now, &s->out);
	ck_assert(!paxos_proposer_is_leader(s->p));
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 4);
	ck_assert_uint_eq(s->counters.values_requeued, 3);
	advance(s, 10 * PHASE2_TIMEOUT); /* no timers while not leading */
	ck_assert_uint_eq(s->net_len, 0);
	s->drop[PAXOS_MSG_ACCEPT] = false;
	lead(s);
	/* Ballots are not reused after leading before: 102 was used, 202 now. */
	ck_assert_uint_eq(s->prepares[1][1], 202);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 4);
	ck_assert_str_eq(s->delivered[0], "a");
	ck_assert_str_eq(s->delivered[1], "b");
	ck_assert_str_eq(s->delivered[2], "c");
	ck_assert_str_eq(s->delivered[3], "d");
	sim_free(s);
}
END_TEST

START_TEST(test_delivered_jumps_window)
{
	struct sim *s = sim_new(4, 1, 8);
	struct paxos_value v = frame1("x");
	paxos_proposer_delivered(s->p, 5, &v, s->now, &s->out); /* started late */
	paxos_proposer_delivered(s->p, 3, &v, s->now, &s->out); /* old: ignored */
	paxos_proposer_closed(s->p, 100, &v, s->now, &s->out);  /* beyond the window */
	ck_assert_uint_eq(s->net_len, 0);
	paxos_proposer_set_leader(s->p, true, 6, s->now, &s->out);
	for (paxos_iid i = 1; i <= 5; i++)
		ck_assert_uint_eq(s->nprepares[i], 0);
	for (paxos_iid i = 6; i <= 9; i++)
		ck_assert_uint_eq(s->nprepares[i], 1);
	ck_assert_uint_eq(s->nprepares[10], 0);
	/* Leading from a later instance jumps too (far beyond the window). */
	paxos_proposer_set_leader(s->p, true, 40, s->now, &s->out);
	for (paxos_iid i = 40; i <= 43; i++)
		ck_assert_uint_eq(s->nprepares[i], 1);
	ck_assert_uint_eq(s->nprepares[44], 0);
	/* A promise for an instance beyond the window is counted, not used. */
	struct paxos_message m = {.type = PAXOS_MSG_PROMISE};
	m.u.promise = (struct paxos_promise){.iid = 60, .ballot = 102, .acceptor_id = 0};
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	ck_assert_uint_eq(s->counters.instances_out_of_window, 1);
	sim_free(s);
}
END_TEST

/* Simulator seed 4392: a follower's learner closes another leader's instance
 * behind a hole, holding "a" and "b"; only "a" was queued here (the client's copy of "b" was
 * lost, and its resubmission comes after the close). "b" must not be queued either, or this
 * proposer, leading once the change that removes the old leader is in force, proposes it a
 * second time. */
START_TEST(test_value_closed_elsewhere_is_settled_at_once)
{
	struct sim *s = sim_new(4, 2, 8);
	ck_assert_int_eq(submit_id(s, "a", 1), PAXOS_OK);
	ck_assert_int_eq(submit_id(s, "c", 3), PAXOS_OK);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 2);
	uint8_t buf[VMAX];
	uint32_t used = 0;
	frame_add(buf, &used, "a", 1);
	frame_add(buf, &used, "b", 2);
	struct paxos_value ab = {buf, used};
	paxos_proposer_closed(s->p, 2, &ab, s->now, &s->out);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1); /* "c" */
	ck_assert_int_eq(submit_id(s, "b", 2), PAXOS_OK);   /* the late copy: settled */
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	ck_assert_uint_eq(s->counters.values_settled, 2);
	/* The deliveries settle nothing more: a copy of "a" or "b" arriving now is a
	 * resubmission of a delivered value, and the credits are spent. */
	struct paxos_value x = frame1("x");
	paxos_proposer_delivered(s->p, 1, &x, s->now, &s->out);
	paxos_proposer_delivered(s->p, 2, &ab, s->now, &s->out);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	ck_assert_uint_eq(s->counters.values_settled, 2);
	/* Leading from instance 3, it proposes "c" only. */
	s->next_deliver = 3;
	paxos_proposer_set_leader(s->p, true, 3, s->now, &s->out);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "c");
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 0);
	sim_free(s);
}
END_TEST

/* Two clients submit the same bytes ("INCR x"): two values, both delivered. One client's
 * copy never reached this follower, and its value was delivered; the other's arrives after.
 * It is not that value's late copy, so it is queued and proposed once this proposer leads.
 * Only a late copy of the delivered submission itself is dropped. */
START_TEST(test_equal_values_of_two_submitters)
{
	/* Values that name no submission: never dropped as delivered before they arrived. */
	struct sim *s = sim_new(4, 2, 8);
	struct paxos_value x = frame1("INCR x");
	paxos_proposer_delivered(s->p, 1, &x, s->now, &s->out);
	ck_assert_int_eq(submit(s, "INCR x"), PAXOS_OK);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	ck_assert_uint_eq(s->counters.values_settled, 0);
	s->next_deliver = 2;
	paxos_proposer_set_leader(s->p, true, 2, s->now, &s->out);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "INCR x");
	sim_free(s);

	/* Submissions 7 and 8 of the same bytes: 7 delivered before it reached us, 8 queued; a
	 * late copy of 7 is dropped, 8 is proposed. */
	s = sim_new(4, 2, 8);
	uint8_t buf[VMAX];
	uint32_t used = 0;
	frame_add(buf, &used, "INCR x", 7);
	struct paxos_value x7 = {buf, used};
	paxos_proposer_delivered(s->p, 1, &x7, s->now, &s->out);
	ck_assert_int_eq(submit_id(s, "INCR x", 8), PAXOS_OK);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	ck_assert_int_eq(submit_id(s, "INCR x", 7), PAXOS_OK);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	ck_assert_uint_eq(s->counters.values_settled, 1);
	/* A delivery of 8 would take 8's copy, not another submission's. */
	ck_assert_int_eq(submit_id(s, "INCR x", 9), PAXOS_OK);
	used = 0;
	frame_add(buf, &used, "INCR x", 8);
	struct paxos_value x8 = {buf, used};
	paxos_proposer_delivered(s->p, 2, &x8, s->now, &s->out);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	s->next_deliver = 3;
	paxos_proposer_set_leader(s->p, true, 3, s->now, &s->out);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "INCR x");
	sim_free(s);
}
END_TEST

START_TEST(test_jump_requeues_client_values)
{
	struct sim *s = sim_new(4, 2, 8);
	s->concurrency = 99; /* the test's learner never hears of instances 1..3 closing */
	lead(s);
	run(s);
	s->drop[PAXOS_MSG_ACCEPT] = true;
	submit(s, "a");
	submit(s, "b");
	struct paxos_value v = frame1("other");
	/* Another leader's instances 1..3 were delivered; ours were not among them. */
	paxos_proposer_delivered(s->p, 3, &v, s->now, &s->out);
	ck_assert_uint_eq(s->counters.values_requeued, 2);
	/* Both went back to the head in order; "a" already went to instance 4, the only one
	 * of the new window whose phase 1 is done. */
	ck_assert(s->accept_sent[4]);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	s->drop[PAXOS_MSG_ACCEPT] = false;
	run(s);
	ck_assert_uint_eq(s->ndelivered, 0); /* the test's learner starts at 1: nothing */
	sim_free(s);
}
END_TEST

/* A new leader finds a client value accepted under its predecessor (v1) that also waits in
 * its own list (clients send to every proposer): the value is proposed where it was found,
 * and nowhere else, so it is delivered once. */
START_TEST(test_adopted_value_leaves_pending)
{
	struct sim *s = sim_new(4, 3, 8);
	struct paxos_value f = frame1("b");
	for (uint32_t a = 0; a < QUORUM; a++) {
		s->acc[a][1].promised = 50;
		s->acc[a][1].accepted = 50; /* below any ballot of ours */
		memcpy(s->acc[a][1].value, f.data, f.len);
		s->acc[a][1].len = f.len;
	}
	ck_assert_int_eq(submit(s, "b"), PAXOS_OK); /* not leading: it waits in the list */
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	lead(s);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "b");
	ck_assert_uint_eq(s->delivered_iid[0], 1);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 0);
	ck_assert(!s->accept_sent[2]);
	sim_free(s);
}
END_TEST

START_TEST(test_random_loss_exactly_once)
{
	enum { N = 150 };
	struct sim *s = sim_new(8, 3, 16);
	s->rng = 0x9E3779B97F4A7C15ull * (uint64_t)(_i + 1);
	s->loss_percent = 15;
	s->reorder = true;
	s->deliver_ballots = _i % 2; /* what accepts say was chosen holds (observe) */
	lead(s);
	static char v[N][16];
	int submitted = 0;
	for (int step = 0; s->ndelivered < N; step++) {
		ck_assert_msg(step < 2000000, "stuck: %zu of %d delivered", s->ndelivered, N);
		uint32_t r = rnd(s) % 100;
		if (submitted < N && r < 20) {
			snprintf(v[submitted], sizeof(v[submitted]), "r%d", submitted);
			if (submit(s, v[submitted]) == PAXOS_OK)
				submitted++; /* a full list: the client tries again later */
		} else if (r < 95 && pump(s)) {
			continue;
		} else {
			advance(s, 1000);
		}
	}
	ck_assert_uint_eq(s->ndelivered, N);
	int seen[N] = {0};
	for (size_t i = 0; i < s->ndelivered; i++) {
		int k;
		ck_assert_int_eq(sscanf(s->delivered[i], "r%d", &k), 1);
		ck_assert(k >= 0 && k < N);
		seen[k]++;
	}
	for (int k = 0; k < N; k++)
		ck_assert_msg(seen[k] == 1, "value r%d delivered %d times", k, seen[k]);
	ck_assert_uint_le(s->max_in_phase2, 3);
	ck_assert_uint_gt(s->counters.phase1_timeouts + s->counters.phase2_timeouts, 0);
	if (s->deliver_ballots)
		ck_assert_uint_gt(s->instances_said, 0);
	sim_free(s);
}
END_TEST

/* A leader's accepts say which instances were chosen with the value it proposed at their ballot
 * (paxos_accept.chosen_to): the unbroken run of them delivered so. A delivery whose value is
 * not known to be one proposed at that ballot ends the run; the next starts after it. */
START_TEST(test_accepts_say_what_was_chosen)
{
	struct sim *s = sim_new(8, 1, 16);
	s->deliver_ballots = true;
	lead(s);
	static const char *const v[] = {"a", "b", "c", "d", "e", "f", "g"};
	ck_assert_int_eq(submit(s, v[0]), PAXOS_OK);
	run(s);
	ck_assert_uint_eq(s->said_to, 0); /* the first accept: nothing chosen yet */
	for (int k = 1; k < 4; k++) {
		ck_assert_int_eq(submit(s, v[k]), PAXOS_OK);
		run(s);
	}
	ck_assert_uint_eq(s->ninstances, 4);
	/* The accept of the fourth value said the first three were chosen. */
	ck_assert_uint_eq(s->said_from, 1);
	ck_assert_uint_eq(s->said_to, 3);
	/* A delivery without the ballot (a learner that took the value from a final answer) ends
	 * the run: the next accept says nothing, the one after starts again. */
	s->deliver_ballots = false;
	ck_assert_int_eq(submit(s, v[4]), PAXOS_OK);
	run(s);
	s->deliver_ballots = true;
	ck_assert_int_eq(submit(s, v[5]), PAXOS_OK);
	run(s);
	ck_assert_uint_eq(s->said_to, 0);
	ck_assert_int_eq(submit(s, v[6]), PAXOS_OK);
	run(s);
	ck_assert_uint_eq(s->said_from, 6);
	ck_assert_uint_eq(s->said_to, 6);
	ck_assert_uint_eq(s->ndelivered, 7);
	sim_free(s);
}
END_TEST

/* A leader whose accepts stopped says what they left unsaid in a chosen message, at the
 * second tick after its last accept (one tick with no accept since the one before), once, and
 * only what its run of chosen instances adds. */
START_TEST(test_idle_leader_says_what_was_chosen)
{
	struct sim *s = sim_new(8, 1, 16);
	s->deliver_ballots = true;
	lead(s);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	run(s);
	ck_assert_uint_eq(s->ninstances, 1);
	advance(s, 1); /* an accept went out since the last tick */
	ck_assert_uint_eq(s->chosen_sent, 0);
	advance(s, 1);
	ck_assert_uint_eq(s->chosen_sent, 1);
	ck_assert_uint_eq(s->chosen_from, 1);
	ck_assert_uint_eq(s->chosen_to, 1);
	advance(s, 1);
	advance(s, 1);
	ck_assert_uint_eq(s->chosen_sent, 1); /* nothing new to say */
	/* The accepts of b and c say 1..1 and 1..2; the chosen message then says 1..3. */
	ck_assert_int_eq(submit(s, "b"), PAXOS_OK);
	run(s);
	ck_assert_int_eq(submit(s, "c"), PAXOS_OK);
	run(s);
	ck_assert_uint_eq(s->said_to, 2);
	advance(s, 1);
	advance(s, 1);
	ck_assert_uint_eq(s->chosen_sent, 2);
	ck_assert_uint_eq(s->chosen_from, 1);
	ck_assert_uint_eq(s->chosen_to, 3);
	/* A delivery without its ballot ends the run: nothing is known to say. */
	s->deliver_ballots = false;
	ck_assert_int_eq(submit(s, "d"), PAXOS_OK);
	run(s);
	advance(s, 1);
	advance(s, 1);
	ck_assert_uint_eq(s->chosen_sent, 2);
	ck_assert_uint_eq(s->counters.chosen_said, 2);
	ck_assert_uint_eq(s->ndelivered, 4);
	sim_free(s);
}
END_TEST

/* What the node says of the spares goes into every accept from then on. */
START_TEST(test_accepts_say_whether_spares_rest)
{
	struct sim *s = sim_new(8, 1, 16);
	lead(s);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	run(s);
	ck_assert(!s->said_rest);
	paxos_proposer_spares_rest(s->p, true);
	ck_assert_int_eq(submit(s, "b"), PAXOS_OK);
	run(s);
	ck_assert(s->said_rest);
	paxos_proposer_spares_rest(s->p, false);
	ck_assert_int_eq(submit(s, "c"), PAXOS_OK);
	run(s);
	ck_assert(!s->said_rest);
	ck_assert_uint_eq(s->ndelivered, 3);
	sim_free(s);
}
END_TEST

/* The leader wants its votes read after every round once its phase 2 is half as full as the
 * congestion window allows; below that, every millisecond does. */
START_TEST(test_votes_wanted_when_phase2_is_busy)
{
	struct sim *s = sim_new(16, 8, 16);
	ck_assert(!paxos_proposer_votes_wanted(s->p)); /* not leading */
	lead(s);
	run(s); /* phase 1 done */
	static const char *const v[] = {"a", "b", "c", "d"};
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(submit(s, v[k]), PAXOS_OK);
	ck_assert(!paxos_proposer_votes_wanted(s->p)); /* 3 of 8 */
	ck_assert_int_eq(submit(s, v[3]), PAXOS_OK);
	ck_assert(paxos_proposer_votes_wanted(s->p)); /* 4 of 8 */
	run(s);
	ck_assert_uint_eq(s->ndelivered, 4);
	ck_assert(!paxos_proposer_votes_wanted(s->p));
	ck_assert(!paxos_proposer_votes_wanted(NULL));
	sim_free(s);
}
END_TEST

/*
 * Value batching (thesis 3.7.4) under loss and reordering: every value delivered exactly once;
 * within an instance, positions 0, 1, ... in the order the values were submitted; with FIFO
 * (concurrency 1) the whole sequence in submission order. _i even: batch_limit 8 (several
 * values per instance, up to what fits in VMAX); odd: limit 1, one value per instance.
 */
START_TEST(test_batching_exactly_once_in_order)
{
	enum { N = 120 };
	bool batching = _i % 2 == 0;
	uint32_t concurrency = _i < 2 ? 1 : 3;
	sim_batch_limit = batching ? 8 : 1;
	struct sim *s = sim_new(6, concurrency, 64);
	sim_batch_limit = 1;
	s->rng = 0x2545F4914F6CDD1Dull * (uint64_t)(_i + 3);
	s->loss_percent = 10;
	s->reorder = true;
	lead(s);
	static char v[N][16];
	int submitted = 0;
	for (int step = 0; s->ndelivered < N; step++) {
		ck_assert_msg(step < 2000000, "stuck: %zu of %d delivered", s->ndelivered, N);
		uint32_t r = rnd(s) % 100;
		if (submitted < N && r < 40) {
			snprintf(v[submitted], sizeof(v[submitted]), "b%d", submitted);
			if (submit(s, v[submitted]) == PAXOS_OK)
				submitted++;
		} else if (r < 95 && pump(s)) {
			continue;
		} else {
			advance(s, 1000);
		}
	}
	int seen[N] = {0};
	int last_in_iid = -1;
	for (size_t i = 0; i < s->ndelivered; i++) {
		int k;
		ck_assert_int_eq(sscanf(s->delivered[i], "b%d", &k), 1);
		ck_assert(k >= 0 && k < N);
		seen[k]++;
		bool same_iid = i > 0 && s->delivered_iid[i] == s->delivered_iid[i - 1];
		ck_assert_uint_eq(s->delivered_pos[i], same_iid ? s->delivered_pos[i - 1] + 1 : 0);
		if (same_iid) /* one instance's values are in submission order */
			ck_assert_int_gt(k, last_in_iid);
		last_in_iid = k;
		if (concurrency == 1)
			ck_assert_int_eq(k, (int)i);
	}
	for (int k = 0; k < N; k++)
		ck_assert_msg(seen[k] == 1, "value b%d delivered %d times", k, seen[k]);
	if (batching) {
		ck_assert_uint_lt(s->ninstances, N);
		ck_assert_uint_gt(s->counters.values_proposed, s->counters.instances_proposed);
	} else {
		ck_assert_uint_eq(s->ninstances, N);
		ck_assert_uint_eq(s->counters.values_proposed, s->counters.instances_proposed);
	}
	sim_free(s);
}
END_TEST

/* Values waiting while an instance is ready all go into it at once; a lone value goes out
 * alone at once (no waiting for a batch to fill). */
START_TEST(test_batch_packs_waiting_values)
{
	sim_batch_limit = 8;
	struct sim *s = sim_new(4, 1, 16);
	sim_batch_limit = 1;
	lead(s);
	run(s);
	ck_assert_int_eq(submit(s, "solo"), PAXOS_OK);
	ck_assert_uint_eq(s->net_len, 1); /* its accept, right away */
	ck_assert(frame1_is(&s->net[0].m.u.accept.value, "solo"));
	const char *more[] = {"m0", "m1", "m2", "m3", "m4"};
	for (int k = 0; k < 5; k++) /* instance 1 in phase 2 (concurrency 1): they wait */
		ck_assert_int_eq(submit(s, more[k]), PAXOS_OK);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 5);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 6);
	ck_assert_uint_eq(s->ninstances, 2); /* 4 * (4 + 2) = 24 bytes fit in VMAX */
	for (int k = 0; k < 5; k++) {
		ck_assert_str_eq(s->delivered[k + 1], more[k]);
		ck_assert_uint_eq(s->delivered_iid[k + 1], 2);
		ck_assert_uint_eq(s->delivered_pos[k + 1], (uint32_t)k);
	}
	ck_assert_uint_eq(s->counters.values_proposed, 6);
	ck_assert_uint_eq(s->counters.instances_proposed, 2);
	sim_free(s);
}
END_TEST

/* Values queued in one read share an instance once assigned, although phase 2 has room for
 * each: the node queues a read's values and assigns once (thesis 3.7.4). Nothing goes out
 * before assign, and a lone value goes out at its assign. */
START_TEST(test_queue_then_assign_packs_a_read)
{
	sim_batch_limit = 8;
	struct sim *s = sim_new(8, 8, 16);
	sim_batch_limit = 1;
	lead(s);
	run(s);
	const char *v[] = {"r0", "r1", "r2"};
	for (int k = 0; k < 3; k++) {
		struct paxos_value val = value_of(v[k]);
		ck_assert_int_eq(paxos_proposer_queue(s->p, &val), PAXOS_OK);
	}
	ck_assert_uint_eq(s->net_len, 0);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 3);
	paxos_proposer_assign(s->p, s->now, &s->out);
	ck_assert_uint_eq(s->net_len, 1); /* one accept for the three */
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 0);
	struct paxos_value lone = value_of("lone");
	ck_assert_int_eq(paxos_proposer_queue(s->p, &lone), PAXOS_OK);
	paxos_proposer_assign(s->p, s->now, &s->out);
	ck_assert_uint_eq(s->net_len, 2);
	ck_assert(frame1_is(&s->net[1].m.u.accept.value, "lone"));
	run(s);
	ck_assert_uint_eq(s->ndelivered, 4);
	for (int k = 0; k < 3; k++) {
		ck_assert_str_eq(s->delivered[k], v[k]);
		ck_assert_uint_eq(s->delivered_iid[k], 1);
		ck_assert_uint_eq(s->delivered_pos[k], (uint32_t)k);
	}
	ck_assert_str_eq(s->delivered[3], "lone");
	ck_assert_uint_eq(s->counters.instances_proposed, 2);
	/* A follower queues and keeps its values: assign sends nothing. */
	struct paxos_value late = value_of("late");
	paxos_proposer_set_leader(s->p, false, 0, s->now, &s->out);
	size_t sent = s->net_len;
	ck_assert_int_eq(paxos_proposer_queue(s->p, &late), PAXOS_OK);
	paxos_proposer_assign(s->p, s->now, &s->out);
	ck_assert_uint_eq(s->net_len, sent);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	sim_free(s);
}
END_TEST

/* Leadership lost with batches in flight: every value goes back, in order, and is delivered
 * once when leading again. */
START_TEST(test_batch_pushed_back_whole)
{
	sim_batch_limit = 3;
	struct sim *s = sim_new(4, 1, 16);
	sim_batch_limit = 1;
	s->drop[PAXOS_MSG_ACCEPT] = true;
	const char *v[] = {"p0", "p1", "p2", "p3", "p4"};
	for (int k = 0; k < 5; k++)
		ck_assert_int_eq(submit(s, v[k]), PAXOS_OK);
	lead(s);
	run(s); /* instance 1 takes p0..p2 (the limit); p3, p4 wait for concurrency */
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 2);
	paxos_proposer_set_leader(s->p, false, 0, s->now, &s->out);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 5);
	ck_assert_uint_eq(s->counters.values_requeued, 3);
	s->drop[PAXOS_MSG_ACCEPT] = false;
	lead(s);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 5);
	for (int k = 0; k < 5; k++)
		ck_assert_str_eq(s->delivered[k], v[k]);
	ck_assert_uint_eq(s->delivered_iid[3], 2); /* p3, p4 in the next instance */
	sim_free(s);
}
END_TEST

/* Flow control: no more than in_flight_max values in instances (here max(window 2, pending
 * 6) = 6), and no new instance while max_backlog instances wait closed behind a hole. */
START_TEST(test_flow_control)
{
	sim_batch_limit = 8;
	struct sim *s = sim_new(2, 2, 6);
	s->drop[PAXOS_MSG_ACCEPT] = true;
	const char *v[] = {"a", "b", "c", "d", "e", "f"};
	for (int k = 0; k < 6; k++)
		ck_assert_int_eq(submit(s, v[k]), PAXOS_OK);
	lead(s);
	run(s);
	ck_assert(s->accept_sent[1]);
	ck_assert_int_eq(submit(s, "g"), PAXOS_OK);
	ck_assert(!s->accept_sent[2]); /* 6 values in flight already */
	ck_assert_uint_gt(s->counters.flow_control_holds, 0);
	s->drop[PAXOS_MSG_ACCEPT] = false;
	advance(s, PHASE2_TIMEOUT);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 7);
	sim_free(s);

	sim_batch_limit = 1;
	sim_max_backlog = 2;
	s = sim_new(8, 8, 16);
	sim_max_backlog = 0;
	lead(s);
	run(s);
	s->drop[PAXOS_MSG_ACCEPT] = true;
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(submit(s, v[k]), PAXOS_OK);
	/* Our learner closed 2 and 3 but lost 1: two closed instances wait behind it. */
	paxos_proposer_closed(s->p, 2, &(struct paxos_value){0}, s->now, &s->out);
	paxos_proposer_closed(s->p, 3, &(struct paxos_value){0}, s->now, &s->out);
	uint64_t holds = s->counters.flow_control_holds;
	ck_assert_int_eq(submit(s, "d"), PAXOS_OK);
	ck_assert(!s->accept_sent[4]);
	ck_assert_uint_gt(s->counters.flow_control_holds, holds);
	/* The hole is repaired: 1 is delivered, then 2 (the backlog drops below the limit),
	 * and the leader opens instances again. */
	struct paxos_value f = frame1("a");
	paxos_proposer_delivered(s->p, 1, &f, s->now, &s->out);
	ck_assert(!s->accept_sent[4]); /* 2 and 3 still wait */
	f = frame1("b");
	paxos_proposer_delivered(s->p, 2, &f, s->now, &s->out);
	ck_assert(s->accept_sent[4]);
	sim_free(s);
}
END_TEST

/* Flow control counts only instances we ran phase 2 for: instances closed by final accepteds
 * nobody sent (forged, or a bug) do not hold new values back, even past max_backlog. */
START_TEST(test_flow_control_ignores_instances_not_opened)
{
	sim_max_backlog = 2;
	struct sim *s = sim_new(8, 8, 16);
	sim_max_backlog = 0;
	lead(s);
	run(s);
	for (paxos_iid iid = 2; iid <= 6; iid++)
		paxos_proposer_closed(s->p, iid, &(struct paxos_value){0}, s->now, &s->out);
	uint64_t holds = s->counters.flow_control_holds;
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	ck_assert(s->accept_sent[1]);
	ck_assert_uint_eq(s->counters.flow_control_holds, holds);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "a");
	sim_free(s);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("proposer_values");
	TCase *t = tcase_create("values");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_flow_control_ignores_instances_not_opened);
	tcase_add_test(t, test_found_value_proposed_without_client);
	tcase_add_test(t, test_other_proposers_value_wins_client_value_moves);
	tcase_add_test(t, test_takeover_adopts_before_proposing);
	tcase_add_test(t, test_stop_leading_requeues_in_order);
	tcase_add_test(t, test_delivered_jumps_window);
	tcase_add_test(t, test_jump_requeues_client_values);
	tcase_add_test(t, test_value_closed_elsewhere_is_settled_at_once);
	tcase_add_test(t, test_equal_values_of_two_submitters);
	tcase_add_test(t, test_adopted_value_leaves_pending);
	tcase_add_loop_test(t, test_random_loss_exactly_once, 0, 8);
	tcase_add_test(t, test_accepts_say_what_was_chosen);
	tcase_add_test(t, test_idle_leader_says_what_was_chosen);
	tcase_add_test(t, test_accepts_say_whether_spares_rest);
	tcase_add_test(t, test_votes_wanted_when_phase2_is_busy);
	tcase_add_loop_test(t, test_batching_exactly_once_in_order, 0, 4);
	tcase_add_test(t, test_batch_packs_waiting_values);
	tcase_add_test(t, test_queue_then_assign_packs_a_read);
	tcase_add_test(t, test_batch_pushed_back_whole);
	tcase_add_test(t, test_flow_control);
	suite_add_tcase(s, t);
	return s;
}
