#include "recovery_fence.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

#define FENCE_FILE "recovery"
#define FENCE_TEMP "recovery.tmp"

int paxos_recovery_fence_read(const char *dir, paxos_iid *floor, paxos_ballot *fence, char *err,
			      size_t errlen)
{
	char path[512], text[96];
	*floor = 0;
	*fence = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, FENCE_FILE);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return PAXOS_OK;
	if (fd < 0) {
		paxos_error_format(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return PAXOS_E_IO;
	}
	ssize_t n = read(fd, text, sizeof(text) - 1);
	int e = errno;
	close(fd);
	if (n < 0) {
		paxos_error_format(err, errlen, "cannot read %s: %s", path, strerror(e));
		return PAXOS_E_IO;
	}
	text[n] = '\0';
	uint64_t f, b;
	int used = 0;
	if (sscanf(text, "%" SCNu64 " %" SCNu64 "\n%n", &f, &b, &used) != 2 || used != n) {
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
	char tmp[512], path[512], text[64];
	snprintf(tmp, sizeof(tmp), "%s/%s", dir, FENCE_TEMP);
	snprintf(path, sizeof(path), "%s/%s", dir, FENCE_FILE);
	int len = snprintf(text, sizeof(text), "%" PRIu64 " %" PRIu64 "\n", floor, fence);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	bool ok = fd >= 0 && write(fd, text, (size_t)len) == len && fsync(fd) == 0;
	int e = errno;
	if (fd >= 0 && close(fd) != 0 && ok) {
		ok = false;
		e = errno;
	}
	if (ok && rename(tmp, path) != 0) {
		ok = false;
		e = errno;
	}
	if (ok) {
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ok = dfd >= 0 && fsync(dfd) == 0;
		e = errno;
		if (dfd >= 0)
			close(dfd);
	}
	if (!ok) {
		paxos_error_format(err, errlen, "cannot write %s: %s", path, strerror(e));
		return PAXOS_E_IO;
	}
	return PAXOS_OK;
}
