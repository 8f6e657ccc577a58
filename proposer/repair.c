/* SPDX-License-Identifier: BSD-3-Clause */
#include "repair.h"

#include <stdlib.h>

#include "ballot.h"

/* Phase 1 retries of one repair before it gives up (the learner asks again if need be). */
#define REPAIR_MAX_TIMEOUTS 6u

/* A repair proposes only what phase 1 finds. */
static uint32_t no_client_values(void *arg, const struct instance *inst)
{
	(void)arg;
	(void)inst;
	return 0;
}

int repairs_init(struct repairs *r, const struct instance_ctx *ctx)
{
	r->ctx = *ctx;
	r->ctx.may_assign = no_client_values;
	r->ctx.may_assign_arg = NULL;
	r->ctx.skip_wanted = NULL;
	r->ctx.command = NULL;
	r->ctx.chosen = NULL;
	r->ctx.spares_rest = NULL;
	r->ctx.settled = NULL; /* the window's instance settles what a repair closes */
	r->ctx.rtt = NULL;     /* a repair's round trips say nothing about the normal ones */
	r->active = 0;
	r->values = malloc((size_t)REPAIR_SLOTS * 2 * ctx->max_value);
	if (!r->values)
		return PAXOS_E_NOMEM;
	for (uint32_t k = 0; k < REPAIR_SLOTS; k++) {
		uint8_t *v1 = r->values + (size_t)k * 2 * ctx->max_value;
		instance_init(&r->slots[k], v1, v1 + ctx->max_value);
	}
	return PAXOS_OK;
}

void repairs_destroy(struct repairs *r)
{
	free(r->values);
	r->values = NULL;
}

struct instance *repairs_find(struct repairs *r, paxos_iid iid)
{
	if (r->active == 0 || iid == 0)
		return NULL;
	for (uint32_t k = 0; k < REPAIR_SLOTS; k++)
		if (r->slots[k].iid == iid)
			return &r->slots[k];
	return NULL;
}

static void finish(struct repairs *r, struct instance *inst)
{
	instance_reset(inst, 0);
	r->active--;
}

bool repairs_start(struct repairs *r, paxos_iid iid, paxos_ballot above, paxos_time now,
		   const struct paxos_emitter *out)
{
	if (iid == 0 || repairs_find(r, iid) || r->active == REPAIR_SLOTS)
		return false;
	struct instance *inst = NULL;
	for (uint32_t k = 0; k < REPAIR_SLOTS && !inst; k++)
		if (r->slots[k].iid == 0)
			inst = &r->slots[k];
	instance_reset(inst, iid);
	r->active++;
	/* S increments the ballot it starts from: the repair's first ballot is one this
	 * proposer never used, for any instance, so it cannot meet a second value. */
	inst->ballot = above ? above : ballot_first(r->ctx.proposer_id, r->ctx.epoch);
	if (instance_step(&r->ctx, inst, EV_S, NULL, now, out) != INSTANCE_P1_PENDING) {
		finish(r, inst); /* no usable ballot left */
		return false;
	}
	return true;
}

void repairs_step(struct repairs *r, struct instance *inst, enum instance_event ev,
		  const struct instance_arg *arg, paxos_time now, const struct paxos_emitter *out)
{
	enum instance_state before = inst->state;
	enum instance_state after = instance_step(&r->ctx, inst, ev, arg, now, out);
	if (after == INSTANCE_P2_PENDING && before != INSTANCE_P2_PENDING)
		r->ctx.counters->instances_repaired++;
}

void repairs_tick(struct repairs *r, paxos_time now, const struct paxos_emitter *out)
{
	for (uint32_t k = 0; k < REPAIR_SLOTS && r->active; k++) {
		struct instance *inst = &r->slots[k];
		if (inst->iid == 0)
			continue;
		bool due = now >= inst->deadline;
		if (inst->state == INSTANCE_P1_PENDING) {
			if (due && inst->timeouts < REPAIR_MAX_TIMEOUTS)
				repairs_step(r, inst, EV_TO1, NULL, now, out);
			else if (due)
				finish(r, inst); /* given up: the learner asks again */
		} else if (inst->state != INSTANCE_P2_PENDING || due) {
			finish(r, inst); /* phase 2 sent and waited for, or R0: nothing to send */
		}
	}
}

void repairs_clear(struct repairs *r)
{
	for (uint32_t k = 0; k < REPAIR_SLOTS; k++)
		if (r->slots[k].iid != 0)
			instance_reset(&r->slots[k], 0);
	r->active = 0;
}
