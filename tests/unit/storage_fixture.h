/* SPDX-License-Identifier: BSD-3-Clause */
/* What the storage tests share (tests/unit/test_storage*.c): the table of backends under test,
 * the storage and directory of the running test, and records written and checked. */
#ifndef PAXOS_TEST_STORAGE_FIXTURE_H
#define PAXOS_TEST_STORAGE_FIXTURE_H

#include <paxos/config.h>
#include <paxos/storage.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Durable backends come after memory: tests of reopening loop from FIRST_DURABLE. */
extern const struct backend backends[];
extern const int backend_count;
#define BACKEND_COUNT backend_count
#define FIRST_DURABLE 1

/* The storage and directory of the running test, and the last open's error. */
extern struct paxos_storage *st;
extern int backend_index;
extern char dir[64];
extern char storage_err[1024];

/* Backend i over the store at where; NULL with storage_err set when it cannot open. */
struct paxos_storage *open_in(int i, const char *where);
/* Backend i over a new directory (dir), which the test then owns. */
void open_backend(int i);
/* Closes the storage and opens it again from what it left in dir. */
void reopen(void);
/* Closes the storage and removes dir. */
void close_backend(void);
void remove_tree(const char *path);
/* One record in a transaction of its own; put's status. */
int put(paxos_iid iid, paxos_ballot promised, paxos_ballot accepted, const void *data, uint32_t len,
	bool final);
int get(paxos_iid iid, struct paxos_record *rec);
void expect_value(const struct paxos_record *rec, const char *s);
void expect_record(paxos_iid iid, paxos_ballot promised, paxos_ballot accepted, const void *data,
		   uint32_t len, bool final);
/* len bytes made from seed, different for each seed. */
void fill(uint8_t *buf, uint32_t len, uint8_t seed);

#endif
