/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node's proposer: adding it with its epoch store and election, acting on the election's
 * result (leadership changes, thesis 4.7), the lean followers of a partitions group, and a
 * leader's learner taking its own accepts. The other roles' set-up is node.c's.
 */
#include <paxos/epoch.h>
#include <stdio.h>
#include <stdlib.h>
#include <paxos/options.h>
#include "log_line.h"
#include "parts.h"

#include "clock.h"
#include "config_fields.h"

/* The lowest instance the node's learner has not delivered: where a new leader starts. */
static paxos_iid first_undelivered(const struct paxos_node *n)
{
	paxos_iid first = n->learner.core ? paxos_learner_next_iid(n->learner.core) : 0;
	return first ? first : 1;
}

/* Before a tick puts a proposer out for want of a quorum: a process that stalled (descheduled
 * on a busy host, stopped) finds the acceptors' state of meanwhile waiting unread on the
 * proposers group, and the timer may run first. What waits is read, then judged. */
static void quorum_read(struct paxos_node *n)
{
	if (!paxos_election_eligible(n->proposer.election) ||
	    !paxos_election_quorum_lost(n->proposer.election, paxos_now()))
		return;
	size_t batch = n->net.transport->ops->batch(n->net.transport);
	for (int k = 0;
	     k < 64 && !n->failed &&
	     n->net.transport->ops->read(n->net.transport, PAXOS_GROUP_PROPOSERS) >= batch;
	     k++)
		;
}

static void on_election_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct paxos_node *n = arg;
	node_version_choose(n, paxos_now());
	if (n->proposer.election) {
		quorum_read(n);
		paxos_iid next = first_undelivered(n);
		node_membership_election(n, next);
		paxos_election_tick(n->proposer.election, paxos_now(), next,
				    &n->net.out[PAXOS_ROLE_PROPOSER].emitter);
		node_election_run(n);
	}
}

/*
 * A leader's learner needs the values of the leader's own accepts, which reach it as a copy
 * of each 2a datagram that multicast loops back to its acceptors-group socket: a receive, an
 * authentication check and a decode per datagram for bytes the process just built (the
 * leader's price per value above the serializer's, docs/BENCHMARKS.md). While it leads, the
 * learner takes each accept as the proposer emits it (node_emit) and the group is left
 * (ignored); values another proposer got chosen meanwhile come by the learner's repeats, as any
 * lost 2a does. Multicast, one partition, a node without an acceptor or a serializer (they
 * read the group) and a fixed acceptor set (the group carries the configuration queries).
 */
static bool own_accepts_allowed(const struct paxos_node *n)
{
	return n->cfg.transport == PAXOS_TRANSPORT_MULTICAST && n->cfg.partitions == 1 &&
	       n->proposer.core && n->learner.core && !n->acceptor.core &&
	       !n->acceptor.serializer && !n->cfg.membership_alpha &&
	       n->net.joined[PAXOS_GROUP_ACCEPTORS];
}

void node_own_accepts(struct paxos_node *n, bool leading)
{
	if (n->proposer.own_accepts == leading || (leading && !own_accepts_allowed(n)))
		return;
	n->proposer.own_deferred_head = n->proposer.own_deferred_count = 0;
	if (leading && !n->proposer.own_deferred) {
		/* Each live instance's accept, and a retry of each, in one learner run at most. */
		uint32_t cap = 2 * n->cfg.proposer_window;
		n->proposer.own_deferred = calloc(cap, sizeof(*n->proposer.own_deferred));
		if (!n->proposer.own_deferred)
			return; /* the acceptors group is read as before */
		n->proposer.own_deferred_cap = cap;
	}
	if (n->net.transport->ops->set_lazy(n->net.transport, PAXOS_GROUP_ACCEPTORS, leading) !=
	    PAXOS_OK)
		return;
	/* Nothing waits unread meanwhile: the group is left (a full buffer would drop every 2a
	 * there, counted as the host's receive errors). No longer leading, the learner hears of
	 * what it missed by its repeats. */
	if (n->net.transport->ops->set_ignored)
		n->net.transport->ops->set_ignored(n->net.transport, PAXOS_GROUP_ACCEPTORS,
						   leading);
	n->proposer.own_accepts = leading;
}

/*
 * Lean followers. With several partitions each proposer process hosts a node per partition and
 * leads only some; a follower that queued every client value (to propose it after a failover)
 * and learned the whole log would cost about what the leader does, and the partitions would
 * not scale. So a node that hosts a proposer and nothing that needs the log (no application
 * learner, no acceptor, no membership changes) follows lean while another proposer leads: it
 * reads only the proposers group (heartbeats, leader orders, promises); the submit, acceptors
 * and learners groups are left unread (multicast: their sockets leave the loop and their
 * groups; unicast: what arrives on the member socket is dropped unread), its
 * learner asks for nothing, and its pending list is emptied: the clients submit again what
 * the leader did not get chosen (paxos-client resubmits on timeout, with the same bytes).
 * Taking over, it drops what waited unread, skips its learner to where the leaders'
 * heartbeats said their learners had delivered (all of it chosen), reads the groups again
 * and starts phase 1 there, which recovers whatever lies above. One partition: no lean
 * followers (a follower's pending list shortens a failover, and costs nothing that scales).
 */
static bool lean_allowed(const struct paxos_node *n)
{
	return n->cfg.partitions > 1 && n->proposer.core && n->proposer.election &&
	       !n->learner.app.deliver && !n->acceptor.core && !n->acceptor.serializer &&
	       !n->cfg.membership_alpha;
}

static const enum paxos_group lean_groups[] = {PAXOS_GROUP_SUBMIT, PAXOS_GROUP_ACCEPTORS,
					       PAXOS_GROUP_LEARNERS, PAXOS_GROUP_VOTES};

static void lean_reading(struct paxos_node *n, bool reading)
{
	for (size_t i = 0; i < sizeof(lean_groups) / sizeof(lean_groups[0]); i++) {
		enum paxos_group g = lean_groups[i];
		/* Unicast reads the submit and acceptors groups on the member socket, which brings
		 * the proposers group too: not left unread (node_deliver drops the others). */
		if (!n->net.joined[g] ||
		    (n->cfg.transport == PAXOS_TRANSPORT_UNICAST && g != PAXOS_GROUP_LEARNERS))
			continue;
		if (!reading) {
			n->net.transport->ops->set_lazy(n->net.transport, g, true);
			if (n->net.transport->ops->set_ignored)
				n->net.transport->ops->set_ignored(n->net.transport, g, true);
			continue;
		}
		/* What waited unread is stale: dropped (node_deliver drops while lean). Ignored,
		 * the transport kept next to nothing (multicast: the group was left), not a
		 * socket buffer's worth: reading 12,000 datagrams delayed a takeover by 17 ms. */
		size_t batch = n->net.transport->ops->batch(n->net.transport);
		for (int k = 0;
		     k < 100000 && n->net.transport->ops->read(n->net.transport, g) >= batch; k++)
			;
		if (n->net.transport->ops->set_ignored)
			n->net.transport->ops->set_ignored(n->net.transport, g, false);
		n->net.transport->ops->set_lazy(n->net.transport, g, false);
	}
}

static void lean_follow(struct paxos_node *n)
{
	if (n->proposer.lean || !lean_allowed(n) || paxos_proposer_is_leader(n->proposer.core))
		return;
	n->proposer.lean = true;
	paxos_proposer_drop_pending(n->proposer.core);
	lean_reading(n, false);
}

/* Stops following lean; taking over: from where the heartbeats said the log was delivered. */
static paxos_iid lean_stop(struct paxos_node *n, paxos_iid first)
{
	if (!n->proposer.lean)
		return first;
	lean_reading(n, true);
	n->proposer.lean = false;
	for (uint32_t id = 0; id < n->cfg.proposers; id++) {
		paxos_iid heard = paxos_election_next_iid_of(n->proposer.election, id);
		if (heard > first)
			first = heard;
	}
	if (first > paxos_learner_next_iid(n->learner.core)) {
		/* The proposer's window first: the learner may deliver from first on at once. */
		paxos_proposer_delivered(n->proposer.core, first - 1, NULL, paxos_now(),
					 &n->net.out[PAXOS_ROLE_PROPOSER].emitter);
		if (paxos_learner_step_skip_to(n->learner.core, first) == PAXOS_OK)
			node_learner_run(n);
	}
	return first;
}

/* A new leader of a partition its node may follow lean has no copy of the values that waited
 * on the leader before (nor, just started, of any): it makes its ballot known to the learners
 * with a skip, and their clients submit those values again at once rather than on a timeout
 * (paxos_node_on_new_leader). One instance per leadership; nothing per value. */
static void announce(struct paxos_node *n)
{
	if (lean_allowed(n))
		paxos_proposer_announce(n->proposer.core, paxos_now(),
					&n->net.out[PAXOS_ROLE_PROPOSER].emitter);
}

/*
 * Thesis 4.7: a new leader starts phase 1 at the lowest instance its learner has not delivered
 * and pre-executes its window there ("begins pre-executing phase 1 for some instances, starting
 * from the lowest one not yet delivered"); acceptors' rejects make it jump past the old leader's
 * ballots at once ("the bootstrap time for the new leader depends solely on the number of
 * instances to pre-execute"). The values it proposes are the ones every proposer queued, once
 * phase 1 finished across its window (proposer.c took_over, handover_at). A demoted proposer
 * stops at once and keeps its values for a later leadership.
 */
static void leader_changed(struct paxos_node *n, uint32_t leader, uint32_t previous)
{
	uint32_t id = n->role_id[PAXOS_ROLE_PROPOSER];
	paxos_iid first = first_undelivered(n);
	if (leader == id)
		first = lean_stop(n, first);
	n->role_counters[PAXOS_ROLE_PROPOSER].leader_changes++;
	paxos_logf(PAXOS_LOG_INFO,
		   "paxos: proposer %u%s: leader is now %u (was %u) from instance %llu", id,
		   n->partition_label, leader, previous, (unsigned long long)first);
	if (leader == id || previous == id) {
		node_own_accepts(n, leader == id);
		paxos_proposer_set_leader(n->proposer.core, leader == id, first, paxos_now(),
					  &n->net.out[PAXOS_ROLE_PROPOSER].emitter);
	}
	if (leader == id)
		announce(n);
	else
		lean_follow(n);
}

/* Check-quorum's verdict, said and counted once per change: a leader that goes out is the
 * operator's first sign of a one-way partition (it sends, it hears nothing). */
static void quorum_changed(struct paxos_node *n)
{
	bool out = !paxos_election_eligible(n->proposer.election);
	if (out == n->proposer.out_seen)
		return;
	n->proposer.out_seen = out;
	uint32_t id = n->role_id[PAXOS_ROLE_PROPOSER];
	paxos_time now = paxos_now();
	if (!out) {
		paxos_logf(PAXOS_LOG_INFO,
			   "paxos: proposer %u%s: hears a quorum of the acceptors again after "
			   "%llu ms: it may lead again",
			   id, n->partition_label,
			   (unsigned long long)((now - n->proposer.out_since) / 1000));
		return;
	}
	n->proposer.out_since = now;
	n->role_counters[PAXOS_ROLE_PROPOSER].quorum_losses++;
	paxos_logf(PAXOS_LOG_WARNING,
		   "paxos: proposer %u%s: heard from no quorum of the acceptors for %u ms: %s, "
		   "and sends no heartbeats until it hears one (check-quorum; can it receive?)",
		   id, n->partition_label,
		   n->cfg.acceptor_repeat_ms * 2 + n->cfg.heartbeat_timeout_ms,
		   n->proposer.leader_seen == id ? "the leader steps down" : "it may not lead");
}

/* The election's result as data: after each call into it, the leader it names now against
 * the one the node acted on. One call changes the leader at most once (paxos/election.h). */
void node_election_run(struct paxos_node *n)
{
	quorum_changed(n);
	uint32_t leader = paxos_election_leader(n->proposer.election);
	if (leader == n->proposer.leader_seen)
		return;
	uint32_t previous = n->proposer.leader_seen;
	n->proposer.leader_seen = leader;
	leader_changed(n, leader, previous);
}

void node_election_heard(struct paxos_node *n, const struct paxos_message *m, paxos_time now)
{
	uint32_t id;
	if (!n->proposer.election || !paxos_msg_acceptor(m, &id))
		return;
	bool out = !paxos_election_eligible(n->proposer.election);
	paxos_election_heard_acceptor(n->proposer.election, id, now);
	if (out)
		node_election_run(n);
}

/* An oracle's order is taken only while fresh: stamped within PAXOS_LEADER_ORDER_WINDOW_US of
 * this host's clock, and no older than the last one taken (its copies share nothing but the
 * order, so a later one never loses to an earlier copy). A datagram captured and sent again
 * later, tagged or not, is refused, and so is an older order replayed after a newer one. */
bool node_order_fresh(struct paxos_node *n, const struct paxos_leader *order)
{
	uint64_t wall = paxos_wall_now(), sent = order->sent_at;
	const char *why = NULL;
	if (sent + PAXOS_LEADER_ORDER_WINDOW_US < wall)
		why = "sent too long ago";
	else if (sent > wall + PAXOS_LEADER_ORDER_WINDOW_US)
		why = "sent from the future";
	else if (sent < n->proposer.order_sent)
		why = "older than the order taken last";
	if (why) {
		n->net.counters.stale_orders++;
		char whom[32];
		snprintf(whom, sizeof(whom),
			 order->leader_id == PAXOS_LEADER_AUTO ? "back to election"
							       : "for proposer %u",
			 order->leader_id);
		node_refused(n, &n->net.rx.header,
			     "leader order %s stamped %s%llu ms from this host's clock: %s (the "
			     "oracle's and the proposers' clocks must agree within %u ms)",
			     whom, sent > wall ? "+" : "-",
			     (unsigned long long)((sent > wall ? sent - wall : wall - sent) / 1000),
			     why, PAXOS_LEADER_ORDER_WINDOW_US / 1000);
		return false;
	}
	n->proposer.order_sent = sent;
	return true;
}

/* Whether a proposer with this id cannot join the node (the reason recorded). */
static bool proposer_refused(struct paxos_node *n, uint32_t id)
{
	if (n->acceptor.serializer) {
		node_set_error(n,
			       "this node hosts a serializer, which takes the proposers' values");
		return true;
	}
	if (n->proposer.core || id >= n->cfg.proposers) {
		node_set_error(n,
			       n->proposer.core ? "this node already hosts a proposer"
						: "proposer id %u is not below proposers (%u)",
			       id, n->cfg.proposers);
		return true;
	}
	return false;
}

int paxos_node_add_proposer(struct paxos_node *n, uint32_t id)
{
	if (proposer_refused(n, id))
		return PAXOS_E_INVALID;
	char dir[PAXOS_PATH_MAX + 32], err[PAXOS_PATH_MAX + 256];
	if (paxos_epoch_store_dir(&n->cfg, id, dir, sizeof(dir)) != PAXOS_OK) {
		node_set_error(n, "proposer %u: storage-path %s: too long", id,
			       n->cfg.storage_path);
		return PAXOS_E_INVALID;
	}
	struct paxos_epoch_store *es = paxos_epoch_store_open(dir, err, sizeof(err));
	if (!es) {
		node_set_error(n, "proposer %u: %s", id, err);
		return PAXOS_E_IO;
	}
	return paxos_node_add_proposer_with(n, id, es);
}

int paxos_node_add_proposer_with(struct paxos_node *n, uint32_t id, struct paxos_epoch_store *es)
{
	if (!es || proposer_refused(n, id)) {
		if (!es)
			node_set_error(n, "a proposer needs an epoch store");
		paxos_epoch_store_destroy(es);
		return PAXOS_E_INVALID;
	}
	n->proposer.epoch.store = es;
	char dir[PAXOS_PATH_MAX + 32];
	int rc = node_host_member(n, PAXOS_ROLE_PROPOSER, id);
	/* The configuration history is kept with the epoch (membership-alpha). */
	if (rc == PAXOS_OK && n->cfg.membership_alpha) {
		rc = paxos_epoch_store_dir(&n->cfg, id, dir, sizeof(dir));
		if (rc == PAXOS_OK)
			rc = node_membership_keep_in(n, dir);
	}
	if (rc == PAXOS_OK)
		rc = node_ensure_learner(n);
	if (rc == PAXOS_OK)
		rc = node_membership_proposer_start(n, id);
	if (rc == PAXOS_OK)
		rc = node_admin_start(n);
	if (rc != PAXOS_OK)
		return rc;
	struct paxos_proposer_options o;
	paxos_proposer_options_from_config(&o, &n->cfg, id);
	rc = es->ops->next(es, &o.epoch);
	if (rc != PAXOS_OK) {
		node_set_error(n, "proposer %u: %s", id, paxos_epoch_store_error(es));
		return rc;
	}
	o.raise_epochs = true;        /* its readies say what to store (node_epoch.c) */
	o.membership = n->membership; /* the learner's, made with it */
	n->proposer.epoch.durable = o.epoch;
	node_host(n, PAXOS_ROLE_PROPOSER, id);
	n->proposer.core = paxos_proposer_new(&o, &n->role_counters[PAXOS_ROLE_PROPOSER]);
	if (!n->proposer.core) {
		node_set_error(n, "out of memory");
		return PAXOS_E_NOMEM;
	}
	if ((rc = node_set_learner_reading(n)) != PAXOS_OK ||
	    (rc = node_join(n, PAXOS_GROUP_PROPOSERS)) != PAXOS_OK ||
	    (rc = node_join(n, PAXOS_GROUP_SUBMIT)) != PAXOS_OK)
		return rc;
	struct paxos_election_options eo;
	paxos_election_options_from_config(&eo, &n->cfg, id);
	/* No callback: the node reads the leader after each call (node_election_run). */
	eo.members = node_membership_election_set(n, first_undelivered(n));
	if (n->membership)
		eo.acceptors = paxos_membership_members(n->membership, first_undelivered(n));
	n->mship.gated = n->membership && !n->mship.settled;
	n->proposer.election = paxos_election_new(&eo, paxos_now());
	if (!n->proposer.election) {
		node_set_error(n, "out of memory");
		return PAXOS_E_NOMEM;
	}
	n->proposer.election_run = node_election_run;

	uint32_t leader = n->proposer.leader_seen = paxos_election_leader(n->proposer.election);
	paxos_iid first = first_undelivered(n);
	paxos_logf(PAXOS_LOG_INFO,
		   "paxos: proposer %u%s: leader is %u at start (%s election) from instance %llu, "
		   "epoch %u",
		   id, n->partition_label, leader,
		   n->cfg.election == PAXOS_ELECTION_MANUAL ? "manual" : "auto",
		   (unsigned long long)first, o.epoch);
	if (leader == id) {
		node_own_accepts(n, true);
		paxos_proposer_set_leader(n->proposer.core, true, first, paxos_now(),
					  &n->net.out[PAXOS_ROLE_PROPOSER].emitter);
		announce(n);
	} else {
		lean_follow(n);
	}
	uint32_t ms = n->cfg.heartbeat_interval_ms / 4;
	return node_add_timer(n, &n->timers.election, ms ? ms : 1, on_election_tick);
}

void node_lean_end(struct paxos_node *n)
{
	if (!n->proposer.lean)
		return;
	lean_reading(n, true);
	n->proposer.lean = false;
}
