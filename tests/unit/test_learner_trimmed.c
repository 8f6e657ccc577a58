/* SPDX-License-Identifier: BSD-3-Clause */
/* The learner core and trimmed instances: skips, snapshots, forged trim reports. */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learner_fixture.h"

/* --- trimmed instances (thesis 3.4.1, 3.6.2) --- */

/* hold_trimmed: the learner says TRIMMED once and waits at next for a snapshot: nothing is
 * delivered or asked for until paxos_learner_skip_to() moves it past what is trimmed. */
START_TEST(test_trimmed_held_for_a_snapshot)
{
	struct fixture *f = fixture_default();
	paxos_learner_free(f->l);
	f->opt.hold_trimmed = true;
	f->l = paxos_learner_new(&f->opt, &f->counters);
	f->sink->learner = f->l;
	close_instance(f, 2, "b");
	close_instance(f, 5, "e");
	close_instance(f, 6, "f");
	send_trimmed(f, 0, 3);
	send_trimmed(f, 2, 3);
	later(f);
	send_trimmed(f, 2, 3);
	ck_assert_uint_eq(f->sink->trimmed, 1);
	ck_assert_uint_eq(f->sink->trimmed_from[0], 1);
	ck_assert_uint_eq(f->sink->trimmed_to[0], 3);
	paxos_iid to = 0;
	ck_assert(paxos_learner_held(f->l, &to));
	ck_assert_uint_eq(to, 3);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 1);
	ck_assert_uint_eq(f->counters.instances_skipped_trimmed, 0);
	/* Trimmed further: what the snapshot must cover grows, without another event. */
	send_trimmed(f, 0, 4);
	send_trimmed(f, 2, 4);
	ck_assert_uint_eq(f->sink->trimmed, 1);
	ck_assert(paxos_learner_held(f->l, &to));
	ck_assert_uint_eq(to, 4);
	/* Waiting asks for nothing. */
	size_t asked = repeats(f);
	tick(f, f->now + 10000);
	tick(f, f->now + 20000);
	ck_assert_uint_eq(repeats(f), asked);
	ck_assert_uint_eq(f->sink->delivered, 0);
	/* A snapshot of 1..4 installed: delivery goes on at 5. */
	paxos_learner_skip_to(f->l, 5);
	ck_assert(!paxos_learner_held(f->l, NULL));
	ck_assert_uint_eq(f->sink->delivered, 2);
	ck_assert_uint_eq(f->sink->delivered_iid[0], 5);
	ck_assert_uint_eq(f->sink->delivered_iid[1], 6);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 7);
	fixture_free(f);
}
END_TEST

/* Lost once fewer than a quorum of acceptors still hold it (3 acceptors: 2 trimmed). Only the
 * missing instances are skipped; what is closed above the trim point is delivered after. */
START_TEST(test_trimmed_skips_missing_instances)
{
	struct fixture *f = fixture_default();
	close_instance(f, 2, "b"); /* closed, but stuck behind the hole at 1 */
	close_instance(f, 5, "e");
	close_instance(f, 6, "f");
	send_trimmed(f, 0, 3);
	ck_assert_uint_eq(f->sink->trimmed, 0); /* two others can still answer for 1..3 */
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 1);
	send_trimmed(f, 0, 3); /* the same acceptor again does not count twice */
	ck_assert_uint_eq(f->sink->trimmed, 0);
	send_trimmed(f, 2, 3);
	ck_assert_uint_eq(f->sink->trimmed, 0); /* it asks first */
	ck_assert_uint_eq(repeats(f), 1);
	ck_assert_uint_eq(repeat_at(f, 0)->from, 1);
	ck_assert_uint_eq(repeat_at(f, 0)->to, 3);
	later(f);
	send_trimmed(f, 2, 3);
	ck_assert_uint_eq(f->sink->trimmed, 1);
	ck_assert_uint_eq(f->sink->trimmed_from[0], 1);
	ck_assert_uint_eq(f->sink->trimmed_to[0], 3);
	ck_assert_uint_eq(f->sink->next_during_trimmed[0], 4);
	ck_assert_uint_eq(f->counters.instances_skipped_trimmed, 3);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 4);
	ck_assert_uint_eq(f->sink->delivered, 0); /* 4 is missing, but can still be learned */
	/* Reports of the same or a lower point change nothing. */
	send_trimmed(f, 1, 3);
	send_trimmed(f, 1, 2);
	ck_assert_uint_eq(f->sink->trimmed, 1);
	ck_assert_uint_eq(f->counters.instances_skipped_trimmed, 3);
	close_instance(f, 4, "d");
	ck_assert_uint_eq(f->sink->delivered, 3);
	ck_assert_uint_eq(f->sink->delivered_iid[0], 4);
	ck_assert_uint_eq(f->sink->delivered_iid[2], 6);
	ck_assert_str_eq(f->sink->delivered_value[1], "e");
	/* The skipped instances are never delivered, even when heard again. */
	close_instance(f, 1, "a");
	close_instance(f, 2, "b");
	ck_assert_uint_eq(f->sink->delivered, 3);
	fixture_free(f);
}
END_TEST

/*
 * Trim reports from every acceptor (forged, with their addresses: nothing tells them apart
 * without a key) for instances the acceptors still hold: the learner asks for them rather than
 * skip, the acceptors answer with them, and that refutes the reports, however often they are
 * sent again. Nothing is skipped; everything is delivered.
 */
START_TEST(test_forged_trim_reports_are_refuted)
{
	struct fixture *f = fixture_default();
	send_quorum_state(f, 10);
	for (uint32_t a = 0; a < 3; a++)
		send_acceptor_trim(f, a, 10, 8);
	ck_assert_uint_eq(f->sink->trimmed, 0);
	ck_assert_uint_eq(repeats(f), 1); /* it asks instead */
	ck_assert_uint_eq(repeat_at(f, 0)->from, 1);
	for (paxos_iid from = 1; from <= 8; from += 4) {
		/* Acceptors 0 and 1 answer the repeat with what they hold. */
		for (paxos_iid iid = from; iid < from + 4; iid++)
			close_instance(f, iid, "x");
		later(f);
		for (uint32_t a = 0; a < 3; a++)
			send_acceptor_trim(f, a, 10, 8);
		ck_assert_uint_eq(f->sink->trimmed, 0);
		later(f);
		tick(f, f->now);
		for (uint32_t a = 0; a < 3; a++)
			send_acceptor_trim(f, a, 10, 8);
		ck_assert_uint_eq(f->sink->trimmed, 0);
	}
	ck_assert_uint_eq(f->counters.instances_skipped_trimmed, 0);
	ck_assert_uint_eq(f->sink->delivered, 8);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 9);
	fixture_free(f);
}
END_TEST

/* Closed instances up to the trim point are delivered before anything is skipped. */
START_TEST(test_trimmed_delivers_what_it_has_first)
{
	struct fixture *f = fixture_default();
	close_instance(f, 1, "a");
	close_instance(f, 2, "b");
	close_instance(f, 4, "d");
	close_instance(f, 7, "g");
	send_trimmed(f, 0, 2);
	send_trimmed(f, 1, 2);
	ck_assert_uint_eq(f->sink->trimmed, 0); /* 1 and 2 were delivered: nothing is lost */
	ck_assert_uint_eq(f->counters.instances_skipped_trimmed, 0);
	/* Trimmed up to 5 by acceptors 1 and 2 (their own highest reports count). */
	send_trimmed(f, 1, 5);
	send_acceptor_trim(f, 2, 9, 5);
	later(f);
	send_trimmed(f, 1, 5);
	ck_assert_uint_eq(f->sink->trimmed, 1);
	ck_assert_uint_eq(f->sink->trimmed_from[0], 3);
	ck_assert_uint_eq(f->sink->trimmed_to[0], 5);
	ck_assert_uint_eq(f->sink->delivered_before_trimmed[0], 2);
	ck_assert_uint_eq(f->counters.instances_skipped_trimmed, 3);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 6);
	ck_assert_uint_eq(f->sink->delivered, 2); /* 4 was dropped with the rest */
	close_instance(f, 6, "f");
	ck_assert_uint_eq(f->sink->delivered, 4);
	ck_assert_uint_eq(f->sink->delivered_iid[2], 6);
	ck_assert_uint_eq(f->sink->delivered_iid[3], 7);
	ck_assert_uint_eq(paxos_learner_highest_seen(f->l), 9);
	fixture_free(f);
}
END_TEST

/* The acceptors' periodic state carries the trim point too; closed instances above it are
 * delivered right after the callback, in the same call. */
START_TEST(test_acceptor_state_trim_skips)
{
	struct fixture *f = fixture_default();
	close_instance(f, 6, "f");
	close_instance(f, 7, "g");
	send_acceptor_trim(f, 0, 7, 5);
	ck_assert_uint_eq(f->sink->trimmed, 0);
	send_acceptor_trim(f, 1, 7, 5);
	ck_assert_uint_eq(f->sink->trimmed, 0);
	later(f);
	send_acceptor_trim(f, 1, 7, 5);
	ck_assert_uint_eq(f->sink->trimmed, 1);
	ck_assert_uint_eq(f->sink->trimmed_from[0], 1);
	ck_assert_uint_eq(f->sink->trimmed_to[0], 5);
	ck_assert_uint_eq(f->sink->delivered_before_trimmed[0], 0);
	ck_assert_uint_eq(f->sink->delivered, 2);
	ck_assert_uint_eq(f->sink->delivered_iid[0], 6);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 8);
	/* Different trim points: lost is what at least two acceptors dropped. */
	send_acceptor_trim(f, 0, 20, 12);
	send_acceptor_trim(f, 1, 20, 10);
	later(f);
	send_acceptor_trim(f, 1, 20, 10);
	ck_assert_uint_eq(f->sink->trimmed, 2);
	ck_assert_uint_eq(f->sink->trimmed_from[1], 8);
	ck_assert_uint_eq(f->sink->trimmed_to[1], 10);
	send_acceptor_trim(f, 2, 20, 15);
	later(f);
	send_acceptor_trim(f, 2, 20, 15);
	ck_assert_uint_eq(f->sink->trimmed, 3);
	ck_assert_uint_eq(f->sink->trimmed_from[2], 11);
	ck_assert_uint_eq(f->sink->trimmed_to[2], 12);
	ck_assert_uint_eq(f->counters.instances_skipped_trimmed, 5 + 3 + 2);
	fixture_free(f);
}
END_TEST

/* Without a callback the learner skips just the same, and stops asking for what is gone. */
START_TEST(test_trimmed_without_callback_stops_asking)
{
	struct fixture *f = calloc(1, sizeof(*f));
	f->sink = calloc(1, sizeof(*f->sink));
	f->rec = recorder_new();
	f->opt = (struct paxos_learner_options){.acceptors = 3,
						.window = 16,
						.max_value = 64,
						.repeat_batch = 4,
						.hole_check = 1000,
						.start = PAXOS_START_FROM_FIRST,
						.deliver = on_deliver,
						.deliver_arg = f->sink};
	f->l = paxos_learner_new(&f->opt, &f->counters);
	ck_assert_ptr_nonnull(f->l);
	f->sink->learner = f->l;

	close_instance(f, 4, "d");
	tick(f, 0);
	tick(f, 1000);
	ck_assert_uint_eq(repeats(f), 1);
	ck_assert_uint_eq(repeat_at(f, 0)->from, 1);
	/* The acceptors answer the request: 1..2 are trimmed. */
	f->now = 1000 + 250;
	send_trimmed(f, 0, 2);
	send_trimmed(f, 2, 2);
	ck_assert_uint_eq(f->counters.instances_skipped_trimmed, 2);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 3);
	tick(f, 2000); /* it moved: no request */
	tick(f, 3000);
	ck_assert_uint_eq(repeats(f), 2);
	ck_assert_uint_eq(repeat_at(f, 1)->from, 3); /* asks for 3 only, never 1..2 again */
	ck_assert_uint_eq(repeat_at(f, 1)->to, 4);
	close_instance(f, 3, "c");
	ck_assert_uint_eq(f->sink->delivered, 2);
	ck_assert_uint_eq(f->sink->delivered_iid[0], 3);
	ck_assert_uint_eq(f->sink->trimmed, 0);
	fixture_free(f);
}
END_TEST

/* A trim point far beyond the window: everything held is dropped, slots are reused cleanly. */
START_TEST(test_trimmed_beyond_window)
{
	struct fixture *f = fixture_default(); /* window 16 */
	close_instance(f, 3, "c");
	close_instance(f, 10, "j");
	send_quorum_state(f, 100); /* instances up to 100 exist */
	send_trimmed(f, 0, 100);
	send_trimmed(f, 1, 100);
	later(f);
	send_trimmed(f, 1, 100);
	ck_assert_uint_eq(f->sink->trimmed, 1);
	ck_assert_uint_eq(f->sink->trimmed_to[0], 100);
	ck_assert_uint_eq(f->counters.instances_skipped_trimmed, 100);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 101);
	ck_assert_uint_eq(paxos_learner_highest_seen(f->l), 100);
	close_instance(f, 102, "x"); /* 102 % 16 == 6 */
	close_instance(f, 106, "z"); /* 106 % 16 == 10: the slot 10 had */
	close_instance(f, 101, "w");
	close_instance(f, 103, "y");
	ck_assert_uint_eq(f->sink->delivered, 3);
	ck_assert_str_eq(f->sink->delivered_value[0], "w");
	ck_assert_str_eq(f->sink->delivered_value[1], "x");
	ck_assert_str_eq(f->sink->delivered_value[2], "y");
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 104);
	fixture_free(f);
}
END_TEST

START_TEST(test_trimmed_bad_input_ignored)
{
	struct fixture *f = fixture_new(16, 4, PAXOS_START_FROM_CURRENT);
	/* Not started: there is nothing to skip yet. */
	send_trimmed(f, 0, 50);
	send_trimmed(f, 1, 50);
	ck_assert_uint_eq(f->sink->trimmed, 0);
	send_acceptor_state(f, 0, 60);
	send_accepted(f, 60, 101, 0, "first");
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 60);
	send_quorum_state(f, 60);
	/* Below the anchor: nothing lost. */
	send_trimmed(f, 0, 55);
	send_trimmed(f, 1, 55);
	ck_assert_uint_eq(f->sink->trimmed, 0);
	/* Unknown acceptors and iid 0 do not count. */
	send_trimmed(f, 3, 70);
	send_trimmed(f, 1000, 70);
	send_trimmed(f, 2, 0);
	send_acceptor_trim(f, 7, 0, 70);
	ck_assert_uint_eq(f->sink->trimmed, 0);
	ck_assert_uint_eq(f->counters.instances_skipped_trimmed, 0);
	/* Trim points beyond every instance heard of count only up to it (60 here). */
	send_trimmed(f, 0, UINT64_MAX);
	send_trimmed(f, 2, UINT64_MAX);
	ck_assert_uint_eq(f->counters.trim_reports_clamped, 2);
	later(f);
	send_trimmed(f, 2, UINT64_MAX);
	ck_assert_uint_eq(f->sink->trimmed, 1);
	ck_assert_uint_eq(f->sink->trimmed_from[0], 60);
	ck_assert_uint_eq(f->sink->trimmed_to[0], 60);
	/* The largest iid, once it exists, skips to the largest representable next, without
	 * wrapping. */
	send_quorum_state(f, UINT64_MAX);
	send_trimmed(f, 0, UINT64_MAX);
	send_trimmed(f, 2, UINT64_MAX);
	later(f);
	send_trimmed(f, 2, UINT64_MAX);
	ck_assert_uint_eq(f->sink->trimmed, 2);
	ck_assert_uint_eq(f->sink->trimmed_from[1], 61);
	ck_assert_uint_eq(f->sink->trimmed_to[1], UINT64_MAX - 1);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), UINT64_MAX);
	fixture_free(f);
}
END_TEST

/* Skipping loses instances for good, so it takes the word of a quorum: with 4 acceptors two
 * reports would leave no quorum to answer, but only the third one skips. */
START_TEST(test_trimmed_needs_a_quorum)
{
	struct paxos_counters c = {0};
	struct sink *s = calloc(1, sizeof(*s));
	struct paxos_learner_options o = {.acceptors = 4,
					  .window = 8,
					  .max_value = 8,
					  .repeat_batch = 4,
					  .hole_check = 1000,
					  .deliver = on_deliver,
					  .deliver_arg = s,
					  .trimmed = on_trimmed,
					  .trimmed_arg = s};
	struct paxos_learner *l = paxos_learner_new(&o, &c);
	ck_assert_ptr_nonnull(l);
	s->learner = l;
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_STATE};
	m.u.acceptor_state = (struct paxos_acceptor_state){.highest_accepted = 9, .trim_iid = 4};
	paxos_learner_handle(l, &m, 0, NULL);
	m.u.acceptor_state.acceptor_id = 3;
	paxos_learner_handle(l, &m, 0, NULL);
	paxos_learner_handle(l, &m, 0, NULL); /* the same acceptor again */
	ck_assert_uint_eq(s->trimmed, 0);
	ck_assert_uint_eq(paxos_learner_next_iid(l), 1);
	m.u.acceptor_state.acceptor_id = 1;
	paxos_learner_handle(l, &m, 0, NULL);
	ck_assert_uint_eq(s->trimmed, 0); /* it asks first */
	paxos_learner_handle(l, &m, 250, NULL);
	ck_assert_uint_eq(s->trimmed, 1);
	ck_assert_uint_eq(s->trimmed_to[0], 4);
	ck_assert_uint_eq(paxos_learner_next_iid(l), 5);
	paxos_learner_free(l);
	free(s);
}
END_TEST

/* One acceptor's report of instances far ahead (forged, or a bug) lasts until that acceptor's
 * next state: then the learner no longer takes itself for behind or stalled, and sends no more
 * repeats or repairs. Its trim report alone is no quorum: nothing is skipped. */
START_TEST(test_one_acceptor_cannot_claim_the_future)
{
	struct fixture *f = fixture_default();
	for (paxos_iid iid = 1; iid <= 3; iid++)
		close_instance(f, iid, "x");
	send_acceptor_trim(f, 2, UINT64_MAX, UINT64_MAX - 1);
	send_accepted_value(f, UINT64_MAX - 5, 101, 2, value_of("far"), false);
	ck_assert_uint_eq(paxos_learner_highest_seen(f->l), UINT64_MAX);
	send_acceptor_trim(f, 2, 3, 0); /* the acceptor's own next state */
	ck_assert_uint_eq(paxos_learner_highest_seen(f->l), 3);
	for (paxos_time now = 0; now <= 10000; now += 250)
		tick(f, now);
	ck_assert_uint_eq(repeats(f), 0);
	ck_assert_uint_eq(recorder_count(f->rec, PAXOS_MSG_REPAIR, -1), 0);
	ck_assert_uint_eq(f->sink->trimmed, 0);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 4);
	fixture_free(f);
}
END_TEST

/* With a single acceptor, its report alone means the instances are gone. */
START_TEST(test_trimmed_single_acceptor)
{
	struct paxos_counters c = {0};
	struct sink *s = calloc(1, sizeof(*s));
	struct paxos_learner_options o = {.acceptors = 1,
					  .window = 8,
					  .max_value = 8,
					  .repeat_batch = 4,
					  .hole_check = 1000,
					  .deliver = on_deliver,
					  .deliver_arg = s,
					  .trimmed = on_trimmed,
					  .trimmed_arg = s};
	struct paxos_learner *l = paxos_learner_new(&o, &c);
	ck_assert_ptr_nonnull(l);
	s->learner = l;
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_STATE};
	m.u.acceptor_state.highest_accepted = 6; /* instances up to 6 exist */
	paxos_learner_handle(l, &m, 0, NULL);
	m = (struct paxos_message){.type = PAXOS_MSG_TRIMMED};
	m.u.trimmed.acceptor_id = 0;
	m.u.trimmed.iid = 4;
	paxos_learner_handle(l, &m, 0, NULL);
	paxos_learner_handle(l, &m, 250, NULL);
	ck_assert_uint_eq(s->trimmed, 1);
	ck_assert_uint_eq(s->trimmed_from[0], 1);
	ck_assert_uint_eq(s->trimmed_to[0], 4);
	ck_assert_uint_eq(c.instances_skipped_trimmed, 4);
	ck_assert_uint_eq(paxos_learner_next_iid(l), 5);
	paxos_learner_free(l);
	free(s);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("learner_trimmed");

	TCase *trimmed = tcase_create("trimmed");
	tcase_add_test(trimmed, test_trimmed_skips_missing_instances);
	tcase_add_test(trimmed, test_trimmed_held_for_a_snapshot);
	tcase_add_test(trimmed, test_forged_trim_reports_are_refuted);
	tcase_add_test(trimmed, test_trimmed_delivers_what_it_has_first);
	tcase_add_test(trimmed, test_acceptor_state_trim_skips);
	tcase_add_test(trimmed, test_trimmed_without_callback_stops_asking);
	tcase_add_test(trimmed, test_trimmed_beyond_window);
	tcase_add_test(trimmed, test_trimmed_bad_input_ignored);
	tcase_add_test(trimmed, test_trimmed_single_acceptor);
	tcase_add_test(trimmed, test_trimmed_needs_a_quorum);
	tcase_add_test(trimmed, test_one_acceptor_cannot_claim_the_future);
	suite_add_tcase(s, trimmed);

	return s;
}
