/* Storage conformance: every backend in the table must pass the same suite, written against
 * include/paxos/storage.h only. */
#include <check.h>
#include <paxos/storage.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/* A backend under test: opens a fresh, empty storage in dir (a new empty directory, for
 * backends that keep files). */
struct backend {
	const char *name;
	struct paxos_storage *(*open)(const char *dir);
};

static struct paxos_storage *open_memory(const char *dir)
{
	(void)dir;
	return paxos_storage_memory_new();
}

static const struct backend backends[] = {
    {"memory", open_memory},
};
#define BACKEND_COUNT ((int)(sizeof(backends) / sizeof(backends[0])))

/* The storage and directory of the running test. */
static struct paxos_storage *st;
static char dir[64];

static void open_backend(int i)
{
	snprintf(dir, sizeof(dir), "/tmp/paxos-storage-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	st = backends[i].open(dir);
	ck_assert_msg(st != NULL, "backend %s failed to open", backends[i].name);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void close_backend(void)
{
	paxos_storage_destroy(st);
	st = NULL;
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static int put(paxos_iid iid, paxos_ballot promised, paxos_ballot accepted, const void *data,
	       uint32_t len, bool final)
{
	struct paxos_record rec = {.iid = iid,
				   .promised = promised,
				   .accepted = accepted,
				   .value = {data, len},
				   .final = final};
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	int rc = st->ops->put(st, &rec);
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	return rc;
}

static int get(paxos_iid iid, struct paxos_record *rec)
{
	memset(rec, 0xa5, sizeof(*rec));
	return st->ops->get(st, iid, rec);
}

static void expect_value(const struct paxos_record *rec, const char *s)
{
	ck_assert_uint_eq(rec->value.len, strlen(s));
	if (rec->value.len)
		ck_assert_mem_eq(rec->value.data, s, rec->value.len);
}

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

static void fill(uint8_t *buf, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 31u);
}

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
	uint8_t v[8];
	struct paxos_record rec;
	for (paxos_iid i = 1; i <= 20000; i++) {
		memcpy(v, &i, sizeof(v));
		ck_assert_int_eq(put(i, 101, 101, v, sizeof(v), false), PAXOS_OK);
		if (i % 1000 == 0) {
			ck_assert_int_eq(st->ops->trim(st, i - 500), PAXOS_OK);
			ck_assert_int_eq(get(i - 500, &rec), 0);
			ck_assert_int_eq(get(i - 499, &rec), 1);
			ck_assert_int_eq(memcmp(rec.value.data, &(paxos_iid){i - 499}, 8), 0);
		}
	}
	ck_assert_uint_eq(st->ops->trim_iid(st), 19500);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 20000);
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
	close_backend();
}
END_TEST

static Suite *storage_suite(void)
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
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(storage_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
