/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulated cluster (see sim.h). Cores are driven the way lib/node/node.c drives them:
 * messages are routed by group (acceptors, proposers, learners and the proposers' internal
 * learners, submit to the proposers), the internal learner's deliveries and closed instances
 * go to its proposer, a learning acceptor's learner tells its acceptor what it closed, and
 * ticks come at a quarter of the shortest timeout. Only time is simulated: every event is taken
 * from one queue in time order.
 */
#include "sim.h"

#include "checker.h"
#include "merged.h"
#include "mutant.h"
#include "network.h"
#include "rng.h"

#include <paxos/storage_backends.h>
#include <paxos/acceptor.h>
#include <paxos/learner.h>
#include <paxos/membership.h>
#include <paxos/proposer.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leadership.h"

/* Simulated time, in microseconds. Network delays are far below the timeouts, as on a LAN,
 * but large enough that messages overtake each other all the time. */
#define DELAY_MIN 50u
#define DELAY_MAX 2000u
#define PHASE_TIMEOUT 10000u
#define HOLE_CHECK 10000u
#define TICK (PHASE_TIMEOUT / 4) /* as lib/node/node.c: a quarter of the shortest timeout */
#define ACCEPTOR_REPEAT 20000u
#define SUBMIT_SPAN 200000u      /* clients submit their values during the first 200 ms */
#define RESUBMIT_AFTER 120000u   /* a value not delivered by then is submitted again */
#define FAULT_PHASE 400000u      /* faults happen before this; then the network heals */
#define LIVENESS_BUDGET 3000000u /* after healing, everything must be delivered this fast */
#define MAX_EVENTS 20000000u
#define RECOVERY_GRACE (10 * DELAY_MAX) /* a restarted proposer's wait before it answers */

#define LEARNER_WINDOW 64u
#define REPEAT_BATCH 16u
#define PENDING_SIZE 64u

enum endpoint_kind { EP_ACCEPTOR, EP_PROPOSER, EP_LEARNER, EP_CLIENT };

struct endpoint {
	struct sim *sim;
	enum endpoint_kind kind;
	uint32_t index;
	struct paxos_emitter emitter;
	uint32_t partition; /* the log of the core it is (one endpoint per core) */
};

enum sim_event_kind {
	SE_DELIVER,          /* target: receiver, arg: message slot */
	SE_TICK,             /* learner and proposer timers */
	SE_ACCEPTOR_TICK,    /* target: acceptor */
	SE_SUBMIT,           /* arg: value id */
	SE_RESUBMIT,         /* arg: value id */
	SE_FAULT,            /* inject the next fault */
	SE_ACCEPTOR_RESTART, /* target: acceptor */
	SE_PROPOSER_RESTART, /* target: proposer */
	SE_PARTITION_END,
	SE_DEMOTE, /* target: a proposer that led alongside another; arg: partition, or ALL */
	SE_HEAL,
	SE_PROPOSER_UNCUT, /* target: a proposer cut off by SIM_FAULT_PCUT */
	SE_PROPOSER_HEARS, /* target: a proposer deaf by SIM_FAULT_DEAF */
	SE_DOUBLE_CRASH,   /* SIM_FAULT_DOUBLE's crash, while the others are frozen */
	SE_RECONFIG,       /* --reconfig: the next membership change, or a step of one */
	SE_SNAPSHOT,       /* target: a merging learner restarts from a snapshot */
};

/* SE_DEMOTE's arg for a proposer that may lead in any partition. */
#define ALL_PARTITIONS UINT32_MAX

/* --reconfig: changes stop this long after the network healed, so that the last ones are
 * made, and the removed acceptors retired, in a healthy cluster too. */
#define RECONFIG_UNTIL (FAULT_PHASE + 300000u)
#define MAX_CONFIGS 64u

struct sim_acceptor {
	struct paxos_storage *st; /* survives crashes: a durable backend */
	struct paxos_acceptor *core;
	struct paxos_learner *learner;       /* learning acceptors: the node's learner, else NULL */
	struct paxos_membership *membership; /* its learner's, with --reconfig */
	bool present;                        /* started once, and not retired */
	bool up;
	bool cut;                /* partitioned away */
	bool lose_state;         /* its storage is lost: it restarts empty and recovers */
	paxos_time frozen_from;  /* stopped (SIGSTOP) from then */
	paxos_time frozen_until; /* until then: hears and sends nothing */
	paxos_iid floor;         /* what its last recovery set, kept with its storage */
	paxos_ballot fence;
	uint64_t generation; /* of its log, kept beside its storage whatever happens to it */
	bool amnesiac;       /* this life started without its state, so it recovers */
	bool served;         /* a life recovered and voted: the node kept its generation then */
	bool restored;       /* whether it held every decision below floor when it crashed */
	uint64_t writes;     /* its core's readies written since it started */
	bool crash_at_write; /* it crashes after its next write, before sending what it backs */
	struct endpoint ep;
	struct paxos_counters counters;
	struct paxos_counters learner_counters;
};

struct sim_proposer {
	struct paxos_proposer *core;
	struct paxos_learner *learner;       /* its internal learner */
	struct paxos_membership *membership; /* its learner's, with --reconfig */
	bool up;
	bool cut;       /* cut off with its learner: sends and hears nothing (SIM_FAULT_PCUT) */
	bool deaf;      /* with its learner: hears nothing, sends as before (SIM_FAULT_DEAF) */
	uint32_t epoch; /* what its durable epoch store holds: stored before a ballot left */
	/* With partitions, a follower is lean (lib/node/node.c): it drops the client values and
	 * the log's traffic, and its learner asks for nothing, until it takes over. */
	bool lean;
	paxos_iid heard_next; /* its learner's next instance, as its last heartbeat said */
	struct endpoint ep;
	struct paxos_counters counters;
	struct paxos_counters learner_counters;
};

struct sim_learner {
	struct paxos_learner *core;
	struct paxos_membership *membership; /* with --reconfig */
	struct endpoint ep;
	struct paxos_counters counters;
};

/* One partition's cores (each process hosts one of every partition, as a node group does) and
 * its checker. Process state (up, cut, frozen, present) is kept alike in every partition's
 * copy: the faults change it for all partitions at once. */
struct sim_partition {
	struct sim_acceptor acc[SIM_MAX_ACCEPTORS];
	struct sim_proposer prop[SIM_MAX_PROPOSERS];
	struct sim_learner lrn[SIM_MAX_LEARNERS];
	struct endpoint client;
	/* Who proposed what learner 0, the client's, delivered (leadership.h): a new leader
	 * sends the client's values again. */
	struct leadership client_leadership;
	struct checker check;
};

struct sim {
	struct sim_options o;
	/* The partition being worked on (use()): these point into part[cur]. */
	uint32_t cur;
	struct sim_acceptor *acc;
	struct sim_proposer *prop;
	struct sim_learner *lrn;
	struct checker *check;
	struct sim_partition part[SIM_MAX_PARTITIONS];
	struct merged merged; /* with partitions: the learners' merged order */
	bool merging;
	uint32_t segment; /* merge-segment, drawn from the seed */
	struct sim_rng rng;
	struct sim_pool pool;
	struct sim_queue queue;
	paxos_time now;
	uint32_t loss;
	bool healed;
	bool partitioned;
	uint32_t window, concurrency; /* the proposers', drawn from the seed */
	uint32_t submitted_distinct;
	uint64_t incarnations; /* the last incarnation number given to an acceptor */
	uint32_t amnesias;     /* acceptors that lost their storage during the run */
	uint32_t rolling_next; /* SIM_FAULT_ROLLING: the acceptor whose turn is next */
	bool doubled;          /* SIM_FAULT_DOUBLE happened: liveness is not required */
	/* Acceptor slots in use: ids 0 .. ids - 1 (o.acceptors, more once --reconfig added). */
	uint32_t ids;
	/* --reconfig: the history as the chosen values say (fed from the checker), every
	 * configuration it held and the change asked for but not chosen yet. */
	uint32_t alpha;
	struct paxos_membership *truth;
	uint32_t configs[MAX_CONFIGS];
	uint32_t config_count;
	bool issued;
	uint32_t issued_from, issued_members;
	/* The change asked for is of the proposer set (to issued_proposers; issued_members are
	 * the acceptors as they stay). */
	bool issued_kind_proposers;
	uint32_t issued_proposers;
	uint32_t proposer_changes; /* proposer set changes chosen in the run */
	/* Acceptors that lost their state in the run, were lost for good, or retired: in each
	 * configuration ever chosen they must stay a minority (see budget_ok). */
	uint32_t amnesia_mask, lost_mask, retired_mask;
	struct sim_result *r;
};

/* Makes partition p the one s->acc, s->prop, s->lrn and s->check are of; returns the one that
 * was. */
static uint32_t use(struct sim *s, uint32_t p)
{
	uint32_t was = s->cur;
	s->cur = p;
	s->acc = s->part[p].acc;
	s->prop = s->part[p].prop;
	s->lrn = s->part[p].lrn;
	s->check = &s->part[p].check;
	return was;
}

/* For each partition p, made current; partition 0 is current after the loop. */
#define EACH_PARTITION(s, p)                                                                       \
	for (uint32_t p = 0; p < (s)->o.partitions ? (use(s, p), true) : (use(s, 0), false); p++)

static void on_emit(void *ctx, enum paxos_group to, const struct paxos_message *m);

static void endpoint_init(struct sim *s, struct endpoint *ep, enum endpoint_kind kind,
			  uint32_t index)
{
	*ep = (struct endpoint){s, kind, index, {on_emit, ep}, s->cur};
}

static void trace(struct sim *s, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void trace(struct sim *s, int level, const char *fmt, ...)
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

static void hash_mix(struct sim *s, uint64_t x)
{
	for (int k = 0; k < 8; k++) {
		s->r->trace_hash ^= (x >> (8 * k)) & 0xff;
		s->r->trace_hash *= 0x100000001b3ull;
	}
}

static void schedule(struct sim *s, paxos_time at, enum sim_event_kind kind, uint32_t target,
		     uint32_t arg)
{
	if (queue_push(&s->queue, at, kind, target, arg) != 0)
		checker_fail(s->check, SIM_V_INTERNAL, "event queue: out of memory");
}

/* ---- the configurations (--reconfig) ---- */

/* The chosen values the checker saw, in instance order, applied to the history the cluster
 * agrees on: the configurations the sim's own decisions go by. */
static void truth_advance(struct sim *s)
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
static bool without_state(const struct sim_acceptor *a)
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
static bool budget_ok(const struct sim *s, uint32_t bad)
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
		if (m->type != PAXOS_MSG_ACCEPT)
			break;
		/* Learners hear the leader's accepts (their values); acceptors' learners get
		 * them with their acceptor's copy (deliver). */
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

static uint32_t proposer_view(const struct sim *s, uint32_t i)
{
	return s->o.learners + i;
}

static void on_learner_deliver(void *arg, paxos_iid iid, const struct paxos_value *v)
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
static void on_internal_deliver(void *arg, const struct paxos_learner_event *e)
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
static void on_internal_new_log(void *arg, const struct paxos_learner_event *e)
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

static void on_internal_closed(void *arg, const struct paxos_learner_event *e)
{
	struct endpoint *ep = arg;
	struct sim *s = ep->sim;
	paxos_proposer_closed(s->prop[ep->index].core, e->iid, &e->value, s->now, &ep->emitter);
}

/* What a learner decided goes to another core. */
typedef void (*learner_event_fn)(void *arg, const struct paxos_learner_event *e);

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
static void learner_step(struct sim *s, struct paxos_learner *l, const struct paxos_message *m,
			 struct endpoint *ep, learner_event_fn closed, learner_event_fn delivered,
			 learner_event_fn new_log)
{
	if (paxos_learner_step(l, m, s->now, &ep->emitter) != PAXOS_OK)
		checker_fail(s->check, SIM_V_INTERNAL, "a learner step was refused");
	learner_run(l, closed, delivered, new_log, ep);
}

/* With --reconfig every learner has a history of its own, from configuration 1 (*m). It
 * delivers from instance 1, or from start. */
static struct paxos_learner *learner_from(struct sim *s, paxos_instance_delivered_fn deliver,
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
	    .deliver = deliver,
	    .deliver_arg = ep,
	    .closed = closed,
	    .closed_arg = ep,
	    .new_log = deliver ? on_learner_new_log : NULL,
	    .new_log_arg = ep,
	};
	struct paxos_learner *l = paxos_learner_new(&o, counters);
	if (!l)
		checker_fail(s->check, SIM_V_INTERNAL, "paxos_learner_new failed");
	return l;
}

static struct paxos_learner *learner_new(struct sim *s, paxos_instance_delivered_fn deliver,
					 paxos_instance_closed_fn closed, struct endpoint *ep,
					 struct paxos_counters *counters,
					 struct paxos_membership **m)
{
	return learner_from(s, deliver, closed, ep, counters, m, 0);
}

/* A merging learner process restarts from a snapshot of what it applied: its merge position
 * says where each partition's core starts and where the merged order goes on (as
 * paxos_partitions_resume_merge() does); what it delivers must be the rest of the order the
 * others deliver. */
static void learner_snapshot_restart(struct sim *s, uint32_t i)
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
static bool proposer_start(struct sim *s, uint32_t i)
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

static void proposer_stop(struct sim_proposer *p)
{
	paxos_proposer_free(p->core);
	paxos_learner_free(p->learner);
	paxos_membership_free(p->membership);
	p->core = NULL;
	p->learner = NULL;
	p->membership = NULL;
	p->up = false;
}

static bool leads(const struct sim *s, uint32_t i)
{
	return s->prop[i].up && paxos_proposer_is_leader(s->prop[i].core);
}

static uint32_t leader_count(const struct sim *s)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->o.proposers; i++)
		n += leads(s, i);
	return n;
}

/* As the node does with partitions: a proposer that does not lead follows lean. */
static void lean_follow(struct sim *s, uint32_t i)
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
static void promote(struct sim *s, uint32_t i)
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

static void demote(struct sim *s, uint32_t i)
{
	if (!leads(s, i))
		return;
	trace(s, 1, "proposer %u stops leading", i);
	paxos_proposer_set_leader(s->prop[i].core, false, 0, s->now, &s->prop[i].ep.emitter);
	lean_follow(s, i);
}

/* --reconfig: whether proposer i is in the proposer set in force (as the cluster's log says
 * up to where the checker saw it chosen): the election picks among those only. */
static bool may_lead(const struct sim *s, uint32_t i)
{
	if (!s->truth)
		return true;
	paxos_iid next = paxos_membership_applied(s->truth) + 1;
	return (paxos_membership_proposers(s->truth, next) & (1u << i)) != 0;
}

/* A random proposer that is up and satisfies want_leader (UINT32_MAX: none); one to lead
 * (want_leader 0 or -1) is in the proposer set in force, and a new leader (0) is not deaf:
 * check-quorum keeps a proposer that hears no acceptor out of the election. */
static uint32_t pick_proposer(struct sim *s, int want_leader)
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
static void ensure_leader(struct sim *s)
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
static void handover_removed(struct sim *s)
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

static void acceptor_learn(struct sim *s, uint32_t i, const struct paxos_message *m)
{
	struct sim_acceptor *a = &s->acc[i];
	learner_step(s, a->learner, m, &a->ep, on_acceptor_closed, on_acceptor_deliver, NULL);
}

static bool acceptor_start(struct sim *s, uint32_t i, bool amnesiac)
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

static void acceptor_crash(struct sim *s, uint32_t i)
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

static void acceptor_restart(struct sim *s, uint32_t i)
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

/* ---- faults ---- */

static void use_random_partition(struct sim *s);

static void fault_crash_acceptor(struct sim *s)
{
	/* Acceptors of its own: the process serves one partition, which alone loses it. */
	if (s->o.own_acceptors)
		use_random_partition(s);
	uint32_t cand[SIM_MAX_ACCEPTORS], n = 0;
	for (uint32_t i = 0; i < s->ids; i++)
		if (s->acc[i].up)
			cand[n++] = i;
	if (n == 0)
		return;
	uint32_t i = cand[rng_range(&s->rng, 0, n - 1)];
	/* Half the crashes come between a write and the send of what it backs (acceptor_run). */
	if (rng_range(&s->rng, 0, 1) == 0) {
		trace(s, 1, "acceptor %u will crash after its next write", i);
		for (uint32_t p = 0; p < s->o.partitions; p++)
			if (!s->o.own_acceptors || p == s->cur)
				s->part[p].acc[i].crash_at_write = true;
		return;
	}
	if (s->o.own_acceptors) {
		trace(s, 1, "partition %u's own acceptor crashes", s->cur);
		acceptor_crash(s, i);
	} else {
		EACH_PARTITION(s, p)
		acceptor_crash(s, i);
	}
	schedule(s, s->now + rng_range(&s->rng, 5000, 80000), SE_ACCEPTOR_RESTART, i, 0);
}

static void fault_crash_proposer(struct sim *s)
{
	uint32_t i = pick_proposer(s, -1);
	if (i == UINT32_MAX)
		return;
	EACH_PARTITION(s, p)
	{
		trace(s, 1, "proposer %u crashes%s", i, leads(s, i) ? " (it led)" : "");
		proposer_stop(&s->prop[i]);
	}
	schedule(s, s->now + rng_range(&s->rng, 10000, 80000), SE_PROPOSER_RESTART, i, 0);
}

/* The partition a leadership fault hits: a random one (no draw with one partition). */
static void use_random_partition(struct sim *s)
{
	use(s, s->o.partitions > 1 ? (uint32_t)rng_range(&s->rng, 0, s->o.partitions - 1) : 0);
}

/* Sets acceptor i's cut flag in every partition: the network cuts the process off. With
 * acceptors of their own per partition, a cut takes partition only's (only < partitions). */
static void cut_acceptor_of(struct sim *s, uint32_t i, bool cut, uint32_t only)
{
	for (uint32_t p = 0; p < s->o.partitions; p++)
		if (only >= s->o.partitions || p == only)
			s->part[p].acc[i].cut = cut;
}

static void cut_acceptor(struct sim *s, uint32_t i, bool cut)
{
	cut_acceptor_of(s, i, cut, UINT32_MAX);
}

static void fault_move_leader(struct sim *s)
{
	use_random_partition(s);
	uint32_t i = pick_proposer(s, 0);
	if (i == UINT32_MAX)
		return;
	for (uint32_t k = 0; k < s->o.proposers; k++)
		if (k != i)
			demote(s, k);
	promote(s, i);
}

/* A second leader while the first still believes it leads, as after a false suspicion. */
static void fault_dual_leader(struct sim *s)
{
	use_random_partition(s);
	uint32_t old = pick_proposer(s, 1);
	uint32_t i = pick_proposer(s, 0);
	if (old == UINT32_MAX || i == UINT32_MAX)
		return;
	promote(s, i);
	schedule(s, s->now + rng_range(&s->rng, 5000, 60000), SE_DEMOTE, old, s->cur);
}

static void fault_partition(struct sim *s)
{
	if (s->partitioned || s->ids < 3)
		return;
	uint32_t k = (uint32_t)rng_range(&s->rng, 1, (s->ids - 1) / 2);
	s->partitioned = true;
	uint32_t only = UINT32_MAX;
	if (s->o.own_acceptors) { /* one partition's own acceptors are cut off */
		use_random_partition(s);
		only = s->cur;
	}
	for (uint32_t n = 0; n < k;) {
		uint32_t i = (uint32_t)rng_range(&s->rng, 0, s->ids - 1);
		if (!s->acc[i].cut) {
			cut_acceptor_of(s, i, true, only);
			trace(s, 1, "acceptor %u is partitioned away", i);
			n++;
		}
	}
	schedule(s, s->now + rng_range(&s->rng, 20000, 120000), SE_PARTITION_END, 0, 0);
}

static void end_partition(struct sim *s)
{
	if (s->partitioned)
		trace(s, 1, "partition ends");
	s->partitioned = false;
	for (uint32_t i = 0; i < s->ids; i++)
		cut_acceptor(s, i, false);
}

/* The leader (or any proposer) loses the network with its learner but keeps leading; another
 * proposer is promoted meanwhile, as the failure detector of the others would. */
/* With partitions, the leader (or any proposer) of a random partition is cut off: another
 * takes that partition over, and every other partition it led. */
static void fault_cut_proposer(struct sim *s)
{
	use_random_partition(s);
	uint32_t hit = s->cur;
	uint32_t i = pick_proposer(s, 1);
	if (i == UINT32_MAX)
		i = pick_proposer(s, -1);
	if (i == UINT32_MAX || s->prop[i].cut)
		return;
	uint32_t other = UINT32_MAX;
	for (uint32_t k = 0; k < s->o.proposers && other == UINT32_MAX; k++)
		if (k != i && s->prop[k].up && !s->prop[k].cut && may_lead(s, k))
			other = k;
	EACH_PARTITION(s, p)
	{
		bool led = leads(s, i);
		if (p == hit || led)
			trace(s, 1, "proposer %u is cut off%s", i,
			      led ? " (it leads, and goes on)" : "");
		s->prop[i].cut = true;
		if (other != UINT32_MAX && (p == hit || led))
			promote(s, other);
	}
	schedule(s, s->now + rng_range(&s->rng, 20000, 120000), SE_PROPOSER_UNCUT, i, 0);
}

static void uncut_proposer(struct sim *s, uint32_t i)
{
	if (!s->prop[i].cut)
		return;
	EACH_PARTITION(s, p)
	{
		trace(s, 1, "proposer %u is back%s", i,
		      leads(s, i) ? " and still believes it leads" : "");
		s->prop[i].cut = false;
	}
	/* Its heartbeats and the others' reach each other again: the higher id steps down. */
	schedule(s, s->now + rng_range(&s->rng, 5000, 60000), SE_DEMOTE, i, ALL_PARTITIONS);
}

/* A leading proposer (or any) goes deaf: what it sends still goes out, heartbeats included.
 * It keeps leading until its check-quorum step-down; the others elect another meanwhile,
 * which the oracle does at once here (the deaf one's last heartbeats, still heard, may delay
 * that in a real cluster: the two lead side by side either way). */
static void fault_deaf_proposer(struct sim *s)
{
	use_random_partition(s);
	uint32_t hit = s->cur;
	uint32_t i = pick_proposer(s, 1);
	if (i == UINT32_MAX)
		i = pick_proposer(s, -1);
	if (i == UINT32_MAX || s->prop[i].cut || s->prop[i].deaf)
		return;
	uint32_t other = UINT32_MAX;
	for (uint32_t k = 0; k < s->o.proposers && other == UINT32_MAX; k++)
		if (k != i && s->prop[k].up && !s->prop[k].cut && !s->prop[k].deaf &&
		    may_lead(s, k))
			other = k;
	EACH_PARTITION(s, p)
	{
		bool led = leads(s, i);
		if (p == hit || led)
			trace(s, 1, "proposer %u is deaf%s", i,
			      led ? " (it leads, and goes on sending)" : "");
		s->prop[i].deaf = true;
		if (other != UINT32_MAX && (p == hit || led))
			promote(s, other);
	}
	/* Its step-down for want of a quorum, then its hearing back. */
	schedule(s, s->now + rng_range(&s->rng, 5000, 60000), SE_DEMOTE, i, ALL_PARTITIONS);
	schedule(s, s->now + rng_range(&s->rng, 20000, 120000), SE_PROPOSER_HEARS, i, 0);
}

static void proposer_hears(struct sim *s, uint32_t i)
{
	EACH_PARTITION(s, p)
	{
		if (s->prop[i].deaf)
			trace(s, 1, "proposer %u hears again%s", i,
			      leads(s, i) ? " and still believes it leads" : "");
		s->prop[i].deaf = false;
	}
}

/* Acceptors without their state in some partition: down and to restart empty, recovering,
 * or recovered but not yet holding every decision below their floor
 * (paxos_acceptor_restored). */
static uint32_t amnesiacs(const struct sim *s)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->ids; i++) {
		bool without = false;
		for (uint32_t p = 0; p < s->o.partitions; p++)
			without |= without_state(&s->part[p].acc[i]);
		n += without;
	}
	return n;
}

/* An acceptor crashes and loses its storage: it comes back empty and recovers. At most a
 * minority of acceptors per run: an instance left open below the floors of more than that
 * may have been chosen by their earlier lives alone, and nobody could safely decide it. */
static void fault_amnesia(struct sim *s)
{
	if (amnesiacs(s) > 0 || (!s->o.reconfig && s->amnesias >= (s->o.acceptors - 1) / 2))
		return;
	uint32_t cand[SIM_MAX_ACCEPTORS], n = 0;
	for (uint32_t i = 0; i < s->ids; i++)
		if (s->acc[i].up && (!s->o.reconfig || budget_ok(s, 1u << i)))
			cand[n++] = i;
	if (n == 0)
		return;
	uint32_t i = cand[rng_range(&s->rng, 0, n - 1)];
	EACH_PARTITION(s, p)
	{
		acceptor_crash(s, i);
		s->acc[i].lose_state = true;
	}
	s->amnesias++;
	s->amnesia_mask |= 1u << i;
	trace(s, 1, "acceptor %u lost its storage", i);
	schedule(s, s->now + rng_range(&s->rng, 5000, 80000), SE_ACCEPTOR_RESTART, i, 0);
}

/* --reconfig, as the network heals: up to three acceptors lost for good, each only if the
 * budget allows it (budget_ok). */
static void lose_within_budget(struct sim *s)
{
	uint32_t k = (uint32_t)rng_range(&s->rng, 1, 3);
	for (uint32_t tries = 0; k > 0 && tries < 4 * SIM_MAX_ACCEPTORS; tries++) {
		uint32_t i = (uint32_t)rng_range(&s->rng, 0, s->ids - 1);
		if (!s->acc[i].present || s->acc[i].cut || !budget_ok(s, 1u << i))
			continue;
		s->acc[i].cut = true;
		s->lost_mask |= 1u << i;
		trace(s, 1, "acceptor %u is lost for good", i);
		k--;
	}
}

/* The next acceptor of a rolling restart loses its storage, once none is without it. */
static void fault_rolling(struct sim *s)
{
	if (s->o.acceptors < 3 || amnesiacs(s) > 0)
		return;
	/* As an operator does: the next one only while every acceptor is up and holds its
	 * state (each says "restored"), in every partition. */
	for (uint32_t p = 0; p < s->o.partitions; p++)
		for (uint32_t k = 0; k < s->ids; k++)
			if (s->part[p].acc[k].present && !s->part[p].acc[k].up)
				return;
	uint32_t i = s->rolling_next % s->ids;
	while (!s->acc[i].present) /* a retired one: the next id */
		i = ++s->rolling_next % s->ids;
	s->rolling_next++;
	/* Not while retired or lost acceptors leave it too few others to recover with. */
	if (s->o.reconfig && !budget_ok(s, 1u << i))
		return;
	EACH_PARTITION(s, p)
	{
		acceptor_crash(s, i);
		s->acc[i].lose_state = true;
	}
	trace(s, 1, "rolling restart: acceptor %u lost its storage", i);
	schedule(s, s->now + rng_range(&s->rng, 2000, 40000), SE_ACCEPTOR_RESTART, i, 0);
}

/* The acceptors a double crash takes: the first quorum of ids (of the newest configuration's
 * members, with --reconfig), one bit each. */
static uint32_t double_quorum(const struct sim *s)
{
	uint32_t members =
	    s->truth ? paxos_membership_latest(s->truth)->members : (1u << s->o.acceptors) - 1;
	uint32_t quorum = paxos_membership_quorum_of(members), taken = 0;
	for (uint32_t rest = members; rest && quorum; rest &= rest - 1, quorum--)
		taken |= 1u << __builtin_ctz(rest);
	return taken;
}

/* A double crash, first step: the acceptors outside the quorum it will take stop (SIGSTOP),
 * long enough for the others to go on without them. */
static void fault_double(struct sim *s)
{
	if (s->doubled || s->o.acceptors < 3)
		return;
	s->doubled = true;
	paxos_time crash = s->now + rng_range(&s->rng, 10000, 60000);
	for (uint32_t i = 0; i < s->ids; i++) {
		if (!s->acc[i].present || (double_quorum(s) & (1u << i)))
			continue;
		paxos_time until = crash + rng_range(&s->rng, 10000, 100000);
		for (uint32_t p = 0; p < s->o.partitions; p++) {
			s->part[p].acc[i].frozen_from = s->now;
			s->part[p].acc[i].frozen_until = until;
		}
		trace(s, 1, "acceptor %u is stopped until %.3f ms", i, (double)until / 1000.0);
	}
	schedule(s, crash, SE_DOUBLE_CRASH, 0, 0);
}

/* The second step: a quorum of acceptors and every proposer crash at once, the acceptors
 * losing their storage; all restart soon after, before the stopped ones go on. A change since
 * the first step may put a stopped one in that quorum: killed, it restarts with the others
 * (what was sent to it meanwhile still comes, late). Left stopped until after they recovered,
 * it would be a second loss of state after theirs, which the acceptors cannot see: instances
 * no quorum can close again while none of them says so. */
static void double_crash(struct sim *s)
{
	uint32_t taken = double_quorum(s);
	for (uint32_t i = 0; i < s->ids; i++) {
		if (!(taken & (1u << i)))
			continue;
		EACH_PARTITION(s, p)
		{
			if (s->acc[i].up)
				acceptor_crash(s, i);
			s->acc[i].lose_state = true;
			if (s->acc[i].frozen_until > s->now)
				s->acc[i].frozen_until = s->now;
		}
		trace(s, 1, "double crash: acceptor %u lost its storage", i);
		schedule(s, s->now + rng_range(&s->rng, 1000, 8000), SE_ACCEPTOR_RESTART, i, 0);
	}
	for (uint32_t i = 0; i < s->o.proposers; i++)
		if (s->prop[i].up) {
			trace(s, 1, "double crash: proposer %u crashes", i);
			EACH_PARTITION(s, p)
			proposer_stop(&s->prop[i]);
			schedule(s, s->now + rng_range(&s->rng, 1000, 8000), SE_PROPOSER_RESTART, i,
				 0);
		}
}

/* A whole cluster restarted (SIM_FAULT_WHOLE): every acceptor loses its storage (keeping its
 * generation, as the node keeps it beside the store) and every proposer restarts. */
static void fault_whole(struct sim *s)
{
	trace(s, 1, "the whole cluster restarts");
	for (uint32_t i = 0; i < s->ids; i++) {
		if (s->acc[i].up)
			acceptor_crash(s, i);
		s->acc[i].lose_state = true;
		schedule(s, s->now + rng_range(&s->rng, 1000, 20000), SE_ACCEPTOR_RESTART, i, 0);
	}
	for (uint32_t i = 0; i < s->o.proposers; i++) {
		if (s->prop[i].up)
			proposer_stop(&s->prop[i]);
		schedule(s, s->now + rng_range(&s->rng, 1000, 20000), SE_PROPOSER_RESTART, i, 0);
	}
}

/*
 * When the network heals: a random minority of acceptors is lost for good. An acceptor that
 * lost its storage counts against that minority: it needs answers from acceptors - quorum + 1
 * others to recover, and instances below its floor that were still open need a quorum of the
 * others (its earlier life's vote may have been part of a choice nobody else remembers).
 */
static void lose_minority(struct sim *s)
{
	if (s->o.reconfig) {
		lose_within_budget(s);
		return;
	}
	uint32_t budget = (s->o.acceptors - 1) / 2;
	if (s->o.acceptors < 3 || budget <= s->amnesias)
		return;
	uint32_t k = (uint32_t)rng_range(&s->rng, 1, budget - s->amnesias);
	for (uint32_t n = 0; n < k;) {
		uint32_t i = (uint32_t)rng_range(&s->rng, 0, s->o.acceptors - 1);
		if (!s->acc[i].cut) {
			cut_acceptor(s, i, true);
			trace(s, 1, "acceptor %u is lost for good", i);
			n++;
		}
	}
}

static void inject_fault(struct sim *s)
{
	use(s, 0); /* process state is alike in every partition */
	uint32_t kinds[SIM_FAULT_KINDS], n = 0;
	for (uint32_t k = 0; k < SIM_FAULT_KINDS; k++)
		if (s->o.faults & (1u << k))
			kinds[n++] = 1u << k;
	if (n > 0) {
		switch (kinds[rng_range(&s->rng, 0, n - 1)]) {
		case SIM_FAULT_CRASH:
			fault_crash_acceptor(s);
			break;
		case SIM_FAULT_PCRASH:
			fault_crash_proposer(s);
			break;
		case SIM_FAULT_LEADER:
			fault_move_leader(s);
			break;
		case SIM_FAULT_DUAL:
			fault_dual_leader(s);
			break;
		case SIM_FAULT_PARTITION:
			fault_partition(s);
			break;
		case SIM_FAULT_PCUT:
			fault_cut_proposer(s);
			break;
		case SIM_FAULT_AMNESIA:
			fault_amnesia(s);
			break;
		case SIM_FAULT_ROLLING:
			fault_rolling(s);
			break;
		case SIM_FAULT_DOUBLE:
			fault_double(s);
			break;
		case SIM_FAULT_DEAF:
			fault_deaf_proposer(s);
			break;
		case SIM_FAULT_WHOLE:
			fault_whole(s);
			break;
		default: /* SIM_FAULT_LOSE acts when the network heals */
			break;
		}
	}
	EACH_PARTITION(s, p)
	ensure_leader(s);
	paxos_time next = s->now + rng_range(&s->rng, 5000, 40000);
	if (next < FAULT_PHASE)
		schedule(s, next, SE_FAULT, 0, 0);
}

/* The fault phase is over: everything restarts, the network stops losing messages and one
 * proposer leads from now on. */
static void heal(struct sim *s)
{
	trace(s, 1, "the network heals");
	s->healed = true;
	s->loss = 0;
	end_partition(s);
	EACH_PARTITION(s, p)
	for (uint32_t i = 0; i < s->ids; i++)
		acceptor_restart(s, i);
	if (s->o.faults & SIM_FAULT_LOSE)
		lose_minority(s);
	EACH_PARTITION(s, p)
	{
		for (uint32_t i = 0; i < s->o.proposers; i++)
			s->prop[i].cut = s->prop[i].deaf = false;
		for (uint32_t i = 0; i < s->o.proposers; i++)
			if (!s->prop[i].up) {
				trace(s, 1, "proposer %u restarts", i);
				if (proposer_start(s, i))
					checker_view_reset(s->check, proposer_view(s, i));
			}
		/* The leader it has keeps leading; a partition without one gets its own. */
		uint32_t keep = UINT32_MAX;
		for (uint32_t i = 0; i < s->o.proposers && keep == UINT32_MAX; i++)
			if (leads(s, i) && may_lead(s, i))
				keep = i;
		for (uint32_t i = 0; i < s->o.proposers && keep == UINT32_MAX; i++)
			if (may_lead(s, (p + i) % s->o.proposers))
				keep = (p + i) % s->o.proposers;
		for (uint32_t i = 0; i < s->o.proposers; i++)
			if (i != keep)
				demote(s, i);
		promote(s, keep);
		for (uint32_t i = 0; i < s->o.proposers; i++)
			lean_follow(s, i);
	}
}

/* ---- membership changes (--reconfig) ---- */

/* A removed acceptor stops for good once the change is in force and the budget allows. */
static void retire_removed(struct sim *s)
{
	if (paxos_membership_pending(s->truth) || s->issued)
		return;
	uint32_t members = paxos_membership_latest(s->truth)->members;
	for (uint32_t i = 0; i < s->ids; i++) {
		if (!s->acc[i].present || (members & (1u << i)) || !budget_ok(s, 1u << i))
			continue;
		trace(s, 1, "acceptor %u, removed, stops for good", i);
		if (s->acc[i].up)
			acceptor_crash(s, i);
		s->acc[i].present = false;
		s->acc[i].lose_state = false;
		s->retired_mask |= 1u << i;
	}
}

/* A new acceptor id: it starts empty (it never voted), before the change that adds it. */
static uint32_t add_acceptor(struct sim *s)
{
	uint32_t i = s->ids++;
	struct sim_acceptor *a = &s->acc[i];
	endpoint_init(s, &a->ep, EP_ACCEPTOR, i);
	a->st = paxos_storage_memory_new();
	if (!a->st || !acceptor_start(s, i, false))
		return UINT32_MAX;
	trace(s, 1, "acceptor %u starts, to be added", i);
	schedule(s, s->now + rng_range(&s->rng, 0, ACCEPTOR_REPEAT - 1), SE_ACCEPTOR_TICK, i, 0);
	return i;
}

/* Asks the leader to propose the change asked for (again after a leader change). */
static void issue(struct sim *s)
{
	uint32_t l = pick_proposer(s, 1);
	if (l == UINT32_MAX || paxos_proposer_change_pending(s->prop[l].core))
		return;
	if (s->issued_kind_proposers) {
		int rc = paxos_proposer_change_proposers(s->prop[l].core, s->issued_proposers,
							 s->now, &s->prop[l].ep.emitter);
		trace(s, 1, "proposer %u proposes proposers 0x%x: %s", l, s->issued_proposers,
		      paxos_strerror(rc));
		return;
	}
	int rc = paxos_proposer_change_membership(s->prop[l].core, s->issued_members, s->now,
						  &s->prop[l].ep.emitter);
	trace(s, 1, "proposer %u proposes members 0x%x: %s", l, s->issued_members,
	      paxos_strerror(rc));
}

/* A random member of members, one bit. */
static uint32_t pick_member(struct sim *s, uint32_t members)
{
	uint32_t n = (uint32_t)__builtin_popcount(members);
	uint32_t k = (uint32_t)rng_range(&s->rng, 0, n - 1);
	while (k--)
		members &= members - 1;
	return members & -members;
}

enum reconfig_op {
	OP_ADD,
	OP_REMOVE,
	OP_REPLACE,
	OP_GROW,
	OP_SHRINK,
	OP_ADD_PROPOSER,
	OP_REMOVE_PROPOSER,
	OP_COUNT
};

/* A change of the proposer set: add one that is not a member, or remove one of two or more
 * (never the last). Returns whether one was asked for. */
static bool reconfigure_proposers(struct sim *s, enum reconfig_op op)
{
	const struct paxos_configuration *c = paxos_membership_latest(s->truth);
	uint32_t all = (1u << s->o.proposers) - 1, have = c->proposers & all, next;
	if (op == OP_ADD_PROPOSER) {
		if (have == all)
			return false;
		next = have | pick_member(s, all & ~have);
	} else {
		if (__builtin_popcount(have) < 2)
			return false;
		next = have & ~pick_member(s, have);
	}
	s->issued = true;
	s->issued_kind_proposers = true;
	s->issued_members = c->members;
	s->issued_proposers = next;
	s->issued_from = c->id;
	trace(s, 1, "change asked: proposers 0x%x to 0x%x", have, next);
	issue(s);
	return true;
}

/* The next step: retire what was removed, keep the change asked for going, or ask for a new
 * one: add, remove or replace (a new id) one acceptor, grow or shrink by two. */
static void reconfigure(struct sim *s)
{
	truth_advance(s);
	retire_removed(s);
	if (s->issued) {
		issue(s);
		return;
	}
	if (paxos_membership_pending(s->truth) || s->config_count >= MAX_CONFIGS - 1)
		return;
	uint32_t members = paxos_membership_latest(s->truth)->members;
	uint32_t n = (uint32_t)__builtin_popcount(members);
	uint32_t least = s->o.acceptors < 3 ? s->o.acceptors : 3;
	uint32_t fresh = SIM_MAX_ACCEPTORS - s->ids;
	enum reconfig_op op = (enum reconfig_op)rng_range(&s->rng, 0, OP_COUNT - 1);
	uint32_t next = members;
	s->issued_kind_proposers = false;
	switch (op) {
	case OP_ADD_PROPOSER:
	case OP_REMOVE_PROPOSER:
		reconfigure_proposers(s, op);
		return;
	case OP_ADD:
	case OP_REPLACE:
	case OP_GROW: {
		uint32_t adds = op == OP_GROW ? 2 : 1;
		if (fresh < adds || n + adds - (op == OP_REPLACE) > SIM_MAX_ACCEPTORS)
			return;
		if (op == OP_REPLACE) {
			next &= ~pick_member(s, next);
			if (!next)
				return;
		}
		for (uint32_t k = 0; k < adds; k++) {
			uint32_t i = add_acceptor(s);
			if (i == UINT32_MAX)
				return;
			next |= 1u << i;
		}
		break;
	}
	case OP_REMOVE:
	case OP_SHRINK: {
		uint32_t removes = op == OP_SHRINK ? 2 : 1;
		if (n < least + removes)
			return;
		for (uint32_t k = 0; k < removes; k++)
			next &= ~pick_member(s, next);
		break;
	}
	default:
		return;
	}
	s->issued = true;
	s->issued_members = next;
	if (!budget_ok(s, 0)) {
		s->issued = false; /* the new configuration would have no quorum of sound ones */
		return;
	}
	s->issued_from = paxos_membership_latest(s->truth)->id;
	s->issued_members = next;
	trace(s, 1, "change asked: members 0x%x to 0x%x", members, next);
	issue(s);
}

/* ---- clients ---- */

/* The partition a value goes to: round-robin by id. */
static uint32_t value_partition(const struct sim *s, uint32_t id)
{
	return id % s->o.partitions;
}

static void submit(struct sim *s, uint32_t id)
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
static void on_client_deliver(void *arg, const struct paxos_learner_event *e)
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
static void maybe_resubmit(struct sim *s, uint32_t id)
{
	use(s, value_partition(s, id));
	if (s->check->views[0].count[id] == 0)
		submit(s, id);
}

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

static void deliver(struct sim *s, uint32_t to, uint32_t slot)
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
		if (g == PAXOS_GROUP_LEARNERS || m->type == PAXOS_MSG_ACCEPT) {
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
static bool complete(const struct sim *s)
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
static void report_liveness(struct sim *s)
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

static void step(struct sim *s, const struct sim_event *e)
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

/* ---- set-up and the run ---- */

static bool build(struct sim *s)
{
	s->ids = s->o.acceptors;
	if (s->o.reconfig) {
		s->truth = paxos_membership_create((1u << s->o.acceptors) - 1,
						   (1u << s->o.proposers) - 1, s->alpha);
		if (!s->truth)
			return false;
		s->configs[s->config_count++] = (1u << s->o.acceptors) - 1;
	}
	EACH_PARTITION(s, part)
	{
		endpoint_init(s, &s->part[part].client, EP_CLIENT, 0);
		for (uint32_t i = 0; i < s->o.acceptors; i++) {
			struct sim_acceptor *a = &s->acc[i];
			endpoint_init(s, &a->ep, EP_ACCEPTOR, i);
			a->st = paxos_storage_memory_new();
			if (!a->st || !acceptor_start(s, i, false))
				return false;
		}
		for (uint32_t i = 0; i < s->o.proposers; i++) {
			struct sim_proposer *p = &s->prop[i];
			endpoint_init(s, &p->ep, EP_PROPOSER, i);
			if (!proposer_start(s, i))
				return false;
		}
		for (uint32_t i = 0; i < s->o.learners; i++) {
			struct sim_learner *l = &s->lrn[i];
			endpoint_init(s, &l->ep, EP_LEARNER, i);
			l->core = learner_new(s, on_learner_deliver, NULL, &l->ep, &l->counters,
					      &l->membership);
			if (!l->core)
				return false;
		}
	}
	return true;
}

static void teardown(struct sim *s)
{
	for (uint32_t p = 0; p < SIM_MAX_PARTITIONS; p++) {
		struct sim_partition *q = &s->part[p];
		for (uint32_t i = 0; i < SIM_MAX_ACCEPTORS; i++) {
			paxos_acceptor_free(q->acc[i].core);
			paxos_learner_free(q->acc[i].learner);
			paxos_membership_free(q->acc[i].membership);
			paxos_storage_destroy(q->acc[i].st);
		}
		for (uint32_t i = 0; i < SIM_MAX_PROPOSERS; i++)
			proposer_stop(&q->prop[i]);
		for (uint32_t i = 0; i < SIM_MAX_LEARNERS; i++) {
			paxos_learner_free(q->lrn[i].core);
			paxos_membership_free(q->lrn[i].membership);
		}
		checker_destroy(&q->check);
	}
	merged_destroy(&s->merged);
	paxos_membership_free(s->truth);
	pool_destroy(&s->pool);
	queue_destroy(&s->queue);
}

static bool options_valid(const struct sim_options *o)
{
	return o->acceptors >= 1 && o->acceptors <= SIM_MAX_ACCEPTORS && o->proposers >= 1 &&
	       o->proposers <= SIM_MAX_PROPOSERS && o->learners >= 1 &&
	       o->learners <= SIM_MAX_LEARNERS && o->loss <= 100 && o->dup <= 100 &&
	       o->accept_loss <= 100 && o->values >= 1 && o->values <= SIM_MAX_VALUES &&
	       (o->faults & ~(SIM_FAULT_EVERY | SIM_FAULT_WHOLE)) == 0 &&
	       (unsigned)o->mutant < SIM_MUTANT_COUNT && o->partitions >= 1 &&
	       o->partitions <= SIM_MAX_PARTITIONS && (o->partitions == 1 || !o->reconfig) &&
	       (!(o->faults & SIM_FAULT_WHOLE) || (o->partitions == 1 && !o->reconfig));
}

/* The initial events: timers with random phases, the clients' submissions, faults, healing. */
static void plan(struct sim *s)
{
	schedule(s, rng_range(&s->rng, 0, TICK - 1), SE_TICK, 0, 0);
	for (uint32_t i = 0; i < s->o.acceptors; i++)
		schedule(s, rng_range(&s->rng, 0, ACCEPTOR_REPEAT - 1), SE_ACCEPTOR_TICK, i, 0);
	for (uint32_t id = 0; id < s->o.values; id++)
		schedule(s, rng_range(&s->rng, 0, SUBMIT_SPAN), SE_SUBMIT, 0, id);
	if (s->o.faults)
		schedule(s, rng_range(&s->rng, 5000, 40000), SE_FAULT, 0, 0);
	schedule(s, FAULT_PHASE, SE_HEAL, 0, 0);
	if (s->o.reconfig)
		schedule(s, rng_range(&s->rng, 5000, 60000), SE_RECONFIG, 0, 0);
	/* Merging learners restart from snapshots now and then, during the faults or after. */
	for (uint32_t i = 0; s->merging && i < s->o.learners; i++)
		if (rng_percent(&s->rng, 50)) {
			merged_arm(&s->merged, i, (uint32_t)rng_range(&s->rng, 1, 40));
			schedule(s, rng_range(&s->rng, 10000, FAULT_PHASE + 100000), SE_SNAPSHOT, i,
				 0);
		}
}

/* Whether an acceptor still recovers: what a lost quorum chose may be known to none. */
static bool withheld_for_lost_quorum(const struct sim *s)
{
	for (uint32_t p = 0; p < s->o.partitions; p++)
		for (uint32_t i = 0; i < s->ids; i++)
			if (s->part[p].acc[i].up &&
			    paxos_acceptor_recovering(s->part[p].acc[i].core))
				return true;
	return false;
}

/* The first violation found: a partition's checker's, or the merged order's. */
static const char *violation(const struct sim *s, enum sim_violation *v)
{
	for (uint32_t p = 0; p < s->o.partitions; p++)
		if (s->part[p].check.violation != SIM_OK) {
			*v = s->part[p].check.violation;
			return s->part[p].check.message;
		}
	*v = s->merged.violation;
	return s->merged.message;
}

static bool violated(const struct sim *s)
{
	enum sim_violation v;
	violation(s, &v);
	return v != SIM_OK;
}

static void run(struct sim *s)
{
	/* Leaders spread: partition p is led by proposer p mod proposers at first. */
	EACH_PARTITION(s, p)
	{
		promote(s, p % s->o.proposers);
		for (uint32_t i = 0; i < s->o.proposers; i++)
			lean_follow(s, i);
	}
	plan(s);
	struct sim_event e;
	uint64_t events = 0;
	while (!violated(s) && queue_pop(&s->queue, &e)) {
		s->now = e.at;
		step(s, &e);
		if (++events > MAX_EVENTS) {
			use(s, 0);
			checker_fail(s->check, SIM_V_INTERNAL, "more than %u events", MAX_EVENTS);
			break;
		}
		if (e.kind != SE_TICK)
			continue;
		/* Checked on ticks only: the scan is linear in the values. */
		truth_advance(s);
		/* A leader a change removed opens nothing from where the change is in force
		 * (admission.c): like the node once its learner got there, it hands over. */
		handover_removed(s);
		if (complete(s))
			break;
		if (s->now > FAULT_PHASE + LIVENESS_BUDGET) {
			/* After a double crash a stall is allowed, but only one the acceptors
			 * explain: some still recover, withholding their votes. */
			if (!s->doubled || !withheld_for_lost_quorum(s))
				report_liveness(s);
			break;
		}
	}
}

enum sim_violation sim_run(const struct sim_options *o, struct sim_result *r)
{
	memset(r, 0, sizeof(*r));
	r->trace_hash = 0xcbf29ce484222325ull;
	if (!o || !options_valid(o)) {
		r->violation = SIM_V_INTERNAL;
		snprintf(r->message, sizeof(r->message), "invalid simulation options");
		return r->violation;
	}
	struct sim *s = calloc(1, sizeof(*s));
	if (!s) {
		r->violation = SIM_V_INTERNAL;
		snprintf(r->message, sizeof(r->message), "out of memory");
		return r->violation;
	}
	s->o = *o;
	s->r = r;
	use(s, 0);
	s->loss = o->loss;
	rng_seed(&s->rng, o->seed);
	/* Proposer tuning varies with the seed too: FIFO, pipelined, tiny and larger windows. */
	s->window = (uint32_t)rng_range(&s->rng, 1, 16);
	s->concurrency = (uint32_t)rng_range(&s->rng, 1, s->window);
	/* Alpha below the window makes the leader wait for configurations; above it, learners
	 * keep votes of instances whose configuration they do not know yet. */
	if (o->reconfig)
		s->alpha = (uint32_t)rng_range(&s->rng, 1, 3 * s->window);
	/* Partitions: merge-segment 1..4 instances. */
	s->merging = o->partitions > 1;
	if (s->merging)
		s->segment = (uint32_t)rng_range(&s->rng, 1, 4);
	pool_init(&s->pool);
	queue_init(&s->queue);
	bool ready = true;
	const struct checker *logs[SIM_MAX_PARTITIONS];
	EACH_PARTITION(s, p)
	{
		logs[p] = s->check;
		ready &= checker_init(s->check, o->values, o->learners + o->proposers,
				      o->proposers) == 0;
		/* Duplicates are bounded while no leader fails (a planned removal hands over
		 * cleanly); after a leader's failure or a cut, the next one may propose values
		 * its predecessor already got chosen (at-least-once). */
		/* Skips also bring a chosen membership change into force (no-ops). */
		s->check->skips = o->skip_idle_us != 0 || o->reconfig || o->partitions > 1;
		s->check->reconfig = o->reconfig;
		s->check->integrity =
		    (o->faults & (SIM_FAULT_LEADER | SIM_FAULT_DUAL | SIM_FAULT_PCUT |
				  SIM_FAULT_WHOLE | SIM_FAULT_DEAF)) == 0 &&
		    (o->proposers == 1 || (o->faults & SIM_FAULT_PCRASH) == 0);
	}
	if (s->merging && ready) {
		ready = merged_init(&s->merged, o->partitions, s->segment, o->learners, o->values,
				    logs) == 0;
		s->merged.broken = o->mutant == SIM_MUTANT_MERGE_SKIP;
	}
	if (!ready)
		checker_fail(s->check, SIM_V_INTERNAL, "out of memory");
	else if (build(s))
		run(s);
	else
		checker_fail(s->check, SIM_V_INTERNAL, "cannot build the cluster");
	enum sim_violation v;
	const char *message = violation(s, &v);
	r->violation = v;
	snprintf(r->message, sizeof(r->message), "%s", message);
	for (uint32_t p = 0; p < o->partitions; p++) {
		r->deliveries += s->part[p].check.deliveries;
		r->duplicates += s->part[p].check.duplicates;
	}
	r->merged = merged_total(&s->merged);
	r->end_time = s->now;
	r->reconfigurations = s->config_count ? s->config_count - 1 : 0;
	r->proposer_reconfigurations = s->proposer_changes;
	if (o->verbose)
		fprintf(stderr,
			"sim: window %u, concurrency %u, alpha %u, merge-segment %u, %u changes; "
			"%" PRIu64 " messages, %" PRIu64 " deliveries (%" PRIu64
			" duplicates), %" PRIu64 " submissions, ended at %.1f ms: %s%s%s\n",
			s->window, s->concurrency, s->alpha, s->segment, r->reconfigurations,
			r->messages, r->deliveries, r->duplicates, r->submissions,
			(double)s->now / 1000.0, sim_violation_name(r->violation),
			r->violation ? ": " : "", r->message);
	teardown(s);
	free(s);
	return r->violation;
}
