/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core bugs the simulation found (test_simulation.c), each held to its fix by driving the cores
 * directly: a restarted proposer reusing a ballot, a learner counting a quorum of lower
 * ballots, and learning acceptors closing an instance that no quorum chose.
 */
#include "check_main.h"
#include <paxos/acceptor.h>
#include <paxos/learner.h>
#include <paxos/proposer.h>
#include <paxos/storage_backends.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "support.h"

/* Hands every message of `type` the recorder holds to the acceptors whose bit is in `to`, and
 * clears the recorder first (the acceptors' answers go to `answers`). */
static void route_to_acceptors(struct recorder *from, enum paxos_msg_type type,
			       struct paxos_acceptor **acc, uint32_t to, struct recorder *answers)
{
	for (size_t i = 0; i < from->count; i++) {
		if (from->msg[i].type != type)
			continue;
		for (uint32_t a = 0; a < 32; a++)
			if (to & (1u << a))
				ck_assert_int_eq(
				    paxos_acceptor_handle(acc[a], &from->msg[i], &answers->emitter),
				    PAXOS_OK);
	}
}

static void route_to_proposer(struct recorder *from, struct paxos_proposer *p, struct recorder *out)
{
	for (size_t i = 0; i < from->count; i++)
		paxos_proposer_handle(p, &from->msg[i], 0, &out->emitter);
}

static char delivered_text[64];

/* Remembers the first client value of a frame (lib/core/batch.h: what proposers propose), or the
 * bytes themselves (the learner-only tests hand values to the learner core directly). */
static void remember_delivery(void *arg, paxos_iid iid, const struct paxos_value *v)
{
	(void)arg;
	(void)iid;
	struct paxos_batch_iter it;
	struct paxos_value one = *v;
	uint32_t count;
	if (paxos_batch_count(v, &count) == PAXOS_OK) {
		paxos_batch_iter_init(&it, v);
		paxos_batch_next(&it, &one);
	}
	snprintf(delivered_text, sizeof(delivered_text), "%.*s", (int)one.len,
		 (const char *)one.data);
}

static struct paxos_learner *known_bug_learner(uint32_t acceptors, struct paxos_counters *c)
{
	struct paxos_learner_options o = {.acceptors = acceptors,
					  .window = 16,
					  .max_value = 64,
					  .repeat_batch = 16,
					  .hole_check = 1000,
					  .start = PAXOS_START_FROM_FIRST,
					  .deliver = remember_delivery};
	delivered_text[0] = 0;
	return paxos_learner_new(&o, c);
}

/*
 * Regression (found by the simulation): a restarted proposer used to start again at ballot
 * PAXOS_MAX_PROPOSERS + id and reuse the ballots of its previous incarnation. Incarnation 1
 * got "old" accepted by a0 and crashed; incarnation 2 prepared the same ballot, a1 and a2
 * promised without a value, "new" was chosen by a1 and a2 at that ballot, and a learner that
 * heard a0 first counted a1's vote for the same ballot as a vote for "old": two values for
 * one instance. Now every incarnation has its own epoch (paxos_epoch_store_ops.next) and
 * starts above every ballot of the ones before it.
 */
START_TEST(test_restarted_proposer_does_not_reuse_ballots)
{
	struct paxos_counters c = {0};
	struct paxos_storage *st[3];
	struct paxos_acceptor *acc[3];
	for (uint32_t a = 0; a < 3; a++) {
		st[a] = paxos_storage_memory_new();
		acc[a] = paxos_acceptor_new(&(struct paxos_acceptor_options){.id = a}, st[a], &c);
	}
	struct recorder *out = recorder_new(), *answers = recorder_new();
	struct paxos_proposer_options o = {.id = 0,
					   .acceptors = 3,
					   .window = 1,
					   .concurrency = 1,
					   .pending_size = 4,
					   .max_value = 64,
					   .phase1_timeout = 1000000,
					   .phase2_timeout = 1000000};
	struct paxos_value old_v = value_of("old"), new_v = value_of("new");
	uint8_t old_frame[16];
	uint32_t old_len = 0;
	ck_assert_int_eq(paxos_batch_append(old_frame, sizeof(old_frame), &old_len, &old_v),
			 PAXOS_OK);

	o.epoch = 1;
	struct paxos_proposer *p = paxos_proposer_new(&o, NULL);
	paxos_proposer_set_leader(p, true, 1, 0, &out->emitter);
	route_to_acceptors(out, PAXOS_MSG_PREPARE, acc, 0x3, answers); /* a0, a1 promise */
	recorder_clear(out);
	route_to_proposer(answers, p, out);
	recorder_clear(answers);
	paxos_proposer_submit(p, &old_v, 0, &out->emitter);
	route_to_acceptors(out, PAXOS_MSG_ACCEPT, acc, 0x1, answers); /* only a0 accepts */
	struct paxos_message old_accepted = *recorder_find(answers, PAXOS_MSG_ACCEPTED, 0);
	old_accepted.u.accepted.value = (struct paxos_value){old_frame, old_len};
	old_accepted.u.accepted.valueless = false; /* as a repeat answers it */
	paxos_proposer_free(p);                    /* crash */
	recorder_clear(out);
	recorder_clear(answers);

	o.epoch = 2; /* restart: the next epoch, as the epoch store gives it */
	p = paxos_proposer_new(&o, NULL);
	paxos_proposer_set_leader(p, true, 1, 0, &out->emitter);
	const struct paxos_message *prep = recorder_find(out, PAXOS_MSG_PREPARE, 0);
	ck_assert_ptr_nonnull(prep);
	paxos_ballot reused = prep->u.prepare.ballot;
	ck_assert_uint_gt(reused, old_accepted.u.accepted.ballot);
	ck_assert_uint_eq(reused % PAXOS_MAX_PROPOSERS, 0);
	route_to_acceptors(out, PAXOS_MSG_PREPARE, acc, 0x6, answers); /* a1, a2 promise */
	recorder_clear(out);
	route_to_proposer(answers, p, out);
	recorder_clear(answers);
	paxos_proposer_submit(p, &new_v, 0, &out->emitter);
	route_to_acceptors(out, PAXOS_MSG_ACCEPT, acc, 0x6, answers); /* "new" chosen */
	ck_assert_uint_eq(recorder_count(answers, PAXOS_MSG_ACCEPTED, -1), 2);

	struct paxos_learner *l = known_bug_learner(3, &c);
	paxos_learner_handle(l, &old_accepted, 0, NULL);
	paxos_learner_handle(l, recorder_find(out, PAXOS_MSG_ACCEPT, 0), 0, NULL); /* "new" */
	paxos_learner_handle(l, recorder_find(answers, PAXOS_MSG_ACCEPTED, 0), 0, NULL);
	ck_assert_msg(strcmp(delivered_text, "old") != 0,
		      "the restarted proposer reused ballot %" PRIu64
		      ": a learner delivered \"old\" while \"new\" was chosen",
		      reused);
	paxos_learner_handle(l, recorder_find(answers, PAXOS_MSG_ACCEPTED, 1), 0, NULL);
	ck_assert_str_eq(delivered_text, "new");

	paxos_learner_free(l);
	paxos_proposer_free(p);
	recorder_free(out);
	recorder_free(answers);
	for (uint32_t a = 0; a < 3; a++) {
		paxos_acceptor_free(acc[a]);
		paxos_storage_destroy(st[a]);
	}
}
END_TEST

/*
 * Regression (found by the simulation in about 1% of its seeds): five acceptors, a2, a3 and
 * a4 accepted "v" at ballot 502, so "v" is chosen; a1 later accepted ballot 601 from a
 * proposer that re-ran the instance (same value, by P2b) and was then cut short. Repeats
 * return exactly these records. The learner used to keep only the highest ballot it heard
 * of, dropped the 502 votes and never delivered; it now counts each acceptor's latest ballot
 * and closes on a quorum at any ballot. No learning acceptor is involved.
 */
START_TEST(test_learner_counts_lower_quorum_ballot)
{
	struct paxos_counters c = {0};
	struct paxos_learner *l = known_bug_learner(5, &c);
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted.iid = 1;
	m.u.accepted.value = value_of("v");
	m.u.accepted.ballot = 601;
	m.u.accepted.acceptor_id = 1;
	paxos_learner_handle(l, &m, 0, NULL);
	m.u.accepted.ballot = 502;
	for (uint32_t a = 2; a <= 4; a++) {
		m.u.accepted.acceptor_id = a;
		paxos_learner_handle(l, &m, 0, NULL);
	}
	ck_assert_msg(strcmp(delivered_text, "v") == 0,
		      "a quorum accepted ballot 502 but the learner did not deliver");
	paxos_learner_free(l);
}
END_TEST

static struct paxos_message accept_of(paxos_iid iid, paxos_ballot b, const char *v)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPT};
	m.u.accept.iid = iid;
	m.u.accept.ballot = b;
	m.u.accept.value = value_of(v);
	return m;
}

/* Hands every accepted the recorder holds to the learner. */
static void route_to_learner(struct recorder *from, struct paxos_learner *l)
{
	for (size_t i = 0; i < from->count; i++)
		paxos_learner_handle(l, &from->msg[i], 0, NULL);
}

static void learned_by_acceptor(void *arg, paxos_iid iid, const struct paxos_value *v)
{
	ck_assert_int_eq(paxos_acceptor_learned(arg, iid, v), PAXOS_OK);
}

/*
 * Regression (found by the simulation): an instance chosen at ballot 501 by a0 and a1, then
 * re-run by proposers at ballots 600 (reaching a1 only) and 700 (a2 only): no ballot has a
 * quorum among the acceptors' records any more, so a learner that missed the first accepted
 * messages can never close it from repeats, and nobody proposes it again. With learning
 * acceptors a0 learned it when it was chosen and answers the repeat with the value flagged
 * final (thesis 3.7.5).
 */
static void run_without_quorum(bool learning)
{
	struct paxos_counters c = {0};
	struct paxos_storage *st[3];
	struct paxos_acceptor *acc[3];
	for (uint32_t a = 0; a < 3; a++) {
		st[a] = paxos_storage_memory_new();
		acc[a] = paxos_acceptor_new(&(struct paxos_acceptor_options){.id = a}, st[a], &c);
	}
	struct recorder *answers = recorder_new();
	/* a0's own learner, as lib/node/node.c runs it for a learning acceptor. */
	struct paxos_learner_options lo = {.acceptors = 3,
					   .window = 16,
					   .max_value = 64,
					   .repeat_batch = 16,
					   .hole_check = 1000,
					   .start = PAXOS_START_FROM_FIRST,
					   .deliver = remember_delivery,
					   .closed = learned_by_acceptor,
					   .closed_arg = acc[0]};
	struct paxos_learner *a0_learner = paxos_learner_new(&lo, &c);

	struct paxos_message m = accept_of(1, 501, "v");
	for (uint32_t a = 0; a < 2; a++)
		ck_assert_int_eq(paxos_acceptor_handle(acc[a], &m, &answers->emitter), PAXOS_OK);
	if (learning) { /* the accept's value, then the (valueless) votes */
		paxos_learner_handle(a0_learner, &m, 0, NULL);
		route_to_learner(answers, a0_learner);
	}
	recorder_clear(answers);
	m = accept_of(1, 600, "v");
	ck_assert_int_eq(paxos_acceptor_handle(acc[1], &m, &answers->emitter), PAXOS_OK);
	m = accept_of(1, 700, "v");
	ck_assert_int_eq(paxos_acceptor_handle(acc[2], &m, &answers->emitter), PAXOS_OK);
	/* A proposer re-running it at 800 reaches a0 only: a learning a0 does not change. */
	recorder_clear(answers);
	m = accept_of(1, 800, "v");
	ck_assert_int_eq(paxos_acceptor_handle(acc[0], &m, &answers->emitter), PAXOS_OK);
	ck_assert(recorder_find(answers, PAXOS_MSG_ACCEPTED, 0)->u.accepted.final == learning);
	recorder_clear(answers);

	struct paxos_counters lc = {0};
	struct paxos_learner *late = known_bug_learner(3, &lc);
	m = (struct paxos_message){.type = PAXOS_MSG_REPEAT};
	m.u.repeat.from = 1;
	m.u.repeat.to = 1;
	for (uint32_t a = 0; a < 3; a++)
		ck_assert_int_eq(paxos_acceptor_handle(acc[a], &m, &answers->emitter), PAXOS_OK);
	ck_assert_uint_eq(recorder_count(answers, PAXOS_MSG_ACCEPTED, -1), 3);
	route_to_learner(answers, late);
	if (learning)
		ck_assert_str_eq(delivered_text, "v");
	else
		ck_assert_str_eq(delivered_text, ""); /* the limitation learning acceptors lift */

	paxos_learner_free(late);
	paxos_learner_free(a0_learner);
	recorder_free(answers);
	for (uint32_t a = 0; a < 3; a++) {
		paxos_acceptor_free(acc[a]);
		paxos_storage_destroy(st[a]);
	}
}

START_TEST(test_learning_acceptors_close_instance_without_quorum)
{
	run_without_quorum(false);
	run_without_quorum(true);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("core_regressions");
	TCase *tc = tcase_create("core_regressions");
	tcase_add_test(tc, test_restarted_proposer_does_not_reuse_ballots);
	tcase_add_test(tc, test_learner_counts_lower_quorum_ballot);
	tcase_add_test(tc, test_learning_acceptors_close_instance_without_quorum);
	suite_add_tcase(s, tc);
	return s;
}
