/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Opening an acceptor's store: the factory that turns paxos.conf into a backend.
 */
#include <paxos/storage_backends.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "membership_file.h"
#include "recovery_fence.h"
#include "storage_backend.h"
#include "config_fields.h"

int paxos_storage_dir(const struct paxos_config *cfg, uint32_t acceptor_id, char *buf, size_t cap)
{
	if (!cfg || !buf || cap == 0)
		return PAXOS_E_INVALID;
	int n = snprintf(buf, cap, "%s/acceptor-%u", cfg->storage_path, acceptor_id);
	return n >= 0 && (size_t)n < cap ? PAXOS_OK : PAXOS_E_INVALID;
}

/* Deletes every file in dir but the lock (held by the caller), the configuration history
 * (membership_file.h: the log's, not this acceptor's votes; its recovery needs it) and the
 * generation (recovery_fence.h).
 * Subdirectories are left alone and reported: backends never make them, so one means dir is
 * not what we think. */
static int wipe_dir(const char *dir, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	if (!d) {
		paxos_error_format(err, errlen, "cannot read %s: %s", dir, strerror(errno));
		return PAXOS_E_IO;
	}
	int rc = PAXOS_OK;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    strcmp(e->d_name, STORAGE_LOCK_FILE) == 0 ||
		    strcmp(e->d_name, MEMBERSHIP_FILE) == 0 ||
		    strcmp(e->d_name, GENERATION_FILE) == 0)
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) != 0) {
			paxos_error_format(err, errlen, "cannot delete %s/%s: %s", dir, e->d_name,
					   errno == EISDIR ? "it is a directory (not deleting it)"
							   : strerror(errno));
			rc = PAXOS_E_IO;
			break;
		}
	}
	closedir(d);
	return rc;
}

static int wipe_locked(const char *dir, char *err, size_t errlen)
{
	int fd = storage_lock_dir(dir, err, errlen);
	if (fd < 0)
		return PAXOS_E_STORAGE;
	int rc = wipe_dir(dir, err, errlen);
	/* The backend takes the lock again; if another process slips in between, the backend
	 * is refused, which is what a locked store means anyway. */
	storage_unlock_dir(fd);
	return rc;
}

struct paxos_storage *paxos_storage_open(const struct paxos_config *cfg, uint32_t acceptor_id,
					 bool fresh, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	struct paxos_storage *st;

	paxos_error_format(err, errlen, "%s", "");
	if (!cfg) {
		paxos_error_format(err, errlen, "invalid arguments");
		return NULL;
	}
	if (strcmp(cfg->storage, "memory") == 0) {
		st = paxos_storage_memory_new();
		if (!st)
			paxos_error_format(err, errlen, "memory storage: %s", strerror(ENOMEM));
		return st;
	}
	bool lmdb = strcmp(cfg->storage, "lmdb") == 0;
	if (!lmdb && strcmp(cfg->storage, "bdb") != 0) {
		paxos_error_format(err, errlen, "unknown storage backend '%s'", cfg->storage);
		return NULL;
	}
	if (paxos_storage_dir(cfg, acceptor_id, dir, sizeof(dir)) != PAXOS_OK) {
		paxos_error_format(err, errlen, "storage-path %s: too long", cfg->storage_path);
		return NULL;
	}
	if (storage_make_dirs(dir, err, errlen) != PAXOS_OK)
		return NULL;
	if ((fresh || cfg->storage_fresh) && wipe_locked(dir, err, errlen) != PAXOS_OK)
		return NULL;
	if (lmdb)
		return paxos_storage_lmdb_new(dir, cfg->durability, cfg->lmdb_map_size, err,
					      errlen);
	return paxos_storage_bdb_new(dir, cfg->durability, err, errlen);
}
