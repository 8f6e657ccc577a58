/*
 * Durable proposer incarnation numbers (epochs). <storage-path>/proposer-<id>/epoch holds, in
 * decimal, the highest epoch any incarnation of that proposer has used ballots of. A starting
 * proposer takes the next one, so its ballots lie above all of its predecessors'
 * (proposer/ballot.h). Updates are write-to-temporary, fsync, rename, fsync of the directory,
 * under a lock on the directory so that two processes never take the same epoch.
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

/* The stored epoch, 0 when there is no file yet. Anything but a number below the limit
 * (with an optional newline) is corrupt: guessing could reuse ballots. */
static int read_epoch(int dirfd, const char *dir, uint32_t *epoch, char *err, size_t errlen)
{
	char text[32];

	int fd = openat(dirfd, EPOCH_FILE, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		*epoch = 0;
		return PAXOS_OK;
	}
	if (fd < 0) {
		paxos_error_format(err, errlen, "cannot read %s/%s: %s", dir, EPOCH_FILE,
				   strerror(errno));
		return PAXOS_E_IO;
	}
	ssize_t n = read(fd, text, sizeof(text) - 1);
	int e = errno;
	close(fd);
	if (n < 0) {
		paxos_error_format(err, errlen, "cannot read %s/%s: %s", dir, EPOCH_FILE,
				   strerror(e));
		return PAXOS_E_IO;
	}
	text[n] = '\0';
	size_t digits = strspn(text, "0123456789");
	bool tail_ok = text[digits] == '\0' || (text[digits] == '\n' && text[digits + 1] == '\0');
	unsigned long long v = digits > 0 && digits <= 10 ? strtoull(text, NULL, 10) : ULLONG_MAX;
	if (!tail_ok || v >= PAXOS_PROPOSER_EPOCH_LIMIT) {
		text[strcspn(text, "\n")] = '\0';
		paxos_error_format(
		    err, errlen,
		    "corrupt %s/%s: \"%.20s\" is not an epoch number below %u; the proposer "
		    "cannot know which ballots it used before (restore the file, or delete it "
		    "only together with every acceptor's state)",
		    dir, EPOCH_FILE, text, PAXOS_PROPOSER_EPOCH_LIMIT);
		return PAXOS_E_STORAGE;
	}
	*epoch = (uint32_t)v;
	return PAXOS_OK;
}

static int write_epoch(int dirfd, const char *dir, uint32_t epoch, char *err, size_t errlen)
{
	char text[16];
	int len = snprintf(text, sizeof(text), "%u\n", epoch);
	bool created;
	int e = storage_replace_file(dirfd, EPOCH_FILE, EPOCH_TEMP, text, (size_t)len, &created);
	if (e == 0)
		return PAXOS_OK;
	if (!created)
		paxos_error_format(err, errlen, "cannot create %s/%s: %s", dir, EPOCH_TEMP,
				   strerror(e));
	else
		paxos_error_format(err, errlen, "cannot store epoch %u in %s/%s: %s", epoch, dir,
				   EPOCH_FILE, strerror(e));
	return PAXOS_E_IO;
}

/* Locks the proposer's directory, reads the stored epoch and stores next(stored) when that is
 * higher. *epoch: in, the wanted epoch for a raise; out, the stored epoch afterwards. */
static int update_epoch(const struct paxos_config *cfg, uint32_t proposer_id, bool take_next,
			uint32_t *epoch, char *err, size_t errlen)
{
	char dir[PATH_MAX];

	paxos_error_format(err, errlen, "%s", "");
	if (!cfg || !epoch || proposer_id >= PAXOS_MAX_PROPOSERS ||
	    (!take_next && *epoch >= PAXOS_PLAUSIBLE_EPOCHS)) {
		paxos_error_format(err, errlen, "invalid arguments");
		return PAXOS_E_INVALID;
	}
	int n = snprintf(dir, sizeof(dir), "%s/proposer-%u", cfg->storage_path, proposer_id);
	if (n < 0 || (size_t)n >= sizeof(dir)) {
		paxos_error_format(err, errlen, "storage-path %s: too long", cfg->storage_path);
		return PAXOS_E_INVALID;
	}
	int rc = storage_make_dirs(dir, err, errlen);
	if (rc != PAXOS_OK)
		return rc;
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		paxos_error_format(err, errlen, "cannot open %s: %s", dir, strerror(errno));
		return PAXOS_E_IO;
	}
	if (flock(dirfd, LOCK_EX) != 0) {
		paxos_error_format(err, errlen, "cannot lock %s: %s", dir, strerror(errno));
		close(dirfd);
		return PAXOS_E_IO;
	}
	uint32_t stored;
	rc = read_epoch(dirfd, dir, &stored, err, errlen);
	if (rc == PAXOS_OK && take_next) {
		/* Ballots of later epochs are dropped as implausible (paxos/types.h). */
		if (stored + 1 >= PAXOS_PLAUSIBLE_EPOCHS) {
			paxos_error_format(err, errlen, "%s/%s: proposer %u used up its %u epochs",
					   dir, EPOCH_FILE, proposer_id, PAXOS_PLAUSIBLE_EPOCHS);
			rc = PAXOS_E_STORAGE;
		} else {
			rc = write_epoch(dirfd, dir, stored + 1, err, errlen);
			stored++;
		}
	} else if (rc == PAXOS_OK && *epoch > stored) {
		rc = write_epoch(dirfd, dir, *epoch, err, errlen);
		stored = *epoch;
	}
	close(dirfd); /* drops the lock */
	if (rc == PAXOS_OK)
		*epoch = stored;
	return rc;
}

int paxos_proposer_next_epoch(const struct paxos_config *cfg, uint32_t proposer_id, uint32_t *epoch,
			      char *err, size_t errlen)
{
	return update_epoch(cfg, proposer_id, true, epoch, err, errlen);
}

int paxos_proposer_raise_epoch(const struct paxos_config *cfg, uint32_t proposer_id, uint32_t epoch,
			       char *err, size_t errlen)
{
	return update_epoch(cfg, proposer_id, false, &epoch, err, errlen);
}
