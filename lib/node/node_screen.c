/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the node refuses of a decoded datagram before any core sees it, and saying so: a
 * message that names an acceptor the datagram's header does not come from (one datagram must
 * not speak for several acceptors) or a proposer it does not come from, a datagram from another
 * address than the one that speaks for its sender (origin.h), and a ballot beyond any epoch a
 * proposer can reach. Each refusal is counted, and logged with the sender at a bounded rate: a
 * flood of forged datagrams must not become a flood of log lines.
 */
#include "log_line.h"
#include "parts.h"

#include "clock.h"

#include <stdarg.h>
#include <stdio.h>

/* Whether one more line fits this period's budget (NODE_REFUSALS_PER_PERIOD); the lines
 * left out are counted and summed up when the next period starts. */
static bool log_budget(struct paxos_node *n)
{
	paxos_time now = paxos_now();
	if (now < n->net.screen.refusals_since ||
	    now - n->net.screen.refusals_since >= NODE_REFUSAL_PERIOD) {
		if (n->net.screen.refusals_unlogged)
			paxos_logf(PAXOS_LOG_WARNING, "paxos: %llu more refusals not logged",
				   (unsigned long long)n->net.screen.refusals_unlogged);
		n->net.screen.refusals_since = now;
		n->net.screen.refusals_logged = 0;
		n->net.screen.refusals_unlogged = 0;
	}
	if (n->net.screen.refusals_logged >= NODE_REFUSALS_PER_PERIOD) {
		n->net.screen.refusals_unlogged++;
		return false;
	}
	n->net.screen.refusals_logged++;
	return true;
}

void node_refused(struct paxos_node *n, const struct paxos_header *from, const char *fmt, ...)
{
	if (!log_budget(n))
		return;
	char sender[64];
	snprintf(sender, sizeof(sender), " (datagram from %s %u)", node_role_name(from->role),
		 from->sender_id);
	va_list ap;
	va_start(ap, fmt);
	paxos_vlogf(PAXOS_LOG_WARNING, "paxos: refused: ", sender, fmt, ap);
	va_end(ap);
}

/* What the acceptor core will cut down (and count) is said here, where the sender is known. */
static void note_acceptor_limits(struct paxos_node *n, const struct paxos_header *from,
				 const struct paxos_message *m)
{
	/* Trims: node_trim.c, which may change them first. */
	if (m->type == PAXOS_MSG_REPEAT) {
		n->net.rx.repeat_from = *from;
		if (m->u.repeat.to - m->u.repeat.from >= n->cfg.repeat_batch)
			node_refused(n, from, "repeat of instances %llu..%llu cut to %u instances",
				     (unsigned long long)m->u.repeat.from,
				     (unsigned long long)m->u.repeat.to, n->cfg.repeat_batch);
	}
}

void node_note_deferred_repeats(struct paxos_node *n, uint64_t before)
{
	uint64_t now = n->role_counters[PAXOS_ROLE_ACCEPTOR].repeats_deferred;
	if (now > before)
		node_refused(n, &n->net.rx.repeat_from,
			     "%llu repeat requests left unanswered: the repeat budget until the "
			     "next acceptor tick is spent",
			     (unsigned long long)(now - before));
}

void node_screen_origin(struct paxos_node *n, const struct paxos_header *from,
			const struct paxos_rx_datagram *d, paxos_time now)
{
	struct origin was;
	enum origin_verdict v =
	    origin_check(&n->net.origins, from->role, from->sender_id, d->origin, now, &was);
	n->net.rx.impostor = v == ORIGIN_IMPOSTOR;
	if (v == ORIGIN_SAME || (v == ORIGIN_NEW && was.address == 0))
		return;
	char where[64];
	n->net.transport->ops->sender_name(n->net.transport, d->from, where, sizeof(where));
	if (v == ORIGIN_IMPOSTOR)
		node_refused(
		    n, from,
		    "from %s, while another address speaks for that %s (heard %llu ms ago)", where,
		    node_role_name(from->role),
		    (unsigned long long)(now > was.heard ? (now - was.heard) / 1000 : 0));
	else if (log_budget(n))
		paxos_logf(
		    PAXOS_LOG_INFO,
		    "paxos: %s %u speaks from %s now (its previous address silent for %llu ms)",
		    node_role_name(from->role), from->sender_id, where,
		    (unsigned long long)((now - was.heard) / 1000));
}

/* The member a message says it comes from: the acceptor it names, a recovery answer's sender,
 * or the proposer whose ballot it carries. One datagram speaks for its header's sender only. */
static bool named_sender(const struct paxos_message *m, enum paxos_role *role, uint32_t *id)
{
	if (m->type == PAXOS_MSG_RECOVER_INFO) {
		*role = m->u.recover_info.role;
		*id = m->u.recover_info.sender_id;
		return true;
	}
	*role = PAXOS_ROLE_ACCEPTOR;
	if (paxos_msg_acceptor(m, id))
		return true;
	*role = PAXOS_ROLE_PROPOSER;
	return paxos_msg_proposer(m, id);
}

bool node_screen(struct paxos_node *n, const struct paxos_header *from,
		 const struct paxos_message *m)
{
	/* A member's hellos pass: they are how two processes with one id find each other. */
	if (n->net.rx.impostor && m->type != PAXOS_MSG_ACCEPTOR_HELLO) {
		n->net.counters.forged_senders++;
		return false;
	}
	if (!paxos_msg_plausible(m)) {
		n->net.counters.implausible_ballots++;
		node_refused(n, from, "%s with a ballot beyond epoch %u",
			     paxos_msg_type_name(m->type), PAXOS_PLAUSIBLE_EPOCHS - 1);
		return false;
	}
	enum paxos_role role = PAXOS_ROLE_COUNT;
	uint32_t id = 0;
	if (named_sender(m, &role, &id) && (from->role != role || from->sender_id != id)) {
		n->net.counters.forged_senders++;
		node_refused(n, from, "%s naming %s %u", paxos_msg_type_name(m->type),
			     node_role_name(role), id);
		return false;
	}
	if (n->membership && role == PAXOS_ROLE_ACCEPTOR && !node_membership_counts(n, m, id))
		return false;
	if (n->acceptor.core)
		note_acceptor_limits(n, from, m);
	return true;
}
