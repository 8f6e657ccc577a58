/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pipelined commits (paxos/storage.h, sync): a commit returns before the device flush, so the
 * acceptor's datagrams that report on it are held (node_hold.c) until the storage says the
 * commit their messages' ready tags name is durable (node_acceptor_run): no promise or
 * accepted leaves ahead of its state, and a message that reports nothing stored (a hello)
 * does not wait. This file asks how far the commits are durable, when, and what is read
 * meanwhile. The storage's wake-up descriptor tells the loop when a flush on its thread
 * finished. Where flushes run: see on_thread.
 */
#include "log_line.h"
#include "parts.h"
#include "paxos_assert.h"

/* Asks the storage how far its commits are durable (waiting for all of them with wait), takes
 * its flush counters and sends what became durable. A failed flush stops the node. */
static void sync_storage(struct paxos_node *n, bool wait)
{
	if (n->failed) {
		node_hold_drop_all(n);
		return;
	}
	struct paxos_storage_progress p;
	int rc = n->storage->ops->sync(n->storage, wait, &p);
	if (rc != PAXOS_OK) {
		node_hold_drop_all(n); /* never sent: their state is not durable */
		event_del(n->commits.ev);
		node_fail(n, rc,
			  n->acceptor.serializer ? "serializer storage" : "acceptor storage");
		return;
	}
	PAXOS_ASSERT(p.durable >= n->commits.durable, "a durable commit stays durable");
	n->commits.durable = p.durable;
	struct paxos_counters *c = &n->role_counters[PAXOS_ROLE_ACCEPTOR];
	c->storage_flushes = p.flushes;
	c->storage_flush_records = p.flushed_records;
	c->storage_flush_us = p.flush_us;
	node_hold_release(n);
}

/*
 * Where a flush runs (storage-flush-thread). A lone acceptor (or serializer) flushes on its
 * loop at the end of a round, after reading everything that waits: what arrives during the
 * flush could only join the flush after it anyway, and handing each flush to the storage's
 * thread and back costs two thread wake-ups, which on the development machine cost more than
 * the flush they overlap. Beside a proposer or an application's learner the loop has other
 * work during a flush: there the storage's thread flushes (faster with replicas there;
 * docs/BENCHMARKS.md, pipelined group commit), and until the flush returns, the group the
 * acceptor commits is read lazily: once, when it returns, rather than waking the loop for each
 * datagram; a transport that cannot read that group lazily (unicast) delivers it as it
 * arrives.
 */
static bool on_thread(const struct paxos_node *n)
{
	switch (n->cfg.storage_flush_thread) {
	case PAXOS_FLUSH_THREAD_YES:
		return true;
	case PAXOS_FLUSH_THREAD_NO:
		return false;
	case PAXOS_FLUSH_THREAD_AUTO:
		break;
	}
	return n->proposer.core || n->learner.app.deliver;
}

bool node_durable_threaded(const struct paxos_node *n)
{
	return n->commits.ev && on_thread(n);
}

static enum paxos_group fed_group(const struct paxos_node *n)
{
	return n->acceptor.serializer ? PAXOS_GROUP_SUBMIT : PAXOS_GROUP_ACCEPTORS;
}

static bool waiting(struct paxos_node *n)
{
	return n->storage->ops->committed(n->storage) > n->commits.durable;
}

/* Reads what waits on the group the acceptor commits: each read one batch, one commit. */
static void read_waiting(struct paxos_node *n)
{
	size_t batch = n->net.transport->ops->batch(n->net.transport);
	for (int i = 0; i < DURABLE_READS && !n->failed; i++)
		if (n->net.transport->ops->read(n->net.transport, fed_group(n)) < batch)
			break;
}

static void read_lazily(struct paxos_node *n, bool lazy)
{
	if (n->commits.lazy != lazy) {
		n->commits.lazy = lazy;
		node_acceptor_reading(n);
	}
}

void node_durable_after_batch(struct paxos_node *n)
{
	if (!n->commits.ev || n->failed)
		return;
	if (!on_thread(n)) {
		if (waiting(n))
			node_schedule_flush(n); /* flushed at the round's end */
		return;
	}
	if (waiting(n))
		sync_storage(n, false); /* starts a flush for it unless one runs */
	if (!n->failed)
		read_lazily(n, waiting(n));
}

void node_durable_round_end(struct paxos_node *n)
{
	if (!n->commits.ev || n->failed || on_thread(n) || !waiting(n))
		return;
	read_waiting(n);
	sync_storage(n, true);
}

void node_durable_poll(struct paxos_node *n)
{
	if (!n->commits.ev || n->failed)
		return;
	if (!on_thread(n)) {
		if (waiting(n))
			node_schedule_flush(n);
		return;
	}
	sync_storage(n, false);
	if (n->commits.lazy && !n->failed)
		read_waiting(n);
	if (!n->failed)
		read_lazily(n, waiting(n));
}

static void on_durable(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	node_durable_poll(arg);
}

int node_durable_init(struct paxos_node *n, struct paxos_storage *st)
{
	if (!paxos_storage_pipelined(st))
		return PAXOS_OK;
	n->commits.ev =
	    event_new(n->base, st->ops->sync_fd(st), EV_READ | EV_PERSIST, on_durable, n);
	if (!n->commits.ev || event_add(n->commits.ev, NULL) != 0) {
		node_set_error(n, "cannot add the storage's flushes to the event loop");
		return PAXOS_E_NOMEM;
	}
	struct paxos_storage_progress p;
	if (st->ops->sync(st, false, &p) != PAXOS_OK) {
		node_set_error(n, "storage: %s", paxos_storage_error(st));
		return PAXOS_E_STORAGE;
	}
	n->commits.durable = p.durable;
	return PAXOS_OK;
}

void node_durable_backlog(struct paxos_node *n)
{
	if (n->hold.count > HELD_SOFT_MAX)
		sync_storage(n, true);
}

void node_durable_finish(struct paxos_node *n)
{
	if (n->commits.ev)
		sync_storage(n, true);
}
