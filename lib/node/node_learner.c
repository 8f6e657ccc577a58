/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node's learner. A step of the learner core returns what it decided as data (struct
 * paxos_learner_ready): the instances it closed, delivered and skipped as trimmed, in order.
 * The node hands each one on, in one straight line: to its proposer (events C and D of thesis
 * Fig. 3.1), to its acceptor (what is decided bounds its trims; a learning acceptor keeps a
 * closed instance as final) and to the application; then it advances. No core calls another.
 */
#include "log_line.h"
#include "parts.h"
#include "snapshot.h"

#include <paxos/learner.h>

#include "batch.h"
#include "clock.h"

/* An instance value is a frame of client values (lib/core/batch.h): the application gets each
 * one with its position. A malformed frame is checked whole first, counted and skipped. */
static void deliver_batch(struct paxos_node *n, paxos_iid iid, const struct paxos_value *v)
{
	struct paxos_counters *c = &n->role_counters[PAXOS_ROLE_LEARNER];
	uint32_t count;
	if (paxos_batch_is_skip(v)) {
		c->skips_delivered++;
		return;
	}
	if (n->membership && paxos_membership_is_command(v)) {
		node_membership_delivered(n, iid, v);
		return;
	}
	if (!v || paxos_batch_count(v, &count) != PAXOS_OK) {
		c->malformed_batches++;
		return;
	}
	struct paxos_batch_iter it;
	struct paxos_value one;
	paxos_batch_iter_init(&it, v);
	for (uint32_t position = 0; paxos_batch_next(&it, &one) == 1; position++) {
		c->client_values_delivered++;
		n->learner.app.deliver(n->learner.app.deliver_arg, iid, position, &one);
	}
}

/* paxos_node_on_new_leader: an instance of a new leadership (leadership.h), delivered at the
 * head of the log. A learner catching up replays leader changes of the past, which took none
 * of the values waiting now: followed, not told (the clients would submit them twice). At the
 * head, a leader has at most its window of instances beyond the one delivered. */
static void watch_leadership(struct paxos_node *n, paxos_iid iid, paxos_ballot ballot)
{
	bool changed = leadership_changed(&n->learner.app.leadership, ballot);
	paxos_iid head = paxos_learner_highest_seen(n->learner.core);
	if (changed && n->learner.app.new_leader && head <= iid + n->cfg.proposer_window)
		n->learner.app.new_leader(n->learner.app.new_leader_arg,
					  n->learner.app.leadership.proposer);
}

static void delivered(struct paxos_node *n, paxos_iid iid, const struct paxos_value *v,
		      paxos_ballot ballot)
{
	if (n->membership && paxos_membership_is_command(v))
		node_membership_applied(n, iid); /* kept before anything acts on it */
	if (n->acceptor.core)
		paxos_acceptor_decided(n->acceptor.core, iid);
	/* The election follows the proposer set in force from iid + 1 now, not at its next tick:
	 * a leader a change removes stops before its window slides to where the change governs
	 * (else it opens instances there, the next leader too, and a client value both hold can
	 * be chosen twice); a proposer it promotes takes over once this value settled its list. */
	uint32_t id = n->role_id[PAXOS_ROLE_PROPOSER];
	if (n->proposer.core && n->membership && id < 32 &&
	    paxos_proposer_is_leader(n->proposer.core) &&
	    !(node_membership_proposers(n, iid + 1) & (1u << id)))
		node_membership_election(n, iid + 1);
	if (n->proposer.core)
		paxos_proposer_delivered_ballot(n->proposer.core, iid, v, ballot, paxos_now(),
						&n->net.out[PAXOS_ROLE_PROPOSER].emitter);
	if (n->proposer.core && n->membership)
		node_membership_election(n, iid + 1);
	if (n->learner.app.deliver)
		deliver_batch(n, iid, v);
	if (n->learner.app.instance_done)
		n->learner.app.instance_done(n->learner.app.instance_done_arg, iid,
					     paxos_batch_is_skip(v));
	/* After the instance's own values: those are not to be submitted again. */
	watch_leadership(n, iid, ballot);
}

void node_on_instance_done(struct paxos_node *n, void (*done)(void *, paxos_iid, bool), void *arg)
{
	n->learner.app.instance_done = done;
	n->learner.app.instance_done_arg = arg;
}

static void trimmed(struct paxos_node *n, paxos_iid from, paxos_iid to)
{
	if (paxos_learner_held(n->learner.core, NULL)) {
		/* The application installs snapshots: the learner waits for one from a peer. */
		paxos_logf(PAXOS_LOG_WARNING,
			   "paxos: learner: instances %llu..%llu are trimmed and were not learned "
			   "here: asking the other nodes for a snapshot that covers them",
			   (unsigned long long)from, (unsigned long long)to);
		node_snapshot_wanted(n, to);
		return;
	}
	paxos_logf(PAXOS_LOG_WARNING,
		   "paxos: learner: instances %llu..%llu were trimmed before they were "
		   "learned",
		   (unsigned long long)from, (unsigned long long)to);
	if (n->membership)
		paxos_logf(
		    PAXOS_LOG_WARNING,
		    "paxos: learner: a membership change chosen among them is not known "
		    "here: configuration %u is taken to govern from instance %llu; where one "
		    "may have been, start from the history kept with the snapshot "
		    "(paxos_node_set_membership) or in a directory (paxos_node_keep_membership)",
		    paxos_membership_latest(n->membership)->id, (unsigned long long)to + 1);
	/* Not evidence for this acceptor's own trims: reports of acceptor states are easily
	 * forged without a key, and a forged quorum of them would let a forged trim empty the
	 * store for good. What this learner delivers after the skip is. */
	/* The proposer's window goes past them too: acceptors ignore prepares for trimmed
	 * instances, so a leader that started below the trim point would wait for ever. */
	if (n->proposer.core)
		paxos_proposer_delivered(n->proposer.core, to, NULL, paxos_now(),
					 &n->net.out[PAXOS_ROLE_PROPOSER].emitter);
	if (n->learner.app.trimmed)
		n->learner.app.trimmed(n->learner.app.trimmed_arg, from, to);
}

/* The acceptors began a new log: said before anything of it is delivered. A proposer that
 * ran through the change starts its window over at the new log's instance 1 too. */
static void new_log(struct paxos_node *n, uint64_t generation)
{
	paxos_logf(PAXOS_LOG_WARNING,
		   "paxos: learner: the acceptors began a new log (generation %llu): every one "
		   "of them had lost the old log; delivering the new log from instance 1",
		   (unsigned long long)generation);
	n->learner.app.leadership = (struct leadership){0};
	if (n->proposer.core)
		paxos_proposer_new_log(n->proposer.core, paxos_now(),
				       &n->net.out[PAXOS_ROLE_PROPOSER].emitter);
	if (n->learner.app.new_log)
		n->learner.app.new_log(n->learner.app.new_log_arg, generation);
}

static void closed(struct paxos_node *n, paxos_iid iid, const struct paxos_value *v)
{
	if (n->proposer.core)
		paxos_proposer_closed(n->proposer.core, iid, v, paxos_now(),
				      &n->net.out[PAXOS_ROLE_PROPOSER].emitter);
	/* Learning acceptors: the node's acceptor keeps the decision as final. */
	if (n->acceptor.core && n->cfg.learning_acceptors && !n->failed) {
		int rc = paxos_acceptor_learned(n->acceptor.core, iid, v);
		if (rc != PAXOS_E_INVALID)
			node_acceptor_status(n, rc);
	}
}

/* The one straight line of the learner's path: each event of the step's ready goes to the
 * proposer, the acceptor and the application, in the order the learner decided them; then
 * the learner advances (the values stay valid until then). */
static void run_ready(struct paxos_node *n)
{
	struct paxos_learner_ready rd;
	if (!paxos_learner_ready(n->learner.core, &rd))
		return;
	for (size_t i = 0; i < rd.event_count; i++) {
		const struct paxos_learner_event *e = &rd.events[i];
		switch (e->kind) {
		case PAXOS_LEARNER_CLOSED:
			closed(n, e->iid, &e->value);
			break;
		case PAXOS_LEARNER_DELIVERED:
			delivered(n, e->iid, &e->value, e->ballot);
			break;
		case PAXOS_LEARNER_TRIMMED:
			trimmed(n, e->iid, e->to);
			break;
		case PAXOS_LEARNER_NEW_LOG:
			new_log(n, e->generation);
			break;
		}
	}
	paxos_learner_advance(n->learner.core);
}

/* A leader's closed instances free phase 2 slots, and the accepts its proposer emits for them
 * meanwhile reach the learner only now (node_own_accept_replay): under load nearly all of them,
 * and a learner without them would ask the acceptors to repeat every value to every learner. */
void node_learner_run(struct paxos_node *n)
{
	do
		run_ready(n);
	while (node_own_accept_replay(n));
}

void node_learn(struct paxos_node *n, const struct paxos_message *m, paxos_time now)
{
	if (paxos_learner_step(n->learner.core, m, now, &n->net.out[PAXOS_ROLE_LEARNER].emitter) ==
	    PAXOS_OK)
		node_learner_run(n);
}
