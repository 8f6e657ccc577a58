/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who may make the acceptors trim. A trim drops instances for good: a learner started later
 * can no longer learn them from the acceptors. So it must come from the application (thesis
 * 3.4.1: snapshot(i)), never from whoever can send a datagram.
 *
 * With auth-key-file a trim's tag proves a key holder sent it, and any node's trim is taken
 * (the acceptor still cuts it to what is known decided, paxos_acceptor_trim_limit). Without
 * a key nothing tells a forged trim from the application's but the address of a member (a
 * header is only a claim, node_screen.c "One address per member"). So a node that hosts an
 * acceptor sends its application's trims as that acceptor, from the address that speaks for
 * it, and each acceptor keeps the latest trim each acceptor of the set asked for and applies
 * the highest instance a quorum of the set asked for: a forger needs the ids of a quorum of
 * acceptors that are not running (or spoofed source addresses) to move it, as for every
 * other quorum-sized lie. Trims from any other sender are refused, counted (trims_refused)
 * and logged.
 */
#include "log_line.h"
#include "parts.h"

#include "clock.h"

/* The acceptors whose trims count, one bit per id: the set in force where the node's learner
 * is (membership-alpha), else every acceptor of paxos.conf (of this partition). */
static uint32_t trimmers(const struct paxos_node *n)
{
	if (n->membership && n->learner.core)
		return paxos_membership_members(n->membership,
						paxos_learner_next_iid(n->learner.core));
	return n->cfg.acceptors >= 32 ? UINT32_MAX : (1u << n->cfg.acceptors) - 1;
}

/* The highest instance that a quorum of the set asked to trim up to (0: none yet). */
static paxos_iid quorum_point(const struct paxos_node *n)
{
	uint32_t set = trimmers(n), size = (uint32_t)__builtin_popcount(set);
	uint32_t quorum = size / 2 + 1;
	paxos_iid asked[PAXOS_MAX_ACCEPTORS];
	uint32_t count = 0;
	for (uint32_t id = 0; id < PAXOS_MAX_ACCEPTORS && id < 32; id++)
		if (set >> id & 1)
			asked[count++] = n->trims.asked[id];
	if (count < quorum)
		return 0;
	/* The quorum-th highest: a few dozen entries at most, a selection by hand. */
	for (uint32_t i = 0; i < quorum; i++)
		for (uint32_t j = i + 1; j < count; j++)
			if (asked[j] > asked[i]) {
				paxos_iid t = asked[i];
				asked[i] = asked[j];
				asked[j] = t;
			}
	return asked[quorum - 1];
}

/* Says (rate-limited) that the acceptor cuts this trim to what is known decided. */
static void note_limit(struct paxos_node *n, const struct paxos_header *from, paxos_iid iid)
{
	paxos_iid limit = paxos_acceptor_trim_limit(n->acceptor.core);
	if (iid > limit)
		node_refused(n, from,
			     "trim to %llu cut to %llu: later instances are not known decided",
			     (unsigned long long)iid, (unsigned long long)limit);
}

bool node_trim_screen(struct paxos_node *n, const struct paxos_header *from,
		      struct paxos_message *m)
{
	if (m->type != PAXOS_MSG_TRIM || (!n->acceptor.core && !n->acceptor.serializer))
		return true; /* nothing here trims: a learner reading the group */
	if (n->net.auth) {
		if (n->acceptor.core)
			note_limit(n, from, m->u.trim.iid);
		return true;
	}
	if (from->role != PAXOS_ROLE_ACCEPTOR || from->sender_id >= 32 ||
	    !(trimmers(n) >> from->sender_id & 1) || !n->acceptor.core) {
		n->net.counters.trims_refused++;
		node_refused(n, from,
			     "trim to %llu: without auth-key-file the acceptors take trims only "
			     "from the nodes of their acceptors, a quorum of them",
			     (unsigned long long)m->u.trim.iid);
		return false;
	}
	n->trims.asked[from->sender_id] = m->u.trim.iid;
	paxos_iid point = quorum_point(n);
	if (point == 0)
		return false; /* kept; no quorum asked for anything yet */
	note_limit(n, from, point);
	m->u.trim.iid = point;
	return true;
}

int paxos_node_trim(struct paxos_node *n, paxos_iid iid)
{
	if (iid == 0) {
		node_set_error(n, "paxos_node_trim: instances start at 1");
		return PAXOS_E_INVALID;
	}
	struct paxos_message m = {.type = PAXOS_MSG_TRIM, .u.trim = {iid}};
	if (n->net.auth || !n->acceptor.core) {
		if (!n->net.auth && !n->trims.unkeyed_said) {
			n->trims.unkeyed_said = true;
			paxos_logf(
			    PAXOS_LOG_WARNING,
			    "paxos: trim requests of this node are refused: without "
			    "auth-key-file the acceptors take trims only from nodes that host "
			    "an acceptor");
		}
		node_emit(&n->net.out[PAXOS_ROLE_CLIENT], PAXOS_GROUP_ACCEPTORS, &m);
		return PAXOS_OK;
	}
	/* As its acceptor, from its address. Its own acceptor counts the request now, and trims
	 * when a request reaches it (its own, looped back, or another's): never from inside the
	 * application's callback, which may run in the middle of the node's round. */
	node_emit(&n->net.out[PAXOS_ROLE_ACCEPTOR], PAXOS_GROUP_ACCEPTORS, &m);
	uint32_t id = n->role_id[PAXOS_ROLE_ACCEPTOR];
	if (id < PAXOS_MAX_ACCEPTORS)
		n->trims.asked[id] = iid;
	return PAXOS_OK;
}
