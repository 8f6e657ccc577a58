/* SPDX-License-Identifier: BSD-3-Clause */
/* The learner core catching up: hole checks, repeats and repairs, the window's bound, start
 * modes, and a randomized run of shuffled, duplicated and lost messages. */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learner_fixture.h"

START_TEST(test_hole_asks_again_after_stall)
{
	struct fixture *f = fixture_default(); /* repeat_batch 4, hole_check 1000 */
	for (paxos_iid iid = 2; iid <= 5; iid++)
		close_instance(f, iid, "x");
	tick(f, 0); /* baseline */
	ck_assert_uint_eq(repeats(f), 0);
	tick(f, 999); /* the interval has not elapsed */
	ck_assert_uint_eq(repeats(f), 0);
	tick(f, 1000);
	ck_assert_uint_eq(repeats(f), 1);
	ck_assert_uint_eq(repeat_at(f, 0)->from, 1);
	ck_assert_uint_eq(repeat_at(f, 0)->to, 4);           /* bounded by repeat_batch */
	ck_assert_uint_eq(f->counters.repeats_requested, 1); /* only 1 of 1..4 is missing */
	tick(f, 1500);
	ck_assert_uint_eq(repeats(f), 1);
	tick(f, 2000); /* still stalled: asks again */
	ck_assert_uint_eq(repeats(f), 2);
	close_instance(f, 1, "a");
	ck_assert_uint_eq(f->sink->delivered, 5);
	tick(f, 3000); /* nothing above next is known */
	tick(f, 4000);
	ck_assert_uint_eq(repeats(f), 2);
	fixture_free(f);
}
END_TEST

/*
 * Stalled on instance 1 although the repeats were asked for: after PAXOS_REPAIR_AFTER hole
 * checks the learner asks the proposers for a repair of its first missing instances (1 and 3
 * here: 2 is closed, 4 is the last it has seen and missing too), then every
 * PAXOS_REPAIR_EVERY checks; progress stops it.
 */
START_TEST(test_stalled_learner_asks_for_repair)
{
	struct fixture *f = fixture_default();
	close_instance(f, 2, "x");
	send_accepted(f, 3, 101, 0, "y"); /* one vote only: not closed */
	send_accepted(f, 4, 101, 2, "z");
	send_acceptor_state(f, 1, 4); /* a quorum knows of 4 */
	tick(f, 0);
	size_t repairs = 0;
	paxos_time now = 0;
	for (uint32_t check = 1; check <= PAXOS_REPAIR_AFTER + 2 * PAXOS_REPAIR_EVERY; check++) {
		now += 1000;
		tick(f, now);
		if (check < PAXOS_REPAIR_AFTER)
			ck_assert_uint_eq(recorder_count(f->rec, PAXOS_MSG_REPAIR, -1), 0);
	}
	repairs = recorder_count(f->rec, PAXOS_MSG_REPAIR, PAXOS_GROUP_PROPOSERS);
	ck_assert_uint_eq(repairs, 3); /* at checks 2, 4 and 6 */
	ck_assert_uint_eq(f->counters.repairs_requested, 3);
	const struct paxos_message *m = recorder_find(f->rec, PAXOS_MSG_REPAIR, 0);
	ck_assert_uint_eq(m->u.repair.from, 1);
	ck_assert_uint_eq(m->u.repair.to, 4);
	/* A leader's repair closes 1, 3 and 4: delivered, no more requests. */
	close_instance(f, 1, "a");
	close_instance(f, 3, "y");
	close_instance(f, 4, "z");
	ck_assert_uint_eq(f->sink->delivered, 4);
	for (int k = 0; k < 6; k++) {
		now += 1000;
		tick(f, now);
	}
	ck_assert_uint_eq(recorder_count(f->rec, PAXOS_MSG_REPAIR, -1), repairs);
	fixture_free(f);
}
END_TEST

START_TEST(test_no_repeat_while_progressing)
{
	struct fixture *f = fixture_default();
	tick(f, 0);
	close_instance(f, 1, "a");
	send_accepted(f, 3, 101, 0, "c"); /* 2 and 3 in flight */
	send_acceptor_state(f, 2, 3);
	tick(f, 1000);
	ck_assert_uint_eq(repeats(f), 0); /* next moved since the baseline */
	close_instance(f, 2, "b");
	tick(f, 2000);
	ck_assert_uint_eq(repeats(f), 0);
	tick(f, 3000); /* stalled at 3 */
	ck_assert_uint_eq(repeats(f), 1);
	ck_assert_uint_eq(repeat_at(f, 0)->from, 3);
	ck_assert_uint_eq(repeat_at(f, 0)->to, 3); /* bounded by the highest seen */
	ck_assert_uint_eq(f->counters.repeats_requested, 1);
	fixture_free(f);
}
END_TEST

START_TEST(test_repeat_bounded_by_window)
{
	struct fixture *f = fixture_new(16, 100, PAXOS_START_FROM_FIRST);
	send_acceptor_state(f, 0, 50);
	ck_assert_uint_eq(paxos_learner_highest_seen(f->l), 50);
	send_acceptor_state(f, 1, 20); /* another acceptor's lower report does not lower it */
	ck_assert_uint_eq(paxos_learner_highest_seen(f->l), 50);
	close_instance(f, 3, "c");
	tick(f, 0);
	tick(f, 1000);
	ck_assert_uint_eq(repeats(f), 1);
	ck_assert_uint_eq(repeat_at(f, 0)->from, 1);
	ck_assert_uint_eq(repeat_at(f, 0)->to, 16);
	ck_assert_uint_eq(f->counters.repeats_requested, 15);
	ck_assert_uint_eq(f->rec->group[0], PAXOS_GROUP_ACCEPTORS);
	fixture_free(f);
}
END_TEST

START_TEST(test_out_of_window_counted)
{
	struct fixture *f = fixture_default(); /* window 16: instances 1..16 */
	close_instance(f, 17, "q");
	ck_assert_uint_eq(f->counters.instances_out_of_window, 2);
	ck_assert_uint_eq(paxos_learner_highest_seen(f->l), 17);
	close_instance(f, 16, "p");
	ck_assert_uint_eq(f->counters.instances_out_of_window, 2);
	for (paxos_iid iid = 1; iid <= 15; iid++)
		close_instance(f, iid, "x");
	ck_assert_uint_eq(f->sink->delivered, 16);
	ck_assert_str_eq(f->sink->delivered_value[15], "p");
	/* 17 was dropped: it must be heard again. */
	close_instance(f, 17, "q");
	ck_assert_uint_eq(f->sink->delivered, 17);
	ck_assert_str_eq(f->sink->delivered_value[16], "q");
	fixture_free(f);
}
END_TEST

START_TEST(test_start_from_current)
{
	struct fixture *f = fixture_new(16, 4, PAXOS_START_FROM_CURRENT);
	/* Before any acceptor said how far it is, an accepted may be a repeat of history that
	 * another learner asked for: not where the current instance is. */
	send_accepted(f, 7, 101, 0, "history");
	send_acceptor_state(f, 0, 95); /* not started: no hole to find yet */
	send_acceptor_state(f, 1, 90); /* the lowest report counts */
	ck_assert_uint_eq(paxos_learner_highest_seen(f->l), 0);
	tick(f, 0);
	tick(f, 1000);
	ck_assert_uint_eq(repeats(f), 0);
	send_accepted(f, 12, 101, 1, "history"); /* below every acceptor's highest */
	send_accepted(f, 100, 101, 0, "first");
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 100);
	close_instance(f, 99, "before"); /* below the anchor: never delivered */
	ck_assert_uint_eq(f->sink->delivered, 0);
	send_accepted(f, 100, 101, 1, "first");
	ck_assert_uint_eq(f->sink->delivered, 1);
	ck_assert_uint_eq(f->sink->delivered_iid[0], 100);
	ck_assert_str_eq(f->sink->delivered_value[0], "first");
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 101);
	send_quorum_state(f, 105);
	ck_assert_uint_eq(paxos_learner_highest_seen(f->l), 105);
	fixture_free(f);
}
END_TEST

/* After a snapshot covering 1..49 the application starts its learner at 50. */
START_TEST(test_start_at_given_instance)
{
	struct fixture *f = calloc(1, sizeof(*f));
	f->sink = calloc(1, sizeof(*f->sink));
	f->rec = recorder_new();
	f->opt = (struct paxos_learner_options){.acceptors = 3,
						.window = 16,
						.max_value = 64,
						.repeat_batch = 4,
						.hole_check = 1000,
						.start = PAXOS_START_FROM_CURRENT,
						.start_iid = 50,
						.deliver = on_deliver,
						.deliver_arg = f->sink};
	f->l = paxos_learner_new(&f->opt, &f->counters);
	f->sink->learner = f->l;
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 50);
	close_instance(f, 49, "covered by the snapshot");
	close_instance(f, 51, "second");
	ck_assert_uint_eq(f->sink->delivered, 0);
	/* Started already: a hole at 50 is asked for. */
	send_acceptor_state(f, 0, 51);
	tick(f, 0);
	tick(f, 1000);
	ck_assert_uint_eq(repeats(f), 1);
	close_instance(f, 50, "first");
	ck_assert_uint_eq(f->sink->delivered, 2);
	ck_assert_uint_eq(f->sink->delivered_iid[0], 50);
	ck_assert_str_eq(f->sink->delivered_value[1], "second");
	fixture_free(f);
}
END_TEST

START_TEST(test_start_from_first)
{
	struct fixture *f = fixture_default();
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 1);
	ck_assert_uint_eq(paxos_learner_highest_seen(f->l), 0);
	close_instance(f, 5, "e");
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 1);
	ck_assert_uint_eq(f->sink->delivered, 0);
	fixture_free(f);
}
END_TEST

#define RANDOM_INSTANCES 5000
#define RANDOM_BLOCK 100

static uint64_t rng_state;

static uint32_t rng_next(void)
{
	/* xorshift64*: deterministic across platforms. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

static bool chance(uint32_t percent)
{
	return rng_next() % 100 < percent;
}

struct vote {
	paxos_iid iid;
	uint32_t acceptor;
	paxos_ballot ballot;
	bool final;
};

static void send_vote(struct fixture *f, const struct vote *v)
{
	char text[32];
	value_text(text, sizeof(text), v->iid, v->ballot);
	send_accepted_value(f, v->iid, v->ballot, v->acceptor, value_of(text), v->final);
}

/* What acceptor a holds for iid when asked again: its latest accepted. */
static struct vote acceptor_answer(paxos_iid iid, uint32_t a)
{
	struct vote v = {iid, a, 101, a == 0 && iid % 11 == 0};
	return v;
}

START_TEST(test_randomized_recovery)
{
	struct fixture *f = fixture_new(64, 32, PAXOS_START_FROM_FIRST);
	rng_state = 0x9e3779b97f4a7c15ull;
	/* Per instance: three votes at ballot 101 (acceptor 0 sometimes final), sometimes a stale
	 * ballot-1 vote with another value first, and random duplicates. */
	size_t cap = RANDOM_INSTANCES * 8;
	struct vote *stream = calloc(cap, sizeof(*stream));
	size_t n = 0;
	for (paxos_iid base = 1; base <= RANDOM_INSTANCES; base += RANDOM_BLOCK) {
		size_t block_start = n;
		for (paxos_iid iid = base; iid < base + RANDOM_BLOCK && iid <= RANDOM_INSTANCES;
		     iid++) {
			if (iid % 7 == 0) {
				struct vote stale = {iid, 2, 1, false};
				stream[n++] = stale;
			}
			for (uint32_t a = 0; a < 3; a++) {
				stream[n++] = acceptor_answer(iid, a);
				if (chance(20))
					stream[n++] = acceptor_answer(iid, a);
			}
		}
		/* Shuffle within a block: reordering wider than the window, but bounded. */
		for (size_t i = n - 1; i > block_start; i--) {
			size_t j = block_start + rng_next() % (i - block_start + 1);
			struct vote t = stream[i];
			stream[i] = stream[j];
			stream[j] = t;
		}
	}
	ck_assert_uint_le(n, cap);

	paxos_time now = 0;
	size_t pos = 0;
	paxos_iid sent_up_to = 0;
	int rounds = 0;
	tick(f, now);
	while (paxos_learner_next_iid(f->l) <= RANDOM_INSTANCES && rounds < 100000) {
		rounds++;
		for (int k = 0; k < 40 && pos < n; k++, pos++) {
			if (stream[pos].iid > sent_up_to)
				sent_up_to = stream[pos].iid;
			if (!chance(25)) /* lost */
				send_vote(f, &stream[pos]);
		}
		/* Every acceptor's periodic state: how far it accepted. */
		for (uint32_t a = 0; a < 3; a++)
			send_acceptor_state(f, a, sent_up_to);
		recorder_clear(f->rec);
		now += f->opt.hole_check;
		tick(f, now);
		/* Acceptors answer each repeat; answers may be lost too. */
		for (size_t r = 0; r < repeats(f); r++) {
			const struct paxos_repeat rep = *repeat_at(f, r);
			ck_assert_uint_le(rep.from, rep.to);
			ck_assert_uint_le(rep.to - rep.from + 1, 32);
			for (paxos_iid iid = rep.from; iid <= rep.to; iid++)
				for (uint32_t a = 0; a < 3; a++)
					if (!chance(25)) {
						struct vote v = acceptor_answer(iid, a);
						send_vote(f, &v);
					}
		}
	}
	/* Repeats may have closed the last instances before the stream ran out: its late and
	 * duplicate votes must deliver nothing more. */
	for (; pos < n; pos++)
		send_vote(f, &stream[pos]);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), RANDOM_INSTANCES + 1);
	ck_assert_uint_eq(f->sink->delivered, RANDOM_INSTANCES);
	ck_assert_uint_eq(f->counters.instances_delivered, RANDOM_INSTANCES);
	ck_assert_uint_ge(f->sink->closed, RANDOM_INSTANCES); /* again while behind a hole */
	for (size_t i = 0; i < RANDOM_INSTANCES; i++) {
		char text[32];
		value_text(text, sizeof(text), i + 1, 101);
		ck_assert_uint_eq(f->sink->delivered_iid[i], i + 1);
		ck_assert_str_eq(f->sink->delivered_value[i], text);
	}
	/* Losses forced repeats, and the window (64) wrapped many times. */
	ck_assert_uint_gt(f->counters.repeats_requested, 0);
	ck_assert_uint_gt(f->counters.instances_out_of_window, 0);
	free(stream);
	fixture_free(f);
}

Suite *test_suite(void)
{
	Suite *s = suite_create("learner_catchup");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_hole_asks_again_after_stall);
	tcase_add_test(tc, test_stalled_learner_asks_for_repair);
	tcase_add_test(tc, test_no_repeat_while_progressing);
	tcase_add_test(tc, test_repeat_bounded_by_window);
	tcase_add_test(tc, test_out_of_window_counted);
	tcase_add_test(tc, test_start_from_current);
	tcase_add_test(tc, test_start_at_given_instance);
	tcase_add_test(tc, test_start_from_first);
	tcase_add_test(tc, test_randomized_recovery);
	suite_add_tcase(s, tc);
	return s;
}
