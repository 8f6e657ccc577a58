/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-storage-bench: what one acceptor group commit costs on this machine's disk, for the
 * backend and durability paxos.conf names, measured through the same storage interface the
 * acceptor uses. Several writer processes (default 3, as three acceptors on one host) commit
 * at once, each to its own store; every commit holds --records new instances of --size bytes
 * and, with --final, rewrites the previous commit's instances as final, as a learning
 * acceptor does. With values outstanding fixed, a commit on the path of every value bounds
 * what Paxos can deliver: see docs/BENCHMARKS.md. Where commits are pipelined (durability
 * sync), a commit's time runs until sync says it is durable: one flush of one commit.
 */
#include <paxos/storage_backends.h>
#include <paxos/config.h>
#include <paxos/storage.h>

#include "clock.h"
#include "runner.h"

#include <ftw.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "config_fields.h"

enum { MAX_WRITERS = 16, MAX_SAMPLES = 1 << 18, FIRST_STORE_ID = 1000 };

struct shared {
	volatile int ready;
	volatile int failed;
	volatile paxos_time start, stop; /* set once every writer has opened its store */
	uint64_t commits[MAX_WRITERS];
	uint32_t latency_us[MAX_WRITERS][MAX_SAMPLES]; /* the first MAX_SAMPLES commits */
};

struct workload {
	long records;
	long size;
	bool final;
};

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* A benchmark store is scratch: it goes when the writer is done (it may be gigabytes). */
static void remove_store(const struct paxos_config *cfg, uint32_t id)
{
	char dir[PAXOS_STORAGE_PATH_MAX + 32];
	if (paxos_storage_dir(cfg, id, dir, sizeof(dir)) == PAXOS_OK)
		nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static int put_records(struct paxos_storage *st, paxos_iid first, long n, uint8_t *value,
		       size_t size, bool final)
{
	for (long i = 0; i < n; i++) {
		struct paxos_record rec = {.iid = first + (paxos_iid)i,
					   .promised = 1,
					   .accepted = 1,
					   .value = {.len = size, .data = value},
					   .final = final};
		memcpy(value, &rec.iid, sizeof(rec.iid)); /* no two values alike */
		int rc = st->ops->put(st, &rec);
		if (rc != PAXOS_OK)
			return rc;
	}
	return PAXOS_OK;
}

/* One writer: commits until w->stop, recording each commit's time. */
static int run_writer(const struct paxos_config *cfg, int index, const struct workload *w,
		      struct shared *sh)
{
	char err[512];
	struct paxos_storage *st =
	    paxos_storage_open(cfg, FIRST_STORE_ID + (uint32_t)index, true, err, sizeof(err));
	if (!st) {
		fprintf(stderr, "paxos-storage-bench: %s\n", err);
		sh->failed = 1;
		return 1;
	}
	uint8_t *value = calloc(1, (size_t)w->size);
	if (!value) {
		paxos_storage_destroy(st);
		remove_store(cfg, FIRST_STORE_ID + (uint32_t)index);
		sh->failed = 1;
		return 1;
	}
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
	while (sh->start == 0 || paxos_now() < sh->start)
		usleep(100);
	paxos_iid next = 1;
	uint64_t done = 0;
	int rc = PAXOS_OK;
	while (rc == PAXOS_OK && paxos_now() < sh->stop) {
		paxos_time t0 = paxos_now();
		rc = st->ops->begin(st);
		if (rc == PAXOS_OK)
			rc = put_records(st, next, w->records, value, (size_t)w->size, false);
		if (rc == PAXOS_OK && w->final && next > 1)
			rc = put_records(st, next - (paxos_iid)w->records, w->records, value,
					 (size_t)w->size, true);
		if (rc == PAXOS_OK)
			rc = st->ops->commit(st);
		/* Pipelined commits return at once: the cost is until the flush made it durable. */
		if (rc == PAXOS_OK && paxos_storage_pipelined(st))
			rc = st->ops->sync(st, true, NULL);
		if (done < MAX_SAMPLES)
			sh->latency_us[index][done] = (uint32_t)(paxos_now() - t0);
		done++;
		next += (paxos_iid)w->records;
	}
	if (rc != PAXOS_OK) {
		fprintf(stderr, "paxos-storage-bench: writer %d: %s (%s)\n", index,
			paxos_strerror(rc), paxos_storage_error(st));
		sh->failed = 1;
	}
	sh->commits[index] = done;
	free(value);
	paxos_storage_destroy(st);
	remove_store(cfg, FIRST_STORE_ID + (uint32_t)index);
	return rc == PAXOS_OK ? 0 : 1;
}

static int by_value(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void usage(FILE *to)
{
	fprintf(to,
		/* One line: help2man takes only the first usage line (or "or:" lines) as the
		 * synopsis. */
		"Usage: paxos-storage-bench -c FILE [--writers N] [--records R] [--size BYTES] "
		"[--final] [--seconds S]\n"
		"Commits R records of BYTES bytes per transaction (plus R final rewrites with\n"
		"--final) in N processes at once, each to its own store under storage-path,\n"
		"with the backend and durability of FILE; prints commits/s and commit times.\n"
		"--version prints the library's version and wire version.\n");
}

int main(int argc, char **argv)
{
	static const struct option options[] = {{"config", required_argument, NULL, 'c'},
						{"writers", required_argument, NULL, 'w'},
						{"records", required_argument, NULL, 'r'},
						{"size", required_argument, NULL, 's'},
						{"final", no_argument, NULL, 'f'},
						{"seconds", required_argument, NULL, 't'},
						{"help", no_argument, NULL, 'h'},
						{"version", no_argument, NULL, 'V'},
						{NULL, 0, NULL, 0}};
	const char *config = NULL;
	long writers = 3;
	struct workload w = {.records = 3, .size = 6000, .final = false};
	double seconds = 3;
	int opt;
	while ((opt = getopt_long(argc, argv, "c:w:r:s:ft:h", options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			config = optarg;
			break;
		case 'w':
			writers = strtol(optarg, NULL, 10);
			break;
		case 'r':
			w.records = strtol(optarg, NULL, 10);
			break;
		case 's':
			w.size = strtol(optarg, NULL, 10);
			break;
		case 'f':
			w.final = true;
			break;
		case 't':
			seconds = strtod(optarg, NULL);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			paxos_runner_version("paxos-storage-bench");
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	struct paxos_config cfg;
	char err[512];
	paxos_config_defaults(&cfg);
	if (!config || paxos_config_load(&cfg, config, err, sizeof(err)) != PAXOS_OK) {
		fprintf(stderr, "paxos-storage-bench: %s\n", config ? err : "-c FILE is required");
		return 2;
	}
	if (writers < 1 || writers > MAX_WRITERS || w.records < 1 || w.records > 4096 ||
	    w.size < 1 || w.size > 1 << 20 || !(seconds > 0 && seconds <= 600)) {
		fprintf(stderr,
			"paxos-storage-bench: writers must be 1..%d, records 1..4096, size "
			"1..1048576, seconds 0..600\n",
			MAX_WRITERS);
		return 2;
	}
	struct shared *sh =
	    mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("paxos-storage-bench: mmap");
		return 1;
	}
	pid_t pids[MAX_WRITERS];
	for (long i = 0; i < writers; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(run_writer(&cfg, (int)i, &w, sh));
		if (pids[i] < 0) {
			perror("paxos-storage-bench: fork");
			sh->failed = 1;
			writers = i; /* wait for the ones started, then fail */
			break;
		}
	}
	/* Everyone starts together once every store is open (or a writer gave up). */
	siginfo_t gone = {0};
	while (sh->ready < writers && !sh->failed &&
	       waitid(P_ALL, 0, &gone, WEXITED | WNOHANG | WNOWAIT) == 0 && gone.si_pid == 0)
		usleep(1000);
	sh->stop = paxos_now() + 10000 + (paxos_time)(seconds * 1e6);
	sh->start = sh->stop - (paxos_time)(seconds * 1e6);
	int failed = 0;
	for (long i = 0; i < writers; i++) {
		int status;
		waitpid(pids[i], &status, 0);
		failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	if (failed || sh->failed || sh->ready != writers) {
		fprintf(stderr, "paxos-storage-bench: a writer failed\n");
		return 1;
	}
	uint64_t total = 0, samples = 0;
	for (long i = 0; i < writers; i++) {
		total += sh->commits[i];
		uint64_t n = sh->commits[i] < MAX_SAMPLES ? sh->commits[i] : MAX_SAMPLES;
		memmove(&sh->latency_us[0][samples], sh->latency_us[i], n * sizeof(uint32_t));
		samples += n;
	}
	uint32_t *lat = &sh->latency_us[0][0];
	qsort(lat, samples, sizeof(*lat), by_value);
#define PCT(p) lat[(size_t)((double)(samples - 1) * (p))]
	printf("storage %s, durability %s: %ld writers, %ld records of %ld B per commit%s: "
	       "%.0f commits/s per writer; commit p50 %u p90 %u p99 %u max %u us\n",
	       cfg.storage, paxos_durability_name(cfg.durability), writers, w.records, w.size,
	       w.final ? " + as many final rewrites" : "",
	       (double)total / (double)writers / seconds, PCT(0.5), PCT(0.9), PCT(0.99),
	       lat[samples - 1]);
#undef PCT
	return 0;
}
