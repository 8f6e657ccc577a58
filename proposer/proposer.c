/*
 * The proposer core (thesis 3.5): a window of instance state machines over a preallocated
 * array (3.5.4), phase 1 pre-executed for the whole window (3.7.1), at most `concurrency`
 * instances in phase 2 and client values assigned lowest instance first (3.7.2). The
 * functions here only turn inputs into instance events; instance.c decides.
 */
#include <paxos/proposer.h>

#include <stdlib.h>
#include <string.h>

#include "ballot.h"
#include "instance.h"
#include "pending.h"
#include "settled.h"

struct paxos_proposer {
	struct paxos_proposer_options o;
	struct paxos_counters *counters;
	struct paxos_counters own_counters; /* when the caller passes none */
	struct pending pending;
	struct settled settled; /* delivered before they reached us */
	struct instance_ctx ctx;
	struct instance *slots; /* instance iid lives in slots[iid % window] */
	uint8_t *values;        /* v1 and v2 buffers of every slot */
	paxos_iid first;        /* lowest instance not delivered */
	bool leader;
	uint32_t epoch; /* highest epoch our ballots may be in: o.epoch, or one raised to */
};

void paxos_proposer_options_from_config(struct paxos_proposer_options *o,
					const struct paxos_config *cfg, uint32_t id)
{
	memset(o, 0, sizeof(*o));
	o->id = id;
	o->acceptors = cfg->acceptors;
	o->window = cfg->proposer_window;
	o->concurrency = cfg->proposer_concurrency;
	o->pending_size = cfg->pending_size;
	o->max_value = paxos_config_max_value(cfg);
	o->phase1_timeout = (paxos_time)cfg->phase1_timeout_ms * 1000;
	o->phase2_timeout = (paxos_time)cfg->phase2_timeout_ms * 1000;
}

static bool options_valid(const struct paxos_proposer_options *o)
{
	return o->id < PAXOS_MAX_PROPOSERS && o->epoch < PAXOS_PROPOSER_EPOCH_LIMIT &&
	       o->acceptors >= 1 && o->acceptors <= PAXOS_MAX_ACCEPTORS && o->window >= 1 &&
	       o->concurrency >= 1 && o->pending_size >= 1 && o->max_value >= 1 &&
	       (uint64_t)o->pending_size + o->window <= UINT32_MAX;
}

static struct instance *slot_of(const struct paxos_proposer *p, paxos_iid iid)
{
	return &p->slots[iid % p->o.window];
}

static bool live(const struct paxos_proposer *p, paxos_iid iid)
{
	return iid >= p->first && iid - p->first < p->o.window;
}

/* 3.7.2: a client value may go to inst only when every live instance below it has a value
 * or is closed (else a hole could block delivery), and fewer than `concurrency` instances
 * are in phase 2. */
static bool may_assign(void *arg, const struct instance *inst)
{
	const struct paxos_proposer *p = arg;
	uint32_t in_phase2 = 0;
	for (paxos_iid iid = p->first; iid - p->first < p->o.window; iid++) {
		const struct instance *w = slot_of(p, iid);
		if (iid < inst->iid && w->state != INSTANCE_CLOSED && !w->has_v2)
			return false;
		if (instance_in_phase2(w))
			in_phase2++;
	}
	return in_phase2 < p->o.concurrency;
}

/* A ballot in a later epoch's range (after a skip) may only be used once that epoch is
 * durable: else our next incarnation, starting one epoch above ours, could reach the same
 * ballot again. */
static bool may_use_ballot(void *arg, paxos_ballot b)
{
	struct paxos_proposer *p = arg;
	uint32_t epoch = ballot_epoch(b);
	if (epoch <= p->epoch)
		return true;
	if (epoch >= PAXOS_PROPOSER_EPOCH_LIMIT || !p->o.raise_epoch ||
	    !p->o.raise_epoch(p->o.raise_epoch_arg, epoch))
		return false;
	p->epoch = epoch;
	return true;
}

static uint32_t count_in_phase2(const struct paxos_proposer *p)
{
	uint32_t n = 0;
	for (uint32_t k = 0; k < p->o.window; k++)
		if (instance_in_phase2(&p->slots[k]))
			n++;
	return n;
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
	/* Values the instances hold came from the pending list, so with room for window more
	 * than the clients may fill, giving them back never overflows. */
	if (pending_init(&p->pending, o->pending_size, o->pending_size + o->window, o->max_value) !=
	    PAXOS_OK)
		goto fail;
	if (settled_init(&p->settled, o->pending_size) != PAXOS_OK)
		goto fail;
	p->slots = calloc(o->window, sizeof(*p->slots));
	p->values = malloc((size_t)o->window * 2 * o->max_value);
	if (!p->slots || !p->values)
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
	    .phase1_timeout = o->phase1_timeout,
	    .phase2_timeout = o->phase2_timeout,
	    .pending = &p->pending,
	    .counters = p->counters,
	    .may_assign = may_assign,
	    .may_assign_arg = p,
	    .may_use_ballot = may_use_ballot,
	    .may_use_ballot_arg = p,
	};
	p->epoch = o->epoch;
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
	free(p->slots);
	free(p->values);
	free(p);
}

static enum instance_state fire(struct paxos_proposer *p, struct instance *inst,
				enum instance_event ev, const struct instance_arg *arg,
				paxos_time now, const struct paxos_emitter *out)
{
	return instance_step(&p->ctx, inst, ev, arg, now, out);
}

/* Give waiting client values to instances that finished phase 1, lowest first (A). */
static void assign_pending(struct paxos_proposer *p, paxos_time now,
			   const struct paxos_emitter *out)
{
	if (!p->leader)
		return;
	for (paxos_iid iid = p->first; iid - p->first < p->o.window; iid++) {
		if (pending_count(&p->pending) == 0)
			return;
		struct instance *inst = slot_of(p, iid);
		if (inst->state == INSTANCE_CLOSED || inst->has_v2)
			continue;
		if (inst->state != INSTANCE_P1_READY)
			return; /* phase 1 not done below: nothing above may get a value */
		fire(p, inst, EV_A, NULL, now, out);
		if (!inst->has_v2)
			return; /* NV: the concurrency limit is reached */
	}
}

/* Pre-execute phase 1 (S) for every live instance not started yet, in order. */
static void start_window(struct paxos_proposer *p, paxos_time now, const struct paxos_emitter *out)
{
	for (paxos_iid iid = p->first; iid - p->first < p->o.window; iid++)
		fire(p, slot_of(p, iid), EV_S, NULL, now, out);
}

/*
 * Slide the window so that new_first is the lowest live instance. Instances leaving get D
 * (highest first, so requeued client values end up at the head in instance order); the
 * delivered one carries its value, skipped ones (a late start) an unknown value. Instances
 * entering start phase 1 if we lead.
 */
static void slide(struct paxos_proposer *p, paxos_iid new_first, paxos_iid delivered,
		  const struct paxos_value *v, paxos_time now, const struct paxos_emitter *out)
{
	paxos_iid old_first = p->first;
	paxos_iid old_end = old_first + p->o.window;
	paxos_iid leave_end = new_first < old_end ? new_first : old_end;
	for (paxos_iid iid = leave_end; iid-- > old_first;) {
		struct instance_arg arg = {.value = iid == delivered ? v : NULL};
		fire(p, slot_of(p, iid), EV_D, &arg, now, out);
	}
	p->first = new_first;
	paxos_iid enter = new_first > old_end ? new_first : old_end;
	for (paxos_iid iid = enter; iid - new_first < p->o.window; iid++) {
		struct instance *inst = slot_of(p, iid);
		instance_reset(inst, iid);
		if (p->leader)
			fire(p, inst, EV_S, NULL, now, out);
	}
}

void paxos_proposer_set_leader(struct paxos_proposer *p, bool leader, paxos_iid first,
			       paxos_time now, const struct paxos_emitter *out)
{
	if (!leader) {
		if (!p->leader)
			return;
		/* Highest first, so the values keep instance order at the head of the list. */
		for (paxos_iid iid = p->first + p->o.window; iid-- > p->first;)
			instance_release(&p->ctx, slot_of(p, iid));
		p->leader = false;
		return;
	}
	p->leader = true;
	if (first > p->first)
		slide(p, first, 0, NULL, now, out);
	start_window(p, now, out);
	assign_pending(p, now, out);
}

bool paxos_proposer_is_leader(const struct paxos_proposer *p)
{
	return p->leader;
}

int paxos_proposer_submit(struct paxos_proposer *p, const struct paxos_value *v, paxos_time now,
			  const struct paxos_emitter *out)
{
	if (!v || (v->len && !v->data))
		return PAXOS_E_INVALID;
	if (v->len <= p->o.max_value && settled_take(&p->settled, pending_hash(v->data, v->len))) {
		p->counters->values_settled++; /* delivered already: proposing it would repeat it */
		return PAXOS_OK;
	}
	int rc = pending_push_back(&p->pending, v->data, v->len);
	if (rc == PAXOS_E_FULL)
		p->counters->pending_dropped++;
	if (rc != PAXOS_OK)
		return rc;
	if (!p->leader)
		return PAXOS_OK;
	assign_pending(p, now, out);
	/* Still waiting although phase 2 has room: phase 1 is not done for the instance it
	 * needs (3.5.3, 3.7.1: the pre-execution window is too small). Values go out in
	 * order, so the list is empty exactly when this one went out. */
	if (pending_count(&p->pending) > 0 && count_in_phase2(p) < p->o.concurrency)
		p->counters->phase2_waited_phase1++;
	return PAXOS_OK;
}

static void on_instance_message(struct paxos_proposer *p, paxos_iid iid, enum instance_event ev,
				const struct instance_arg *arg, paxos_time now,
				const struct paxos_emitter *out)
{
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

void paxos_proposer_handle(struct paxos_proposer *p, const struct paxos_message *m, paxos_time now,
			   const struct paxos_emitter *out)
{
	if (!m)
		return;
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
	case PAXOS_MSG_CLIENT_VALUE:
		paxos_proposer_submit(p, &m->u.client_value.value, now, out);
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

/* Whether instance iid holds v as the client value we proposed there. */
static bool holds_own_value(const struct paxos_proposer *p, paxos_iid iid,
			    const struct paxos_value *v)
{
	if (!live(p, iid))
		return false;
	const struct instance *inst = slot_of(p, iid);
	return inst->has_v2 && inst->cv && inst->v2_len == v->len &&
	       (v->len == 0 || memcmp(inst->v2, v->data, v->len) == 0);
}

void paxos_proposer_delivered(struct paxos_proposer *p, paxos_iid iid, const struct paxos_value *v,
			      paxos_time now, const struct paxos_emitter *out)
{
	if (iid < p->first || iid == UINT64_MAX)
		return;
	/* A delivered value we did not propose from our list may still wait in it: every
	 * proposer queues every client value, and a leader that lost its leadership got its
	 * values back. Proposing it again would only deliver it twice (thesis 4.7). */
	bool settle = v && (v->len == 0 || v->data) && !holds_own_value(p, iid, v);
	slide(p, iid + 1, iid, v, now, out);
	if (settle) {
		if (pending_remove(&p->pending, v->data, v->len))
			p->counters->values_settled++;
		else
			settled_add(&p->settled, pending_hash(v->data, v->len));
	}
	assign_pending(p, now, out);
}

void paxos_proposer_tick(struct paxos_proposer *p, paxos_time now, const struct paxos_emitter *out)
{
	if (!p->leader)
		return;
	for (paxos_iid iid = p->first; iid - p->first < p->o.window; iid++) {
		struct instance *inst = slot_of(p, iid);
		if (inst->state == INSTANCE_P1_PENDING && now >= inst->deadline)
			fire(p, inst, EV_TO1, NULL, now, out);
		else if (inst->state == INSTANCE_P2_PENDING && now >= inst->deadline)
			fire(p, inst, EV_TO2, NULL, now, out);
	}
	assign_pending(p, now, out);
}

uint32_t paxos_proposer_pending(const struct paxos_proposer *p)
{
	return pending_count(&p->pending);
}

uint32_t paxos_proposer_epoch(const struct paxos_proposer *p)
{
	return p->epoch;
}
