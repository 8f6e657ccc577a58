/* SPDX-License-Identifier: BSD-3-Clause */
/* The acceptor core against the memory backend: the protocol's answers, and promises kept under
 * random traffic. */
#include "check_main.h"
#include <paxos/storage_backends.h>
#include <paxos/acceptor.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#include "acceptor_fixture.h"

START_TEST(promise_on_first_prepare)
{
	ck_assert_int_eq(prepare(1, 101), PAXOS_OK);
	const struct paxos_promise *p = &only(PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS)->u.promise;
	ck_assert_uint_eq(p->iid, 1);
	ck_assert_uint_eq(p->ballot, 101);
	ck_assert_uint_eq(p->value_ballot, 0);
	ck_assert_uint_eq(p->value.len, 0);
	ck_assert_uint_eq(p->acceptor_id, ACCEPTOR_ID);
	ck_assert_uint_eq(counters.promises_sent, 1);
	ck_assert_uint_eq(stored(1).promised, 101);
	ck_assert_uint_eq(stored(1).accepted, 0);
}
END_TEST

START_TEST(promise_carries_accepted_value)
{
	ck_assert_int_eq(accept_text(1, 101, "chosen?"), PAXOS_OK);
	recorder_clear(out);
	ck_assert_int_eq(prepare(1, 202), PAXOS_OK);
	const struct paxos_promise *p = &only(PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS)->u.promise;
	ck_assert_uint_eq(p->ballot, 202);
	ck_assert_uint_eq(p->value_ballot, 101);
	ck_assert(value_is(&p->value, "chosen?"));
	/* The promise raised the ballot without touching the accepted value. */
	struct paxos_record rec = stored(1);
	ck_assert_uint_eq(rec.promised, 202);
	ck_assert_uint_eq(rec.accepted, 101);
	ck_assert(value_is(&rec.value, "chosen?"));
}
END_TEST

/* Values larger than the promise buffer's first size still come back whole. */
START_TEST(promise_carries_big_value)
{
	const uint32_t len = 65536;
	uint8_t *big = malloc(len);
	for (uint32_t i = 0; i < len; i++)
		big[i] = (uint8_t)(i * 7u);
	ck_assert_int_eq(accept_value(1, 101, (struct paxos_value){big, len}), PAXOS_OK);
	recorder_clear(out);
	ck_assert_int_eq(prepare(1, 202), PAXOS_OK);
	const struct paxos_promise *p = &only(PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS)->u.promise;
	ck_assert_uint_eq(p->value.len, len);
	ck_assert_int_eq(memcmp(p->value.data, big, len), 0);
	free(big);
}
END_TEST

START_TEST(reject_lower_prepare)
{
	ck_assert_int_eq(prepare(1, 202), PAXOS_OK);
	recorder_clear(out);
	ck_assert_int_eq(prepare(1, 101), PAXOS_OK);
	const struct paxos_reject *r = &only(PAXOS_MSG_REJECT, PAXOS_GROUP_PROPOSERS)->u.reject;
	ck_assert_uint_eq(r->iid, 1);
	ck_assert_uint_eq(r->ballot, 202);
	ck_assert_uint_eq(r->acceptor_id, ACCEPTOR_ID);
	ck_assert_uint_eq(counters.rejects_sent, 1);
	ck_assert_uint_eq(counters.promises_sent, 1);
	ck_assert_uint_eq(stored(1).promised, 202);
}
END_TEST

START_TEST(equal_prepare_promises_again)
{
	ck_assert_int_eq(prepare(1, 101), PAXOS_OK);
	ck_assert_int_eq(prepare(1, 101), PAXOS_OK);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS), 2);
	ck_assert_uint_eq(out->count, 2);
	ck_assert_uint_eq(recorder_find(out, PAXOS_MSG_PROMISE, 1)->u.promise.ballot, 101);
	ck_assert_uint_eq(counters.promises_sent, 2);
}
END_TEST

START_TEST(accept_at_promised_ballot)
{
	ck_assert_int_eq(prepare(2, 101), PAXOS_OK);
	recorder_clear(out);
	ck_assert_int_eq(accept_text(2, 101, "value"), PAXOS_OK);
	const struct paxos_accepted *a = &only(PAXOS_MSG_ACCEPTED, PAXOS_GROUP_VOTES)->u.accepted;
	ck_assert_uint_eq(a->iid, 2);
	ck_assert_uint_eq(a->ballot, 101);
	ck_assert(a->valueless); /* (iid, ballot) names the accept's value, which learners hold */
	ck_assert_uint_eq(a->acceptor_id, ACCEPTOR_ID);
	ck_assert(!a->final);
	ck_assert_uint_eq(counters.accepteds_sent, 1);
	struct paxos_record rec = stored(2);
	ck_assert_uint_eq(rec.promised, 101);
	ck_assert_uint_eq(rec.accepted, 101);
	ck_assert(value_is(&rec.value, "value"));
	ck_assert_uint_eq(st->ops->highest_accepted(st), 2);
}
END_TEST

START_TEST(reject_lower_accept)
{
	ck_assert_int_eq(prepare(1, 202), PAXOS_OK);
	recorder_clear(out);
	ck_assert_int_eq(accept_text(1, 101, "late"), PAXOS_OK);
	const struct paxos_reject *r = &only(PAXOS_MSG_REJECT, PAXOS_GROUP_PROPOSERS)->u.reject;
	ck_assert_uint_eq(r->iid, 1);
	ck_assert_uint_eq(r->ballot, 202);
	ck_assert_uint_eq(counters.accepteds_sent, 0);
	ck_assert_uint_eq(counters.rejects_sent, 1);
	ck_assert_uint_eq(stored(1).accepted, 0);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 0);
}
END_TEST

START_TEST(accept_higher_without_prepare)
{
	ck_assert_int_eq(prepare(1, 101), PAXOS_OK);
	recorder_clear(out);
	ck_assert_int_eq(accept_text(1, 303, "jump"), PAXOS_OK);
	const struct paxos_accepted *a = &only(PAXOS_MSG_ACCEPTED, PAXOS_GROUP_VOTES)->u.accepted;
	ck_assert_uint_eq(a->ballot, 303);
	ck_assert(a->valueless);
	/* Accepting at 303 is also a promise not to go below it. */
	recorder_clear(out);
	ck_assert_int_eq(prepare(1, 202), PAXOS_OK);
	ck_assert_uint_eq(only(PAXOS_MSG_REJECT, PAXOS_GROUP_PROPOSERS)->u.reject.ballot, 303);
	/* And on a fresh instance, with no prepare at all. */
	recorder_clear(out);
	ck_assert_int_eq(accept_text(9, 101, "fresh"), PAXOS_OK);
	ck_assert_uint_eq(only(PAXOS_MSG_ACCEPTED, PAXOS_GROUP_VOTES)->u.accepted.iid, 9);
}
END_TEST

START_TEST(final_flag_is_kept)
{
	struct paxos_record rec = {
	    .iid = 4, .promised = 101, .accepted = 101, .value = value_of("known"), .final = true};
	ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	ck_assert_int_eq(accept_text(4, 202, "known"), PAXOS_OK);
	const struct paxos_accepted *a =
	    &only(PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS)->u.accepted;
	ck_assert(a->final);
	ck_assert(stored(4).final);
	recorder_clear(out);
	ck_assert_int_eq(repeat(4, 4), PAXOS_OK);
	ck_assert(only(PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS)->u.accepted.final);
}
END_TEST

START_TEST(repeat_sends_accepted_in_range)
{
	ck_assert_int_eq(accept_text(1, 101, "v1"), PAXOS_OK);
	ck_assert_int_eq(accept_text(2, 101, "v2"), PAXOS_OK);
	ck_assert_int_eq(prepare(3, 101), PAXOS_OK); /* promised, nothing accepted */
	ck_assert_int_eq(accept_text(4, 202, "v4"), PAXOS_OK);
	ck_assert_int_eq(accept_text(6, 101, "v6"), PAXOS_OK);
	recorder_clear(out);
	ck_assert_int_eq(repeat(2, 5), PAXOS_OK);
	ck_assert_uint_eq(out->count, 2);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS), 2);
	const struct paxos_accepted *a = &out->msg[0].u.accepted;
	ck_assert_uint_eq(a->iid, 2);
	ck_assert_uint_eq(a->ballot, 101);
	ck_assert(value_is(&a->value, "v2"));
	ck_assert_uint_eq(a->acceptor_id, ACCEPTOR_ID);
	a = &out->msg[1].u.accepted;
	ck_assert_uint_eq(a->iid, 4);
	ck_assert_uint_eq(a->ballot, 202);
	ck_assert(value_is(&a->value, "v4"));
	ck_assert_uint_eq(counters.repeats_answered, 2);

	/* Empty, inverted and out-of-reach ranges answer nothing. */
	recorder_clear(out);
	ck_assert_int_eq(repeat(5, 2), PAXOS_OK);
	ck_assert_int_eq(repeat(7, 100), PAXOS_OK);
	ck_assert_int_eq(repeat(UINT64_MAX - 3, UINT64_MAX), PAXOS_OK);
	ck_assert_int_eq(repeat(0, 0), PAXOS_OK);
	ck_assert_uint_eq(out->count, 0);
	/* from 0 means from the first instance. */
	ck_assert_int_eq(repeat(0, 1), PAXOS_OK);
	ck_assert_uint_eq(only(PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS)->u.accepted.iid, 1);
}
END_TEST

START_TEST(repeat_is_bounded)
{
	const paxos_iid n = PAXOS_ACCEPTOR_MAX_REPEAT + 100;
	for (paxos_iid i = 1; i <= n; i++)
		ck_assert_int_eq(accept_text(i, 101, "v"), PAXOS_OK);
	recorder_clear(out);
	ck_assert_int_eq(repeat(0, UINT64_MAX), PAXOS_OK);
	ck_assert_uint_eq(out->count, PAXOS_ACCEPTOR_MAX_REPEAT);
	ck_assert_uint_eq(out->msg[0].u.accepted.iid, 1);
	ck_assert_uint_eq(out->msg[out->count - 1].u.accepted.iid, PAXOS_ACCEPTOR_MAX_REPEAT);
	ck_assert_uint_eq(counters.repeats_answered, PAXOS_ACCEPTOR_MAX_REPEAT);
	/* The rest is there when asked again. */
	recorder_clear(out);
	ck_assert_int_eq(repeat(PAXOS_ACCEPTOR_MAX_REPEAT + 1, UINT64_MAX), PAXOS_OK);
	ck_assert_uint_eq(out->count, 100);
	ck_assert_uint_eq(out->msg[99].u.accepted.iid, n);
}
END_TEST

START_TEST(trim_drops_instances)
{
	char v[8];
	for (paxos_iid i = 1; i <= 5; i++) {
		snprintf(v, sizeof(v), "v%d", (int)i);
		ck_assert_int_eq(accept_text(i, 101, v), PAXOS_OK);
	}
	recorder_clear(out);
	ck_assert_int_eq(trim(3), PAXOS_OK);
	ck_assert_uint_eq(out->count, 0);
	ck_assert_uint_eq(counters.instances_trimmed, 1);
	ck_assert_uint_eq(st->ops->trim_iid(st), 3);
	/* Trimmed instances are ignored, not promised afresh. */
	ck_assert_int_eq(prepare(2, 202), PAXOS_OK);
	ck_assert_int_eq(prepare(3, 202), PAXOS_OK);
	ck_assert_int_eq(accept_text(1, 202, "again"), PAXOS_OK);
	ck_assert_uint_eq(out->count, 0);
	struct paxos_record rec;
	ck_assert_int_eq(st->ops->get(st, 2, &rec), 0);
	/* Later ones are intact. */
	ck_assert_int_eq(prepare(4, 202), PAXOS_OK);
	const struct paxos_promise *p = &only(PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS)->u.promise;
	ck_assert_uint_eq(p->value_ballot, 101);
	ck_assert(value_is(&p->value, "v4"));
	/* Asked for trimmed instances: the learners are told, then get the rest. */
	recorder_clear(out);
	ck_assert_int_eq(repeat(1, 5), PAXOS_OK);
	ck_assert_uint_eq(out->count, 3);
	ck_assert_uint_eq(out->msg[0].type, PAXOS_MSG_TRIMMED);
	ck_assert_uint_eq(out->msg[1].u.accepted.iid, 4);
	ck_assert_uint_eq(out->msg[2].u.accepted.iid, 5);
	/* A trim that is not ahead of the current one is not applied again. */
	ck_assert_int_eq(trim(2), PAXOS_OK);
	ck_assert_int_eq(trim(3), PAXOS_OK);
	ck_assert_uint_eq(counters.instances_trimmed, 1);
	ck_assert_uint_eq(st->ops->trim_iid(st), 3);
}
END_TEST

/* A trim drops instances for good: it goes no further than the instances known decided, or,
 * for an acceptor never told what is decided, than the highest instance it accepted. */
START_TEST(trim_limited_to_decided)
{
	for (paxos_iid i = 1; i <= 5; i++)
		ck_assert_int_eq(accept_text(i, 101, "v"), PAXOS_OK);
	ck_assert_uint_eq(paxos_acceptor_trim_limit(acc), 5);
	ck_assert_int_eq(trim(UINT64_MAX), PAXOS_OK);
	ck_assert_uint_eq(st->ops->trim_iid(st), 5);
	ck_assert_uint_eq(counters.trims_clamped, 1);
	ck_assert_int_eq(accept_text(6, 101, "v"), PAXOS_OK);
	ck_assert_int_eq(accept_text(9, 101, "v"), PAXOS_OK);
	/* Told what is decided (its learner delivered up to 7): trims stop there. */
	paxos_acceptor_decided(acc, 7);
	paxos_acceptor_decided(acc, 6); /* never goes back */
	ck_assert_uint_eq(paxos_acceptor_trim_limit(acc), 7);
	ck_assert_int_eq(trim(3000), PAXOS_OK);
	ck_assert_uint_eq(st->ops->trim_iid(st), 7);
	ck_assert_uint_eq(counters.trims_clamped, 2);
	ck_assert_uint_eq(counters.instances_trimmed, 2);
	/* 9 is still there for the learners that have not learned it. */
	recorder_clear(out);
	ck_assert_int_eq(repeat(9, 9), PAXOS_OK);
	ck_assert_uint_eq(only(PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS)->u.accepted.iid, 9);
	/* Within the limit: applied as asked, not counted. */
	paxos_acceptor_decided(acc, 9);
	ck_assert_int_eq(trim(8), PAXOS_OK);
	ck_assert_uint_eq(st->ops->trim_iid(st), 8);
	ck_assert_uint_eq(counters.trims_clamped, 2);
}
END_TEST

/* An acceptor answers one repeat request for learner-repeat-batch instances at most, and all
 * requests together for its budget per tick at most: a forged request for 0..2^64-1, or a
 * flood of them, is no amplifier. */
START_TEST(repeat_capped_and_budgeted)
{
	paxos_acceptor_free(acc);
	struct paxos_acceptor_options o = {
	    .id = ACCEPTOR_ID, .repeat_batch = 8, .repeat_budget = 20};
	acc = paxos_acceptor_new(&o, st, &counters);
	ck_assert_ptr_nonnull(acc);
	for (paxos_iid i = 1; i <= 40; i++)
		ck_assert_int_eq(accept_text(i, 101, "v"), PAXOS_OK);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK); /* a fresh budget */
	recorder_clear(out);
	ck_assert_int_eq(repeat(0, UINT64_MAX), PAXOS_OK);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS), 8);
	ck_assert_uint_eq(out->msg[7].u.accepted.iid, 8);
	ck_assert_uint_eq(counters.repeats_capped, 1);
	/* A fair request is not capped. */
	ck_assert_int_eq(repeat(9, 16), PAXOS_OK);
	ck_assert_uint_eq(counters.repeats_capped, 1);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS), 16);
	/* 16 of the budget of 20 are spent: 4 more, then nothing until the next tick. */
	ck_assert_int_eq(repeat(17, 24), PAXOS_OK);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS), 20);
	ck_assert_int_eq(repeat(21, 28), PAXOS_OK);
	ck_assert_int_eq(repeat(21, 28), PAXOS_OK);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS), 20);
	ck_assert_uint_eq(counters.repeats_deferred, 2);
	ck_assert_uint_eq(counters.repeats_answered, 20);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	recorder_clear(out);
	ck_assert_int_eq(repeat(21, 28), PAXOS_OK);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS), 8);
	/* Defaults: PAXOS_ACCEPTOR_MAX_REPEAT per request, a burst of requests per tick. */
	paxos_acceptor_free(acc);
	o = (struct paxos_acceptor_options){.id = ACCEPTOR_ID, .repeat_batch = 100000};
	acc = paxos_acceptor_new(&o, st, &counters);
	ck_assert_ptr_nonnull(acc);
}
END_TEST

/* The state goes to the learners and, the same, to the proposers (check-quorum). */
static const struct paxos_acceptor_state *state_sent(void)
{
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_ACCEPTOR_STATE, PAXOS_GROUP_LEARNERS), 1);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_ACCEPTOR_STATE, PAXOS_GROUP_PROPOSERS), 1);
	const struct paxos_acceptor_state *s = NULL, *p = NULL;
	for (size_t i = 0; i < out->count; i++)
		if (out->msg[i].type == PAXOS_MSG_ACCEPTOR_STATE)
			*(out->group[i] == PAXOS_GROUP_LEARNERS ? &s : &p) =
			    &out->msg[i].u.acceptor_state;
	ck_assert_mem_eq(s, p, sizeof(*s));
	return s;
}

START_TEST(tick_reports_highest_and_state)
{
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(out->count, 2);
	const struct paxos_acceptor_state *s = state_sent();
	ck_assert_uint_eq(s->acceptor_id, ACCEPTOR_ID);
	ck_assert_uint_eq(s->highest_accepted, 0);
	ck_assert_uint_eq(s->trim_iid, 0);

	ck_assert_int_eq(accept_text(1, 101, "one"), PAXOS_OK);
	ck_assert_int_eq(accept_text(3, 101, "three"), PAXOS_OK);
	ck_assert_int_eq(prepare(5, 101), PAXOS_OK);
	recorder_clear(out);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(out->count, 3);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS), 1);
	s = state_sent();
	const struct paxos_accepted *a = &recorder_find(out, PAXOS_MSG_ACCEPTED, 0)->u.accepted;
	ck_assert_uint_eq(a->iid, 3);
	ck_assert_uint_eq(a->ballot, 101);
	ck_assert(value_is(&a->value, "three"));
	ck_assert_uint_eq(a->acceptor_id, ACCEPTOR_ID);
	ck_assert_uint_eq(s->highest_accepted, 3);
	ck_assert_uint_eq(s->trim_iid, 0);

	ck_assert_int_eq(trim(3), PAXOS_OK);
	recorder_clear(out);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(out->count, 2);
	s = state_sent();
	ck_assert_uint_eq(s->trim_iid, 3);
}
END_TEST

START_TEST(other_messages_ignored)
{
	static const enum paxos_msg_type types[] = {
	    PAXOS_MSG_PROMISE,      PAXOS_MSG_ACCEPTED,       PAXOS_MSG_REJECT,
	    PAXOS_MSG_CLIENT_VALUE, PAXOS_MSG_ACCEPTOR_STATE, (enum paxos_msg_type)0,
	    (enum paxos_msg_type)99};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct paxos_message m;
		memset(&m, 0xff, sizeof(m));
		m.type = types[i];
		ck_assert_int_eq(paxos_acceptor_handle(acc, &m, &out->emitter), PAXOS_OK);
	}
	ck_assert_uint_eq(out->count, 0);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 0);
}
END_TEST

START_TEST(bad_input_ignored)
{
	ck_assert_int_eq(prepare(0, 101), PAXOS_OK);
	ck_assert_int_eq(accept_text(0, 101, "zero"), PAXOS_OK);
	ck_assert_int_eq(accept_value(1, 101, (struct paxos_value){NULL, 5}), PAXOS_OK);
	ck_assert_uint_eq(out->count, 0);
	ck_assert_int_eq(paxos_acceptor_handle(NULL, NULL, NULL), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_acceptor_tick(NULL, &out->emitter), PAXOS_E_INVALID);
	ck_assert_ptr_null(
	    paxos_acceptor_new(&(struct paxos_acceptor_options){.id = 0}, NULL, &counters));
	/* Still working. */
	ck_assert_int_eq(prepare(1, 101), PAXOS_OK);
	only(PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS);
}
END_TEST

/* An instance the memory backend will not reach for is dropped, not a storage failure. */
/* A ballot beyond every plausible epoch is a forgery or a bug: promising it would lock the
 * proposers out of the instance for good (for a durable store, even across restarts). */
START_TEST(implausible_ballot_dropped)
{
	paxos_ballot last_plausible =
	    (((uint64_t)PAXOS_PLAUSIBLE_EPOCHS << 32) - 1) * PAXOS_MAX_PROPOSERS + 99;
	ck_assert_int_eq(prepare(1, UINT64_MAX), PAXOS_OK);
	ck_assert_int_eq(prepare(2, last_plausible + 1), PAXOS_OK);
	ck_assert_int_eq(accept_text(3, UINT64_MAX, "forged"), PAXOS_OK);
	ck_assert_uint_eq(out->count, 0);
	ck_assert_uint_eq(counters.implausible_ballots, 3);
	struct paxos_record rec;
	for (paxos_iid iid = 1; iid <= 3; iid++)
		ck_assert_int_eq(st->ops->get(st, iid, &rec), 0);
	/* The proposers still get their promise. */
	ck_assert_int_eq(prepare(1, 101), PAXOS_OK);
	ck_assert_uint_eq(only(PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS)->u.promise.ballot, 101);
	recorder_clear(out);
	ck_assert_int_eq(prepare(2, last_plausible), PAXOS_OK);
	ck_assert_uint_eq(only(PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS)->u.promise.ballot,
			  last_plausible);
}
END_TEST

START_TEST(far_instance_dropped)
{
	ck_assert_int_eq(prepare(1ull << 40, 101), PAXOS_OK);
	ck_assert_int_eq(accept_text(1ull << 40, 101, "far"), PAXOS_OK);
	ck_assert_uint_eq(out->count, 0);
	ck_assert_uint_eq(counters.instances_out_of_window, 2);
	ck_assert_int_eq(prepare(1, 101), PAXOS_OK);
	only(PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS);
}
END_TEST

/* ---- safety under random traffic ---- */

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* xorshift64*: deterministic for a given seed */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

#define SAFETY_IIDS 4
#define SAFETY_STEPS 3000

START_TEST(random_traffic_keeps_promises)
{
	use_failing_storage(); /* never failing here, but strict about value lifetimes */
	rng_state = 0x9e3779b97f4a7c15ull * (uint64_t)(_i + 1);
	/* Highest ballot the acceptor has answered positively for (promise or accepted), and
	 * the highest ballot it has stored as promised, per instance. */
	paxos_ballot answered[SAFETY_IIDS + 1] = {0};
	paxos_ballot promised[SAFETY_IIDS + 1] = {0};
	paxos_ballot last_accepted[SAFETY_IIDS + 1] = {0};
	char value[SAFETY_IIDS + 1][16];
	memset(value, 0, sizeof(value));

	for (int step = 0; step < SAFETY_STEPS; step++) {
		paxos_iid iid = 1 + rng() % SAFETY_IIDS;
		paxos_ballot b = 1 + (paxos_ballot)(rng() % 60);
		char v[16];
		snprintf(v, sizeof(v), "s%d", step);
		recorder_clear(out);
		bool is_prepare = rng() % 2;
		ck_assert_int_eq(is_prepare ? prepare(iid, b) : accept_text(iid, b, v), PAXOS_OK);
		ck_assert_uint_eq(out->count, 1);
		const struct paxos_message *m = &out->msg[0];
		switch (m->type) {
		case PAXOS_MSG_PROMISE:
			ck_assert(is_prepare);
			ck_assert_uint_eq(m->u.promise.ballot, b);
			ck_assert_uint_ge(b, answered[iid]);
			/* It reports the last value it accepted, if any. */
			ck_assert_uint_eq(m->u.promise.value_ballot, last_accepted[iid]);
			ck_assert(value_is(&m->u.promise.value, value[iid]));
			answered[iid] = b;
			break;
		case PAXOS_MSG_ACCEPTED:
			ck_assert(!is_prepare);
			ck_assert_uint_eq(m->u.accepted.ballot, b);
			ck_assert_uint_ge(b, answered[iid]);
			ck_assert(m->u.accepted.valueless);
			answered[iid] = b;
			last_accepted[iid] = b;
			memcpy(value[iid], v, sizeof(v));
			break;
		case PAXOS_MSG_REJECT:
			ck_assert_uint_lt(b, answered[iid]);
			ck_assert_uint_eq(m->u.reject.ballot, answered[iid]);
			break;
		default:
			ck_abort_msg("unexpected %s", paxos_msg_type_name(m->type));
		}
		struct paxos_record rec = stored(iid);
		ck_assert_uint_ge(rec.promised, promised[iid]);
		ck_assert_uint_ge(rec.promised, rec.accepted);
		promised[iid] = rec.promised;
	}
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("acceptor");
	TCase *tc = tcase_create("protocol");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, promise_on_first_prepare);
	tcase_add_test(tc, promise_carries_accepted_value);
	tcase_add_test(tc, promise_carries_big_value);
	tcase_add_test(tc, reject_lower_prepare);
	tcase_add_test(tc, equal_prepare_promises_again);
	tcase_add_test(tc, accept_at_promised_ballot);
	tcase_add_test(tc, reject_lower_accept);
	tcase_add_test(tc, accept_higher_without_prepare);
	tcase_add_test(tc, final_flag_is_kept);
	tcase_add_test(tc, repeat_sends_accepted_in_range);
	tcase_add_test(tc, repeat_is_bounded);
	tcase_add_test(tc, trim_drops_instances);
	tcase_add_test(tc, tick_reports_highest_and_state);
	tcase_add_test(tc, other_messages_ignored);
	tcase_add_test(tc, bad_input_ignored);
	tcase_add_test(tc, far_instance_dropped);
	tcase_add_test(tc, implausible_ballot_dropped);
	tcase_add_test(tc, trim_limited_to_decided);
	tcase_add_test(tc, repeat_capped_and_budgeted);
	suite_add_tcase(s, tc);

	TCase *safety = tcase_create("safety");
	tcase_add_checked_fixture(safety, setup, teardown);
	tcase_set_timeout(safety, 60);
	tcase_add_loop_test(safety, random_traffic_keeps_promises, 0, 8);
	suite_add_tcase(s, safety);
	return s;
}
