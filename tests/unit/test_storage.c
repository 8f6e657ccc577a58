/* SPDX-License-Identifier: BSD-3-Clause */
/* Storage conformance: every backend in the table must pass the same suite, written against
 * include/paxos/storage.h only; and the memory backend's own layout. */
#include "check_main.h"
#include <paxos/storage_backends.h>
#include <paxos/storage.h>

#include <fcntl.h>
#include <ftw.h>
#include <lmdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#include "config_fields.h"
#endif

#include "storage_fixture.h"

START_TEST(get_missing)
{
	open_backend(_i);
	struct paxos_record rec;
	ck_assert_int_eq(get(1, &rec), 0);
	ck_assert_int_eq(get(12345, &rec), 0);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 0);
	ck_assert_uint_eq(st->ops->trim_iid(st), 0);
	close_backend();
}
END_TEST

START_TEST(put_then_get)
{
	open_backend(_i);
	ck_assert_int_eq(put(7, 301, 201, "seven", 5, true), PAXOS_OK);
	struct paxos_record rec;
	ck_assert_int_eq(get(7, &rec), 1);
	ck_assert_uint_eq(rec.iid, 7);
	ck_assert_uint_eq(rec.promised, 301);
	ck_assert_uint_eq(rec.accepted, 201);
	ck_assert(rec.final);
	expect_value(&rec, "seven");
	ck_assert_int_eq(get(6, &rec), 0);
	ck_assert_int_eq(get(8, &rec), 0);
	close_backend();
}
END_TEST

START_TEST(promise_only_record)
{
	open_backend(_i);
	ck_assert_int_eq(put(3, 101, 0, NULL, 0, false), PAXOS_OK);
	struct paxos_record rec;
	ck_assert_int_eq(get(3, &rec), 1);
	ck_assert_uint_eq(rec.promised, 101);
	ck_assert_uint_eq(rec.accepted, 0);
	ck_assert(!rec.final);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 0);
	close_backend();
}
END_TEST

START_TEST(overwrite)
{
	open_backend(_i);
	ck_assert_int_eq(put(2, 101, 101, "first value", 11, false), PAXOS_OK);
	ck_assert_int_eq(put(2, 202, 202, "second", 6, true), PAXOS_OK);
	struct paxos_record rec;
	ck_assert_int_eq(get(2, &rec), 1);
	ck_assert_uint_eq(rec.promised, 202);
	ck_assert_uint_eq(rec.accepted, 202);
	ck_assert(rec.final);
	expect_value(&rec, "second");
	close_backend();
}
END_TEST

/* The acceptor reads a record, changes a ballot and writes it back with the value still
 * pointing at what get returned. */
START_TEST(put_back_what_get_returned)
{
	open_backend(_i);
	ck_assert_int_eq(put(4, 101, 101, "kept value", 10, false), PAXOS_OK);
	struct paxos_record rec;
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	ck_assert_int_eq(st->ops->get(st, 4, &rec), 1);
	rec.promised = 303;
	ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	ck_assert_int_eq(get(4, &rec), 1);
	ck_assert_uint_eq(rec.promised, 303);
	ck_assert_uint_eq(rec.accepted, 101);
	expect_value(&rec, "kept value");
	close_backend();
}
END_TEST

START_TEST(value_lengths)
{
	open_backend(_i);
	static const uint32_t lengths[] = {0, 1, 15, 16, 17, 100, 4096, 65536, 300, 0, 65536, 2};
	const size_t n = sizeof(lengths) / sizeof(lengths[0]);
	uint8_t *buf = malloc(65536);
	uint8_t *expect = malloc(65536);
	/* Same instance rewritten with growing and shrinking values, and one instance each. */
	for (size_t k = 0; k < n; k++) {
		fill(buf, lengths[k], (uint8_t)k);
		ck_assert_int_eq(
		    put(1, 100 + (paxos_ballot)k, 100 + (paxos_ballot)k, buf, lengths[k], false),
		    PAXOS_OK);
		ck_assert_int_eq(put(10 + k, 101, 101, buf, lengths[k], false), PAXOS_OK);
		struct paxos_record rec;
		ck_assert_int_eq(get(1, &rec), 1);
		ck_assert_uint_eq(rec.value.len, lengths[k]);
		if (lengths[k])
			ck_assert_int_eq(memcmp(rec.value.data, buf, lengths[k]), 0);
	}
	for (size_t k = 0; k < n; k++) {
		struct paxos_record rec;
		fill(expect, lengths[k], (uint8_t)k);
		ck_assert_int_eq(get(10 + k, &rec), 1);
		ck_assert_uint_eq(rec.value.len, lengths[k]);
		if (lengths[k])
			ck_assert_int_eq(memcmp(rec.value.data, expect, lengths[k]), 0);
	}
	free(buf);
	free(expect);
	close_backend();
}
END_TEST

START_TEST(sparse_big_iids)
{
#ifdef __GLIBC__
	struct mallinfo2 before = mallinfo2();
#endif
	open_backend(_i);
	ck_assert_int_eq(put(1, 101, 101, "one", 3, false), PAXOS_OK);
	ck_assert_int_eq(put(1000000, 202, 202, "million", 7, false), PAXOS_OK);
#ifdef __GLIBC__
	struct mallinfo2 after = mallinfo2();
	size_t used = (after.uordblks + after.hblkhd) - (before.uordblks + before.hblkhd);
	ck_assert_msg(used < (64u << 20), "%zu bytes for two sparse records", used);
#endif
	struct paxos_record rec;
	ck_assert_int_eq(get(1, &rec), 1);
	expect_value(&rec, "one");
	ck_assert_int_eq(get(1000000, &rec), 1);
	ck_assert_uint_eq(rec.iid, 1000000);
	expect_value(&rec, "million");
	ck_assert_int_eq(get(2, &rec), 0);
	ck_assert_int_eq(get(999999, &rec), 0);
	ck_assert_int_eq(get(1000001, &rec), 0);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 1000000);
	/* Trimming between them keeps the far one. */
	ck_assert_int_eq(st->ops->trim(st, 500000), PAXOS_OK);
	ck_assert_int_eq(get(1, &rec), 0);
	ck_assert_int_eq(get(1000000, &rec), 1);
	expect_value(&rec, "million");
	close_backend();
}
END_TEST

START_TEST(trim_drops_up_to_iid)
{
	open_backend(_i);
	char v[16];
	for (paxos_iid i = 1; i <= 20; i++) {
		int len = snprintf(v, sizeof(v), "v%llu", (unsigned long long)i);
		ck_assert_int_eq(put(i, 101, 101, v, (uint32_t)len, false), PAXOS_OK);
	}
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	ck_assert_int_eq(st->ops->trim(st, 10), PAXOS_OK);
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	ck_assert_uint_eq(st->ops->trim_iid(st), 10);
	struct paxos_record rec;
	for (paxos_iid i = 1; i <= 10; i++)
		ck_assert_int_eq(get(i, &rec), 0);
	for (paxos_iid i = 11; i <= 20; i++) {
		ck_assert_int_eq(get(i, &rec), 1);
		snprintf(v, sizeof(v), "v%llu", (unsigned long long)i);
		expect_value(&rec, v);
	}
	/* A lower trim changes nothing. */
	ck_assert_int_eq(st->ops->trim(st, 5), PAXOS_OK);
	ck_assert_uint_eq(st->ops->trim_iid(st), 10);
	ck_assert_int_eq(get(11, &rec), 1);
	/* New instances after the trim point still work. */
	ck_assert_int_eq(put(25, 101, 101, "v25", 3, false), PAXOS_OK);
	ck_assert_int_eq(get(25, &rec), 1);
	expect_value(&rec, "v25");
	/* Trimming past everything empties the storage. */
	ck_assert_int_eq(st->ops->trim(st, 100), PAXOS_OK);
	ck_assert_uint_eq(st->ops->trim_iid(st), 100);
	for (paxos_iid i = 1; i <= 101; i++)
		ck_assert_int_eq(get(i, &rec), 0);
	ck_assert_int_eq(put(101, 101, 101, "v101", 4, false), PAXOS_OK);
	ck_assert_int_eq(get(101, &rec), 1);
	expect_value(&rec, "v101");
	close_backend();
}
END_TEST

/* Steady state: instances keep coming while the trim point follows behind. */
START_TEST(rolling_trim)
{
	open_backend(_i);
	/* Backends that sync every commit get a tenth of the instances. */
	const paxos_iid n = backends[_i].slow ? 2000 : 20000, step = n / 20, lag = step / 2;
	uint8_t v[8];
	struct paxos_record rec;
	for (paxos_iid i = 1; i <= n; i++) {
		memcpy(v, &i, sizeof(v));
		ck_assert_int_eq(put(i, 101, 101, v, sizeof(v), false), PAXOS_OK);
		if (i % step == 0) {
			ck_assert_int_eq(st->ops->trim(st, i - lag), PAXOS_OK);
			ck_assert_int_eq(get(i - lag, &rec), 0);
			ck_assert_int_eq(get(i - lag + 1, &rec), 1);
			ck_assert_int_eq(memcmp(rec.value.data, &(paxos_iid){i - lag + 1}, 8), 0);
		}
	}
	ck_assert_uint_eq(st->ops->trim_iid(st), n - lag);
	ck_assert_uint_eq(st->ops->highest_accepted(st), n);
	close_backend();
}
END_TEST

/* Memory storage cuts values from big chunks and frees a chunk once nothing points into it:
 * values spanning many chunks, overwritten, trimmed in order, all read back intact (run under
 * ASan by make sanitize, this also checks no chunk is used after it is freed). */
START_TEST(memory_values_span_chunks)
{
	open_backend(0);
	enum { N = 4000, LEN = 3000 }; /* 12 MB: several 2 MiB chunks */
	static uint8_t v[2 * LEN];
	struct paxos_record rec;
	for (paxos_iid i = 1; i <= N; i++) {
		memset(v, (int)(i % 251), LEN);
		memcpy(v, &i, sizeof(i));
		ck_assert_int_eq(put(i, 101, 101, v, LEN, false), PAXOS_OK);
		if (i % 3 == 0) { /* a longer value for an older instance: new space, old freed */
			paxos_iid j = i - 2;
			memset(v, (int)(j % 241), 2 * LEN);
			memcpy(v, &j, sizeof(j));
			ck_assert_int_eq(put(j, 202, 202, v, 2 * LEN, true), PAXOS_OK);
		}
		if (i % 500 == 0)
			ck_assert_int_eq(st->ops->trim(st, i - 1000 > i ? 0 : i - 1000), PAXOS_OK);
	}
	for (paxos_iid i = st->ops->trim_iid(st) + 1; i <= N; i++) {
		ck_assert_int_eq(get(i, &rec), 1);
		bool longer = i % 3 == 1 && i + 2 <= N;
		uint32_t len = longer ? 2 * LEN : LEN;
		ck_assert_uint_eq(rec.value.len, len);
		ck_assert_int_eq(memcmp(rec.value.data, &i, sizeof(i)), 0);
		ck_assert_uint_eq(rec.value.data[len - 1], longer ? i % 241 : i % 251);
	}
	/* Past what a chunk holds: refused, and the store goes on working. */
	size_t huge = 600u << 10;
	uint8_t *big = calloc(1, huge);
	ck_assert_int_eq(put(N + 1, 101, 101, big, (uint32_t)huge, false), PAXOS_E_TOO_BIG);
	free(big);
	ck_assert_str_eq(paxos_storage_error(st), "memory storage: instance 4001 (614400 bytes): "
						  "value larger than a chunk holds");
	ck_assert_int_eq(put(N + 1, 101, 101, "after", 5, false), PAXOS_OK);
	ck_assert_int_eq(get(N + 1, &rec), 1);
	expect_value(&rec, "after");
	close_backend();
}
END_TEST

/* The ring wraps as the trim point moves, and grows while wrapped: every record keeps its
 * place under the new capacity. */
START_TEST(memory_ring_wraps_and_grows)
{
	open_backend(0);
	struct paxos_record rec;
	paxos_iid lo = 1;
	for (paxos_iid i = 1; i <= 5000; i++) {
		ck_assert_int_eq(put(i, 101, 101, &i, sizeof(i), false), PAXOS_OK);
		/* The span first stays within 64 slots, then widens to 1000. */
		paxos_iid keep = i < 2000 ? 40 : 1000;
		if (i > keep && i % 7 == 0) {
			ck_assert_int_eq(st->ops->trim(st, i - keep), PAXOS_OK);
			lo = i - keep + 1;
		}
	}
	ck_assert_int_eq(get(lo - 1, &rec), 0);
	for (paxos_iid i = lo; i <= 5000; i++) {
		ck_assert_int_eq(get(i, &rec), 1);
		ck_assert_int_eq(memcmp(rec.value.data, &i, sizeof(i)), 0);
	}
	/* Far past the span: refused, not allocated. */
	ck_assert_int_eq(put(5000 + (1u << 24) + 1000, 101, 101, "far", 3, false), PAXOS_E_FULL);
	close_backend();
}
END_TEST

START_TEST(highest_accepted)
{
	open_backend(_i);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 0);
	ck_assert_int_eq(put(5, 101, 101, "a", 1, false), PAXOS_OK);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 5);
	ck_assert_int_eq(put(9, 101, 0, NULL, 0, false), PAXOS_OK); /* promise only */
	ck_assert_uint_eq(st->ops->highest_accepted(st), 5);
	ck_assert_int_eq(put(3, 101, 101, "b", 1, false), PAXOS_OK);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 5);
	ck_assert_int_eq(put(9, 202, 202, "c", 1, false), PAXOS_OK);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 9);
	close_backend();
}
END_TEST

START_TEST(iid_zero_invalid)
{
	open_backend(_i);
	struct paxos_record rec = {.iid = 0, .promised = 101};
	ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_E_INVALID);
	ck_assert_int_eq(st->ops->get(st, 0, &rec), PAXOS_E_INVALID);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 0);
	close_backend();
}
END_TEST

START_TEST(has_a_name)
{
	open_backend(_i);
	ck_assert_ptr_nonnull(st->ops->name);
	ck_assert_str_eq(st->ops->name, backends[_i].name);
	/* Only LMDB tells its size cheaply (lmdb_map_full checks what it says). */
	uint64_t used = 0, limit = 0;
	ck_assert_int_eq(paxos_storage_space(st, &used, &limit) == PAXOS_OK,
			 strcmp(st->ops->name, "lmdb") == 0);
	ck_assert_int_eq(paxos_storage_pipelined(st), backends[_i].pipelined);
	close_backend();
}
END_TEST

/* storage.h: a value from get stays valid until the next put, trim or commit, so other gets
 * in between must not disturb it. */
START_TEST(values_survive_other_gets)
{
	open_backend(_i);
	ck_assert_int_eq(put(1, 101, 101, "first", 5, false), PAXOS_OK);
	ck_assert_int_eq(put(2, 101, 101, "second", 6, false), PAXOS_OK);
	struct paxos_record a, b, c;
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	ck_assert_int_eq(get(1, &a), 1);
	ck_assert_int_eq(get(2, &b), 1);
	ck_assert_int_eq(get(1, &c), 1);
	expect_value(&a, "first");
	expect_value(&b, "second");
	expect_value(&c, "first");
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	/* and outside begin..commit */
	ck_assert_int_eq(get(2, &b), 1);
	ck_assert_int_eq(get(1, &a), 1);
	expect_value(&a, "first");
	expect_value(&b, "second");
	close_backend();
}
END_TEST

/* Inside a batch, reads see the batch's own changes. */
START_TEST(batch_reads_its_writes)
{
	open_backend(_i);
	struct paxos_record rec = {.iid = 5, .promised = 101};
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	ck_assert_int_eq(get(5, &rec), 1);
	ck_assert_uint_eq(rec.promised, 101);
	ck_assert_uint_eq(rec.accepted, 0);
	rec = (struct paxos_record){
	    .iid = 5, .promised = 202, .accepted = 202, .value = {(const uint8_t *)"v", 1}};
	ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	rec = (struct paxos_record){.iid = 2, .promised = 101};
	ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	ck_assert_int_eq(st->ops->trim(st, 3), PAXOS_OK);
	ck_assert_int_eq(get(2, &rec), 0);
	ck_assert_int_eq(get(5, &rec), 1);
	expect_value(&rec, "v");
	ck_assert_uint_eq(st->ops->highest_accepted(st), 5);
	ck_assert_uint_eq(st->ops->trim_iid(st), 3);
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	ck_assert_int_eq(get(5, &rec), 1);
	expect_value(&rec, "v");
	close_backend();
}
END_TEST

START_TEST(no_error_message_when_fine)
{
	open_backend(_i);
	ck_assert_int_eq(put(1, 101, 101, "x", 1, false), PAXOS_OK);
	ck_assert_str_eq(paxos_storage_error(st), "");
	close_backend();
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("storage");
	TCase *tc = tcase_create("conformance");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, get_missing, 0, BACKEND_COUNT);
	tcase_add_loop_test(tc, put_then_get, 0, BACKEND_COUNT);
	tcase_add_loop_test(tc, promise_only_record, 0, BACKEND_COUNT);
	tcase_add_loop_test(tc, overwrite, 0, BACKEND_COUNT);
	tcase_add_loop_test(tc, put_back_what_get_returned, 0, BACKEND_COUNT);
	tcase_add_loop_test(tc, value_lengths, 0, BACKEND_COUNT);
	tcase_add_loop_test(tc, sparse_big_iids, 0, BACKEND_COUNT);
	tcase_add_loop_test(tc, trim_drops_up_to_iid, 0, BACKEND_COUNT);
	tcase_add_loop_test(tc, rolling_trim, 0, BACKEND_COUNT);
	tcase_add_loop_test(tc, highest_accepted, 0, BACKEND_COUNT);
	tcase_add_loop_test(tc, iid_zero_invalid, 0, BACKEND_COUNT);
	tcase_add_loop_test(tc, has_a_name, 0, BACKEND_COUNT);
	tcase_add_loop_test(tc, values_survive_other_gets, 0, BACKEND_COUNT);
	tcase_add_loop_test(tc, batch_reads_its_writes, 0, BACKEND_COUNT);
	tcase_add_loop_test(tc, no_error_message_when_fine, 0, BACKEND_COUNT);
	suite_add_tcase(s, tc);

	TCase *memory = tcase_create("memory");
	tcase_add_test(memory, memory_values_span_chunks);
	tcase_add_test(memory, memory_ring_wraps_and_grows);
	suite_add_tcase(s, memory);
	return s;
}
