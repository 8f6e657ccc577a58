/* SPDX-License-Identifier: BSD-3-Clause */
#include "recovery_fence.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "storage_backend.h"

#define FENCE_FILE "recovery"
#define FENCE_TEMP "recovery.tmp"

int paxos_recovery_fence_read(const char *dir, paxos_iid *floor, paxos_ballot *fence, char *err,
			      size_t errlen)
{
	char path[512], text[96];
	*floor = 0;
	*fence = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, FENCE_FILE);
	size_t n;
	bool missing;
	int rc =
	    storage_read_small(-1, dir, FENCE_FILE, text, sizeof(text), &n, &missing, err, errlen);
	if (rc != PAXOS_OK || missing)
		return rc;
	uint64_t f, b;
	int used = 0;
	if (sscanf(text, "%" SCNu64 " %" SCNu64 "\n%n", &f, &b, &used) != 2 || (size_t)used != n) {
		/* Guessing could let the acceptor vote where its lost earlier life did. */
		paxos_error_format(err, errlen,
				   "corrupt %s: expected \"FLOOR FENCE\"; restore it, or start the "
				   "acceptor with --fresh (it then recovers again)",
				   path);
		return PAXOS_E_IO;
	}
	*floor = f;
	*fence = b;
	return PAXOS_OK;
}

int paxos_recovery_fence_write(const char *dir, paxos_iid floor, paxos_ballot fence, char *err,
			       size_t errlen)
{
	char text[64];
	int len = snprintf(text, sizeof(text), "%" PRIu64 " %" PRIu64 "\n", floor, fence);
	return storage_replace_in_dir(dir, FENCE_FILE, FENCE_TEMP, text, (size_t)len, err, errlen);
}

int paxos_generation_read(const char *dir, uint64_t *generation, bool *kept, char *err,
			  size_t errlen)
{
	char path[512], text[32];
	*generation = 0;
	*kept = false;
	snprintf(path, sizeof(path), "%s/%s", dir, GENERATION_FILE);
	size_t n;
	bool missing;
	int rc = storage_read_small(-1, dir, GENERATION_FILE, text, sizeof(text), &n, &missing, err,
				    errlen);
	if (rc != PAXOS_OK || missing)
		return rc;
	uint64_t g;
	int used = 0;
	if (sscanf(text, "%" SCNu64 "\n%n", &g, &used) != 1 || (size_t)used != n) {
		/* Guessing low could name a new log like one learners delivered already. */
		paxos_error_format(err, errlen,
				   "corrupt %s: expected a generation number; restore it, or write "
				   "one above every other acceptor's",
				   path);
		return PAXOS_E_IO;
	}
	*generation = g;
	*kept = true;
	return PAXOS_OK;
}

int paxos_generation_write(const char *dir, uint64_t generation, char *err, size_t errlen)
{
	char text[32];
	int len = snprintf(text, sizeof(text), "%" PRIu64 "\n", generation);
	if (storage_make_dirs(dir, err, errlen) != PAXOS_OK)
		return PAXOS_E_IO;
	return storage_replace_in_dir(dir, GENERATION_FILE, "generation.tmp", text, (size_t)len,
				      err, errlen);
}
