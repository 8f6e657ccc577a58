/* SPDX-License-Identifier: BSD-3-Clause */
/* Client sessions' I/O-free parts (paxos/session_table.h): the header's round trip and its
 * malformed forms, the dedupe table's verdicts, its LRU bound, and export/import. */
#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include <paxos/session_table.h>

static struct paxos_session_header hdr(uint64_t client, uint64_t seq, uint64_t base)
{
	return (struct paxos_session_header){.client = client, .seq = seq, .base = base};
}

START_TEST(test_header_round_trip)
{
	const uint64_t values[] = {1, 127, 128, 300, 1u << 20, UINT64_MAX};
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		struct paxos_session_header h = hdr(values[i], values[i], values[i] > 5 ? 5 : 1);
		h.flags = i % 2 ? PAXOS_SESSION_NOOP : 0;
		uint8_t buf[PAXOS_SESSION_HEADER_MAX + 3];
		size_t n = paxos_session_header_encode(&h, buf, sizeof(buf));
		ck_assert_uint_gt(n, 4);
		ck_assert_uint_le(n, PAXOS_SESSION_HEADER_MAX);
		memcpy(buf + n, "abc", 3);
		struct paxos_session_header out;
		size_t hl = 0;
		ck_assert_int_eq(paxos_session_header_decode(buf, n + 3, &out, &hl), 1);
		ck_assert_uint_eq(hl, n);
		ck_assert(out.client == h.client && out.seq == h.seq && out.base == h.base &&
			  out.flags == h.flags);
	}
	/* Compact: a small client id and sequence number take 7 bytes. */
	uint8_t buf[PAXOS_SESSION_HEADER_MAX];
	struct paxos_session_header small = hdr(5, 9, 9);
	ck_assert_uint_eq(paxos_session_header_encode(&small, buf, sizeof(buf)), 7);
	/* The worst case fits PAXOS_SESSION_HEADER_MAX exactly. */
	struct paxos_session_header big = hdr(UINT64_MAX, UINT64_MAX, 1);
	ck_assert_uint_eq(paxos_session_header_encode(&big, buf, sizeof(buf)),
			  PAXOS_SESSION_HEADER_MAX);
	ck_assert_uint_eq(paxos_session_header_encode(&big, buf, sizeof(buf) - 1), 0);
}
END_TEST

START_TEST(test_header_invalid)
{
	uint8_t buf[PAXOS_SESSION_HEADER_MAX];
	struct paxos_session_header bad[] = {hdr(0, 1, 1), hdr(1, 0, 0), hdr(1, 2, 0),
					     hdr(1, 2, 3)};
	for (size_t i = 0; i < 4; i++)
		ck_assert_uint_eq(paxos_session_header_encode(&bad[i], buf, sizeof(buf)), 0);
	struct paxos_session_header flags = hdr(1, 1, 1);
	flags.flags = 0x80;
	ck_assert_uint_eq(paxos_session_header_encode(&flags, buf, sizeof(buf)), 0);

	struct paxos_session_header out;
	size_t hl;
	/* Plain values: no magic. */
	ck_assert_int_eq(paxos_session_header_decode("hello", 5, &out, &hl), 0);
	ck_assert_int_eq(paxos_session_header_decode("", 0, &out, &hl), 0);
	ck_assert_int_eq(paxos_session_header_decode("\xf5", 1, &out, &hl), 0);
	/* The magic, then something else. */
	const struct {
		const char *b;
		size_t n;
	} malformed[] = {
	    {"\xf5\x53", 2},                         /* truncated */
	    {"\xf5\x53\x02\x00\x01\x01\x00", 7},     /* another version */
	    {"\xf5\x53\x01\x02\x01\x01\x00", 7},     /* an unknown flag */
	    {"\xf5\x53\x01\x00\x00\x01\x00", 7},     /* client 0 */
	    {"\xf5\x53\x01\x00\x01\x00\x00", 7},     /* seq 0 */
	    {"\xf5\x53\x01\x00\x01\x01\x01", 7},     /* base 0 */
	    {"\xf5\x53\x01\x00\x01\x81", 6},         /* truncated varint */
	    {"\xf5\x53\x01\x00\x81\x00\x01\x00", 8}, /* not minimal */
	    {"\xf5\x53\x01\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02\x01\x00",
	     16}, /* > 64 bits */
	};
	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++)
		ck_assert_msg(paxos_session_header_decode(malformed[i].b, malformed[i].n, &out,
							  &hl) == PAXOS_E_MALFORMED,
			      "case %zu", i);
	/* Every truncation of a valid header is refused, never read past. */
	struct paxos_session_header h = hdr(1ull << 40, 1ull << 30, (1ull << 30) - 3);
	size_t n = paxos_session_header_encode(&h, buf, sizeof(buf));
	for (size_t k = 2; k < n; k++) {
		uint8_t *copy = malloc(k);
		memcpy(copy, buf, k);
		ck_assert_int_eq(paxos_session_header_decode(copy, k, &out, &hl),
				 PAXOS_E_MALFORMED);
		free(copy);
	}
}
END_TEST

START_TEST(test_table_order)
{
	struct paxos_session_table *t = paxos_session_table_new(8);
	ck_assert_ptr_nonnull(t);
	struct paxos_session_header h = hdr(7, 1, 1);
	ck_assert_int_eq(paxos_session_table_apply(t, &h, 10), PAXOS_SESSION_APPLY);
	ck_assert_int_eq(paxos_session_table_apply(t, &h, 11), PAXOS_SESSION_DUPLICATE);
	/* 3 before 2: a gap, dropped; the session sends it again. */
	h = hdr(7, 3, 2);
	ck_assert_int_eq(paxos_session_table_apply(t, &h, 12), PAXOS_SESSION_GAP);
	h = hdr(7, 2, 2);
	ck_assert_int_eq(paxos_session_table_apply(t, &h, 13), PAXOS_SESSION_APPLY);
	h = hdr(7, 3, 2);
	ck_assert_int_eq(paxos_session_table_apply(t, &h, 14), PAXOS_SESSION_APPLY);
	uint64_t seq;
	paxos_iid iid;
	ck_assert(paxos_session_table_last(t, 7, &seq, &iid));
	ck_assert(seq == 3 && iid == 14);
	/* A session that gave up on 4 (timed out) goes on with 5, base 5. */
	h = hdr(7, 5, 5);
	ck_assert_int_eq(paxos_session_table_apply(t, &h, 15), PAXOS_SESSION_APPLY);
	h = hdr(7, 4, 4); /* a late copy of the given-up one: never after 5 */
	ck_assert_int_eq(paxos_session_table_apply(t, &h, 16), PAXOS_SESSION_DUPLICATE);
	/* An unknown client may start at its base only. */
	h = hdr(9, 4, 3);
	ck_assert_int_eq(paxos_session_table_apply(t, &h, 17), PAXOS_SESSION_GAP);
	h = hdr(9, 3, 3);
	ck_assert_int_eq(paxos_session_table_apply(t, &h, 18), PAXOS_SESSION_APPLY);
	uint64_t applied, dups, gaps;
	paxos_session_table_stats(t, &applied, &dups, &gaps);
	ck_assert(applied == 5 && dups == 2 && gaps == 2);
	ck_assert_uint_eq(paxos_session_table_count(t), 2);
	ck_assert(!paxos_session_table_last(t, 8, NULL, NULL));
	paxos_session_table_free(t);
}
END_TEST

START_TEST(test_table_lru)
{
	struct paxos_session_table *t = paxos_session_table_new(4);
	for (uint64_t c = 1; c <= 4; c++) {
		struct paxos_session_header h = hdr(c, 1, 1);
		ck_assert_int_eq(paxos_session_table_apply(t, &h, c), PAXOS_SESSION_APPLY);
	}
	/* Client 1 applies again: client 2 is now the least recent. A duplicate does not count. */
	struct paxos_session_header h = hdr(1, 2, 2);
	ck_assert_int_eq(paxos_session_table_apply(t, &h, 5), PAXOS_SESSION_APPLY);
	h = hdr(2, 1, 1);
	ck_assert_int_eq(paxos_session_table_apply(t, &h, 6), PAXOS_SESSION_DUPLICATE);
	h = hdr(5, 1, 1);
	ck_assert_int_eq(paxos_session_table_apply(t, &h, 7), PAXOS_SESSION_APPLY);
	ck_assert_uint_eq(paxos_session_table_count(t), 4);
	ck_assert(!paxos_session_table_last(t, 2, NULL, NULL));
	for (uint64_t c = 1; c <= 5; c++)
		ck_assert(paxos_session_table_last(t, c, NULL, NULL) == (c != 2));
	paxos_session_table_free(t);

	/* Many clients through a small table: the index stays consistent under eviction. */
	t = paxos_session_table_new(64);
	for (uint64_t c = 1; c <= 10000; c++) {
		struct paxos_session_header x = hdr(c * 0x9e3779b97f4a7c15ull, 1, 1);
		ck_assert_int_eq(paxos_session_table_apply(t, &x, c), PAXOS_SESSION_APPLY);
		ck_assert_uint_le(paxos_session_table_count(t), 64);
	}
	for (uint64_t c = 1; c <= 10000; c++)
		ck_assert(paxos_session_table_last(t, c * 0x9e3779b97f4a7c15ull, NULL, NULL) ==
			  (c > 10000 - 64));
	paxos_session_table_free(t);
	ck_assert_ptr_null(paxos_session_table_new(PAXOS_SESSION_CLIENTS_MAX + 1));
}
END_TEST

START_TEST(test_table_export_import)
{
	struct paxos_session_table *a = paxos_session_table_new(3), *b = paxos_session_table_new(3);
	for (uint64_t c = 1; c <= 3; c++) {
		struct paxos_session_header h = hdr(c, 1, 1);
		paxos_session_table_apply(a, &h, c);
	}
	struct paxos_session_header h = hdr(1, 2, 2);
	paxos_session_table_apply(a, &h, 4);
	paxos_session_table_apply(a, &h, 5); /* a duplicate */
	size_t size = paxos_session_table_export_size(a), len = 0;
	uint8_t *buf = malloc(size);
	ck_assert_int_eq(paxos_session_table_export(a, buf, size - 1, &len), PAXOS_E_FULL);
	ck_assert_int_eq(paxos_session_table_export(a, buf, size, &len), PAXOS_OK);
	ck_assert_uint_eq(len, size);
	ck_assert_int_eq(paxos_session_table_import(b, buf, len), PAXOS_OK);
	uint64_t seq, applied, dups;
	paxos_iid iid;
	ck_assert(paxos_session_table_last(b, 1, &seq, &iid) && seq == 2 && iid == 4);
	paxos_session_table_stats(b, &applied, &dups, NULL);
	ck_assert(applied == 4 && dups == 1);
	/* The eviction order came along: a new client evicts client 2 in both. */
	struct paxos_session_header n = hdr(4, 1, 1);
	paxos_session_table_apply(a, &n, 6);
	paxos_session_table_apply(b, &n, 6);
	ck_assert(!paxos_session_table_last(a, 2, NULL, NULL));
	ck_assert(!paxos_session_table_last(b, 2, NULL, NULL));
	/* And both export the same bytes again. */
	size_t la, lb;
	uint8_t *ea = malloc(size), *eb = malloc(size);
	paxos_session_table_export(a, ea, size, &la);
	paxos_session_table_export(b, eb, size, &lb);
	ck_assert(la == lb && memcmp(ea, eb, la) == 0);

	/* Damaged or too big: refused, the table left empty. */
	ck_assert_int_eq(paxos_session_table_import(b, buf, len - 1), PAXOS_E_MALFORMED);
	ck_assert_uint_eq(paxos_session_table_count(b), 0);
	buf[0] ^= 1;
	ck_assert_int_eq(paxos_session_table_import(b, buf, len), PAXOS_E_MALFORMED);
	buf[0] ^= 1;
	memcpy(buf + 36 + 24, buf + 36, 8); /* a client twice */
	ck_assert_int_eq(paxos_session_table_import(b, buf, len), PAXOS_E_MALFORMED);
	ck_assert_uint_eq(paxos_session_table_count(b), 0);
	struct paxos_session_table *small = paxos_session_table_new(2);
	ck_assert_int_eq(paxos_session_table_import(small, ea, la), PAXOS_E_FULL);
	ck_assert_int_eq(paxos_session_table_import(small, NULL, 0), PAXOS_E_MALFORMED);
	paxos_session_table_free(small);
	free(ea);
	free(eb);
	free(buf);
	paxos_session_table_free(a);
	paxos_session_table_free(b);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("session");
	TCase *t = tcase_create("session");
	tcase_add_test(t, test_header_round_trip);
	tcase_add_test(t, test_header_invalid);
	tcase_add_test(t, test_table_order);
	tcase_add_test(t, test_table_lru);
	tcase_add_test(t, test_table_export_import);
	suite_add_tcase(s, t);
	return s;
}
