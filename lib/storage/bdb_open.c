/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Opening a Berkeley DB store (bdb.h): the environment, configured for the durability mode
 * and recovered from its log, the database, and the trim point and highest accepted instance
 * read back. A store a full disk left behind opens too: a torn last page is cut off, and a log
 * normal recovery cannot follow gets catastrophic recovery. paxos_storage_bdb_new is here: it
 * calls the store's operations (storage_bdb.c), which never call back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bdb.h"

#define BDB_CACHE_BYTES (16u << 20)
/* The in-memory log must hold every change of the largest transaction (a big trim). */
#define BDB_MEMORY_LOG_BYTES (16u << 20)
/* Pipelined modes: commits fill the log buffer without writing it; a bigger one means fewer
 * writes on the loop between two flushes. */
#define BDB_PIPELINED_LOG_BYTES (1u << 20)
/* Values up to about a quarter page stay in the B-tree page instead of overflow pages. */
#define BDB_PAGE_SIZE 32768u

static void on_bdb_error(const DB_ENV *env, const char *prefix, const char *msg)
{
	(void)prefix;
	struct bdb_storage *b = env->app_private;
	pthread_mutex_lock(&b->detail_lock);
	snprintf(b->detail, sizeof(b->detail), "%s", msg);
	pthread_mutex_unlock(&b->detail_lock);
}

static int has_any_record(struct bdb_storage *b, bool *any)
{
	DBC *cursor;
	DBT key, data;
	uint8_t key_bytes[STORAGE_KEY_SIZE];

	int rc = b->db->cursor(b->db, NULL, &cursor, 0);
	if (rc != 0)
		return bdb_fail(b, rc, "scanning the store");
	memset(&key, 0, sizeof(key));
	memset(&data, 0, sizeof(data));
	key.data = key_bytes;
	key.ulen = sizeof(key_bytes);
	key.flags = DB_DBT_USERMEM;
	data.flags = DB_DBT_USERMEM | DB_DBT_PARTIAL; /* no value bytes: only whether */
	rc = cursor->get(cursor, &key, &data, DB_FIRST);
	cursor->close(cursor);
	if (rc != 0 && rc != DB_NOTFOUND && rc != DB_BUFFER_SMALL)
		return bdb_fail(b, rc, "scanning the store");
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

	int rc = bdb_read_raw(b, STORAGE_META_IID, &size);
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
		return bdb_fail(b, 0, "%s", why);
	if (create) {
		rc = bdb_write_meta(b, &meta);
		if (rc == PAXOS_OK)
			rc = bdb_commit_write(b);
		if (rc != PAXOS_OK)
			return rc;
	}
	b->h.trim = meta.trim;
	b->h.highest_accepted = meta.highest_accepted;

	/* The highest accepted is at or near the last key: promise-only records may follow.
	 * Opening may allocate, so BDB sizes the buffers itself here. */
	DBC *cursor;
	DBT key, data;
	rc = b->db->cursor(b->db, NULL, &cursor, 0);
	if (rc != 0)
		return bdb_fail(b, rc, "scanning the store");
	memset(&key, 0, sizeof(key));
	memset(&data, 0, sizeof(data));
	key.flags = data.flags = DB_DBT_REALLOC;
	enum storage_scan scan = STORAGE_SCAN_ON;
	rc = cursor->get(cursor, &key, &data, DB_LAST);
	while (rc == 0 && (scan = storage_scan_back(key.data, key.size, data.data, data.size,
						    &b->h.highest_accepted)) == STORAGE_SCAN_ON)
		rc = cursor->get(cursor, &key, &data, DB_PREV);
	cursor->close(cursor);
	free(key.data);
	free(data.data);
	if (scan == STORAGE_SCAN_CORRUPT)
		return bdb_fail(b, 0, "corrupt database: bad record near the end");
	if (rc != 0 && rc != DB_NOTFOUND)
		return bdb_fail(b, rc, "scanning the store");
	return PAXOS_OK;
}

/* inmemory-log keeps no log, so a store that was open when its process died cannot be
 * trusted: its file holds whatever pages happened to be written. */
static int check_marker(struct bdb_storage *b)
{
	char path[sizeof(b->dir) + 32];

	bdb_marker_path(b, path, sizeof(path));
	if (access(path, F_OK) == 0)
		return bdb_fail(
		    b, 0,
		    "was not closed cleanly, and durability inmemory-log keeps no log to "
		    "recover it: its state is lost (start it with storage-fresh yes)");
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return bdb_fail(b, errno, "cannot create %s", path);
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
	return rc == 0 ? PAXOS_OK : bdb_fail(b, rc, "cannot configure the environment");
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
		return errno == ENOENT ? PAXOS_OK : bdb_fail(b, errno, "cannot open %s", path);
	uint32_t meta[6]; /* LSN (2), page number, magic, version, page size */
	struct stat st;
	int rc = PAXOS_OK;
	if (fstat(fd, &st) == 0 && pread(fd, meta, sizeof(meta), 0) == (ssize_t)sizeof(meta) &&
	    meta[3] == DB_BTREEMAGIC && meta[5] >= 512 && meta[5] <= 65536 &&
	    st.st_size % meta[5] != 0) {
		off_t whole = st.st_size - st.st_size % meta[5];
		if (ftruncate(fd, whole) != 0 || fsync(fd) != 0)
			rc = bdb_fail(b, errno, "cannot cut the torn page off the end of %s", path);
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
		return bdb_fail(b, rc, "cannot create the environment");
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

static int bdb_open_store(struct bdb_storage *b)
{
	int rc = PAXOS_OK;
	if (b->mode == PAXOS_DURABILITY_INMEMORY_LOG)
		rc = check_marker(b);
	if (rc == PAXOS_OK)
		rc = drop_torn_page(b);
	if (rc == PAXOS_OK)
		rc = open_env(b, DB_RECOVER);
	if (b->h.failed)
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
		if (b->h.failed)
			return PAXOS_E_STORAGE;
	}
	if (rc == EACCES || rc == EROFS)
		return bdb_fail(b, rc, "not writable");
	if (rc != 0)
		return bdb_fail(b, rc, "cannot open the environment");
	rc = db_create(&b->db, b->env, 0);
	if (rc != 0) {
		b->db = NULL;
		return bdb_fail(b, rc, "cannot create the database handle");
	}
	rc = b->db->set_pagesize(b->db, BDB_PAGE_SIZE);
	if (rc != 0)
		return bdb_fail(b, rc, "cannot set the page size");
	rc = b->db->open(b->db, NULL, BDB_FILE, NULL, DB_BTREE,
			 DB_CREATE | DB_AUTO_COMMIT | (b->pipelined ? DB_THREAD : 0), 0600);
	if (rc == EINVAL || rc == DB_VERIFY_BAD || rc == DB_RUNRECOVERY)
		return bdb_fail(b, rc, "corrupt database (%s is not a usable B-tree)", BDB_FILE);
	if (rc != 0)
		return bdb_fail(b, rc, "cannot open %s", BDB_FILE);
	b->db_open = true;
	return recover(b);
}

/* --- opening ---------------------------------------------------------------------------- */

/* Writes the sentence of a failure to open into err, if the caller gave room for one. */
static void open_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void open_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static bool known_mode(enum paxos_durability mode)
{
	return mode == PAXOS_DURABILITY_INMEMORY_LOG || mode == PAXOS_DURABILITY_NOSYNC ||
	       mode == PAXOS_DURABILITY_WRITE_NOSYNC || mode == PAXOS_DURABILITY_SYNC ||
	       mode == PAXOS_DURABILITY_DBSYNC;
}

/* A store for dir in mode, its locks made, nothing opened yet; NULL without memory. */
static struct bdb_storage *bdb_alloc(const char *dir, enum paxos_durability mode)
{
	struct bdb_storage *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->mode = mode;
	b->pipelined = mode == PAXOS_DURABILITY_SYNC || mode == PAXOS_DURABILITY_DBSYNC;
	b->h.base.ops = b->pipelined ? &bdb_pipelined_ops : &bdb_ops;
	b->lock_fd = -1;
	snprintf(b->dir, sizeof(b->dir), "%s", dir);
	if (pthread_mutex_init(&b->detail_lock, NULL) != 0) {
		free(b);
		return NULL;
	}
	if (pthread_mutex_init(&b->page_lock, NULL) != 0) {
		pthread_mutex_destroy(&b->detail_lock);
		free(b);
		return NULL;
	}
	return b;
}

/* Pipelined modes: what opening wrote (a new store's metadata) is made durable, then the
 * flush thread starts. */
static int start_flusher(struct bdb_storage *b)
{
	char why[512];
	int rc = b->env->log_flush(b->env, NULL);
	if (rc != 0)
		return bdb_fail(b, rc, "log flush failed");
	if (storage_flusher_start(&b->h.flusher, &bdb_flusher_ops, b, why, sizeof(why)) !=
	    PAXOS_OK) {
		snprintf(b->h.error, sizeof(b->h.error), "bdb %s: %s", b->dir, why);
		b->h.failed = true;
		return PAXOS_E_STORAGE;
	}
	return PAXOS_OK;
}

struct paxos_storage *paxos_storage_bdb_new(const char *dir, enum paxos_durability mode, char *err,
					    size_t errlen)
{
	if (mode == PAXOS_DURABILITY_UNSET)
		mode = PAXOS_DURABILITY_SYNC;
	if (!dir || !known_mode(mode)) {
		open_error(err, errlen,
			   "bdb %s: invalid arguments (durability %s; bdb takes nosync, sync, "
			   "inmemory-log, write-nosync or dbsync)",
			   dir ? dir : "(null)", paxos_durability_name(mode));
		return NULL;
	}
	struct bdb_storage *b = bdb_alloc(dir, mode);
	if (!b) {
		open_error(err, errlen, "bdb %s: out of memory", dir);
		return NULL;
	}
	b->lock_fd = storage_lock_dir(dir, err, errlen);
	if (b->lock_fd < 0) {
		bdb_free(b);
		return NULL;
	}
	int rc = bdb_reserve(b, 4096);
	if (rc != PAXOS_OK)
		rc = bdb_fail(b, ENOMEM, "out of memory");
	if (rc == PAXOS_OK)
		rc = bdb_open_store(b);
	if (rc == PAXOS_OK && b->pipelined)
		rc = start_flusher(b);
	if (rc != PAXOS_OK || b->h.failed) {
		open_error(err, errlen, "%s", b->h.error);
		bdb_destroy(&b->h.base);
		return NULL;
	}
	b->serving = true;
	return &b->h.base;
}
