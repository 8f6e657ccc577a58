/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the durable backends share (see storage_backend.h): the record and metadata layout,
 * the directory lock and making the store's directories.
 */
#include <paxos/config.h>
#include <paxos/storage.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "storage_backend.h"
#include "bytes.h"

#define STORAGE_META_MAGIC 0x50585354u /* "PXST" */

/* --- layout ----------------------------------------------------------------------------- */

void storage_key_encode(uint8_t key[STORAGE_KEY_SIZE], paxos_iid iid)
{
	paxos_put_be64(key, iid);
}

paxos_iid storage_key_decode(const uint8_t key[STORAGE_KEY_SIZE])
{
	return paxos_get_be64(key);
}

void storage_record_encode(uint8_t *out, const struct paxos_record *rec)
{
	paxos_put_be64(out, rec->promised);
	paxos_put_be64(out + 8, rec->accepted);
	paxos_put_be32(out + 16, rec->final ? STORAGE_FLAG_FINAL : 0);
	paxos_put_be32(out + 20, rec->value.len);
	if (rec->value.len)
		memmove(out + STORAGE_HEADER_SIZE, rec->value.data, rec->value.len);
}

bool storage_record_decode(paxos_iid iid, const uint8_t *data, size_t size,
			   struct paxos_record *rec)
{
	if (size < STORAGE_HEADER_SIZE)
		return false;
	uint32_t flags = paxos_get_be32(data + 16);
	uint32_t len = paxos_get_be32(data + 20);
	if ((flags & ~STORAGE_FLAG_FINAL) != 0 || len != size - STORAGE_HEADER_SIZE)
		return false;
	rec->iid = iid;
	rec->promised = paxos_get_be64(data);
	rec->accepted = paxos_get_be64(data + 8);
	rec->final = (flags & STORAGE_FLAG_FINAL) != 0;
	rec->value.data = data + STORAGE_HEADER_SIZE;
	rec->value.len = len;
	return true;
}

enum storage_scan storage_scan_back(const void *key, size_t key_size, const void *data, size_t size,
				    paxos_iid *highest)
{
	struct paxos_record rec;
	if (key_size != STORAGE_KEY_SIZE)
		return STORAGE_SCAN_CORRUPT;
	paxos_iid iid = storage_key_decode(key);
	if (iid == STORAGE_META_IID || iid <= *highest)
		return STORAGE_SCAN_DONE;
	if (!storage_record_decode(iid, data, size, &rec))
		return STORAGE_SCAN_CORRUPT;
	if (rec.accepted == 0)
		return STORAGE_SCAN_ON;
	*highest = iid;
	return STORAGE_SCAN_DONE;
}

void storage_meta_encode(uint8_t out[STORAGE_META_SIZE], const struct storage_meta *meta)
{
	paxos_put_be32(out, STORAGE_META_MAGIC);
	paxos_put_be32(out + 4, STORAGE_FORMAT_VERSION);
	paxos_put_be64(out + 8, meta->trim);
	paxos_put_be64(out + 16, meta->highest_accepted);
}

static enum storage_meta_status storage_meta_decode(const uint8_t *data, size_t size,
						    struct storage_meta *meta)
{
	/* Magic and version come first in every format, so any version can be named. */
	if (size < 8 || paxos_get_be32(data) != STORAGE_META_MAGIC)
		return STORAGE_META_CORRUPT;
	meta->version = paxos_get_be32(data + 4);
	if (meta->version != STORAGE_FORMAT_VERSION)
		return STORAGE_META_OTHER_VERSION;
	if (size != STORAGE_META_SIZE)
		return STORAGE_META_CORRUPT;
	meta->trim = paxos_get_be64(data + 8);
	meta->highest_accepted = paxos_get_be64(data + 16);
	return STORAGE_META_OK;
}

bool storage_meta_check(const uint8_t *data, size_t size, bool has_records,
			struct storage_meta *meta, bool *create, char *err, size_t errlen)
{
	*create = false;
	meta->version = STORAGE_FORMAT_VERSION;
	meta->trim = 0;
	meta->highest_accepted = 0;
	if (!data) {
		if (!has_records) {
			*create = true;
			return true;
		}
		paxos_error_format(
		    err, errlen,
		    "store format version 1 (32-bit ballots, no format record), but this "
		    "libpaxos reads format version %u: start the acceptor with an empty "
		    "store (storage-fresh yes) or use the libpaxos that wrote it",
		    STORAGE_FORMAT_VERSION);
		return false;
	}
	switch (storage_meta_decode(data, size, meta)) {
	case STORAGE_META_OK:
		return true;
	case STORAGE_META_OTHER_VERSION:
		paxos_error_format(
		    err, errlen,
		    "store format version %u, but this libpaxos reads format version %u: "
		    "start the acceptor with an empty store (storage-fresh yes) or use the "
		    "libpaxos that wrote it",
		    meta->version, STORAGE_FORMAT_VERSION);
		return false;
	case STORAGE_META_CORRUPT:
		break;
	}
	paxos_error_format(err, errlen, "corrupt database: bad metadata record");
	return false;
}

/* --- directory lock --------------------------------------------------------------------- */

int storage_lock_dir(const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX];
	char text[32];

	if (snprintf(path, sizeof(path), "%s/%s", dir, STORAGE_LOCK_FILE) >= (int)sizeof(path)) {
		paxos_error_format(err, errlen, "%s: path too long", dir);
		return -1;
	}
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;
		paxos_error_format(err, errlen, "%s: %s (cannot create %s: %s)", dir,
				   e == EACCES || e == EROFS ? "not writable" : "unusable", path,
				   strerror(e));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
		text[n > 0 ? n : 0] = '\0';
		text[strcspn(text, "\n")] = '\0';
		close(fd);
		if (e == EWOULDBLOCK)
			paxos_error_format(
			    err, errlen,
			    "%s is locked: another acceptor has this store open (pid %s)", dir,
			    text[0] ? text : "unknown");
		else
			paxos_error_format(err, errlen, "%s: cannot lock %s: %s", dir, path,
					   strerror(e));
		return -1;
	}
	/* Who holds it, for the message above; best effort. */
	int len = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == 0 && pwrite(fd, text, (size_t)len, 0) < 0)
		(void)0;
	return fd;
}

void storage_unlock_dir(int fd)
{
	if (fd >= 0)
		close(fd); /* drops the flock */
}

/* --- directories ----------------------------------------------------------------------- */

int storage_make_dirs(const char *path, char *err, size_t errlen)
{
	char buf[PATH_MAX];
	struct stat sb;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST) {
			int e = errno;
			paxos_error_format(err, errlen, "cannot create %s: %s%s", buf, strerror(e),
					   e == EACCES || e == EROFS ? " (not writable)" : "");
			return PAXOS_E_IO;
		}
		*p = saved;
		if (saved == '\0')
			break;
	}
	if (stat(buf, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		paxos_error_format(err, errlen, "%s: not a directory", buf);
		return PAXOS_E_IO;
	}
	return PAXOS_OK;
}

int storage_replace_file(int dirfd, const char *name, const char *temp, const char *text,
			 size_t len, bool *created)
{
	int fd = openat(dirfd, temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	*created = fd >= 0;
	if (fd < 0)
		return errno;
	int e = 0;
	if (write(fd, text, len) != (ssize_t)len || fsync(fd) != 0)
		e = errno ? errno : EIO;
	if (close(fd) != 0 && e == 0)
		e = errno;
	if (e == 0 && renameat(dirfd, temp, dirfd, name) != 0)
		e = errno;
	if (e == 0 && fsync(dirfd) != 0) /* the rename itself must survive a crash */
		e = errno;
	return e;
}

int storage_grow_buffer(uint8_t **buf, size_t *cap, size_t size, size_t first)
{
	if (size <= *cap)
		return PAXOS_OK;
	size_t grown = *cap ? *cap : first;
	while (grown < size)
		grown *= 2;
	uint8_t *p = realloc(*buf, grown);
	if (!p)
		return PAXOS_E_NOMEM;
	*buf = p;
	*cap = grown;
	return PAXOS_OK;
}

/* The storage layer names its durability modes: the configuration parses them from here. */
const char *paxos_durability_name(enum paxos_durability mode)
{
	static const char *const names[PAXOS_DURABILITY_COUNT] = {
	    "unset", "none", "nosync", "sync", "inmemory-log", "write-nosync", "dbsync"};
	if ((unsigned)mode >= PAXOS_DURABILITY_COUNT)
		return "unknown";
	return names[mode];
}

int storage_read_small(int dirfd, const char *dir, const char *name, char *text, size_t cap,
		       size_t *len, bool *missing, char *err, size_t errlen)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = dirfd >= 0 ? openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
			    : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	*len = 0;
	text[0] = '\0';
	*missing = fd < 0 && errno == ENOENT;
	if (*missing)
		return PAXOS_OK;
	ssize_t n = fd < 0 ? -1 : read(fd, text, cap - 1);
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		paxos_error_format(err, errlen, "cannot read %s: %s", path, strerror(e));
		return PAXOS_E_IO;
	}
	text[n] = '\0';
	*len = (size_t)n;
	return PAXOS_OK;
}

int storage_replace_in_dir(const char *dir, const char *name, const char *temp, const char *text,
			   size_t len, char *err, size_t errlen)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool created = false;
	int e = dfd < 0 ? errno : storage_replace_file(dfd, name, temp, text, len, &created);
	if (dfd >= 0)
		close(dfd);
	if (e != 0) {
		paxos_error_format(err, errlen, "cannot write %s/%s: %s", dir, name, strerror(e));
		return PAXOS_E_IO;
	}
	return PAXOS_OK;
}
