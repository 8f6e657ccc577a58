/* SPDX-License-Identifier: BSD-3-Clause */
/* The learner core fetching past instances, and catching up with a cluster ahead of it. */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learner_fixture.h"

/* ---- fetching one past instance (thesis 3.3) ---- */

#define FETCH_MAX 64

/* What fetch callbacks saw, in order. */
struct fetched {
	size_t count;
	paxos_iid iid[FETCH_MAX];
	int status[FETCH_MAX];
	bool has_value[FETCH_MAX];
	char value[FETCH_MAX][SINK_VALUE];
	/* For test_fetch_done_may_fetch_again. */
	struct fixture *refetch_fixture;
	paxos_iid refetch_iid;
};

static void on_fetched(void *arg, paxos_iid iid, int status, const struct paxos_value *v)
{
	struct fetched *r = arg;
	ck_assert_uint_lt(r->count, FETCH_MAX);
	r->iid[r->count] = iid;
	r->status[r->count] = status;
	r->has_value[r->count] = v != NULL;
	if (v)
		copy_value(r->value[r->count], v);
	r->count++;
}

static int fetch(struct fixture *f, paxos_iid iid, paxos_time now, struct fetched *r)
{
	return paxos_learner_fetch(f->l, iid, now, on_fetched, r, &f->rec->emitter);
}

START_TEST(test_fetch_final_answer)
{
	struct fixture *f = fixture_default();
	struct fetched r = {0};
	ck_assert_int_eq(fetch(f, 7, 0, &r), PAXOS_OK);
	ck_assert_uint_eq(repeats(f), 1);
	ck_assert_uint_eq(repeat_at(f, 0)->from, 7);
	ck_assert_uint_eq(repeat_at(f, 0)->to, 7);
	send_accepted(f, 6, 101, 2, "other"); /* another instance */
	ck_assert_uint_eq(r.count, 0);
	send_accepted_value(f, 7, 303, 2, value_of("seven"), true);
	ck_assert_uint_eq(r.count, 1);
	ck_assert_uint_eq(r.iid[0], 7);
	ck_assert_int_eq(r.status[0], PAXOS_OK);
	ck_assert(r.has_value[0]);
	ck_assert_str_eq(r.value[0], "seven");
	/* Done once: later answers for 7 are not reported again. */
	send_accepted_value(f, 7, 303, 1, value_of("seven"), true);
	ck_assert_uint_eq(r.count, 1);
	tick(f, 0);
	tick(f, 100000);
	ck_assert_uint_eq(r.count, 1);
	fixture_free(f);
}
END_TEST

START_TEST(test_fetch_quorum_of_one_ballot)
{
	struct fixture *f = fixture_default(); /* 3 acceptors: quorum 2 */
	struct fetched r = {0};
	ck_assert_int_eq(fetch(f, 5, 0, &r), PAXOS_OK);
	send_accepted(f, 5, 101, 0, "old");
	send_accepted(f, 5, 101, 0, "old"); /* a duplicate is one vote */
	ck_assert_uint_eq(r.count, 0);
	send_accepted(f, 5, 202, 1, "new");
	ck_assert_uint_eq(r.count, 0); /* 101 and 202: no ballot has a quorum */
	send_accepted(f, 5, 202, 2, "new");
	ck_assert_uint_eq(r.count, 1);
	ck_assert_int_eq(r.status[0], PAXOS_OK);
	ck_assert_str_eq(r.value[0], "new");
	/* Bad answers are ignored: unknown acceptor, value too big. */
	ck_assert_int_eq(fetch(f, 6, 0, &r), PAXOS_OK);
	char big[100];
	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	send_accepted(f, 6, 101, 3, "x");
	send_accepted(f, 6, 101, 7, "x");
	send_accepted(f, 6, 101, 0, big);
	send_accepted(f, 6, 101, 1, big);
	ck_assert_uint_eq(r.count, 1);
	send_accepted(f, 6, 101, 0, "six");
	send_accepted(f, 6, 101, 1, "six");
	ck_assert_uint_eq(r.count, 2);
	ck_assert_str_eq(r.value[1], "six");
	fixture_free(f);
}
END_TEST

/* A fetch does not disturb delivery, and works for instances delivered long ago. */
START_TEST(test_fetch_past_instance_beside_delivery)
{
	struct fixture *f = fixture_default(); /* window 16 */
	struct fetched r = {0};
	ck_assert_int_eq(fetch(f, 1, 0, &r), PAXOS_OK);
	close_instance(f, 1, "a");
	ck_assert_uint_eq(f->sink->delivered, 1);
	ck_assert_uint_eq(r.count, 1);
	ck_assert_str_eq(r.value[0], "a");
	for (paxos_iid iid = 2; iid <= 40; iid++)
		close_instance(f, iid, iid == 3 ? "c" : "x");
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 41);
	/* Instance 3 left the window long ago: the acceptors answer. */
	ck_assert_int_eq(fetch(f, 3, 0, &r), PAXOS_OK);
	close_instance(f, 3, "c");
	ck_assert_uint_eq(r.count, 2);
	ck_assert_uint_eq(r.iid[1], 3);
	ck_assert_str_eq(r.value[1], "c");
	ck_assert_uint_eq(f->sink->delivered, 40); /* nothing delivered twice */
	/* Two fetches of one instance are both answered. */
	ck_assert_int_eq(fetch(f, 9, 0, &r), PAXOS_OK);
	ck_assert_int_eq(fetch(f, 9, 0, &r), PAXOS_OK);
	send_accepted_value(f, 9, 101, 0, value_of("x"), true);
	ck_assert_uint_eq(r.count, 4);
	ck_assert_uint_eq(r.iid[2], 9);
	ck_assert_uint_eq(r.iid[3], 9);
	fixture_free(f);
}
END_TEST

START_TEST(test_fetch_resends_then_times_out)
{
	struct fixture *f = fixture_default(); /* hole_check 1000: timeout 50 checks */
	struct fetched r = {0};
	tick(f, 0);
	ck_assert_int_eq(fetch(f, 3, 500, &r), PAXOS_OK);
	ck_assert_uint_eq(repeats(f), 1);
	tick(f, 1499);
	ck_assert_uint_eq(repeats(f), 1);
	tick(f, 1500); /* a hole check without an answer: ask again */
	ck_assert_uint_eq(repeats(f), 2);
	ck_assert_uint_eq(repeat_at(f, 1)->from, 3);
	ck_assert_uint_eq(repeat_at(f, 1)->to, 3);
	for (paxos_time t = 1600; t < 50500; t += 100)
		tick(f, t);
	ck_assert_uint_eq(r.count, 0);
	ck_assert_uint_eq(repeats(f), 50); /* once per hole check, however often ticked */
	tick(f, 50500);
	ck_assert_uint_eq(r.count, 1);
	ck_assert_int_eq(r.status[0], PAXOS_E_TIMEOUT);
	ck_assert(!r.has_value[0]);
	tick(f, 60000);
	ck_assert_uint_eq(repeats(f), 50); /* given up: no more requests */
	send_accepted_value(f, 3, 101, 0, value_of("late"), true);
	ck_assert_uint_eq(r.count, 1);

	/* An explicit timeout. */
	struct fixture *g = fixture_default();
	paxos_learner_free(g->l);
	g->opt.fetch_timeout = 2500;
	g->l = paxos_learner_new(&g->opt, &g->counters);
	ck_assert_ptr_nonnull(g->l);
	g->sink->learner = g->l;
	struct fetched q = {0};
	ck_assert_int_eq(fetch(g, 3, 0, &q), PAXOS_OK);
	tick(g, 2499);
	ck_assert_uint_eq(q.count, 0);
	tick(g, 2500);
	ck_assert_uint_eq(q.count, 1);
	ck_assert_int_eq(q.status[0], PAXOS_E_TIMEOUT);
	fixture_free(g);
	fixture_free(f);
}
END_TEST

/* Trimmed once so many acceptors trimmed it that no quorum can answer (2 of 3). */
START_TEST(test_fetch_trimmed)
{
	struct fixture *f = fixture_default();
	struct fetched r = {0};
	ck_assert_int_eq(fetch(f, 5, 0, &r), PAXOS_OK);
	send_trimmed(f, 0, 9);
	send_trimmed(f, 0, 9); /* the same acceptor again */
	send_trimmed(f, 1, 4); /* below the fetched instance */
	send_trimmed(f, 7, 9); /* no such acceptor */
	ck_assert_uint_eq(r.count, 0);
	send_trimmed(f, 2, 5);
	ck_assert_uint_eq(r.count, 0); /* not at once: an acceptor may answer with it */
	later(f);
	tick(f, f->now);
	ck_assert_uint_eq(r.count, 1);
	ck_assert_uint_eq(r.iid[0], 5);
	ck_assert_int_eq(r.status[0], PAXOS_E_TRIMMED);
	ck_assert(!r.has_value[0]);
	/* Trim points in the acceptors' periodic state count too. */
	ck_assert_int_eq(fetch(f, 20, 0, &r), PAXOS_OK);
	send_acceptor_trim(f, 0, 50, 30);
	ck_assert_uint_eq(r.count, 1);
	send_acceptor_trim(f, 1, 50, 20);
	ck_assert_uint_eq(r.count, 2);
	ck_assert_int_eq(r.status[1], PAXOS_E_TRIMMED);
	/* One acceptor's final answer beats the others' trims. */
	ck_assert_int_eq(fetch(f, 60, 0, &r), PAXOS_OK);
	send_trimmed(f, 0, 70);
	send_accepted_value(f, 60, 101, 2, value_of("kept"), true);
	ck_assert_uint_eq(r.count, 3);
	ck_assert_int_eq(r.status[2], PAXOS_OK);
	ck_assert_str_eq(r.value[2], "kept");
	/* Trims reported by a quorum (forged) lose to an acceptor that answers with the instance:
	 * its reports are not believed for this fetch any more. */
	ck_assert_int_eq(fetch(f, 80, f->now, &r), PAXOS_OK);
	send_trimmed(f, 0, 90);
	send_trimmed(f, 1, 90);
	send_accepted(f, 80, 101, 0, "held");
	later(f);
	send_trimmed(f, 0, 90);
	send_trimmed(f, 1, 90);
	tick(f, f->now);
	ck_assert_uint_eq(r.count, 3);
	send_accepted(f, 80, 101, 1, "held");
	ck_assert_uint_eq(r.count, 4);
	ck_assert_int_eq(r.status[3], PAXOS_OK);
	ck_assert_str_eq(r.value[3], "held");
	fixture_free(f);
}
END_TEST

START_TEST(test_fetch_table_bounded)
{
	struct fixture *f = fixture_default();
	struct fetched r = {0};
	ck_assert_int_eq(fetch(f, 0, 0, &r), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_learner_fetch(f->l, 3, 0, NULL, NULL, &f->rec->emitter),
			 PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_learner_fetch(NULL, 3, 0, on_fetched, &r, &f->rec->emitter),
			 PAXOS_E_INVALID);
	ck_assert_uint_eq(repeats(f), 0);
	for (paxos_iid i = 0; i < PAXOS_LEARNER_MAX_FETCHES; i++)
		ck_assert_int_eq(fetch(f, 100 + i, 0, &r), PAXOS_OK);
	ck_assert_int_eq(fetch(f, 500, 0, &r), PAXOS_E_FULL);
	ck_assert_uint_eq(repeats(f), PAXOS_LEARNER_MAX_FETCHES);
	send_accepted_value(f, 104, 101, 1, value_of("e"), true);
	ck_assert_uint_eq(r.count, 1);
	ck_assert_int_eq(fetch(f, 500, 0, &r), PAXOS_OK); /* a place is free again */
	ck_assert_int_eq(fetch(f, 501, 0, &r), PAXOS_E_FULL);
	/* Outstanding fetches are dropped silently by free. */
	fixture_free(f);
	ck_assert_uint_eq(r.count, 1);
}
END_TEST

static void on_fetched_then_fetch(void *arg, paxos_iid iid, int status, const struct paxos_value *v)
{
	struct fetched *r = arg;
	on_fetched(arg, iid, status, v);
	if (r->refetch_iid) {
		paxos_iid next = r->refetch_iid;
		r->refetch_iid = 0;
		ck_assert_int_eq(paxos_learner_fetch(r->refetch_fixture->l, next, 0, on_fetched, r,
						     &r->refetch_fixture->rec->emitter),
				 PAXOS_OK);
	}
}

/* done may start another fetch at once, even with the table full. */
START_TEST(test_fetch_done_may_fetch_again)
{
	struct fixture *f = fixture_default();
	struct fetched r = {.refetch_fixture = f, .refetch_iid = 8};
	ck_assert_int_eq(
	    paxos_learner_fetch(f->l, 7, 0, on_fetched_then_fetch, &r, &f->rec->emitter), PAXOS_OK);
	for (paxos_iid i = 1; i < PAXOS_LEARNER_MAX_FETCHES; i++)
		ck_assert_int_eq(fetch(f, 100 + i, 0, &r), PAXOS_OK);
	send_accepted_value(f, 7, 101, 0, value_of("seven"), true);
	ck_assert_uint_eq(r.count, 1);
	ck_assert_str_eq(r.value[0], "seven"); /* intact although its place was reused */
	ck_assert_uint_eq(repeats(f), PAXOS_LEARNER_MAX_FETCHES + 1);
	ck_assert_uint_eq(repeat_at(f, PAXOS_LEARNER_MAX_FETCHES)->from, 8);
	send_accepted_value(f, 8, 101, 0, value_of("eight"), true);
	ck_assert_uint_eq(r.count, 2);
	ck_assert_str_eq(r.value[1], "eight");
	fixture_free(f);
}
END_TEST

/* ---- catch-up (thesis 3.6.2, 4.6.1) ---- */

/* A learner far behind asks for the next batch as soon as the previous one is delivered (in
 * the call that delivers it), one request at a time, and again after a hole check if part of
 * an answer was lost. */
START_TEST(test_catch_up_asks_batch_after_batch)
{
	struct fixture *f = fixture_new(64, 8, PAXOS_START_FROM_FIRST); /* hole_check 1000 */
	tick(f, 0);
	send_quorum_state(f, 1000);
	tick(f, 1);
	ck_assert_uint_eq(repeats(f), 1);
	ck_assert_uint_eq(repeat_at(f, 0)->from, 1);
	ck_assert_uint_eq(repeat_at(f, 0)->to, 8);
	tick(f, 2); /* not answered yet: no second request */
	tick(f, 999);
	ck_assert_uint_eq(repeats(f), 1);
	f->now = 500;
	for (paxos_iid iid = 1; iid <= 7; iid++)
		close_instance(f, iid, "x");
	ck_assert_uint_eq(repeats(f), 1);
	close_instance(f, 8, "x");
	ck_assert_uint_eq(repeats(f), 2); /* answered: the next batch at once */
	ck_assert_uint_eq(repeat_at(f, 1)->from, 9);
	ck_assert_uint_eq(repeat_at(f, 1)->to, 16);
	close_instance(f, 8, "x"); /* late duplicates ask nothing */
	tick(f, 1000);
	ck_assert_uint_eq(repeats(f), 2);
	/* Half the answer is lost: the rest is asked for again after a hole check. */
	for (paxos_iid iid = 9; iid <= 12; iid++)
		close_instance(f, iid, "x");
	tick(f, 1499);
	ck_assert_uint_eq(repeats(f), 2);
	tick(f, 1500);
	ck_assert_uint_eq(repeats(f), 3);
	ck_assert_uint_eq(repeat_at(f, 2)->from, 13);
	ck_assert_uint_eq(repeat_at(f, 2)->to, 20);
	fixture_free(f);
}
END_TEST

/* A stalled learner, however far behind and however often ticked, asks once per hole check. */
START_TEST(test_stalled_learner_paced)
{
	struct fixture *f = fixture_new(64, 8, PAXOS_START_FROM_FIRST);
	tick(f, 0);
	send_quorum_state(f, 100000);
	for (paxos_time t = 1; t <= 10000; t += 10)
		tick(f, t);
	ck_assert_uint_ge(repeats(f), 10);
	ck_assert_uint_le(repeats(f), 11);
	for (size_t i = 0; i < repeats(f); i++) {
		ck_assert_uint_eq(repeat_at(f, i)->from, 1);
		ck_assert_uint_eq(repeat_at(f, i)->to, 8);
	}
	fixture_free(f);
}
END_TEST

/* Not behind: a few instances beyond a hole are a hole, asked for only when stalled. */
START_TEST(test_hole_is_not_catch_up)
{
	struct fixture *f = fixture_new(64, 8, PAXOS_START_FROM_FIRST);
	tick(f, 0);
	for (paxos_iid iid = 2; iid <= 20; iid++)
		close_instance(f, iid, "x");
	tick(f, 1);
	tick(f, 500);
	ck_assert_uint_eq(repeats(f), 0); /* 2..8 are closed: not behind */
	tick(f, 1000);
	ck_assert_uint_eq(repeats(f), 1);
	fixture_free(f);
}
END_TEST

#define LIVE_ACCEPTORS 3
#define LIVE_PER_TICK 5
#define CATCH_UP_BATCH 32

/* The cluster decides LIVE_PER_TICK more instances, each accepted by every acceptor. */
static void live_traffic(struct fixture *f, paxos_iid *decided)
{
	char text[32];
	for (paxos_iid k = 0; k < LIVE_PER_TICK; k++) {
		++*decided;
		value_text(text, sizeof(text), *decided, 101);
		for (uint32_t a = 0; a < LIVE_ACCEPTORS; a++)
			send_accepted(f, *decided, 101, a, text);
	}
}

/*
 * A cluster keeps deciding instances (5 per tick, 4 ticks per hole check) while a learner
 * starts from instance 1 far behind: its window (64) is far smaller than the gap, so live
 * traffic beyond it is dropped and it must catch up by repeats alone. An answer takes one
 * tick. Asking only when stalled (32 instances per 2 hole checks) could never catch up with
 * 5 per tick; asking batch after batch does, and then the learner follows the live traffic.
 */
START_TEST(test_catch_up_converges_under_load)
{
	struct fixture *f = fixture_new(64, CATCH_UP_BATCH, PAXOS_START_FROM_FIRST);
	paxos_iid decided = 3000;
	paxos_time now = 0;
	size_t asked = 0;
	struct paxos_repeat pending = {0, 0}; /* asked last tick, answered this one */
	bool has_pending = false;
	char text[32];
	tick(f, now);
	int t;
	for (t = 0; t < 800 && paxos_learner_next_iid(f->l) <= decided; t++) {
		f->now = now;
		live_traffic(f, &decided);
		if (has_pending) {
			/* Acceptor 0 answers (clipped at what it has), as a learning acceptor:
			 * final. */
			for (paxos_iid iid = pending.from; iid <= pending.to && iid <= decided;
			     iid++) {
				value_text(text, sizeof(text), iid, 101);
				send_accepted_value(f, iid, 101, 0, value_of(text), true);
			}
		}
		now += f->opt.hole_check / 4;
		tick(f, now);
		/* One request outstanding at a time: at most one new per round trip. */
		ck_assert_uint_le(repeats(f), 1);
		has_pending = repeats(f) == 1;
		if (has_pending) {
			pending = *repeat_at(f, 0);
			ck_assert_uint_le(pending.to - pending.from + 1, CATCH_UP_BATCH);
		}
		asked += repeats(f);
		recorder_clear(f->rec);
	}
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), decided + 1);
	ck_assert_int_lt(t, 200); /* 3000 behind, 27 gained per tick */
	ck_assert_uint_gt(f->counters.instances_out_of_window, 0);
	ck_assert_uint_ge(asked, 3000 / CATCH_UP_BATCH);
	ck_assert_uint_eq(f->sink->delivered, decided);
	for (size_t i = 0; i < f->sink->delivered; i++) {
		value_text(text, sizeof(text), i + 1, 101);
		ck_assert_uint_eq(f->sink->delivered_iid[i], i + 1);
		ck_assert_str_eq(f->sink->delivered_value[i], text);
	}
	/* Caught up: it follows the live traffic without asking. */
	for (int k = 0; k < 40; k++) {
		live_traffic(f, &decided);
		now += f->opt.hole_check / 4;
		tick(f, now);
	}
	ck_assert_uint_eq(repeats(f), 0);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), decided + 1);
	fixture_free(f);
}
END_TEST

#define LARGE_INSTANCE 16384u

/* Acceptor 0, a learning acceptor, repeats instances from..to with LARGE_INSTANCE bytes each. */
static void answer_large(struct fixture *f, paxos_iid from, paxos_iid to)
{
	static uint8_t bytes[LARGE_INSTANCE];
	struct paxos_value v = {bytes, LARGE_INSTANCE};
	for (paxos_iid iid = from; iid <= to; iid++)
		send_accepted_value(f, iid, 101, 0, v, true);
}

/*
 * An acceptor stops its answer at PAXOS_REPEAT_ANSWER_BYTES. A learner catching up on large
 * instances asks for what one answer carries, so that each answer is whole and the next request
 * goes out at once: asking for more would cost a hole check per answer, a pace a busy cluster
 * outruns.
 */
START_TEST(test_catch_up_asks_what_one_answer_carries)
{
	struct fixture *f = fixture_new_sized(64, 64, PAXOS_START_FROM_FIRST, LARGE_INSTANCE);
	tick(f, 0);
	send_quorum_state(f, 1000);
	tick(f, 1);
	ck_assert_uint_eq(repeats(f), 1);
	ck_assert_uint_eq(repeat_at(f, 0)->to, 64); /* nothing delivered yet: a whole batch */
	answer_large(f, 1, 16);                     /* the acceptor stopped there */
	tick(f, 500);
	ck_assert_uint_eq(repeats(f), 1);
	tick(f, 1001);
	ck_assert_uint_eq(repeats(f), 2);
	const struct paxos_repeat *r = repeat_at(f, 1);
	paxos_iid span = r->to - r->from + 1;
	ck_assert_uint_eq(r->from, 17);
	ck_assert_uint_eq(span, PAXOS_REPEAT_ANSWER_BYTES / 2 / LARGE_INSTANCE);
	answer_large(f, r->from, r->to);
	ck_assert_uint_eq(repeats(f), 3); /* whole: the next at once */
	ck_assert_uint_eq(repeat_at(f, 2)->from, 17 + span);
	ck_assert_uint_eq(repeat_at(f, 2)->to, 17 + 2 * span - 1);
	fixture_free(f);
}
END_TEST

/*
 * A hole shorter than a catch-up batch (not "behind") is asked for after a stall; when the
 * answer leaves the rest of the hole missing, the rest is asked for at once, not after two
 * more hole checks; once the hole is filled no more is asked.
 */
START_TEST(test_rest_of_a_hole_asked_at_once)
{
	struct fixture *f = fixture_new_sized(64, 32, PAXOS_START_FROM_FIRST, LARGE_INSTANCE);
	answer_large(f, 1, 4);
	paxos_iid span = PAXOS_REPEAT_ANSWER_BYTES / 2 / LARGE_INSTANCE;
	ck_assert_uint_lt(2 * span, 20);
	answer_large(f, 25, 30); /* 5..24 missing */
	tick(f, 0);
	tick(f, 999);
	ck_assert_uint_eq(repeats(f), 0);
	tick(f, 1000);
	ck_assert_uint_eq(repeats(f), 1);
	ck_assert_uint_eq(repeat_at(f, 0)->from, 5);
	ck_assert_uint_eq(repeat_at(f, 0)->to, 5 + span - 1);
	answer_large(f, 5, 5 + span - 1);
	ck_assert_uint_eq(repeats(f), 2);
	ck_assert_uint_eq(repeat_at(f, 1)->from, 5 + span);
	answer_large(f, 5 + span, 5 + 2 * span - 1);
	ck_assert_uint_eq(repeats(f), 3);
	ck_assert_uint_eq(repeat_at(f, 2)->from, 5 + 2 * span);
	answer_large(f, 5 + 2 * span, 24);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 31);
	ck_assert_uint_eq(repeats(f), 3);
	tick(f, 1500);
	tick(f, 2000);
	ck_assert_uint_eq(repeats(f), 3);
	fixture_free(f);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("learner_fetch");

	TCase *fetching = tcase_create("fetch");
	tcase_add_test(fetching, test_fetch_final_answer);
	tcase_add_test(fetching, test_fetch_quorum_of_one_ballot);
	tcase_add_test(fetching, test_fetch_past_instance_beside_delivery);
	tcase_add_test(fetching, test_fetch_resends_then_times_out);
	tcase_add_test(fetching, test_fetch_trimmed);
	tcase_add_test(fetching, test_fetch_table_bounded);
	tcase_add_test(fetching, test_fetch_done_may_fetch_again);
	suite_add_tcase(s, fetching);

	TCase *catch_up = tcase_create("catch-up");
	tcase_set_timeout(catch_up, 60);
	tcase_add_test(catch_up, test_catch_up_asks_batch_after_batch);
	tcase_add_test(catch_up, test_stalled_learner_paced);
	tcase_add_test(catch_up, test_hole_is_not_catch_up);
	tcase_add_test(catch_up, test_catch_up_converges_under_load);
	tcase_add_test(catch_up, test_catch_up_asks_what_one_answer_carries);
	tcase_add_test(catch_up, test_rest_of_a_hole_asked_at_once);
	suite_add_tcase(s, catch_up);
	return s;
}
