/* SPDX-License-Identifier: BSD-3-Clause */
/* Value batching frames (lib/core/batch.h): round trip, bounds, malformed input. */
#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "batch.h"

static struct paxos_value val(const char *s)
{
	struct paxos_value v = {(const uint8_t *)s, (uint32_t)strlen(s)};
	return v;
}

START_TEST(test_round_trip)
{
	uint8_t buf[64];
	uint32_t used = 0;
	const char *in[] = {"alpha", "", "b", "gamma-delta"};
	for (int k = 0; k < 4; k++) {
		struct paxos_value v = val(in[k]);
		ck_assert_int_eq(paxos_batch_append(buf, sizeof(buf), &used, &v), PAXOS_OK);
	}
	ck_assert_uint_eq(used, 4 * PAXOS_BATCH_HEADER + 5 + 0 + 1 + 11);
	/* The length is little-endian u32 in front of each value. */
	ck_assert(buf[0] == 5 && buf[1] == 0 && buf[2] == 0 && buf[3] == 0);
	ck_assert(memcmp(buf + 4, "alpha", 5) == 0);

	struct paxos_value frame = {buf, used}, out;
	uint32_t count = 0;
	ck_assert_int_eq(paxos_batch_count(&frame, &count), PAXOS_OK);
	ck_assert_uint_eq(count, 4);
	struct paxos_batch_iter it;
	paxos_batch_iter_init(&it, &frame);
	for (int k = 0; k < 4; k++) {
		ck_assert_int_eq(paxos_batch_next(&it, &out), 1);
		ck_assert_uint_eq(out.len, strlen(in[k]));
		ck_assert(out.len == 0 || memcmp(out.data, in[k], out.len) == 0);
		ck_assert(out.data >= buf && out.data + out.len <= buf + used);
	}
	ck_assert_int_eq(paxos_batch_next(&it, &out), 0);
	ck_assert_int_eq(paxos_batch_next(&it, &out), 0);
}
END_TEST

START_TEST(test_append_bounded)
{
	uint8_t buf[16];
	memset(buf, 0xEE, sizeof(buf));
	uint32_t used = 0;
	struct paxos_value v8 = val("12345678"), v4 = val("abcd"), v1 = val("z");
	ck_assert_int_eq(paxos_batch_append(buf, 12, &used, &v8), PAXOS_OK); /* exactly 12 */
	ck_assert_uint_eq(used, 12);
	ck_assert_int_eq(paxos_batch_append(buf, 12, &used, &v1), PAXOS_E_FULL);
	ck_assert_uint_eq(used, 12);
	ck_assert_uint_eq(buf[12], 0xEE); /* nothing written past cap */
	used = 0;
	ck_assert_int_eq(paxos_batch_append(buf, 7, &used, &v4), PAXOS_E_FULL); /* needs 8 */
	ck_assert_uint_eq(used, 0);
	ck_assert_uint_eq(buf[0], 8); /* the failed append wrote nothing */
	/* A length near 2^32 cannot wrap the bound. */
	used = 4;
	ck_assert_ptr_null(paxos_batch_reserve(buf, 16, &used, UINT32_MAX - 2));
	used = 17; /* inconsistent input: refused */
	ck_assert_ptr_null(paxos_batch_reserve(buf, 16, &used, 0));
	used = 0;
	uint8_t *dst = paxos_batch_reserve(buf, 16, &used, 3);
	ck_assert_ptr_eq(dst, buf + 4);
	ck_assert_uint_eq(used, 7);
}
END_TEST

static int count_of(const uint8_t *data, uint32_t len, uint32_t *count)
{
	struct paxos_value f = {data, len};
	return paxos_batch_count(&f, count);
}

START_TEST(test_malformed)
{
	uint32_t count = 99;
	/* Empty: a frame holds at least one value. */
	ck_assert_int_eq(count_of(NULL, 0, &count), PAXOS_E_MALFORMED);
	ck_assert_int_eq(count_of((const uint8_t *)"", 0, &count), PAXOS_E_MALFORMED);
	ck_assert_int_eq(paxos_batch_count(NULL, &count), PAXOS_E_MALFORMED);
	/* NULL data with a length is treated as empty, never read. */
	ck_assert_int_eq(count_of(NULL, 8, &count), PAXOS_E_MALFORMED);
	/* A truncated header. */
	const uint8_t short_hdr[] = {1, 0, 0};
	ck_assert_int_eq(count_of(short_hdr, 3, &count), PAXOS_E_MALFORMED);
	/* A length past the end, by one. */
	const uint8_t over[] = {3, 0, 0, 0, 'a', 'b'};
	ck_assert_int_eq(count_of(over, sizeof(over), &count), PAXOS_E_MALFORMED);
	/* A huge length (would wrap a naive offset + length). */
	const uint8_t huge[] = {0xFF, 0xFF, 0xFF, 0xFF, 'x'};
	ck_assert_int_eq(count_of(huge, sizeof(huge), &count), PAXOS_E_MALFORMED);
	/* A good value followed by garbage: the whole frame is malformed ... */
	const uint8_t tail[] = {1, 0, 0, 0, 'a', 9, 0};
	ck_assert_int_eq(count_of(tail, sizeof(tail), &count), PAXOS_E_MALFORMED);
	ck_assert_uint_eq(count, 99); /* untouched */
	/* ... while the iterator yields the good value, then reports the rest. */
	struct paxos_value f = {tail, sizeof(tail)}, v;
	struct paxos_batch_iter it;
	paxos_batch_iter_init(&it, &f);
	ck_assert_int_eq(paxos_batch_next(&it, &v), 1);
	ck_assert(v.len == 1 && v.data[0] == 'a');
	ck_assert_int_eq(paxos_batch_next(&it, &v), PAXOS_E_MALFORMED);
	ck_assert_int_eq(paxos_batch_next(&it, &v), PAXOS_E_MALFORMED);
	/* A frame of one empty value is fine. */
	const uint8_t empty_value[] = {0, 0, 0, 0};
	ck_assert_int_eq(count_of(empty_value, 4, &count), PAXOS_OK);
	ck_assert_uint_eq(count, 1);
}
END_TEST

/* Every truncation of a good frame is either a shorter good frame or reported. */
/* Values that name their submission carry its id in front of their bytes; readers see the
 * bytes as ever, and the id beside them. A value without room for its id goes without. */
START_TEST(test_submission_ids)
{
	uint8_t buf[64];
	uint32_t used = 0;
	uint8_t *dst = paxos_batch_reserve_id(buf, sizeof(buf), &used, 3, 0x0102030405060708ull);
	ck_assert_ptr_nonnull(dst);
	memcpy(dst, "abc", 3);
	dst = paxos_batch_reserve_id(buf, sizeof(buf), &used, 2, 0); /* names none */
	ck_assert_ptr_nonnull(dst);
	memcpy(dst, "de", 2);
	ck_assert_uint_eq(used, 4 + 8 + 3 + 4 + 2);
	/* 64 - 21 = 43 bytes left: 39 fit with a header, not with an id as well. */
	dst = paxos_batch_reserve_id(buf, sizeof(buf), &used, 39, 77);
	ck_assert_ptr_nonnull(dst);
	memset(dst, 'f', 39);
	ck_assert_uint_eq(used, sizeof(buf));

	struct paxos_value frame = {buf, used}, v;
	struct paxos_batch_iter it;
	paxos_batch_iter_init(&it, &frame);
	ck_assert_int_eq(paxos_batch_next(&it, &v), 1);
	ck_assert_uint_eq(v.len, 3);
	ck_assert(memcmp(v.data, "abc", 3) == 0);
	ck_assert_uint_eq(it.id, 0x0102030405060708ull);
	ck_assert_int_eq(paxos_batch_next(&it, &v), 1);
	ck_assert_uint_eq(v.len, 2);
	ck_assert_uint_eq(it.id, 0);
	ck_assert_int_eq(paxos_batch_next(&it, &v), 1);
	ck_assert_uint_eq(v.len, 39);
	ck_assert_uint_eq(it.id, 0);
	ck_assert_int_eq(paxos_batch_next(&it, &v), 0);
	uint32_t count;
	ck_assert_int_eq(paxos_batch_count(&frame, &count), PAXOS_OK);
	ck_assert_uint_eq(count, 3);
	/* Cut inside the id: malformed, never read beyond the end. */
	for (uint32_t len = 5; len < 4 + 8 + 3; len++) {
		struct paxos_value cut = {buf, len};
		ck_assert_int_eq(paxos_batch_count(&cut, &count), PAXOS_E_MALFORMED);
	}
	/* The skip frame is still no frame of values. */
	paxos_batch_write_skip(buf);
	struct paxos_value skip = {buf, PAXOS_BATCH_SKIP_LEN};
	ck_assert_int_eq(paxos_batch_count(&skip, &count), PAXOS_E_MALFORMED);
}
END_TEST

START_TEST(test_every_truncation)
{
	uint8_t buf[64];
	uint32_t used = 0;
	const char *in[] = {"one", "two2", "", "three"};
	for (int k = 0; k < 4; k++) {
		struct paxos_value v = val(in[k]);
		ck_assert_int_eq(paxos_batch_append(buf, sizeof(buf), &used, &v), PAXOS_OK);
	}
	uint32_t ends[] = {7, 15, 19, 28}; /* where each value ends */
	for (uint32_t len = 0; len < used; len++) {
		uint8_t *copy = malloc(len ? len : 1); /* exact size: a read past it is caught by
							  sanitizers */
		memcpy(copy, buf, len);
		uint32_t count = 0;
		int rc = count_of(copy, len, &count);
		bool boundary = false;
		for (int k = 0; k < 4; k++)
			if (len == ends[k]) {
				boundary = true;
				ck_assert_int_eq(rc, PAXOS_OK);
				ck_assert_uint_eq(count, (uint32_t)k + 1);
			}
		if (!boundary)
			ck_assert_int_eq(rc, PAXOS_E_MALFORMED);
		free(copy);
	}
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("batch");
	TCase *t = tcase_create("frame");
	tcase_add_test(t, test_round_trip);
	tcase_add_test(t, test_append_bounded);
	tcase_add_test(t, test_malformed);
	tcase_add_test(t, test_every_truncation);
	tcase_add_test(t, test_submission_ids);
	suite_add_tcase(s, t);
	return s;
}
