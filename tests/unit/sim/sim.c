/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulated cluster (see sim.h). Cores are driven the way lib/node/node.c drives them:
 * messages are routed by group (acceptors, proposers, learners and the proposers' internal
 * learners, submit to the proposers), the internal learner's deliveries and closed instances
 * go to its proposer, a learning acceptor's learner tells its acceptor what it closed, and
 * ticks come at a quarter of the shortest timeout. Only time is simulated: every event is taken
 * from one queue in time order. This file holds the cores' plumbing (the network, learners,
 * proposers and the leader oracle, acceptors, clients); the run is run.c's, each event's step
 * deliver.c's, the faults faults.c's and the membership changes reconfig.c's (cluster.h).
 */
#include "cluster.h"

#include "mutant.h"

#include <paxos/storage_backends.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Makes partition p the one s->acc, s->prop, s->lrn and s->check are of; returns the one that
 * was. */
uint32_t use(struct sim *s, uint32_t p)
{
	uint32_t was = s->cur;
	s->cur = p;
	s->acc = s->part[p].acc;
	s->prop = s->part[p].prop;
	s->lrn = s->part[p].lrn;
	s->check = &s->part[p].check;
	return was;
}

static void on_emit(void *ctx, enum paxos_group to, const struct paxos_message *m);

void endpoint_init(struct sim *s, struct endpoint *ep, enum endpoint_kind kind, uint32_t index)
{
	*ep = (struct endpoint){s, kind, index, {on_emit, ep}, s->cur};
}

void trace(struct sim *s, int level, const char *fmt, ...)
{
	if (s->o.verbose < level)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "[%8.3f ms] ", (double)s->now / 1000.0);
	if (s->o.partitions > 1)
		fprintf(stderr, "p%u: ", s->cur);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void hash_mix(struct sim *s, uint64_t x)
{
	for (int k = 0; k < 8; k++) {
		s->r->trace_hash ^= (x >> (8 * k)) & 0xff;
		s->r->trace_hash *= 0x100000001b3ull;
	}
}

void schedule(struct sim *s, paxos_time at, enum sim_event_kind kind, uint32_t target, uint32_t arg)
{
	if (queue_push(&s->queue, at, kind, target, arg) != 0)
		checker_fail(s->check, SIM_V_INTERNAL, "event queue: out of memory");
}

/* ---- the configurations (--reconfig) ---- */

/* The chosen values the checker saw, in instance order, applied to the history the cluster
 * agrees on: the configurations the sim's own decisions go by. */
void truth_advance(struct sim *s)
{
	if (!s->truth)
		return;
	for (;;) {
		const struct checker *log = &s->part[0].check; /* --reconfig: one partition */
		paxos_iid next = paxos_membership_applied(s->truth) + 1;
		const struct checker_chosen *ch = checker_chosen_in(log, 0, next); /* no new logs */
		if (!ch)
			return;
		struct paxos_value v = {ch->bytes, ch->len};
		uint32_t proposers_before = paxos_membership_latest(s->truth)->proposers;
		if (paxos_membership_apply(s->truth, next, &v) == 1) {
			const struct paxos_configuration *c = paxos_membership_latest(s->truth);
			s->proposer_changes += c->proposers != proposers_before;
			trace(s, 1,
			      "configuration %u chosen in %" PRIu64
			      ": members 0x%x, proposers 0x%x "
			      "from %" PRIu64,
			      c->id, next, c->members, c->proposers, c->first);
			if (s->config_count < MAX_CONFIGS)
				s->configs[s->config_count++] = c->members;
			s->issued = false;
		}
	}
}

/* Whether acceptor a is without its state: to restart empty, recovering, or recovered but
 * not yet holding every decision below its floor (paxos_acceptor_restored), up or down. */
bool without_state(const struct sim_acceptor *a)
{
	if (a->lose_state)
		return true;
	if (a->up)
		return !paxos_acceptor_restored(a->core);
	return a->floor != 0 && !a->restored;
}

/*
 * Whether the acceptors in bad (with those that lost their state in the run, were lost for
 * good or retired) stay a minority of every configuration ever chosen, and of the one asked
 * for: learners restarted from instance 1 need a quorum of each, and an amnesiac needs one
 * that kept its state in each to recover.
 */
bool budget_ok(const struct sim *s, uint32_t bad)
{
	bad |= s->amnesia_mask | s->lost_mask | s->retired_mask;
	/* And those without their state now (a rolling restart's), until restored. */
	for (uint32_t i = 0; i < s->ids; i++)
		if (s->acc[i].present && without_state(&s->acc[i]))
			bad |= 1u << i;
	for (uint32_t k = 0; k <= s->config_count; k++) {
		uint32_t c = k < s->config_count ? s->configs[k]
			     : s->issued         ? s->issued_members
						 : 0;
		uint32_t n = (uint32_t)__builtin_popcount(c);
		if (c && (uint32_t)__builtin_popcount(c & bad) > (n - 1) / 2)
			return false;
	}
	return true;
}

/* The configurations acceptor i may have voted in, newest first, with their last instances,
 * for its recovery: as the node finds them in the history it learned. */
static void recovery_configurations(struct sim *s, uint32_t i, struct paxos_acceptor_membership *m)
{
	truth_advance(s);
	paxos_membership_voted_in(s->truth, i, m->configurations, m->configuration_ends,
				  PAXOS_ACCEPTOR_CONFIGURATIONS);
	/* The proposers of the set in force and of a change chosen, as the node asks. */
	paxos_iid next = paxos_membership_applied(s->truth) + 1;
	m->proposer_set = paxos_membership_proposers(s->truth, next) |
			  paxos_membership_latest(s->truth)->proposers;
}

/* ---- network ---- */

/* Receivers are named partition << 24 | group << 16 | kind << 8 | index: the group says which
 * core of a proposer endpoint (the proposer or its learner) the message is for. */
static uint32_t receiver(enum paxos_group g, enum endpoint_kind kind, uint32_t index)
{
	return (uint32_t)g << 16 | (uint32_t)kind << 8 | index;
}

static void send_to(struct sim *s, uint32_t slot, uint32_t to)
{
	if (rng_percent(&s->rng, s->loss))
		return;
	to |= s->cur << 24; /* the partition: its cores hear only their own log */
	s->pool.msgs[slot].refs++;
	schedule(s, s->now + rng_range(&s->rng, DELAY_MIN, DELAY_MAX), SE_DELIVER, to, slot);
	if (rng_percent(&s->rng, s->o.dup)) {
		s->pool.msgs[slot].refs++;
		schedule(s, s->now + rng_range(&s->rng, DELAY_MIN, DELAY_MAX), SE_DELIVER, to,
			 slot);
	}
}

/* The emitter of every core: copies the message once and schedules one independent delivery
 * (maybe lost, maybe twice) per member of the group. */
static void on_emit(void *ctx, enum paxos_group to, const struct paxos_message *m)
{
	struct endpoint *ep = ctx;
	struct sim *s = ep->sim;
	use(s, ep->partition);
	if ((unsigned)to >= PAXOS_GROUP_COUNT) {
		checker_fail(s->check, SIM_V_INTERNAL, "a core emitted to group %d", (int)to);
		return;
	}
	/* An acceptor's state to the proposers is for their election's check-quorum, which the
	 * oracle stands for here; the proposer core ignores it. Not sent, so that it draws
	 * nothing from the network's generator: the seeds replay the runs they always did. */
	if (to == PAXOS_GROUP_PROPOSERS && m->type == PAXOS_MSG_ACCEPTOR_STATE)
		return;
	if (ep->kind == EP_ACCEPTOR && s->acc[ep->index].cut)
		return;
	if (ep->kind == EP_PROPOSER && s->prop[ep->index].cut)
		return;
	/* As the node does: the epoch the proposer's ready holds is stored before anything it
	 * sends leaves. One that sent nothing since stores nothing (a crash then forgets it). */
	struct paxos_proposer_ready rd;
	if (ep->kind == EP_PROPOSER && paxos_proposer_ready(s->prop[ep->index].core, &rd)) {
		struct sim_proposer *p = &s->prop[ep->index];
		trace(s, 1, "proposer %u stores epoch %u", ep->index, rd.epoch);
		p->epoch = rd.epoch;
		paxos_proposer_advance(p->core, rd.epoch);
	}
	uint32_t slot = pool_put(&s->pool, m, (uint32_t)ep->kind << 8 | ep->index);
	if (slot == UINT32_MAX) {
		checker_fail(s->check, SIM_V_INTERNAL,
			     "cannot copy a %s message (value too big or out of memory)",
			     paxos_msg_type_name(m->type));
		return;
	}
	switch (to) {
	case PAXOS_GROUP_ACCEPTORS:
		for (uint32_t i = 0; i < s->ids; i++)
			if (!s->acc[i].cut)
				send_to(s, slot, receiver(to, EP_ACCEPTOR, i));
		if (m->type != PAXOS_MSG_ACCEPT && m->type != PAXOS_MSG_CHOSEN)
			break;
		/* Learners hear the leader's accepts (their values) and its word on what was
		 * chosen; acceptors' learners get them with their acceptor's copy (deliver). */
		for (uint32_t i = 0; i < s->o.learners; i++)
			if (!rng_percent(&s->rng, s->o.accept_loss))
				send_to(s, slot, receiver(to, EP_LEARNER, i));
		for (uint32_t i = 0; i < s->o.proposers; i++)
			if (!rng_percent(&s->rng, s->o.accept_loss))
				send_to(s, slot, receiver(to, EP_PROPOSER, i));
		break;
	case PAXOS_GROUP_PROPOSERS:
	case PAXOS_GROUP_SUBMIT:
		for (uint32_t i = 0; i < s->o.proposers; i++)
			send_to(s, slot, receiver(to, EP_PROPOSER, i));
		break;
	case PAXOS_GROUP_LEARNERS:
		for (uint32_t i = 0; i < s->o.learners; i++)
			send_to(s, slot, receiver(to, EP_LEARNER, i));
		for (uint32_t i = 0; i < s->o.proposers; i++)
			send_to(s, slot, receiver(to, EP_PROPOSER, i));
		for (uint32_t i = 0; i < s->ids && s->o.learning_acceptors; i++)
			if (!s->acc[i].cut)
				send_to(s, slot, receiver(to, EP_ACCEPTOR, i));
		break;
	case PAXOS_GROUP_VOTES:
		/* As the node does: an acceptor's learner hears no votes but its own acceptor's
		 * (and learns from the leader's accepts what was chosen). */
		for (uint32_t i = 0; i < s->o.learners; i++)
			send_to(s, slot, receiver(to, EP_LEARNER, i));
		for (uint32_t i = 0; i < s->o.proposers; i++)
			send_to(s, slot, receiver(to, EP_PROPOSER, i));
		if (ep->kind == EP_ACCEPTOR && s->acc[ep->index].learner)
			send_to(s, slot, receiver(PAXOS_GROUP_LEARNERS, EP_ACCEPTOR, ep->index));
		break;
	default:
		break;
	}
	if (s->pool.msgs[slot].refs == 0)
		pool_release(&s->pool, slot);
}

/* ---- learners ---- */

uint32_t proposer_view(const struct sim *s, uint32_t i)
{
	return s->o.learners + i;
}

void on_learner_deliver(void *arg, paxos_iid iid, const struct paxos_value *v)
{
	struct endpoint *ep = arg;
	struct sim *s = ep->sim;
	trace(s, 2, "learner %u delivers %" PRIu64, ep->index, iid);
	/* Its step's deliveries are all of the log it delivers now. */
	checker_delivered(s->check, ep->index, paxos_learner_generation(s->lrn[ep->index].core),
			  iid, v, s->now);
	if (s->merging)
		merged_delivered(&s->merged, ep->index, ep->partition, iid, v, s->now);
}

/* Half of the deliveries go to the proposer without the ballot, in runs of eight, so that both
 * of its ways to recognise its own value (by ballot, by bytes) are driven, and the runs of
 * instances its accepts say were chosen (paxos_accept.chosen_to) break and start again. */
void on_internal_deliver(void *arg, const struct paxos_learner_event *e)
{
	struct endpoint *ep = arg;
	struct sim *s = ep->sim;
	trace(s, 2, "proposer %u's learner delivers %" PRIu64, ep->index, e->iid);
	checker_delivered(s->check, proposer_view(s, ep->index), e->generation, e->iid, &e->value,
			  s->now);
	paxos_proposer_delivered_ballot(s->prop[ep->index].core, e->iid, &e->value,
					e->iid / 8 % 2 ? e->ballot : 0, s->now, &ep->emitter);
}

/* As the node does: the proposer starts its window over in the new log. */
void on_internal_new_log(void *arg, const struct paxos_learner_event *e)
{
	struct endpoint *ep = arg;
	struct sim *s = ep->sim;
	trace(s, 1, "proposer %u's learner moves to log %" PRIu64, ep->index, e->generation);
	checker_view_new_log(s->check, proposer_view(s, ep->index), e->generation, s->now);
	paxos_proposer_new_log(s->prop[ep->index].core, s->now, &ep->emitter);
}

static void on_learner_new_log(void *arg, uint64_t generation)
{
	struct endpoint *ep = arg;
	struct sim *s = ep->sim;
	trace(s, 1, "learner %u moves to log %" PRIu64, ep->index, generation);
	checker_view_new_log(s->check, ep->index, generation, s->now);
}

void on_internal_closed(void *arg, const struct paxos_learner_event *e)
{
	struct endpoint *ep = arg;
	struct sim *s = ep->sim;
	paxos_proposer_closed(s->prop[ep->index].core, e->iid, &e->value, s->now, &ep->emitter);
}

/* As the node does (lib/node/node_learner.c) for the learners of proposers and acceptors: each
 * event of the learner's ready handed on in order (closed, delivered; trims are not: their
 * skips do not feed these cores here), then the advance. */
static void learner_run(struct paxos_learner *l, learner_event_fn closed,
			learner_event_fn delivered, learner_event_fn new_log, void *arg)
{
	struct paxos_learner_ready rd;
	if (!paxos_learner_ready(l, &rd))
		return;
	for (size_t k = 0; k < rd.event_count; k++) {
		const struct paxos_learner_event *e = &rd.events[k];
		if (e->kind == PAXOS_LEARNER_CLOSED && closed)
			closed(arg, e);
		else if (e->kind == PAXOS_LEARNER_DELIVERED)
			delivered(arg, e);
		else if (e->kind == PAXOS_LEARNER_NEW_LOG && new_log)
			new_log(arg, e);
	}
	paxos_learner_advance(l);
}

/* One step of such a learner with m, then its ready. */
void learner_step(struct sim *s, struct paxos_learner *l, const struct paxos_message *m,
		  struct endpoint *ep, learner_event_fn closed, learner_event_fn delivered,
		  learner_event_fn new_log)
{
	if (paxos_learner_step(l, m, s->now, &ep->emitter) != PAXOS_OK)
		checker_fail(s->check, SIM_V_INTERNAL, "a learner step was refused");
	learner_run(l, closed, delivered, new_log, ep);
}

/* With --reconfig every learner has a history of its own, from configuration 1 (*m). It
 * delivers from instance 1, or from start. */
static struct paxos_learner *learner_from(struct sim *s, paxos_instance_delivered_fn delivered,
					  paxos_instance_closed_fn closed, struct endpoint *ep,
					  struct paxos_counters *counters,
					  struct paxos_membership **m, paxos_iid start)
{
	*m = NULL;
	if (s->o.reconfig) {
		*m = paxos_membership_create((1u << s->o.acceptors) - 1, (1u << s->o.proposers) - 1,
					     s->alpha);
		if (!*m) {
			checker_fail(s->check, SIM_V_INTERNAL, "paxos_membership_new failed");
			return NULL;
		}
	}
	struct paxos_learner_options o = {
	    .acceptors = s->o.reconfig ? SIM_MAX_ACCEPTORS : s->o.acceptors,
	    .membership = *m,
	    .window = LEARNER_WINDOW,
	    .max_value = SIM_MAX_VALUE,
	    .repeat_batch = REPEAT_BATCH,
	    .hole_check = HOLE_CHECK,
	    .start = PAXOS_START_FROM_FIRST,
	    .start_iid = start,
	    .deliver = delivered,
	    .deliver_arg = ep,
	    .closed = closed,
	    .closed_arg = ep,
	    .new_log = delivered ? on_learner_new_log : NULL,
	    .new_log_arg = ep,
	};
	struct paxos_learner *l = paxos_learner_new(&o, counters);
	if (!l)
		checker_fail(s->check, SIM_V_INTERNAL, "paxos_learner_new failed");
	return l;
}

struct paxos_learner *learner_new(struct sim *s, paxos_instance_delivered_fn delivered,
				  paxos_instance_closed_fn closed, struct endpoint *ep,
				  struct paxos_counters *counters, struct paxos_membership **m)
{
	return learner_from(s, delivered, closed, ep, counters, m, 0);
}

/* A merging learner process restarts from a snapshot of what it applied: its merge position
 * says where each partition's core starts and where the merged order goes on (as
 * paxos_partitions_resume_merge() does); what it delivers must be the rest of the order the
 * others deliver. */
void learner_snapshot_restart(struct sim *s, uint32_t i)
{
	struct merge_position pos;
	int rc = merged_restart(&s->merged, i, &pos);
	if (rc == 1 && s->now < FAULT_PHASE + LIVENESS_BUDGET / 2)
		schedule(s, s->now + rng_range(&s->rng, 5000, 50000), SE_SNAPSHOT, i, 0);
	if (rc != 0)
		return;
	s->r->snapshots++;
	trace(s, 1,
	      "learner %u restarts from a snapshot: turn %u, %u in its segment, %u values of "
	      "its instance",
	      i, pos.turn, pos.in_segment, pos.values);
	EACH_PARTITION(s, p)
	{
		struct sim_learner *l = &s->lrn[i];
		paxos_learner_free(l->core);
		trace(s, 1, "learner %u starts at instance %" PRIu64, i, pos.next[p]);
		checker_view_rewind(s->check, i, pos.next[p]);
		l->core = learner_from(s, on_learner_deliver, NULL, &l->ep, &l->counters,
				       &l->membership, pos.next[p]);
	}
}

/* ---- proposers and the leader oracle ---- */

/* A (re)started proposer keeps its id and takes the next epoch, as the epoch store's next
 * does, so it never reuses a ballot of an earlier incarnation. */
bool proposer_start(struct sim *s, uint32_t i)
{
	struct sim_proposer *p = &s->prop[i];
	p->epoch++;
	struct paxos_proposer_options o = {
	    .id = i,
	    .epoch = p->epoch,
	    .raise_epochs = true, /* its readies: stored in on_emit */
	    .acceptors = s->o.reconfig ? SIM_MAX_ACCEPTORS : s->o.acceptors,
	    .window = s->window,
	    .concurrency = s->concurrency,
	    .pending_size = PENDING_SIZE,
	    .max_value = SIM_MAX_VALUE,
	    .batch_limit = s->o.batch,
	    .phase1_timeout = PHASE_TIMEOUT,
	    .phase2_timeout = PHASE_TIMEOUT,
	    .recovery_grace = RECOVERY_GRACE,
	    .skip_idle = s->o.skip_idle_us,
	};
	/* No callbacks: its readies go to the proposer (learner_step). */
	p->learner = learner_new(s, NULL, NULL, &p->ep, &p->learner_counters, &p->membership);
	o.membership = p->membership;
	p->core = paxos_proposer_new(&o, &p->counters);
	if (!p->core || !p->learner) {
		checker_fail(s->check, SIM_V_INTERNAL, "cannot start proposer %u", i);
		return false;
	}
	p->up = true;
	p->lean = false;
	return true;
}

void proposer_stop(struct sim_proposer *p)
{
	paxos_proposer_free(p->core);
	paxos_learner_free(p->learner);
	paxos_membership_free(p->membership);
	p->core = NULL;
	p->learner = NULL;
	p->membership = NULL;
	p->up = false;
}

bool leads(const struct sim *s, uint32_t i)
{
	return s->prop[i].up && paxos_proposer_is_leader(s->prop[i].core);
}

uint32_t leader_count(const struct sim *s)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->o.proposers; i++)
		n += leads(s, i);
	return n;
}

/* As the node does with partitions: a proposer that does not lead follows lean. */
void lean_follow(struct sim *s, uint32_t i)
{
	struct sim_proposer *p = &s->prop[i];
	if (s->o.partitions < 2 || !p->up || p->lean || paxos_proposer_is_leader(p->core))
		return;
	trace(s, 2, "proposer %u follows lean", i);
	p->lean = true;
	paxos_proposer_drop_pending(p->core);
}

/* As a takeover does: lead from the lowest instance its own learner has not delivered; a lean
 * follower first skips to the highest next instance the heartbeats said. */
void promote(struct sim *s, uint32_t i)
{
	struct sim_proposer *p = &s->prop[i];
	if (!p->up || paxos_proposer_is_leader(p->core))
		return;
	paxos_iid first = paxos_learner_next_iid(p->learner);
	if (p->lean) {
		p->lean = false;
		paxos_iid known = first;
		for (uint32_t k = 0; k < s->o.proposers; k++)
			if (s->prop[k].heard_next > known)
				known = s->prop[k].heard_next;
		if (known > first) {
			trace(s, 1, "proposer %u skips to instance %" PRIu64, i, known);
			checker_view_skip(s->check, proposer_view(s, i), known);
			paxos_proposer_delivered(p->core, known - 1, NULL, s->now, &p->ep.emitter);
			/* May deliver from known on. */
			if (paxos_learner_step_skip_to(p->learner, known) != PAXOS_OK)
				checker_fail(s->check, SIM_V_INTERNAL, "a skip was refused");
			learner_run(p->learner, on_internal_closed, on_internal_deliver,
				    on_internal_new_log, &p->ep);
			first = known;
		}
	}
	trace(s, 1, "proposer %u leads from instance %" PRIu64, i, first);
	checker_led(s->check, i);
	paxos_proposer_set_leader(p->core, true, first, s->now, &p->ep.emitter);
	/* As the node does with partitions: a new leader has no copy of the values that
	 * waited on the one before, and says so to the learners with a skip. */
	if (s->o.partitions > 1)
		paxos_proposer_announce(p->core, s->now, &p->ep.emitter);
}

void demote(struct sim *s, uint32_t i)
{
	if (!leads(s, i))
		return;
	trace(s, 1, "proposer %u stops leading", i);
	paxos_proposer_set_leader(s->prop[i].core, false, 0, s->now, &s->prop[i].ep.emitter);
	lean_follow(s, i);
}

/* --reconfig: whether proposer i is in the proposer set in force (as the cluster's log says
 * up to where the checker saw it chosen): the election picks among those only. */
bool may_lead(const struct sim *s, uint32_t i)
{
	if (!s->truth)
		return true;
	paxos_iid next = paxos_membership_applied(s->truth) + 1;
	return (paxos_membership_proposers(s->truth, next) & (1u << i)) != 0;
}

/* A random proposer that is up and satisfies want_leader (UINT32_MAX: none); one to lead
 * (want_leader 0 or -1) is in the proposer set in force, and a new leader (0) is not deaf:
 * check-quorum keeps a proposer that hears no acceptor out of the election. */
uint32_t pick_proposer(struct sim *s, int want_leader)
{
	uint32_t cand[SIM_MAX_PROPOSERS], n = 0;
	for (uint32_t i = 0; i < s->o.proposers; i++)
		if (s->prop[i].up && (want_leader < 0 || leads(s, i) == (want_leader != 0)) &&
		    (want_leader == 1 || leads(s, i) || may_lead(s, i)) &&
		    (want_leader != 0 || !s->prop[i].deaf))
			cand[n++] = i;
	return n ? cand[rng_range(&s->rng, 0, n - 1)] : UINT32_MAX;
}

/* The failure detector's eventual verdict: someone up leads, of the proposer set in force; a
 * proposer a change removed stops leading. */
void ensure_leader(struct sim *s)
{
	for (uint32_t i = 0; s->truth && i < s->o.proposers; i++)
		if (leads(s, i) && !may_lead(s, i)) {
			trace(s, 1, "proposer %u, removed, stops leading", i);
			demote(s, i);
			/* A planned hand-over keeps the duplicate check on: the next leader
			 * proposes what it queued as a follower, which the checker counts
			 * (checker_received), and no value may be chosen twice. */
		}
	if (leader_count(s) > 0)
		return;
	uint32_t i = pick_proposer(s, 0);
	if (i != UINT32_MAX)
		promote(s, i);
}

/* A leader the change in force removed hands over at once (the node does when its learner
 * delivered the instance below the change: lib/node/node_membership.c), in the fault phase
 * and after it alike. */
void handover_removed(struct sim *s)
{
	if (!s->truth)
		return;
	EACH_PARTITION(s, p)
	for (uint32_t i = 0; i < s->o.proposers; i++)
		if (leads(s, i) && !may_lead(s, i)) {
			ensure_leader(s);
			break;
		}
}

/* ---- acceptors ---- */

/* Learning acceptors, as lib/node/node.c runs them: what the acceptor's learner closes becomes
 * final in the acceptor. */
static void on_acceptor_closed(void *arg, const struct paxos_learner_event *e)
{
	struct endpoint *ep = arg;
	struct sim *s = ep->sim;
	paxos_iid iid = e->iid;
	const struct paxos_value *v = &e->value;
	trace(s, 2, "acceptor %u learns %" PRIu64, ep->index, iid);
	checker_learned(s->check, ep->index, e->generation, iid, v, s->now);
	/* Only a decision of the log the acceptor votes in becomes final there (as the node). */
	if (paxos_acceptor_generation(s->acc[ep->index].core) != e->generation)
		return;
	if (paxos_acceptor_learned(s->acc[ep->index].core, iid, v) != PAXOS_OK)
		checker_fail(s->check, SIM_V_INTERNAL, "acceptor %u could not learn %" PRIu64,
			     ep->index, iid);
}

/* As the node does: what its learner delivered is decided (trims and restoration). */
static void on_acceptor_deliver(void *arg, const struct paxos_learner_event *e)
{
	struct endpoint *ep = arg;
	paxos_acceptor_decided(ep->sim->acc[ep->index].core, e->iid);
}

void acceptor_learn(struct sim *s, uint32_t i, const struct paxos_message *m)
{
	struct sim_acceptor *a = &s->acc[i];
	learner_step(s, a->learner, m, &a->ep, on_acceptor_closed, on_acceptor_deliver, NULL);
}

bool acceptor_start(struct sim *s, uint32_t i, bool amnesiac)
{
	struct sim_acceptor *a = &s->acc[i];
	a->core =
	    paxos_acceptor_new(&(struct paxos_acceptor_options){.id = i}, a->st, &a->counters);
	struct paxos_acceptor_membership m = {.acceptors = s->o.acceptors,
					      .proposers = s->o.proposers,
					      .incarnation = ++s->incarnations,
					      .amnesiac = amnesiac,
					      .floor = a->floor,
					      .fence = a->fence,
					      .generation = a->generation,
					      .served_before = a->served};
	a->amnesiac = amnesiac;
	if (s->o.reconfig)
		recovery_configurations(s, i, &m);
	if (a->core && paxos_acceptor_join(a->core, &m) != PAXOS_OK)
		checker_fail(s->check, SIM_V_INTERNAL, "acceptor %u cannot join", i);
	bool learns = s->o.learning_acceptors && (!s->o.mixed_learning || i % 2 == 0);
	if (a->core && learns)
		a->learner = learner_new(s, NULL, NULL, &a->ep, &a->learner_counters,
					 &a->membership); /* its readies: acceptor_learn */
	if (!a->core || (learns && !a->learner)) {
		checker_fail(s->check, SIM_V_INTERNAL, "cannot start acceptor %u", i);
		return false;
	}
	a->up = true;
	a->present = true;
	return true;
}

void acceptor_crash(struct sim *s, uint32_t i)
{
	struct sim_acceptor *a = &s->acc[i];
	trace(s, 1, "acceptor %u crashes", i);
	/* A recovery's floor and fence are kept with the storage (the node writes them beside
	 * a durable store); one still recovering recovers again. */
	if (a->core)
		a->generation = paxos_acceptor_generation(a->core);
	if (a->core && a->amnesiac && !paxos_acceptor_recovering(a->core))
		a->served = true;
	if (a->core && !paxos_acceptor_recovering(a->core)) {
		a->floor = paxos_acceptor_floor(a->core);
		a->fence = paxos_acceptor_fence(a->core);
		a->restored = paxos_acceptor_restored(a->core);
	} else if (a->core) {
		a->lose_state = true;
	}
	paxos_acceptor_free(a->core);
	paxos_learner_free(a->learner);
	paxos_membership_free(a->membership);
	a->writes = 0;
	a->crash_at_write = false;
	a->core = NULL;
	a->learner = NULL;
	a->membership = NULL;
	a->up = false;
}

void acceptor_restart(struct sim *s, uint32_t i)
{
	struct sim_acceptor *a = &s->acc[i];
	if (a->up || !a->present)
		return;
	bool amnesiac = a->lose_state;
	trace(s, 1, "acceptor %u restarts%s", i, amnesiac ? " with empty storage" : "");
	if (amnesiac) {
		paxos_storage_destroy(a->st);
		a->st = paxos_storage_memory_new();
		a->floor = 0;
		a->fence = 0;
		a->lose_state = false;
		checker_forget_promises(s->check, i);
	} else {
		a->st = mutant_restart_storage(s->o.mutant, a->st);
	}
	if (!a->st) {
		checker_fail(s->check, SIM_V_INTERNAL, "cannot create storage");
		return;
	}
	if (acceptor_start(s, i, amnesiac))
		checker_promises_all(s->check, i, a->st, s->now);
}

/* ---- clients ---- */

/* The partition a value goes to: round-robin by id. */
static uint32_t value_partition(const struct sim *s, uint32_t id)
{
	return id % s->o.partitions;
}

void submit(struct sim *s, uint32_t id)
{
	use(s, value_partition(s, id));
	uint8_t buf[SIM_MAX_VALUE];
	struct paxos_message m = {.type = PAXOS_MSG_CLIENT_VALUE};
	m.u.client_value.value.data = buf;
	m.u.client_value.value.len = value_encode(id, buf);
	m.u.client_value.id = (uint64_t)id + 1; /* a resubmission is the same submission */
	if (s->check->submitted[id] == 0)
		s->submitted_distinct++;
	checker_submitted(s->check, id);
	if (s->merging)
		merged_submitted(&s->merged, id);
	s->r->submissions++;
	trace(s, 2, "client submits value %u", id);
	on_emit(&s->part[s->cur].client, PAXOS_GROUP_SUBMIT, &m);
	schedule(s, s->now + (s->o.resubmit_us ? s->o.resubmit_us : RESUBMIT_AFTER), SE_RESUBMIT, 0,
		 id);
}

/* As paxos-client does with partitions (paxos_node_on_new_leader): when its learner delivers
 * an instance of another leadership than the one before, every value of that partition it
 * has not seen delivered goes again at once. */
void on_client_deliver(void *arg, const struct paxos_learner_event *e)
{
	struct endpoint *ep = arg;
	struct sim *s = ep->sim;
	on_learner_deliver(ep, e->iid, &e->value);
	uint32_t p = ep->partition;
	if (!leadership_changed(&s->part[p].client_leadership, e->ballot))
		return;
	s->r->client_new_leaders++;
	trace(s, 1, "the client sees a new leader of partition %u in instance %" PRIu64, p, e->iid);
	uint32_t was = use(s, p);
	for (uint32_t id = p; id < s->o.values; id += s->o.partitions)
		if (s->check->submitted[id] && s->check->views[0].count[id] == 0)
			submit(s, id);
	use(s, was);
}

/* The client learns its value was delivered from learner 0, like a replica's own client. */
void maybe_resubmit(struct sim *s, uint32_t id)
{
	use(s, value_partition(s, id));
	if (s->check->views[0].count[id] == 0)
		submit(s, id);
}
