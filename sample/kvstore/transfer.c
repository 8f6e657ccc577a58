/* SPDX-License-Identifier: BSD-3-Clause */
/* Snapshot transfer for the replica: see transfer.h. */
#include "transfer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int kv_transfer_offer(struct paxos_node *n, const char *dir, uint64_t iid, char *err, size_t errlen)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/snapshot", dir);
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	long len = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
	uint8_t *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
	int rc = -1;
	if (buf && fseek(f, 0, SEEK_SET) == 0 && fread(buf, 1, (size_t)len, f) == (size_t)len)
		rc = 0;
	else
		snprintf(err, errlen, "%s: %s", path, buf ? "cannot read it" : "out of memory");
	fclose(f);
	if (rc == 0 && paxos_node_offer_snapshot(n, iid, buf, (size_t)len) != PAXOS_OK) {
		snprintf(err, errlen, "%s", paxos_node_error(n));
		rc = -1;
	}
	free(buf);
	return rc;
}

struct kv_store *kv_transfer_install(const char *dir, uint32_t replicas, uint64_t iid,
				     const void *bytes, size_t len, uint8_t **sessions,
				     size_t *sessions_len, char *err, size_t errlen)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s/snapshot.fetched", dir);
	snprintf(path, sizeof(path), "%s/snapshot", dir);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return NULL;
	}
	const uint8_t *p = bytes;
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, p + done, len - done);
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	/* Durable before it replaces the old snapshot, which a trim left behind anyway. */
	int failed = done != len || fsync(fd) != 0;
	failed |= close(fd) != 0;
	if (failed || rename(tmp, path) != 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		unlink(tmp);
		return NULL;
	}
	uint64_t loaded_iid = 0;
	uint8_t *membership = NULL;
	size_t membership_len = 0;
	*sessions = NULL;
	*sessions_len = 0;
	struct kv_store *s = kv_store_load(dir, replicas, &loaded_iid, &membership, &membership_len,
					   sessions, sessions_len, err, errlen);
	free(membership);
	if (s && loaded_iid != iid) {
		free(*sessions);
		*sessions = NULL;
		snprintf(err, errlen, "the snapshot covers instance %llu, not %llu as offered",
			 (unsigned long long)loaded_iid, (unsigned long long)iid);
		kv_store_free(s);
		return NULL;
	}
	if (!s && !err[0])
		snprintf(err, errlen, "%s: no snapshot", path);
	return s;
}
