/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The file epoch store (paxos/epoch.h). DIR/epoch holds, in decimal, the highest epoch any
 * incarnation of one proposer has used ballots of. A starting proposer takes the next one, so
 * its ballots lie above all of its predecessors' (proposer/ballot.h). Updates are
 * write-to-temporary, fsync, rename, fsync of the directory, each under a lock on the
 * directory so that two processes never take the same epoch.
 */
#include <paxos/epoch.h>
#include <paxos/proposer.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "error.h"
#include "storage_backend.h"
#include "config_fields.h"

#define EPOCH_FILE "epoch"
#define EPOCH_TEMP "epoch.tmp"

struct file_store {
	struct paxos_epoch_store es; /* first: the interface's pointer is this store's */
	int dirfd;
	char dir[PATH_MAX];
	char error[PATH_MAX + 256];
};

/* The stored epoch, 0 when there is no file yet. Anything but a number below the limit
 * (with an optional newline) is corrupt: guessing could reuse ballots. */
static int read_epoch(struct file_store *f, uint32_t *epoch)
{
	char text[32];
	size_t n;
	bool missing;
	int rc = storage_read_small(f->dirfd, f->dir, EPOCH_FILE, text, sizeof(text), &n, &missing,
				    f->error, sizeof(f->error));
	*epoch = 0;
	if (rc != PAXOS_OK || missing)
		return rc;
	size_t digits = strspn(text, "0123456789");
	bool tail_ok = text[digits] == '\0' || (text[digits] == '\n' && text[digits + 1] == '\0');
	unsigned long long v = digits > 0 && digits <= 10 ? strtoull(text, NULL, 10) : ULLONG_MAX;
	if (!tail_ok || v >= PAXOS_PROPOSER_EPOCH_LIMIT) {
		text[strcspn(text, "\n")] = '\0';
		paxos_error_format(
		    f->error, sizeof(f->error),
		    "corrupt %s/%s: \"%.20s\" is not an epoch number below %u; the proposer "
		    "cannot know which ballots it used before (restore the file, or delete it "
		    "only together with every acceptor's state)",
		    f->dir, EPOCH_FILE, text, PAXOS_PROPOSER_EPOCH_LIMIT);
		return PAXOS_E_STORAGE;
	}
	*epoch = (uint32_t)v;
	return PAXOS_OK;
}

static int write_epoch(struct file_store *f, uint32_t epoch)
{
	char text[16];
	int len = snprintf(text, sizeof(text), "%u\n", epoch);
	bool created;
	int e = storage_replace_file(f->dirfd, EPOCH_FILE, EPOCH_TEMP, text, (size_t)len, &created);
	if (e == 0)
		return PAXOS_OK;
	if (!created)
		paxos_error_format(f->error, sizeof(f->error), "cannot create %s/%s: %s", f->dir,
				   EPOCH_TEMP, strerror(e));
	else
		paxos_error_format(f->error, sizeof(f->error), "cannot store epoch %u in %s/%s: %s",
				   epoch, f->dir, EPOCH_FILE, strerror(e));
	return PAXOS_E_IO;
}

/* Under the directory's lock, reads the stored epoch and stores next(stored) when that is
 * higher. *epoch: in, the wanted epoch for a raise; out, the stored epoch afterwards. */
static int update_epoch(struct file_store *f, bool take_next, uint32_t *epoch)
{
	f->error[0] = '\0';
	if (flock(f->dirfd, LOCK_EX) != 0) {
		paxos_error_format(f->error, sizeof(f->error), "cannot lock %s: %s", f->dir,
				   strerror(errno));
		return PAXOS_E_IO;
	}
	uint32_t stored;
	int rc = read_epoch(f, &stored);
	if (rc == PAXOS_OK && take_next) {
		/* Ballots of later epochs are dropped as implausible (paxos/types.h). */
		if (stored + 1 >= PAXOS_PLAUSIBLE_EPOCHS) {
			paxos_error_format(f->error, sizeof(f->error),
					   "%s/%s: the proposer used up its %u epochs", f->dir,
					   EPOCH_FILE, PAXOS_PLAUSIBLE_EPOCHS);
			rc = PAXOS_E_STORAGE;
		} else {
			rc = write_epoch(f, stored + 1);
			stored++;
		}
	} else if (rc == PAXOS_OK && *epoch > stored) {
		rc = write_epoch(f, *epoch);
		stored = *epoch;
	}
	flock(f->dirfd, LOCK_UN);
	if (rc == PAXOS_OK)
		*epoch = stored;
	return rc;
}

static int file_next(struct paxos_epoch_store *es, uint32_t *epoch)
{
	struct file_store *f = (struct file_store *)es;
	if (!epoch) {
		paxos_error_format(f->error, sizeof(f->error), "invalid arguments");
		return PAXOS_E_INVALID;
	}
	return update_epoch(f, true, epoch);
}

static int file_store(struct paxos_epoch_store *es, uint32_t epoch)
{
	struct file_store *f = (struct file_store *)es;
	/* A forged ballot must not use up the epochs left for restarts. */
	if (epoch >= PAXOS_PLAUSIBLE_EPOCHS) {
		paxos_error_format(f->error, sizeof(f->error),
				   "epoch %u is beyond the last plausible one (%u)", epoch,
				   PAXOS_PLAUSIBLE_EPOCHS - 1);
		return PAXOS_E_INVALID;
	}
	return update_epoch(f, false, &epoch);
}

static void file_destroy(struct paxos_epoch_store *es)
{
	struct file_store *f = (struct file_store *)es;
	close(f->dirfd);
	free(f);
}

static const char *file_error(struct paxos_epoch_store *es)
{
	return ((struct file_store *)es)->error;
}

static const struct paxos_epoch_store_ops file_ops = {
    .name = "file",
    .next = file_next,
    .store = file_store,
    .destroy = file_destroy,
    .error = file_error,
};

struct paxos_epoch_store *paxos_epoch_store_open(const char *dir, char *err, size_t errlen)
{
	paxos_error_format(err, errlen, "%s", "");
	if (!dir || !dir[0] || strlen(dir) >= PATH_MAX) {
		paxos_error_format(err, errlen, "epoch store: %s",
				   dir ? "path too long" : "no path");
		return NULL;
	}
	if (storage_make_dirs(dir, err, errlen) != PAXOS_OK)
		return NULL;
	struct file_store *f = calloc(1, sizeof(*f));
	if (!f) {
		paxos_error_format(err, errlen, "out of memory");
		return NULL;
	}
	f->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->dirfd < 0) {
		paxos_error_format(err, errlen, "cannot open %s: %s", dir, strerror(errno));
		free(f);
		return NULL;
	}
	snprintf(f->dir, sizeof(f->dir), "%s", dir);
	f->es.ops = &file_ops;
	return &f->es;
}

int paxos_epoch_store_dir(const struct paxos_config *cfg, uint32_t proposer_id, char *buf,
			  size_t cap)
{
	if (!cfg || !buf || cap == 0)
		return PAXOS_E_INVALID;
	int n = snprintf(buf, cap, "%s/proposer-%u", cfg->storage_path, proposer_id);
	return n >= 0 && (size_t)n < cap ? PAXOS_OK : PAXOS_E_INVALID;
}
