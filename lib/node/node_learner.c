/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node's learner. A step of the learner core returns what it decided as data (struct
 * paxos_learner_ready): the instances it closed, delivered and skipped as trimmed, in order.
 * The node hands each one on, in one straight line: to its proposer (events C and D of thesis
 * Fig. 3.1), to its acceptor (what is decided bounds its trims; a learning acceptor keeps a
 * closed instance as final) and to the application; then it advances. No core calls another.
 * The learner is made here too (node_ensure_learner), with how it reads its group: at every
 * wake-up, or lazily beside a learning acceptor (node_drain_learners).
 */
#include "log_line.h"
#include "parts.h"

#include <paxos/learner.h>
#include <paxos/options.h>

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
		if (n->sessions.table && node_session_value(n, iid, position, &one))
			continue;
		c->values_delivered++;
		if (n->learner.app.deliver)
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
	if (!changed || head > iid + n->cfg.proposer_window)
		return;
	node_sessions_new_leader(n);
	if (n->learner.app.new_leader)
		n->learner.app.new_leader(n->learner.app.new_leader_arg,
					  n->learner.app.leadership.proposer);
}

/* The delivery of an instance past keeping its change, if it carried one. */
static void delivered_kept(struct paxos_node *n, paxos_iid iid, const struct paxos_value *v,
			   paxos_ballot ballot)
{
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
	if (n->learner.app.deliver || n->sessions.table)
		deliver_batch(n, iid, v);
	node_sessions_instance_end(n, iid);
	if (n->learner.app.instance_done)
		n->learner.app.instance_done(n->learner.app.instance_done_arg, iid,
					     paxos_batch_is_skip(v));
	/* After the instance's own values: those are not to be submitted again. */
	watch_leadership(n, iid, ballot);
}

/* The keeper's result (node_keeper.c): the node acts on the change, delivers the rest of its
 * instance if that still waits, and the learner's hold after the change ends. */
static void change_kept(struct paxos_node *n, const struct node_keep_result *r)
{
	if (!r->ok) {
		node_membership_not_kept(n, r->id, r->iid);
		return;
	}
	node_membership_kept(n, r->id);
	if (r->deferred)
		delivered_kept(n, r->iid, &r->value, r->ballot);
	n->learner.change_kept_due = true;
	node_learner_run(n);
	node_schedule_flush(n);
}

static void delivered(struct paxos_node *n, paxos_iid iid, const struct paxos_value *v,
		      paxos_ballot ballot)
{
	if (n->membership && paxos_membership_is_command(v)) {
		/* Kept before anything acts on it; the learner holds after it meanwhile. */
		if (!node_membership_applied(n, iid, v, ballot, change_kept))
			return; /* change_kept goes on */
		n->learner.change_kept_due = true;
	}
	delivered_kept(n, iid, v, ballot);
}

void node_on_instance_done(struct paxos_node *n, void (*done)(void *, paxos_iid, bool), void *arg)
{
	n->learner.app.instance_done = done;
	n->learner.app.instance_done_arg = arg;
}

void node_on_group_new_log(struct paxos_node *n, paxos_new_log_fn new_log, void *arg)
{
	n->learner.app.group_new_log = new_log;
	n->learner.app.group_new_log_arg = arg;
}

static void trimmed(struct paxos_node *n, paxos_iid from, paxos_iid to)
{
	if (paxos_learner_held(n->learner.core, NULL)) {
		/* The application installs snapshots: the learner waits for one from a peer. */
		paxos_logf(PAXOS_LOG_WARNING,
			   "paxos: learner: instances %llu..%llu are trimmed and were not learned "
			   "here: asking the other nodes for a snapshot that covers them",
			   (unsigned long long)from, (unsigned long long)to);
		return; /* node_snapshot_tick asks */
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
		   "paxos: learner%s: the acceptors began a new log (generation %llu): every one "
		   "of them had lost the old log; delivering the new log from instance 1",
		   n->partition_label, (unsigned long long)generation);
	n->learner.app.leadership = (struct leadership){0};
	node_keeper_drop_deferred(n); /* a change of the old log: nothing of it acts now */
	if (n->proposer.core)
		paxos_proposer_new_log(n->proposer.core, paxos_now(),
				       &n->net.out[PAXOS_ROLE_PROPOSER].emitter);
	if (n->learner.app.group_new_log)
		n->learner.app.group_new_log(n->learner.app.group_new_log_arg, generation);
	if (n->learner.app.new_log)
		n->learner.app.new_log(n->learner.app.new_log_arg, generation);
}

static void closed(struct paxos_node *n, uint64_t generation, paxos_iid iid,
		   const struct paxos_value *v)
{
	if (n->proposer.core)
		paxos_proposer_closed(n->proposer.core, iid, v, paxos_now(),
				      &n->net.out[PAXOS_ROLE_PROPOSER].emitter);
	/* Learning acceptors: the node's acceptor keeps the decision as final, if it is of the
	 * log the acceptor votes in. An acceptor still in another (recovering, or not yet told
	 * of the new log its peers began) would answer with it as final under its own log's
	 * name, and a learner of that log would deliver it there. */
	if (n->acceptor.core && n->cfg.learning_acceptors && !n->failed &&
	    paxos_acceptor_generation(n->acceptor.core) == generation) {
		int rc = paxos_acceptor_learned(n->acceptor.core, iid, v);
		if (rc != PAXOS_E_INVALID)
			node_acceptor_status(n, rc);
	}
}

/* The one straight line of the learner's path: each event of the step's ready goes to the
 * proposer, the acceptor and the application, in the order the learner decided them; then
 * the learner advances (the values stay valid until then). false: the ready was empty. */
static bool run_ready(struct paxos_node *n)
{
	struct paxos_learner_ready rd;
	if (!paxos_learner_ready(n->learner.core, &rd)) {
		/* The hold after a kept change ends once no ready waits. */
		if (!n->learner.change_kept_due)
			return false;
		n->learner.change_kept_due = false;
		paxos_learner_step_change_kept(n->learner.core);
		if (!paxos_learner_ready(n->learner.core, &rd))
			return false;
	}
	for (size_t i = 0; i < rd.event_count; i++) {
		const struct paxos_learner_event *e = &rd.events[i];
		switch (e->kind) {
		case PAXOS_LEARNER_CLOSED:
			closed(n, e->generation, e->iid, &e->value);
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
	return true;
}

/* Hands the learner the oldest deferred own accept the proposer still holds. Returns false
 * when none is left. The learner's ready must have been advanced. */
static bool own_accept_replay(struct paxos_node *n)
{
	struct node_proposer *np = &n->proposer;
	while (np->own_deferred_head < np->own_deferred_count) {
		struct own_accept a = np->own_deferred[np->own_deferred_head++];
		if (np->own_deferred_head == np->own_deferred_count)
			np->own_deferred_head = np->own_deferred_count = 0;
		struct paxos_message m = {.type = PAXOS_MSG_ACCEPT};
		m.u.accept.iid = a.iid;
		m.u.accept.ballot = a.ballot;
		if (!np->own_accepts ||
		    !paxos_proposer_accept_value(np->core, a.iid, a.ballot, &m.u.accept.value))
			continue; /* retried, released or no longer leading: nothing to learn */
		if (paxos_learner_step(n->learner.core, &m, paxos_now(),
				       &n->net.out[PAXOS_ROLE_LEARNER].emitter) != PAXOS_OK)
			return false;
		n->role_counters[PAXOS_ROLE_LEARNER].own_accepts_learned++;
		return true;
	}
	return false;
}

/* A leader's closed instances free phase 2 slots, and the accepts its proposer emits for them
 * meanwhile reach the learner only now (own_accept_replay): under load nearly all of them,
 * and a learner without them would ask the acceptors to repeat every value to every learner. */
void node_learner_run(struct paxos_node *n)
{
	while (run_ready(n) || own_accept_replay(n))
		;
}

void node_learn(struct paxos_node *n, const struct paxos_message *m, paxos_time now)
{
	if (paxos_learner_step(n->learner.core, m, now, &n->net.out[PAXOS_ROLE_LEARNER].emitter) ==
	    PAXOS_OK)
		node_learner_run(n);
}

/* A learning acceptor's learner does not join the votes group (the leader's accepts say what
 * was chosen, paxos_accept.chosen_to): it hears its own acceptor's votes here, after the
 * accepts they answer, which vouch for the values it took from them (learner_value_known)
 * and say how far the log reaches. */
void node_learn_own_votes(struct paxos_node *n, paxos_time now)
{
	struct node_acceptor *na = &n->acceptor;
	for (uint32_t i = 0; i < na->own_vote_count && !n->failed; i++) {
		struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
		m.u.accepted.iid = na->own_votes[i].iid;
		m.u.accepted.ballot = na->own_votes[i].ballot;
		m.u.accepted.generation = na->own_votes[i].generation;
		m.u.accepted.acceptor_id = n->role_id[PAXOS_ROLE_ACCEPTOR];
		m.u.accepted.valueless = true;
		node_learn(n, &m, now);
	}
	na->own_vote_count = 0;
}

/* The proposer's and learner's timers are checked at a quarter of the shortest timeout. */
static uint32_t tick_ms(const struct paxos_config *c)
{
	uint32_t ms = c->phase1_timeout_ms;
	if (c->phase2_timeout_ms < ms)
		ms = c->phase2_timeout_ms;
	if (c->hole_check_ms < ms)
		ms = c->hole_check_ms;
	if (c->learner_merge && c->merge_skip_ms < ms)
		ms = c->merge_skip_ms; /* an idle leader's skips (paxos_proposer_tick) */
	ms /= 4;
	return ms ? ms : 1;
}

/* Whether the node's learner serves no application, only a learning acceptor or a proposer
 * (see node_drain_learners): it reads the votes lazily. One partition: a lean follower
 * (node_proposer.c) sets its own reading of the group. */
static bool learner_lazy(const struct paxos_node *n)
{
	if (!n->learner.core || n->learner.app.deliver)
		return false;
	if (n->acceptor.core)
		return !n->proposer.core;
	return n->proposer.core && !n->acceptor.serializer && n->cfg.partitions == 1;
}

/* Whether the node reads the leader's values lazily (see node_drain_values). Not beside a
 * proposer, which sets its own reading of the group (node_own_accepts, lean followers). */
static bool values_lazy(const struct paxos_node *n)
{
	return n->cfg.transport == PAXOS_TRANSPORT_MULTICAST && n->learner.core &&
	       !n->acceptor.core && !n->acceptor.serializer && !n->proposer.core &&
	       n->net.joined[PAXOS_GROUP_ACCEPTORS];
}

/* Whether the node's learner counts the acceptors' votes: all but a learning acceptor's that
 * serves nothing else, which learns what was chosen from the leader's accepts
 * (paxos_accept.chosen_to, paxos_chosen) and its own acceptor's votes (node_learn_own_votes).
 * On unicast the acceptors send the votes to the learners that joined the votes group alone. */
static bool counts_votes(const struct paxos_node *n)
{
	return n->learner.core && (!n->acceptor.core || n->proposer.core || n->learner.app.deliver);
}

/* Whether the votes come on the learners group: unicast (one socket for both), or wire
 * version 5, which has no votes group. Else that group carries little (acceptor states,
 * answers to repeats), and its datagrams may wake even a lazy learner's loop. */
static bool votes_on_learners(const struct paxos_node *n)
{
	return n->cfg.transport == PAXOS_TRANSPORT_UNICAST ||
	       n->net.wire.spoken < PAXOS_WIRE_VERSION;
}

/* Sets how group g is read: lazily (*now true) or at every wake-up. */
static int set_lazy(struct paxos_node *n, enum paxos_group g, bool lazy, bool *now)
{
	if (lazy == *now)
		return PAXOS_OK;
	if (n->net.transport->ops->set_lazy(n->net.transport, g, lazy) != PAXOS_OK) {
		node_set_error(n, "cannot add a socket to the event loop");
		return PAXOS_E_NOMEM;
	}
	*now = lazy;
	return PAXOS_OK;
}

/* Reads the votes and learners groups lazily or at every wake-up, as the roles hosted now
 * need, and the leader's values likewise. */
int node_set_learner_reading(struct paxos_node *n)
{
	int rc = set_lazy(n, PAXOS_GROUP_ACCEPTORS, values_lazy(n), &n->learner.values_lazy);
	if (rc != PAXOS_OK || !n->net.joined[PAXOS_GROUP_LEARNERS])
		return rc;
	bool lazy = learner_lazy(n);
	if ((rc = set_lazy(n, PAXOS_GROUP_VOTES, lazy, &n->learner.votes_lazy)) != PAXOS_OK ||
	    (rc = set_lazy(n, PAXOS_GROUP_LEARNERS, lazy && votes_on_learners(n),
			   &n->learner.learners_lazy)) != PAXOS_OK)
		return rc;
	/* Joined after its reading is set: a lazy group's socket never enters the loop. */
	if (counts_votes(n) && (rc = node_join(n, PAXOS_GROUP_VOTES)) != PAXOS_OK)
		return rc;
	bool timer =
	    n->learner.learners_lazy || (n->learner.votes_lazy && n->net.joined[PAXOS_GROUP_VOTES]);
	if (timer && !n->timers.learn)
		return node_add_timer(n, &n->timers.learn, LAZY_LEARN_MS, node_on_learn_tick);
	if (!timer && n->timers.learn) {
		event_free(n->timers.learn);
		n->timers.learn = NULL;
	}
	return PAXOS_OK;
}

/* One learner per node serves both the application and the proposer. */
int node_ensure_learner(struct paxos_node *n)
{
	if (n->learner.core)
		return PAXOS_OK;
	struct paxos_learner_options o;
	paxos_learner_options_from_config(&o, &n->cfg);
	/* No callbacks: the node takes its readies (node_learner.c). */
	o.start_iid = n->learner.app.learner_start;
	o.start_generation = n->learner.app.learner_generation;
	o.start_generation_known = n->learner.app.learner_generation_known;
	o.hold_trimmed = n->learner.hold_trimmed;
	int rc = node_membership_init(n);
	if (rc != PAXOS_OK)
		return rc;
	o.membership = n->membership;
	o.hold_changes = n->membership != NULL;
	node_host(n, PAXOS_ROLE_LEARNER, 0);
	n->learner.core = paxos_learner_new(&o, &n->role_counters[PAXOS_ROLE_LEARNER]);
	if (!n->learner.core) {
		node_set_error(n, "out of memory");
		return PAXOS_E_NOMEM;
	}
	if (n->acceptor.core) /* from now on trims go no further than it delivered */
		paxos_acceptor_decided(n->acceptor.core,
				       paxos_learner_next_iid(n->learner.core) - 1);
	rc = node_join(n, PAXOS_GROUP_LEARNERS);
	/* The leader's accepts carry the values the accepted messages name: a learner hears them
	 * (an acceptor's learner gets them from its acceptor's group). */
	if (rc == PAXOS_OK && !n->acceptor.core && !n->acceptor.serializer)
		rc = node_join(n, PAXOS_GROUP_ACCEPTORS);
	if (rc == PAXOS_OK)
		rc = node_add_timer(n, &n->timers.tick, tick_ms(&n->cfg), n->timers.on_tick);
	return rc;
}

/*
 * Thesis 3.7.5: a learning acceptor's learning "does not require an immediate commit to stable
 * storage", nor an immediate read. Woken for every accepted message, the acceptors would take
 * the CPU from the roles on the path of a value (three accepted datagrams per instance, each to
 * every acceptor); so a learner that serves only its acceptor is not woken by its socket: it
 * reads whatever waits there after each round the acceptor is woken for, and every
 * LAZY_LEARN_MS. The socket buffer holds what arrives in between.
 */
static void drain(struct paxos_node *n, enum paxos_group g)
{
	size_t batch = n->net.transport->ops->batch(n->net.transport);
	for (int i = 0; i < LAZY_LEARN_READS && !n->failed; i++)
		if (n->net.transport->ops->read(n->net.transport, g) < batch)
			return;
}

void node_drain_learners(struct paxos_node *n)
{
	if (n->learner.votes_lazy && n->net.joined[PAXOS_GROUP_VOTES])
		drain(n, PAXOS_GROUP_VOTES);
	if (n->learner.learners_lazy)
		drain(n, PAXOS_GROUP_LEARNERS);
}

/*
 * The leader multicasts each value to the acceptors and the learners at once, and a learner
 * needs it only once the acceptors' votes have chosen it. Woken for each value, every learner
 * would cost the leader a wake-up per value in its send (the kernel wakes the receivers of a
 * local datagram in the sender's time) and itself a wake-up more per value. So a learner reads
 * the values after each read of votes (what they close waits for them in the same round, the
 * values having been sent before any vote), and at each tick (node.c) what came without
 * votes.
 */
void node_drain_values(struct paxos_node *n)
{
	n->learner.values_due = false;
	drain(n, PAXOS_GROUP_ACCEPTORS);
}

/* Whether a lazy learner reads after this round: beside an acceptor always (its votes wait for
 * the acceptor's rounds), beside a proposer while its phase 2 is busy. Otherwise a leader's
 * closed instances wait for the next millisecond's read: nothing else waits for them (no
 * application here; clients learn from the acceptors), and a read that finds the votes of a
 * millisecond costs one system call where one per round costs one per value. */
bool node_learner_reads_now(const struct paxos_node *n)
{
	return n->acceptor.core || !n->proposer.core ||
	       paxos_proposer_votes_wanted(n->proposer.core);
}

void node_on_learn_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	node_drain_learners(arg);
}
