/* SPDX-License-Identifier: BSD-3-Clause */
/* Storage conformance: every backend in the table must pass the same suite, written against
 * include/paxos/storage.h only. */
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

#define LMDB_TEST_MAP_SIZE (64ull << 20)

/* What survives the process dying without closing the store. */
enum crash_survival {
	CRASH_NOT_DURABLE, /* memory: nothing to reopen */
	CRASH_KEEPS_ALL,   /* every committed batch */
	CRASH_MAY_LOSE,    /* reopens consistent, recent commits may be gone */
	CRASH_REFUSED,     /* reopening fails with a clear error */
};

/* A backend under test: opens the storage kept in dir (a new empty directory at first). */
struct backend {
	const char *name; /* ops->name */
	const char *label;
	enum paxos_durability mode;
	struct paxos_storage *(*open)(const char *dir, enum paxos_durability mode, char *err,
				      size_t errlen);
	bool slow; /* syncs at every commit: tests use fewer commits */
	enum crash_survival crash;
	bool pipelined; /* commits become durable later, on the backend's thread (sync) */
};

static struct paxos_storage *open_memory(const char *dir, enum paxos_durability mode, char *err,
					 size_t errlen)
{
	(void)dir;
	(void)mode;
	(void)err;
	(void)errlen;
	return paxos_storage_memory_new();
}

static struct paxos_storage *open_lmdb(const char *dir, enum paxos_durability mode, char *err,
				       size_t errlen)
{
	return paxos_storage_lmdb_new(dir, mode, LMDB_TEST_MAP_SIZE, err, errlen);
}

/* Durable backends come after memory: tests of reopening loop from 1. */
static const struct backend backends[] = {
    {"memory", "memory", PAXOS_DURABILITY_NONE, open_memory, false, CRASH_NOT_DURABLE, false},
    {"lmdb", "lmdb nosync", PAXOS_DURABILITY_NOSYNC, open_lmdb, false, CRASH_KEEPS_ALL, false},
    {"lmdb", "lmdb sync", PAXOS_DURABILITY_SYNC, open_lmdb, true, CRASH_KEEPS_ALL, true},
    {"bdb", "bdb inmemory-log", PAXOS_DURABILITY_INMEMORY_LOG, paxos_storage_bdb_new, false,
     CRASH_REFUSED, false},
    {"bdb", "bdb nosync", PAXOS_DURABILITY_NOSYNC, paxos_storage_bdb_new, false, CRASH_MAY_LOSE,
     false},
    {"bdb", "bdb write-nosync", PAXOS_DURABILITY_WRITE_NOSYNC, paxos_storage_bdb_new, false,
     CRASH_KEEPS_ALL, false},
    {"bdb", "bdb sync", PAXOS_DURABILITY_SYNC, paxos_storage_bdb_new, true, CRASH_KEEPS_ALL, true},
    {"bdb", "bdb dbsync", PAXOS_DURABILITY_DBSYNC, paxos_storage_bdb_new, true, CRASH_KEEPS_ALL,
     true},
};
#define BACKEND_COUNT ((int)(sizeof(backends) / sizeof(backends[0])))
#define FIRST_DURABLE 1

/* The storage and directory of the running test. */
static struct paxos_storage *st;
static int backend_index;
static char dir[64];
static char err[1024];

static struct paxos_storage *open_in(int i, const char *where)
{
	err[0] = '\0';
	return backends[i].open(where, backends[i].mode, err, sizeof(err));
}

static void open_backend(int i)
{
	snprintf(dir, sizeof(dir), "/tmp/paxos-storage-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	backend_index = i;
	st = open_in(i, dir);
	ck_assert_msg(st != NULL, "backend %s failed to open: %s", backends[i].label, err);
}

/* Closes the storage and opens it again from what it left in dir. */
static void reopen(void)
{
	paxos_storage_destroy(st);
	st = open_in(backend_index, dir);
	ck_assert_msg(st != NULL, "%s failed to reopen: %s", backends[backend_index].label, err);
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

/* --- durable backends ------------------------------------------------------------------- */

static void remove_tree(const char *path)
{
	nftw(path, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void expect_record(paxos_iid iid, paxos_ballot promised, paxos_ballot accepted,
			  const void *data, uint32_t len, bool final)
{
	struct paxos_record rec;
	ck_assert_msg(get(iid, &rec) == 1, "instance %llu missing", (unsigned long long)iid);
	ck_assert_uint_eq(rec.iid, iid);
	ck_assert_uint_eq(rec.promised, promised);
	ck_assert_uint_eq(rec.accepted, accepted);
	ck_assert_int_eq(rec.final, final);
	ck_assert_uint_eq(rec.value.len, len);
	if (len)
		ck_assert_int_eq(memcmp(rec.value.data, data, len), 0);
}

START_TEST(reopen_keeps_state)
{
	open_backend(_i);
	static uint8_t big[5000];
	fill(big, sizeof(big), 7);
	char v[16];
	for (paxos_iid i = 1; i <= 10; i++) {
		int len = snprintf(v, sizeof(v), "v%llu", (unsigned long long)i);
		ck_assert_int_eq(put(i, 101, 101, v, (uint32_t)len, false), PAXOS_OK);
	}
	ck_assert_int_eq(put(11, 303, 202, big, sizeof(big), true), PAXOS_OK);
	ck_assert_int_eq(put(12, 404, 0, NULL, 0, false), PAXOS_OK); /* promise only */
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	ck_assert_int_eq(st->ops->trim(st, 4), PAXOS_OK);
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	ck_assert_int_eq(put(13, 505, 0, NULL, 0, false), PAXOS_OK);

	reopen();
	ck_assert_uint_eq(st->ops->trim_iid(st), 4);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 11);
	struct paxos_record rec;
	for (paxos_iid i = 1; i <= 4; i++)
		ck_assert_int_eq(get(i, &rec), 0);
	for (paxos_iid i = 5; i <= 10; i++) {
		int len = snprintf(v, sizeof(v), "v%llu", (unsigned long long)i);
		expect_record(i, 101, 101, v, (uint32_t)len, false);
	}
	expect_record(11, 303, 202, big, sizeof(big), true);
	expect_record(12, 404, 0, NULL, 0, false);
	expect_record(13, 505, 0, NULL, 0, false);
	ck_assert_int_eq(get(14, &rec), 0);

	/* Trimming past the highest accepted instance deletes its record, not the number. */
	ck_assert_int_eq(st->ops->trim(st, 20), PAXOS_OK);
	reopen();
	ck_assert_uint_eq(st->ops->trim_iid(st), 20);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 11);
	ck_assert_int_eq(get(11, &rec), 0);
	ck_assert_int_eq(put(21, 101, 101, "v21", 3, false), PAXOS_OK);
	ck_assert_int_eq(put(22, 101, 0, NULL, 0, false), PAXOS_OK);
	reopen();
	ck_assert_uint_eq(st->ops->highest_accepted(st), 21);
	expect_record(21, 101, 101, "v21", 3, false);
	close_backend();
}
END_TEST

/* Everything between begin and commit is one transaction; an unfinished one is dropped. */
START_TEST(group_commit)
{
	open_backend(_i);
	char v[16];
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	for (paxos_iid i = 1; i <= 500; i++) {
		int len = snprintf(v, sizeof(v), "g%llu", (unsigned long long)i);
		struct paxos_record rec = {.iid = i,
					   .promised = 101,
					   .accepted = 101,
					   .value = {(const uint8_t *)v, (uint32_t)len}};
		ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	}
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	reopen();
	for (paxos_iid i = 1; i <= 500; i++) {
		int len = snprintf(v, sizeof(v), "g%llu", (unsigned long long)i);
		expect_record(i, 101, 101, v, (uint32_t)len, false);
	}
	ck_assert_uint_eq(st->ops->highest_accepted(st), 500);

	/* bdb inmemory-log commits what precedes a trim (its log could not hold a big one), so
	 * its unfinished batch here has no trim. */
	bool trim_in_batch = backends[_i].mode != PAXOS_DURABILITY_INMEMORY_LOG;
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	struct paxos_record rec = {.iid = 501, .promised = 101, .accepted = 101};
	ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	if (trim_in_batch)
		ck_assert_int_eq(st->ops->trim(st, 100), PAXOS_OK);
	reopen(); /* closes in the middle of the batch */
	ck_assert_int_eq(get(501, &rec), 0);
	ck_assert_uint_eq(st->ops->trim_iid(st), 0);
	ck_assert_int_eq(get(100, &rec), 1);
	close_backend();
}
END_TEST

/* A child process commits and dies without closing; the parent reopens. */
START_TEST(process_crash)
{
	open_backend(_i);
	paxos_storage_destroy(st); /* the child takes the store */
	st = NULL;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct paxos_storage *c = open_in(_i, dir);
		if (!c)
			_exit(2);
		for (paxos_iid i = 1; i <= 50; i++) {
			struct paxos_record rec = {.iid = i,
						   .promised = 101,
						   .accepted = 101,
						   .value = {(const uint8_t *)"crash", 5}};
			if (c->ops->begin(c) || c->ops->put(c, &rec) || c->ops->commit(c))
				_exit(3);
		}
		if (c->ops->begin(c) || c->ops->trim(c, 10) || c->ops->commit(c))
			_exit(4);
		/* Pipelined commits are durable once sync says so (see pipelined_kill). */
		if (paxos_storage_pipelined(c) && c->ops->sync(c, true, NULL) != PAXOS_OK)
			_exit(5);
		_exit(0); /* no destroy: as if killed */
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed: %d", status);

	st = open_in(_i, dir);
	struct paxos_record rec;
	switch (backends[_i].crash) {
	case CRASH_KEEPS_ALL:
		ck_assert_msg(st != NULL, "%s", err);
		ck_assert_uint_eq(st->ops->trim_iid(st), 10);
		ck_assert_uint_eq(st->ops->highest_accepted(st), 50);
		ck_assert_int_eq(get(10, &rec), 0);
		for (paxos_iid i = 11; i <= 50; i++)
			expect_record(i, 101, 101, "crash", 5, false);
		break;
	case CRASH_MAY_LOSE:
		ck_assert_msg(st != NULL, "%s", err);
		for (paxos_iid i = 1; i <= 50; i++)
			if (get(i, &rec) == 1)
				expect_record(i, 101, 101, "crash", 5, false);
		break;
	case CRASH_REFUSED:
		ck_assert_ptr_null(st);
		ck_assert_msg(strstr(err, "not closed cleanly") && strstr(err, "storage-fresh"),
			      "%s", err);
		break;
	case CRASH_NOT_DURABLE:
		break;
	}
	if (st)
		close_backend();
	else
		remove_tree(dir);
}
END_TEST

/* Two acceptors must never share a store: the second open of a directory is refused, by any
 * durable backend, from this process or another, until the first closes it. */
START_TEST(second_open_is_refused)
{
	open_backend(_i);
	ck_assert_int_eq(put(1, 101, 101, "mine", 4, false), PAXOS_OK);
	for (int j = FIRST_DURABLE; j < BACKEND_COUNT; j++) {
		struct paxos_storage *other = open_in(j, dir);
		ck_assert_msg(other == NULL, "%s opened a store %s holds", backends[j].label,
			      backends[_i].label);
		ck_assert_msg(strstr(err, "is locked") && strstr(err, dir), "%s", err);
		ck_assert_msg(strstr(err, "another acceptor"), "%s", err);
	}
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct paxos_storage *other = open_in(_i, dir);
		_exit(other == NULL && strstr(err, "is locked") ? 0 : 1);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the refused opens changed nothing */
	struct paxos_record rec;
	ck_assert_int_eq(get(1, &rec), 1);
	expect_value(&rec, "mine");
	reopen(); /* free again once closed */
	ck_assert_int_eq(get(1, &rec), 1);
	close_backend();
}
END_TEST

START_TEST(unusable_path_refused)
{
	char file[] = "/tmp/paxos-storage-file-XXXXXX", path[128];
	int fd = mkstemp(file);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/store", file);
	ck_assert_ptr_null(open_in(_i, path));
	ck_assert_msg(strstr(err, path) && strstr(err, "Not a directory"), "%s", err);
	unlink(file);
	snprintf(path, sizeof(path), "/tmp/paxos-storage-missing-%d/store", (int)getpid());
	ck_assert_ptr_null(open_in(_i, path));
	ck_assert_msg(strstr(err, path) && strstr(err, "No such file or directory"), "%s", err);
}
END_TEST

START_TEST(corrupt_store_refused)
{
	open_backend(_i);
	ck_assert_int_eq(put(1, 101, 101, "x", 1, false), PAXOS_OK);
	paxos_storage_destroy(st);
	st = NULL;
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir,
		 strcmp(backends[_i].name, "lmdb") == 0 ? "data.mdb" : "paxos.db");
	FILE *f = fopen(path, "r+b");
	ck_assert_ptr_nonnull(f);
	static uint8_t junk[65536];
	fill(junk, sizeof(junk), 99);
	ck_assert_uint_eq(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
	fclose(f);
	ck_assert_ptr_null(open_in(_i, dir));
	ck_assert_msg(strstr(err, "corrupt") && strstr(err, dir), "%s", err);
	remove_tree(dir);
}
END_TEST

/* Replaces (or, with meta NULL, deletes) the metadata record (key: iid 0) of the LMDB store
 * in dir, behind the backend's back, as another libpaxos version would have left it. */
static void lmdb_set_meta(const uint8_t *meta, size_t len)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	uint8_t key_bytes[8] = {0};
	MDB_val key = {sizeof(key_bytes), key_bytes}, data = {len, (void *)meta};
	ck_assert_int_eq(mdb_env_create(&env), 0);
	ck_assert_int_eq(mdb_env_set_mapsize(env, LMDB_TEST_MAP_SIZE), 0);
	ck_assert_int_eq(mdb_env_open(env, dir, 0, 0600), 0);
	ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, &txn), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, NULL, 0, &dbi), 0);
	if (meta)
		ck_assert_int_eq(mdb_put(txn, dbi, &key, &data, 0), 0);
	else
		ck_assert_int_eq(mdb_del(txn, dbi, &key, NULL), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
}

/* A store of another format version (version 1 had 32-bit ballots) is refused, saying so. */
START_TEST(other_format_version_refused)
{
	open_backend(1); /* lmdb */
	ck_assert_int_eq(put(1, 4294967396ull, 4294967396ull, "x", 1, false), PAXOS_OK);
	reopen(); /* a store of this version opens again, 64-bit ballots intact */
	struct paxos_record rec;
	ck_assert_int_eq(get(1, &rec), 1);
	ck_assert_uint_eq(rec.promised, 4294967396ull);
	paxos_storage_destroy(st);
	st = NULL;
	/* "PXST", version 1, trim 0, highest accepted 0 */
	static const uint8_t v1[24] = {'P', 'X', 'S', 'T', 0, 0, 0, 1};
	lmdb_set_meta(v1, sizeof(v1));
	ck_assert_ptr_null(open_in(1, dir));
	ck_assert_msg(strstr(err, "format version 1") && strstr(err, "format version 2") &&
			  strstr(err, "storage-fresh") && strstr(err, dir),
		      "%s", err);
	/* Version 1 stores that were never trimmed have no metadata record at all. */
	lmdb_set_meta(NULL, 0);
	ck_assert_ptr_null(open_in(1, dir));
	ck_assert_msg(strstr(err, "format version 1") && strstr(err, "no format record"), "%s",
		      err);
	remove_tree(dir);
}
END_TEST

/* A small map fills up: the put fails cleanly and says why; its space said it was coming. */
START_TEST(lmdb_map_full)
{
	snprintf(dir, sizeof(dir), "/tmp/paxos-storage-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	st = paxos_storage_lmdb_new(dir, PAXOS_DURABILITY_NOSYNC, 1u << 20, err, sizeof(err));
	ck_assert_msg(st != NULL, "%s", err);
	uint64_t empty, used, limit;
	ck_assert_int_eq(paxos_storage_space(st, &empty, &limit), PAXOS_OK);
	ck_assert_uint_eq(limit, 1u << 20);
	ck_assert_uint_gt(empty, 0);
	ck_assert_uint_lt(empty, limit / 8);
	static uint8_t v[4000];
	int rc = PAXOS_OK;
	paxos_iid i;
	for (i = 1; i <= 1000 && rc == PAXOS_OK; i++) {
		struct paxos_record rec = {
		    .iid = i, .promised = 101, .accepted = 101, .value = {v, sizeof(v)}};
		rc = st->ops->begin(st);
		if (rc == PAXOS_OK)
			rc = st->ops->put(st, &rec);
		if (rc == PAXOS_OK)
			rc = st->ops->commit(st);
	}
	ck_assert_int_eq(rc, PAXOS_E_STORAGE);
	ck_assert_uint_gt(i, 10);
	ck_assert_int_eq(paxos_storage_space(st, &used, &limit), PAXOS_OK);
	ck_assert_uint_eq(limit, 1u << 20);
	ck_assert_uint_gt(used, limit / 4 * 3);
	ck_assert_uint_le(used, limit);
	const char *msg = paxos_storage_error(st);
	ck_assert_msg(strstr(msg, "full") && strstr(msg, "lmdb-map-size") &&
			  strstr(msg, "1048576") && strstr(msg, "MDB_MAP_FULL"),
		      "%s", msg);
	struct paxos_record rec;
	ck_assert_int_eq(st->ops->get(st, 1, &rec), PAXOS_E_STORAGE); /* stopped for good */
	/* What was committed before is intact. */
	paxos_storage_destroy(st);
	st = paxos_storage_lmdb_new(dir, PAXOS_DURABILITY_NOSYNC, 1u << 20, err, sizeof(err));
	ck_assert_msg(st != NULL, "%s", err);
	ck_assert_int_eq(get(1, &rec), 1);
	ck_assert_uint_eq(rec.value.len, sizeof(v));
	close_backend();
}
END_TEST

START_TEST(bad_arguments_refused)
{
	ck_assert_ptr_null(
	    paxos_storage_lmdb_new("/tmp", PAXOS_DURABILITY_DBSYNC, 1u << 20, err, sizeof(err)));
	ck_assert_msg(strstr(err, "dbsync") && strstr(err, "nosync or sync"), "%s", err);
	ck_assert_ptr_null(
	    paxos_storage_lmdb_new(NULL, PAXOS_DURABILITY_SYNC, 1u << 20, err, sizeof(err)));
	ck_assert_ptr_null(paxos_storage_bdb_new("/tmp", PAXOS_DURABILITY_NONE, err, sizeof(err)));
	ck_assert_msg(strstr(err, "none"), "%s", err);
	ck_assert_ptr_null(paxos_storage_open(NULL, 0, false, err, sizeof(err)));
	ck_assert_str_eq(paxos_storage_error(NULL), "");
}
END_TEST

/* --- pipelined commits ------------------------------------------------------------------ */

/* Opens backend i if its commits are pipelined; loop tests skip the others. */
static bool open_pipelined(int i)
{
	if (!backends[i].pipelined)
		return false;
	open_backend(i);
	return true;
}

/* Commits with changes are numbered and become durable through sync, which counts the
 * flushes: on the backend's thread (sync_fd says when one finished) or, with wait, on the
 * caller's. A batch of reads is no commit. */
START_TEST(pipelined_progress)
{
	if (!open_pipelined(_i))
		return;
	struct paxos_storage_progress p;
	ck_assert_uint_eq(st->ops->committed(st), 0);
	ck_assert_int_eq(st->ops->sync(st, false, &p), PAXOS_OK);
	ck_assert_uint_eq(p.committed, 0);
	ck_assert_uint_eq(p.durable, 0);
	ck_assert_uint_eq(p.flushes, 0);
	char v[16];
	for (paxos_iid i = 1; i <= 20; i++) {
		int len = snprintf(v, sizeof(v), "p%llu", (unsigned long long)i);
		ck_assert_int_eq(put(i, 101, 101, v, (uint32_t)len, false), PAXOS_OK);
		ck_assert_uint_eq(st->ops->committed(st), i);
	}
	struct paxos_record rec;
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	ck_assert_int_eq(get(3, &rec), 1);
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	ck_assert_uint_eq(st->ops->committed(st), 20);

	struct pollfd pfd = {.fd = st->ops->sync_fd(st), .events = POLLIN};
	ck_assert_int_eq(poll(&pfd, 1, 0), 0); /* commits alone start no flush */
	ck_assert_int_eq(st->ops->sync(st, false, &p), PAXOS_OK);
	ck_assert_uint_eq(p.durable, 0);
	ck_assert_int_eq(poll(&pfd, 1, 10000), 1);
	ck_assert_int_eq(st->ops->sync(st, false, &p), PAXOS_OK);
	ck_assert_uint_eq(p.durable, 20);
	ck_assert_uint_eq(p.flushes, 1);
	/* With wait, on this thread. */
	ck_assert_int_eq(put(21, 101, 101, "p21", 3, false), PAXOS_OK);
	ck_assert_int_eq(st->ops->sync(st, true, &p), PAXOS_OK);
	ck_assert_uint_eq(p.committed, 21);
	ck_assert_uint_eq(p.durable, 21);
	ck_assert_uint_eq(p.flushes, 2);
	ck_assert_uint_eq(p.flushed_records, 21);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0); /* nothing runs, nothing wakes */
	for (paxos_iid i = 1; i <= 20; i++) {
		int len = snprintf(v, sizeof(v), "p%llu", (unsigned long long)i);
		expect_record(i, 101, 101, v, (uint32_t)len, false);
	}
	close_backend();
}
END_TEST

/* Reads see the newest commit while older ones are flushed. A batch still open stays out of
 * every flush, its trim too, and is dropped when the store is closed. */
START_TEST(pipelined_open_batch)
{
	if (!open_pipelined(_i))
		return;
	static uint8_t big[2000], want[2000];
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	for (paxos_iid i = 1; i <= 300; i++) {
		fill(big, sizeof(big), (uint8_t)i);
		struct paxos_record rec = {i, 101, 101, {big, sizeof(big)}, false};
		ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	}
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	ck_assert_int_eq(st->ops->sync(st, false, NULL), PAXOS_OK);
	/* Its flush likely runs now: a second commit rewrites every other instance. */
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	for (paxos_iid i = 2; i <= 300; i += 2) {
		struct paxos_record rec = {i, 202, 202, {(const uint8_t *)"new", 3}, false};
		ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	}
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	for (int round = 0; round < 2; round++) {
		for (paxos_iid i = 1; i <= 300; i++) {
			fill(want, sizeof(want), (uint8_t)i);
			if (i % 2)
				expect_record(i, 101, 101, want, sizeof(want), false);
			else
				expect_record(i, 202, 202, "new", 3, false);
		}
		if (round == 0)
			reopen();
	}

	/* An open batch with a trim: sync makes the commits durable, not the batch. */
	struct paxos_storage_progress p;
	struct paxos_record rec = {400, 303, 303, {(const uint8_t *)"open", 4}, false};
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	ck_assert_int_eq(st->ops->trim(st, 100), PAXOS_OK);
	ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	ck_assert_int_eq(st->ops->sync(st, true, &p), PAXOS_OK);
	ck_assert_uint_eq(p.durable, p.committed);
	ck_assert_int_eq(get(50, &rec), 0);
	expect_record(400, 303, 303, "open", 4, false);
	reopen();
	ck_assert_uint_eq(st->ops->trim_iid(st), 0);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 300);
	expect_record(50, 202, 202, "new", 3, false);
	ck_assert_int_eq(get(400, &rec), 0);

	/* Committed, the same batch is kept. */
	rec = (struct paxos_record){400, 303, 303, {(const uint8_t *)"open", 4}, false};
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	ck_assert_int_eq(st->ops->trim(st, 100), PAXOS_OK);
	ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	reopen();
	ck_assert_uint_eq(st->ops->trim_iid(st), 100);
	ck_assert_int_eq(get(100, &rec), 0);
	fill(want, sizeof(want), 101);
	expect_record(101, 101, 101, want, sizeof(want), false);
	expect_record(400, 303, 303, "open", 4, false);
	close_backend();
}
END_TEST

/*
 * kill -9 at several points while flushes run: every commit that sync reported durable is in
 * the store afterwards, and what is there is a prefix of the commits. Commit n writes instance
 * n + 1 and records n in instance 1's promise.
 */
START_TEST(pipelined_kill)
{
	if (!backends[_i].pipelined)
		return;
	static const unsigned kill_after[] = {1, 20, 150}; /* durable advances before the kill */
	for (size_t k = 0; k < sizeof(kill_after) / sizeof(kill_after[0]); k++) {
		snprintf(dir, sizeof(dir), "/tmp/paxos-storage-XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(dir));
		int fds[2];
		ck_assert_int_eq(pipe(fds), 0);
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			close(fds[0]);
			struct paxos_storage *c = open_in(_i, dir);
			if (!c)
				_exit(2);
			for (paxos_iid n = 1;; n++) {
				struct paxos_record a = {
				    n + 1, 101, 101, {(const uint8_t *)"kill", 4}, false};
				struct paxos_record mark = {1, n, 0, {NULL, 0}, false};
				struct paxos_storage_progress p;
				if (c->ops->begin(c) || c->ops->put(c, &a) ||
				    c->ops->put(c, &mark) || c->ops->commit(c) ||
				    c->ops->sync(c, false, &p))
					_exit(3);
				if (write(fds[1], &p.durable, sizeof(p.durable)) !=
				    sizeof(p.durable))
					_exit(4);
				/* Commits stay a few flushes ahead, not a store's worth. */
				if (p.committed - p.durable > 64)
					usleep(200);
			}
		}
		close(fds[1]);
		uint64_t durable = 0, got;
		unsigned advances = 0;
		while (advances < kill_after[k] && read(fds[0], &got, sizeof(got)) == sizeof(got))
			if (got > durable) {
				durable = got;
				advances++;
			}
		kill(pid, SIGKILL);
		int status;
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		close(fds[0]);
		ck_assert_msg(advances == kill_after[k],
			      "%s: the writer stopped by itself (status %d)", backends[_i].label,
			      status);

		st = open_in(_i, dir);
		ck_assert_msg(st != NULL, "%s after kill -9: %s", backends[_i].label, err);
		struct paxos_record rec;
		ck_assert_int_eq(get(1, &rec), 1);
		paxos_iid last = rec.promised; /* the last commit in the store */
		ck_assert_msg(
		    last >= durable, "%s: commit %llu was durable, the store ends at %llu",
		    backends[_i].label, (unsigned long long)durable, (unsigned long long)last);
		for (paxos_iid n = 1; n <= last; n++)
			expect_record(n + 1, 101, 101, "kill", 4, false);
		ck_assert_int_eq(get(last + 2, &rec), 0);
		ck_assert_uint_eq(st->ops->highest_accepted(st), last + 1);
		close_backend();
	}
}
END_TEST

/* A map that fills up fails a flush: the commit or sync after it says why, and the commits
 * sync called durable before are intact. */
START_TEST(lmdb_map_full_pipelined)
{
	snprintf(dir, sizeof(dir), "/tmp/paxos-storage-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	st = paxos_storage_lmdb_new(dir, PAXOS_DURABILITY_SYNC, 1u << 20, err, sizeof(err));
	ck_assert_msg(st != NULL, "%s", err);
	static uint8_t v[4000];
	int rc = PAXOS_OK;
	paxos_iid i;
	uint64_t durable = 0;
	for (i = 1; i <= 1000 && rc == PAXOS_OK; i++) {
		struct paxos_record rec = {i, 101, 101, {v, sizeof(v)}, false};
		struct paxos_storage_progress p;
		rc = st->ops->begin(st);
		if (rc == PAXOS_OK)
			rc = st->ops->put(st, &rec);
		if (rc == PAXOS_OK)
			rc = st->ops->commit(st);
		if (rc == PAXOS_OK)
			rc = st->ops->sync(st, i % 8 == 0, &p);
		if (rc == PAXOS_OK)
			durable = p.durable;
	}
	if (rc == PAXOS_OK)
		rc = st->ops->sync(st, true, NULL);
	ck_assert_int_eq(rc, PAXOS_E_STORAGE);
	ck_assert_uint_gt(durable, 10);
	const char *msg = paxos_storage_error(st);
	ck_assert_msg(strstr(msg, "full") && strstr(msg, "lmdb-map-size") &&
			  strstr(msg, "1048576") && strstr(msg, "MDB_MAP_FULL"),
		      "%s", msg);
	struct paxos_record rec;
	ck_assert_int_eq(st->ops->get(st, 1, &rec), PAXOS_E_STORAGE);
	ck_assert_int_eq(st->ops->sync(st, false, NULL), PAXOS_E_STORAGE);
	paxos_storage_destroy(st);
	st = paxos_storage_lmdb_new(dir, PAXOS_DURABILITY_SYNC, 1u << 20, err, sizeof(err));
	ck_assert_msg(st != NULL, "%s", err);
	for (paxos_iid n = 1; n <= durable; n++)
		ck_assert_int_eq(get(n, &rec), 1);
	close_backend();
}
END_TEST

/* --- the factory ------------------------------------------------------------------------ */

static struct paxos_storage *open_acceptor(const struct paxos_config *cfg, uint32_t id, bool fresh)
{
	err[0] = '\0';
	struct paxos_storage *s = paxos_storage_open(cfg, id, fresh, err, sizeof(err));
	ck_assert_msg(s != NULL, "acceptor %u: %s", id, err);
	return s;
}

static void configure(struct paxos_config *cfg, const char *text)
{
	ck_assert_msg(paxos_config_parse(cfg, text, strlen(text), "test", err, sizeof(err)) ==
			  PAXOS_OK,
		      "%s", err);
}

START_TEST(factory)
{
	char base[] = "/tmp/paxos-storage-XXXXXX", text[512], path[256];
	ck_assert_ptr_nonnull(mkdtemp(base));
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	st = open_acceptor(&cfg, 0, false);
	ck_assert_str_eq(st->ops->name, "memory");
	paxos_storage_destroy(st);

	snprintf(text, sizeof(text),
		 "storage lmdb\ndurability nosync\nlmdb-map-size 8388608\nstorage-path %s/a/b\n",
		 base);
	configure(&cfg, text);
	st = open_acceptor(&cfg, 3, false);
	ck_assert_str_eq(st->ops->name, "lmdb");
	ck_assert_int_eq(paxos_storage_dir(&cfg, 3, path, sizeof(path)), PAXOS_OK);
	snprintf(text, sizeof(text), "%s/a/b/acceptor-3", base);
	ck_assert_str_eq(path, text);
	struct stat sb;
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert(S_ISDIR(sb.st_mode));
	ck_assert_int_eq(paxos_storage_dir(&cfg, 3, path, 8), PAXOS_E_INVALID);
	ck_assert_int_eq(put(1, 101, 101, "one", 3, false), PAXOS_OK);

	/* another acceptor on the same host has its own directory */
	struct paxos_storage *four = open_acceptor(&cfg, 4, false);
	struct paxos_record rec;
	ck_assert_int_eq(four->ops->get(four, 1, &rec), 0);
	paxos_storage_destroy(four);
	/* a fresh start of a store in use is refused and deletes nothing */
	ck_assert_ptr_null(paxos_storage_open(&cfg, 3, true, err, sizeof(err)));
	ck_assert_msg(strstr(err, "is locked"), "%s", err);
	ck_assert_int_eq(get(1, &rec), 1);
	paxos_storage_destroy(st);

	st = open_acceptor(&cfg, 3, false); /* recovers */
	ck_assert_int_eq(get(1, &rec), 1);
	expect_value(&rec, "one");
	paxos_storage_destroy(st);
	snprintf(text, sizeof(text), "%s/a/b/acceptor-3/membership", base);
	FILE *kept = fopen(text, "w");
	ck_assert_ptr_nonnull(kept);
	fclose(kept);
	st = open_acceptor(&cfg, 3, true); /* fresh, but the configuration history stays */
	ck_assert_int_eq(get(1, &rec), 0);
	ck_assert_int_eq(stat(text, &sb), 0);
	ck_assert_int_eq(put(2, 101, 101, "two", 3, false), PAXOS_OK);
	paxos_storage_destroy(st);
	cfg.storage_fresh = true; /* storage-fresh yes does the same */
	st = open_acceptor(&cfg, 3, false);
	ck_assert_int_eq(get(2, &rec), 0);
	paxos_storage_destroy(st);

	snprintf(text, sizeof(text), "storage bdb\ndurability write-nosync\nstorage-path %s/a/b\n",
		 base);
	configure(&cfg, text);
	st = open_acceptor(&cfg, 5, false);
	ck_assert_str_eq(st->ops->name, "bdb");
	ck_assert_int_eq(put(7, 101, 101, "seven", 5, false), PAXOS_OK);
	paxos_storage_destroy(st);
	st = open_acceptor(&cfg, 5, false);
	ck_assert_int_eq(get(7, &rec), 1);
	paxos_storage_destroy(st);
	st = NULL;

	/* inmemory-log after a crash: refused, and a fresh start is the way out */
	snprintf(text, sizeof(text), "storage bdb\ndurability inmemory-log\nstorage-path %s\n",
		 base);
	configure(&cfg, text);
	paxos_storage_dir(&cfg, 0, path, sizeof(path));
	st = open_acceptor(&cfg, 0, false);
	paxos_storage_destroy(st);
	snprintf(text, sizeof(text), "%s/paxos.open", path);
	FILE *marker = fopen(text, "w"); /* what a crash leaves behind */
	ck_assert_ptr_nonnull(marker);
	fclose(marker);
	ck_assert_ptr_null(paxos_storage_open(&cfg, 0, false, err, sizeof(err)));
	ck_assert_msg(strstr(err, "not closed cleanly"), "%s", err);
	st = open_acceptor(&cfg, 0, true);
	paxos_storage_destroy(st);
	st = NULL;

	/* a storage-path under a regular file */
	snprintf(text, sizeof(text), "%s/file", base);
	marker = fopen(text, "w");
	ck_assert_ptr_nonnull(marker);
	fclose(marker);
	snprintf(cfg.storage_path, sizeof(cfg.storage_path), "%s/file/x", base);
	ck_assert_ptr_null(paxos_storage_open(&cfg, 0, false, err, sizeof(err)));
	ck_assert_msg(strstr(err, "cannot create") && strstr(err, "Not a directory"), "%s", err);
	remove_tree(base);
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

	TCase *durable = tcase_create("durable");
	tcase_set_timeout(durable, 60);
	tcase_add_loop_test(durable, reopen_keeps_state, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_loop_test(durable, group_commit, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_loop_test(durable, process_crash, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_loop_test(durable, second_open_is_refused, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_loop_test(durable, unusable_path_refused, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_loop_test(durable, corrupt_store_refused, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_test(durable, lmdb_map_full);
	tcase_add_test(durable, lmdb_map_full_pipelined);
	tcase_add_test(durable, other_format_version_refused);
	tcase_add_test(durable, bad_arguments_refused);
	tcase_add_test(durable, factory);
	suite_add_tcase(s, durable);

	TCase *pipelined = tcase_create("pipelined");
	tcase_set_timeout(pipelined, 120);
	tcase_add_loop_test(pipelined, pipelined_progress, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_loop_test(pipelined, pipelined_open_batch, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_loop_test(pipelined, pipelined_kill, FIRST_DURABLE, BACKEND_COUNT);
	suite_add_tcase(s, pipelined);
	return s;
}
