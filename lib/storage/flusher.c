/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flush thread of a backend with pipelined commits (see flusher.h). A mutex and condition
 * variable carry the one job and its result between the loop and the thread; a pipe wakes the
 * event loop when a flush finished, so the loop never blocks on the thread unless it asks to
 * (sync with wait, stop).
 */
#include "flusher.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void *run(void *arg)
{
	struct storage_flusher *f = arg;
	char err[FLUSHER_ERROR_MAX];
	pthread_mutex_lock(&f->lock);
	for (;;) {
		while (!f->job && !f->stop)
			pthread_cond_wait(&f->cond, &f->lock);
		if (!f->job)
			break;
		f->job = false;
		pthread_mutex_unlock(&f->lock);
		err[0] = '\0';
		uint64_t start = now_us();
		int rc = f->ops->flush(f->arg, err, sizeof(err));
		uint64_t took = now_us() - start;
		pthread_mutex_lock(&f->lock);
		f->result = rc;
		f->took_us = took;
		if (rc != PAXOS_OK)
			memcpy(f->error, err, sizeof(err));
		f->finished = true;
		pthread_cond_broadcast(&f->cond);
		/* Non-blocking: a full pipe is readable already, which is all the loop needs. */
		if (write(f->fds[1], "", 1) < 0)
			(void)0;
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

int storage_flusher_start(struct storage_flusher *f, const struct storage_flusher_ops *ops,
			  void *arg, char *err, size_t errlen)
{
	memset(f, 0, sizeof(*f));
	f->ops = ops;
	f->arg = arg;
	if (pipe2(f->fds, O_CLOEXEC | O_NONBLOCK) != 0) {
		snprintf(err, errlen, "cannot create the flush thread's pipe: %s", strerror(errno));
		return PAXOS_E_IO;
	}
	int rc = pthread_mutex_init(&f->lock, NULL);
	if (rc == 0 && (rc = pthread_cond_init(&f->cond, NULL)) != 0)
		pthread_mutex_destroy(&f->lock);
	if (rc == 0) {
		/* Signals stay with the event loop's thread (libevent handles SIGTERM there). */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		rc = pthread_create(&f->thread, NULL, run, f);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc != 0) {
			pthread_cond_destroy(&f->cond);
			pthread_mutex_destroy(&f->lock);
		}
	}
	if (rc != 0) {
		snprintf(err, errlen, "cannot start the flush thread: %s", strerror(rc));
		close(f->fds[0]);
		close(f->fds[1]);
		return rc == ENOMEM || rc == EAGAIN ? PAXOS_E_NOMEM : PAXOS_E_IO;
	}
	f->started = true;
	return PAXOS_OK;
}

/* The running flush ended with rc after took microseconds. */
static void account(struct storage_flusher *f, int rc, uint64_t took, const char *err)
{
	f->progress.flushes++;
	f->progress.flush_us += took;
	f->progress.flushed_records += f->running_records;
	if (rc == PAXOS_OK)
		f->progress.durable = f->running;
	else
		f->failed = true;
	f->running = 0;
	f->running_records = 0;
	if (f->ops->finish)
		f->ops->finish(f->arg, rc, err);
}

/* Collects the running flush if it finished or, with wait, once it has. */
static void collect(struct storage_flusher *f, bool wait)
{
	if (!f->running)
		return;
	char err[FLUSHER_ERROR_MAX] = "";
	pthread_mutex_lock(&f->lock);
	while (wait && !f->finished)
		pthread_cond_wait(&f->cond, &f->lock);
	bool done = f->finished;
	int rc = f->result;
	uint64_t took = f->took_us;
	if (done && rc != PAXOS_OK)
		memcpy(err, f->error, sizeof(err));
	f->finished = false;
	pthread_mutex_unlock(&f->lock);
	if (done)
		account(f, rc, took, err);
}

/* Makes the commits not flushed yet the next flush's, on the thread (here: on the caller's).
 * Returns false when the backend could not hand them over (out of memory). */
static bool start_flush(struct storage_flusher *f, bool here)
{
	if (f->ops->prepare && !f->ops->prepare(f->arg))
		return false;
	f->running = f->progress.committed;
	f->running_records = f->records;
	f->records = 0;
	if (here) {
		char err[FLUSHER_ERROR_MAX] = "";
		uint64_t start = now_us();
		int rc = f->ops->flush(f->arg, err, sizeof(err));
		account(f, rc, now_us() - start, err);
		return true;
	}
	pthread_mutex_lock(&f->lock);
	f->job = true;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	return true;
}

int storage_flusher_commit(struct storage_flusher *f, uint64_t records, bool backlog)
{
	if (f->failed)
		return PAXOS_E_STORAGE;
	f->progress.committed++;
	f->records += records;
	return backlog ? storage_flusher_sync(f, true, NULL) : PAXOS_OK;
}

int storage_flusher_sync(struct storage_flusher *f, bool wait, struct paxos_storage_progress *p)
{
	/* Drained before collecting: a flush that ends after this writes a byte of its own. */
	char buf[64];
	while (read(f->fds[0], buf, sizeof(buf)) > 0)
		;
	collect(f, wait);
	int rc = f->failed ? PAXOS_E_STORAGE : PAXOS_OK;
	if (rc == PAXOS_OK && !f->running && f->progress.durable < f->progress.committed &&
	    !start_flush(f, wait) && wait)
		rc = PAXOS_E_NOMEM;
	if (rc == PAXOS_OK && f->failed)
		rc = PAXOS_E_STORAGE;
	if (!f->running) /* the bytes of flushes collected meanwhile: no wake-up for nothing */
		while (read(f->fds[0], buf, sizeof(buf)) > 0)
			;
	if (p)
		*p = f->progress;
	return rc;
}

int storage_flusher_fd(const struct storage_flusher *f)
{
	return f->fds[0];
}

void storage_flusher_stop(struct storage_flusher *f)
{
	if (!f->started)
		return;
	collect(f, true);
	pthread_mutex_lock(&f->lock);
	f->stop = true;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	close(f->fds[0]);
	close(f->fds[1]);
	f->started = false;
}
