/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A proposer's options, memory and creation: the window is a preallocated array of instance
 * records (thesis 3.5.4) with their value buffers, sized once from the options; nothing on the
 * protocol's path allocates.
 */
#include <paxos/proposer.h>

#include <stdlib.h>

#include "batch.h"
#include "leader_state.h"

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
	    .may_assign = proposer_may_assign,
	    .may_assign_arg = p,
	    .may_use_ballot = proposer_may_use_ballot,
	    .may_use_ballot_arg = p,
	    .highest = &p->highest,
	    .highest_iid = &p->highest_iid,
	    .to_beat = &p->to_beat,
	    .skip_wanted = &p->skip_wanted,
	    .values_from = &p->values_from,
	    .membership = o->membership,
	    .command = &p->command,
	    .chosen = &p->chosen,
	    .spares_rest = &p->spares_rest,
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
