/*
 * The node's acceptor: how it joins (its incarnation, recovery when it starts without its
 * earlier state, the floor and fence kept beside a durable store) and what the node does with
 * the acceptor's results (a duplicate stops the process, a finished recovery is logged and
 * kept, a storage failure is fatal).
 */
#include "log_line.h"
#include "node_internal.h"

#include <paxos/storage_backends.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "recovery_fence.h"

/* Proposers that never answer a recovering acceptor are waited for this long (acceptor
 * ticks): by then none of their datagrams from before its start can still be on the way. */
#define RECOVERY_WAIT_MS 2000u

static uint64_t wall_clock_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/*
 * Hellos with this start's incarnation, and recovery when the acceptor starts without
 * earlier state: volatile storage, or a store with nothing in it (a new or --fresh one, or
 * one that lost its disk: the same to us). A durable store that recovered before keeps its
 * floor and fence beside it.
 */
int node_join_acceptors(struct paxos_node *n, uint32_t id, struct paxos_storage *st)
{
	bool memory = strcmp(n->cfg.storage, "memory") == 0;
	bool empty = st->ops->highest_accepted(st) == 0 && st->ops->trim_iid(st) == 0;
	struct paxos_acceptor_membership m = {
	    .acceptors = n->cfg.acceptors,
	    .proposers = n->cfg.proposers,
	    .incarnation = wall_clock_us(),
	    .recovery_ticks = RECOVERY_WAIT_MS / n->cfg.acceptor_repeat_ms + 1,
	};
	char err[512];
	if (!memory &&
	    paxos_storage_dir(&n->cfg, id, n->store_dir, sizeof(n->store_dir)) == PAXOS_OK &&
	    paxos_recovery_fence_read(n->store_dir, &m.floor, &m.fence, err, sizeof(err)) !=
		PAXOS_OK) {
		node_set_error(n, "acceptor %u: %s", id, err);
		return PAXOS_E_IO;
	}
	/* A store that recovered before and accepted nothing since is still that store: its
	 * promises are in it and its fence beside it (--fresh deletes both). */
	m.amnesiac = memory || (empty && m.floor == 0 && m.fence == 0);
	if (paxos_acceptor_join(n->acceptor, &m) != PAXOS_OK) {
		node_set_error(n, "acceptor %u: cannot join %u acceptors and %u proposers", id,
			       m.acceptors, m.proposers);
		return PAXOS_E_INVALID;
	}
	n->acceptor_recovering = m.amnesiac;
	n->acceptor_incarnation = m.incarnation;
	if (m.amnesiac)
		paxos_logf(
		    PAXOS_LOG_INFO,
		    "paxos: acceptor %u: started without earlier state (incarnation %llu): "
		    "recovering, no votes until the other acceptors and the proposers answer",
		    id, (unsigned long long)m.incarnation);
	else if (m.floor || m.fence)
		paxos_logf(PAXOS_LOG_INFO,
			   "paxos: acceptor %u: votes only above instance %llu and ballot %llu, as "
			   "its recovery set (%s/recovery)",
			   id, (unsigned long long)m.floor, (unsigned long long)m.fence,
			   n->store_dir);
	return PAXOS_OK;
}

void node_acceptor_status(struct paxos_node *n, int rc)
{
	uint32_t id = n->role_id[PAXOS_ROLE_ACCEPTOR];
	if (rc == PAXOS_E_DUPLICATE) {
		node_set_error(
		    n,
		    "acceptor %u: another acceptor %u (incarnation %llu) runs since before "
		    "this one (incarnation %llu) started",
		    id, id, (unsigned long long)paxos_acceptor_duplicate(n->acceptor),
		    (unsigned long long)n->acceptor_incarnation);
		n->failed = rc;
		paxos_logf(PAXOS_LOG_ERROR, "paxos: fatal: %s; this one stops", n->error);
		event_base_loopbreak(n->base);
		return;
	}
	if (rc != PAXOS_OK) {
		node_fail(n, rc, "acceptor storage");
		return;
	}
	const struct paxos_counters *c = &n->role_counters[PAXOS_ROLE_ACCEPTOR];
	/* A newer duplicate: it stops by itself, this one says so. (An older one makes this one
	 * stop: see above.) */
	if (c->duplicate_acceptors > n->duplicates_logged &&
	    paxos_acceptor_duplicate(n->acceptor) > n->acceptor_incarnation) {
		/* At most once a second's worth of hellos: one line per newer duplicate start. */
		if (n->duplicates_logged == 0 ||
		    c->duplicate_acceptors - n->duplicates_logged >= 10)
			paxos_logf(
			    PAXOS_LOG_INFO,
			    "paxos: acceptor %u: another acceptor %u (incarnation %llu) started "
			    "while this one runs; the newer one stops",
			    id, id, (unsigned long long)paxos_acceptor_duplicate(n->acceptor));
		n->duplicates_logged = c->duplicate_acceptors;
	}
	if (!n->acceptor_recovering || paxos_acceptor_recovering(n->acceptor))
		return;
	n->acceptor_recovering = false;
	paxos_iid floor = paxos_acceptor_floor(n->acceptor);
	paxos_ballot fence = paxos_acceptor_fence(n->acceptor);
	paxos_logf(PAXOS_LOG_INFO,
		   "paxos: acceptor %u: recovered: votes again above instance %llu and ballot %llu",
		   id, (unsigned long long)floor, (unsigned long long)fence);
	char err[512];
	if (n->store_dir[0] &&
	    paxos_recovery_fence_write(n->store_dir, floor, fence, err, sizeof(err)) != PAXOS_OK)
		node_fail(n, PAXOS_E_IO, err);
}
