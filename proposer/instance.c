/* SPDX-License-Identifier: BSD-3-Clause */
#include "instance.h"

#include <string.h>

#include "ballot.h"
#include "batch.h"
#include "paxos_assert.h"
#include "settled.h"

void instance_init(struct instance *inst, uint8_t *v1_buf, uint8_t *v2_buf)
{
	memset(inst, 0, sizeof(*inst));
	inst->v1 = v1_buf;
	inst->v2 = v2_buf;
	instance_reset(inst, 0);
}

void instance_reset(struct instance *inst, paxos_iid iid)
{
	inst->iid = iid;
	inst->state = INSTANCE_EMPTY;
	inst->ballot = 0;
	inst->pset = 0;
	inst->v1_len = 0;
	inst->vb = 0;
	inst->v2_len = 0;
	inst->has_v2 = false;
	inst->v2_ballot = 0;
	inst->cv = false;
	inst->values = 0;
	inst->claimed = false;
	inst->settled = false;
	inst->opened = false;
	inst->deadline = 0;
	inst->sent_at = 0;
	inst->timeouts = 0;
}

/* A retry that comes back faster than the round trip outdates its own promises before they
 * arrive, forever: so each timeout of an instance doubles its next wait (up to the ceiling). */
#define MAX_BACKOFF_SHIFT 10

/* Thesis 3.5.3 on the phase 1 and phase 2 timeouts: "There is no magic number to pick those
 * values, since they depend almost entirely on (i) the disk latency of acceptors and (ii) the
 * network latency." and "one could use those counter to dynamically increase or reduce the
 * timeout intervals at runtime". The adaptive timeouts measure the round trips instead of
 * counting timeouts: a measure follows the latency at once, a count only after it failed. */
paxos_time instance_timeout(const struct instance_ctx *ctx, const struct instance *inst, int phase)
{
	paxos_time t = phase == 1 ? ctx->phase1_timeout : ctx->phase2_timeout;
	const struct rtt_estimate *e = ctx->rtt ? &ctx->rtt[phase - 1] : NULL;
	if (e && e->valid) {
		t = e->srtt + 4 * e->rttvar;
		if (t < ctx->timeout_floor)
			t = ctx->timeout_floor;
	}
	uint32_t shift = inst->timeouts < MAX_BACKOFF_SHIFT ? inst->timeouts : MAX_BACKOFF_SHIFT;
	t <<= shift;
	if (ctx->timeout_ceiling && t > ctx->timeout_ceiling)
		t = ctx->timeout_ceiling;
	return t;
}

static void rtt_sample(const struct instance_ctx *ctx, const struct instance *inst, int phase,
		       paxos_time now)
{
	if (!ctx->rtt || inst->timeouts || !inst->sent_at || now < inst->sent_at)
		return;
	struct rtt_estimate *e = &ctx->rtt[phase - 1];
	paxos_time s = now - inst->sent_at;
	if (!e->valid) {
		*e = (struct rtt_estimate){s, s / 2, true};
		return;
	}
	paxos_time d = s > e->srtt ? s - e->srtt : e->srtt - s;
	e->rttvar = (3 * e->rttvar + d) / 4;
	e->srtt = (7 * e->srtt + s) / 8;
}

/* The quorum of iid's configuration, 0 when iid may get no vote counted (its configuration is
 * not known); *members: the acceptors whose promises count. Thesis 2.3.1: the leader waits for
 * "a majority (i.e., floor(n/2) + 1 where n is the number of acceptors) of promises". */
static uint32_t instance_quorum(const struct instance_ctx *ctx, paxos_iid iid, uint32_t *members)
{
	if (!ctx->membership) {
		*members = ctx->acceptors >= 32 ? UINT32_MAX : (1u << ctx->acceptors) - 1;
		return ctx->acceptors / 2 + 1;
	}
	if (!paxos_membership_known(ctx->membership, iid)) {
		*members = 0;
		return 0;
	}
	*members = paxos_membership_members(ctx->membership, iid);
	return paxos_membership_quorum_of(*members);
}

bool instance_in_phase2(const struct instance *inst)
{
	switch (inst->state) {
	case INSTANCE_P2_PENDING:
		return true;
	case INSTANCE_P1_PENDING:
	case INSTANCE_P1_READY:
		return inst->has_v2;
	default:
		return false;
	}
}

static bool same_value(const uint8_t *a, uint32_t alen, const struct paxos_value *b)
{
	return b && alen == b->len && (alen == 0 || memcmp(a, b->data, alen) == 0);
}

bool instance_holds(const struct instance *inst, const struct paxos_value *v, paxos_ballot ballot)
{
	if (!inst->has_v2 || !v)
		return false;
	/* The leader's own frames come back with the ballot it sent them at: no compare of a
	 * whole frame (a few kB at 1 kB values) per instance. */
	if (ballot && ballot == inst->v2_ballot)
		return true;
	return same_value(inst->v2, inst->v2_len, v);
}

static void requeue_one(const struct instance_ctx *ctx, const struct paxos_value *v, uint64_t id)
{
	if (pending_push_front_id(ctx->pending, v->data, v->len, id) == PAXOS_OK)
		ctx->counters->values_requeued++;
	else
		ctx->counters->pending_dropped++;
}

/* Puts every client value of the frame v2 back at the head of the pending list, in frame
 * order: pushed last to first, scratch remembering where each starts. The proposer sizes the
 * list so this does not fail; if it does (a hand-built record), the value is counted lost,
 * and so is a frame we could not have built (malformed, or over batch_limit values). */
static void requeue_v2(const struct instance_ctx *ctx, struct instance *inst)
{
	struct paxos_value frame = {inst->v2, inst->v2_len}, v;
	struct paxos_batch_iter it;
	uint32_t n = 0;
	int rc;
	paxos_batch_iter_init(&it, &frame);
	for (uint32_t at = 0; (rc = paxos_batch_next(&it, &v)) == 1; at = it.off) {
		if (ctx->scratch && n < ctx->batch_limit)
			ctx->scratch[n++] = at;
		else
			ctx->counters->pending_dropped++;
	}
	if (rc != 0 || inst->v2_len == 0)
		ctx->counters->pending_dropped++;
	while (n-- > 0) {
		struct paxos_value rest = {inst->v2 + ctx->scratch[n],
					   inst->v2_len - ctx->scratch[n]};
		paxos_batch_iter_init(&it, &rest);
		if (paxos_batch_next(&it, &v) == 1)
			requeue_one(ctx, &v, it.id);
	}
	inst->has_v2 = false;
	inst->v2_ballot = 0;
	inst->cv = false;
	inst->values = 0;
	inst->claimed = false;
	inst->v2_len = 0;
}

/* Phase 1a. Thesis 2.3.1: "the proposer sends a prepare message to the acceptors consisting
 * of <i, b>, where i is the instance number and b a ballot. It should also set a timeout for
 * this instance at some point in the future." */
static void send_prepare(const struct instance_ctx *ctx, struct instance *inst, paxos_time now,
			 const struct paxos_emitter *out)
{
	struct paxos_message m = {.type = PAXOS_MSG_PREPARE};
	PAXOS_ASSERT(inst->ballot % PAXOS_MAX_PROPOSERS == ctx->proposer_id,
		     "a proposer prepares only with its own ballots");
	m.u.prepare.iid = inst->iid;
	m.u.prepare.ballot = inst->ballot;
	inst->sent_at = now;
	inst->deadline = now + instance_timeout(ctx, inst, 1);
	paxos_emit(out, PAXOS_GROUP_ACCEPTORS, &m);
}

/* Back to phase 1 with ballot b, keeping v2/cv (TO1, TO2, REJECT). Thesis 3.5, TO1: "The
 * proposer increments the ballot, sends the prepare requests, clears the promises and sets
 * the timeout." */
static void restart_phase1(const struct instance_ctx *ctx, struct instance *inst, paxos_ballot b,
			   paxos_time now, const struct paxos_emitter *out)
{
	inst->state = INSTANCE_P1_PENDING;
	inst->ballot = b;
	if (ctx->highest && b > *ctx->highest)
		*ctx->highest = b;
	inst->pset = 0;
	inst->v1_len = 0;
	inst->vb = 0;
	send_prepare(ctx, inst, now, out);
}

/* Phase 1 is over: <I, p1_ready, b, {}, null, 0, v2, cv>. */
static void phase1_done(struct instance *inst)
{
	inst->state = INSTANCE_P1_READY;
	inst->pset = 0;
	inst->v1_len = 0;
	inst->vb = 0;
	inst->deadline = 0;
}

/* Whether the instance may move on to ballot b: it must be new (a ballot that did not grow
 * means the ballot space is exhausted, and preparing the same ballot again could pair it with
 * a second value) and allowed by the proposer. */
static bool may_use(const struct instance_ctx *ctx, const struct instance *inst, paxos_ballot b)
{
	if (b <= inst->ballot)
		return false;
	return !ctx->may_use_ballot || ctx->may_use_ballot(ctx->may_use_ballot_arg, b);
}

/* TO1, TO2, REJECT: phase 1 again with b, or, without a usable ballot, wait for the next
 * timeout in the same state. The waiting departs from Fig. 3.1, where a timeout always moves
 * on: an exhausted ballot space or an epoch not yet durable leaves no ballot to move on with. */
static void retry_with(const struct instance_ctx *ctx, struct instance *inst, paxos_ballot b,
		       paxos_time now, const struct paxos_emitter *out)
{
	if (may_use(ctx, inst, b))
		restart_phase1(ctx, inst, b, now, out);
	else
		inst->deadline =
		    now + instance_timeout(ctx, inst, inst->state == INSTANCE_P2_PENDING ? 2 : 1);
}

/* S. Thesis 3.5: "the proposer executes phase 1 for the first time in this instance,
 * numbered I. It generates its first ballot." An instance released by a former leadership
 * keeps its last ballot and continues above it: reusing a ballot could pair it with a second
 * value. One started after a reject starts above the ballot it named (to_beat), where the
 * thesis would start at the first ballot and be rejected once per instance. */
static void on_start(const struct instance_ctx *ctx, struct instance *inst, paxos_time now,
		     const struct paxos_emitter *out)
{
	paxos_ballot b = inst->ballot ? ballot_increment(inst->ballot)
				      : ballot_first(ctx->proposer_id, ctx->epoch);
	if (ctx->to_beat && *ctx->to_beat >= b)
		b = ballot_increment_skip(b, *ctx->to_beat, ctx->proposer_id);
	if (may_use(ctx, inst, b))
		restart_phase1(ctx, inst, b, now, out);
}

/* Thesis 3.5, P: "The ballot number must match the one stored, otherwise the message is
 * dropped." So must the instance, and the acceptor must be one whose vote counts here. */
static bool promise_counts(const struct instance_ctx *ctx, const struct instance *inst,
			   const struct paxos_promise *p)
{
	uint32_t members;
	return p && p->iid == inst->iid && p->ballot == inst->ballot && p->acceptor_id < 32 &&
	       instance_quorum(ctx, inst->iid, &members) && (members & (1u << p->acceptor_id)) &&
	       p->value.len <= ctx->max_value && (p->value.len == 0 || p->value.data);
}

/* P. Thesis 3.5: "if p_a contains a value, and the corresponding value ballot is higher than
 * vb, then v1 is set to the value in the promise and vb to its value ballot. If the size of
 * pset is now equal to the majority of acceptors, one of R0 or R1 is triggered." */
static enum instance_state on_promise(const struct instance_ctx *ctx, struct instance *inst,
				      const struct paxos_promise *p, paxos_time now,
				      const struct paxos_emitter *out)
{
	uint32_t bit = 1u << p->acceptor_id;
	if (inst->pset & bit)
		return inst->state; /* a duplicate does not count twice */
	inst->pset |= bit;
	if (p->value_ballot > inst->vb) {
		if (p->value.len)
			memcpy(inst->v1, p->value.data, p->value.len);
		inst->v1_len = p->value.len;
		inst->vb = p->value_ballot;
	}
	uint32_t members, quorum = instance_quorum(ctx, inst->iid, &members);
	if (!quorum || (uint32_t)__builtin_popcount(inst->pset) < quorum)
		return inst->state;
	rtt_sample(ctx, inst, 1, now);
	return instance_step(ctx, inst, inst->vb ? EV_R1 : EV_R0, NULL, now, out);
}

/* The client values of v1 that wait in our list too (clients send to every proposer, and a
 * leader that lost its leadership got its values back) leave it: proposed again in another
 * instance, they would be delivered twice. Returns how many values v1 holds when any left the
 * list (v1 is then ours: should it lose the instance after all, they go back), else 0. */
static uint32_t claim_v1(const struct instance_ctx *ctx, const struct paxos_value *v1,
			 uint32_t *removed)
{
	struct paxos_batch_iter it;
	struct paxos_value one;
	uint32_t values = 0;
	bool claimed = false;
	paxos_batch_iter_init(&it, v1);
	while (paxos_batch_next(&it, &one) == 1) {
		values++;
		if (pending_remove_id(ctx->pending, one.data, one.len, it.id,
				      pending_key(one.data, one.len, it.id))) {
			claimed = true;
			if (removed)
				(*removed)++;
		}
	}
	return claimed ? values : 0;
}

/* R1: the value with the highest value ballot must be proposed (the four cases of 3.5).
 * Thesis 2.3.2: "The coordinator is forced to select the value V with the highest associated
 * ballot VB and execute phase 2 with it." For v1 != v2 with cv, thesis 3.5: "push back v2 to
 * the head of the pending list [...] The client value will be sent in another instance."
 * Taking v1's client values off our pending list (claim_v1) goes beyond the thesis: every
 * proposer queues every client value here, and a copy left there would be chosen twice. */
static void adopt_v1(const struct instance_ctx *ctx, struct instance *inst)
{
	struct paxos_value v1 = {inst->v1, inst->v1_len};
	if (inst->has_v2 && same_value(inst->v2, inst->v2_len, &v1)) {
		phase1_done(inst); /* v1 = v2: our value survived, keep cv */
		return;
	}
	if (inst->has_v2 && inst->cv)
		requeue_v2(ctx, inst); /* our client's value goes to another instance */
	if (inst->v1_len)
		memcpy(inst->v2, inst->v1, inst->v1_len);
	inst->v2_len = inst->v1_len;
	inst->has_v2 = true;
	inst->v2_ballot = 0;
	inst->values = ctx->pending ? claim_v1(ctx, &v1, NULL) : 0;
	inst->cv = inst->values > 0;
	inst->claimed = true;
	phase1_done(inst);
}

void instance_settle(const struct instance_ctx *ctx, const struct paxos_value *v)
{
	uint32_t count;
	if (!v || (v->len && !v->data) || paxos_batch_count(v, &count) != PAXOS_OK)
		return; /* a skip, a membership command: no client value */
	struct paxos_batch_iter it;
	struct paxos_value one;
	paxos_batch_iter_init(&it, v);
	while (paxos_batch_next(&it, &one) == 1) {
		/* The copy of this submission leaves the list; a value that names none takes an
		 * equal one that names none either. Only a submission can leave a credit: two
		 * submitters' equal bytes are two values, and one never settles the other. */
		uint64_t key = pending_key(one.data, one.len, it.id); /* once per value */
		if (pending_remove_id(ctx->pending, one.data, one.len, it.id, key))
			ctx->counters->values_settled++;
		else if (ctx->settled && it.id)
			settled_add(ctx->settled, key);
	}
}

/* C with the chosen value known: a value another proposer got chosen here is settled at once
 * (instance_settle), not only when it is delivered: values above may be assigned before that,
 * and a value still in the list would be chosen twice (the learner may close an
 * instance of the former leader behind a hole). Settling only the copies the list held then
 * is not enough: a client's copy may reach us between the close and the delivery (it was
 * lost on the way, and resubmitted), so the values not in the list leave credits, and the
 * delivery settles nothing more. The same holds for a value we adopted in phase 1: claim_v1
 * took the copies the list held then, and the rest are settled now. */
static void claim_closed(const struct instance_ctx *ctx, struct instance *inst,
			 const struct paxos_value *v)
{
	if (v->len > ctx->max_value || (v->len && !v->data) || !ctx->pending)
		return;
	if (!ctx->settled) {
		/* Repairs: the values leave the list; the delivery settles the rest. */
		if (inst->has_v2 && inst->cv)
			return;
		if (v->len)
			memcpy(inst->v2, v->data, v->len);
		inst->v2_len = v->len;
		inst->has_v2 = true;
		inst->v2_ballot = 0;
		inst->claimed = true;
		uint32_t removed = 0;
		inst->values = claim_v1(ctx, v, &removed);
		inst->cv = inst->values > 0;
		ctx->counters->values_settled += removed;
		return;
	}
	/* A frame we packed: chosen (its values left the list when packed), or lost (given
	 * back, and v settled, when v is delivered). No compare on the leader's path. */
	if (inst->has_v2 && inst->cv && !inst->claimed)
		return;
	bool same = inst->has_v2 && same_value(inst->v2, inst->v2_len, v);
	if (!same && inst->has_v2 && inst->cv)
		return; /* an adopted value lost: likewise */
	if (!same) {
		if (v->len) /* what a repair of this instance sends */
			memcpy(inst->v2, v->data, v->len);
		inst->v2_len = v->len;
		inst->has_v2 = true;
		inst->v2_ballot = 0;
	}
	instance_settle(ctx, v);
	inst->claimed = true;
	inst->settled = true;
	inst->cv = false; /* chosen: nothing goes back to the list */
	inst->values = 0;
}

/* A with no client value waiting but a skip wanted: the instance carries the skip frame, as
 * an adopted value would (cv false: nothing goes back to the pending list if it loses). */
static bool assign_skip(const struct instance_ctx *ctx, struct instance *inst, bool wanted)
{
	if (!wanted)
		return false;
	if (ctx->may_assign && ctx->may_assign(ctx->may_assign_arg, inst) == 0)
		return false;
	paxos_batch_write_skip(inst->v2);
	inst->v2_len = PAXOS_BATCH_SKIP_LEN;
	inst->has_v2 = true;
	inst->v2_ballot = 0;
	inst->cv = false;
	inst->values = 0;
	if (ctx->skip_wanted)
		*ctx->skip_wanted = false;
	ctx->counters->skips_proposed++;
	return true;
}

/* A with a membership command wanted: it is the instance's whole value, as a skip is (cv
 * false: if it loses, the proposer asks for it again, see paxos_proposer_delivered). */
static bool assign_command(const struct instance_ctx *ctx, struct instance *inst)
{
	if (ctx->may_assign && ctx->may_assign(ctx->may_assign_arg, inst) == 0)
		return false;
	memcpy(inst->v2, ctx->command->bytes, ctx->command->len);
	inst->v2_len = ctx->command->len;
	inst->has_v2 = true;
	inst->v2_ballot = 0;
	inst->cv = false;
	inst->values = 0;
	ctx->command->wanted = false;
	ctx->command->in = inst->iid;
	return true;
}

/* A: packs waiting client values into one frame, as many as fit, batch_limit and the
 * proposer allow. Thesis 3.7.4: "This is done by popping different values from the pending
 * list and sending them as one composite value." Whatever waits goes now: nothing waits for a
 * batch to fill. */
static bool assign_client_value(const struct instance_ctx *ctx, struct instance *inst)
{
	if (ctx->values_from && inst->iid < *ctx->values_from)
		return assign_skip(ctx, inst, true); /* the old leader's: see handover_at */
	if (ctx->command && ctx->command->wanted)
		return assign_command(ctx, inst);
	if (pending_count(ctx->pending) == 0)
		return assign_skip(ctx, inst, ctx->skip_wanted && *ctx->skip_wanted);
	uint32_t room = ctx->batch_limit ? ctx->batch_limit : 1;
	if (ctx->may_assign) {
		uint32_t allowed = ctx->may_assign(ctx->may_assign_arg, inst);
		if (allowed < room)
			room = allowed;
	}
	uint32_t used = 0, n = 0;
	while (n < room && pending_count(ctx->pending) > 0) {
		struct paxos_value front = pending_at(ctx->pending, 0);
		uint64_t id = pending_front_id(ctx->pending);
		/* A value goes with its submission id, or into the next frame: without it, the
		 * other proposers could not tell its copies from other submissions. */
		if (id && n > 0 &&
		    paxos_batch_size(front.len) + PAXOS_BATCH_ID_BYTES > ctx->max_value - used)
			break;
		uint8_t *dst =
		    paxos_batch_reserve_id(inst->v2, ctx->max_value, &used, front.len, id);
		uint32_t len;
		if (!dst || !pending_pop_front(ctx->pending, dst, &len))
			break;
		n++;
	}
	if (n == 0)
		return false;
	inst->v2_len = used;
	inst->has_v2 = true;
	inst->v2_ballot = 0;
	inst->cv = true;
	inst->values = n;
	return true;
}

/* E. Thesis 3.5: "the proposer executes phase 2 with ballot b and value v2. [...] A timeout
 * is set." */
static void send_accept(const struct instance_ctx *ctx, struct instance *inst, paxos_time now,
			const struct paxos_emitter *out)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPT};
	PAXOS_ASSERT(inst->ballot % PAXOS_MAX_PROPOSERS == ctx->proposer_id,
		     "a proposer proposes only with its own ballots");
	m.u.accept.iid = inst->iid;
	m.u.accept.ballot = inst->ballot;
	m.u.accept.value.data = inst->v2;
	m.u.accept.value.len = inst->v2_len;
	if (ctx->chosen && ctx->chosen->ballot == inst->ballot) {
		m.u.accept.chosen_from = ctx->chosen->from;
		m.u.accept.chosen_to = ctx->chosen->to;
		ctx->chosen->said = ctx->chosen->to;
	}
	if (ctx->chosen)
		ctx->chosen->accepted = true;
	m.u.accept.spares_rest = ctx->spares_rest && *ctx->spares_rest;
	if (ctx->highest_iid && inst->iid > *ctx->highest_iid)
		*ctx->highest_iid = inst->iid;
	inst->state = INSTANCE_P2_PENDING;
	inst->opened = true;
	inst->v2_ballot = inst->ballot;
	inst->sent_at = now;
	inst->deadline = now + instance_timeout(ctx, inst, 2);
	if (inst->cv) {
		ctx->counters->values_proposed += inst->values;
		ctx->counters->instances_proposed++;
	}
	paxos_emit(out, PAXOS_GROUP_ACCEPTORS, &m);
}

/* D: the delivered value v settles our client value; then the slot is free again. Thesis 3.5,
 * for v' != v2 with cv: "push back v2 to the head of the pending list, since we could not
 * deliver it in this instance." */
static void on_delivered(const struct instance_ctx *ctx, struct instance *inst,
			 const struct paxos_value *v, paxos_ballot ballot)
{
	if (inst->has_v2 && inst->cv && !instance_holds(inst, v, ballot))
		requeue_v2(ctx, inst);
	/* v = v2 with cv: our client's value is delivered; anything else needs nothing. */
	instance_reset(inst, inst->iid);
}

static bool reject_applies(const struct instance *inst, const struct paxos_reject *r)
{
	/* A reject that does not beat our ballot answers an older request (the acceptor has
	 * promised us since): jumping again would inflate the ballot once per acceptor. */
	return r && r->iid == inst->iid && r->ballot > inst->ballot;
}

enum instance_state instance_step(const struct instance_ctx *ctx, struct instance *inst,
				  enum instance_event ev, const struct instance_arg *arg,
				  paxos_time now, const struct paxos_emitter *out)
{
	enum instance_state s = inst->state;
	bool had_v2 = inst->has_v2;
	uint32_t v2_len = inst->v2_len;

	switch (ev) {
	case EV_S:
		if (s == INSTANCE_EMPTY)
			on_start(ctx, inst, now, out);
		break;
	case EV_TO1:
		if (s == INSTANCE_P1_PENDING) {
			ctx->counters->phase1_timeouts++;
			inst->timeouts++;
			retry_with(ctx, inst, ballot_increment(inst->ballot), now, out);
		}
		break;
	case EV_P:
		if (s == INSTANCE_P1_PENDING && arg && promise_counts(ctx, inst, arg->promise))
			return on_promise(ctx, inst, arg->promise, now, out);
		break;
	case EV_R0:
		/* Thesis 3.5, R0: "If v2 is null, the proposer assigns to it the next element
		 * from the pending list of client values and sets cv to true. Then A is
		 * executed." */
		if (s == INSTANCE_P1_PENDING) {
			phase1_done(inst);
			return instance_step(ctx, inst, EV_A, NULL, now, out);
		}
		break;
	case EV_R1:
		if (s == INSTANCE_P1_PENDING) {
			if (inst->vb == 0) /* no value found after all: that is R0 */
				return instance_step(ctx, inst, EV_R0, NULL, now, out);
			adopt_v1(ctx, inst);
			return instance_step(ctx, inst, EV_E, NULL, now, out);
		}
		break;
	case EV_NV:
		/* Thesis 3.5, NV: "This instance is not used until a value is submitted by some
		 * client." */
		break; /* P1_READY without a value stays so until A finds one */
	case EV_A:
		if (s != INSTANCE_P1_READY)
			break;
		if (inst->has_v2 || assign_client_value(ctx, inst))
			return instance_step(ctx, inst, EV_E, NULL, now, out);
		return instance_step(ctx, inst, EV_NV, NULL, now, out);
	case EV_E:
		if (s == INSTANCE_P1_READY && inst->has_v2)
			send_accept(ctx, inst, now, out);
		break;
	case EV_C:
		/* Thesis 3.5, C: "This instance can be ignored until it is delivered (D5)." */
		if (s == INSTANCE_P2_PENDING)
			rtt_sample(ctx, inst, 2, now);
		if (s != INSTANCE_CLOSED && arg && arg->value)
			claim_closed(ctx, inst, arg->value);
		if (s != INSTANCE_CLOSED) {
			inst->state = INSTANCE_CLOSED;
			inst->pset = 0;
			inst->v1_len = 0;
			inst->vb = 0;
			inst->deadline = 0;
		}
		break;
	case EV_TO2:
		/* Thesis 3.5, TO2: "the timer for phase 2 expired. It is necessary to restart
		 * from phase 1." (3.7.1: "the proposer is forced by the protocol to go through
		 * phase 1 again.") */
		if (s == INSTANCE_P2_PENDING) {
			ctx->counters->phase2_timeouts++;
			inst->timeouts++;
			retry_with(ctx, inst, ballot_increment(inst->ballot), now, out);
		}
		break;
	case EV_D:
		on_delivered(ctx, inst, arg ? arg->value : NULL, arg ? arg->value_ballot : 0);
		break;
	case EV_REPAIR:
		if (s == INSTANCE_P1_READY && !inst->has_v2)
			retry_with(ctx, inst, ballot_increment(inst->ballot), now, out);
		break;
	case EV_REJECT:
		if ((s == INSTANCE_P1_PENDING || s == INSTANCE_P2_PENDING) && arg &&
		    reject_applies(inst, arg->reject)) {
			ctx->counters->rejects_received++;
			if (ctx->to_beat && arg->reject->ballot > *ctx->to_beat)
				*ctx->to_beat = arg->reject->ballot;
			paxos_ballot b = ballot_increment_skip(inst->ballot, arg->reject->ballot,
							       ctx->proposer_id);
			if (may_use(ctx, inst, b))
				restart_phase1(ctx, inst, b, now, out);
		}
		break;
	default:
		break;
	}
	PAXOS_ASSERT(s != INSTANCE_CLOSED || ev == EV_D ||
			 (inst->state == INSTANCE_CLOSED && inst->has_v2 == had_v2 &&
			  inst->v2_len == v2_len),
		     "a closed instance keeps its value until it is delivered");
	return inst->state;
}

void instance_release(const struct instance_ctx *ctx, struct instance *inst)
{
	if (inst->state == INSTANCE_CLOSED)
		return;
	if (inst->has_v2 && inst->cv)
		requeue_v2(ctx, inst);
	paxos_ballot last = inst->ballot;
	instance_reset(inst, inst->iid);
	inst->ballot = last;
}

const char *instance_state_name(enum instance_state s)
{
	static const char *const names[] = {
	    [INSTANCE_EMPTY] = "empty",       [INSTANCE_P1_PENDING] = "p1_pending",
	    [INSTANCE_P1_READY] = "p1_ready", [INSTANCE_P2_PENDING] = "p2_pending",
	    [INSTANCE_CLOSED] = "closed",
	};
	if ((unsigned)s >= INSTANCE_STATE_COUNT)
		return "unknown";
	return names[s];
}

const char *instance_event_name(enum instance_event e)
{
	static const char *const names[] = {
	    [EV_S] = "S",           [EV_TO1] = "TO1", [EV_P] = "P", [EV_R0] = "R0",
	    [EV_R1] = "R1",         [EV_NV] = "NV",   [EV_A] = "A", [EV_E] = "E",
	    [EV_C] = "C",           [EV_TO2] = "TO2", [EV_D] = "D", [EV_REJECT] = "REJECT",
	    [EV_REPAIR] = "REPAIR",
	};
	if ((unsigned)e >= INSTANCE_EVENT_COUNT)
		return "unknown";
	return names[e];
}
