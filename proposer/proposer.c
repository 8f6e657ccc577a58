/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proposer core (thesis 3.5): a window of instance state machines over a preallocated
 * array (3.5.4), phase 1 pre-executed for the whole window (3.7.1), at most `concurrency`
 * instances in phase 2 and client values assigned lowest instance first (3.7.2). The
 * functions here only turn inputs into instance events; instance.c decides.
 *
 * Thesis 3.5: "Its state consists of a window of instances. The lower bound for this window is
 * the lowest instance not yet closed". Here it is the lowest not yet delivered (first), as in
 * 3.5.4, so that a closed instance behind a hole keeps its record until its delivery (D).
 * Thesis 3.5.4: "Instances in the window are found with a direct memory access in the array
 * at position iid (mod 100)." (slot_of, with the window for 100).
 */
#include <paxos/proposer.h>

#include <stdlib.h>
#include <string.h>

#include "ballot.h"
#include "batch.h"
#include "congestion.h"
#include "instance.h"
#include "paxos_assert.h"
#include "pending.h"
#include "repair.h"
#include "settled.h"

/* Dropped values a leader names between two of its readies (one read of the node): a few
 * refusals' worth; more go unnamed, and their submitters send them again on a timeout. */
#define REFUSED_HASHES (8 * PAXOS_REFUSED_HASHES_MAX)

struct paxos_proposer {
	struct paxos_proposer_options o;
	struct paxos_counters *counters;
	struct paxos_counters own_counters; /* when the caller passes none */
	struct pending pending;
	struct settled settled; /* delivered before they reached us */
	struct instance_ctx ctx;
	struct repairs repairs; /* decided instances run again for stalled learners */
	paxos_ballot highest;   /* the highest ballot prepared with (ctx.highest) */
	paxos_iid highest_iid;  /* the highest instance an accept went to (ctx.highest_iid) */
	paxos_ballot to_beat;   /* the highest ballot a reject named (ctx.to_beat) */
	struct instance *slots; /* instance iid lives in slots[iid % window] */
	uint8_t *values;        /* v1 and v2 buffers of every slot */
	uint32_t *scratch;      /* batch_limit entries for the instances (requeue) */
	uint32_t batch_limit;   /* >= 1 */
	uint32_t in_flight_max; /* client values the instances may hold at once */
	paxos_iid first;        /* lowest instance not delivered */
	/* How many instances phase 2 may hold now: at most o.concurrency (congestion.h). */
	struct congestion congestion;
	/* Running totals over the live instances, kept by fire() (see account), so that the
	 * per-value checks of may_assign cost O(1) rather than a scan of the window. */
	uint32_t in_phase2; /* instance_in_phase2 */
	uint32_t closed;    /* state CLOSED, and opened by us (see may_assign) */
	uint32_t held;      /* client values held (has_v2 && cv) */
	/* No live instance below it lacks a value unless closed (the ordering rule of 3.7.2).
	 * While we lead, an instance that has a value or is closed keeps it until it leaves the
	 * window, so the frontier only moves up; it is advanced lazily. */
	paxos_iid frontier;
	bool leader;
	uint32_t epoch;        /* highest epoch our ballots may be in: o.epoch, or one raised to */
	uint32_t epoch_stored; /* the highest the driver said is durable (paxos_proposer_advance) */
	bool started;          /* started_at is set: the first call that told the time */
	paxos_time started_at;
	struct rtt_estimate rtt[2]; /* phase 1, phase 2: with adaptive timeouts */
	bool skip_wanted;           /* ctx.skip_wanted: see want_skip */
	paxos_time last_proposed;   /* when an instance last got a value or a skip to propose */
	/* With a membership: some live instance waits for its configuration (start_window). */
	bool config_wait;
	/* ctx.values_from: a leader that took over at a proposer change (handover_at). */
	paxos_iid values_from;
	/* Since we took over, client values wait until phase 1 finished below it (took_over). */
	paxos_iid takeover_end;
	struct instance_command command; /* ctx.command: paxos_proposer_change_membership */
	/* Client values dropped (pending list full) that no refusal told of yet, and the hashes
	 * of the first REFUSED_HASHES of them (refuse). */
	uint32_t unrefused;
	uint32_t refused_named;
	uint64_t refused_hash[REFUSED_HASHES];
	uint8_t refused_bytes[8 * PAXOS_REFUSED_HASHES_MAX]; /* one message's, little-endian */
};

/*
 * Values in flight (flow control, thesis 4.6.1): the instances hold at most this many client
 * values, max(window, pending_size) but no more than window full batches. The pending list has
 * room for them on top of the clients' pending_size, so giving them all back never fails.
 * With batching off it is the window, one value per instance, as before batching.
 */
static uint32_t in_flight_max(const struct paxos_proposer_options *o)
{
	uint64_t batch = o->batch_limit ? o->batch_limit : 1;
	uint64_t most = o->pending_size > o->window ? o->pending_size : o->window;
	uint64_t full = (uint64_t)o->window * batch;
	return (uint32_t)(most < full ? most : full);
}

static bool options_valid(const struct paxos_proposer_options *o)
{
	return o->id < PAXOS_MAX_PROPOSERS && o->epoch < PAXOS_PLAUSIBLE_EPOCHS &&
	       o->acceptors >= 1 && o->acceptors <= PAXOS_MAX_ACCEPTORS && o->window >= 1 &&
	       o->concurrency >= 1 && o->pending_size >= 1 && o->max_value > PAXOS_BATCH_HEADER &&
	       o->pending_size <= UINT32_MAX / 2 && o->window <= UINT32_MAX / 2;
}

static struct instance *slot_of(const struct paxos_proposer *p, paxos_iid iid)
{
	return &p->slots[iid % p->o.window];
}

static bool live(const struct paxos_proposer *p, paxos_iid iid)
{
	return iid >= p->first && iid - p->first < p->o.window;
}

/* Adds (sign 1) or removes (sign -1) what inst contributes to the running totals. */
static void account(struct paxos_proposer *p, const struct instance *inst, int sign)
{
	uint32_t d = (uint32_t)sign; /* modulo 2^32: adding -1 subtracts one */
	if (instance_in_phase2(inst))
		p->in_phase2 += d;
	if (inst->state == INSTANCE_CLOSED && inst->opened)
		p->closed += d;
	if (inst->has_v2 && inst->cv)
		p->held += d * inst->values;
}

/* The lowest live instance that has no value and is not closed (first + window if none). */
static paxos_iid frontier(struct paxos_proposer *p)
{
	if (p->frontier < p->first)
		p->frontier = p->first;
	while (p->frontier - p->first < p->o.window) {
		const struct instance *w = slot_of(p, p->frontier);
		if (w->state != INSTANCE_CLOSED && !w->has_v2)
			break;
		p->frontier++;
	}
	return p->frontier;
}

/*
 * Whether phase 1 finished for every instance we started at takeover. Until then client
 * values wait: a lower instance may find nothing while a higher one still has to report a
 * value the old leader got chosen there, one we hold too (every proposer queues every client
 * value); proposed below, it would be chosen twice. Adopting it first takes it off our list
 * (claim_v1). A round trip once per leadership.
 */
static bool took_over(struct paxos_proposer *p)
{
	if (!p->takeover_end)
		return true;
	for (paxos_iid iid = p->first; iid < p->takeover_end && live(p, iid); iid++)
		if (slot_of(p, iid)->state == INSTANCE_P1_PENDING)
			return false;
	p->takeover_end = 0;
	return true;
}

/*
 * 3.7.2: client values may go to inst only when every live instance below it has a value or
 * is closed (else a hole could block delivery), and fewer than `concurrency` instances are in
 * phase 2. Thesis 3.7.2: "the leader should not assign a value from the pending list to
 * instance i unless all instances from the lowest not delivered up to i - 1 already have a
 * value assigned. Otherwise the network may get "stuck"". Flow control (thesis 4.6.1: "force
 * the leader to slow down whenever some learner is lagging behind"): not while max_backlog
 * instances wait closed but undelivered behind a hole of our own learner (it lost messages and
 * is asking for repeats, like the other learners probably are), and no more values than
 * in_flight_max in the window. Only
 * instances we sent phase 2 for count: instances closed by (forged or stray) final accepteds
 * that no proposer of ours ran cannot hold new values back for ever.
 * Returns how many values inst may take. inst itself is out of the totals while it steps
 * (see fire); it holds nothing then, so they are those of the other instances.
 */
static uint32_t may_assign(void *arg, const struct instance *inst)
{
	struct paxos_proposer *p = arg;
	if (inst->iid > frontier(p) || !took_over(p))
		return 0;
	if (inst->iid >= p->values_from && p->first < p->values_from)
		return 0; /* a handover: what the old leader got chosen below is not settled yet */
	if (p->in_phase2 >= p->congestion.window)
		return 0;
	if ((p->o.max_backlog && p->closed >= p->o.max_backlog) || p->held >= p->in_flight_max) {
		p->counters->flow_control_holds++;
		return 0;
	}
	uint32_t room = p->in_flight_max - p->held;
	return room < p->batch_limit ? room : p->batch_limit;
}

/* A ballot in a later epoch's range (after a skip) may only leave once that epoch is
 * durable: else our next incarnation, starting one epoch above ours, could reach the same
 * ballot again. The proposer takes it at once, and its ready says to store it (epoch above
 * epoch_stored); the driver stores it before our messages leave. The raise goes to that
 * ballot's epoch, never further, and never to an implausible one (see
 * PAXOS_PLAUSIBLE_EPOCHS): the epochs left for restarts stay. */
static bool may_use_ballot(void *arg, paxos_ballot b)
{
	struct paxos_proposer *p = arg;
	uint32_t epoch = ballot_epoch(b);
	if (epoch <= p->epoch)
		return true;
	if (epoch >= PAXOS_PLAUSIBLE_EPOCHS || !p->o.raise_epochs)
		return false;
	p->epoch = epoch;
	p->counters->epochs_raised++;
	return true;
}

uint64_t paxos_proposer_memory(const struct paxos_proposer_options *o)
{
	if (!o || !options_valid(o))
		return 0;
	struct paxos_proposer *p = NULL; /* for the sizes of the arrays' elements only */
	uint32_t batch_limit = o->batch_limit ? o->batch_limit : 1;
	return sizeof(*p) +
	       pending_memory(o->pending_size + in_flight_max(o),
			      o->max_value - PAXOS_BATCH_HEADER) +
	       settled_memory(o->pending_size) +
	       (uint64_t)o->window * (sizeof(*p->slots) + 2 * (uint64_t)o->max_value) +
	       (uint64_t)batch_limit * sizeof(*p->scratch) +
	       (uint64_t)REPAIR_SLOTS * 2 * o->max_value;
}

struct paxos_proposer *paxos_proposer_new(const struct paxos_proposer_options *o,
					  struct paxos_counters *counters)
{
	if (!o || !options_valid(o))
		return NULL;
	struct paxos_proposer *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->o = *o;
	p->counters = counters ? counters : &p->own_counters;
	p->batch_limit = o->batch_limit ? o->batch_limit : 1;
	p->in_flight_max = in_flight_max(o);
	/* Values the instances hold came from the pending list, so with room for the most they
	 * may hold on top of what the clients may fill, giving them back never overflows. Client
	 * values are framed with a length to fit an instance value. */
	if (pending_init(&p->pending, o->pending_size, o->pending_size + p->in_flight_max,
			 o->max_value - PAXOS_BATCH_HEADER) != PAXOS_OK)
		goto fail;
	if (settled_init(&p->settled, o->pending_size) != PAXOS_OK)
		goto fail;
	congestion_init(&p->congestion, o->concurrency);
	p->counters->phase2_window = p->congestion.window;
	p->slots = calloc(o->window, sizeof(*p->slots));
	p->values = malloc((size_t)o->window * 2 * o->max_value);
	p->scratch = malloc((size_t)p->batch_limit * sizeof(*p->scratch));
	if (!p->slots || !p->values || !p->scratch)
		goto fail;
	p->first = 1;
	for (uint32_t k = 0; k < o->window; k++) {
		uint8_t *v1 = p->values + (size_t)k * 2 * o->max_value;
		instance_init(&p->slots[k], v1, v1 + o->max_value);
	}
	for (paxos_iid iid = p->first; iid - p->first < o->window; iid++)
		instance_reset(slot_of(p, iid), iid);
	p->ctx = (struct instance_ctx){
	    .proposer_id = o->id,
	    .epoch = o->epoch,
	    .acceptors = o->acceptors,
	    .max_value = o->max_value,
	    .batch_limit = p->batch_limit,
	    .scratch = p->scratch,
	    .phase1_timeout = o->phase1_timeout,
	    .phase2_timeout = o->phase2_timeout,
	    .timeout_floor = o->timeout_floor,
	    .timeout_ceiling = o->timeout_ceiling,
	    .rtt = o->adaptive ? p->rtt : NULL,
	    .pending = &p->pending,
	    .settled = &p->settled,
	    .counters = p->counters,
	    .may_assign = may_assign,
	    .may_assign_arg = p,
	    .may_use_ballot = may_use_ballot,
	    .may_use_ballot_arg = p,
	    .highest = &p->highest,
	    .highest_iid = &p->highest_iid,
	    .to_beat = &p->to_beat,
	    .skip_wanted = &p->skip_wanted,
	    .values_from = &p->values_from,
	    .membership = o->membership,
	    .command = &p->command,
	};
	p->epoch = p->epoch_stored = o->epoch;
	if (repairs_init(&p->repairs, &p->ctx) != PAXOS_OK)
		goto fail;
	return p;
fail:
	paxos_proposer_free(p);
	return NULL;
}

void paxos_proposer_free(struct paxos_proposer *p)
{
	if (!p)
		return;
	pending_destroy(&p->pending);
	settled_destroy(&p->settled);
	repairs_destroy(&p->repairs);
	free(p->slots);
	free(p->values);
	free(p->scratch);
	free(p);
}

/* What phase 2's outcomes say of the load (congestion.h): a close lets the window grow, a
 * timeout halves it. */
static void congestion_note(struct paxos_proposer *p, enum instance_event ev, paxos_time now)
{
	if (ev == EV_C) {
		congestion_on_closed(&p->congestion);
	} else if (ev == EV_TO2) {
		if (congestion_on_timeout(&p->congestion, now, p->ctx.phase2_timeout))
			p->counters->congestion_cuts++;
	} else {
		return;
	}
	p->counters->phase2_window = p->congestion.window;
}

static enum instance_state fire(struct paxos_proposer *p, struct instance *inst,
				enum instance_event ev, const struct instance_arg *arg,
				paxos_time now, const struct paxos_emitter *out)
{
	enum instance_state before = inst->state;
	PAXOS_ASSERT(live(p, inst->iid) && slot_of(p, inst->iid) == inst,
		     "only an instance of the window steps, in its own slot");
	account(p, inst, -1);
	enum instance_state s = instance_step(&p->ctx, inst, ev, arg, now, out);
	account(p, inst, 1);
	PAXOS_ASSERT(p->in_phase2 <= p->o.window && p->closed <= p->o.window,
		     "the window's totals count its own instances");
	if (before == INSTANCE_P2_PENDING)
		congestion_note(p, ev, now);
	return s;
}

static void reset(struct paxos_proposer *p, struct instance *inst, paxos_iid iid)
{
	account(p, inst, -1);
	instance_reset(inst, iid);
	account(p, inst, 1);
}

static void start_window(struct paxos_proposer *p, paxos_time now, const struct paxos_emitter *out);

/* Give waiting client values to instances that finished phase 1, lowest first (A). Below
 * the frontier every instance has a value or is closed already. */
static void assign_pending(struct paxos_proposer *p, paxos_time now,
			   const struct paxos_emitter *out)
{
	if (!p->leader)
		return;
	for (paxos_iid iid = frontier(p); iid - p->first < p->o.window; iid++) {
		if (pending_count(&p->pending) == 0 && !p->skip_wanted && !p->command.wanted)
			return;
		struct instance *inst = slot_of(p, iid);
		if (inst->state == INSTANCE_CLOSED || inst->has_v2)
			continue;
		if (inst->state == INSTANCE_EMPTY && !p->config_wait)
			start_window(p, now, out); /* deferred (start_deferred): values wait */
		if (inst->state != INSTANCE_P1_READY)
			return; /* phase 1 not done below: nothing above may get a value */
		fire(p, inst, EV_A, NULL, now, out);
		if (!inst->has_v2)
			return; /* NV: the concurrency limit is reached */
		p->last_proposed = now;
	}
}

/* learner-merge: a leader with nothing to propose for skip_idle, and nothing in phase 2,
 * closes its next instance with a skip (instance.c assign_skip), so that merged learners
 * hear from this partition at least that often. The skip waits for phase 1 like a value.
 * With a membership change pending, at every tick. */
static void want_skip(struct paxos_proposer *p, paxos_time now)
{
	/* A change chosen but not in force yet waits for alpha more instances: an idle leader
	 * closes them with skips, or the change would wait for client values (Paxos Made
	 * Simple, section 3: the leader fills the window with no-ops). */
	bool push = p->o.membership && paxos_membership_pending(p->o.membership);
	if ((!p->o.skip_idle && !push) || !p->leader || p->skip_wanted || p->in_phase2 ||
	    pending_count(&p->pending))
		return;
	if (!push && now - p->last_proposed < p->o.skip_idle)
		return;
	p->skip_wanted = true;
	p->last_proposed = now;
}

/* Whether iid's configuration is known, so that it may be opened (always, without one). */
static bool config_known(const struct paxos_proposer *p, paxos_iid iid)
{
	return !p->o.membership || paxos_membership_known(p->o.membership, iid);
}

/* Whether iid's configuration names us in its proposer set (always, without one). A leader
 * a change removes opens no instance from where the change is in force: there the next leader
 * starts, so the two never hold values in the same instances, and the values the old leader
 * got chosen below are delivered to the next one before it proposes anything (a value both
 * proposed could otherwise be chosen twice, in two instances). Known configurations only
 * (config_known). */
static bool config_names_us(const struct paxos_proposer *p, paxos_iid iid)
{
	return !p->o.membership || p->o.id >= 32 ||
	       (paxos_membership_proposers(p->o.membership, iid) & (1u << p->o.id)) != 0;
}

/* Pre-execute phase 1 (S) for every live instance not started yet. Thesis 3.7.1: "nothing
 * prevents from executing phase 1 "in advance", that is, without waiting the next value from
 * the client". In order, up to the first whose configuration is not known yet (the next
 * deliveries start the rest) or, with a change that removes us, the first it governs. A
 * leader whose first instance is of a set without it (one restarted and catching up from
 * below its addition) is held back by nothing: it stops only where a set that names it ends.
 */
static void start_window(struct paxos_proposer *p, paxos_time now, const struct paxos_emitter *out)
{
	p->config_wait = false;
	for (paxos_iid iid = p->first; iid - p->first < p->o.window; iid++) {
		if (!config_known(p, iid)) {
			p->config_wait = true;
			return;
		}
		if (!config_names_us(p, iid) && config_names_us(p, p->first))
			return; /* the change that removes us: the next leader starts here */
		fire(p, slot_of(p, iid), EV_S, NULL, now, out);
	}
}

/*
 * Instances entering the window start phase 1 together, prepare_batch at a time: one
 * datagram of prepares and one of promises per acceptor for the lot, where one each per
 * delivered instance cost every acceptor a wake-up and the leader a send per value batch
 * (docs/BENCHMARKS.md, "CPU per value of the acceptor and the proposer"). A quarter of what
 * the window holds beyond the instances phase 2 may use, so those always find phase 1 done;
 * 1 (at once) when the window has no room to spare.
 */
static uint32_t prepare_batch(const struct paxos_proposer_options *o)
{
	uint32_t spare = o->window > o->concurrency ? o->window - o->concurrency : 0;
	uint32_t k = spare / 4;
	return k < 1 ? 1 : k > 16 ? 16 : k;
}

/* Starts the instances deferred at the top of the window once prepare_batch of them wait. */
static void start_deferred(struct paxos_proposer *p, paxos_time now,
			   const struct paxos_emitter *out)
{
	uint32_t want = prepare_batch(&p->o), waiting = 0;
	for (paxos_iid iid = p->first + p->o.window; iid-- > p->first && waiting < want;) {
		if (slot_of(p, iid)->state != INSTANCE_EMPTY)
			return;
		waiting++;
	}
	if (waiting >= want)
		start_window(p, now, out);
}

/*
 * Slide the window so that new_first is the lowest live instance. Instances leaving get D
 * (highest first, so requeued client values end up at the head in instance order); the
 * delivered one carries its value, skipped ones (a late start) an unknown value. Instances
 * entering start phase 1 if we lead, in batches (start_deferred); assign_pending starts
 * them at once when values reach them.
 */
static void slide(struct paxos_proposer *p, paxos_iid new_first, paxos_iid delivered,
		  const struct paxos_value *v, paxos_ballot ballot, paxos_time now,
		  const struct paxos_emitter *out)
{
	PAXOS_ASSERT(new_first > p->first, "the window only moves up (a new log starts it again)");
	paxos_iid old_first = p->first;
	paxos_iid old_end = old_first + p->o.window;
	paxos_iid leave_end = new_first < old_end ? new_first : old_end;
	for (paxos_iid iid = leave_end; iid-- > old_first;) {
		struct instance_arg arg = {.value = iid == delivered ? v : NULL,
					   .value_ballot = iid == delivered ? ballot : 0};
		fire(p, slot_of(p, iid), EV_D, &arg, now, out);
	}
	p->first = new_first;
	paxos_iid enter = new_first > old_end ? new_first : old_end;
	for (paxos_iid iid = enter; iid - new_first < p->o.window; iid++)
		reset(p, slot_of(p, iid), iid);
	if (p->leader && !p->config_wait)
		start_deferred(p, now, out);
}

/*
 * A leader taking over where a proposer change comes in force (a planned removal of the old
 * leader): the old leader opens nothing from there (config_names_us) but may still get
 * values chosen below, values we hold too (every proposer queues every client value). So
 * below that instance we close with skips what phase 1 finds empty, and propose client
 * values from there on only once our learner delivered everything below: by then each of
 * the old leader's values chosen there has been settled from our list, and none is chosen
 * twice. 0: no such change ahead of first.
 */
static paxos_iid handover_at(const struct paxos_proposer *p, paxos_iid first)
{
	if (!p->o.membership)
		return 0;
	const struct paxos_configuration *c = paxos_membership_latest(p->o.membership);
	if (!c || c->first <= first || !paxos_membership_known(p->o.membership, first))
		return 0;
	return paxos_membership_proposers(p->o.membership, first) != c->proposers ? c->first : 0;
}

void paxos_proposer_set_leader(struct paxos_proposer *p, bool leader, paxos_iid first,
			       paxos_time now, const struct paxos_emitter *out)
{
	if (!leader) {
		if (!p->leader)
			return;
		/* Highest first, so the values keep instance order at the head of the list. */
		for (paxos_iid iid = p->first + p->o.window; iid-- > p->first;) {
			struct instance *inst = slot_of(p, iid);
			account(p, inst, -1);
			instance_release(&p->ctx, inst);
			account(p, inst, 1);
		}
		p->frontier = p->first; /* values may go anywhere again */
		p->leader = false;
		if (p->command.in) { /* released with its instance: proposed again when leading */
			p->command.in = 0;
			p->command.wanted = true;
		}
		p->skip_wanted = false;
		p->values_from = 0;
		p->takeover_end = 0;
		repairs_clear(&p->repairs);
		return;
	}
	p->leader = true;
	p->values_from = handover_at(p, first > p->first ? first : p->first);
	p->frontier = p->first;
	p->last_proposed = now;
	if (first > p->first)
		slide(p, first, 0, NULL, 0, now, out);
	start_window(p, now, out);
	p->takeover_end = p->first + p->o.window;
	assign_pending(p, now, out);
}

void paxos_proposer_new_log(struct paxos_proposer *p, paxos_time now,
			    const struct paxos_emitter *out)
{
	bool leader = p->leader;
	paxos_proposer_set_leader(p, false, 0, now, out); /* values back to the pending list */
	for (paxos_iid iid = 1; iid <= p->o.window; iid++)
		reset(p, slot_of(p, iid), iid);
	p->first = p->frontier = 1;
	/* What our accepts reached was in the old log: a recovering acceptor of the new one
	 * needs no floor for it (the fence covers those ballots). */
	p->highest_iid = 0;
	/* Our instances may have run in the new log already (the learner hears of it later
	 * than the acceptors vote in it): each starts again above every ballot we used, so
	 * that none pairs a ballot with a second value. */
	if (p->highest > p->to_beat)
		p->to_beat = p->highest;
	repairs_clear(&p->repairs);
	if (leader)
		paxos_proposer_set_leader(p, true, 1, now, out);
}

void paxos_proposer_announce(struct paxos_proposer *p, paxos_time now,
			     const struct paxos_emitter *out)
{
	/* Values waiting announce the ballot as well as a skip does. */
	if (!p->leader || pending_count(&p->pending))
		return;
	p->skip_wanted = true;
	p->last_proposed = now;
	assign_pending(p, now, out);
}

bool paxos_proposer_is_leader(const struct paxos_proposer *p)
{
	return p->leader;
}

/*
 * Submissions. Every proposer queues every client value, and drops its copy once the value is
 * delivered (instance_settle), or does not queue a copy that arrives after (settled.h). A copy
 * is known by its submission: the id the submitting node drew for that paxos_node_submit(),
 * carried in the client value and in the frame the leader packs it into. Matching by the
 * bytes instead made two submitters' equal values one (the second dropped as if delivered),
 * and let anyone who can submit drop another's value with bytes of the same hash. A value
 * that names no submission (a client that gives none) is never dropped as delivered before
 * it arrived; a copy queued already still leaves on an equal delivered value that names none.
 * A client value is data, whatever its bytes: a change comes only through
 * paxos_proposer_change() (the node takes it from a PAXOS_MSG_CHANGE with the operators' MAC),
 * and a value is framed in its instance (lib/core/batch.h), so a learner never reads one as a
 * command either.
 */
static int queue_submission(struct paxos_proposer *p, const struct paxos_value *v, uint64_t id)
{
	if (!v || (v->len && !v->data))
		return PAXOS_E_INVALID;
	if (v->len > p->pending.max_value)
		return PAXOS_E_TOO_BIG;
	/* Keyed once, and only when a credit may match it: a leader's list seldom asks. */
	uint64_t key = PENDING_NO_HASH;
	if (id && p->settled.count) {
		key = pending_key(v->data, v->len, id);
		if (settled_take(&p->settled, key)) {
			p->counters->values_settled++; /* delivered already: it would repeat */
			return PAXOS_OK;
		}
	}
	int rc = pending_push_back_id(&p->pending, v->data, v->len, id, key);
	if (rc == PAXOS_E_FULL) {
		p->counters->pending_dropped++;
		p->unrefused++;
		if (p->leader && p->refused_named < REFUSED_HASHES)
			p->refused_hash[p->refused_named++] = pending_hash(v->data, v->len);
	}
	return rc;
}

int paxos_proposer_queue(struct paxos_proposer *p, const struct paxos_value *v)
{
	return queue_submission(p, v, 0);
}

int paxos_proposer_queue_value(struct paxos_proposer *p, const struct paxos_client_value *cv)
{
	return cv ? queue_submission(p, &cv->value, cv->id) : PAXOS_E_INVALID;
}

/* Flow control: a leader that drops client values tells their submitters which ones, so that
 * they hold new values back a while (paxos_node_submit() returns PAXOS_E_FULL) rather than
 * send more into a full list, and send the dropped ones again then. A follower's list fills
 * only with values the leader got too: it says nothing. */
static void refuse(struct paxos_proposer *p, const struct paxos_emitter *out)
{
	uint32_t named = 0;
	while (p->leader && p->unrefused > 0) {
		uint32_t k = p->refused_named - named;
		if (k > PAXOS_REFUSED_HASHES_MAX)
			k = PAXOS_REFUSED_HASHES_MAX;
		for (uint32_t i = 0; i < k; i++) {
			uint64_t h = p->refused_hash[named + i];
			for (int b = 0; b < 8; b++)
				p->refused_bytes[8 * i + b] = (uint8_t)(h >> (8 * b));
		}
		struct paxos_message m = {.type = PAXOS_MSG_REFUSED};
		m.u.refused.proposer_id = p->o.id;
		/* The last message also counts the values left unnamed. */
		m.u.refused.dropped = named + k < p->refused_named ? k : p->unrefused;
		m.u.refused.hashes = (struct paxos_value){p->refused_bytes, 8 * k};
		paxos_emit(out, PAXOS_GROUP_LEARNERS, &m);
		p->counters->refusals_sent++;
		named += k;
		p->unrefused -= m.u.refused.dropped;
	}
	p->unrefused = 0;
	p->refused_named = 0;
}

void paxos_proposer_assign(struct paxos_proposer *p, paxos_time now,
			   const struct paxos_emitter *out)
{
	refuse(p, out);
	if (!p->leader || (pending_count(&p->pending) == 0 && !p->command.wanted))
		return;
	assign_pending(p, now, out);
	/* Still waiting although phase 2 has room: phase 1 is not done for the instance it
	 * needs. Thesis 3.5.3 counts the "Number of times the leader cannot execute phase 2 for a
	 * new instance because phase 1 is not completed yet." (3.7.1: the pre-execution window
	 * is too small). */
	if (pending_count(&p->pending) > 0 && p->in_phase2 < p->congestion.window)
		p->counters->phase2_waited_phase1++;
}

int paxos_proposer_submit(struct paxos_proposer *p, const struct paxos_value *v, paxos_time now,
			  const struct paxos_emitter *out)
{
	int rc = paxos_proposer_queue(p, v);
	if (rc == PAXOS_OK)
		paxos_proposer_assign(p, now, out);
	else if (rc == PAXOS_E_FULL)
		refuse(p, out);
	return rc;
}

static void on_instance_message(struct paxos_proposer *p, paxos_iid iid, enum instance_event ev,
				const struct instance_arg *arg, paxos_time now,
				const struct paxos_emitter *out)
{
	struct instance *repairing = repairs_find(&p->repairs, iid);
	if (repairing) {
		repairs_step(&p->repairs, repairing, ev, arg, now, out);
		return;
	}
	if (!live(p, iid)) {
		if (iid >= p->first)
			p->counters->instances_out_of_window++;
		return;
	}
	struct instance *inst = slot_of(p, iid);
	enum instance_state before = inst->state;
	if (fire(p, inst, ev, arg, now, out) != before)
		assign_pending(p, now, out);
}

/*
 * A learner cannot close r->from .. r->to. The leader repairs those it has decided (below the
 * window) or its learner closed (waiting in the window behind a hole): nothing else would ever
 * run them again. The others are live instances it drives anyway, or not yet opened.
 */
static void repair(struct paxos_proposer *p, const struct paxos_repair *r, paxos_time now,
		   const struct paxos_emitter *out)
{
	if (!p->leader || r->from == 0 || r->from > r->to)
		return;
	paxos_iid to = r->to;
	if (to - r->from >= REPAIR_SLOTS)
		to = r->from + REPAIR_SLOTS - 1;
	for (paxos_iid iid = r->from; iid <= to; iid++) {
		bool decided =
		    iid < p->first || (live(p, iid) && slot_of(p, iid)->state == INSTANCE_CLOSED);
		if (decided)
			repairs_start(&p->repairs, iid, p->highest, now, out);
		else if (live(p, iid))
			fire(p, slot_of(p, iid), EV_REPAIR, NULL, now, out);
		if (iid == UINT64_MAX)
			break;
	}
}

/* An acceptor that lost its state asks every proposer, leading or not, how far its ballots
 * and accepts went: it must not vote at or below them (see paxos_acceptor_join); an accept
 * still on its way could make its earlier life part of a quorum. Earlier
 * incarnations of this proposer used lower epochs: the ballot just below our first covers
 * them even before we prepared anything. */
static void answer_recovering(const struct paxos_proposer *p, const struct paxos_recover_ask *r,
			      paxos_time now, const struct paxos_emitter *out)
{
	paxos_ballot below_ours = ballot_first(p->o.id, p->o.epoch) - 1;
	struct paxos_message m = {.type = PAXOS_MSG_RECOVER_INFO};
	/* Restarted: what our earlier life sent may still arrive after an answer, which would
	 * not cover it, so the answer waits; meanwhile ballot 0 (no answer has it) says that we
	 * ran before: the acceptor must not take our silence for a first start. */
	if (p->o.epoch > 1 && now - p->started_at < p->o.recovery_grace) {
		m.u.recover_info = (struct paxos_recover_info){
		    .role = PAXOS_ROLE_PROPOSER,
		    .sender_id = p->o.id,
		    .acceptor_id = r->acceptor_id,
		    .incarnation = r->incarnation,
		};
		paxos_emit(out, PAXOS_GROUP_ACCEPTORS, &m);
		return;
	}
	m.u.recover_info = (struct paxos_recover_info){
	    .role = PAXOS_ROLE_PROPOSER,
	    .sender_id = p->o.id,
	    .acceptor_id = r->acceptor_id,
	    .incarnation = r->incarnation,
	    .highest_iid = p->highest_iid,
	    .highest_ballot = p->highest > below_ours ? p->highest : below_ours,
	};
	paxos_emit(out, PAXOS_GROUP_ACCEPTORS, &m);
}

/* The proposer has no clock of its own: its life starts with the first time it is told. */
static void note_time(struct paxos_proposer *p, paxos_time now)
{
	if (!p->started) {
		p->started = true;
		p->started_at = now;
	}
}

void paxos_proposer_handle(struct paxos_proposer *p, const struct paxos_message *m, paxos_time now,
			   const struct paxos_emitter *out)
{
	if (!m)
		return;
	note_time(p, now);
	if (!paxos_msg_plausible(m)) {
		/* Following it would raise our epoch to the end of the ballot space. */
		p->counters->implausible_ballots++;
		return;
	}
	switch (m->type) {
	case PAXOS_MSG_PROMISE: {
		struct instance_arg arg = {.promise = &m->u.promise};
		on_instance_message(p, m->u.promise.iid, EV_P, &arg, now, out);
		break;
	}
	case PAXOS_MSG_REJECT: {
		struct instance_arg arg = {.reject = &m->u.reject};
		on_instance_message(p, m->u.reject.iid, EV_REJECT, &arg, now, out);
		break;
	}
	case PAXOS_MSG_CLIENT_VALUE: {
		int rc = paxos_proposer_queue_value(p, &m->u.client_value);
		if (rc == PAXOS_OK)
			paxos_proposer_assign(p, now, out);
		else if (rc == PAXOS_E_FULL)
			refuse(p, out);
		break;
	}
	case PAXOS_MSG_REPAIR:
		repair(p, &m->u.repair, now, out);
		break;
	case PAXOS_MSG_RECOVER_ASK:
		answer_recovering(p, &m->u.recover_ask, now, out);
		break;
	default:
		break; /* not for proposers */
	}
}

void paxos_proposer_closed(struct paxos_proposer *p, paxos_iid iid, const struct paxos_value *v,
			   paxos_time now, const struct paxos_emitter *out)
{
	if (!live(p, iid))
		return;
	struct instance_arg arg = {.value = v};
	fire(p, slot_of(p, iid), EV_C, &arg, now, out);
	assign_pending(p, now, out); /* a phase 2 slot may be free */
}

/* Our membership command's instance (or one above it) was delivered: it is done when chosen
 * or outdated by another change, else it goes to another instance. */
static void command_delivered(struct paxos_proposer *p, paxos_iid iid, const struct paxos_value *v)
{
	enum paxos_membership_kind kind;
	uint32_t from, set;
	struct paxos_value ours = {p->command.bytes, p->command.len};
	paxos_membership_decode_of(&ours, &kind, &from, &set);
	bool chosen = iid == p->command.in && v && v->len == ours.len &&
		      memcmp(v->data, ours.data, ours.len) == 0;
	p->command.in = 0;
	p->command.wanted = !chosen && paxos_membership_latest(p->o.membership)->id == from;
}

/* A change wanted while another leader's was chosen (all proposers queue the requests) is
 * dropped, not proposed when we lead one day. */
static void command_outdated(struct paxos_proposer *p)
{
	enum paxos_membership_kind kind;
	uint32_t from, set;
	struct paxos_value ours = {p->command.bytes, p->command.len};
	paxos_membership_decode_of(&ours, &kind, &from, &set);
	if (paxos_membership_latest(p->o.membership)->id != from)
		p->command.wanted = false;
}

bool paxos_proposer_change_pending(const struct paxos_proposer *p)
{
	return p->command.wanted || p->command.in;
}

/* A change of configuration from (which must be the newest) to the acceptors or proposers
 * set. */
static int change_from(struct paxos_proposer *p, enum paxos_membership_kind kind, uint32_t from,
		       uint32_t set, const struct paxos_value *raw)
{
	const struct paxos_membership *m = p->o.membership;
	if (!m || set == 0 || from != paxos_membership_latest(m)->id)
		return PAXOS_E_INVALID;
	const struct paxos_configuration *c = paxos_membership_latest(m);
	/* A move (PAXOS_MEMBERSHIP_ADDRESS) names the acceptors as they are, and comes with
	 * its address. */
	if (kind == PAXOS_MEMBERSHIP_ACCEPTORS
		? set == c->members || (p->o.acceptors < 32 && (set >> p->o.acceptors) != 0)
	    : kind == PAXOS_MEMBERSHIP_PROPOSERS ? set == c->proposers
						 : set != c->members || !raw)
		return PAXOS_E_INVALID;
	if (p->o.max_value < (raw ? raw->len : PAXOS_MEMBERSHIP_COMMAND_LEN))
		return PAXOS_E_TOO_BIG;
	if (paxos_proposer_change_pending(p) || paxos_membership_pending(m))
		return PAXOS_E_FULL;
	/* As asked (a command may carry an acceptor's address), else made here. */
	if (raw) {
		memcpy(p->command.bytes, raw->data, raw->len);
		p->command.len = raw->len;
	} else {
		paxos_membership_command_of(kind, from, set, p->command.bytes);
		p->command.len = PAXOS_MEMBERSHIP_COMMAND_LEN;
	}
	p->command.wanted = true;
	return PAXOS_OK;
}

int paxos_proposer_change(struct paxos_proposer *p, const struct paxos_value *command,
			  paxos_time now, const struct paxos_emitter *out)
{
	enum paxos_membership_kind kind;
	uint32_t from, set;
	if (!command || paxos_membership_decode_of(command, &kind, &from, &set) != PAXOS_OK)
		return PAXOS_E_INVALID;
	int rc = change_from(p, kind, from, set, command);
	if (rc == PAXOS_OK)
		assign_pending(p, now, out);
	return rc;
}

int paxos_proposer_change_membership(struct paxos_proposer *p, uint32_t members, paxos_time now,
				     const struct paxos_emitter *out)
{
	const struct paxos_membership *m = p->o.membership;
	int rc = change_from(p, PAXOS_MEMBERSHIP_ACCEPTORS, m ? paxos_membership_latest(m)->id : 0,
			     members, NULL);
	if (rc == PAXOS_OK)
		assign_pending(p, now, out);
	return rc;
}

int paxos_proposer_change_proposers(struct paxos_proposer *p, uint32_t proposers, paxos_time now,
				    const struct paxos_emitter *out)
{
	const struct paxos_membership *m = p->o.membership;
	int rc = change_from(p, PAXOS_MEMBERSHIP_PROPOSERS, m ? paxos_membership_latest(m)->id : 0,
			     proposers, NULL);
	if (rc == PAXOS_OK)
		assign_pending(p, now, out);
	return rc;
}

/* Whether the values of v, delivered in iid, are settled already: a frame we packed there
 * (its values left the list then), or a value the learner closed there before (claim_closed
 * settled it). */
static bool settled_in(const struct paxos_proposer *p, paxos_iid iid, const struct paxos_value *v,
		       paxos_ballot ballot)
{
	if (!live(p, iid))
		return false;
	const struct instance *inst = slot_of(p, iid);
	if (inst->settled)
		return true;
	return inst->cv && !inst->claimed && instance_holds(inst, v, ballot);
}

void paxos_proposer_delivered(struct paxos_proposer *p, paxos_iid iid, const struct paxos_value *v,
			      paxos_time now, const struct paxos_emitter *out)
{
	paxos_proposer_delivered_ballot(p, iid, v, 0, now, out);
}

void paxos_proposer_delivered_ballot(struct paxos_proposer *p, paxos_iid iid,
				     const struct paxos_value *v, paxos_ballot ballot,
				     paxos_time now, const struct paxos_emitter *out)
{
	if (iid < p->first || iid == UINT64_MAX)
		return;
	/* A delivered value we did not propose from our list may still wait in it: every
	 * proposer queues every client value (thesis 4.7: "keep track of submitted,
	 * not-yet-delivered values in proposers that are not the current leader"), and a leader
	 * that lost its leadership got its values back. Proposing it again would only deliver it
	 * twice. A value we adopted is settled too: the copies the list held when we adopted it
	 * left then, but another may have come since. */
	bool settle = v && (v->len == 0 || v->data) && !settled_in(p, iid, v, ballot);
	slide(p, iid + 1, iid, v, ballot, now, out);
	if (p->command.in && p->command.in <= iid)
		command_delivered(p, iid, v);
	else if (p->command.wanted)
		command_outdated(p);
	if (p->config_wait && p->leader)
		start_window(p, now, out); /* the delivery made another configuration known */
	if (settle)
		instance_settle(&p->ctx, v); /* per client value of the frame (thesis 3.7.4) */
	assign_pending(p, now, out);
}

void paxos_proposer_tick(struct paxos_proposer *p, paxos_time now, const struct paxos_emitter *out)
{
	static const struct instance fresh; /* no timeouts yet: the base wait */
	note_time(p, now);
	p->counters->phase1_timeout_us = instance_timeout(&p->ctx, &fresh, 1);
	p->counters->phase2_timeout_us = instance_timeout(&p->ctx, &fresh, 2);
	refuse(p, out); /* values dropped since the last read */
	if (!p->leader)
		return;
	repairs_tick(&p->repairs, now, out);
	/* Thesis 3.5: "When timeouts occur, L should take appropriate action, namely retrying
	 * with a higher ballot for phase 1 timeouts, and restarting from phase 1 for phase 2
	 * timeouts." */
	for (paxos_iid iid = p->first; iid - p->first < p->o.window; iid++) {
		struct instance *inst = slot_of(p, iid);
		if (inst->state == INSTANCE_P1_PENDING && now >= inst->deadline)
			fire(p, inst, EV_TO1, NULL, now, out);
		else if (inst->state == INSTANCE_P2_PENDING && now >= inst->deadline)
			fire(p, inst, EV_TO2, NULL, now, out);
	}
	want_skip(p, now);
	if (p->config_wait)
		start_window(p, now, out);
	assign_pending(p, now, out);
}

bool paxos_proposer_accept_value(const struct paxos_proposer *p, paxos_iid iid, paxos_ballot ballot,
				 struct paxos_value *v)
{
	if (!p || !v || ballot == 0 || !live(p, iid))
		return false;
	const struct instance *inst = slot_of(p, iid);
	if (inst->iid != iid || !inst->has_v2 || inst->v2_ballot != ballot)
		return false;
	*v = (struct paxos_value){inst->v2, inst->v2_len};
	return true;
}

uint32_t paxos_proposer_pending(const struct paxos_proposer *p)
{
	return pending_count(&p->pending);
}

void paxos_proposer_drop_pending(struct paxos_proposer *p)
{
	if (p->leader)
		return;
	p->counters->pending_dropped += pending_count(&p->pending);
	pending_clear(&p->pending);
}

bool paxos_proposer_ready(const struct paxos_proposer *p, struct paxos_proposer_ready *rd)
{
	rd->epoch = p->epoch > p->epoch_stored ? p->epoch : 0;
	return rd->epoch != 0;
}

void paxos_proposer_advance(struct paxos_proposer *p, uint32_t stored)
{
	if (stored > p->epoch_stored && stored <= p->epoch)
		p->epoch_stored = stored;
}

uint32_t paxos_proposer_epoch(const struct paxos_proposer *p)
{
	return p->epoch;
}

paxos_ballot paxos_proposer_ballot(const struct paxos_proposer *p)
{
	return p->highest;
}

/* A scan of the window: read on demand (monitoring), never on the protocol's path. */
uint32_t paxos_proposer_window_in_use(const struct paxos_proposer *p)
{
	uint32_t used = 0;
	for (paxos_iid iid = p->first; iid - p->first < p->o.window; iid++) {
		const struct instance *inst = slot_of(p, iid);
		if (inst->iid == iid && (inst->has_v2 || inst->state == INSTANCE_P2_PENDING ||
					 inst->state == INSTANCE_CLOSED))
			used++;
	}
	return used;
}
