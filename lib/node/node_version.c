/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which wire version the node speaks, so that a cluster upgrades one process at a time
 * (docs/operating.md, "Upgrades"). A node reads its own version and the one before
 * (lib/net/codec.h); it speaks the one before while it hears a node that speaks only that,
 * and its own again once none was heard for VERSION_HOLD_US.
 *
 * One datagram reaches a whole group, and some members of a group send nothing back (a
 * learner that misses nothing), so the choice is the node's, not a peer's: a node that heard an
 * older node itself speaks down and says so in its headers (PAXOS_WIRE_DOWN), and a node that
 * hears such a datagram speaks down too (PAXOS_WIRE_DOWN_RELAYED), which goes no further. Two
 * hops carry it from any sender to any receiver (a client's values reach the proposers, whose
 * accepts reach the acceptors, whose votes reach the learners); relayed speech is never
 * relayed, so once the older nodes are gone every node speaks its own version again within
 * two holds.
 *
 * The cost on the path of a value: a comparison per datagram read; the rest runs only for a
 * datagram of the older version, and the choice once per read and per tick (the learner's,
 * the acceptor's and the election's).
 */
#include "log_line.h"
#include "parts.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* How long a node of the older version counts as live after its last datagram: several of
 * the periodic messages (acceptor states, heartbeats, hellos) every role sends. */
#define VERSION_HOLD_US 5000000

/* Where a message carries the log's generation, by type (offsetof into struct paxos_message,
 * 0: none), and whether it is the sending acceptor's own rather than the log it serves. */
#define AT(member) offsetof(struct paxos_message, u.member.generation)
static const size_t generation_at[PAXOS_MSG_TYPE_MAX + 1] = {
    [PAXOS_MSG_ACCEPTED] = AT(accepted),         [PAXOS_MSG_ACCEPTOR_STATE] = AT(acceptor_state),
    [PAXOS_MSG_TRIMMED] = AT(trimmed),           [PAXOS_MSG_ACCEPTOR_HELLO] = AT(acceptor_hello),
    [PAXOS_MSG_RECOVER_INFO] = AT(recover_info),
};
#undef AT

/* What an older datagram lacks is the log's generation: taken as the log this node serves,
 * so that nothing of a node that knows no generations is refused as another log's. An older
 * node cannot serve a new log: none begins while one is live (paxos_acceptor_set_old_peers). */
static void fill_generation(struct paxos_node *n, struct paxos_message *m)
{
	if ((unsigned)m->type > PAXOS_MSG_TYPE_MAX || !generation_at[m->type])
		return;
	uint64_t served = n->learner.core    ? paxos_learner_generation(n->learner.core)
			  : n->acceptor.core ? paxos_acceptor_generation(n->acceptor.core)
					     : 0;
	uint64_t own = n->acceptor.core ? paxos_acceptor_generation(n->acceptor.core) : served;
	bool owns = m->type == PAXOS_MSG_ACCEPTOR_HELLO || m->type == PAXOS_MSG_RECOVER_INFO;
	uint64_t g = owns ? own : served;
	memcpy((char *)m + generation_at[m->type], &g, sizeof(g));
}

void node_version_heard(struct paxos_node *n, const struct paxos_header *h,
			const struct paxos_rx_datagram *d, struct paxos_message *msgs, size_t count,
			paxos_time now)
{
	for (size_t k = 0; k < count; k++)
		fill_generation(n, &msgs[k]);
	struct node_wire *w = &n->net.wire;
	if (h->speech == PAXOS_WIRE_DOWN_RELAYED)
		return;
	bool old = h->speech == PAXOS_WIRE_NATIVE;
	/* Named for the log line only when the node is about to speak down for it. */
	if (w->spoken == PAXOS_WIRE_VERSION && w->old_until <= now && w->relay_until <= now) {
		char from[64];
		n->net.transport->ops->sender_name(n->net.transport, d->from, from, sizeof(from));
		snprintf(w->who, sizeof(w->who), "%s %u at %s %s", node_role_name(h->role),
			 h->sender_id, from,
			 old ? "is of the release before"
			     : "speaks it for a node of the release before");
	}
	if (old)
		w->old_until = now + VERSION_HOLD_US;
	else
		w->relay_until = now + VERSION_HOLD_US;
}

void node_version_choose(struct paxos_node *n, paxos_time now)
{
	struct node_wire *w = &n->net.wire;
	bool old = w->old_until > now, relay = w->relay_until > now;
	uint32_t version = old || relay ? PAXOS_WIRE_VERSION - 1 : PAXOS_WIRE_VERSION;
	enum paxos_wire_speech speech = old     ? PAXOS_WIRE_DOWN
					: relay ? PAXOS_WIRE_DOWN_RELAYED
						: PAXOS_WIRE_NATIVE;
	if (n->acceptor.core && w->old_peers_told != (version != PAXOS_WIRE_VERSION)) {
		w->old_peers_told = version != PAXOS_WIRE_VERSION;
		paxos_acceptor_set_old_peers(n->acceptor.core, w->old_peers_told);
	}
	if (version == w->spoken && speech == w->speech)
		return;
	if (version != w->spoken && version != PAXOS_WIRE_VERSION)
		paxos_logf(PAXOS_LOG_WARNING,
			   "paxos%s: speaking wire version %u: %s; no new log begins until every "
			   "node speaks version %u",
			   n->partition_label, version, w->who, PAXOS_WIRE_VERSION);
	else if (version != w->spoken)
		paxos_logf(PAXOS_LOG_INFO,
			   "paxos%s: speaking wire version %u again: no node of version %u heard "
			   "for %d s",
			   n->partition_label, version, w->spoken, VERSION_HOLD_US / 1000000);
	bool changed = version != w->spoken;
	node_speak(n, version, speech);
	/* A learning acceptor reads its learners group lazily while the votes come there. */
	if (changed && n->learner.core) {
		int rc = node_set_learner_reading(n);
		if (rc != PAXOS_OK)
			node_fail(n, rc, "learner");
	}
}
