/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proposer's epochs on a node. The proposer core takes a later epoch without waiting for
 * storage and reports it (paxos_proposer_options.epoch_due), before it emits any ballot of
 * it; each proposer datagram is tagged with the epoch taken when its messages were emitted
 * (node_io.c, node_emit). The node stores the epoch in the proposer's epoch store at the end of
 * the round, before the datagrams that wait for it are handed to the transport, so that no
 * ballot leaves before its epoch is durable. While the store fails, those datagrams are
 * dropped: to the others it is a crashed proposer (another takes over), until a later round
 * stores the epoch after all.
 */
#include "log_line.h"
#include "node_internal.h"

/* paxos_proposer_options.epoch_due: only noted here, during the core's step. The datagram
 * being handled is what asked for it: a forged reject shows up in the log line. */
void node_epoch_due(void *arg, uint32_t epoch)
{
	struct paxos_node *n = arg;
	if (epoch <= n->epoch_due)
		return;
	if (!node_epoch_pending(n))
		n->epoch_cause = n->rx_header;
	n->epoch_due = epoch;
}

bool node_epoch_pending(const struct paxos_node *n)
{
	return n->epoch_due > n->epoch_durable;
}

bool node_epoch_store(struct paxos_node *n)
{
	uint32_t id = n->role_id[PAXOS_ROLE_PROPOSER];
	if (n->epochs->ops->store(n->epochs, n->epoch_due) != PAXOS_OK) {
		if (!n->epoch_failing)
			paxos_logf(
			    PAXOS_LOG_WARNING,
			    "paxos: proposer %u: cannot make epoch %u durable, its datagrams "
			    "are dropped until it is: %s",
			    id, n->epoch_due, paxos_epoch_store_error(n->epochs));
		n->epoch_failing = true;
		return false;
	}
	const struct paxos_header *from = &n->epoch_cause;
	if (from->role < PAXOS_ROLE_COUNT)
		paxos_logf(PAXOS_LOG_INFO,
			   "paxos: proposer %u: epoch %u -> %u, to beat a ballot (datagram from "
			   "%s %u)",
			   id, n->epoch_durable, n->epoch_due, node_role_name(from->role),
			   from->sender_id);
	else
		paxos_logf(PAXOS_LOG_INFO, "paxos: proposer %u: epoch %u -> %u (rounds used up)",
			   id, n->epoch_durable, n->epoch_due);
	n->epoch_durable = n->epoch_due;
	n->epoch_failing = false;
	return true;
}
