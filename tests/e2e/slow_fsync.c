/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A disk that takes its time, for e2e_slow_disk.sh: preloaded into a role process
 * (LD_PRELOAD), it makes each fsync of a file whose path contains PAXOS_TEST_SLOW_FSYNC (a
 * word such as "membership") wait PAXOS_TEST_SLOW_FSYNC_MS milliseconds first, as a loaded
 * or throttled device does. Every other call goes straight to the C library.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int fsync(int fd)
{
	static int (*real_fsync)(int);
	if (!real_fsync)
		*(void **)&real_fsync = dlsym(RTLD_NEXT, "fsync");
	const char *word = getenv("PAXOS_TEST_SLOW_FSYNC");
	const char *ms = getenv("PAXOS_TEST_SLOW_FSYNC_MS");
	char link[64], path[4096];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = word && ms ? readlink(link, path, sizeof(path) - 1) : -1;
	if (n > 0) {
		path[n] = '\0';
		long delay = strtol(ms, NULL, 10);
		if (strstr(path, word) && delay > 0) {
			struct timespec t = {delay / 1000, (delay % 1000) * 1000000L};
			nanosleep(&t, NULL);
		}
	}
	return real_fsync(fd);
}
