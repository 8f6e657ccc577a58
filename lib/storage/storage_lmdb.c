/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Durable acceptor storage on LMDB: one B-tree keyed by big-endian iid (layout in
 * storage_backend.h). With durability nosync a batch (begin..commit) is one write
 * transaction, started by its first change so that read-only batches never take the writer
 * lock. Reads outside a write transaction use one reusable read transaction, kept open until
 * the next change or commit so that the values get returns (pointers into the map, no copy)
 * stay valid as storage.h says.
 *
 * With durability sync, commits are pipelined (paxos/storage.h): a batch's changes go to an
 * overlay in memory (overlay.h) that gets read first, and a flush (flusher.h) writes the
 * commits gathered there in one write transaction, committed with LMDB's own device flushes;
 * on the flush thread, the loop fills the next overlay meanwhile. LMDB allows one writer at a
 * time and readers beside it, so the loop's reads go on during a flush. MDB_NOSYNC commits with a
 * flush thread calling mdb_env_sync would be simpler, but a system crash can then corrupt the store
 * (LMDB's documentation of MDB_NOSYNC): durability sync keeps every commit a synced one.
 */
#include <paxos/storage_backends.h>
#include <paxos/storage.h>

#include <errno.h>
#include <lmdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "overlay.h"
#include "storage_backend.h"
#include "storage_head.h"

/* A commit that leaves more than this waiting in memory makes it durable at once. */
#define LMDB_OVERLAY_BACKLOG (64u << 20)

struct lmdb_storage {
	struct storage_head h; /* first, so the storage pointer is the container */
	MDB_env *env;
	bool env_open; /* mdb_env_open succeeded */
	MDB_dbi dbi;
	MDB_txn *read;  /* reset when not in use, renewed by the next read */
	bool reading;   /* read is live: values returned by get point into it */
	MDB_txn *write; /* the current batch's changes, NULL until its first change */
	int lock_fd;
	uint64_t map_size;
	bool new_store; /* opened empty: the metadata record is still to be written */
	uint8_t *buf;   /* a record being encoded for put, reused */
	size_t cap;
	char dir[256];

	/* Durability sync: pipelined commits. The open overlay takes the changes; mark is where
	 * it stood at the last commit (what follows is the open batch); the flushing one is the
	 * flush thread's while a flush runs, empty otherwise. */
	bool pipelined;
	struct overlay overlays[2];
	struct overlay *open, *flushing;
	struct overlay_mark mark;
	bool changed;       /* the open batch changed something */
	uint8_t *flush_buf; /* the flush thread's record encoding */
	size_t flush_cap;
};

static struct lmdb_storage *of(struct paxos_storage *st)
{
	return (struct lmdb_storage *)st;
}

static void end_read(struct lmdb_storage *l)
{
	if (l->reading) {
		mdb_txn_reset(l->read);
		l->reading = false;
	}
}

/* Whether the file system holding dir has less room left than a write of a few pages needs. */
static bool disk_full(const char *dir)
{
	struct statvfs fs;
	return statvfs(dir, &fs) == 0 && (uint64_t)fs.f_bavail * fs.f_frsize < (1u << 20);
}

/* The sentence for a failure of what with LMDB status rc (0: none), into buf. Reads only what
 * is fixed once the store is open, so the flush thread uses it too. */
static void describe(const struct lmdb_storage *l, int rc, const char *what, char *buf, size_t cap)
{
	if (rc == MDB_MAP_FULL)
		snprintf(buf, cap,
			 "lmdb %s: %s: %s: the store is full: it reached lmdb-map-size (%llu "
			 "bytes); raise lmdb-map-size or trim more often",
			 l->dir, what, mdb_strerror(rc), (unsigned long long)l->map_size);
	else if (rc != 0 && (rc == EIO || rc == ENOSPC) && disk_full(l->dir))
		/* LMDB reports a write the disk had no room for as EIO: name the cause. */
		snprintf(buf, cap, "lmdb %s: %s: %s: the file system holding it is full (%s)",
			 l->dir, what, mdb_strerror(rc), strerror(ENOSPC));
	else if (rc != 0)
		snprintf(buf, cap, "lmdb %s: %s: %s", l->dir, what, mdb_strerror(rc));
	else
		snprintf(buf, cap, "lmdb %s: %s", l->dir, what);
}

/* Drops the batch and refuses everything from now on (l->h.error says why). */
static int stop(struct lmdb_storage *l)
{
	if (l->write) {
		mdb_txn_abort(l->write);
		l->write = NULL;
	}
	end_read(l);
	l->h.failed = true;
	return PAXOS_E_STORAGE;
}

/* Records why l stopped working, drops the batch and returns PAXOS_E_STORAGE. */
static int fail(struct lmdb_storage *l, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct lmdb_storage *l, int rc, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	describe(l, rc, what, l->h.error, sizeof(l->h.error));
	return stop(l);
}

/* The transaction reads go through: the batch's write transaction if it has one. */
static int read_txn(struct lmdb_storage *l, MDB_txn **txn)
{
	if (l->write) {
		*txn = l->write;
		return PAXOS_OK;
	}
	if (!l->reading) {
		int rc = mdb_txn_renew(l->read);
		if (rc != 0)
			return fail(l, rc, "cannot start a read transaction");
		l->reading = true;
	}
	*txn = l->read;
	return PAXOS_OK;
}

static int write_txn(struct lmdb_storage *l)
{
	end_read(l);
	if (l->write)
		return PAXOS_OK;
	int rc = mdb_txn_begin(l->env, NULL, 0, &l->write);
	if (rc != 0) {
		l->write = NULL;
		return fail(l, rc, "cannot start a write transaction");
	}
	return PAXOS_OK;
}

static int commit_write(struct lmdb_storage *l)
{
	end_read(l);
	if (!l->write)
		return PAXOS_OK;
	int rc = mdb_txn_commit(l->write);
	l->write = NULL; /* freed by commit whatever it returns */
	if (rc != 0)
		return fail(l, rc, "commit failed");
	return PAXOS_OK;
}

/* ---- pipelined commits (durability sync) ---- */

static int trim_in(struct lmdb_storage *l, MDB_txn *txn, paxos_iid iid, paxos_iid highest,
		   char *why, size_t cap);

/* Numbers the open batch's changes as a commit, for the next flush. */
static int commit_pipelined(struct lmdb_storage *l)
{
	if (!l->changed)
		return PAXOS_OK;
	uint64_t records = l->open->count - l->mark.count;
	l->mark = overlay_mark(l->open);
	l->changed = false;
	return storage_flusher_commit(&l->h.flusher, records, l->open->used > LMDB_OVERLAY_BACKLOG);
}

/* On the loop: the commits in the open overlay become the flush's; an open batch stays. */
static bool lmdb_hand_over(void *arg)
{
	struct lmdb_storage *l = arg;
	if (l->h.failed || overlay_split(l->open, l->mark, l->flushing) != PAXOS_OK)
		return false;
	struct overlay *full = l->open;
	l->open = l->flushing;
	l->flushing = full;
	l->mark = (struct overlay_mark){0, 0, 0};
	return true;
}

static int reserve_flush(struct lmdb_storage *l, size_t size)
{
	return storage_grow_buffer(&l->flush_buf, &l->flush_cap, size, 4096);
}

/* On the flush thread (or the loop): the flushing overlay in one write transaction, trim
 * first. */
static int lmdb_flush(void *arg, char *err, size_t errlen)
{
	struct lmdb_storage *l = arg;
	const struct overlay *o = l->flushing;
	uint8_t key_bytes[STORAGE_KEY_SIZE];
	char what[64];
	MDB_txn *txn;

	int rc = mdb_txn_begin(l->env, NULL, 0, &txn);
	if (rc != 0) {
		describe(l, rc, "cannot start a write transaction", err, errlen);
		return PAXOS_E_STORAGE;
	}
	if (o->trim && trim_in(l, txn, o->trim, o->trim_highest, err, errlen) != PAXOS_OK) {
		mdb_txn_abort(txn);
		return PAXOS_E_STORAGE;
	}
	for (size_t i = 0; i < o->count; i++) {
		struct paxos_record rec;
		overlay_entry_record(o, i, &rec);
		if (rec.iid <= o->trim)
			continue; /* put before the trim */
		size_t size = STORAGE_HEADER_SIZE + (size_t)rec.value.len;
		rc = reserve_flush(l, size) == PAXOS_OK ? 0 : ENOMEM;
		if (rc == 0) {
			storage_record_encode(l->flush_buf, &rec);
			storage_key_encode(key_bytes, rec.iid);
			MDB_val key = {sizeof(key_bytes), key_bytes}, data = {size, l->flush_buf};
			rc = mdb_put(txn, l->dbi, &key, &data, 0);
		}
		if (rc != 0) {
			mdb_txn_abort(txn);
			snprintf(what, sizeof(what), "writing instance %llu",
				 (unsigned long long)rec.iid);
			describe(l, rc, what, err, errlen);
			return PAXOS_E_STORAGE;
		}
	}
	rc = mdb_txn_commit(txn);
	if (rc != 0) {
		describe(l, rc, "commit failed", err, errlen);
		return PAXOS_E_STORAGE;
	}
	return PAXOS_OK;
}

/* On the loop, the flush collected: reads see the map it wrote, not the overlay. */
static void lmdb_flushed(void *arg, int rc, const char *err)
{
	struct lmdb_storage *l = arg;
	end_read(l);
	overlay_clear(l->flushing);
	if (rc != PAXOS_OK) {
		snprintf(l->h.error, sizeof(l->h.error), "%s", err);
		stop(l);
	}
}

static const struct storage_flusher_ops lmdb_flusher_ops = {
    .prepare = lmdb_hand_over,
    .flush = lmdb_flush,
    .finish = lmdb_flushed,
};

/* A change outside begin..commit is its own batch. */
static int end_change(struct lmdb_storage *l)
{
	if (l->h.in_batch)
		return PAXOS_OK;
	return l->pipelined ? commit_pipelined(l) : commit_write(l);
}

static int lmdb_commit(struct paxos_storage *st)
{
	struct lmdb_storage *l = of(st);
	int rc = storage_head_end_batch(&l->h);
	if (rc != PAXOS_OK)
		return rc;
	return l->pipelined ? commit_pipelined(l) : commit_write(l);
}

/* What the map holds for iid: get after its checks. */
static int read_map(struct lmdb_storage *l, paxos_iid iid, struct paxos_record *rec)
{
	uint8_t key_bytes[STORAGE_KEY_SIZE];
	MDB_val key = {sizeof(key_bytes), key_bytes}, data;
	MDB_txn *txn = NULL;

	int rc = read_txn(l, &txn);
	if (rc != PAXOS_OK)
		return rc;
	storage_key_encode(key_bytes, iid);
	rc = mdb_get(txn, l->dbi, &key, &data);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return fail(l, rc, "reading instance %llu", (unsigned long long)iid);
	if (!storage_record_decode(iid, data.mv_data, data.mv_size, rec))
		return fail(l, 0, "corrupt database: bad record for instance %llu",
			    (unsigned long long)iid);
	return 1;
}

static int lmdb_get(struct paxos_storage *st, paxos_iid iid, struct paxos_record *rec)
{
	struct lmdb_storage *l = of(st);
	if (l->h.failed)
		return PAXOS_E_STORAGE;
	if (iid == 0 || !rec)
		return PAXOS_E_INVALID;
	if (iid <= l->h.trim)
		return 0;
	/* Pipelined: the newest changes first, then the ones being flushed, then the map. */
	if (l->pipelined && (overlay_get(l->open, iid, rec) || overlay_get(l->flushing, iid, rec)))
		return 1;
	return read_map(l, iid, rec);
}

static int reserve(struct lmdb_storage *l, size_t size)
{
	return storage_grow_buffer(&l->buf, &l->cap, size, 256);
}

static int lmdb_put(struct paxos_storage *st, const struct paxos_record *rec)
{
	struct lmdb_storage *l = of(st);
	uint8_t key_bytes[STORAGE_KEY_SIZE];

	if (l->h.failed)
		return PAXOS_E_STORAGE;
	if (!rec || rec->iid == 0 || (rec->value.len > 0 && !rec->value.data))
		return PAXOS_E_INVALID;
	if (rec->iid <= l->h.trim)
		return PAXOS_E_INVALID; /* dropped for good */
	if (l->pipelined) {
		int rc = overlay_put(l->open, rec);
		if (rc != PAXOS_OK)
			return rc;
		l->changed = true;
		if (rec->accepted != 0 && rec->iid > l->h.highest_accepted)
			l->h.highest_accepted = rec->iid;
		return end_change(l);
	}
	size_t size = STORAGE_HEADER_SIZE + (size_t)rec->value.len;
	int rc = reserve(l, size);
	if (rc != PAXOS_OK)
		return rc;
	/* Encode first: the value may point into the read transaction write_txn ends. */
	storage_record_encode(l->buf, rec);
	rc = write_txn(l);
	if (rc != PAXOS_OK)
		return rc;
	storage_key_encode(key_bytes, rec->iid);
	MDB_val key = {sizeof(key_bytes), key_bytes}, data = {size, l->buf};
	rc = mdb_put(l->write, l->dbi, &key, &data, 0);
	if (rc != 0)
		return fail(l, rc, "writing instance %llu", (unsigned long long)rec->iid);
	if (rec->accepted != 0 && rec->iid > l->h.highest_accepted)
		l->h.highest_accepted = rec->iid;
	return end_change(l);
}

static int put_meta(struct lmdb_storage *l, MDB_txn *txn, const struct storage_meta *meta)
{
	uint8_t key_bytes[STORAGE_KEY_SIZE], value[STORAGE_META_SIZE];
	MDB_val key = {sizeof(key_bytes), key_bytes}, data = {sizeof(value), value};

	storage_key_encode(key_bytes, STORAGE_META_IID);
	storage_meta_encode(value, meta);
	return mdb_put(txn, l->dbi, &key, &data, 0);
}

static int write_meta(struct lmdb_storage *l, const struct storage_meta *meta)
{
	int rc = put_meta(l, l->write, meta);
	return rc == 0 ? PAXOS_OK : fail(l, rc, "writing the metadata");
}

/* Deletes every record up to iid in txn and records the trim point (with highest, the highest
 * accepted instance) in the metadata. PAXOS_OK, or PAXOS_E_STORAGE with the reason in why. */
static int trim_in(struct lmdb_storage *l, MDB_txn *txn, paxos_iid iid, paxos_iid highest,
		   char *why, size_t cap)
{
	uint8_t key_bytes[STORAGE_KEY_SIZE];
	MDB_cursor *cursor;
	char what[64];

	int rc = mdb_cursor_open(txn, l->dbi, &cursor);
	if (rc != 0) {
		describe(l, rc, "trimming", why, cap);
		return PAXOS_E_STORAGE;
	}
	/* Seek the first instance each time rather than rely on where a delete leaves the
	 * cursor: one B-tree descent per record. */
	for (;;) {
		MDB_val key = {sizeof(key_bytes), key_bytes}, data;
		storage_key_encode(key_bytes, 1);
		rc = mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE);
		if (rc == MDB_NOTFOUND) {
			rc = 0;
			break;
		}
		if (rc != 0)
			break;
		if (key.mv_size != STORAGE_KEY_SIZE) {
			mdb_cursor_close(cursor);
			snprintf(what, sizeof(what), "corrupt database: key of %zu bytes",
				 key.mv_size);
			describe(l, 0, what, why, cap);
			return PAXOS_E_STORAGE;
		}
		if (storage_key_decode(key.mv_data) > iid)
			break;
		rc = mdb_cursor_del(cursor, 0);
		if (rc != 0)
			break;
	}
	mdb_cursor_close(cursor);
	if (rc != 0) {
		snprintf(what, sizeof(what), "trimming to instance %llu", (unsigned long long)iid);
		describe(l, rc, what, why, cap);
		return PAXOS_E_STORAGE;
	}
	struct storage_meta meta = {.trim = iid, .highest_accepted = highest};
	rc = put_meta(l, txn, &meta);
	if (rc != 0) {
		describe(l, rc, "writing the metadata", why, cap);
		return PAXOS_E_STORAGE;
	}
	return PAXOS_OK;
}

static int lmdb_trim(struct paxos_storage *st, paxos_iid iid)
{
	struct lmdb_storage *l = of(st);

	if (l->h.failed)
		return PAXOS_E_STORAGE;
	if (iid <= l->h.trim)
		return PAXOS_OK;
	if (l->pipelined) {
		overlay_trim(l->open, iid, l->h.highest_accepted);
		l->changed = true;
		l->h.trim = iid;
		return end_change(l);
	}
	int rc = write_txn(l);
	if (rc == PAXOS_OK && trim_in(l, l->write, iid, l->h.highest_accepted, l->h.error,
				      sizeof(l->h.error)) != PAXOS_OK)
		rc = stop(l);
	if (rc != PAXOS_OK)
		return rc;
	l->h.trim = iid;
	return end_change(l);
}

/* The map's pages up to the highest one in use (pages freed below it are reused before the map
 * grows) against the map size: how close the store is to MDB_MAP_FULL. */
static void lmdb_space(struct paxos_storage *st, uint64_t *used, uint64_t *limit)
{
	struct lmdb_storage *l = of(st);
	MDB_envinfo info;
	MDB_stat stat;
	*used = 0;
	*limit = l->map_size;
	if (mdb_env_info(l->env, &info) == MDB_SUCCESS &&
	    mdb_env_stat(l->env, &stat) == MDB_SUCCESS) {
		*used = ((uint64_t)info.me_last_pgno + 1) * stat.ms_psize;
		*limit = info.me_mapsize;
	}
}

/* Closes what is open, every commit made durable first; an unfinished batch is dropped. */
static void lmdb_destroy(struct paxos_storage *st)
{
	struct lmdb_storage *l = of(st);
	if (l->h.flusher.started) {
		if (!l->h.failed)
			storage_flusher_sync(&l->h.flusher, true, NULL);
		storage_flusher_stop(&l->h.flusher);
	}
	if (l->write)
		mdb_txn_abort(l->write);
	if (l->read)
		mdb_txn_abort(l->read);
	if (l->env_open)
		mdb_env_sync(l->env, 1); /* nosync: a clean shutdown still reaches the disk */
	if (l->env)
		mdb_env_close(l->env);
	storage_unlock_dir(l->lock_fd);
	overlay_free(&l->overlays[0]);
	overlay_free(&l->overlays[1]);
	free(l->flush_buf);
	free(l->buf);
	free(l);
}

/* What both variants share; the pipelined one adds what a flush thread needs. */
#define LMDB_COMMON_OPS                                                                            \
	.name = "lmdb", .begin = storage_head_begin, .commit = lmdb_commit, .get = lmdb_get,       \
	.put = lmdb_put, .trim = lmdb_trim, .trim_iid = storage_head_trim_iid,                     \
	.highest_accepted = storage_head_highest_accepted, .destroy = lmdb_destroy,                \
	.error = storage_head_error, .space = lmdb_space

static const struct paxos_storage_ops lmdb_ops = {LMDB_COMMON_OPS};

static const struct paxos_storage_ops lmdb_pipelined_ops = {
    LMDB_COMMON_OPS, .committed = storage_head_committed, .sync = storage_head_sync,
    .sync_fd = storage_head_sync_fd};

/* Trim point and highest accepted instance of an existing store. */
static int recover(struct lmdb_storage *l, MDB_txn *txn)
{
	uint8_t key_bytes[STORAGE_KEY_SIZE];
	MDB_val key = {sizeof(key_bytes), key_bytes}, data;
	struct storage_meta meta;
	MDB_cursor *cursor;
	char why[512];

	storage_key_encode(key_bytes, STORAGE_META_IID);
	int rc = mdb_get(txn, l->dbi, &key, &data);
	if (rc != 0 && rc != MDB_NOTFOUND)
		return fail(l, rc, "reading the metadata");
	bool found = rc == 0;
	MDB_stat stat;
	rc = mdb_stat(txn, l->dbi, &stat);
	if (rc != 0)
		return fail(l, rc, "reading the metadata");
	if (!storage_meta_check(found ? data.mv_data : NULL, found ? data.mv_size : 0,
				stat.ms_entries > 0, &meta, &l->new_store, why, sizeof(why)))
		return fail(l, 0, "%s", why);
	l->h.trim = meta.trim;
	l->h.highest_accepted = meta.highest_accepted;

	/* The highest accepted is at or near the last key: promise-only records may follow. */
	rc = mdb_cursor_open(txn, l->dbi, &cursor);
	if (rc != 0)
		return fail(l, rc, "scanning the store");
	enum storage_scan scan = STORAGE_SCAN_ON;
	rc = mdb_cursor_get(cursor, &key, &data, MDB_LAST);
	while (rc == 0 &&
	       (scan = storage_scan_back(key.mv_data, key.mv_size, data.mv_data, data.mv_size,
					 &l->h.highest_accepted)) == STORAGE_SCAN_ON)
		rc = mdb_cursor_get(cursor, &key, &data, MDB_PREV);
	mdb_cursor_close(cursor);
	if (scan == STORAGE_SCAN_CORRUPT)
		return fail(l, 0, "corrupt database: bad record near the end");
	if (rc != 0 && rc != MDB_NOTFOUND)
		return fail(l, rc, "scanning the store");
	return PAXOS_OK;
}

static int open_env(struct lmdb_storage *l, enum paxos_durability mode)
{
	int rc = mdb_env_create(&l->env);
	if (rc != 0) {
		l->env = NULL;
		return fail(l, rc, "cannot create the environment");
	}
	rc = mdb_env_set_mapsize(l->env, (size_t)l->map_size);
	if (rc != 0)
		return fail(l, rc, "cannot set the map size to %llu bytes",
			    (unsigned long long)l->map_size);
	unsigned flags = MDB_NOTLS | (mode == PAXOS_DURABILITY_NOSYNC ? MDB_NOSYNC : 0);
	rc = mdb_env_open(l->env, l->dir, flags, 0600);
	if (rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH)
		return fail(l, rc, "corrupt database (data.mdb is not a usable LMDB file)");
	if (rc == EACCES || rc == EROFS)
		return fail(l, rc, "not writable");
	if (rc != 0)
		return fail(l, rc, "cannot open");
	l->env_open = true;
	int dead;
	mdb_reader_check(l->env, &dead); /* reader slots of crashed processes pin old pages */

	MDB_txn *txn;
	rc = mdb_txn_begin(l->env, NULL, MDB_RDONLY, &txn);
	if (rc != 0)
		return fail(l, rc, "cannot start a read transaction");
	rc = mdb_dbi_open(txn, NULL, 0, &l->dbi);
	if (rc != 0) {
		mdb_txn_abort(txn);
		return fail(l, rc, "cannot open the database");
	}
	rc = recover(l, txn);
	if (rc != PAXOS_OK) {
		mdb_txn_abort(txn);
		return rc;
	}
	rc = mdb_txn_commit(txn); /* keeps the dbi handle */
	if (rc != 0)
		return fail(l, rc, "cannot open the database");
	if (l->new_store) {
		struct storage_meta meta = {.trim = 0, .highest_accepted = 0};
		rc = write_txn(l);
		if (rc == PAXOS_OK)
			rc = write_meta(l, &meta);
		if (rc == PAXOS_OK)
			rc = commit_write(l);
		if (rc != PAXOS_OK)
			return rc;
	}
	rc = mdb_txn_begin(l->env, NULL, MDB_RDONLY, &l->read);
	if (rc != 0) {
		l->read = NULL;
		return fail(l, rc, "cannot start a read transaction");
	}
	mdb_txn_reset(l->read);
	return PAXOS_OK;
}

struct paxos_storage *paxos_storage_lmdb_new(const char *dir, enum paxos_durability mode,
					     uint64_t map_size, char *err, size_t errlen)
{
	if (mode == PAXOS_DURABILITY_UNSET)
		mode = PAXOS_DURABILITY_SYNC;
	if (!dir || (mode != PAXOS_DURABILITY_SYNC && mode != PAXOS_DURABILITY_NOSYNC) ||
	    map_size == 0 || map_size > SIZE_MAX / 2) {
		if (err && errlen)
			snprintf(err, errlen,
				 "lmdb %s: invalid arguments (durability %s; lmdb "
				 "takes nosync or sync)",
				 dir ? dir : "(null)", paxos_durability_name(mode));
		return NULL;
	}
	struct lmdb_storage *l = calloc(1, sizeof(*l));
	if (!l) {
		if (err && errlen)
			snprintf(err, errlen, "lmdb %s: out of memory", dir);
		return NULL;
	}
	l->h.base.ops = &lmdb_ops;
	snprintf(l->dir, sizeof(l->dir), "%s", dir);
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;
	l->map_size = (map_size + (uint64_t)page - 1) / (uint64_t)page * (uint64_t)page;
	l->lock_fd = storage_lock_dir(dir, err, errlen);
	if (l->lock_fd < 0) {
		free(l);
		return NULL;
	}
	if (open_env(l, mode) != PAXOS_OK || reserve(l, 4096) != PAXOS_OK) {
		if (err && errlen)
			snprintf(err, errlen, "%s",
				 l->h.error[0] ? l->h.error : "lmdb: out of memory");
		l->write = NULL;
		lmdb_destroy(&l->h.base);
		return NULL;
	}
	if (mode == PAXOS_DURABILITY_SYNC) {
		char why[512];
		l->pipelined = true;
		l->open = &l->overlays[0];
		l->flushing = &l->overlays[1];
		l->h.base.ops = &lmdb_pipelined_ops;
		if (storage_flusher_start(&l->h.flusher, &lmdb_flusher_ops, l, why, sizeof(why)) !=
		    PAXOS_OK) {
			if (err && errlen)
				snprintf(err, errlen, "lmdb %s: %s", dir, why);
			lmdb_destroy(&l->h.base);
			return NULL;
		}
	}
	return &l->h.base;
}
