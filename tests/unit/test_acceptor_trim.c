/* SPDX-License-Identifier: BSD-3-Clause */
/* The acceptor core trimming: trimmed replies (thesis 3.4.1) and the memory retention. */
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

Suite *test_suite(void)
{
	Suite *s = suite_create("acceptor_trim");
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
	return s;
}
