/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The learner core closing instances on the leader's word (paxos_accept.chosen_to), as a
 * learning acceptor's learner does, which hears no votes but its own acceptor's: only a value
 * it holds from the leader's accept at the ballot the word names, vouched for by an acceptor
 * of the log, and only within the range named.
 */
#include "check_main.h"

#include "learner_fixture.h"

/* Acceptor 0's vote vouches for the values; acceptors 1 and 2 are never heard. */
START_TEST(test_leader_word_closes_vouched_values)
{
	struct fixture *f = fixture_default();
	for (paxos_iid i = 1; i <= 3; i++) {
		send_accept(f, i, 101, i == 1 ? "a" : i == 2 ? "b" : "c");
		send_valueless(f, i, 101, 0);
	}
	ck_assert_uint_eq(f->sink->delivered, 0); /* one vote is no quorum */
	send_accept_saying(f, 4, 101, "d", 1, 2);
	ck_assert_uint_eq(f->sink->delivered, 2);
	ck_assert_str_eq(f->sink->delivered_value[0], "a");
	ck_assert_str_eq(f->sink->delivered_value[1], "b");
	ck_assert_uint_eq(f->counters.instances_closed_by_leader, 2);
	/* The next word covers 3 and 4; 4 is vouched later, and the word held closes it then. */
	send_accept_saying(f, 5, 101, "e", 1, 4);
	ck_assert_uint_eq(f->sink->delivered, 3);
	send_valueless(f, 4, 101, 0); /* vouched now: the word held closes it */
	ck_assert_uint_eq(f->sink->delivered, 4);
	send_valueless(f, 5, 101, 0);
	send_accept_saying(f, 6, 101, "f", 1, 5);
	ck_assert_uint_eq(f->sink->delivered, 5);
	ck_assert_str_eq(f->sink->delivered_value[4], "e");
	ck_assert_uint_eq(repeats(f), 0);
	fixture_free(f);
}
END_TEST

/* The word is about values proposed at its ballot: one held from another ballot, one no
 * acceptor vouched for, one outside the range and one beyond the word close nothing. */
START_TEST(test_leader_word_closes_only_what_it_names)
{
	struct fixture *f = fixture_default();
	send_accept(f, 1, 101, "old"); /* another leader's, at a lower ballot */
	send_valueless(f, 1, 101, 0);
	send_accept_saying(f, 2, 202, "x", 1, 1);
	ck_assert_uint_eq(f->sink->delivered, 0);

	struct fixture *g = fixture_default();
	send_accept(g, 1, 101, "a"); /* no acceptor's vote: maybe another log's accept */
	send_accept_saying(g, 2, 101, "b", 1, 1);
	ck_assert_uint_eq(g->sink->delivered, 0);
	send_valueless(g, 1, 101, 0); /* vouched now: the word held closes it */
	ck_assert_uint_eq(g->sink->delivered, 1);
	ck_assert_str_eq(g->sink->delivered_value[0], "a");

	struct fixture *h = fixture_default();
	send_accept(h, 1, 101, "a");
	send_valueless(h, 1, 101, 0);
	send_accept(h, 2, 101, "b");
	send_valueless(h, 2, 101, 0);
	send_accept_saying(h, 3, 101, "c", 2, 2); /* 1 is not named: nothing past it */
	ck_assert_uint_eq(h->sink->delivered, 0);
	send_accept_saying(h, 3, 101, "c", 1, 1);
	ck_assert_uint_eq(h->sink->delivered, 1); /* 2 is not named by the last word */
	/* A word of a lower ballot than the one held is ignored. */
	send_accept_saying(h, 4, 99, "z", 1, 2);
	ck_assert_uint_eq(h->sink->delivered, 1);
	fixture_free(f);
	fixture_free(g);
	fixture_free(h);
}
END_TEST

/* An idle leader says on its own what its last accepts left unsaid (paxos_chosen): the same
 * word, with the same limits, closes the last instances before a pause. */
START_TEST(test_chosen_message_closes_the_last_instances)
{
	struct fixture *f = fixture_default();
	for (paxos_iid i = 1; i <= 3; i++) {
		send_accept_saying(f, i, 101,
				   i == 1   ? "a"
				   : i == 2 ? "b"
					    : "c",
				   i > 1 ? 1 : 0, i - 1);
		send_valueless(f, i, 101, 0);
	}
	ck_assert_uint_eq(f->sink->delivered, 2); /* 3 was chosen after the last accept */
	send_chosen(f, 202, 3, 3);                /* 3 holds no value of ballot 202 */
	ck_assert_uint_eq(f->sink->delivered, 2);
	send_chosen(f, 101, 3, 3); /* below the word held, of 202: ignored */
	ck_assert_uint_eq(f->sink->delivered, 2);
	struct fixture *g = fixture_default();
	send_accept(g, 1, 101, "a");
	send_valueless(g, 1, 101, 0);
	send_chosen(g, 101, 1, 1);
	ck_assert_uint_eq(g->sink->delivered, 1);
	ck_assert_str_eq(g->sink->delivered_value[0], "a");
	ck_assert_uint_eq(g->counters.instances_closed_by_leader, 1);
	/* A word held closes a value that comes after it, once vouched for. */
	send_chosen(g, 101, 1, 2);
	send_accept(g, 2, 101, "b");
	ck_assert_uint_eq(g->sink->delivered, 1);
	send_valueless(g, 2, 101, 0);
	ck_assert_uint_eq(g->sink->delivered, 2);
	ck_assert_uint_eq(repeats(g), 0);
	fixture_free(f);
	fixture_free(g);
}
END_TEST

/* The leader's word and the votes agree: an instance closed by a quorum first is delivered
 * once, and the word later changes nothing. */
START_TEST(test_leader_word_after_the_quorum)
{
	struct fixture *f = fixture_default();
	send_accept(f, 1, 101, "a");
	send_valueless(f, 1, 101, 0);
	send_valueless(f, 1, 101, 1);
	ck_assert_uint_eq(f->sink->delivered, 1);
	send_accept_saying(f, 2, 101, "b", 1, 1);
	ck_assert_uint_eq(f->sink->delivered, 1);
	ck_assert_uint_eq(f->sink->closed, 1);
	ck_assert_uint_eq(f->counters.instances_closed_by_leader, 0);
	fixture_free(f);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("learner_leader");
	TCase *tc = tcase_create("learner_leader");
	tcase_add_test(tc, test_leader_word_closes_vouched_values);
	tcase_add_test(tc, test_leader_word_closes_only_what_it_names);
	tcase_add_test(tc, test_leader_word_after_the_quorum);
	tcase_add_test(tc, test_chosen_message_closes_the_last_instances);
	suite_add_tcase(s, tc);
	return s;
}
