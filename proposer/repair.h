/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Repairs: a leader runs instances it has decided already once more, for learners that cannot
 * close them (PAXOS_MSG_REPAIR). Each repair is an ordinary Fig. 3.1 instance record outside
 * the window: S with a ballot above every one this proposer used, P until a quorum promised,
 * R1 adopts the value found (a decided instance always has one in every quorum), E sends it
 * in phase 2 to the acceptors that are up. A repair never takes a client value: R0 (no value
 * anywhere) ends it unproposed. It ends once its accept went out and the phase 2 wait passed,
 * or after REPAIR_MAX_TIMEOUTS phase 1 timeouts; a learner still stalled then asks again.
 */
#ifndef PAXOS_PROPOSER_REPAIR_H
#define PAXOS_PROPOSER_REPAIR_H

#include "instance.h"

/* Instances repaired at once; a request for more gets the first ones. */
#define REPAIR_SLOTS 16u

struct repairs {
	struct instance_ctx ctx;             /* the proposer's, with client values refused */
	struct instance slots[REPAIR_SLOTS]; /* iid 0: free */
	uint8_t *values;                     /* v1 and v2 buffers of every slot */
	uint32_t active;
};

/* ctx is copied (the pointers in it are shared with the proposer). */
int repairs_init(struct repairs *r, const struct instance_ctx *ctx);
void repairs_destroy(struct repairs *r);

/* The repair running for iid, or NULL. */
struct instance *repairs_find(struct repairs *r, paxos_iid iid);

/* Starts repairing iid above ballot `above` (the highest this proposer has used). Returns
 * false when iid is repaired already or every slot is busy. */
bool repairs_start(struct repairs *r, paxos_iid iid, paxos_ballot above, paxos_time now,
		   const struct paxos_emitter *out);

/* Fires ev on the repair of iid (a promise or a reject); counts it when it reaches phase 2. */
void repairs_step(struct repairs *r, struct instance *inst, enum instance_event ev,
		  const struct instance_arg *arg, paxos_time now, const struct paxos_emitter *out);

/* Timeouts: TO1 retries phase 1 (a few times), a passed phase 2 wait or R0 ends the repair. */
void repairs_tick(struct repairs *r, paxos_time now, const struct paxos_emitter *out);

/* Leadership lost: every repair stops. */
void repairs_clear(struct repairs *r);

#endif
