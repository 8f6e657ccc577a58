/* SPDX-License-Identifier: BSD-3-Clause */
/* The learner core across logs: a new log (generation) begun by the acceptors. */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learner_fixture.h"

/* ---- generations: a new log (acceptor/recovery.c) ---- */

static void send_gen_accepted(struct fixture *f, paxos_iid iid, paxos_ballot ballot,
			      uint32_t acceptor, const char *value, uint64_t generation)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted = (struct paxos_accepted){.iid = iid,
					       .ballot = ballot,
					       .value = value_of(value),
					       .acceptor_id = acceptor,
					       .generation = generation};
	paxos_learner_handle(f->l, &m, f->now, &f->rec->emitter);
}

static void send_gen_state(struct fixture *f, uint32_t acceptor, paxos_iid highest,
			   uint64_t generation)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_STATE};
	m.u.acceptor_state = (struct paxos_acceptor_state){
	    .acceptor_id = acceptor, .highest_accepted = highest, .generation = generation};
	paxos_learner_handle(f->l, &m, 0, &f->rec->emitter);
}

static uint64_t new_log_generation;
static size_t new_log_calls, delivered_at_new_log;

static void on_new_log(void *arg, uint64_t generation)
{
	struct sink *s = arg;
	new_log_generation = generation;
	delivered_at_new_log = s->delivered;
	new_log_calls++;
}

/*
 * A learner that delivered instances 1..3 of log 0 hears log 1: one acceptor's word is not
 * enough (it may be stale or forged); a quorum's is. Then it says so (before anything of the
 * new log), drops what it held of the old one, delivers the new log from instance 1, never
 * two values under one instance of one log, and ignores whatever comes late from the old log.
 */
START_TEST(test_new_log_restarts_at_instance_one)
{
	struct fixture *f = fixture_default();
	new_log_calls = 0;
	paxos_learner_free(f->l);
	f->opt.new_log = on_new_log;
	f->opt.new_log_arg = f->sink;
	f->l = paxos_learner_new(&f->opt, &f->counters);
	f->sink->learner = f->l;
	for (paxos_iid i = 1; i <= 3; i++)
		close_instance(f, i, "old");
	send_accepted(f, 5, 101, 0, "held"); /* one vote of the old log, held */
	ck_assert_uint_eq(f->sink->delivered, 3);
	ck_assert_uint_eq(paxos_learner_generation(f->l), 0);
	/* Acceptor 2 alone in log 1: not followed, its vote not counted anywhere. */
	send_gen_accepted(f, 1, 901, 2, "new1", 1);
	send_gen_state(f, 2, 1, 1);
	ck_assert_uint_eq(paxos_learner_generation(f->l), 0);
	ck_assert_uint_eq(new_log_calls, 0);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 4);
	/* Acceptor 0 too: a quorum serves log 1. */
	send_gen_state(f, 0, 1, 1);
	ck_assert_uint_eq(paxos_learner_generation(f->l), 1);
	ck_assert_uint_eq(new_log_calls, 1);
	ck_assert_uint_eq(new_log_generation, 1);
	ck_assert_uint_eq(delivered_at_new_log, 3);
	ck_assert_uint_eq(f->counters.new_logs, 1);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 1);
	/* The old log's late messages count for nothing. */
	send_accepted(f, 5, 101, 1, "held");
	send_accepted(f, 1, 101, 0, "old");
	send_accepted(f, 1, 101, 1, "old");
	ck_assert_uint_eq(f->sink->delivered, 3);
	/* Instance 1 of log 1 closes with log 1's votes. */
	send_gen_accepted(f, 1, 901, 0, "new1", 1);
	send_gen_accepted(f, 1, 901, 2, "new1", 1);
	ck_assert_uint_eq(f->sink->delivered, 4);
	ck_assert_uint_eq(f->sink->delivered_iid[3], 1);
	ck_assert_str_eq(f->sink->delivered_value[3], "new1");
	send_gen_accepted(f, 2, 901, 0, "new2", 1);
	send_gen_accepted(f, 2, 901, 1, "new2", 1);
	ck_assert_uint_eq(f->sink->delivered, 5);
	ck_assert_uint_eq(f->sink->delivered_iid[4], 2);
	/* A lower generation never comes back; log 1 again changes nothing. */
	send_gen_state(f, 0, 9, 0);
	send_gen_state(f, 1, 9, 0);
	send_gen_state(f, 2, 2, 1);
	ck_assert_uint_eq(paxos_learner_generation(f->l), 1);
	ck_assert_uint_eq(new_log_calls, 1);
	ck_assert_uint_eq(paxos_learner_next_iid(f->l), 3);
	fixture_free(f);
}
END_TEST

/* A learner started at instance 11 from state of log 0 (a snapshot) hears a quorum serve
 * log 1: its state is of a log every acceptor lost, so it says "new log" and delivers log 1
 * from instance 1. Without the start's generation it takes log 1 silently from 11. */
START_TEST(test_new_log_after_a_start_of_a_known_log)
{
	for (int known = 0; known <= 1; known++) {
		struct fixture *f = fixture_default();
		new_log_calls = 0;
		paxos_learner_free(f->l);
		f->opt.new_log = on_new_log;
		f->opt.new_log_arg = f->sink;
		f->opt.start_iid = 11;
		f->opt.start_generation = 0;
		f->opt.start_generation_known = known;
		f->l = paxos_learner_new(&f->opt, &f->counters);
		f->sink->learner = f->l;
		/* Log 0 as before: nothing new. */
		send_gen_state(f, 0, 10, 0);
		send_gen_state(f, 1, 10, 0);
		ck_assert_uint_eq(new_log_calls, 0);
		ck_assert_uint_eq(paxos_learner_next_iid(f->l), 11);
		send_gen_state(f, 0, 1, 1);
		send_gen_state(f, 1, 1, 1);
		ck_assert_uint_eq(paxos_learner_generation(f->l), 1);
		ck_assert_uint_eq(new_log_calls, (size_t)known);
		ck_assert_uint_eq(f->counters.new_logs, (uint64_t)known);
		ck_assert_uint_eq(paxos_learner_next_iid(f->l), known ? 1 : 11);
		send_gen_accepted(f, 1, 901, 0, "new1", 1);
		send_gen_accepted(f, 1, 901, 1, "new1", 1);
		ck_assert_uint_eq(f->sink->delivered, (size_t)known);
		fixture_free(f);
	}
}
END_TEST

/* A learner that delivered nothing takes the first log a quorum reports without a word; the
 * votes of a log it does not follow yet are not counted. */
START_TEST(test_first_log_taken_silently)
{
	struct fixture *f = fixture_default();
	send_gen_accepted(f, 1, 901, 0, "a", 3);
	ck_assert_uint_eq(paxos_learner_generation(f->l), 0);
	send_gen_accepted(f, 1, 901, 1, "a", 3);
	ck_assert_uint_eq(paxos_learner_generation(f->l), 3);
	ck_assert_uint_eq(f->counters.new_logs, 0);
	ck_assert_uint_eq(f->sink->delivered, 0); /* acceptor 0's vote was of no log yet */
	send_gen_accepted(f, 1, 901, 2, "a", 3);
	ck_assert_uint_eq(f->sink->delivered, 1);
	ck_assert_uint_eq(f->sink->delivered_iid[0], 1);
	fixture_free(f);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("learner_logs");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_new_log_restarts_at_instance_one);
	tcase_add_test(tc, test_new_log_after_a_start_of_a_known_log);
	tcase_add_test(tc, test_first_log_taken_silently);
	suite_add_tcase(s, tc);
	return s;
}
