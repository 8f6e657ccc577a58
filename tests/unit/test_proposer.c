/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proposer's window and its phases (thesis Fig. 3.1), through its public API against the
 * acceptors and learner of proposer_fixture.h: options, pre-execution of phase 1, skips,
 * concurrency and pending limits, refusals, timeouts and rejects.
 */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "config_fields.h"
#include "proposer_fixture.h"
#include "support.h"

/*
 * A learner stalled on instance 1, which the leader decided and delivered: the leader runs it
 * again, phase 1 above every ballot it used, then phase 2 with the value phase 1 finds (the
 * learner of this test checks that a second quorum agrees with the first). A follower ignores
 * the request; the leader ignores instances it has not opened.
 */
START_TEST(test_repair_runs_a_decided_instance_again)
{
	struct sim *s = sim_new(4, 4, 8);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	send_repair(s, 1, 1); /* not leading yet */
	ck_assert_uint_eq(s->net_len, 0);
	lead(s);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	paxos_ballot used = 0;
	for (paxos_iid iid = 1; iid <= 4; iid++)
		for (uint32_t k = 0; k < s->nprepares[iid]; k++)
			if (s->prepares[iid][k] > used)
				used = s->prepares[iid][k];
	uint32_t before = s->nprepares[1];
	send_repair(s, 1, 1);
	send_repair(s, 1, 1); /* a second learner: one repair runs */
	ck_assert_uint_eq(s->nprepares[1], before + 1);
	ck_assert_uint_gt(s->prepares[1][before], used);
	s->accept_sent[1] = false;
	run(s);
	ck_assert(s->accept_sent[1]);
	ck_assert_uint_eq(s->counters.instances_repaired, 1);
	ck_assert_uint_eq(s->ndelivered, 1); /* nothing new, nothing twice */
	/* Once its phase 2 wait passed, the repair is over; a new request starts another. */
	advance(s, PHASE2_TIMEOUT);
	send_repair(s, 1, 1);
	ck_assert_uint_eq(s->nprepares[1], before + 2);
	run(s);
	ck_assert_uint_eq(s->counters.instances_repaired, 2);
	/* Beyond the window: not opened yet, nothing to repair. */
	send_repair(s, 50, 60);
	ck_assert_uint_eq(s->net_len, 0);
	sim_free(s);
}
END_TEST

START_TEST(test_options_from_config)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	cfg.acceptors = 5;
	cfg.proposer_window = 77;
	cfg.proposer_concurrency = 9;
	cfg.pending_size = 333;
	cfg.phase1_timeout_ms = 12;
	cfg.phase2_timeout_ms = 34;
	struct paxos_proposer_options o;
	paxos_proposer_options_from_config(&o, &cfg, 4);
	ck_assert_uint_eq(o.id, 4);
	ck_assert_uint_eq(o.acceptors, 5);
	ck_assert_uint_eq(o.window, 77);
	ck_assert_uint_eq(o.concurrency, 9);
	ck_assert_uint_eq(o.pending_size, 333);
	ck_assert_uint_eq(o.max_value, paxos_config_max_instance_value(&cfg));
	ck_assert_uint_eq(o.max_value, paxos_config_max_value(&cfg) + PAXOS_BATCH_HEADER);
	ck_assert_uint_eq(o.batch_limit, 64);
	ck_assert_uint_eq(o.max_backlog, 32);
	ck_assert_uint_eq(o.phase1_timeout, 12000);
	ck_assert_uint_eq(o.phase2_timeout, 34000);
	struct paxos_proposer *p = paxos_proposer_new(&o, NULL);
	ck_assert_ptr_nonnull(p);
	paxos_proposer_free(p);
}
END_TEST

START_TEST(test_bad_options)
{
	struct paxos_proposer_options good = {.id = 1,
					      .acceptors = 3,
					      .window = 4,
					      .concurrency = 1,
					      .pending_size = 4,
					      .max_value = 16};
	struct paxos_proposer_options o = good;
	o.id = PAXOS_MAX_PROPOSERS;
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o = good;
	o.acceptors = PAXOS_MAX_ACCEPTORS + 1;
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o = good;
	o.window = 0;
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o = good;
	o.concurrency = 0;
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o = good;
	o.max_value = 0;
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o.max_value = PAXOS_BATCH_HEADER; /* no room for a framed value */
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o = good;
	o.epoch = PAXOS_PROPOSER_EPOCH_LIMIT;
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o.epoch = PAXOS_PLAUSIBLE_EPOCHS; /* its ballots would be dropped as implausible */
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o.epoch = PAXOS_PLAUSIBLE_EPOCHS - 1;
	struct paxos_proposer *last = paxos_proposer_new(&o, NULL);
	ck_assert_ptr_nonnull(last);
	paxos_proposer_free(last);
	ck_assert_ptr_null(paxos_proposer_new(NULL, NULL));
	paxos_proposer_free(NULL);
}
END_TEST

START_TEST(test_leader_preexecutes_window)
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
	ck_assert(!paxos_proposer_is_leader(p));
	ck_assert_uint_eq(paxos_proposer_ballot(p), 0);
	paxos_proposer_set_leader(p, true, 1, 0, &r->emitter);
	ck_assert(paxos_proposer_is_leader(p));
	ck_assert_uint_eq(paxos_proposer_ballot(p), 102);
	ck_assert_uint_eq(paxos_proposer_window_in_use(p), 0); /* phase 1 only, no value */
	ck_assert_uint_eq(r->count, 5);
	for (size_t i = 0; i < 5; i++) {
		ck_assert_int_eq(r->group[i], PAXOS_GROUP_ACCEPTORS);
		ck_assert_int_eq(r->msg[i].type, PAXOS_MSG_PREPARE);
		ck_assert_uint_eq(r->msg[i].u.prepare.iid, i + 1);
		ck_assert_uint_eq(r->msg[i].u.prepare.ballot, 102);
	}
	/* Leading again changes nothing: every instance is started. */
	recorder_clear(r);
	paxos_proposer_set_leader(p, true, 1, 0, &r->emitter);
	ck_assert_uint_eq(r->count, 0);
	recorder_free(r);
	paxos_proposer_free(p);
}
END_TEST

/*
 * learner-merge: a leader that proposed nothing for skip_idle closes its next instance with a
 * skip, one at a time (not while one is in phase 2), and none while values wait; a follower
 * proposes none. Skips are chosen like values and client values still go in order after them.
 */
START_TEST(test_idle_leader_proposes_skips)
{
	sim_skip_idle = 10000;
	struct sim *s = sim_new(5, 3, 8);
	sim_skip_idle = 0;
	advance(s, 50000); /* not leading: nothing */
	run(s);
	ck_assert_uint_eq(s->counters.skips_proposed, 0);
	lead(s);
	run(s);
	advance(s, 5000); /* idle, but not for long enough yet */
	run(s);
	ck_assert_uint_eq(s->ninstances, 0);
	advance(s, 6000);
	ck_assert_uint_eq(s->net_len, 1); /* one accept, with the skip frame */
	ck_assert_int_eq(s->net[0].m.type, PAXOS_MSG_ACCEPT);
	ck_assert(paxos_batch_is_skip(&s->net[0].m.u.accept.value));
	ck_assert_uint_eq(s->counters.values_proposed, 0);
	advance(s, 20000); /* still in phase 2: no second skip */
	ck_assert_uint_eq(s->counters.skips_proposed, 1);
	run(s);
	ck_assert_uint_eq(s->ninstances, 1);
	ck_assert_uint_eq(s->nskips, 1);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	run(s);
	advance(s, 5000); /* busy recently: no skip */
	run(s);
	ck_assert_uint_eq(s->counters.skips_proposed, 1);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "a");
	ck_assert_uint_eq(s->delivered_iid[0], 2);
	advance(s, 11000);
	run(s);
	ck_assert_uint_eq(s->counters.skips_proposed, 2);
	ck_assert_uint_eq(s->nskips, 2);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 0);
	sim_free(s);
}
END_TEST

/*
 * A new leader that may lack the clients' values announces its ballot: once phase 1 is done it
 * closes one instance with a skip (learners deliver an instance of the new leadership, and
 * their clients submit again; paxos_node_on_new_leader). A follower announces nothing, and
 * values waiting announce the ballot themselves: no skip then.
 */
START_TEST(test_new_leader_announces_itself_with_a_skip)
{
	struct sim *s = sim_new(5, 3, 8);
	paxos_proposer_announce(s->p, s->now, &s->out); /* not leading: nothing */
	run(s);
	ck_assert_uint_eq(s->counters.skips_proposed, 0);
	lead(s);
	paxos_proposer_announce(s->p, s->now, &s->out);
	run(s);
	ck_assert_uint_eq(s->counters.skips_proposed, 1);
	ck_assert_uint_eq(s->ninstances, 1);
	ck_assert_uint_eq(s->nskips, 1);
	ck_assert_uint_eq(s->ndelivered, 0);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK); /* values go on after it */
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_uint_eq(s->delivered_iid[0], 2);
	advance(s, 1000000); /* one skip per announcement, none when idle (no skip_idle) */
	run(s);
	ck_assert_uint_eq(s->counters.skips_proposed, 1);

	paxos_proposer_set_leader(s->p, false, 0, s->now, &s->out);
	ck_assert_int_eq(submit(s, "b"), PAXOS_OK);
	paxos_proposer_set_leader(s->p, true, 3, s->now, &s->out);
	paxos_proposer_announce(s->p, s->now, &s->out); /* "b" waits: it announces */
	run(s);
	ck_assert_uint_eq(s->counters.skips_proposed, 1);
	ck_assert_uint_eq(s->ndelivered, 2);
	ck_assert_str_eq(s->delivered[1], "b");
	ck_assert_uint_eq(s->delivered_iid[1], 3);
	sim_free(s);
}
END_TEST

START_TEST(test_non_leader_sends_nothing)
{
	struct sim *s = sim_new(4, 2, 8);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	struct paxos_message m = {.type = PAXOS_MSG_PROMISE};
	m.u.promise = (struct paxos_promise){.iid = 1, .ballot = 102, .acceptor_id = 0};
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	advance(s, 1000000);
	ck_assert_uint_eq(s->net_len, 0);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	ck_assert_uint_eq(s->counters.phase2_waited_phase1, 0);
	sim_free(s);
}
END_TEST

START_TEST(test_accept_right_after_phase1)
{
	struct sim *s = sim_new(5, 3, 8);
	lead(s);
	run(s); /* phase 1 for the window; no value yet: NV */
	ck_assert_uint_eq(s->net_len, 0);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	/* The accept leaves within submit: no phase 1 on the way. */
	ck_assert_uint_eq(s->net_len, 1);
	ck_assert_int_eq(s->net[0].m.type, PAXOS_MSG_ACCEPT);
	ck_assert_uint_eq(s->net[0].m.u.accept.iid, 1);
	ck_assert_uint_eq(s->net[0].m.u.accept.ballot, 102);
	ck_assert(frame1_is(&s->net[0].m.u.accept.value, "a"));
	ck_assert_uint_eq(s->counters.phase2_waited_phase1, 0);
	ck_assert_uint_eq(s->counters.values_proposed, 1);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "a");
	/* The window slid: instance 6 started phase 1. */
	ck_assert_uint_eq(s->nprepares[6], 1);
	sim_free(s);
}
END_TEST

START_TEST(test_value_waits_for_phase1)
{
	struct sim *s = sim_new(5, 3, 8);
	lead(s);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	ck_assert_uint_eq(s->counters.phase2_waited_phase1, 1);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "a");
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 0);
	sim_free(s);
}
END_TEST

START_TEST(test_concurrency_limit)
{
	struct sim *s = sim_new(10, 3, 16);
	lead(s);
	run(s);
	char v[16][8];
	for (int i = 0; i < 10; i++) {
		snprintf(v[i], sizeof(v[i]), "v%d", i);
		ck_assert_int_eq(submit(s, v[i]), PAXOS_OK);
	}
	/* Three accepts out, for the three lowest instances; the rest wait. */
	size_t accepts = 0;
	for (size_t i = 0; i < s->net_len; i++)
		if (s->net[i].m.type == PAXOS_MSG_ACCEPT) {
			ck_assert_uint_eq(s->net[i].m.u.accept.iid, ++accepts);
		}
	ck_assert_uint_eq(accepts, 3);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 7);
	ck_assert_uint_eq(paxos_proposer_window_in_use(s->p), 3);
	ck_assert_uint_eq(s->counters.phase2_waited_phase1, 0);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 10);
	ck_assert_uint_eq(s->max_in_phase2, 3);
	ck_assert_uint_eq(paxos_proposer_window_in_use(s->p), 0); /* all delivered */
	sim_free(s);
}
END_TEST

START_TEST(test_fifo_with_concurrency_one)
{
	struct sim *s = sim_new(8, 1, 64);
	s->rng = 12345;
	s->loss_percent = 20;
	s->reorder = true;
	lead(s);
	char v[40][8];
	for (int i = 0; i < 40; i++) {
		snprintf(v[i], sizeof(v[i]), "f%d", i);
		ck_assert_int_eq(submit(s, v[i]), PAXOS_OK);
	}
	for (int step = 0; s->ndelivered < 40; step++) {
		ck_assert_int_lt(step, 200000);
		if (!pump(s) || rnd(s) % 20 == 0)
			advance(s, 1000);
	}
	for (int i = 0; i < 40; i++)
		ck_assert_str_eq(s->delivered[i], v[i]);
	ck_assert_uint_eq(s->max_in_phase2, 1);
	sim_free(s);
}
END_TEST

START_TEST(test_pending_overflow)
{
	struct sim *s = sim_new(4, 1, 4);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(submit(s, "x"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "y"), PAXOS_E_FULL);
	struct paxos_message m = {.type = PAXOS_MSG_CLIENT_VALUE};
	m.u.client_value.value = value_of("z");
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	ck_assert_uint_eq(s->counters.pending_dropped, 2);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 4);
	char big[VMAX + 2];
	memset(big, 'b', VMAX + 1);
	big[VMAX + 1] = 0;
	ck_assert_int_eq(submit(s, big), PAXOS_E_TOO_BIG);
	ck_assert_uint_eq(s->counters.pending_dropped, 2);
	/* Once leading, the values go out and room frees up. */
	lead(s);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 4);
	ck_assert_int_eq(submit(s, "y"), PAXOS_OK);
	sim_free(s);
}
END_TEST

/* The refusals sent since net[from]: how many, the values they say were dropped, and whether
 * the last one names `want` (by paxos_value_hash). */
static uint32_t refusals_since(const struct sim *s, size_t from, uint32_t *dropped,
			       const char *want)
{
	uint32_t n = 0;
	bool named = want == NULL;
	for (size_t i = from; i < s->net_len; i++)
		if (s->net[i].m.type == PAXOS_MSG_REFUSED) {
			const struct paxos_refused *r = &s->net[i].m.u.refused;
			ck_assert_int_eq(s->net[i].to, PAXOS_GROUP_LEARNERS);
			ck_assert_uint_eq(r->proposer_id, 2);
			*dropped += r->dropped;
			n++;
			for (uint32_t k = 0; want && k < r->hashes.len / 8; k++) {
				uint64_t h = 0;
				for (int b = 7; b >= 0; b--)
					h = h << 8 | r->hashes.data[8 * k + (uint32_t)b];
				named |= h == paxos_value_hash(want, strlen(want));
			}
		}
	ck_assert(named);
	return n;
}

/* Flow control: a leader whose list is full tells the submitters (the learners group) which
 * values it dropped, once per read (here: per submit, or per assign after queued values); a
 * follower, whose list holds values the leader got too, says nothing. */
START_TEST(test_full_leader_refuses)
{
	struct sim *s = sim_new(4, 1, 2);
	uint32_t dropped = 0;
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "b"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "c"), PAXOS_E_FULL);
	advance(s, 1000);
	ck_assert_uint_eq(refusals_since(s, 0, &dropped, NULL), 0);
	lead(s);
	size_t mark = s->net_len;
	ck_assert_int_eq(submit(s, "d"), PAXOS_E_FULL); /* phase 1 is not done: a, b wait */
	ck_assert_uint_eq(refusals_since(s, mark, &dropped, "d"), 1);
	ck_assert_uint_eq(dropped, 1);
	/* A read's values are queued, then assigned together: one refusal names them all. */
	mark = s->net_len;
	dropped = 0;
	struct paxos_value e = value_of("e"), f = value_of("f");
	ck_assert_int_eq(paxos_proposer_queue(s->p, &e), PAXOS_E_FULL);
	ck_assert_int_eq(paxos_proposer_queue(s->p, &f), PAXOS_E_FULL);
	ck_assert_uint_eq(refusals_since(s, mark, &dropped, NULL), 0);
	paxos_proposer_assign(s->p, s->now, &s->out);
	ck_assert_uint_eq(refusals_since(s, mark, &dropped, "f"), 1);
	ck_assert_uint_eq(dropped, 2);
	ck_assert_uint_eq(s->counters.refusals_sent, 2);
	ck_assert_uint_eq(s->counters.pending_dropped, 4);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 2);
	sim_free(s);
}
END_TEST

/* paxos_proposer_drop_pending: a follower going lean empties its list (counted); a leader
 * keeps its values; the list takes values again afterwards. */
START_TEST(test_drop_pending)
{
	struct sim *s = sim_new(4, 1, 4);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(submit(s, "x"), PAXOS_OK);
	paxos_proposer_drop_pending(s->p);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 0);
	ck_assert_uint_eq(s->counters.pending_dropped, 3);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(submit(s, "y"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "y"), PAXOS_E_FULL);
	paxos_proposer_drop_pending(s->p);
	ck_assert_int_eq(submit(s, "z"), PAXOS_OK);
	lead(s);
	ck_assert_int_eq(submit(s, "w"), PAXOS_OK);
	paxos_proposer_drop_pending(s->p); /* leading: ignored */
	run(s);
	ck_assert_uint_eq(s->ndelivered, 2);
	ck_assert_str_eq(s->delivered[0], "z");
	ck_assert_str_eq(s->delivered[1], "w");
	sim_free(s);
}
END_TEST

START_TEST(test_client_value_message_and_other_types)
{
	struct sim *s = sim_new(4, 1, 4);
	lead(s);
	run(s);
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted = (struct paxos_accepted){.iid = 1, .ballot = 102, .value = value_of("q")};
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	m.type = PAXOS_MSG_PREPARE;
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	m.type = (enum paxos_msg_type)77;
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	paxos_proposer_handle(s->p, NULL, s->now, &s->out);
	ck_assert_uint_eq(s->net_len, 0);
	m = (struct paxos_message){.type = PAXOS_MSG_CLIENT_VALUE};
	m.u.client_value.value = value_of("cv");
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "cv");
	sim_free(s);
}
END_TEST

START_TEST(test_phase1_timeout)
{
	struct sim *s = sim_new(2, 1, 4);
	s->drop[PAXOS_MSG_PREPARE] = true;
	lead(s);
	advance(s, PHASE1_TIMEOUT - 1);
	ck_assert_uint_eq(s->nprepares[1], 1);
	advance(s, 1);
	ck_assert_uint_eq(s->nprepares[1], 2);
	ck_assert_uint_eq(s->nprepares[2], 2);
	ck_assert_uint_eq(s->prepares[1][1], 202);
	ck_assert_uint_eq(s->prepares[2][1], 202);
	ck_assert_uint_eq(s->counters.phase1_timeouts, 2);
	/* Each timeout doubles the next wait. */
	advance(s, 2 * PHASE1_TIMEOUT - 1);
	ck_assert_uint_eq(s->nprepares[1], 2);
	advance(s, 1);
	ck_assert_uint_eq(s->prepares[1][2], 302);
	s->drop[PAXOS_MSG_PREPARE] = false;
	advance(s, 4 * PHASE1_TIMEOUT);
	ck_assert_int_eq(submit(s, "late"), PAXOS_OK);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	sim_free(s);
}
END_TEST

START_TEST(test_phase2_timeout_restarts_phase1)
{
	struct sim *s = sim_new(2, 1, 4);
	lead(s);
	run(s);
	s->drop[PAXOS_MSG_ACCEPT] = true;
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	ck_assert(s->accept_sent[1]);
	advance(s, PHASE2_TIMEOUT);
	ck_assert_uint_eq(s->counters.phase2_timeouts, 1);
	ck_assert_uint_eq(s->nprepares[1], 2);
	ck_assert_uint_eq(s->prepares[1][1], 202);
	ck_assert_uint_eq(s->net_len, 1); /* the prepare, not an accept */
	ck_assert_int_eq(s->net[0].m.type, PAXOS_MSG_PREPARE);
	s->drop[PAXOS_MSG_ACCEPT] = false;
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "a");
	ck_assert_uint_eq(s->acc[0][1].accepted, 202);
	sim_free(s);
}
END_TEST

/* Congestion: accepts that time out together halve the phase 2 window once (a burst lost in
 * one overflowing buffer is one signal), and instances closed let it grow back, never past
 * the configured concurrency. */
START_TEST(test_phase2_timeouts_halve_the_window)
{
	struct sim *s = sim_new(32, 8, 64);
	lead(s);
	run(s);
	ck_assert_uint_eq(s->counters.phase2_window, 8);
	s->drop[PAXOS_MSG_ACCEPT] = true;
	char v[40][8];
	for (int i = 0; i < 40; i++) {
		snprintf(v[i], sizeof(v[i]), "c%d", i);
		ck_assert_int_eq(submit(s, v[i]), PAXOS_OK);
	}
	advance(s, PHASE2_TIMEOUT);
	ck_assert_uint_eq(s->counters.phase2_timeouts, 8);
	ck_assert_uint_eq(s->counters.congestion_cuts, 1);
	ck_assert_uint_eq(s->counters.phase2_window, 4);
	s->drop[PAXOS_MSG_ACCEPT] = false;
	s->max_in_phase2 = 0;
	run(s);
	ck_assert_uint_eq(s->ndelivered, 40);
	ck_assert_uint_le(s->max_in_phase2, 8);
	ck_assert_uint_gt(s->counters.phase2_window, 4);
	ck_assert_uint_le(s->counters.phase2_window, 8);
	sim_free(s);
}
END_TEST

START_TEST(test_reject_skips_ballot)
{
	struct sim *s = sim_new(2, 1, 4);
	for (uint32_t a = 0; a < NACC; a++)
		s->acc[a][1].promised = 507;
	lead(s);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	run(s);
	/* Three rejects for 102; the ballot jumps once, past 507. */
	ck_assert_uint_eq(s->nprepares[1], 2);
	ck_assert_uint_eq(s->prepares[1][0], 102);
	ck_assert_uint_eq(s->prepares[1][1], 602);
	ck_assert_uint_eq(s->counters.rejects_received, 1);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "a");
	sim_free(s);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("proposer");
	TCase *t = tcase_create("api");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_options_from_config);
	tcase_add_test(t, test_bad_options);
	tcase_add_test(t, test_leader_preexecutes_window);
	tcase_add_test(t, test_repair_runs_a_decided_instance_again);
	tcase_add_test(t, test_non_leader_sends_nothing);
	tcase_add_test(t, test_idle_leader_proposes_skips);
	tcase_add_test(t, test_new_leader_announces_itself_with_a_skip);
	tcase_add_test(t, test_accept_right_after_phase1);
	tcase_add_test(t, test_value_waits_for_phase1);
	tcase_add_test(t, test_concurrency_limit);
	tcase_add_test(t, test_fifo_with_concurrency_one);
	tcase_add_test(t, test_pending_overflow);
	tcase_add_test(t, test_full_leader_refuses);
	tcase_add_test(t, test_drop_pending);
	tcase_add_test(t, test_client_value_message_and_other_types);
	tcase_add_test(t, test_phase1_timeout);
	tcase_add_test(t, test_phase2_timeout_restarts_phase1);
	tcase_add_test(t, test_phase2_timeouts_halve_the_window);
	tcase_add_test(t, test_reject_skips_ballot);
	suite_add_tcase(s, t);
	return s;
}
