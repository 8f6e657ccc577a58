/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-bench-first-touch: what writing a value into memory costs when the memory is new to
 * the process, as a growing memory store's values and a learner's first window pass are.
 * Copies SIZE-byte values back to back into 2 MiB chunks, 256 MiB in all, four ways:
 *   fault     fresh chunks, one page fault per 4 kB page inside memcpy
 *   populate  fresh chunks, madvise(MADV_POPULATE_WRITE) 64 kB ahead (lib/storage)
 *   map       fresh chunks from mmap(MAP_POPULATE), paged in whole before the copies
 *   reuse     one chunk written before, again and again: the copy alone
 * Prints nanoseconds per value of CPU time (user + system of this process) and of wall time.
 * Each mode runs in a process of its own (the memory an earlier mode left would change
 * what the next one gets from the kernel): with MODE, only that one.
 * Usage: paxos-bench-first-touch [SIZE [MODE]]   (default 1000, every mode)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (2u << 20)
#define TOTAL (256u << 20)
#define STEP (64u << 10)

enum mode { FAULT, POPULATE, MAP, REUSE, MODES };
static const char *const names[MODES] = {"fault", "populate", "map", "reuse"};

static double seconds(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static char *chunk_for(enum mode m, char *reused)
{
	if (m == REUSE)
		return reused;
	if (m == MAP) {
		void *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	return aligned_alloc(CHUNK, CHUNK);
}

/* Returns values copied, or 0 when memory ran out; adds the times to cpu and wall. */
static size_t run(enum mode m, size_t size, const char *src, double *cpu, double *wall)
{
	char *reused = aligned_alloc(CHUNK, CHUNK);
	if (!reused)
		return 0;
	memset(reused, 1, CHUNK);
	size_t n = 0, stride = (size + 15) / 16 * 16;
	double c0 = seconds(CLOCK_PROCESS_CPUTIME_ID), w0 = seconds(CLOCK_MONOTONIC);
	for (size_t k = 0; k < TOTAL / CHUNK; k++) {
		char *p = chunk_for(m, reused);
		if (!p)
			return 0;
		size_t mapped = 0;
		for (size_t off = 0; off + size <= CHUNK; off += stride, n++) {
#ifdef MADV_POPULATE_WRITE
			if (m == POPULATE && off + size > mapped) {
				size_t to = (off + size + STEP - 1) / STEP * STEP;
				to = to < CHUNK ? to : CHUNK; /* whole steps: aligned starts */
				madvise(p + mapped, to - mapped, MADV_POPULATE_WRITE);
				mapped = to;
			}
#endif
			memcpy(p + off, src, size);
		}
	}
	*cpu += seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
	*wall += seconds(CLOCK_MONOTONIC) - w0;
	return n; /* the chunks stay mapped: freeing them would hand the pages back for reuse */
}

/* The usage on OUT; returns the exit status: 0 for --help (stdout), 2 for a wrong command line. */
static int usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: paxos-bench-first-touch [SIZE [MODE]]\n"
	    "What copying SIZE-byte values (1..%u, default 1000) into memory new to the process\n"
	    "costs, per value: MODE fault, populate, map or reuse (default: each in turn).\n"
	    "  -h, --help   this text\n",
	    CHUNK / 4);
	return out == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))
		return usage(stdout);
	char *end = NULL;
	long size = argc > 1 ? strtol(argv[1], &end, 10) : 1000;
	if ((end && *end) || size < 1 || size > (long)(CHUNK / 4) || argc > 3)
		return usage(stderr);
	char *src = malloc((size_t)size);
	if (!src)
		return 1;
	memset(src, 7, (size_t)size);
	int only = -1;
	for (int m = 0; argc > 2 && m < MODES; m++)
		if (strcmp(argv[2], names[m]) == 0)
			only = m;
	if (argc > 2 && only < 0) {
		fprintf(stderr, "paxos-bench-first-touch: MODE is fault, populate, map or reuse\n");
		return 2;
	}
	if (only < 0)
		printf("%ld-byte values, %u MiB per mode\n", size, TOTAL >> 20);
	for (int m = 0; m < MODES; m++) {
		if (only >= 0 && m != only)
			continue;
		if (only < 0) { /* each mode in a child of its own */
			fflush(stdout);
			pid_t pid = fork();
			if (pid == 0) {
				char *args[] = {argv[0], argv[1] ? argv[1] : "1000",
						(char *)names[m], NULL};
				execv("/proc/self/exe", args);
				_exit(127);
			}
			int status = 0;
			if (pid < 0 || waitpid(pid, &status, 0) < 0 || status != 0)
				return 1;
			continue;
		}
		double cpu = 0, wall = 0;
		size_t n = run((enum mode)m, (size_t)size, src, &cpu, &wall);
		if (n == 0) {
			fprintf(stderr, "paxos-bench-first-touch: out of memory\n");
			return 1;
		}
		printf("%-9s %8.1f ns cpu %8.1f ns wall per value\n", names[m],
		       cpu * 1e9 / (double)n, wall * 1e9 / (double)n);
	}
	free(src);
	return 0;
}
