/* SPDX-License-Identifier: BSD-3-Clause */
/* The acceptor core of a learning acceptor (thesis 3.7.5): learned values kept as final. */
#include "check_main.h"
#include <paxos/storage_backends.h>
#include <paxos/acceptor.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#include "acceptor_fixture.h"

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
	Suite *s = suite_create("acceptor_learning");
	TCase *learning = tcase_create("learning");
	tcase_add_checked_fixture(learning, setup, teardown);
	tcase_add_test(learning, learned_value_replaces_and_stays);
	tcase_add_test(learning, learned_prepare_gets_final_value);
	tcase_add_test(learning, learned_unknown_instance_is_repeated_final);
	tcase_add_test(learning, learned_bad_input_and_trimmed_ignored);
	tcase_add_test(learning, learned_joins_the_next_commit);
	tcase_add_test(learning, learned_storage_failure_stops_acceptor);
	suite_add_tcase(s, learning);
	return s;
}
