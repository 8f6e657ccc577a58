/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proposer's pending list: a deque with limits, plus removal of a value from anywhere
 * (a value another proposer got delivered). Checked case by case and against a plain array
 * model under random operations, which also exercises the ring's compaction.
 */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pending.h"
#include "settled.h"
#include "support.h"

#define MAXV 24u

static struct pending q;

static void push_back(const char *s)
{
	ck_assert_int_eq(pending_push_back(&q, (const uint8_t *)s, (uint32_t)strlen(s)), PAXOS_OK);
}

static bool remove_value(const char *s)
{
	return pending_remove(&q, (const uint8_t *)s, (uint32_t)strlen(s));
}

static void expect_pop(const char *s)
{
	uint8_t buf[MAXV];
	uint32_t len = 0;
	ck_assert(pending_pop_front(&q, buf, &len));
	ck_assert_uint_eq(len, strlen(s));
	ck_assert(memcmp(buf, s, len) == 0);
}

/* The whole list, front to back, equals the given values. */
static void expect_list(const char *const *want, uint32_t n)
{
	ck_assert_uint_eq(pending_count(&q), n);
	for (uint32_t i = 0; i < n; i++) {
		struct paxos_value v = pending_at(&q, i);
		ck_assert_msg(value_is(&v, want[i]), "position %u is not %s", i, want[i]);
	}
}

START_TEST(test_remove_anywhere)
{
	ck_assert_int_eq(pending_init(&q, 8, 10, MAXV), PAXOS_OK);
	const char *all[] = {"a", "b", "c", "d", "e"};
	for (int i = 0; i < 5; i++)
		push_back(all[i]);
	ck_assert(remove_value("c")); /* middle */
	ck_assert(!remove_value("c"));
	ck_assert(!remove_value("zz"));
	const char *after_c[] = {"a", "b", "d", "e"};
	expect_list(after_c, 4);
	ck_assert(remove_value("a")); /* front */
	ck_assert(remove_value("e")); /* back */
	const char *left[] = {"b", "d"};
	expect_list(left, 2);
	push_back("f");
	ck_assert_int_eq(pending_push_front(&q, (const uint8_t *)"g", 1), PAXOS_OK);
	expect_pop("g");
	expect_pop("b");
	expect_pop("d");
	expect_pop("f");
	uint8_t buf[MAXV];
	uint32_t len;
	ck_assert(!pending_pop_front(&q, buf, &len));
	ck_assert(!remove_value("b"));
	pending_destroy(&q);
}
END_TEST

START_TEST(test_equal_values_one_at_a_time)
{
	ck_assert_int_eq(pending_init(&q, 8, 8, MAXV), PAXOS_OK);
	push_back("x");
	push_back("y");
	push_back("x");
	ck_assert(remove_value("x"));
	ck_assert_uint_eq(pending_count(&q), 2);
	ck_assert(remove_value("x"));
	ck_assert(!remove_value("x"));
	const char *left[] = {"y"};
	expect_list(left, 1);
	/* The empty value is a value too. */
	ck_assert_int_eq(pending_push_back(&q, NULL, 0), PAXOS_OK);
	ck_assert(pending_remove(&q, NULL, 0));
	ck_assert(!pending_remove(&q, NULL, 0));
	pending_destroy(&q);
}
END_TEST

START_TEST(test_limits_count_values_not_holes)
{
	ck_assert_int_eq(pending_init(&q, 3, 4, MAXV), PAXOS_OK);
	push_back("a");
	push_back("b");
	push_back("c");
	ck_assert_int_eq(pending_push_back(&q, (const uint8_t *)"d", 1), PAXOS_E_FULL);
	ck_assert(remove_value("b"));
	push_back("d"); /* the removed one's room is free again */
	ck_assert_int_eq(pending_push_front(&q, (const uint8_t *)"z", 1), PAXOS_OK);
	ck_assert_int_eq(pending_push_front(&q, (const uint8_t *)"y", 1), PAXOS_E_FULL);
	uint8_t big[MAXV + 1] = {0};
	ck_assert_int_eq(pending_push_back(&q, big, MAXV + 1), PAXOS_E_TOO_BIG);
	ck_assert(!pending_remove(&q, big, MAXV + 1));
	const char *all[] = {"z", "a", "c", "d"};
	expect_list(all, 4);
	pending_destroy(&q);
	ck_assert_int_eq(pending_init(&q, 0, 4, MAXV), PAXOS_E_INVALID);
	ck_assert_int_eq(pending_init(&q, 5, 4, MAXV), PAXOS_E_INVALID);
}
END_TEST

/* Random pushes, pops and removals against an array model; values are mostly distinct. */
START_TEST(test_random_against_model)
{
	enum { LIMIT = 40, CAP = 48, STEPS = 200000 };
	char model[CAP][MAXV];
	uint32_t n = 0, next = 0, drops = 0, rebuilds = 0;
	uint64_t rng = 88172645463325252ull;
	ck_assert_int_eq(pending_init(&q, LIMIT, CAP, MAXV), PAXOS_OK);
	for (int step = 0; step < STEPS; step++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		uint32_t op = (uint32_t)(rng % 100);
		/* Every other stretch removes only from the front, as a steady leader does: the
		 * index is dropped there and made again by the next removal from the middle. */
		if ((step / 3000) % 2 == 1 && op >= 65)
			op %= 65;
		bool was_indexed = q.indexed;
		char v[MAXV];
		if (op < 40) {
			snprintf(v, sizeof(v), "v%u", next++ % 5000);
			int rc = pending_push_back(&q, (const uint8_t *)v, (uint32_t)strlen(v));
			ck_assert_int_eq(rc, n < LIMIT ? PAXOS_OK : PAXOS_E_FULL);
			if (rc == PAXOS_OK)
				strcpy(model[n++], v);
		} else if (op < 50) {
			snprintf(v, sizeof(v), "f%u", (uint32_t)(rng >> 20) % 100);
			int rc = pending_push_front(&q, (const uint8_t *)v, (uint32_t)strlen(v));
			ck_assert_int_eq(rc, n < CAP ? PAXOS_OK : PAXOS_E_FULL);
			if (rc == PAXOS_OK) {
				memmove(model[1], model[0], sizeof(model[0]) * n++);
				strcpy(model[0], v);
			}
		} else if (op < 65) {
			uint8_t buf[MAXV];
			uint32_t len;
			bool got = pending_pop_front(&q, buf, &len);
			ck_assert(got == (n > 0));
			if (got) {
				ck_assert(len == strlen(model[0]) &&
					  memcmp(buf, model[0], len) == 0);
				memmove(model[0], model[1], sizeof(model[0]) * --n);
			}
		} else {
			/* Remove a value that is there (from anywhere) or one that is not. */
			if (n && op < 95)
				strcpy(v, model[(rng >> 24) % n]);
			else
				snprintf(v, sizeof(v), "absent%u", step);
			uint32_t at = n;
			for (uint32_t i = 0; i < n && at == n; i++)
				if (strcmp(model[i], v) == 0)
					at = i;
			bool removed = remove_value(v);
			ck_assert(removed == (at < n));
			/* Of equal values, the one nearest the front goes. */
			if (removed)
				memmove(model[at], model[at + 1], sizeof(model[0]) * (--n - at));
		}
		ck_assert_uint_eq(pending_count(&q), n);
		drops += was_indexed && !q.indexed;
		rebuilds += !was_indexed && q.indexed;
		if (step % 997 == 0)
			for (uint32_t i = 0; i < n; i++) {
				struct paxos_value pv = pending_at(&q, i);
				ck_assert(value_is(&pv, model[i]));
			}
	}
	ck_assert_uint_gt(drops, 10);
	ck_assert_uint_gt(rebuilds, 10);
	pending_destroy(&q);
}
END_TEST

/* Every length up to a few blocks of the hash's lanes, every single-byte change and a
 * swap of two words of one value give different hashes. */
START_TEST(test_hash_sees_every_byte)
{
	uint8_t a[200], b[200];
	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)(i * 37 + 11);
	for (uint32_t len = 0; len <= sizeof(a); len++) {
		uint64_t h = pending_hash(a, len);
		if (len > 0)
			ck_assert_uint_ne(h, pending_hash(a, len - 1));
		for (uint32_t i = 0; i < len; i++) {
			memcpy(b, a, len);
			b[i] ^= 0x40;
			ck_assert_uint_ne(h, pending_hash(b, len));
		}
		if (len >= 16) {
			memcpy(b, a, len);
			memcpy(b, a + 8, 8);
			memcpy(b + 8, a, 8);
			ck_assert_uint_ne(h, pending_hash(b, len));
		}
	}
}
END_TEST

START_TEST(test_settled_credits)
{
	struct settled st;
	ck_assert_int_eq(settled_init(&st, 4), PAXOS_OK);
	ck_assert(!settled_take(&st, 7));
	settled_add(&st, 7);
	settled_add(&st, 7);
	settled_add(&st, 0); /* hash 0 is a hash like any other */
	ck_assert(settled_take(&st, 7));
	ck_assert(settled_take(&st, 7)); /* one credit per delivery */
	ck_assert(!settled_take(&st, 7));
	ck_assert(settled_take(&st, 0));
	ck_assert(!settled_take(&st, 0));
	/* Only the most recent `size` credits are kept. */
	for (uint64_t h = 100; h < 110; h++)
		settled_add(&st, h);
	for (uint64_t h = 100; h < 106; h++)
		ck_assert(!settled_take(&st, h));
	for (uint64_t h = 106; h < 110; h++)
		ck_assert(settled_take(&st, h));
	settled_destroy(&st);
	ck_assert_int_eq(settled_init(&st, 0), PAXOS_E_INVALID);
}
END_TEST

/* Many credits whose hashes collide in the index, added, forgotten and taken at random. */
START_TEST(test_settled_random)
{
	enum { SIZE = 32, STEPS = 100000 };
	struct settled st;
	uint64_t model[SIZE]; /* the ring, 0 = none */
	uint32_t next = 0;
	uint64_t rng = 1234567;
	memset(model, 0, sizeof(model));
	ck_assert_int_eq(settled_init(&st, SIZE), PAXOS_OK);
	for (int step = 0; step < STEPS; step++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		uint64_t h = 1 + (rng >> 8) % 48 * 128; /* same home slot modulo 128 */
		if (rng % 3) {
			model[next] = h;
			next = (next + 1) % SIZE;
			settled_add(&st, h);
		} else {
			bool have = false; /* the oldest equal credit goes */
			for (uint32_t k = 0; k < SIZE && !have; k++)
				if (model[(next + k) % SIZE] == h) {
					model[(next + k) % SIZE] = 0;
					have = true;
				}
			ck_assert(settled_take(&st, h) == have);
		}
	}
	settled_destroy(&st);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("pending");
	TCase *t = tcase_create("pending");
	tcase_add_test(t, test_remove_anywhere);
	tcase_add_test(t, test_equal_values_one_at_a_time);
	tcase_add_test(t, test_limits_count_values_not_holes);
	tcase_add_test(t, test_random_against_model);
	tcase_add_test(t, test_hash_sees_every_byte);
	tcase_add_test(t, test_settled_credits);
	tcase_add_test(t, test_settled_random);
	suite_add_tcase(s, t);
	return s;
}
