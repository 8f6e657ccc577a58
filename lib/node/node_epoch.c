/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proposer's epochs on a node. The proposer core takes a later epoch without waiting for
 * storage and returns it as data (struct paxos_proposer_ready); each message it emits depends
 * on the epoch it is in as it emits it, and each proposer datagram is tagged with the highest
 * of its messages' (node_io.c, node_emit). The node stores the ready's epoch in the proposer's
 * epoch store at the end of the round, before the datagrams that wait for it are handed to the
 * transport, so that no ballot leaves before its epoch is durable, and advances the proposer.
 * While the store fails, those datagrams are dropped: to the others it is a crashed proposer
 * (another takes over), until a later round stores the epoch after all.
 */
#include "log_line.h"
#include "parts.h"

uint64_t node_epoch_tag(struct paxos_node *n)
{
	uint32_t epoch = paxos_proposer_epoch(n->proposer.core);
	if (epoch > n->proposer.epoch.durable && !n->proposer.epoch.cause_noted) {
		/* The datagram being handled made the core take it: a forged reject shows up in
		 * the log line. */
		n->proposer.epoch.cause = n->net.rx.header;
		n->proposer.epoch.cause_noted = true;
	}
	return epoch;
}

bool node_epoch_pending(const struct paxos_node *n)
{
	struct paxos_proposer_ready rd;
	return n->proposer.core && paxos_proposer_ready(n->proposer.core, &rd);
}

bool node_epoch_store(struct paxos_node *n)
{
	uint32_t id = n->role_id[PAXOS_ROLE_PROPOSER];
	struct paxos_proposer_ready rd;
	if (!paxos_proposer_ready(n->proposer.core, &rd))
		return true;
	if (n->proposer.epoch.store->ops->store(n->proposer.epoch.store, rd.epoch) != PAXOS_OK) {
		if (!n->proposer.epoch.failing)
			paxos_logf(
			    PAXOS_LOG_WARNING,
			    "paxos: proposer %u: cannot make epoch %u durable, its datagrams "
			    "are dropped until it is: %s",
			    id, rd.epoch, paxos_epoch_store_error(n->proposer.epoch.store));
		n->proposer.epoch.failing = true;
		return false;
	}
	const struct paxos_header *from = &n->proposer.epoch.cause;
	if (n->proposer.epoch.cause_noted && from->role < PAXOS_ROLE_COUNT)
		paxos_logf(PAXOS_LOG_INFO,
			   "paxos: proposer %u: epoch %u -> %u, to beat a ballot (datagram from "
			   "%s %u)",
			   id, n->proposer.epoch.durable, rd.epoch, node_role_name(from->role),
			   from->sender_id);
	else
		paxos_logf(PAXOS_LOG_INFO, "paxos: proposer %u: epoch %u -> %u (rounds used up)",
			   id, n->proposer.epoch.durable, rd.epoch);
	paxos_proposer_advance(n->proposer.core, rd.epoch);
	n->proposer.epoch.durable = rd.epoch;
	n->proposer.epoch.cause_noted = false;
	n->proposer.epoch.failing = false;
	return true;
}
