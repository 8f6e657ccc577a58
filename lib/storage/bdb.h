/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Berkeley DB backend's parts: its state, what storage_bdb.c (the operations) and
 * bdb_open.c (opening and recovering a store) share. Internal to libpaxos.
 */
#ifndef PAXOS_BDB_H
#define PAXOS_BDB_H

#include <paxos/storage.h>
#include <paxos/storage_backends.h>

#include <db.h>
#include <pthread.h>

#include "storage_backend.h"
#include "storage_head.h"

#define BDB_FILE "paxos.db"
/* inmemory-log only: present while the store is open, so a crash is noticed at restart. */
#define BDB_OPEN_MARKER "paxos.open"

struct chunk {
	uint8_t *data;
	size_t cap, used;
};

/* Bump allocator for values returned by get; reset frees nothing. */
struct arena {
	struct chunk *chunks;
	size_t count, cap, cur;
};

struct bdb_storage {
	struct storage_head h; /* first, so the storage pointer is the container */
	DB_ENV *env;
	DB *db;
	bool db_open; /* DB->open succeeded */
	bool serving; /* opened: paxos_storage_bdb_new returned it */
	DB_TXN *txn;  /* the current batch's changes, NULL until its first change */
	enum paxos_durability mode;
	int lock_fd;
	bool marker;  /* BDB_OPEN_MARKER was created by this open */
	uint8_t *buf; /* a raw record read by get, or one encoded for put */
	size_t cap;
	struct arena arena;
	char dir[256];
	char detail[256]; /* BDB's own last message, written by either thread: under detail_lock */
	pthread_mutex_t detail_lock;
	pthread_mutex_t page_lock; /* pipelined modes: see storage_bdb.c */
	/* Durability sync and dbsync: pipelined commits. puts counts the open batch's. */
	bool pipelined;
	uint64_t puts;
};

/* Records why b stopped working, drops the batch and returns PAXOS_E_STORAGE. */
int bdb_fail(struct bdb_storage *b, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Commits the batch's transaction, if any, as the durability mode says. */
int bdb_commit_write(struct bdb_storage *b);

/* Reads iid's raw record into b->buf; returns 1 with *size set, 0 if absent, or a negative
 * status. */
int bdb_read_raw(struct bdb_storage *b, paxos_iid iid, size_t *size);

/* The metadata record, in the batch's transaction. */
int bdb_write_meta(struct bdb_storage *b, const struct storage_meta *meta);

/* The path of BDB_OPEN_MARKER in b's directory. */
void bdb_marker_path(const struct bdb_storage *b, char *buf, size_t cap);

/* Room for size bytes in b->buf. */
int bdb_reserve(struct bdb_storage *b, size_t size);
/* What paxos_storage_bdb_new (bdb_open.c) gives a store: its operations, plain or pipelined,
 * and the flush thread's; freeing one that never opened, destroying one that did. */
extern const struct paxos_storage_ops bdb_ops, bdb_pipelined_ops;
extern const struct storage_flusher_ops bdb_flusher_ops;
void bdb_free(struct bdb_storage *b);
void bdb_destroy(struct paxos_storage *st);

#endif
