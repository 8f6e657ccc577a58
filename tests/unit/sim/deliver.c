/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulator's events taken from the queue (step): a message delivered to its receiver's
 * core and what that core's ready says done (an acceptor's writes, its recovery, a learner's
 * decisions), the ticks, and the checks of liveness once the network healed.
 */
#include "cluster.h"

#include "mutant.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- delivering ---- */

static const char *group_name(enum paxos_group g)
{
	static const char *const names[] = {"acceptors", "proposers", "learners", "submit",
					    "votes"};
	return (unsigned)g < PAXOS_GROUP_COUNT ? names[g] : "?";
}

static paxos_iid iid_of(const struct paxos_message *m)
{
	switch (m->type) {
	case PAXOS_MSG_PREPARE:
		return m->u.prepare.iid;
	case PAXOS_MSG_ACCEPT:
		return m->u.accept.iid;
	case PAXOS_MSG_PROMISE:
		return m->u.promise.iid;
	case PAXOS_MSG_ACCEPTED:
		return m->u.accepted.iid;
	case PAXOS_MSG_REJECT:
		return m->u.reject.iid;
	default:
		return 0;
	}
}

/* Traces an acceptor's recovery as it ends (it was recovering before the step). */
static void trace_recovery(struct sim *s, uint32_t i, bool was_recovering)
{
	const struct paxos_acceptor *core = s->acc[i].core;
	if (was_recovering && core && !paxos_acceptor_recovering(core))
		trace(s, 1,
		      "acceptor %u recovered: votes above instance %" PRIu64 " and ballot %" PRIu64,
		      i, paxos_acceptor_floor(core), paxos_acceptor_fence(core));
}

/* Whether acceptor i may send r, a message of its ready rd, the sim having written rd: a message
 * that reports stored state names a write, and no write the sim has not made yet. */
static bool tag_ok(struct sim *s, uint32_t i, const struct paxos_ready *rd,
		   const struct paxos_ready_message *r)
{
	const struct sim_acceptor *a = &s->acc[i];
	bool reports = r->m.type == PAXOS_MSG_PROMISE || r->m.type == PAXOS_MSG_ACCEPTED ||
		       r->m.type == PAXOS_MSG_REJECT;
	if (r->after > a->writes || (reports && a->writes > 0 && r->after == 0)) {
		checker_fail(s->check, SIM_V_INTERNAL,
			     "acceptor %u: a message of type %d tagged with write %" PRIu64
			     " (written: %" PRIu64 ")",
			     i, (int)r->m.type, r->after, a->writes);
		return false;
	}
	return r->record == PAXOS_READY_NO_RECORD || rd->records[r->record].iid != 0;
}

/*
 * The node's straight line (lib/node/node_acceptor.c): after a step that returned rc, write
 * the ready (the storage survives crashes), send what the write backs, advance. An acceptor
 * armed to crash (fault_crash_acceptor) does so between the write and the send: its state is
 * stored, its replies never leave. Not once the faults healed: nothing restarts it then.
 * Returns rc, or the write's error.
 */
static int acceptor_run(struct sim *s, uint32_t i, int rc)
{
	struct sim_acceptor *a = &s->acc[i];
	struct paxos_ready rd;
	if (!paxos_acceptor_ready(a->core, &rd)) {
		paxos_acceptor_advance(a->core, PAXOS_OK);
		return rc;
	}
	int wrc = paxos_acceptor_write(a->st, &rd);
	if (wrc == PAXOS_OK && rd.write != 0 && rd.write != ++a->writes)
		checker_fail(s->check, SIM_V_INTERNAL,
			     "acceptor %u: write %" PRIu64 " after %" PRIu64, i, rd.write,
			     a->writes - 1);
	if (wrc == PAXOS_OK && rd.write != 0 && a->crash_at_write && !s->healed) {
		trace(s, 1,
		      "acceptor %u crashes after write %" PRIu64 ", before sending %zu messages", i,
		      rd.write, rd.message_count);
		paxos_acceptor_advance(a->core, PAXOS_OK);
		uint32_t cur = s->cur;
		if (s->o.own_acceptors) { /* the process serves this partition alone */
			acceptor_crash(s, i);
		} else {
			EACH_PARTITION(s, p)
			acceptor_crash(s, i);
		}
		use(s, cur);
		schedule(s, s->now + rng_range(&s->rng, 5000, 80000), SE_ACCEPTOR_RESTART, i, 0);
		return rc;
	}
	for (size_t k = 0; k < rd.message_count && wrc == PAXOS_OK; k++)
		if (tag_ok(s, i, &rd, &rd.messages[k]))
			paxos_emit(&a->ep.emitter, rd.messages[k].to, &rd.messages[k].m);
	paxos_acceptor_advance(a->core, wrc);
	return rc != PAXOS_OK ? rc : wrc;
}

static void deliver_to_acceptor(struct sim *s, uint32_t i, const struct paxos_message *m)
{
	struct sim_acceptor *a = &s->acc[i];
	if (!a->up || a->cut)
		return;
	bool recovering = paxos_acceptor_recovering(a->core);
	int rc = mutant_takes(s->o.mutant, m)
		     ? mutant_handle(s->o.mutant, i, a->st, m, &a->ep.emitter)
		     : acceptor_run(s, i, paxos_acceptor_step(a->core, m, 1));
	trace_recovery(s, i, recovering);
	if (rc != PAXOS_OK) {
		checker_fail(s->check, SIM_V_INTERNAL, "acceptor %u: %s", i, paxos_strerror(rc));
		return;
	}
	if (m->type == PAXOS_MSG_PREPARE || m->type == PAXOS_MSG_ACCEPT)
		checker_promise(s->check, i, a->st, iid_of(m), s->now);
}

/* A stopped acceptor (SIGSTOP) finds what was sent to it meanwhile when it goes on, in the
 * order it arrived (its socket buffer). */
static bool frozen(const struct sim *s, uint32_t to)
{
	uint32_t i = to & 0xff;
	return (enum endpoint_kind)((to >> 8) & 0xff) == EP_ACCEPTOR &&
	       s->acc[i].frozen_until > s->now;
}

void deliver(struct sim *s, uint32_t to, uint32_t slot)
{
	if (frozen(s, to)) {
		const struct sim_acceptor *a = &s->acc[to & 0xff];
		schedule(s, a->frozen_until + 1 + (s->now - a->frozen_from) / 64, SE_DELIVER, to,
			 slot);
		return;
	}
	struct sim_msg copy;
	pool_take(&s->pool, slot, &copy);
	const struct paxos_message *m = &copy.m;
	use(s, to >> 24);
	enum paxos_group g = (enum paxos_group)((to >> 16) & 0xff);
	enum endpoint_kind kind = (enum endpoint_kind)((to >> 8) & 0xff);
	uint32_t i = to & 0xff;
	hash_mix(s, (uint64_t)m->type << 32 | iid_of(m));
	s->r->messages++;
	if (g == PAXOS_GROUP_VOTES && m->type == PAXOS_MSG_ACCEPTED)
		g = PAXOS_GROUP_LEARNERS; /* the learners group's votes */
	if (paxos_msg_group(m->type) != g)
		return;
	trace(s, 2, "%s %" PRIu64 " from %u:%u to %s %u", paxos_msg_type_name(m->type), iid_of(m),
	      copy.sender >> 8, copy.sender & 0xff, group_name(g), i);
	switch (kind) {
	case EP_ACCEPTOR:
		if (m->type == PAXOS_MSG_CHOSEN) { /* the learner's alone, as in the node */
			if (s->acc[i].up && !s->acc[i].cut && s->acc[i].learner)
				acceptor_learn(s, i, m);
			break;
		}
		/* As the node does: its learner takes the accept's value first. */
		if (m->type == PAXOS_MSG_ACCEPT && s->acc[i].up && !s->acc[i].cut &&
		    s->acc[i].learner && !rng_percent(&s->rng, s->o.accept_loss))
			acceptor_learn(s, i, m);
		if (g != PAXOS_GROUP_LEARNERS)
			deliver_to_acceptor(s, i, m);
		else if (s->acc[i].up && !s->acc[i].cut && s->acc[i].learner)
			acceptor_learn(s, i, m);
		break;
	case EP_PROPOSER: {
		struct sim_proposer *p = &s->prop[i];
		if (!p->up || p->cut || p->deaf)
			break;
		if (p->lean && g != PAXOS_GROUP_PROPOSERS)
			break; /* neither the log nor the client values */
		if (g == PAXOS_GROUP_LEARNERS || m->type == PAXOS_MSG_ACCEPT ||
		    m->type == PAXOS_MSG_CHOSEN) {
			learner_step(s, p->learner, m, &p->ep, on_internal_closed,
				     on_internal_deliver, on_internal_new_log);
			break;
		}
		if (m->type == PAXOS_MSG_CLIENT_VALUE)
			checker_received(s->check, i, &m->u.client_value.value);
		paxos_proposer_handle(p->core, m, s->now, &p->ep.emitter);
		break;
	}
	case EP_LEARNER:                           /* the learners group, or a leader's accept */
		if (i == 0 && s->o.partitions > 1) /* the client's: it watches the leader */
			learner_step(s, s->lrn[0].core, m, &s->lrn[0].ep, NULL, on_client_deliver,
				     NULL);
		else
			paxos_learner_handle(s->lrn[i].core, m, s->now, &s->lrn[i].ep.emitter);
		break;
	default:
		break;
	}
}

static void tick_partition(struct sim *s)
{
	for (uint32_t i = 0; i < s->o.learners; i++)
		paxos_learner_tick(s->lrn[i].core, s->now, &s->lrn[i].ep.emitter);
	for (uint32_t i = 0; i < s->ids; i++)
		if (s->acc[i].up && s->acc[i].learner && s->acc[i].frozen_until <= s->now)
			paxos_learner_tick(s->acc[i].learner, s->now, &s->acc[i].ep.emitter);
	for (uint32_t i = 0; i < s->o.proposers; i++) {
		struct sim_proposer *p = &s->prop[i];
		if (!p->up)
			continue;
		if (!p->cut) /* its heartbeat */
			p->heard_next = paxos_learner_next_iid(p->learner);
		if (!p->lean)
			paxos_learner_tick(p->learner, s->now, &p->ep.emitter);
		paxos_proposer_tick(p->core, s->now, &p->ep.emitter);
	}
}

static void tick(struct sim *s)
{
	EACH_PARTITION(s, p)
	{
		tick_partition(s);
		/* Learners that follow a log without having delivered (new ones) */
		for (uint32_t i = 0; i < s->o.learners; i++)
			checker_view_heard_log(s->check, i,
					       paxos_learner_generation(s->lrn[i].core));
		for (uint32_t i = 0; i < s->o.proposers; i++)
			if (s->prop[i].up && s->prop[i].learner)
				checker_view_heard_log(
				    s->check, proposer_view(s, i),
				    paxos_learner_generation(s->prop[i].learner));
	}
}

/* Every value submitted and delivered by every learner (with partitions: by every learner of
 * its partition, and by every learner's merge), with every proposer up, and the last
 * membership change asked for chosen and in force. */
bool complete(const struct sim *s)
{
	if (s->submitted_distinct < s->o.values)
		return false;
	if (s->truth && (s->issued || paxos_membership_pending(s->truth)))
		return false;
	for (uint32_t p = 0; p < s->o.partitions; p++) {
		const struct sim_partition *q = &s->part[p];
		for (uint32_t i = 0; i < s->o.proposers; i++)
			if (!q->prop[i].up)
				return false;
		/* With partitions the proposers' learners follow lean (no log while they do
		 * not lead, and a takeover skips what was chosen): the learners must have it all.
		 */
		uint32_t views = s->o.partitions > 1 ? s->o.learners : q->check.view_count;
		for (uint32_t v = 0; v < views; v++)
			if (!checker_view_complete(&q->check, v))
				return false;
	}
	for (uint32_t i = 0; s->merging && i < s->o.learners; i++)
		if (!merged_complete(&s->merged, i))
			return false;
	return true;
}

/* Describes what the acceptors' records say about iid: "a0 b=201 v=5; a1 -; ...". Returns the
 * largest number of acceptors that hold one ballot. */
static uint32_t acceptor_view(struct sim *s, paxos_iid iid, char *buf, size_t cap)
{
	paxos_ballot ballots[SIM_MAX_ACCEPTORS];
	uint32_t best = 0;
	size_t n = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < s->ids; i++) {
		struct paxos_record rec;
		struct paxos_storage *st = s->acc[i].st;
		int rc = st ? st->ops->get(st, iid, &rec) : 0;
		ballots[i] = rc == 1 ? rec.accepted : 0;
		int64_t id = rc == 1 && rec.accepted ? frame_first_id(&rec.value, s->o.values) : -1;
		if (n < cap)
			n += (size_t)snprintf(
			    buf + n, cap - n,
			    "%sa%u promised %" PRIu64 " accepted %" PRIu64 " (value %" PRId64 ")",
			    i ? ", " : "", i, rc == 1 ? rec.promised : 0, ballots[i], id);
		uint32_t same = 0;
		for (uint32_t k = 0; k <= i; k++)
			same += ballots[i] != 0 && ballots[k] == ballots[i];
		if (same > best)
			best = same;
	}
	return best;
}

static const struct paxos_learner *view_learner(const struct sim *s, uint32_t v)
{
	return v < s->o.learners ? s->lrn[v].core : s->prop[v - s->o.learners].learner;
}

static void report_partition_liveness(struct sim *s);

/* Liveness is strict: with learning acceptors or without, a learner that has not delivered
 * everything once the network healed is a failure (a stalled learner gets its instances
 * repaired by the leader, see PAXOS_MSG_REPAIR). */
void report_liveness(struct sim *s)
{
	EACH_PARTITION(s, p)
	{
		report_partition_liveness(s);
		if (s->part[p].check.violation != SIM_OK)
			return;
	}
	for (uint32_t i = 0; s->merging && i < s->o.learners; i++) {
		if (merged_complete(&s->merged, i))
			continue;
		const struct merged_learner *l = &s->merged.l[i];
		checker_fail(s->check, SIM_V_LIVENESS,
			     "%.0f ms after healing, learner %u delivered every value of every "
			     "partition but merged only %" PRIu64 " (turn of partition %u, %" PRIu64
			     " bytes waiting)",
			     (double)LIVENESS_BUDGET / 1000.0, i, l->out, l->merge.turn,
			     merge_waiting(&l->merge));
		return;
	}
}

static void report_partition_liveness(struct sim *s)
{
	uint32_t views = s->o.partitions > 1 ? s->o.learners : s->check->view_count;
	for (uint32_t v = 0; v < views; v++) {
		if (checker_view_complete(s->check, v))
			continue;
		uint32_t missing = 0, first = 0;
		for (uint32_t id = s->o.values; id-- > 0;)
			if (s->check->submitted[id] && !s->check->views[v].count[id]) {
				missing++;
				first = id;
			}
		const struct paxos_learner *l = view_learner(s, v);
		char acc[400];
		uint32_t best = acceptor_view(s, paxos_learner_next_iid(l), acc, sizeof(acc));
		checker_fail(
		    s->check, SIM_V_LIVENESS,
		    "%.0f ms after healing, %s %u still misses %u values (value %u first); "
		    "it delivered up to instance %" PRIu64 " and has seen %" PRIu64
		    "; %u proposers lead; best ballot quorum %u; %s",
		    (double)LIVENESS_BUDGET / 1000.0,
		    v < s->o.learners ? "learner" : "proposer's learner",
		    v < s->o.learners ? v : v - s->o.learners, missing, first,
		    paxos_learner_next_iid(l) - 1, paxos_learner_highest_seen(l), leader_count(s),
		    best, acc);
		return;
	}
}

void step(struct sim *s, const struct sim_event *e)
{
	hash_mix(s, e->at);
	hash_mix(s, (uint64_t)e->kind << 32 | e->target);
	use(s, 0); /* process state is alike in every partition; handlers pick theirs */
	switch ((enum sim_event_kind)e->kind) {
	case SE_DELIVER:
		deliver(s, e->target, e->arg);
		break;
	case SE_TICK:
		tick(s);
		schedule(s, s->now + TICK, SE_TICK, 0, 0);
		break;
	case SE_ACCEPTOR_TICK:
		EACH_PARTITION(s, p)
		{
			struct sim_acceptor *a = &s->acc[e->target];
			bool recovering = a->up && paxos_acceptor_recovering(a->core);
			if (a->up && a->frozen_until <= s->now &&
			    acceptor_run(s, e->target, paxos_acceptor_step_tick(a->core)) !=
				PAXOS_OK)
				checker_fail(s->check, SIM_V_INTERNAL, "acceptor %u tick failed",
					     e->target);
			trace_recovery(s, e->target, recovering);
		}
		schedule(s, s->now + ACCEPTOR_REPEAT, SE_ACCEPTOR_TICK, e->target, 0);
		break;
	case SE_SUBMIT:
		submit(s, e->arg);
		break;
	case SE_RESUBMIT:
		maybe_resubmit(s, e->arg);
		break;
	case SE_FAULT:
		if (!s->healed)
			inject_fault(s);
		break;
	case SE_ACCEPTOR_RESTART:
		EACH_PARTITION(s, p)
		if (!s->healed)
			acceptor_restart(s, e->target);
		break;
	case SE_PROPOSER_RESTART:
		if (s->healed || s->prop[e->target].up)
			break;
		EACH_PARTITION(s, p)
		{
			trace(s, 1, "proposer %u restarts", e->target);
			if (proposer_start(s, e->target))
				checker_view_reset(s->check, proposer_view(s, e->target));
			ensure_leader(s);
			lean_follow(s, e->target);
		}
		break;
	case SE_PARTITION_END:
		if (!s->healed)
			end_partition(s);
		break;
	case SE_DEMOTE:
		EACH_PARTITION(s, p)
		if (!s->healed && (e->arg == ALL_PARTITIONS || e->arg == p) && leader_count(s) > 1)
			demote(s, e->target);
		break;
	case SE_HEAL:
		heal(s);
		break;
	case SE_PROPOSER_UNCUT:
		if (!s->healed)
			uncut_proposer(s, e->target);
		break;
	case SE_PROPOSER_HEARS:
		if (!s->healed)
			proposer_hears(s, e->target);
		break;
	case SE_DOUBLE_CRASH:
		if (!s->healed)
			double_crash(s);
		break;
	case SE_SNAPSHOT:
		learner_snapshot_restart(s, e->target);
		break;
	case SE_RECONFIG:
		reconfigure(s);
		if (s->now < RECONFIG_UNTIL || s->issued)
			schedule(s, s->now + rng_range(&s->rng, 5000, 40000), SE_RECONFIG, 0, 0);
		break;
	}
}
