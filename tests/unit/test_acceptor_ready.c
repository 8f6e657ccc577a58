/* SPDX-License-Identifier: BSD-3-Clause */
/* The acceptor's ready (paxos/acceptor.h, struct paxos_ready): what each step hands its driver
 * to write and to send, with the write each message waits for; the acceptor itself only reads
 * its store. */
#include "check_main.h"
#include <paxos/acceptor.h>

#include "acceptor_fixture.h"

static struct paxos_ready rd;

static int step(const struct paxos_message *msgs, size_t n)
{
	return paxos_acceptor_step(acc, msgs, n);
}

/* Takes the ready: true when it holds anything. */
static bool take(void)
{
	return paxos_acceptor_ready(acc, &rd);
}

/* Writes the ready taken and advances. */
static void write_and_advance(void)
{
	int rc = paxos_acceptor_write(st, &rd);
	ck_assert_int_eq(rc, PAXOS_OK);
	paxos_acceptor_advance(acc, rc);
}

static const struct paxos_record *record_of(paxos_iid iid)
{
	for (size_t i = 0; i < rd.record_count; i++)
		if (rd.records[i].iid == iid)
			return &rd.records[i];
	return NULL;
}

/* A prepare and an accept for one instance, in one step: one record, written by the driver,
 * not by the acceptor, and two replies that wait for that write. */
START_TEST(step_returns_records_and_tagged_replies)
{
	const struct paxos_message msgs[] = {prepare_msg(1, 101), accept_msg(1, 101, value_of("x")),
					     prepare_msg(2, 101)};
	ck_assert_int_eq(step(msgs, 3), PAXOS_OK);
	ck_assert(take());
	ck_assert_uint_eq(rd.write, 1);
	ck_assert_uint_eq(rd.trim, 0);
	ck_assert_uint_eq(rd.record_count,
			  2); /* one per instance: the accept replaced the promise */
	const struct paxos_record *r1 = record_of(1);
	ck_assert_ptr_nonnull(r1);
	ck_assert_uint_eq(r1->promised, 101);
	ck_assert_uint_eq(r1->accepted, 101);
	ck_assert(value_is(&r1->value, "x"));
	ck_assert(!r1->final);
	ck_assert_uint_eq(record_of(2)->promised, 101);
	ck_assert_uint_eq(record_of(2)->accepted, 0);

	ck_assert_uint_eq(rd.message_count, 3);
	const struct paxos_ready_message *m = rd.messages;
	ck_assert_int_eq(m[0].m.type, PAXOS_MSG_PROMISE);
	ck_assert_int_eq(m[0].to, PAXOS_GROUP_PROPOSERS);
	ck_assert_int_eq(m[1].m.type, PAXOS_MSG_ACCEPTED);
	ck_assert_int_eq(m[1].to, PAXOS_GROUP_VOTES);
	ck_assert(m[1].m.u.accepted.valueless);
	ck_assert_int_eq(m[2].m.type, PAXOS_MSG_PROMISE);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(m[i].after, 1);
		ck_assert_uint_ne(m[i].record, PAXOS_READY_NO_RECORD);
		ck_assert_uint_eq(rd.records[m[i].record].iid, i < 2 ? 1 : 2);
	}

	/* Nothing is stored, nor counted as sent, before the driver writes and advances. */
	struct paxos_record rec;
	ck_assert_int_eq(st->ops->get(st, 1, &rec), 0);
	ck_assert_uint_eq(counters.promises_sent, 0);
	ck_assert_uint_eq(counters.storage_commits, 0);
	/* And the acceptor takes no step, nor a mark, until it advances. */
	ck_assert_int_eq(step(msgs, 1), PAXOS_E_INVALID);
	struct paxos_value v = value_of("x");
	ck_assert_int_eq(paxos_acceptor_learned(acc, 1, &v), PAXOS_E_INVALID);

	write_and_advance();
	ck_assert_uint_eq(stored(1).accepted, 101);
	ck_assert_uint_eq(stored(2).promised, 101);
	ck_assert_uint_eq(counters.promises_sent, 2);
	ck_assert_uint_eq(counters.accepteds_sent, 1);
	ck_assert_uint_eq(counters.storage_commits, 1);
	ck_assert(!take()); /* empty again */
	paxos_acceptor_advance(acc, PAXOS_OK);
}
END_TEST

/* A step that only reads writes nothing, yet its answers still wait for the last write: they
 * report what it stored. A value read from the store is copied: it outlives the next write. */
START_TEST(read_only_step_waits_for_the_last_write)
{
	ck_assert_int_eq(accept_text(1, 101, "one"), PAXOS_OK); /* write 1, through handle */
	const struct paxos_message r = repeat_msg(1, 1);
	ck_assert_int_eq(step(&r, 1), PAXOS_OK);
	ck_assert(take());
	ck_assert_uint_eq(rd.write, 0);
	ck_assert_uint_eq(rd.record_count, 0);
	ck_assert_uint_eq(rd.message_count, 1);
	ck_assert_int_eq(rd.messages[0].m.type, PAXOS_MSG_ACCEPTED);
	ck_assert_uint_eq(rd.messages[0].after, 1);
	ck_assert_uint_eq(rd.messages[0].record, PAXOS_READY_NO_RECORD);
	ck_assert(value_is(&rd.messages[0].m.u.accepted.value, "one"));
	ck_assert_int_eq(accept_text(2, 101, "two") == PAXOS_OK, 0); /* taken: refused */
	/* The store changes under the ready (another write): the value stays. */
	struct paxos_record other = {
	    .iid = 1, .promised = 202, .accepted = 202, .value = value_of("zzz")};
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	ck_assert_int_eq(st->ops->put(st, &other), PAXOS_OK);
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	ck_assert(value_is(&rd.messages[0].m.u.accepted.value, "one"));
	write_and_advance();
	ck_assert_uint_eq(counters.repeats_answered, 1);
}
END_TEST

/* A trim goes first in the ready; records at or below it are not written. */
START_TEST(trim_then_records)
{
	ck_assert_int_eq(accept_text(1, 101, "one"), PAXOS_OK);
	ck_assert_int_eq(accept_text(2, 101, "two"), PAXOS_OK);
	paxos_acceptor_decided(acc, 2);
	const struct paxos_message msgs[] = {prepare_msg(2, 202), trim_msg(2),
					     accept_msg(3, 101, value_of("three"))};
	ck_assert_int_eq(step(msgs, 3), PAXOS_OK);
	ck_assert(take());
	ck_assert_uint_eq(rd.trim, 2);
	ck_assert_uint_eq(rd.record_count, 2);
	ck_assert_uint_eq(rd.write, 3);
	ck_assert_uint_eq(rd.message_count, 2); /* the promise, the accepted */
	write_and_advance();
	struct paxos_record rec;
	ck_assert_int_eq(st->ops->get(st, 2, &rec), 0);
	ck_assert_uint_eq(st->ops->trim_iid(st), 2);
	ck_assert_uint_eq(stored(3).accepted, 101);
	ck_assert_uint_eq(counters.instances_trimmed, 1);
}
END_TEST

/* A final mark waits in the ready for the next step, and is written with its changes. */
START_TEST(learned_mark_joins_the_next_ready)
{
	ck_assert_int_eq(accept_text(1, 101, "one"), PAXOS_OK);
	struct paxos_value v = value_of("one");
	ck_assert_int_eq(paxos_acceptor_learned(acc, 1, &v), PAXOS_OK);
	ck_assert(!stored(1).final);
	ck_assert_int_eq(paxos_acceptor_step_tick(acc), PAXOS_OK);
	ck_assert(take());
	ck_assert_uint_eq(rd.write, 2);
	ck_assert_uint_eq(rd.record_count, 1);
	ck_assert(rd.records[0].final);
	ck_assert(value_is(&rd.records[0].value, "one"));
	/* The tick's resend of the highest instance reports the mark: it names its record. The
	 * state to the learners reports it too; its copy to the proposers, a sign of life for
	 * check-quorum, waits for nothing. */
	const struct paxos_ready_message *resend = NULL, *state = NULL, *alive = NULL;
	for (size_t i = 0; i < rd.message_count; i++) {
		if (rd.messages[i].m.type == PAXOS_MSG_ACCEPTED)
			resend = &rd.messages[i];
		if (rd.messages[i].m.type == PAXOS_MSG_ACCEPTOR_STATE &&
		    rd.messages[i].to == PAXOS_GROUP_LEARNERS)
			state = &rd.messages[i];
		if (rd.messages[i].m.type == PAXOS_MSG_ACCEPTOR_STATE &&
		    rd.messages[i].to == PAXOS_GROUP_PROPOSERS)
			alive = &rd.messages[i];
	}
	ck_assert_ptr_nonnull(resend);
	ck_assert(resend->m.u.accepted.final);
	ck_assert_uint_eq(resend->after, 2);
	ck_assert_uint_eq(resend->record, 0);
	ck_assert_ptr_nonnull(state);
	ck_assert_uint_eq(state->after, 2);
	ck_assert_ptr_nonnull(alive);
	ck_assert_uint_eq(alive->after, 0);
	write_and_advance();
	ck_assert(stored(1).final);
}
END_TEST

/* Hellos and questions report nothing stored: they need no write. */
START_TEST(recovery_messages_need_no_write)
{
	struct paxos_acceptor_membership m = {
	    .acceptors = 5, .proposers = 2, .incarnation = 9, .amnesiac = true};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
	const struct paxos_message p = prepare_msg(1, 101);
	ck_assert_int_eq(step(&p, 1), PAXOS_OK); /* withheld while recovering: asks instead */
	ck_assert(take());
	ck_assert_uint_eq(rd.write, 0);
	ck_assert_uint_eq(rd.message_count, 1);
	ck_assert_int_eq(rd.messages[0].m.type, PAXOS_MSG_RECOVER_ASK);
	ck_assert_uint_eq(rd.messages[0].after, 0);
	paxos_acceptor_advance(acc, PAXOS_OK);
}
END_TEST

/* An instance too far out for the store: the writer skips it (iid 0) and its reply must not
 * go; the rest of the ready is written. */
START_TEST(record_the_store_cannot_hold_is_unsaid)
{
	paxos_iid far = ((paxos_iid)1 << 30);
	const struct paxos_message msgs[] = {accept_msg(1, 101, value_of("near")),
					     accept_msg(far, 101, value_of("far"))};
	ck_assert_int_eq(step(msgs, 2), PAXOS_OK);
	ck_assert(take());
	ck_assert_uint_eq(rd.record_count, 2);
	ck_assert_int_eq(paxos_acceptor_write(st, &rd), PAXOS_OK);
	ck_assert_uint_eq(rd.records[rd.messages[0].record].iid, 1);
	ck_assert_uint_eq(rd.records[rd.messages[1].record].iid, 0);
	paxos_acceptor_advance(acc, PAXOS_OK);
	ck_assert_uint_eq(counters.accepteds_sent, 1);
	ck_assert_uint_eq(counters.instances_out_of_window, 1);
	ck_assert_uint_eq(stored(1).accepted, 101);
	/* The next ready starts clean. */
	ck_assert_int_eq(accept_text(far, 101, "far"), PAXOS_OK);
	ck_assert_int_eq(accept_text(2, 101, "two"), PAXOS_OK);
	ck_assert_uint_eq(stored(2).accepted, 101);
	ck_assert_uint_eq(counters.instances_out_of_window, 2);
}
END_TEST

/* A failed write stops the acceptor: nothing it said may be trusted to be stored. */
START_TEST(failed_write_stops_the_acceptor)
{
	const struct paxos_message p = prepare_msg(1, 101);
	ck_assert_int_eq(step(&p, 1), PAXOS_OK);
	ck_assert(take());
	paxos_acceptor_advance(acc, PAXOS_E_STORAGE);
	ck_assert_uint_eq(counters.promises_sent, 0);
	ck_assert_int_eq(step(&p, 1), PAXOS_E_STORAGE);
	ck_assert_int_eq(paxos_acceptor_step_tick(acc), PAXOS_E_STORAGE);
	ck_assert(!take());
	paxos_acceptor_advance(acc, PAXOS_OK);
}
END_TEST

START_TEST(bad_input)
{
	const struct paxos_message p = prepare_msg(1, 101);
	ck_assert_int_eq(paxos_acceptor_step(NULL, &p, 1), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_acceptor_step(acc, NULL, 1), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_acceptor_step(acc, &p, PAXOS_ACCEPTOR_MAX_BATCH + 1),
			 PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_acceptor_step_tick(NULL), PAXOS_E_INVALID);
	ck_assert(!paxos_acceptor_ready(NULL, &rd));
	ck_assert_int_eq(paxos_acceptor_write(NULL, &rd), PAXOS_E_INVALID);
	paxos_acceptor_advance(NULL, PAXOS_OK);
	ck_assert_int_eq(step(NULL, 0), PAXOS_OK);
	ck_assert(!take());
	paxos_acceptor_advance(acc, PAXOS_OK);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("acceptor ready");
	TCase *tc = tcase_create("ready");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, step_returns_records_and_tagged_replies);
	tcase_add_test(tc, read_only_step_waits_for_the_last_write);
	tcase_add_test(tc, trim_then_records);
	tcase_add_test(tc, learned_mark_joins_the_next_ready);
	tcase_add_test(tc, recovery_messages_need_no_write);
	tcase_add_test(tc, record_the_store_cannot_hold_is_unsaid);
	tcase_add_test(tc, failed_write_stops_the_acceptor);
	tcase_add_test(tc, bad_input);
	suite_add_tcase(s, tc);
	return s;
}
