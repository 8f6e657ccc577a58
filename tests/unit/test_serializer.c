/* SPDX-License-Identifier: BSD-3-Clause */
#include "check_main.h"
#include <paxos/storage_backends.h>
#include <paxos/serializer.h>
#include <stdlib.h>

#include "batch.h"
#include "support.h"

/* Largest client value the serializer under test takes. */
#define MAX_VALUE 8u

static struct paxos_storage *st;
static struct paxos_counters counters;
static struct recorder *rec;
static struct paxos_serializer *ser;

static void setup(void)
{
	st = paxos_storage_memory_new();
	counters = (struct paxos_counters){0};
	rec = recorder_new();
	ser = paxos_serializer_new(st, MAX_VALUE, &counters);
}

static void teardown(void)
{
	paxos_serializer_free(ser);
	paxos_storage_destroy(st);
	recorder_free(rec);
}

/* Instance values are frames (lib/core/batch.h): this one must hold exactly the client value s. */
static int frame_holds(const struct paxos_value *frame, const char *s)
{
	struct paxos_batch_iter it;
	struct paxos_value v;
	uint32_t count = 0;
	paxos_batch_iter_init(&it, frame);
	return paxos_batch_count(frame, &count) == PAXOS_OK && count == 1 &&
	       paxos_batch_next(&it, &v) == 1 && value_is(&v, s);
}

static struct paxos_message client_value(const char *s)
{
	struct paxos_message m = {.type = PAXOS_MSG_CLIENT_VALUE};
	m.u.client_value.value = value_of(s);
	return m;
}

START_TEST(test_values_get_consecutive_final_instances)
{
	struct paxos_message in[3] = {client_value("a"), client_value("bb"), client_value("ccc")};
	ck_assert_int_eq(paxos_serializer_handle_batch(ser, in, 3, &rec->emitter), PAXOS_OK);
	ck_assert_uint_eq(recorder_count(rec, PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS), 3);
	const char *want[] = {"a", "bb", "ccc"};
	for (size_t i = 0; i < 3; i++) {
		const struct paxos_accepted *a =
		    &recorder_find(rec, PAXOS_MSG_ACCEPTED, i)->u.accepted;
		ck_assert_uint_eq(a->iid, i + 1);
		ck_assert(a->final);
		ck_assert(frame_holds(&a->value, want[i]));
	}
	ck_assert_uint_eq(paxos_serializer_next_iid(ser), 4);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 3);
	ck_assert_uint_eq(counters.storage_commits, 1); /* the batch is one group commit */
}
END_TEST

START_TEST(test_repeat_answers_from_storage)
{
	struct paxos_message in[2] = {client_value("x"), client_value("y")};
	paxos_serializer_handle_batch(ser, in, 2, &rec->emitter);
	recorder_clear(rec);
	struct paxos_message r = {.type = PAXOS_MSG_REPEAT, .u.repeat = {2, 1000}};
	ck_assert_int_eq(paxos_serializer_handle_batch(ser, &r, 1, &rec->emitter), PAXOS_OK);
	ck_assert_uint_eq(rec->count, 1);
	const struct paxos_accepted *a = &recorder_find(rec, PAXOS_MSG_ACCEPTED, 0)->u.accepted;
	ck_assert_uint_eq(a->iid, 2);
	ck_assert(frame_holds(&a->value, "y"));
	ck_assert_uint_eq(counters.repeats_answered, 1);
	ck_assert_uint_eq(counters.storage_commits, 1); /* a repeat writes nothing */
}
END_TEST

START_TEST(test_trim_then_repeat_says_trimmed)
{
	struct paxos_message in[3] = {client_value("x"), client_value("y"), client_value("z")};
	paxos_serializer_handle_batch(ser, in, 3, &rec->emitter);
	struct paxos_message t = {.type = PAXOS_MSG_TRIM, .u.trim = {2}};
	paxos_serializer_handle_batch(ser, &t, 1, &rec->emitter);
	ck_assert_uint_eq(st->ops->trim_iid(st), 2);
	recorder_clear(rec);
	struct paxos_message r = {.type = PAXOS_MSG_REPEAT, .u.repeat = {1, 3}};
	paxos_serializer_handle_batch(ser, &r, 1, &rec->emitter);
	ck_assert_uint_eq(recorder_count(rec, PAXOS_MSG_TRIMMED, PAXOS_GROUP_LEARNERS), 1);
	ck_assert_uint_eq(recorder_find(rec, PAXOS_MSG_TRIMMED, 0)->u.trimmed.iid, 2);
	ck_assert_uint_eq(recorder_count(rec, PAXOS_MSG_ACCEPTED, -1), 1);
	/* A trim beyond the last instance stops at it. */
	t.u.trim.iid = 1000;
	paxos_serializer_handle_batch(ser, &t, 1, &rec->emitter);
	ck_assert_uint_eq(st->ops->trim_iid(st), 3);
}
END_TEST

START_TEST(test_resumes_after_stored_instances)
{
	struct paxos_message in[2] = {client_value("x"), client_value("y")};
	paxos_serializer_handle_batch(ser, in, 2, &rec->emitter);
	paxos_serializer_free(ser);
	ser = paxos_serializer_new(st, MAX_VALUE, &counters);
	ck_assert_uint_eq(paxos_serializer_next_iid(ser), 3);
}
END_TEST

START_TEST(test_stores_the_frame_it_sends)
{
	struct paxos_message in[1] = {client_value("abc")};
	paxos_serializer_handle_batch(ser, in, 1, &rec->emitter);
	struct paxos_record r;
	ck_assert_int_eq(st->ops->get(st, 1, &r), 1);
	ck_assert(r.final);
	ck_assert(frame_holds(&r.value, "abc"));
	const struct paxos_value *sent =
	    &recorder_find(rec, PAXOS_MSG_ACCEPTED, 0)->u.accepted.value;
	ck_assert_uint_eq(sent->len, r.value.len);
	ck_assert_mem_eq(sent->data, r.value.data, r.value.len);
}
END_TEST

START_TEST(test_drops_values_too_big_to_frame)
{
	/* MAX_VALUE bytes fit; one more would make a frame larger than a datagram allows. */
	struct paxos_message in[3] = {client_value("12345678"), client_value("123456789"),
				      client_value("")};
	ck_assert_int_eq(paxos_serializer_handle_batch(ser, in, 3, &rec->emitter), PAXOS_OK);
	ck_assert_uint_eq(recorder_count(rec, PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS), 2);
	const struct paxos_accepted *a = &recorder_find(rec, PAXOS_MSG_ACCEPTED, 0)->u.accepted;
	ck_assert_uint_eq(a->iid, 1);
	ck_assert(frame_holds(&a->value, "12345678"));
	a = &recorder_find(rec, PAXOS_MSG_ACCEPTED, 1)->u.accepted;
	ck_assert_uint_eq(a->iid, 2);
	ck_assert(frame_holds(&a->value, ""));
	ck_assert_uint_eq(paxos_serializer_next_iid(ser), 3);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 2);
}
END_TEST

START_TEST(test_new_refuses_zero_max_value)
{
	ck_assert_ptr_null(paxos_serializer_new(st, 0, &counters));
}
END_TEST

START_TEST(test_tick_announces_highest)
{
	struct paxos_message in[1] = {client_value("x")};
	paxos_serializer_handle_batch(ser, in, 1, &rec->emitter);
	recorder_clear(rec);
	ck_assert_int_eq(paxos_serializer_tick(ser, &rec->emitter), PAXOS_OK);
	const struct paxos_message *m = recorder_find(rec, PAXOS_MSG_ACCEPTOR_STATE, 0);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->u.acceptor_state.highest_accepted, 1);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("serializer");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_values_get_consecutive_final_instances);
	tcase_add_test(tc, test_repeat_answers_from_storage);
	tcase_add_test(tc, test_trim_then_repeat_says_trimmed);
	tcase_add_test(tc, test_resumes_after_stored_instances);
	tcase_add_test(tc, test_tick_announces_highest);
	tcase_add_test(tc, test_stores_the_frame_it_sends);
	tcase_add_test(tc, test_drops_values_too_big_to_frame);
	tcase_add_test(tc, test_new_refuses_zero_max_value);
	suite_add_tcase(s, tc);
	return s;
}
