/* SPDX-License-Identifier: BSD-3-Clause */
/* The operations every backend shares (see storage_head.h). */
#include "storage_head.h"

static struct storage_head *head(struct paxos_storage *st)
{
	return (struct storage_head *)st;
}

int storage_head_begin(struct paxos_storage *st)
{
	struct storage_head *h = head(st);
	if (h->failed)
		return PAXOS_E_STORAGE;
	if (h->in_batch)
		return PAXOS_E_INVALID;
	h->in_batch = true;
	return PAXOS_OK;
}

int storage_head_end_batch(struct storage_head *h)
{
	if (h->failed)
		return PAXOS_E_STORAGE;
	h->in_batch = false;
	return PAXOS_OK;
}

paxos_iid storage_head_trim_iid(struct paxos_storage *st)
{
	return head(st)->trim;
}

paxos_iid storage_head_highest_accepted(struct paxos_storage *st)
{
	return head(st)->highest_accepted;
}

const char *storage_head_error(struct paxos_storage *st)
{
	return head(st)->error;
}

uint64_t storage_head_committed(struct paxos_storage *st)
{
	return head(st)->flusher.progress.committed;
}

int storage_head_sync(struct paxos_storage *st, bool wait, struct paxos_storage_progress *p)
{
	struct storage_head *h = head(st);
	int rc = storage_flusher_sync(&h->flusher, wait, p);
	return h->failed ? PAXOS_E_STORAGE : rc;
}

int storage_head_sync_fd(struct paxos_storage *st)
{
	return storage_flusher_fd(&head(st)->flusher);
}
