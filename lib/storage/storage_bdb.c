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
 */
#include <paxos/storage_backends.h>
#include <paxos/storage.h>

#include <db.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flusher.h"
#include "storage_backend.h"

#define BDB_FILE "paxos.db"
/* inmemory-log only: present while the store is open, so a crash is noticed at restart. */
#define BDB_OPEN_MARKER "paxos.open"
#define BDB_CACHE_BYTES (16u << 20)
/* The in-memory log must hold every change of the largest transaction (a big trim). */
#define BDB_MEMORY_LOG_BYTES (16u << 20)
/* Checkpoint once this much log was written, so old log files can go (and, in memory, the
 * log buffer can be reused). */
#define BDB_CHECKPOINT_KBYTES 4096u
/* Pipelined modes: commits fill the log buffer without writing it; a bigger one means fewer
 * writes on the loop between two flushes. */
#define BDB_PIPELINED_LOG_BYTES (1u << 20)
/* Records of at most 64 KiB: this many deletes fit in the in-memory log with room to spare. */
#define BDB_MEMORY_LOG_DELETES 128u
/* Values up to about a quarter page stay in the B-tree page instead of overflow pages. */
#define BDB_PAGE_SIZE 32768u
#define ARENA_CHUNK (64u << 10)

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
	struct paxos_storage base; /* first, so the storage pointer is the container */
	DB_ENV *env;
	DB *db;
	bool db_open; /* DB->open succeeded */
	bool serving; /* opened: paxos_storage_bdb_new returned it */
	DB_TXN *txn;  /* the current batch's changes, NULL until its first change */
	bool in_batch;
	bool failed; /* a failure dropped a batch: refuse everything from now on */
	enum paxos_durability mode;
	int lock_fd;
	bool marker; /* BDB_OPEN_MARKER was created by this open */
	paxos_iid trim;
	paxos_iid highest_accepted;
	uint8_t *buf; /* a raw record read by get, or one encoded for put */
	size_t cap;
	struct arena arena;
	char dir[256];
	char detail[256]; /* BDB's own last message, written by either thread: under detail_lock */
	pthread_mutex_t detail_lock;
	pthread_mutex_t page_lock; /* pipelined modes: see the top of this file */
	char error[1024];
	/* Durability sync and dbsync: pipelined commits. puts counts the open batch's. */
	bool pipelined;
	uint64_t puts;
	struct storage_flusher flusher;
};

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

static void on_bdb_error(const DB_ENV *env, const char *prefix, const char *msg)
{
	(void)prefix;
	struct bdb_storage *b = env->app_private;
	pthread_mutex_lock(&b->detail_lock);
	snprintf(b->detail, sizeof(b->detail), "%s", msg);
	pthread_mutex_unlock(&b->detail_lock);
}

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

/* Drops the batch and refuses everything from now on (b->error says why). */
static int stop(struct bdb_storage *b)
{
	abort_txn(b);
	b->failed = true;
	return PAXOS_E_STORAGE;
}

/* Records why b stopped working, drops the batch and returns PAXOS_E_STORAGE. */
static int fail(struct bdb_storage *b, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct bdb_storage *b, int rc, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	describe(b, rc, what, b->error, sizeof(b->error));
	return stop(b);
}

static int write_txn(struct bdb_storage *b)
{
	if (b->txn)
		return PAXOS_OK;
	int rc = b->env->txn_begin(b->env, NULL, &b->txn, 0);
	if (rc != 0) {
		b->txn = NULL;
		return fail(b, rc, "cannot start a transaction");
	}
	return PAXOS_OK;
}

static int commit_write(struct bdb_storage *b)
{
	arena_reset(&b->arena);
	if (!b->txn)
		return PAXOS_OK;
	int rc = b->txn->commit(b->txn, 0);
	b->txn = NULL; /* freed by commit whatever it returns */
	if (rc != 0)
		return fail(b, rc, "commit failed");
	if (b->pipelined && b->flusher.started) { /* not while opening */
		uint64_t puts = b->puts;
		b->puts = 0;
		return storage_flusher_commit(&b->flusher, puts, false);
	}
	if (b->mode == PAXOS_DURABILITY_DBSYNC) {
		/* The commit record first: recovery undoes changes it cannot see committed. */
		rc = b->env->log_flush(b->env, NULL);
		if (rc == 0)
			rc = b->db->sync(b->db, 0);
		if (rc != 0)
			return fail(b, rc, "database sync failed");
	}
	rc = b->env->txn_checkpoint(b->env, BDB_CHECKPOINT_KBYTES, 0, 0);
	if (rc != 0)
		return fail(b, rc, "checkpoint failed");
	return PAXOS_OK;
}

/* A change outside begin..commit is its own batch. */
static int end_change(struct bdb_storage *b)
{
	return b->in_batch ? PAXOS_OK : commit_write(b);
}

static int reserve(struct bdb_storage *b, size_t size)
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

static int bdb_begin(struct paxos_storage *st)
{
	struct bdb_storage *b = of(st);
	if (b->failed)
		return PAXOS_E_STORAGE;
	if (b->in_batch)
		return PAXOS_E_INVALID;
	b->in_batch = true;
	return PAXOS_OK;
}

static int bdb_commit(struct paxos_storage *st)
{
	struct bdb_storage *b = of(st);
	if (b->failed)
		return PAXOS_E_STORAGE;
	b->in_batch = false;
	return commit_write(b);
}

/* Reads iid's raw record into b->buf; returns its size, 0 if absent, or a negative status.
 * Without a transaction of our own the read is not transactional: nothing else writes. */
static int read_raw(struct bdb_storage *b, paxos_iid iid, size_t *size)
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
			return fail(b, rc, "reading instance %llu", (unsigned long long)iid);
		if (reserve(b, data.size) != PAXOS_OK)
			return PAXOS_E_NOMEM;
	}
	return PAXOS_E_STORAGE; /* unreachable */
}

static int bdb_get(struct paxos_storage *st, paxos_iid iid, struct paxos_record *rec)
{
	struct bdb_storage *b = of(st);
	size_t size = 0;

	if (b->failed)
		return PAXOS_E_STORAGE;
	if (iid == 0 || !rec)
		return PAXOS_E_INVALID;
	if (iid <= b->trim)
		return 0;
	int rc = read_raw(b, iid, &size);
	if (rc <= 0)
		return rc;
	struct paxos_record found;
	if (!storage_record_decode(iid, b->buf, size, &found))
		return fail(b, 0, "corrupt database: bad record for instance %llu",
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

	if (b->failed)
		return PAXOS_E_STORAGE;
	if (!rec || rec->iid == 0 || (rec->value.len > 0 && !rec->value.data))
		return PAXOS_E_INVALID;
	if (rec->iid <= b->trim)
		return PAXOS_E_INVALID; /* dropped for good */
	size_t size = STORAGE_HEADER_SIZE + (size_t)rec->value.len;
	int rc = reserve(b, size);
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
		return fail(b, rc, "writing instance %llu", (unsigned long long)rec->iid);
	b->puts++;
	if (rec->accepted != 0 && rec->iid > b->highest_accepted)
		b->highest_accepted = rec->iid;
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
		return fail(b, rc, "trimming");
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
		return fail(b, 0, "corrupt database: a key is not an instance number");
	if (rc != 0 && rc != DB_NOTFOUND)
		return fail(b, rc, "trimming to instance %llu", (unsigned long long)iid);
	return PAXOS_OK;
}

/* The metadata record, in the batch's transaction. */
static int write_meta(struct bdb_storage *b, const struct storage_meta *meta)
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
	return rc == 0 ? PAXOS_OK : fail(b, rc, "writing the metadata");
}

static int bdb_trim(struct paxos_storage *st, paxos_iid iid)
{
	struct bdb_storage *b = of(st);

	if (b->failed)
		return PAXOS_E_STORAGE;
	if (iid <= b->trim)
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
			rc = commit_write(b);
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
	struct storage_meta meta = {.trim = iid, .highest_accepted = b->highest_accepted};
	rc = write_meta(b, &meta);
	if (rc != PAXOS_OK)
		return rc;
	b->trim = iid;
	return end_change(b);
}

static paxos_iid bdb_trim_iid(struct paxos_storage *st)
{
	return of(st)->trim;
}

static paxos_iid bdb_highest_accepted(struct paxos_storage *st)
{
	return of(st)->highest_accepted;
}

static const char *bdb_error(struct paxos_storage *st)
{
	return of(st)->error;
}

static void marker_path(const struct bdb_storage *b, char *buf, size_t cap)
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
		snprintf(b->error, sizeof(b->error), "%s", err);
		stop(b);
	}
}

static const struct storage_flusher_ops bdb_flusher_ops = {
    .flush = bdb_flush,
    .finish = bdb_flushed,
};

static uint64_t bdb_committed(struct paxos_storage *st)
{
	return of(st)->flusher.progress.committed;
}

static int bdb_sync(struct paxos_storage *st, bool wait, struct paxos_storage_progress *p)
{
	struct bdb_storage *b = of(st);
	int rc = storage_flusher_sync(&b->flusher, wait, p);
	return b->failed ? PAXOS_E_STORAGE : rc;
}

static int bdb_sync_fd(struct paxos_storage *st)
{
	return storage_flusher_fd(&of(st)->flusher);
}

/* Closes what is open, every commit made durable first; an unfinished batch is dropped. */
static void bdb_destroy(struct paxos_storage *st)
{
	struct bdb_storage *b = of(st);
	bool clean = true;
	abort_txn(b);
	if (b->flusher.started) {
		if (!b->failed)
			storage_flusher_sync(&b->flusher, true, NULL);
		storage_flusher_stop(&b->flusher);
	}
	if (b->db && !b->failed && b->mode != PAXOS_DURABILITY_INMEMORY_LOG)
		b->env->txn_checkpoint(b->env, 0, 0, 0); /* a short recovery next time */
	/* A failed store writes nothing more: after a failed write (a full disk) the log may end
	 * in a torn record, and pages written now could hold changes the log lost, which
	 * recovery cannot undo. The next open recovers from what the log made durable, as after a
	 * crash. So the database closes without writing its cached pages, and the environment,
	 * whose close would write them, is marked panicked: its close then writes nothing, at the
	 * cost of the memory it holds, which stays allocated until the process exits. A store
	 * refused at open (corrupt, another format) wrote nothing: it closes as usual. */
	if (b->db)
		clean = b->db->close(b->db, b->failed ? DB_NOSYNC : 0) == 0 && clean;
	/* The pages carry positions in a log that dies with this environment; the next one
	 * starts its log afresh and would take them for a log that went missing. */
	if (b->db_open && b->mode == PAXOS_DURABILITY_INMEMORY_LOG && !b->failed)
		clean = b->env->lsn_reset(b->env, BDB_FILE, 0) == 0 && clean;
	if (b->serving && b->failed) {
		b->env->set_flags(b->env, DB_PANIC_ENVIRONMENT, 1);
		clean = false;
	}
	if (b->env)
		clean = b->env->close(b->env, 0) == 0 && clean;
	if (b->marker && clean) {
		char path[sizeof(b->dir) + 32];
		marker_path(b, path, sizeof(path));
		unlink(path);
	}
	storage_unlock_dir(b->lock_fd);
	arena_free(&b->arena);
	pthread_mutex_destroy(&b->detail_lock);
	pthread_mutex_destroy(&b->page_lock);
	free(b->buf);
	free(b);
}

/* What both variants share; the pipelined one adds what a flush thread needs. */
#define BDB_COMMON_OPS                                                                             \
	.name = "bdb", .begin = bdb_begin, .commit = bdb_commit, .get = bdb_get, .put = bdb_put,   \
	.trim = bdb_trim, .trim_iid = bdb_trim_iid, .highest_accepted = bdb_highest_accepted,      \
	.destroy = bdb_destroy, .error = bdb_error

static const struct paxos_storage_ops bdb_ops = {BDB_COMMON_OPS};

static const struct paxos_storage_ops bdb_pipelined_ops = {
    BDB_COMMON_OPS, .committed = bdb_committed, .sync = bdb_sync, .sync_fd = bdb_sync_fd};

/* --- opening ---------------------------------------------------------------------------- */

static int has_any_record(struct bdb_storage *b, bool *any)
{
	DBC *cursor;
	DBT key, data;
	uint8_t key_bytes[STORAGE_KEY_SIZE];

	int rc = b->db->cursor(b->db, NULL, &cursor, 0);
	if (rc != 0)
		return fail(b, rc, "scanning the store");
	memset(&key, 0, sizeof(key));
	memset(&data, 0, sizeof(data));
	key.data = key_bytes;
	key.ulen = sizeof(key_bytes);
	key.flags = DB_DBT_USERMEM;
	data.flags = DB_DBT_USERMEM | DB_DBT_PARTIAL; /* no value bytes: only whether */
	rc = cursor->get(cursor, &key, &data, DB_FIRST);
	cursor->close(cursor);
	if (rc != 0 && rc != DB_NOTFOUND && rc != DB_BUFFER_SMALL)
		return fail(b, rc, "scanning the store");
	*any = rc != DB_NOTFOUND; /* a key too long for a key is still a record */
	return PAXOS_OK;
}

/* Trim point and highest accepted instance of an existing store. */
static int recover(struct bdb_storage *b)
{
	struct storage_meta meta;
	size_t size = 0;
	char why[512];
	bool create;

	int rc = read_raw(b, STORAGE_META_IID, &size);
	if (rc < 0)
		return rc;
	bool found = rc == 1;
	bool has_records = false;
	if (!found) {
		rc = has_any_record(b, &has_records);
		if (rc != PAXOS_OK)
			return rc;
	}
	if (!storage_meta_check(found ? b->buf : NULL, size, has_records, &meta, &create, why,
				sizeof(why)))
		return fail(b, 0, "%s", why);
	if (create) {
		rc = write_meta(b, &meta);
		if (rc == PAXOS_OK)
			rc = commit_write(b);
		if (rc != PAXOS_OK)
			return rc;
	}
	b->trim = meta.trim;
	b->highest_accepted = meta.highest_accepted;

	/* The highest accepted is at or near the last key: promise-only records may follow.
	 * Opening may allocate, so BDB sizes the buffers itself here. */
	DBC *cursor;
	DBT key, data;
	rc = b->db->cursor(b->db, NULL, &cursor, 0);
	if (rc != 0)
		return fail(b, rc, "scanning the store");
	memset(&key, 0, sizeof(key));
	memset(&data, 0, sizeof(data));
	key.flags = data.flags = DB_DBT_REALLOC;
	bool corrupt = false;
	rc = cursor->get(cursor, &key, &data, DB_LAST);
	while (rc == 0) {
		struct paxos_record rec;
		if (key.size != STORAGE_KEY_SIZE) {
			corrupt = true;
			break;
		}
		paxos_iid iid = storage_key_decode(key.data);
		if (iid == STORAGE_META_IID || iid <= b->highest_accepted)
			break;
		if (!storage_record_decode(iid, data.data, data.size, &rec)) {
			corrupt = true;
			break;
		}
		if (rec.accepted != 0) {
			b->highest_accepted = iid;
			break;
		}
		rc = cursor->get(cursor, &key, &data, DB_PREV);
	}
	cursor->close(cursor);
	free(key.data);
	free(data.data);
	if (corrupt)
		return fail(b, 0, "corrupt database: bad record near the end");
	if (rc != 0 && rc != DB_NOTFOUND)
		return fail(b, rc, "scanning the store");
	return PAXOS_OK;
}

/* inmemory-log keeps no log, so a store that was open when its process died cannot be
 * trusted: its file holds whatever pages happened to be written. */
static int check_marker(struct bdb_storage *b)
{
	char path[sizeof(b->dir) + 32];

	marker_path(b, path, sizeof(path));
	if (access(path, F_OK) == 0)
		return fail(b, 0,
			    "was not closed cleanly, and durability inmemory-log keeps no log to "
			    "recover it: its state is lost (start it with storage-fresh yes)");
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail(b, errno, "cannot create %s", path);
	fsync(fd);
	close(fd);
	b->marker = true;
	return PAXOS_OK;
}

static int configure_env(struct bdb_storage *b)
{
	DB_ENV *env = b->env;
	int rc = env->set_cachesize(env, 0, BDB_CACHE_BYTES, 1);
	if (rc == 0 && b->mode == PAXOS_DURABILITY_INMEMORY_LOG) {
		rc = env->log_set_config(env, DB_LOG_IN_MEMORY, 1);
		if (rc == 0)
			rc = env->set_lg_bsize(env, BDB_MEMORY_LOG_BYTES);
	} else if (rc == 0) {
		rc = env->log_set_config(env, DB_LOG_AUTO_REMOVE, 1);
	}
	if (rc == 0 && b->pipelined)
		rc = env->set_lg_bsize(env, BDB_PIPELINED_LOG_BYTES);
	/* Pipelined modes flush the log on their thread instead. */
	if (rc == 0 && (b->mode == PAXOS_DURABILITY_NOSYNC || b->pipelined))
		rc = env->set_flags(env, DB_TXN_NOSYNC, 1);
	if (rc == 0 && b->mode == PAXOS_DURABILITY_WRITE_NOSYNC)
		rc = env->set_flags(env, DB_TXN_WRITE_NOSYNC, 1);
	return rc == 0 ? PAXOS_OK : fail(b, rc, "cannot configure the environment");
}

/* A page write the disk had no room for (ENOSPC) may leave the file ending in part of a page
 * it was extended by. Recovery then refuses the file ("file size not a multiple of the
 * pagesize") and the store would never open again. That part was never a whole page, so no
 * commit relies on it: the log holds every change to it. Cut it off; recovery writes the page
 * again from the log. The page size is the file's own (its metadata page, native order). */
static int drop_torn_page(struct bdb_storage *b)
{
	char path[sizeof(b->dir) + 32];
	snprintf(path, sizeof(path), "%s/%s", b->dir, BDB_FILE);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? PAXOS_OK : fail(b, errno, "cannot open %s", path);
	uint32_t meta[6]; /* LSN (2), page number, magic, version, page size */
	struct stat st;
	int rc = PAXOS_OK;
	if (fstat(fd, &st) == 0 && pread(fd, meta, sizeof(meta), 0) == (ssize_t)sizeof(meta) &&
	    meta[3] == DB_BTREEMAGIC && meta[5] >= 512 && meta[5] <= 65536 &&
	    st.st_size % meta[5] != 0) {
		off_t whole = st.st_size - st.st_size % meta[5];
		if (ftruncate(fd, whole) != 0 || fsync(fd) != 0)
			rc = fail(b, errno, "cannot cut the torn page off the end of %s", path);
	}
	close(fd);
	return rc;
}

/* Opens the environment, running recovery (recover: DB_RECOVER or DB_RECOVER_FATAL); returns
 * BDB's status, b->env set either way. */
static int open_env(struct bdb_storage *b, u_int32_t recover)
{
	int rc = db_env_create(&b->env, 0);
	if (rc != 0) {
		b->env = NULL;
		return fail(b, rc, "cannot create the environment");
	}
	b->env->app_private = b;
	b->env->set_errcall(b->env, on_bdb_error);
	rc = configure_env(b);
	if (rc != PAXOS_OK)
		return rc;
	/* Private: the regions live in this process, so a crash leaves no stale ones. */
	u_int32_t flags = DB_CREATE | DB_INIT_TXN | DB_INIT_LOG | DB_INIT_LOCK | DB_INIT_MPOOL |
			  recover | DB_PRIVATE | (b->pipelined ? DB_THREAD : 0);
	return b->env->open(b->env, b->dir, flags, 0600);
}

static int open_db(struct bdb_storage *b)
{
	int rc = PAXOS_OK;
	if (b->mode == PAXOS_DURABILITY_INMEMORY_LOG)
		rc = check_marker(b);
	if (rc == PAXOS_OK)
		rc = drop_torn_page(b);
	if (rc == PAXOS_OK)
		rc = open_env(b, DB_RECOVER);
	if (b->failed)
		return PAXOS_E_STORAGE;
	/* Normal recovery starts at the last checkpoint and gives up on a log it cannot follow
	 * from there (after a full disk, say); catastrophic recovery reads every log file left.
	 * What the log made durable is all a store holds, so it is the one way to get it back. */
	if (rc == DB_RUNRECOVERY && b->mode != PAXOS_DURABILITY_INMEMORY_LOG) {
		b->env->close(b->env, 0);
		b->env = NULL;
		pthread_mutex_lock(&b->detail_lock);
		b->detail[0] = '\0';
		pthread_mutex_unlock(&b->detail_lock);
		rc = open_env(b, DB_RECOVER_FATAL);
		if (b->failed)
			return PAXOS_E_STORAGE;
	}
	if (rc == EACCES || rc == EROFS)
		return fail(b, rc, "not writable");
	if (rc != 0)
		return fail(b, rc, "cannot open the environment");
	rc = db_create(&b->db, b->env, 0);
	if (rc != 0) {
		b->db = NULL;
		return fail(b, rc, "cannot create the database handle");
	}
	rc = b->db->set_pagesize(b->db, BDB_PAGE_SIZE);
	if (rc != 0)
		return fail(b, rc, "cannot set the page size");
	rc = b->db->open(b->db, NULL, BDB_FILE, NULL, DB_BTREE,
			 DB_CREATE | DB_AUTO_COMMIT | (b->pipelined ? DB_THREAD : 0), 0600);
	if (rc == EINVAL || rc == DB_VERIFY_BAD || rc == DB_RUNRECOVERY)
		return fail(b, rc, "corrupt database (%s is not a usable B-tree)", BDB_FILE);
	if (rc != 0)
		return fail(b, rc, "cannot open %s", BDB_FILE);
	b->db_open = true;
	return recover(b);
}

struct paxos_storage *paxos_storage_bdb_new(const char *dir, enum paxos_durability mode, char *err,
					    size_t errlen)
{
	if (mode == PAXOS_DURABILITY_UNSET)
		mode = PAXOS_DURABILITY_SYNC;
	bool known = mode == PAXOS_DURABILITY_INMEMORY_LOG || mode == PAXOS_DURABILITY_NOSYNC ||
		     mode == PAXOS_DURABILITY_WRITE_NOSYNC || mode == PAXOS_DURABILITY_SYNC ||
		     mode == PAXOS_DURABILITY_DBSYNC;
	if (!dir || !known) {
		if (err && errlen)
			snprintf(
			    err, errlen,
			    "bdb %s: invalid arguments (durability %s; bdb takes nosync, sync, "
			    "inmemory-log, write-nosync or dbsync)",
			    dir ? dir : "(null)", paxos_durability_name(mode));
		return NULL;
	}
	struct bdb_storage *b = calloc(1, sizeof(*b));
	if (!b) {
		if (err && errlen)
			snprintf(err, errlen, "bdb %s: out of memory", dir);
		return NULL;
	}
	b->mode = mode;
	b->pipelined = mode == PAXOS_DURABILITY_SYNC || mode == PAXOS_DURABILITY_DBSYNC;
	b->base.ops = b->pipelined ? &bdb_pipelined_ops : &bdb_ops;
	snprintf(b->dir, sizeof(b->dir), "%s", dir);
	if (pthread_mutex_init(&b->detail_lock, NULL) != 0) {
		if (err && errlen)
			snprintf(err, errlen, "bdb %s: out of memory", dir);
		free(b);
		return NULL;
	}
	if (pthread_mutex_init(&b->page_lock, NULL) != 0) {
		if (err && errlen)
			snprintf(err, errlen, "bdb %s: out of memory", dir);
		pthread_mutex_destroy(&b->detail_lock);
		free(b);
		return NULL;
	}
	b->lock_fd = storage_lock_dir(dir, err, errlen);
	if (b->lock_fd < 0) {
		pthread_mutex_destroy(&b->detail_lock);
		pthread_mutex_destroy(&b->page_lock);
		free(b);
		return NULL;
	}
	if (reserve(b, 4096) != PAXOS_OK)
		fail(b, ENOMEM, "out of memory");
	if (b->failed || open_db(b) != PAXOS_OK) {
		if (err && errlen)
			snprintf(err, errlen, "%s", b->error);
		bdb_destroy(&b->base);
		return NULL;
	}
	if (b->pipelined) {
		/* What opening wrote (a new store's metadata) is durable before the first flush. */
		char why[512];
		int rc = b->env->log_flush(b->env, NULL);
		if (rc != 0)
			fail(b, rc, "log flush failed");
		else if (storage_flusher_start(&b->flusher, &bdb_flusher_ops, b, why,
					       sizeof(why)) != PAXOS_OK)
			snprintf(b->error, sizeof(b->error), "bdb %s: %s", dir, why);
		if (b->failed || !b->flusher.started) {
			if (err && errlen)
				snprintf(err, errlen, "%s", b->error);
			b->failed = true;
			bdb_destroy(&b->base);
			return NULL;
		}
	}
	b->serving = true;
	return &b->base;
}
