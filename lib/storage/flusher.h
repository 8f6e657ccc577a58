/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flushes of a backend with pipelined commits (paxos/storage.h, sync): the event loop
 * commits in memory or without a device flush and goes on; a flush makes every commit not
 * flushed yet durable, one flush at a time, on the backend's thread or on the caller's.
 * Internal to libpaxos.
 *
 * The loop owns everything but a flush running on the thread: it counts commits
 * (storage_flusher_commit), hands a flush over when none runs (prepare, on the loop), collects
 * it when it finished (finish, on the loop). flush runs on the thread on state the loop does
 * not touch meanwhile, or on the loop itself (sync with wait).
 */
#ifndef PAXOS_STORAGE_FLUSHER_H
#define PAXOS_STORAGE_FLUSHER_H

#include <paxos/storage.h>

#include <pthread.h>

#define FLUSHER_ERROR_MAX 1024

struct storage_flusher_ops {
	/* On the loop, as a flush is handed over: what the commits so far changed becomes the
	 * flush's (an LMDB overlay changes hands). false: not now (out of memory, failed). */
	bool (*prepare)(void *arg);
	/* On the thread (or the loop, see storage_flusher_sync): makes what prepare handed over
	 * durable. PAXOS_OK, or an error with the reason written to err. */
	int (*flush)(void *arg, char *err, size_t errlen);
	/* On the loop, once the flush is collected, with its result and reason. */
	void (*finish)(void *arg, int rc, const char *err);
};

struct storage_flusher {
	const struct storage_flusher_ops *ops;
	void *arg;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* the thread waits for a job, the loop for its end */
	int fds[2];          /* a byte per finished flush: the loop's wake-up (sync_fd) */
	bool started;
	/* Shared, under lock. */
	bool job;      /* handed over, not taken by the thread yet */
	bool finished; /* done, not collected yet */
	bool stop;
	int result;
	uint64_t took_us;
	char error[FLUSHER_ERROR_MAX];
	/* The loop's. */
	uint64_t running;         /* the commit the running flush makes durable; 0: none runs */
	uint64_t records;         /* records committed since the last hand-over */
	uint64_t running_records; /* records of the running flush */
	bool failed;
	struct paxos_storage_progress progress;
};

/* Starts the thread. PAXOS_OK, or PAXOS_E_NOMEM / PAXOS_E_IO with err set. */
int storage_flusher_start(struct storage_flusher *f, const struct storage_flusher_ops *ops,
			  void *arg, char *err, size_t errlen);

/* Waits for the running flush, if any (collecting it), then ends the thread. Safe on a
 * flusher that never started. */
void storage_flusher_stop(struct storage_flusher *f);

/* The loop made a commit that wrote records records: numbers it. With backlog (the caller
 * holds much in memory) it makes every commit durable first (sync with wait). Returns
 * PAXOS_OK or PAXOS_E_STORAGE once a flush failed. */
int storage_flusher_commit(struct storage_flusher *f, uint64_t records, bool backlog);

/* paxos_storage_ops.sync: collects a finished flush and starts the next on the thread; with
 * wait, waits for a running one and flushes the rest on the caller's thread. */
int storage_flusher_sync(struct storage_flusher *f, bool wait, struct paxos_storage_progress *p);

/* paxos_storage_ops.sync_fd */
int storage_flusher_fd(const struct storage_flusher *f);

#endif
