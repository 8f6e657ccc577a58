/* SPDX-License-Identifier: BSD-3-Clause */
/* The acceptor core and its storage: values intact from a strict store, a failing store stopping
 * it, and one transaction per batch (group commit). */
#include "check_main.h"
#include <paxos/storage_backends.h>
#include <paxos/acceptor.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#include "acceptor_fixture.h"

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

Suite *test_suite(void)
{
	Suite *s = suite_create("acceptor_storage");
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
	return s;
}
