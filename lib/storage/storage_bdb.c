/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Durable acceptor storage on Berkeley DB 5.3: a transactional B-tree keyed by big-endian iid
 * (layout in storage_backend.h) in a private environment (one process uses it; the directory
 * lock makes sure of that). A batch (begin..commit) is one transaction, started by its first
 * change. The durability mode picks how commits reach the disk; see paxos.conf.
 *
 * BDB copies records out, so get copies each value into an arena that is emptied at the next
 * put, trim or commit: values stay valid exactly as long as storage.h promises, and the arena's
 * chunks are reused, so the steady state does not allocate.
 *
 * Durability sync and dbsync pipeline their commits (paxos/storage.h): transactions commit
 * without a log flush (DB_TXN_NOSYNC), so the loop goes on at once, and a flush (flusher.h)
 * flushes the log, which makes every transaction committed before it durable (and with dbsync
 * syncs the database file); on the flush thread, the loop commits the next ones meanwhile. BDB
 * releases its log region during the device flush, so commits do not wait for it. Syncing pages
 * (dbsync, checkpoints) is another matter: BDB's sync sleeps a whole second when it meets a page
 * another thread is changing (mp_sync.c), so the loop's page changes and the thread's page
 * syncs take turns (page_lock).
 *
 * Opening and recovering a store is bdb_open.c's.
 */
#include <paxos/storage_backends.h>
#include <paxos/storage.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bdb.h"

/* Checkpoint once this much log was written, so old log files can go (and, in memory, the
 * log buffer can be reused). */
#define BDB_CHECKPOINT_KBYTES 4096u
/* Records of at most 64 KiB: this many deletes fit in the in-memory log with room to spare. */
#define BDB_MEMORY_LOG_DELETES 128u
#define ARENA_CHUNK (64u << 10)

static struct bdb_storage *of(struct paxos_storage *st)
{
	return (struct bdb_storage *)st;
}

/* --- arena ------------------------------------------------------------------------------ */

static uint8_t *arena_alloc(struct arena *a, size_t n)
{
	for (; a->cur < a->count; a->cur++) {
		struct chunk *c = &a->chunks[a->cur];
		if (c->cap - c->used >= n) {
			c->used += n;
			return c->data + c->used - n;
		}
	}
	if (a->count == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 4;
		struct chunk *chunks = realloc(a->chunks, cap * sizeof(*chunks));
		if (!chunks)
			return NULL;
		a->chunks = chunks;
		a->cap = cap;
	}
	size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
	uint8_t *data = malloc(size);
	if (!data)
		return NULL;
	a->chunks[a->count] = (struct chunk){data, size, n};
	a->cur = a->count++;
	return data;
}

static void arena_reset(struct arena *a)
{
	for (size_t i = 0; i < a->count; i++)
		a->chunks[i].used = 0;
	a->cur = 0;
}

static void arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->count; i++)
		free(a->chunks[i].data);
	free(a->chunks);
}

/* --- errors and transactions ------------------------------------------------------------ */

/* The sentence for a failure of what with BDB status rc (0: none), into buf; either thread. */
static void describe(struct bdb_storage *b, int rc, const char *what, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "bdb %s: %s", b->dir, what);
	if (rc != 0 && n >= 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, ": %s", db_strerror(rc));
	pthread_mutex_lock(&b->detail_lock);
	if (b->detail[0] && n >= 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, " (%s)", b->detail);
	pthread_mutex_unlock(&b->detail_lock);
}

/* Pipelined modes: the loop around a change of pages, the flush thread around a page sync. */
static void pages_lock(struct bdb_storage *b)
{
	if (b->pipelined)
		pthread_mutex_lock(&b->page_lock);
}

static void pages_unlock(struct bdb_storage *b)
{
	if (b->pipelined)
		pthread_mutex_unlock(&b->page_lock);
}

static void abort_txn(struct bdb_storage *b)
{
	if (b->txn) {
		pages_lock(b); /* undoing changes pages too */
		b->txn->abort(b->txn);
		pages_unlock(b);
		b->txn = NULL;
	}
}

/* Drops the batch and refuses everything from now on (b->h.error says why). */
static int stop(struct bdb_storage *b)
{
	abort_txn(b);
	b->h.failed = true;
	return PAXOS_E_STORAGE;
}

int bdb_fail(struct bdb_storage *b, int rc, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	describe(b, rc, what, b->h.error, sizeof(b->h.error));
	return stop(b);
}

static int write_txn(struct bdb_storage *b)
{
	if (b->txn)
		return PAXOS_OK;
	int rc = b->env->txn_begin(b->env, NULL, &b->txn, 0);
	if (rc != 0) {
		b->txn = NULL;
		return bdb_fail(b, rc, "cannot start a transaction");
	}
	return PAXOS_OK;
}

int bdb_commit_write(struct bdb_storage *b)
{
	arena_reset(&b->arena);
	if (!b->txn)
		return PAXOS_OK;
	int rc = b->txn->commit(b->txn, 0);
	b->txn = NULL; /* freed by commit whatever it returns */
	if (rc != 0)
		return bdb_fail(b, rc, "commit failed");
	if (b->pipelined && b->h.flusher.started) { /* not while opening */
		uint64_t puts = b->puts;
		b->puts = 0;
		return storage_flusher_commit(&b->h.flusher, puts, false);
	}
	if (b->mode == PAXOS_DURABILITY_DBSYNC) {
		/* The commit record first: recovery undoes changes it cannot see committed. */
		rc = b->env->log_flush(b->env, NULL);
		if (rc == 0)
			rc = b->db->sync(b->db, 0);
		if (rc != 0)
			return bdb_fail(b, rc, "database sync failed");
	}
	rc = b->env->txn_checkpoint(b->env, BDB_CHECKPOINT_KBYTES, 0, 0);
	if (rc != 0)
		return bdb_fail(b, rc, "checkpoint failed");
	return PAXOS_OK;
}

/* A change outside begin..commit is its own batch. */
static int end_change(struct bdb_storage *b)
{
	return b->h.in_batch ? PAXOS_OK : bdb_commit_write(b);
}

int bdb_reserve(struct bdb_storage *b, size_t size)
{
	return storage_grow_buffer(&b->buf, &b->cap, size, 256);
}

static void key_dbt(DBT *key, uint8_t bytes[STORAGE_KEY_SIZE], paxos_iid iid)
{
	memset(key, 0, sizeof(*key));
	storage_key_encode(bytes, iid);
	key->data = bytes;
	key->size = key->ulen = STORAGE_KEY_SIZE;
	key->flags = DB_DBT_USERMEM;
}

/* --- operations ------------------------------------------------------------------------- */

static int bdb_commit(struct paxos_storage *st)
{
	struct bdb_storage *b = of(st);
	int rc = storage_head_end_batch(&b->h);
	return rc == PAXOS_OK ? bdb_commit_write(b) : rc;
}

/* Reads iid's raw record into b->buf; returns its size, 0 if absent, or a negative status.
 * Without a transaction of our own the read is not transactional: nothing else writes. */
int bdb_read_raw(struct bdb_storage *b, paxos_iid iid, size_t *size)
{
	uint8_t key_bytes[STORAGE_KEY_SIZE];
	DBT key, data;

	key_dbt(&key, key_bytes, iid);
	for (int attempt = 0; attempt < 2; attempt++) {
		memset(&data, 0, sizeof(data));
		data.data = b->buf;
		data.ulen = (u_int32_t)b->cap;
		data.flags = DB_DBT_USERMEM;
		int rc = b->db->get(b->db, b->txn, &key, &data, 0);
		if (rc == DB_NOTFOUND || rc == DB_KEYEMPTY)
			return 0;
		if (rc == 0) {
			*size = data.size;
			return 1;
		}
		if (rc != DB_BUFFER_SMALL || attempt > 0)
			return bdb_fail(b, rc, "reading instance %llu", (unsigned long long)iid);
		if (bdb_reserve(b, data.size) != PAXOS_OK)
			return PAXOS_E_NOMEM;
	}
	return PAXOS_E_STORAGE; /* unreachable */
}

static int bdb_get(struct paxos_storage *st, paxos_iid iid, struct paxos_record *rec)
{
	struct bdb_storage *b = of(st);
	size_t size = 0;

	if (b->h.failed)
		return PAXOS_E_STORAGE;
	if (iid == 0 || !rec)
		return PAXOS_E_INVALID;
	if (iid <= b->h.trim)
		return 0;
	int rc = bdb_read_raw(b, iid, &size);
	if (rc <= 0)
		return rc;
	struct paxos_record found;
	if (!storage_record_decode(iid, b->buf, size, &found))
		return bdb_fail(b, 0, "corrupt database: bad record for instance %llu",
				(unsigned long long)iid);
	if (found.value.len > 0) {
		uint8_t *copy = arena_alloc(&b->arena, found.value.len);
		if (!copy)
			return PAXOS_E_NOMEM;
		memcpy(copy, found.value.data, found.value.len);
		found.value.data = copy;
	}
	*rec = found;
	return 1;
}

static int bdb_put(struct paxos_storage *st, const struct paxos_record *rec)
{
	struct bdb_storage *b = of(st);
	uint8_t key_bytes[STORAGE_KEY_SIZE];
	DBT key, data;

	if (b->h.failed)
		return PAXOS_E_STORAGE;
	if (!rec || rec->iid == 0 || (rec->value.len > 0 && !rec->value.data))
		return PAXOS_E_INVALID;
	if (rec->iid <= b->h.trim)
		return PAXOS_E_INVALID; /* dropped for good */
	size_t size = STORAGE_HEADER_SIZE + (size_t)rec->value.len;
	int rc = bdb_reserve(b, size);
	if (rc != PAXOS_OK)
		return rc;
	storage_record_encode(b->buf, rec); /* before the reset: the value may be in the arena */
	arena_reset(&b->arena);
	rc = write_txn(b);
	if (rc != PAXOS_OK)
		return rc;
	key_dbt(&key, key_bytes, rec->iid);
	memset(&data, 0, sizeof(data));
	data.data = b->buf;
	data.size = (u_int32_t)size;
	pages_lock(b);
	rc = b->db->put(b->db, b->txn, &key, &data, 0);
	pages_unlock(b);
	if (rc != 0)
		return bdb_fail(b, rc, "writing instance %llu", (unsigned long long)rec->iid);
	b->puts++;
	if (rec->accepted != 0 && rec->iid > b->h.highest_accepted)
		b->h.highest_accepted = rec->iid;
	return end_change(b);
}

/* Deletes the records 1..iid with a cursor in the batch's transaction, at most limit of
 * them; *done tells whether none is left. */
static int delete_through(struct bdb_storage *b, paxos_iid iid, size_t limit, bool *done)
{
	uint8_t key_bytes[STORAGE_KEY_SIZE];
	DBT key, data;
	DBC *cursor;

	int rc = b->db->cursor(b->db, b->txn, &cursor, 0);
	if (rc != 0)
		return bdb_fail(b, rc, "trimming");
	key_dbt(&key, key_bytes, 1);
	memset(&data, 0, sizeof(data));
	data.flags = DB_DBT_USERMEM | DB_DBT_PARTIAL; /* keys only: read no value bytes */
	rc = cursor->get(cursor, &key, &data, DB_SET_RANGE);
	size_t deleted = 0;
	while (rc == 0 && key.size == STORAGE_KEY_SIZE && storage_key_decode(key_bytes) <= iid &&
	       deleted < limit) {
		rc = cursor->del(cursor, 0);
		deleted++;
		if (rc == 0)
			rc = cursor->get(cursor, &key, &data, DB_NEXT);
	}
	*done = rc != 0 || key.size != STORAGE_KEY_SIZE || storage_key_decode(key_bytes) > iid;
	bool bad_key = rc == 0 && key.size != STORAGE_KEY_SIZE;
	cursor->close(cursor);
	if (rc == DB_BUFFER_SMALL || bad_key)
		return bdb_fail(b, 0, "corrupt database: a key is not an instance number");
	if (rc != 0 && rc != DB_NOTFOUND)
		return bdb_fail(b, rc, "trimming to instance %llu", (unsigned long long)iid);
	return PAXOS_OK;
}

/* The metadata record, in the batch's transaction. */
int bdb_write_meta(struct bdb_storage *b, const struct storage_meta *meta)
{
	uint8_t key_bytes[STORAGE_KEY_SIZE], value[STORAGE_META_SIZE];
	DBT key, data;

	int rc = write_txn(b);
	if (rc != PAXOS_OK)
		return rc;
	storage_meta_encode(value, meta);
	key_dbt(&key, key_bytes, STORAGE_META_IID);
	memset(&data, 0, sizeof(data));
	data.data = value;
	data.size = sizeof(value);
	pages_lock(b);
	rc = b->db->put(b->db, b->txn, &key, &data, 0);
	pages_unlock(b);
	return rc == 0 ? PAXOS_OK : bdb_fail(b, rc, "writing the metadata");
}

static int bdb_trim(struct paxos_storage *st, paxos_iid iid)
{
	struct bdb_storage *b = of(st);

	if (b->h.failed)
		return PAXOS_E_STORAGE;
	if (iid <= b->h.trim)
		return PAXOS_OK;
	arena_reset(&b->arena);
	/* An in-memory log must hold a whole transaction, and deleting many big records would
	 * overflow it. That mode cannot recover from a crash anyway, so there the deletes go in
	 * transactions of their own (ending the batch so far), and the trim point follows. */
	bool in_memory = b->mode == PAXOS_DURABILITY_INMEMORY_LOG;
	size_t limit = in_memory ? BDB_MEMORY_LOG_DELETES : SIZE_MAX;
	bool done = false;
	int rc = PAXOS_OK;
	while (rc == PAXOS_OK && !done) {
		if (in_memory)
			rc = bdb_commit_write(b);
		if (rc == PAXOS_OK)
			rc = write_txn(b);
		if (rc == PAXOS_OK) {
			pages_lock(b);
			rc = delete_through(b, iid, limit, &done);
			pages_unlock(b);
		}
	}
	if (rc != PAXOS_OK)
		return rc;
	struct storage_meta meta = {.trim = iid, .highest_accepted = b->h.highest_accepted};
	rc = bdb_write_meta(b, &meta);
	if (rc != PAXOS_OK)
		return rc;
	b->h.trim = iid;
	return end_change(b);
}

void bdb_marker_path(const struct bdb_storage *b, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/%s", b->dir, BDB_OPEN_MARKER);
}

/* ---- pipelined commits (durability sync, dbsync) ---- */

/* On the flush thread (or the loop): everything committed so far reaches the disk. */
static int bdb_flush(void *arg, char *err, size_t errlen)
{
	struct bdb_storage *b = arg;
	const char *what = "log flush failed";
	int rc = b->env->log_flush(b->env, NULL);
	pthread_mutex_lock(&b->page_lock);
	if (rc == 0 && b->mode == PAXOS_DURABILITY_DBSYNC) {
		what = "database sync failed"; /* after the log: recovery needs the commits */
		rc = b->db->sync(b->db, 0);
	}
	if (rc == 0) {
		what = "checkpoint failed";
		rc = b->env->txn_checkpoint(b->env, BDB_CHECKPOINT_KBYTES, 0, 0);
	}
	pthread_mutex_unlock(&b->page_lock);
	if (rc != 0) {
		describe(b, rc, what, err, errlen);
		return PAXOS_E_STORAGE;
	}
	return PAXOS_OK;
}

/* On the loop, the flush collected: a failed one stops the store. */
static void bdb_flushed(void *arg, int rc, const char *err)
{
	struct bdb_storage *b = arg;
	if (rc != PAXOS_OK) {
		snprintf(b->h.error, sizeof(b->h.error), "%s", err);
		stop(b);
	}
}

const struct storage_flusher_ops bdb_flusher_ops = {
    .flush = bdb_flush,
    .finish = bdb_flushed,
};

void bdb_free(struct bdb_storage *b)
{
	pthread_mutex_destroy(&b->detail_lock);
	pthread_mutex_destroy(&b->page_lock);
	free(b);
}

/* Closes what is open, every commit made durable first; an unfinished batch is dropped. */
void bdb_destroy(struct paxos_storage *st)
{
	struct bdb_storage *b = of(st);
	bool clean = true;
	abort_txn(b);
	if (b->h.flusher.started) {
		if (!b->h.failed)
			storage_flusher_sync(&b->h.flusher, true, NULL);
		storage_flusher_stop(&b->h.flusher);
	}
	if (b->db && !b->h.failed && b->mode != PAXOS_DURABILITY_INMEMORY_LOG)
		b->env->txn_checkpoint(b->env, 0, 0, 0); /* a short recovery next time */
	/* A failed store writes nothing more: after a failed write (a full disk) the log may end
	 * in a torn record, and pages written now could hold changes the log lost, which
	 * recovery cannot undo. The next open recovers from what the log made durable, as after a
	 * crash. So the database closes without writing its cached pages, and the environment,
	 * whose close would write them, is marked panicked: its close then writes nothing, at the
	 * cost of the memory it holds, which stays allocated until the process exits. A store
	 * refused at open (corrupt, another format) wrote nothing: it closes as usual. */
	if (b->db)
		clean = b->db->close(b->db, b->h.failed ? DB_NOSYNC : 0) == 0 && clean;
	/* The pages carry positions in a log that dies with this environment; the next one
	 * starts its log afresh and would take them for a log that went missing. */
	if (b->db_open && b->mode == PAXOS_DURABILITY_INMEMORY_LOG && !b->h.failed)
		clean = b->env->lsn_reset(b->env, BDB_FILE, 0) == 0 && clean;
	if (b->serving && b->h.failed) {
		b->env->set_flags(b->env, DB_PANIC_ENVIRONMENT, 1);
		clean = false;
	}
	if (b->env)
		clean = b->env->close(b->env, 0) == 0 && clean;
	if (b->marker && clean) {
		char path[sizeof(b->dir) + 32];
		bdb_marker_path(b, path, sizeof(path));
		unlink(path);
	}
	storage_unlock_dir(b->lock_fd);
	arena_free(&b->arena);
	free(b->buf);
	bdb_free(b);
}

/* What both variants share; the pipelined one adds what a flush thread needs. */
#define BDB_COMMON_OPS                                                                             \
	.name = "bdb", .begin = storage_head_begin, .commit = bdb_commit, .get = bdb_get,          \
	.put = bdb_put, .trim = bdb_trim, .trim_iid = storage_head_trim_iid,                       \
	.highest_accepted = storage_head_highest_accepted, .destroy = bdb_destroy,                 \
	.error = storage_head_error

const struct paxos_storage_ops bdb_ops = {BDB_COMMON_OPS};

const struct paxos_storage_ops bdb_pipelined_ops = {
    BDB_COMMON_OPS, .committed = storage_head_committed, .sync = storage_head_sync,
    .sync_fd = storage_head_sync_fd};
