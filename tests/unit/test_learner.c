/* SPDX-License-Identifier: BSD-3-Clause */
/* The learner core: quorums, values, in-order delivery, its readies, bad input and options. */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learner_fixture.h"

START_TEST(test_valueless_quorum_delivers_the_accepts_value)
{
	struct fixture *f = fixture_default();
	send_accept(f, 1, 101, "a");
	ck_assert_uint_eq(f->sink->delivered, 0); /* an accept alone decides nothing */
	send_valueless(f, 1, 101, 0);
	ck_assert_uint_eq(f->sink->delivered, 0);
	send_valueless(f, 1, 101, 2);
	ck_assert_uint_eq(f->sink->delivered, 1);
	ck_assert_str_eq(f->sink->delivered_value[0], "a");
	ck_assert_uint_eq(repeats(f), 0);
	fixture_free(f);
}
END_TEST

START_TEST(test_accept_after_the_quorum_closes)
{
	struct fixture *f = fixture_default();
	send_valueless(f, 1, 101, 0);
	send_valueless(f, 1, 101, 1);
	ck_assert_uint_eq(f->sink->delivered, 0);
	send_accept(f, 1, 101, "a"); /* late, but before the repeat's answer */
	ck_assert_uint_eq(f->sink->delivered, 1);
	ck_assert_str_eq(f->sink->delivered_value[0], "a");
	ck_assert_uint_eq(f->sink->closed, 1);
	fixture_free(f);
}
END_TEST

/* Missed the accept: a quarter hole check after the quorum (the accept may only be late), the
 * tick asks a repeat for that instance, and the repeat's answer (with the value) closes it. */
START_TEST(test_missing_value_asks_a_repeat)
{
	struct fixture *f = fixture_default(); /* hole check 1000 */
	tick(f, 0);
	send_valueless(f, 1, 101, 0);
	send_valueless(f, 1, 101, 1);
	ck_assert_uint_eq(repeats(f), 0);
	tick(f, 249);
	ck_assert_uint_eq(repeats(f), 0); /* the accept may still come */
	tick(f, 250);
	ck_assert_uint_eq(repeats(f), 1);
	ck_assert_uint_eq(repeat_at(f, 0)->from, 1);
	ck_assert_uint_eq(repeat_at(f, 0)->to, 1);
	ck_assert_uint_eq(f->counters.repeats_requested, 1);
	tick(f, 500); /* within the hole check: not asked again */
	ck_assert_uint_eq(repeats(f), 1);
	/* The repeat's answer from an acceptor already counted still brings the value. */
	send_accepted(f, 1, 101, 0, "a");
	ck_assert_uint_eq(f->sink->delivered, 1);
	ck_assert_str_eq(f->sink->delivered_value[0], "a");
	fixture_free(f);
}
END_TEST

START_TEST(test_missing_value_asked_again_after_a_hole_check)
{
	struct fixture *f = fixture_default();
	send_valueless(f, 1, 101, 0);
	send_valueless(f, 1, 101, 1);
	tick(f, 250);
	ck_assert_uint_eq(repeats(f), 1);
	tick(f, 1249);
	ck_assert_uint_eq(repeats(f), 1);
	tick(f, 1250); /* again (and the hole check, stalled, asks from next as well) */
	ck_assert_uint_ge(repeats(f), 2);
	ck_assert_uint_eq(repeat_at(f, 1)->from, 1);
	ck_assert_uint_eq(f->sink->delivered, 0);
	send_accept(f, 1, 101, "a"); /* the value at last: delivered, nothing asked any more */
	ck_assert_uint_eq(f->sink->delivered, 1);
	size_t asked = repeats(f);
	tick(f, 5000);
	ck_assert_uint_eq(repeats(f), asked);
	fixture_free(f);
}
END_TEST

/* A value proposed below the quorum's ballot may not be the chosen one: only one at or above
 * it is, once an acceptor of this log reports that ballot (an accept may be of a new log). */
START_TEST(test_value_below_the_quorum_ballot_is_not_delivered)
{
	struct fixture *f = fixture_default();
	send_accept(f, 1, 101, "old");
	send_valueless(f, 1, 202, 0);
	send_valueless(f, 1, 202, 1);
	ck_assert_uint_eq(f->sink->delivered, 0);
	tick(f, 250);
	ck_assert_uint_eq(repeats(f), 1);
	send_accept(f, 1, 303, "new"); /* above the quorum's ballot: Paxos makes it the chosen */
	ck_assert_uint_eq(f->sink->delivered, 0);
	send_valueless(f, 1, 303, 2); /* of this log */
	ck_assert_uint_eq(f->sink->delivered, 1);
	ck_assert_str_eq(f->sink->delivered_value[0], "new");
	fixture_free(f);
}
END_TEST

/* Learning acceptors and plain ones mixed: a final answer with its value closes at once, a
 * valueless vote beside it changes nothing. */
START_TEST(test_final_with_value_among_valueless)
{
	struct fixture *f = fixture_default();
	send_valueless(f, 1, 101, 0);
	send_accepted_value(f, 1, 101, 1, value_of("a"), true);
	ck_assert_uint_eq(f->sink->delivered, 1);
	ck_assert_str_eq(f->sink->delivered_value[0], "a");
	ck_assert_uint_eq(repeats(f), 0);
	fixture_free(f);
}
END_TEST

/* A final answer that left its value out (none is ever sent) counts as a vote only. */
START_TEST(test_final_without_value_is_a_vote)
{
	struct fixture *f = fixture_default();
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted.iid = 1;
	m.u.accepted.ballot = 101;
	m.u.accepted.acceptor_id = 0;
	m.u.accepted.final = true;
	m.u.accepted.valueless = true;
	paxos_learner_handle(f->l, &m, f->now, &f->rec->emitter);
	ck_assert_uint_eq(f->sink->delivered, 0);
	send_valueless(f, 1, 101, 1);
	ck_assert_uint_eq(f->sink->delivered, 0);
	tick(f, 250);
	ck_assert_uint_eq(repeats(f), 1);
	send_accept(f, 1, 101, "a");
	ck_assert_uint_eq(f->sink->delivered, 1);
	fixture_free(f);
}
END_TEST

START_TEST(test_accept_outside_the_window_is_ignored)
{
	struct fixture *f = fixture_default(); /* window 16 */
	send_accept(f, 17, 101, "far");
	send_accept(f, 0, 101, "zero");
	close_instance(f, 1, "a");
	ck_assert_uint_eq(f->sink->delivered, 1);
	send_accept(f, 1, 101, "late"); /* delivered already */
	ck_assert_uint_eq(f->sink->delivered, 1);
	fixture_free(f);
}
END_TEST

START_TEST(test_quorum_of_distinct_acceptors)
{
	struct fixture *f = fixture_default();
	send_accepted(f, 1, 101, 0, "a");
	ck_assert_uint_eq(f->sink->delivered, 0);
	send_accepted(f, 1, 101, 0, "a"); /* the same acceptor again does not count twice */
	ck_assert_uint_eq(f->sink->delivered, 0);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 1);
	send_accepted(f, 1, 101, 2, "a");
	ck_assert_uint_eq(f->sink->delivered, 1);
	ck_assert_uint_eq(f->sink->delivered_iid[0], 1);
	ck_assert_str_eq(f->sink->delivered_value[0], "a");
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 2);
	ck_assert_uint_eq(f->counters.instances_delivered, 1);
	ck_assert_uint_eq(f->counters.bytes_delivered, 1);
	/* The third acceptor arriving late changes nothing. */
	send_accepted(f, 1, 101, 1, "a");
	ck_assert_uint_eq(f->sink->delivered, 1);
	ck_assert_uint_eq(f->sink->closed, 1);
	fixture_free(f);
}
END_TEST

/* Each acceptor counts once, with the latest ballot it reported: a vote it replaced by a
 * higher ballot no longer counts for the lower one. */
START_TEST(test_higher_ballot_replaces_an_acceptors_vote)
{
	struct fixture *f = fixture_default();
	send_accepted(f, 1, 101, 0, "v");
	send_accepted(f, 1, 201, 0, "v");
	send_accepted(f, 1, 101, 0, "v"); /* late duplicate of the replaced vote */
	send_accepted(f, 1, 101, 1, "v");
	ck_assert_uint_eq(f->sink->delivered, 0);
	ck_assert_uint_eq(f->sink->closed, 0);
	send_accepted(f, 1, 201, 2, "v");
	ck_assert_uint_eq(f->sink->delivered, 1);
	ck_assert_str_eq(f->sink->delivered_value[0], "v");
	fixture_free(f);
}
END_TEST

/* A quorum at a ballot below the highest heard of closes the instance (the bug the
 * simulation found: only the highest ballot used to count). The value delivered is the one
 * of the highest ballot, which Paxos makes the chosen one; here the payloads differ only to
 * show which copy is delivered. */
START_TEST(test_lower_quorum_ballot_closes)
{
	struct fixture *f = fixture_default();
	send_accepted(f, 1, 201, 0, "high");
	send_accepted(f, 1, 101, 1, "low");
	ck_assert_uint_eq(f->sink->delivered, 0);
	send_accepted(f, 1, 101, 2, "low");
	ck_assert_uint_eq(f->sink->delivered, 1);
	ck_assert_uint_eq(f->sink->closed, 1);
	ck_assert_str_eq(f->sink->delivered_value[0], "high");

	/* The highest ballot may also arrive after the quorum's first vote. */
	send_accepted(f, 2, 101, 1, "low");
	send_accepted(f, 2, 301, 0, "high");
	send_accepted(f, 2, 101, 2, "low");
	ck_assert_uint_eq(f->sink->delivered, 2);
	ck_assert_str_eq(f->sink->delivered_value[1], "high");
	fixture_free(f);
}
END_TEST

/* Five acceptors: 2, 3 and 4 accepted ballot 502 (chosen), 1 later accepted 601 with the same
 * value from a proposer re-running the instance. Repeats return exactly these records. */
START_TEST(test_minority_at_higher_ballot_does_not_block)
{
	struct sink *s = calloc(1, sizeof(*s));
	struct paxos_counters c = {0};
	struct paxos_learner_options o = {.acceptors = 5,
					  .window = 8,
					  .max_value = 16,
					  .repeat_batch = 4,
					  .hole_check = 1000,
					  .deliver = on_deliver,
					  .deliver_arg = s};
	struct paxos_learner *l = paxos_learner_new(&o, &c);
	ck_assert_ptr_nonnull(l);
	s->learner = l;
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted.iid = 1;
	m.u.accepted.value = value_of("v");
	m.u.accepted.ballot = 601;
	m.u.accepted.acceptor_id = 1;
	paxos_learner_handle(l, &m, 0, NULL);
	m.u.accepted.ballot = 502;
	for (uint32_t a = 2; a <= 4; a++) {
		ck_assert_uint_eq(s->delivered, 0);
		m.u.accepted.acceptor_id = a;
		paxos_learner_handle(l, &m, 0, NULL);
	}
	ck_assert_uint_eq(s->delivered, 1);
	ck_assert_str_eq(s->delivered_value[0], "v");
	/* Acceptor 1 moves up to 601, so its 502 vote is gone: 502 and 601 have two each. */
	m.u.accepted.iid = 2;
	m.u.accepted.ballot = 502;
	for (uint32_t a = 0; a <= 2; a++) {
		m.u.accepted.acceptor_id = a;
		paxos_learner_handle(l, &m, 0, NULL);
		if (a == 1) {
			m.u.accepted.ballot = 601;
			paxos_learner_handle(l, &m, 0, NULL);
			paxos_learner_handle(l, &m, 0, NULL);
			m.u.accepted.ballot = 502;
		}
	}
	m.u.accepted.ballot = 601;
	m.u.accepted.acceptor_id = 3;
	paxos_learner_handle(l, &m, 0, NULL);
	ck_assert_uint_eq(s->delivered, 1);
	m.u.accepted.acceptor_id = 4;
	paxos_learner_handle(l, &m, 0, NULL);
	ck_assert_uint_eq(s->delivered, 2);
	paxos_learner_free(l);
	free(s);
}
END_TEST

START_TEST(test_final_delivers_at_once)
{
	struct fixture *f = fixture_default();
	send_accepted_value(f, 1, 101, 2, value_of("chosen"), true);
	ck_assert_uint_eq(f->sink->delivered, 1);
	ck_assert_str_eq(f->sink->delivered_value[0], "chosen");
	ck_assert_uint_eq(f->sink->closed, 1);
	/* A final after a non-final vote of the same instance also closes it. */
	send_accepted(f, 2, 101, 0, "x");
	send_accepted_value(f, 2, 101, 1, value_of("x"), true);
	ck_assert_uint_eq(f->sink->delivered, 2);
	ck_assert_str_eq(f->sink->delivered_value[1], "x");
	fixture_free(f);
}
END_TEST

START_TEST(test_delivers_in_order_exactly_once)
{
	struct fixture *f = fixture_default();
	close_instance(f, 3, "c");
	close_instance(f, 2, "b");
	ck_assert_uint_eq(f->sink->delivered, 0);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 1);
	ck_assert_uint_eq(paxos_learner_highest_seen(f->l), 3);
	close_instance(f, 1, "a");
	ck_assert_uint_eq(f->sink->delivered, 3);
	const char *expect[] = {"a", "b", "c"};
	for (size_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(f->sink->delivered_iid[i], i + 1);
		ck_assert_str_eq(f->sink->delivered_value[i], expect[i]);
	}
	/* Duplicates of delivered instances, final or not, are ignored. */
	for (paxos_iid iid = 1; iid <= 3; iid++) {
		close_instance(f, iid, "dup");
		send_accepted(f, iid, 301, 2, "dup");
		send_accepted_value(f, iid, 301, 2, value_of("dup"), true);
	}
	ck_assert_uint_eq(f->sink->delivered, 3);
	ck_assert_uint_eq(f->sink->closed, 3);
	ck_assert_uint_eq(f->counters.instances_delivered, 3);
	ck_assert_uint_eq(f->counters.bytes_delivered, 3);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 4);
	fixture_free(f);
}
END_TEST

/* paxos_learner_skip_to: a lean follower taking over skips what was chosen elsewhere; what
 * is closed above the skip is delivered at once, what lies below is neither delivered nor
 * asked for, and a skip backwards changes nothing. */
START_TEST(test_skip_to_known_instance)
{
	struct fixture *f = fixture_default();
	close_instance(f, 2, "b");
	close_instance(f, 6, "f");
	close_instance(f, 7, "g");
	ck_assert_uint_eq(f->sink->delivered, 0);
	paxos_learner_skip_to(f->l, 6);
	ck_assert_uint_eq(f->sink->delivered, 2);
	ck_assert_uint_eq(f->sink->delivered_iid[0], 6);
	ck_assert_str_eq(f->sink->delivered_value[1], "g");
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 8);
	ck_assert_uint_eq(f->counters.instances_skipped_known, 5);
	ck_assert_uint_eq(f->sink->trimmed, 0); /* chosen elsewhere, not lost */
	paxos_learner_skip_to(f->l, 3);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 8);
	/* Instances below are ignored; the next ones are delivered as before. */
	close_instance(f, 4, "d");
	close_instance(f, 8, "h");
	ck_assert_uint_eq(f->sink->delivered, 3);
	ck_assert_str_eq(f->sink->delivered_value[2], "h");
	/* Nothing below the skip is asked for: no hole to repeat. */
	tick(f, 10000);
	ck_assert_uint_eq(repeats(f), 0);
	fixture_free(f);
}
END_TEST

/* Closed out of order, each instance is reported at once; one waiting for a hole is
 * reported again for every accepted that still arrives for it (a proposer may be re-running
 * it), and never again once delivered. */
START_TEST(test_closed_callback_out_of_order)
{
	struct fixture *f = fixture_default();
	close_instance(f, 3, "c");
	ck_assert_uint_eq(f->sink->closed, 1);
	send_accepted(f, 3, 101, 2, "c");
	send_accepted_value(f, 3, 101, 2, value_of("c"), true);
	ck_assert_uint_eq(f->sink->closed, 3);
	close_instance(f, 2, "b");
	ck_assert_uint_eq(f->sink->closed, 4);
	ck_assert_uint_eq(f->sink->closed_iid[0], 3);
	ck_assert_uint_eq(f->sink->closed_iid[1], 3);
	ck_assert_uint_eq(f->sink->closed_iid[2], 3);
	ck_assert_uint_eq(f->sink->closed_iid[3], 2);
	ck_assert_uint_eq(f->sink->delivered, 0);
	close_instance(f, 1, "a");
	ck_assert_uint_eq(f->sink->closed, 5);
	ck_assert_uint_eq(f->sink->closed_iid[4], 1);
	ck_assert_uint_eq(f->sink->delivered, 3);
	send_accepted(f, 3, 101, 2, "c"); /* delivered: nothing more to say */
	send_accepted(f, 1, 101, 2, "a");
	ck_assert_uint_eq(f->sink->closed, 5);
	fixture_free(f);
}
END_TEST

START_TEST(test_deliver_sees_consistent_state)
{
	struct fixture *f = fixture_default();
	close_instance(f, 2, "b");
	close_instance(f, 1, "a");
	ck_assert_uint_eq(f->sink->delivered, 2);
	/* The callbacks run from the step's ready: the learner already counts as delivered
	 * every instance the step delivered. */
	ck_assert_uint_eq(f->sink->next_during_deliver[0], 3);
	ck_assert_uint_eq(f->sink->next_during_deliver[1], 3);
	fixture_free(f);
}
END_TEST

/* An accepted message for iid from acceptor, at ballot 101, not final. */
static struct paxos_message accepted_msg(paxos_iid iid, uint32_t acceptor, const char *value)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted.iid = iid;
	m.u.accepted.ballot = 101;
	m.u.accepted.value = value_of(value);
	m.u.accepted.acceptor_id = acceptor;
	return m;
}

/* Steps m, which must close something: the last event of the ready it made. */
static const struct paxos_learner_event *closing_step(struct fixture *f,
						      const struct paxos_message *m)
{
	struct paxos_learner_ready rd;
	ck_assert_int_eq(paxos_learner_step(f->l, m, 0, &f->rec->emitter), PAXOS_OK);
	ck_assert(paxos_learner_ready(f->l, &rd));
	return &rd.events[rd.event_count - 1];
}

/* The events say the ballot their value was proposed at: 101 for one closed by accepted
 * messages of 101; none (0) for a final value kept under a higher ballot heard for another
 * value, since that ballot's value may differ from the chosen one, nor for a final value
 * whose label no accept of those bytes at that ballot confirmed; the quorum's ballot for a
 * final value whose accept was lost after a quorum accepted it. */
START_TEST(test_events_say_the_value_ballot)
{
	struct fixture *f = fixture_default();
	struct paxos_learner *l = f->l;
	struct paxos_learner_ready rd;
	struct paxos_message m = accepted_msg(1, 0, "a");
	ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_OK);
	m = accepted_msg(1, 1, "a");
	ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_OK);
	ck_assert(paxos_learner_ready(l, &rd));
	ck_assert_uint_eq(rd.event_count, 2);
	ck_assert_uint_eq(rd.events[0].ballot, 101);
	ck_assert_int_eq(rd.events[1].kind, PAXOS_LEARNER_DELIVERED);
	ck_assert_uint_eq(rd.events[1].ballot, 101);
	paxos_learner_advance(l);
	/* Instance 2: "x" heard at 300, then "y" said final by an acceptor that accepted it
	 * at 200: "y" is delivered, and no ballot is claimed for it. */
	m = accepted_msg(2, 0, "x");
	m.u.accepted.ballot = 300;
	ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_OK);
	paxos_learner_advance(l);
	m = accepted_msg(2, 2, "y");
	m.u.accepted.ballot = 200;
	m.u.accepted.final = true;
	ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_OK);
	ck_assert(paxos_learner_ready(l, &rd));
	ck_assert_uint_eq(rd.event_count, 2);
	ck_assert_int_eq(rd.events[1].kind, PAXOS_LEARNER_DELIVERED);
	ck_assert_mem_eq(rd.events[1].value.data, "y", 1);
	ck_assert_uint_eq(rd.events[1].ballot, 0);
	paxos_learner_advance(l);
	/* Instance 3: said final at 400, nothing heard before. An acceptor that learned the
	 * decision without accepting labels it with its promise: 400 may be the ballot of a
	 * proposer whose own value differs. No ballot is claimed. */
	m = accepted_msg(3, 2, "z");
	m.u.accepted.ballot = 400;
	m.u.accepted.final = true;
	ck_assert_uint_eq(closing_step(f, &m)->ballot, 0);
	paxos_learner_advance(l);
	/* Instance 4: "w" accepted at 500, then said final at 500 with the same bytes: 500. */
	m = accepted_msg(4, 0, "w");
	m.u.accepted.ballot = 500;
	ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_OK);
	paxos_learner_advance(l);
	m = accepted_msg(4, 2, "w");
	m.u.accepted.ballot = 500;
	m.u.accepted.final = true;
	ck_assert_uint_eq(closing_step(f, &m)->ballot, 500);
	paxos_learner_advance(l);
	/* Instance 5: the proposer of 600 sent "o" (its own value, heard here), and "c" is
	 * said final under 600 by an acceptor that promised 600 but never accepted: "c" is
	 * delivered with no ballot, so that proposer cannot take it for its own "o". */
	m = accepted_msg(5, 0, "o");
	m.u.accepted.ballot = 600;
	ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_OK);
	paxos_learner_advance(l);
	m = accepted_msg(5, 2, "c");
	m.u.accepted.ballot = 600;
	m.u.accepted.final = true;
	const struct paxos_learner_event *e = closing_step(f, &m);
	ck_assert_int_eq(e->kind, PAXOS_LEARNER_DELIVERED);
	ck_assert_mem_eq(e->value.data, "c", 1);
	ck_assert_uint_eq(e->ballot, 0);
	paxos_learner_advance(l);
	/* Instance 6: a quorum accepted at 700 and the leader's accept, the value, was lost;
	 * the value then said final under 900 (an acceptor's promise) is the one chosen at 700,
	 * so proposed there: 700. A new leader's first instance heard this way still names it. */
	m = accepted_msg(6, 0, "");
	m.u.accepted.ballot = 700;
	m.u.accepted.valueless = true;
	ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_OK);
	m.u.accepted.acceptor_id = 1;
	ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_OK);
	ck_assert(!paxos_learner_ready(l, &rd) || rd.event_count == 0);
	paxos_learner_advance(l);
	m = accepted_msg(6, 2, "n");
	m.u.accepted.ballot = 900;
	m.u.accepted.final = true;
	e = closing_step(f, &m);
	ck_assert_int_eq(e->kind, PAXOS_LEARNER_DELIVERED);
	ck_assert_mem_eq(e->value.data, "n", 1);
	ck_assert_uint_eq(e->ballot, 700);
	paxos_learner_advance(l);
	fixture_free(f);
}
END_TEST

/* A step returns what it decided as data, in order, and calls no callback; the values stay
 * valid until the advance; no step is taken while a ready waits. */
START_TEST(test_step_returns_a_ready)
{
	struct fixture *f = fixture_default();
	struct paxos_learner *l = f->l;
	struct paxos_learner_ready rd;
	struct paxos_message m = accepted_msg(2, 0, "b");
	ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_OK);
	ck_assert(!paxos_learner_ready(l, &rd));
	m = accepted_msg(2, 1, "b");
	ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_OK);
	ck_assert(paxos_learner_ready(l, &rd));
	ck_assert_uint_eq(rd.event_count, 1);
	ck_assert_int_eq(rd.events[0].kind, PAXOS_LEARNER_CLOSED);
	ck_assert_uint_eq(rd.events[0].iid, 2);
	ck_assert_uint_eq(rd.events[0].value.len, 1);
	ck_assert_mem_eq(rd.events[0].value.data, "b", 1);
	/* Not advanced: the next step is refused and changes nothing. */
	m = accepted_msg(1, 0, "a");
	ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_E_INVALID);
	paxos_learner_advance(l);
	ck_assert(!paxos_learner_ready(l, &rd));
	ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_OK);
	m = accepted_msg(1, 1, "a");
	ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_OK);
	ck_assert(paxos_learner_ready(l, &rd));
	/* Closing 1 delivers 1 and then 2, in that order, after saying 1 is closed. */
	ck_assert_uint_eq(rd.event_count, 3);
	ck_assert_int_eq(rd.events[0].kind, PAXOS_LEARNER_CLOSED);
	ck_assert_uint_eq(rd.events[0].iid, 1);
	ck_assert_int_eq(rd.events[1].kind, PAXOS_LEARNER_DELIVERED);
	ck_assert_uint_eq(rd.events[1].iid, 1);
	ck_assert_mem_eq(rd.events[1].value.data, "a", 1);
	ck_assert_int_eq(rd.events[2].kind, PAXOS_LEARNER_DELIVERED);
	ck_assert_uint_eq(rd.events[2].iid, 2);
	ck_assert_mem_eq(rd.events[2].value.data, "b", 1);
	ck_assert_uint_eq(paxos_learner_next_iid(l), 3);
	paxos_learner_advance(l);
	/* No callback ran: the sink heard nothing. */
	ck_assert_uint_eq(f->sink->delivered, 0);
	ck_assert_uint_eq(f->sink->closed, 0);
	fixture_free(f);
}
END_TEST

/* A trim a quorum reports is a TRIMMED event of the ready, followed by what it lets deliver;
 * a skip is a step too. */
START_TEST(test_step_trims_and_skips_into_the_ready)
{
	struct fixture *f = fixture_default();
	struct paxos_learner *l = f->l;
	struct paxos_learner_ready rd;
	struct paxos_message m = accepted_msg(6, 0, "f");
	for (uint32_t a = 0; a < 2; a++) {
		m = accepted_msg(6, a, "f");
		ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_OK);
		paxos_learner_advance(l);
	}
	for (uint32_t a = 0; a < 2; a++) {
		m = (struct paxos_message){.type = PAXOS_MSG_TRIMMED};
		m.u.trimmed.acceptor_id = a;
		m.u.trimmed.iid = 5;
		ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_OK);
	}
	ck_assert(!paxos_learner_ready(l, &rd)); /* it asks first */
	ck_assert_int_eq(paxos_learner_step(l, &m, 250, &f->rec->emitter), PAXOS_OK);
	ck_assert(paxos_learner_ready(l, &rd));
	ck_assert_uint_eq(rd.event_count, 2);
	ck_assert_int_eq(rd.events[0].kind, PAXOS_LEARNER_TRIMMED);
	ck_assert_uint_eq(rd.events[0].iid, 1);
	ck_assert_uint_eq(rd.events[0].to, 5);
	ck_assert_int_eq(rd.events[1].kind, PAXOS_LEARNER_DELIVERED);
	ck_assert_uint_eq(rd.events[1].iid, 6);
	ck_assert_int_eq(paxos_learner_step_skip_to(l, 9), PAXOS_E_INVALID);
	paxos_learner_advance(l);
	for (uint32_t a = 0; a < 2; a++) {
		m = accepted_msg(9, a, "i");
		ck_assert_int_eq(paxos_learner_step(l, &m, 0, &f->rec->emitter), PAXOS_OK);
		paxos_learner_advance(l);
	}
	ck_assert_int_eq(paxos_learner_step_skip_to(l, 9), PAXOS_OK);
	ck_assert(paxos_learner_ready(l, &rd));
	ck_assert_uint_eq(rd.event_count, 1);
	ck_assert_int_eq(rd.events[0].kind, PAXOS_LEARNER_DELIVERED);
	ck_assert_uint_eq(rd.events[0].iid, 9);
	paxos_learner_advance(l);
	ck_assert_uint_eq(f->sink->delivered, 0);
	ck_assert_uint_eq(f->sink->trimmed, 0);
	fixture_free(f);
}
END_TEST

START_TEST(test_bad_input_ignored)
{
	struct fixture *f = fixture_default(); /* 3 acceptors, max_value 64 */
	send_accepted(f, 1, 101, 0, "a");
	send_accepted(f, 1, 101, 3, "a");
	send_accepted(f, 1, 101, 1000, "a");
	send_accepted_value(f, 2, 101, 7, value_of("z"), true);
	ck_assert_uint_eq(f->sink->delivered, 0);
	ck_assert_uint_eq(paxos_learner_highest_seen(f->l), 1);

	char big[66];
	memset(big, 'b', 65);
	big[65] = '\0';
	send_accepted_value(f, 1, 101, 1, value_of(big), true);
	send_accepted(f, 1, 101, 1, big);
	ck_assert_uint_eq(f->sink->delivered, 0);
	struct paxos_value nodata = {NULL, 3};
	send_accepted_value(f, 1, 101, 1, nodata, true);
	ck_assert_uint_eq(f->sink->delivered, 0);

	send_accepted_value(f, 0, 101, 1, value_of("zero"), true); /* iid 0 does not exist */
	struct paxos_message other = {.type = PAXOS_MSG_PREPARE};
	paxos_learner_handle(f->l, &other, 0, &f->rec->emitter);
	other.type = (enum paxos_msg_type)77;
	paxos_learner_handle(f->l, &other, 0, &f->rec->emitter);
	ck_assert_uint_eq(f->sink->delivered, 0);
	ck_assert_uint_eq(f->rec->count, 0);

	/* The largest allowed value (64 bytes, under the a-ballot) closes instance 1. */
	big[64] = '\0';
	send_accepted(f, 1, 201, 1, big);
	send_accepted(f, 1, 201, 2, big);
	ck_assert_uint_eq(f->sink->delivered, 1);
	ck_assert_uint_eq(f->counters.bytes_delivered, 64);
	fixture_free(f);
}
END_TEST

START_TEST(test_bad_options_rejected)
{
	struct paxos_counters c = {0};
	struct sink *s = calloc(1, sizeof(*s));
	struct paxos_learner_options o = {.acceptors = 3,
					  .window = 8,
					  .max_value = 16,
					  .repeat_batch = 4,
					  .hole_check = 1000,
					  .deliver = on_deliver,
					  .deliver_arg = s};
	struct paxos_learner *l = paxos_learner_new(&o, &c);
	ck_assert_ptr_nonnull(l);
	paxos_learner_free(l);
	struct paxos_learner_options bad = o;
	bad.acceptors = 0;
	ck_assert_ptr_null(paxos_learner_new(&bad, &c));
	bad = o;
	bad.acceptors = PAXOS_MAX_ACCEPTORS + 1;
	ck_assert_ptr_null(paxos_learner_new(&bad, &c));
	bad = o;
	bad.window = 0;
	ck_assert_ptr_null(paxos_learner_new(&bad, &c));
	bad = o;
	bad.deliver = NULL; /* a driver that takes the readies needs none */
	l = paxos_learner_new(&bad, &c);
	ck_assert_ptr_nonnull(l);
	paxos_learner_free(l);
	bad = o;
	bad.repeat_batch = 0;
	ck_assert_ptr_null(paxos_learner_new(&bad, &c));
	paxos_learner_free(NULL);
	free(s);
}
END_TEST

START_TEST(test_thirty_two_acceptors)
{
	struct paxos_counters c = {0};
	struct sink *s = calloc(1, sizeof(*s));
	struct paxos_learner_options o = {.acceptors = 32,
					  .window = 4,
					  .max_value = 8,
					  .repeat_batch = 4,
					  .hole_check = 1000,
					  .deliver = on_deliver,
					  .deliver_arg = s};
	struct paxos_learner *l = paxos_learner_new(&o, &c);
	ck_assert_ptr_nonnull(l);
	s->learner = l;
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted.iid = 1;
	m.u.accepted.ballot = 101;
	m.u.accepted.value = value_of("v");
	for (uint32_t a = 31; a >= 16; a--) { /* 16 of 32: not yet a quorum of 17 */
		m.u.accepted.acceptor_id = a;
		paxos_learner_handle(l, &m, 0, NULL);
	}
	ck_assert_uint_eq(s->delivered, 0);
	m.u.accepted.acceptor_id = 0;
	paxos_learner_handle(l, &m, 0, NULL);
	ck_assert_uint_eq(s->delivered, 1);
	paxos_learner_free(l);
	free(s);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("learner");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_quorum_of_distinct_acceptors);
	tcase_add_test(tc, test_step_returns_a_ready);
	tcase_add_test(tc, test_events_say_the_value_ballot);
	tcase_add_test(tc, test_step_trims_and_skips_into_the_ready);
	tcase_add_test(tc, test_valueless_quorum_delivers_the_accepts_value);
	tcase_add_test(tc, test_accept_after_the_quorum_closes);
	tcase_add_test(tc, test_missing_value_asks_a_repeat);
	tcase_add_test(tc, test_missing_value_asked_again_after_a_hole_check);
	tcase_add_test(tc, test_value_below_the_quorum_ballot_is_not_delivered);
	tcase_add_test(tc, test_final_with_value_among_valueless);
	tcase_add_test(tc, test_final_without_value_is_a_vote);
	tcase_add_test(tc, test_accept_outside_the_window_is_ignored);
	tcase_add_test(tc, test_higher_ballot_replaces_an_acceptors_vote);
	tcase_add_test(tc, test_lower_quorum_ballot_closes);
	tcase_add_test(tc, test_minority_at_higher_ballot_does_not_block);
	tcase_add_test(tc, test_final_delivers_at_once);
	tcase_add_test(tc, test_delivers_in_order_exactly_once);
	tcase_add_test(tc, test_closed_callback_out_of_order);
	tcase_add_test(tc, test_deliver_sees_consistent_state);
	tcase_add_test(tc, test_bad_input_ignored);
	tcase_add_test(tc, test_bad_options_rejected);
	tcase_add_test(tc, test_thirty_two_acceptors);
	tcase_add_test(tc, test_skip_to_known_instance);
	suite_add_tcase(s, tc);
	return s;
}
