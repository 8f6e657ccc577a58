/* SPDX-License-Identifier: BSD-3-Clause */
/* The storage tests' harness (storage_fixture.h). */
#include "storage_fixture.h"

#include <check.h>
#include <paxos/storage_backends.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct paxos_storage *open_memory(const char *path, enum paxos_durability mode, char *err,
					 size_t errlen)
{
	(void)path;
	(void)mode;
	(void)err;
	(void)errlen;
	return paxos_storage_memory_new();
}

static struct paxos_storage *open_lmdb(const char *path, enum paxos_durability mode, char *err,
				       size_t errlen)
{
	return paxos_storage_lmdb_new(path, mode, LMDB_TEST_MAP_SIZE, err, errlen);
}

const struct backend backends[] = {
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
const int backend_count = (int)(sizeof(backends) / sizeof(backends[0]));

/* The storage and directory of the running test. */
struct paxos_storage *st;
int backend_index;
char dir[64];
char storage_err[1024];

struct paxos_storage *open_in(int i, const char *where)
{
	storage_err[0] = '\0';
	return backends[i].open(where, backends[i].mode, storage_err, sizeof(storage_err));
}

void open_backend(int i)
{
	snprintf(dir, sizeof(dir), "/tmp/paxos-storage-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	backend_index = i;
	st = open_in(i, dir);
	ck_assert_msg(st != NULL, "backend %s failed to open: %s", backends[i].label, storage_err);
}

/* Closes the storage and opens it again from what it left in dir. */
void reopen(void)
{
	paxos_storage_destroy(st);
	st = open_in(backend_index, dir);
	ck_assert_msg(st != NULL, "%s failed to reopen: %s", backends[backend_index].label,
		      storage_err);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void close_backend(void)
{
	paxos_storage_destroy(st);
	st = NULL;
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int put(paxos_iid iid, paxos_ballot promised, paxos_ballot accepted, const void *data, uint32_t len,
	bool final)
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

int get(paxos_iid iid, struct paxos_record *rec)
{
	memset(rec, 0xa5, sizeof(*rec));
	return st->ops->get(st, iid, rec);
}

void expect_value(const struct paxos_record *rec, const char *s)
{
	ck_assert_uint_eq(rec->value.len, strlen(s));
	if (rec->value.len)
		ck_assert_mem_eq(rec->value.data, s, rec->value.len);
}

void fill(uint8_t *buf, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 31u);
}

void remove_tree(const char *path)
{
	nftw(path, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

void expect_record(paxos_iid iid, paxos_ballot promised, paxos_ballot accepted, const void *data,
		   uint32_t len, bool final)
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
