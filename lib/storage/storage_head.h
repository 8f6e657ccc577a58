/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every storage backend keeps first in its state, and the operations that only read it:
 * one implementation of trim_iid, highest_accepted and error for all, and of committed, sync
 * and sync_fd for the backends with pipelined commits. Internal to libpaxos.
 */
#ifndef PAXOS_STORAGE_HEAD_H
#define PAXOS_STORAGE_HEAD_H

#include <paxos/storage.h>

#include "flusher.h"

struct storage_head {
	struct paxos_storage base; /* first, so the storage pointer is the container */
	paxos_iid trim;
	paxos_iid highest_accepted;
	bool in_batch;    /* between begin and commit */
	bool failed;      /* a durable store dropped a batch: it refuses everything from now on */
	char error[1024]; /* why the last failed call failed */
	/* Pipelined commits (paxos/storage.h): the flush thread, never started otherwise. */
	struct storage_flusher flusher;
};

/* begin for a backend that batches: refused after a failure, and within a batch. */
int storage_head_begin(struct paxos_storage *st);
/* What commit does first: PAXOS_OK when the batch may commit (it is over), else the refusal. */
int storage_head_end_batch(struct storage_head *h);
paxos_iid storage_head_trim_iid(struct paxos_storage *st);
paxos_iid storage_head_highest_accepted(struct paxos_storage *st);
const char *storage_head_error(struct paxos_storage *st);
uint64_t storage_head_committed(struct paxos_storage *st);
int storage_head_sync(struct paxos_storage *st, bool wait, struct paxos_storage_progress *p);
int storage_head_sync_fd(struct paxos_storage *st);

#endif
