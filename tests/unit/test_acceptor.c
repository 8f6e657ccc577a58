/* SPDX-License-Identifier: BSD-3-Clause */
/* The acceptor core against the memory backend and a storage that fails on demand. */
#include "check_main.h"
#include <paxos/storage_backends.h>
#include <paxos/acceptor.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

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

/*
 * ---- a storage that fails on demand ----
 * It wraps the memory backend and holds it to the letter of the interface: a value from get
 * is a copy that put, trim and commit overwrite, so an acceptor that used one too late
 * would send garbage.
 */

enum storage_op { OP_BEGIN, OP_GET, OP_PUT, OP_COMMIT, OP_TRIM, OP_NONE };

#define STRICT_VALUE_MAX 256u

struct failing_storage {
	struct paxos_storage base;
	struct paxos_storage *inner;
	enum storage_op fail;
	uint8_t value[STRICT_VALUE_MAX];
	unsigned begins, commits; /* successful ones */
	bool open;                /* between a begin and its commit */
};

static void poison(struct failing_storage *f)
{
	memset(f->value, 0xdd, sizeof(f->value));
}

static struct failing_storage *failing(struct paxos_storage *s)
{
	return (struct failing_storage *)s;
}

static int failing_begin(struct paxos_storage *s)
{
	struct failing_storage *f = failing(s);
	if (f->fail == OP_BEGIN)
		return PAXOS_E_STORAGE;
	ck_assert(!f->open);
	f->begins++;
	f->open = true;
	return f->inner->ops->begin(f->inner);
}

static int failing_commit(struct paxos_storage *s)
{
	struct failing_storage *f = failing(s);
	if (f->fail == OP_COMMIT)
		return PAXOS_E_STORAGE;
	ck_assert(f->open);
	f->commits++;
	f->open = false;
	int rc = f->inner->ops->commit(f->inner);
	poison(f);
	return rc;
}

static int failing_get(struct paxos_storage *s, paxos_iid iid, struct paxos_record *rec)
{
	struct failing_storage *f = failing(s);
	if (f->fail == OP_GET)
		return PAXOS_E_STORAGE;
	int rc = f->inner->ops->get(f->inner, iid, rec);
	if (rc == 1 && rec->value.len > 0) {
		ck_assert_uint_le(rec->value.len, STRICT_VALUE_MAX);
		memcpy(f->value, rec->value.data, rec->value.len);
		rec->value.data = f->value;
	}
	return rc;
}

static int failing_put(struct paxos_storage *s, const struct paxos_record *rec)
{
	struct failing_storage *f = failing(s);
	if (f->fail == OP_PUT)
		return PAXOS_E_STORAGE;
	int rc = f->inner->ops->put(f->inner, rec);
	poison(f);
	return rc;
}

static int failing_trim(struct paxos_storage *s, paxos_iid iid)
{
	struct failing_storage *f = failing(s);
	if (f->fail == OP_TRIM)
		return PAXOS_E_STORAGE;
	int rc = f->inner->ops->trim(f->inner, iid);
	poison(f);
	return rc;
}

static paxos_iid failing_trim_iid(struct paxos_storage *s)
{
	return failing(s)->inner->ops->trim_iid(failing(s)->inner);
}

static paxos_iid failing_highest_accepted(struct paxos_storage *s)
{
	return failing(s)->inner->ops->highest_accepted(failing(s)->inner);
}

static void failing_destroy(struct paxos_storage *s)
{
	paxos_storage_destroy(failing(s)->inner);
	free(s);
}

static const struct paxos_storage_ops failing_ops = {
    .name = "failing",
    .begin = failing_begin,
    .commit = failing_commit,
    .get = failing_get,
    .put = failing_put,
    .trim = failing_trim,
    .trim_iid = failing_trim_iid,
    .highest_accepted = failing_highest_accepted,
    .destroy = failing_destroy,
};

/* Replaces the fixture's storage and acceptor with ones over a failing storage. */
static struct failing_storage *use_failing_storage(void)
{
	paxos_acceptor_free(acc);
	struct failing_storage *f = calloc(1, sizeof(*f));
	f->base.ops = &failing_ops;
	f->inner = st;
	f->fail = OP_NONE;
	st = &f->base;
	acc =
	    paxos_acceptor_new(&(struct paxos_acceptor_options){.id = ACCEPTOR_ID}, st, &counters);
	ck_assert_ptr_nonnull(acc);
	return f;
}

/* Values from storage reach the wire intact even when storage reuses their memory. */
START_TEST(values_survive_strict_storage)
{
	use_failing_storage();
	ck_assert_int_eq(accept_text(1, 101, "first"), PAXOS_OK);
	ck_assert_int_eq(accept_text(2, 101, "second"), PAXOS_OK);
	recorder_clear(out);
	ck_assert_int_eq(prepare(1, 202), PAXOS_OK); /* written, then sent */
	ck_assert_int_eq(prepare(1, 202), PAXOS_OK); /* nothing written */
	ck_assert_uint_eq(out->count, 2);
	ck_assert(value_is(&out->msg[0].u.promise.value, "first"));
	ck_assert(value_is(&out->msg[1].u.promise.value, "first"));
	recorder_clear(out);
	ck_assert_int_eq(repeat(1, 2), PAXOS_OK);
	ck_assert_uint_eq(out->count, 2);
	ck_assert(value_is(&out->msg[0].u.accepted.value, "first"));
	ck_assert(value_is(&out->msg[1].u.accepted.value, "second"));
	recorder_clear(out);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert(value_is(&recorder_find(out, PAXOS_MSG_ACCEPTED, 0)->u.accepted.value, "second"));
}
END_TEST

#define TICK ((enum paxos_msg_type)0)

struct failure_case {
	enum storage_op op;
	enum paxos_msg_type request; /* TICK: paxos_acceptor_tick */
	bool sends_before_commit;    /* none does now: every reply waits for the write */
};

static const struct failure_case failure_cases[] = {
    {OP_BEGIN, PAXOS_MSG_PREPARE, false},
    {OP_GET, PAXOS_MSG_PREPARE, false},
    {OP_PUT, PAXOS_MSG_PREPARE, false},
    {OP_COMMIT, PAXOS_MSG_PREPARE, false},
    {OP_BEGIN, PAXOS_MSG_ACCEPT, false},
    {OP_GET, PAXOS_MSG_ACCEPT, false},
    {OP_PUT, PAXOS_MSG_ACCEPT, false},
    {OP_COMMIT, PAXOS_MSG_ACCEPT, false},
    {OP_BEGIN, PAXOS_MSG_TRIM, false},
    {OP_TRIM, PAXOS_MSG_TRIM, false},
    {OP_COMMIT, PAXOS_MSG_TRIM, false},
    {OP_GET, PAXOS_MSG_REPEAT, false}, /* reads only: no transaction */
    {OP_GET, TICK, false},
};
#define FAILURE_CASES ((int)(sizeof(failure_cases) / sizeof(failure_cases[0])))

static int request(enum paxos_msg_type type)
{
	switch (type) {
	case PAXOS_MSG_PREPARE:
		return prepare(2, 202); /* a higher ballot: the promise must be written */
	case PAXOS_MSG_ACCEPT:
		return accept_text(2, 202, "new");
	case PAXOS_MSG_TRIM:
		return trim(1);
	case PAXOS_MSG_REPEAT:
		return repeat(1, 2);
	default:
		return paxos_acceptor_tick(acc, &out->emitter);
	}
}

START_TEST(storage_failure_stops_acceptor)
{
	const struct failure_case *c = &failure_cases[_i];
	struct failing_storage *f = use_failing_storage();
	ck_assert_int_eq(accept_text(1, 101, "one"), PAXOS_OK);
	ck_assert_int_eq(accept_text(2, 101, "two"), PAXOS_OK);
	recorder_clear(out);
	struct paxos_counters before = counters;

	f->fail = c->op;
	ck_assert_int_eq(request(c->request), PAXOS_E_STORAGE);
	if (!c->sends_before_commit) {
		ck_assert_uint_eq(out->count, 0);
		ck_assert_mem_eq(&counters, &before, sizeof(counters));
	}

	/* Stopped for good, even once the storage works again. */
	f->fail = OP_NONE;
	recorder_clear(out);
	ck_assert_int_eq(prepare(3, 101), PAXOS_E_STORAGE);
	ck_assert_int_eq(accept_text(3, 101, "x"), PAXOS_E_STORAGE);
	ck_assert_int_eq(repeat(1, 2), PAXOS_E_STORAGE);
	ck_assert_int_eq(trim(2), PAXOS_E_STORAGE);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_E_STORAGE);
	ck_assert_uint_eq(out->count, 0);
	/* The failed request changed nothing that was not made durable. */
	struct paxos_record rec = stored(2);
	if (c->request == PAXOS_MSG_PREPARE && c->op != OP_COMMIT)
		ck_assert_uint_eq(rec.promised, 101);
	if (c->request == PAXOS_MSG_ACCEPT && c->op != OP_COMMIT)
		ck_assert(value_is(&rec.value, "two"));
}
END_TEST

/* ---- group commit ---- */

/* An emitter that checks no reply leaves while a transaction is open, then records it. */
static struct failing_storage *watched;
static unsigned emitted_before_commit;

static void watched_emit(void *ctx, enum paxos_group to, const struct paxos_message *m)
{
	(void)ctx;
	if (watched->open || watched->commits == 0)
		emitted_before_commit++;
	out->emitter.emit(out->emitter.ctx, to, m);
}

static const struct paxos_emitter watched_out = {.emit = watched_emit, .ctx = NULL};

static int batch(const struct paxos_message *msgs, size_t n)
{
	return paxos_acceptor_handle_batch(acc, msgs, n, &watched_out);
}

static struct failing_storage *use_watched_storage(void)
{
	watched = use_failing_storage();
	emitted_before_commit = 0;
	return watched;
}

START_TEST(batch_is_one_group_commit)
{
	struct failing_storage *f = use_watched_storage();
	ck_assert_int_eq(accept_text(9, 101, "old"), PAXOS_OK);
	recorder_clear(out);
	f->begins = f->commits = 0;
	counters.storage_commits = 0;

	const struct paxos_message msgs[] = {
	    prepare_msg(1, 101),
	    prepare_msg(2, 101),
	    accept_msg(1, 101, value_of("a")),
	    accept_msg(2, 101, value_of("b")),
	    prepare_msg(3, 202),
	    accept_msg(3, 101, value_of("late")),
	    prepare_msg(9, 202),
	    repeat_msg(1, 2),
	    {.type = PAXOS_MSG_ACCEPTED}, /* not for acceptors */
	};
	ck_assert_int_eq(batch(msgs, sizeof(msgs) / sizeof(msgs[0])), PAXOS_OK);
	ck_assert_uint_eq(f->begins, 1);
	ck_assert_uint_eq(f->commits, 1);
	ck_assert_uint_eq(counters.storage_commits, 1);
	ck_assert_uint_eq(emitted_before_commit, 0);

	/* Every reply, in message order. */
	ck_assert_uint_eq(out->count, 9);
	static const enum paxos_msg_type expect[] = {
	    PAXOS_MSG_PROMISE,  PAXOS_MSG_PROMISE,  PAXOS_MSG_ACCEPTED,
	    PAXOS_MSG_ACCEPTED, PAXOS_MSG_PROMISE,  PAXOS_MSG_REJECT,
	    PAXOS_MSG_PROMISE,  PAXOS_MSG_ACCEPTED, PAXOS_MSG_ACCEPTED};
	for (size_t i = 0; i < 9; i++)
		ck_assert_int_eq(out->msg[i].type, expect[i]);
	ck_assert(out->msg[2].u.accepted.valueless);
	ck_assert(out->msg[3].u.accepted.valueless);
	ck_assert_uint_eq(out->msg[5].u.reject.ballot, 202);
	ck_assert(value_is(&out->msg[6].u.promise.value, "old"));
	ck_assert_uint_eq(out->msg[6].u.promise.value_ballot, 101);
	ck_assert_uint_eq(out->msg[7].u.accepted.iid, 1);
	ck_assert(value_is(&out->msg[7].u.accepted.value, "a"));
	ck_assert(value_is(&out->msg[8].u.accepted.value, "b"));
	ck_assert_uint_eq(counters.promises_sent, 4);
	ck_assert_uint_eq(counters.accepteds_sent, 3); /* the one before the batch too */
	ck_assert_uint_eq(counters.rejects_sent, 1);
	ck_assert_uint_eq(counters.repeats_answered, 2);
	ck_assert_uint_eq(stored(9).promised, 202);

	/* A single message is a batch of one; one that writes nothing opens no transaction. */
	f->begins = f->commits = 0;
	recorder_clear(out);
	ck_assert_int_eq(paxos_acceptor_handle(acc, &msgs[0], &watched_out), PAXOS_OK);
	ck_assert_uint_eq(f->begins, 0);
	ck_assert_uint_eq(f->commits, 0);
	ck_assert_uint_eq(counters.storage_commits, 1); /* promised already: nothing written */
	only(PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS);

	/* Reads only (a repeat): a transaction, but no commit that writes. */
	const struct paxos_message read_only = repeat_msg(1, 2);
	ck_assert_int_eq(batch(&read_only, 1), PAXOS_OK);
	ck_assert_uint_eq(counters.storage_commits, 1);
	const struct paxos_message write = prepare_msg(4, 303);
	ck_assert_int_eq(batch(&write, 1), PAXOS_OK);
	ck_assert_uint_eq(counters.storage_commits, 2);
}
END_TEST

/* Nothing to write or read: no transaction at all. */
START_TEST(batch_without_storage_work_opens_nothing)
{
	struct failing_storage *f = use_watched_storage();
	paxos_acceptor_decided(acc, 3);
	ck_assert_int_eq(trim(3), PAXOS_OK);
	f->begins = f->commits = 0;
	const struct paxos_message msgs[] = {prepare_msg(2, 101),
					     prepare_msg(0, 101),
					     trim_msg(2),
					     repeat_msg(5, 1),
					     {.type = PAXOS_MSG_PROMISE}};
	ck_assert_int_eq(batch(msgs, 5), PAXOS_OK);
	ck_assert_int_eq(batch(NULL, 0), PAXOS_OK);
	ck_assert_uint_eq(f->begins, 0);
	ck_assert_uint_eq(out->count, 0);
	ck_assert_int_eq(paxos_acceptor_handle_batch(acc, NULL, 1, &watched_out), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_acceptor_handle_batch(NULL, msgs, 1, &watched_out), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_acceptor_handle_batch(acc, msgs, 1, NULL), PAXOS_E_INVALID);
}
END_TEST

/* A failing commit (or any failure inside the batch) sends nothing of it, ever. */
START_TEST(batch_failure_emits_nothing)
{
	struct failing_storage *f = use_watched_storage();
	ck_assert_int_eq(accept_text(1, 101, "one"), PAXOS_OK);
	recorder_clear(out);
	struct paxos_counters before = counters;
	const struct paxos_message msgs[] = {prepare_msg(1, 202), accept_msg(2, 101, value_of("x")),
					     repeat_msg(1, 2), trim_msg(1)};
	static const enum storage_op ops[] = {OP_COMMIT, OP_PUT, OP_GET, OP_TRIM};
	f->fail = ops[_i];
	ck_assert_int_eq(batch(msgs, 4), PAXOS_E_STORAGE);
	ck_assert_uint_eq(out->count, 0);
	ck_assert_mem_eq(&counters, &before, sizeof(counters));
	f->fail = OP_NONE;
	ck_assert_int_eq(batch(msgs, 4), PAXOS_E_STORAGE);
	ck_assert_int_eq(batch(msgs, 1), PAXOS_E_STORAGE);
	ck_assert_uint_eq(out->count, 0);
}
END_TEST

/* Values from storage are held in the arena across later puts and the commit. */
START_TEST(batch_keeps_stored_values)
{
	use_watched_storage();
	ck_assert_int_eq(accept_text(1, 101, "first"), PAXOS_OK);
	ck_assert_int_eq(accept_text(2, 101, "second"), PAXOS_OK);
	recorder_clear(out);
	const struct paxos_message msgs[] = {repeat_msg(1, 2), prepare_msg(1, 202),
					     prepare_msg(2, 202), accept_msg(3, 101, value_of("3")),
					     repeat_msg(2, 3)};
	ck_assert_int_eq(batch(msgs, 5), PAXOS_OK);
	ck_assert_uint_eq(out->count, 7);
	ck_assert(value_is(&out->msg[0].u.accepted.value, "first"));
	ck_assert(value_is(&out->msg[1].u.accepted.value, "second"));
	ck_assert(value_is(&out->msg[2].u.promise.value, "first"));
	ck_assert(value_is(&out->msg[3].u.promise.value, "second"));
	ck_assert(out->msg[4].u.accepted.valueless); /* the accept's answer */
	ck_assert(value_is(&out->msg[5].u.accepted.value, "second"));
	ck_assert(value_is(&out->msg[6].u.accepted.value, "3"));
}
END_TEST

/* Promise values bigger than the arena's first size, held together: it grows and the
 * values held before the growth stay intact. */
START_TEST(batch_arena_grows)
{
	enum { N = 8, LEN = 20000 };
	uint8_t *big = malloc((size_t)N * LEN);
	struct paxos_message msgs[N];
	for (size_t i = 0; i < (size_t)N * LEN; i++)
		big[i] = (uint8_t)(i * 13u + i / LEN);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(
		    accept_value((paxos_iid)i + 1, 101, (struct paxos_value){big + i * LEN, LEN}),
		    PAXOS_OK);
	for (int i = 0; i < N; i++)
		msgs[i] = prepare_msg((paxos_iid)i + 1, 202);
	recorder_clear(out);
	ck_assert_int_eq(paxos_acceptor_handle_batch(acc, msgs, N, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(out->count, N);
	for (int i = 0; i < N; i++) {
		ck_assert_uint_eq(out->msg[i].u.promise.value.len, LEN);
		ck_assert_int_eq(memcmp(out->msg[i].u.promise.value.data, big + i * LEN, LEN), 0);
	}
	free(big);
}
END_TEST

/* Counts accepted replies without copying them (the values are big). */
static size_t big_answers;
static paxos_iid big_last;

static void count_emit(void *ctx, enum paxos_group to, const struct paxos_message *m)
{
	(void)ctx;
	(void)to;
	ck_assert_int_eq(m->type, PAXOS_MSG_ACCEPTED);
	ck_assert_uint_eq(m->u.accepted.value.data[0], (uint8_t)m->u.accepted.iid);
	ck_assert_uint_eq(m->u.accepted.value.data[m->u.accepted.value.len - 1],
			  (uint8_t)m->u.accepted.iid);
	big_answers++;
	big_last = m->u.accepted.iid;
}

/* Repeats of big values stop at 256 KiB of held values (three acceptors' answers stay well
 * within one learner's socket buffer); asking again gets the rest. */
START_TEST(repeat_bounded_by_bytes)
{
	enum { N = 100, LEN = 60000 };
	uint8_t *v = malloc(LEN);
	for (int i = 1; i <= N; i++) {
		memset(v, i, LEN);
		ck_assert_int_eq(accept_value((paxos_iid)i, 101, (struct paxos_value){v, LEN}),
				 PAXOS_OK);
		recorder_clear(out);
	}
	free(v);
	const struct paxos_emitter counting = {.emit = count_emit, .ctx = NULL};
	struct paxos_message m = repeat_msg(1, N);
	big_answers = 0;
	ck_assert_int_eq(paxos_acceptor_handle_batch(acc, &m, 1, &counting), PAXOS_OK);
	ck_assert_uint_ge(big_answers, 4); /* 256 KiB / 60 kB, and the first always goes */
	ck_assert_uint_le(big_answers, 5);
	ck_assert_uint_eq(big_last, big_answers);
	for (int round = 0; round < N && big_last < N; round++) {
		m = repeat_msg(big_last + 1, N);
		ck_assert_int_eq(paxos_acceptor_handle_batch(acc, &m, 1, &counting), PAXOS_OK);
	}
	ck_assert_uint_eq(big_last, N);
	ck_assert_uint_eq(big_answers, N);
}
END_TEST

/* A datagram full of repeat requests: the first gets its whole answer, the rest what is left
 * of the held replies, and every message still has room for its reply. */
START_TEST(batch_of_repeats_is_bounded)
{
	const paxos_iid n = PAXOS_ACCEPTOR_MAX_REPEAT + 100;
	for (paxos_iid i = 1; i <= n; i++)
		ck_assert_int_eq(accept_text(i, 101, "v"), PAXOS_OK);
	recorder_clear(out);
	static struct paxos_message msgs[PAXOS_ACCEPTOR_MAX_BATCH];
	for (size_t i = 0; i + 1 < PAXOS_ACCEPTOR_MAX_BATCH; i++)
		msgs[i] = repeat_msg(1, n);
	msgs[PAXOS_ACCEPTOR_MAX_BATCH - 1] = prepare_msg(n + 1, 101);
	ck_assert_int_eq(
	    paxos_acceptor_handle_batch(acc, msgs, PAXOS_ACCEPTOR_MAX_BATCH, &out->emitter),
	    PAXOS_OK);
	for (size_t i = 0; i < PAXOS_ACCEPTOR_MAX_REPEAT; i++)
		ck_assert_uint_eq(out->msg[i].u.accepted.iid, i + 1);
	ck_assert_uint_le(out->count, PAXOS_ACCEPTOR_MAX_BATCH + PAXOS_ACCEPTOR_MAX_REPEAT + 1);
	ck_assert_uint_gt(out->count, PAXOS_ACCEPTOR_MAX_REPEAT);
	ck_assert_int_eq(out->msg[out->count - 1].type, PAXOS_MSG_PROMISE);
}
END_TEST

/* More messages than one datagram holds: one commit per PAXOS_ACCEPTOR_MAX_BATCH. */
START_TEST(long_batch_is_chunked)
{
	struct failing_storage *f = use_watched_storage();
	const size_t n = PAXOS_ACCEPTOR_MAX_BATCH + 10;
	struct paxos_message *msgs = calloc(n, sizeof(*msgs));
	for (size_t i = 0; i < n; i++)
		msgs[i] = accept_msg(i + 1, 101, value_of("v"));
	ck_assert_int_eq(batch(msgs, n), PAXOS_OK);
	ck_assert_uint_eq(f->begins, 2);
	ck_assert_uint_eq(f->commits, 2);
	ck_assert_uint_eq(out->count, n);
	ck_assert_uint_eq(out->msg[n - 1].u.accepted.iid, n);
	ck_assert_uint_eq(counters.accepteds_sent, n);
	free(msgs);
}
END_TEST

/* ---- trimmed replies (thesis 3.4.1) ---- */

START_TEST(repeat_of_trimmed_answers_trimmed)
{
	for (paxos_iid i = 1; i <= 6; i++)
		ck_assert_int_eq(accept_text(i, 101, "v"), PAXOS_OK);
	ck_assert_int_eq(trim(4), PAXOS_OK);
	recorder_clear(out);

	/* Entirely trimmed: only the notice. */
	ck_assert_int_eq(repeat(2, 3), PAXOS_OK);
	const struct paxos_trimmed *t = &only(PAXOS_MSG_TRIMMED, PAXOS_GROUP_LEARNERS)->u.trimmed;
	ck_assert_uint_eq(t->acceptor_id, ACCEPTOR_ID);
	ck_assert_uint_eq(t->iid, 4);

	/* Partly trimmed: the notice once, then the rest. */
	recorder_clear(out);
	ck_assert_int_eq(repeat(0, UINT64_MAX), PAXOS_OK);
	ck_assert_uint_eq(out->count, 3);
	ck_assert_int_eq(out->msg[0].type, PAXOS_MSG_TRIMMED);
	ck_assert_int_eq(out->group[0], PAXOS_GROUP_LEARNERS);
	ck_assert_uint_eq(out->msg[0].u.trimmed.iid, 4);
	ck_assert_uint_eq(out->msg[1].u.accepted.iid, 5);
	ck_assert_uint_eq(out->msg[2].u.accepted.iid, 6);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_TRIMMED, -1), 1);

	/* Exactly at the trim point, and just past it. */
	recorder_clear(out);
	ck_assert_int_eq(repeat(4, 4), PAXOS_OK);
	ck_assert_uint_eq(only(PAXOS_MSG_TRIMMED, PAXOS_GROUP_LEARNERS)->u.trimmed.iid, 4);
	recorder_clear(out);
	ck_assert_int_eq(repeat(5, 9), PAXOS_OK);
	ck_assert_uint_eq(out->count, 2);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_TRIMMED, -1), 0);

	/* Empty or inverted ranges ask for nothing, trimmed or not. */
	recorder_clear(out);
	ck_assert_int_eq(repeat(3, 2), PAXOS_OK);
	ck_assert_int_eq(repeat(0, 0), PAXOS_OK);
	ck_assert_uint_eq(out->count, 0);

	/* Each request of a batch gets its own notice; trimmed prepares/accepts stay unanswered. */
	const struct paxos_message msgs[] = {repeat_msg(1, 1), prepare_msg(3, 202),
					     accept_msg(4, 202, value_of("no")), repeat_msg(2, 2)};
	ck_assert_int_eq(paxos_acceptor_handle_batch(acc, msgs, 4, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(out->count, 2);
	ck_assert_uint_eq(recorder_count(out, PAXOS_MSG_TRIMMED, PAXOS_GROUP_LEARNERS), 2);
}
END_TEST

/*
 * A memory acceptor with a retention bound: every tick trims what lies more than R instances
 * below the highest accepted one, so the store holds at most R plus a tick's worth, its
 * memory stays flat, and repeats for older instances are answered with TRIMMED.
 */
START_TEST(retention_bounds_the_store)
{
	enum { R = 1000, TICK_EVERY = 250, N = 20000, LEN = 2000 };
	paxos_acceptor_set_retention(acc, R);
	static uint8_t v[LEN];
#ifdef __GLIBC__
	struct mallinfo2 before = mallinfo2();
#endif
	for (paxos_iid i = 1; i <= N; i++) {
		memcpy(v, &i, sizeof(i));
		recorder_clear(out);
		ck_assert_int_eq(accept_value(i, 101, (struct paxos_value){v, LEN}), PAXOS_OK);
		ck_assert_uint_le(i - st->ops->trim_iid(st), R + TICK_EVERY);
		if (i % TICK_EVERY == 0) {
			recorder_clear(out);
			ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
			ck_assert_uint_eq(st->ops->trim_iid(st), i > R ? i - R : 0);
			const struct paxos_message *m =
			    recorder_find(out, PAXOS_MSG_ACCEPTOR_STATE, 0);
			ck_assert_uint_eq(m->u.acceptor_state.trim_iid, st->ops->trim_iid(st));
		}
	}
#ifdef __GLIBC__
	/* Unbounded, the values alone would take N x LEN = 40 MB in 20 chunks of 2 MiB (each
	 * aligned one is an mmap of twice that); bounded, a few chunks stay live. */
	struct mallinfo2 after = mallinfo2();
	size_t used = (after.uordblks + after.hblkhd) - (before.uordblks + before.hblkhd);
	ck_assert_msg(used < (16u << 20), "%zu bytes held for %d instances", used, R);
#endif
	ck_assert_uint_eq(st->ops->trim_iid(st), N - R);
	ck_assert_uint_eq(counters.instances_trimmed, N / TICK_EVERY - R / TICK_EVERY);
	/* The oldest kept instance is served; anything older is reported trimmed. */
	recorder_clear(out);
	ck_assert_int_eq(repeat(N - R + 1, N - R + 1), PAXOS_OK);
	const struct paxos_accepted *a =
	    &only(PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS)->u.accepted;
	ck_assert_uint_eq(a->iid, N - R + 1);
	ck_assert_int_eq(memcmp(a->value.data, &(paxos_iid){N - R + 1}, sizeof(paxos_iid)), 0);
	recorder_clear(out);
	ck_assert_int_eq(repeat(1, 10), PAXOS_OK);
	ck_assert_uint_eq(only(PAXOS_MSG_TRIMMED, PAXOS_GROUP_LEARNERS)->u.trimmed.iid, N - R);
	/* Nothing is trimmed between ticks, nor by a tick with nothing new. */
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(st->ops->trim_iid(st), N - R);
}
END_TEST

/* One accept far ahead (2^24, as a forgery would send) does not make retention trim what is
 * not known decided, nor the history it keeps: with a learner beside it, the acceptor keeps
 * the retention's length of instances below the highest it delivered. */
START_TEST(retention_never_trims_undecided_instances)
{
	paxos_acceptor_set_retention(acc, 100);
	paxos_acceptor_decided(acc, 0);
	for (paxos_iid i = 1; i <= 300; i++)
		ck_assert_int_eq(accept_text(i, 101, "v"), PAXOS_OK);
	ck_assert_int_eq(accept_text(1u << 24, 101, "far"), PAXOS_OK);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(st->ops->trim_iid(st), 0);
	paxos_acceptor_decided(acc, 250);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(st->ops->trim_iid(st), 150);
	recorder_clear(out);
	ck_assert_int_eq(repeat(151, 151), PAXOS_OK);
	ck_assert_uint_eq(only(PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS)->u.accepted.iid, 151);
	paxos_acceptor_decided(acc, 300);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(st->ops->trim_iid(st), 200);
}
END_TEST

/* Retention 0, the default of the core: nothing is trimmed but by request. */
START_TEST(no_retention_keeps_everything)
{
	for (paxos_iid i = 1; i <= 3000; i++) {
		recorder_clear(out);
		ck_assert_int_eq(accept_text(i, 101, "v"), PAXOS_OK);
	}
	paxos_acceptor_set_retention(acc, 0);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(st->ops->trim_iid(st), 0);
	ck_assert_uint_eq(stored(1).accepted, 101);
	/* A bound larger than the history trims nothing either. */
	paxos_acceptor_set_retention(acc, 3000);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(st->ops->trim_iid(st), 0);
	paxos_acceptor_set_retention(acc, 2999);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(st->ops->trim_iid(st), 1);
	paxos_acceptor_set_retention(NULL, 1); /* ignored */
}
END_TEST

/* A trim earlier in the same batch already counts for the repeats after it. */
START_TEST(trim_in_batch_applies_to_later_messages)
{
	for (paxos_iid i = 1; i <= 4; i++)
		ck_assert_int_eq(accept_text(i, 101, "v"), PAXOS_OK);
	recorder_clear(out);
	const struct paxos_message msgs[] = {trim_msg(2), repeat_msg(1, 4), prepare_msg(2, 202)};
	ck_assert_int_eq(paxos_acceptor_handle_batch(acc, msgs, 3, &out->emitter), PAXOS_OK);
	ck_assert_uint_eq(out->count, 3);
	ck_assert_uint_eq(out->msg[0].u.trimmed.iid, 2);
	ck_assert_uint_eq(out->msg[1].u.accepted.iid, 3);
	ck_assert_uint_eq(out->msg[2].u.accepted.iid, 4);
	ck_assert_uint_eq(counters.instances_trimmed, 1);
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

/* ---- learning acceptors (thesis 3.7.5) ---- */

static int learned(paxos_iid iid, const char *v)
{
	struct paxos_value value = value_of(v);
	return paxos_acceptor_learned(acc, iid, &value);
}

/* A step of no message: writes what the marks wait in the ready for. */
static void write_marks(void)
{
	ck_assert_int_eq(paxos_acceptor_handle_batch(acc, NULL, 0, &out->emitter), PAXOS_OK);
}

/* This acceptor accepted "lost" at 101; "won" was chosen elsewhere at 202. */
START_TEST(learned_value_replaces_and_stays)
{
	ck_assert_int_eq(accept_text(1, 101, "lost"), PAXOS_OK);
	recorder_clear(out);
	ck_assert_int_eq(learned(1, "won"), PAXOS_OK);
	ck_assert_uint_eq(out->count, 0);
	ck_assert(!stored(1).final); /* waits for the next step's write */
	write_marks();
	ck_assert_uint_eq(out->count, 0);
	struct paxos_record rec = stored(1);
	ck_assert(rec.final);
	ck_assert(value_is(&rec.value, "won"));
	ck_assert_uint_eq(rec.promised, 101);

	/* Accepts at any ballot are answered with the final value and change nothing. */
	static const paxos_ballot ballots[] = {50, 101, 303};
	for (size_t i = 0; i < 3; i++) {
		recorder_clear(out);
		ck_assert_int_eq(accept_text(1, ballots[i], "other"), PAXOS_OK);
		const struct paxos_accepted *a =
		    &only(PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS)->u.accepted;
		ck_assert(a->final);
		ck_assert(value_is(&a->value, "won"));
		ck_assert_uint_eq(a->iid, 1);
		ck_assert_uint_eq(a->acceptor_id, ACCEPTOR_ID);
		rec = stored(1);
		ck_assert_uint_eq(rec.promised, 101);
		ck_assert_uint_eq(rec.accepted, 101);
		ck_assert(value_is(&rec.value, "won"));
	}
	ck_assert_uint_eq(counters.rejects_sent, 0);

	/* Learning another value later changes nothing either. */
	ck_assert_int_eq(learned(1, "again"), PAXOS_OK);
	rec = stored(1);
	ck_assert(value_is(&rec.value, "won"));
}
END_TEST

/* A prepare, below or above the promise, gets a promise that makes the proposer adopt the
 * final value: its value ballot is the prepare's own ballot, which no other promise for that
 * ballot can exceed. */
START_TEST(learned_prepare_gets_final_value)
{
	ck_assert_int_eq(prepare(1, 202), PAXOS_OK);
	ck_assert_int_eq(learned(1, "won"), PAXOS_OK);
	static const paxos_ballot ballots[] = {101, 202, 909};
	for (size_t i = 0; i < 3; i++) {
		recorder_clear(out);
		ck_assert_int_eq(prepare(1, ballots[i]), PAXOS_OK);
		const struct paxos_promise *p =
		    &only(PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS)->u.promise;
		ck_assert_uint_eq(p->iid, 1);
		ck_assert_uint_eq(p->ballot, ballots[i]);
		ck_assert_uint_eq(p->value_ballot, ballots[i]);
		ck_assert(value_is(&p->value, "won"));
		ck_assert_uint_eq(p->acceptor_id, ACCEPTOR_ID);
	}
	/* The record is not touched: a final record accepts nothing, so it promises nothing. */
	struct paxos_record rec = stored(1);
	ck_assert_uint_eq(rec.promised, 202);
	ck_assert(rec.final);
	ck_assert_uint_eq(counters.rejects_sent, 0);
}
END_TEST

/* An instance this acceptor never heard of: it can still answer for it, flagged final. */
START_TEST(learned_unknown_instance_is_repeated_final)
{
	ck_assert_int_eq(learned(7, "seven"), PAXOS_OK);
	write_marks();
	struct paxos_record rec = stored(7);
	ck_assert(rec.final);
	ck_assert_uint_ne(rec.accepted, 0);
	ck_assert_uint_ge(rec.promised, rec.accepted);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 7);
	ck_assert_int_eq(repeat(1, 10), PAXOS_OK);
	const struct paxos_accepted *a =
	    &only(PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS)->u.accepted;
	ck_assert_uint_eq(a->iid, 7);
	ck_assert(a->final);
	ck_assert(value_is(&a->value, "seven"));
	recorder_clear(out);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &out->emitter), PAXOS_OK);
	a = &recorder_find(out, PAXOS_MSG_ACCEPTED, 0)->u.accepted;
	ck_assert_uint_eq(a->iid, 7);
	ck_assert(a->final);
	ck_assert(value_is(&a->value, "seven"));
}
END_TEST

START_TEST(learned_bad_input_and_trimmed_ignored)
{
	struct paxos_record rec;
	const struct paxos_value no_data = {NULL, 4};
	const struct paxos_value x = value_of("x");
	ck_assert_int_eq(accept_text(2, 101, "two"), PAXOS_OK);
	ck_assert_int_eq(trim(2), PAXOS_OK);
	ck_assert_int_eq(learned(2, "two"), PAXOS_OK);
	ck_assert_int_eq(st->ops->get(st, 2, &rec), 0);
	ck_assert_int_eq(learned(0, "zero"), PAXOS_OK);
	ck_assert_int_eq(paxos_acceptor_learned(NULL, 3, &x), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_acceptor_learned(acc, 3, NULL), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_acceptor_learned(acc, 3, &no_data), PAXOS_E_INVALID);
	ck_assert_int_eq(st->ops->get(st, 3, &rec), 0);
	/* Still working. */
	recorder_clear(out);
	ck_assert_int_eq(prepare(3, 101), PAXOS_OK);
	only(PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS);
}
END_TEST

/* The mark needs no commit of its own (thesis 3.7.5): it joins the next group commit. */
START_TEST(learned_joins_the_next_commit)
{
	struct failing_storage *f = use_watched_storage();
	ck_assert_int_eq(accept_text(1, 101, "one"), PAXOS_OK);
	ck_assert_int_eq(accept_text(2, 101, "two"), PAXOS_OK);
	recorder_clear(out);
	f->begins = f->commits = 0;
	ck_assert_int_eq(learned(1, "one"), PAXOS_OK);
	ck_assert_int_eq(learned(2, "two"), PAXOS_OK);
	ck_assert_uint_eq(f->begins, 0); /* the marks wait in the ready */
	ck_assert_uint_eq(f->commits, 0);
	ck_assert(!f->open);
	const struct paxos_message msgs[] = {prepare_msg(3, 101),
					     accept_msg(1, 202, value_of("x"))};
	ck_assert_int_eq(batch(msgs, 2), PAXOS_OK);
	ck_assert_uint_eq(f->begins, 1);
	ck_assert_uint_eq(f->commits, 1);
	ck_assert(!f->open);
	ck_assert_uint_eq(emitted_before_commit, 0);
	ck_assert_uint_eq(out->count, 2);
	ck_assert(out->msg[1].u.accepted.final);
	ck_assert(value_is(&out->msg[1].u.accepted.value, "one"));

	/* A tick commits a pending mark too. */
	ck_assert_int_eq(accept_text(4, 101, "four"), PAXOS_OK);
	ck_assert_int_eq(learned(4, "four"), PAXOS_OK);
	ck_assert(!stored(4).final);
	ck_assert_int_eq(paxos_acceptor_tick(acc, &watched_out), PAXOS_OK);
	ck_assert(!f->open);
	ck_assert(stored(4).final);

	/* Freeing the acceptor drops a mark still waiting: harmless, it is an ordinary record
	 * again (thesis 3.7.5). */
	ck_assert_int_eq(accept_text(5, 101, "five"), PAXOS_OK);
	ck_assert_int_eq(learned(5, "five"), PAXOS_OK);
	paxos_acceptor_free(acc);
	ck_assert(!f->open);
	acc =
	    paxos_acceptor_new(&(struct paxos_acceptor_options){.id = ACCEPTOR_ID}, st, &counters);
	ck_assert(!stored(5).final);
	struct paxos_record five = stored(5);
	ck_assert(value_is(&five.value, "five"));
}
END_TEST

START_TEST(learned_storage_failure_stops_acceptor)
{
	struct failing_storage *f = use_failing_storage();
	ck_assert_int_eq(accept_text(1, 101, "one"), PAXOS_OK);
	f->fail = OP_GET; /* learning reads; the write comes with the next step */
	ck_assert_int_eq(learned(1, "one"), PAXOS_E_STORAGE);
	f->fail = OP_NONE;
	recorder_clear(out);
	ck_assert_int_eq(prepare(2, 101), PAXOS_E_STORAGE);
	ck_assert_int_eq(learned(1, "one"), PAXOS_E_STORAGE);
	ck_assert_uint_eq(out->count, 0);
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

	TCase *failures = tcase_create("storage contract");
	tcase_add_checked_fixture(failures, setup, teardown);
	tcase_add_test(failures, values_survive_strict_storage);
	tcase_add_loop_test(failures, storage_failure_stops_acceptor, 0, FAILURE_CASES);
	suite_add_tcase(s, failures);

	TCase *group = tcase_create("group commit");
	tcase_add_checked_fixture(group, setup, teardown);
	tcase_add_test(group, batch_is_one_group_commit);
	tcase_add_test(group, batch_without_storage_work_opens_nothing);
	tcase_add_loop_test(group, batch_failure_emits_nothing, 0, 4);
	tcase_add_test(group, batch_keeps_stored_values);
	tcase_add_test(group, batch_arena_grows);
	tcase_add_test(group, repeat_bounded_by_bytes);
	tcase_add_test(group, batch_of_repeats_is_bounded);
	tcase_add_test(group, long_batch_is_chunked);
	suite_add_tcase(s, group);

	TCase *trimmed = tcase_create("trimmed");
	tcase_add_checked_fixture(trimmed, setup, teardown);
	tcase_add_test(trimmed, repeat_of_trimmed_answers_trimmed);
	tcase_add_test(trimmed, trim_in_batch_applies_to_later_messages);
	tcase_add_test(trimmed, retention_bounds_the_store);
	tcase_add_test(trimmed, no_retention_keeps_everything);
	tcase_add_test(trimmed, retention_never_trims_undecided_instances);
	/* retention_bounds_the_store stores 20,000 values of 2 kB: well under Check's default 4 s
	 * on a quiet machine, over it when other work shares the 2 cores. */
	tcase_set_timeout(trimmed, 60);
	suite_add_tcase(s, trimmed);

	TCase *learning = tcase_create("learning");
	tcase_add_checked_fixture(learning, setup, teardown);
	tcase_add_test(learning, learned_value_replaces_and_stays);
	tcase_add_test(learning, learned_prepare_gets_final_value);
	tcase_add_test(learning, learned_unknown_instance_is_repeated_final);
	tcase_add_test(learning, learned_bad_input_and_trimmed_ignored);
	tcase_add_test(learning, learned_joins_the_next_commit);
	tcase_add_test(learning, learned_storage_failure_stops_acceptor);
	suite_add_tcase(s, learning);

	TCase *safety = tcase_create("safety");
	tcase_add_checked_fixture(safety, setup, teardown);
	tcase_set_timeout(safety, 60);
	tcase_add_loop_test(safety, random_traffic_keeps_promises, 0, 8);
	suite_add_tcase(s, safety);
	return s;
}
