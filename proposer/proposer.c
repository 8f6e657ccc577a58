/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proposer core (thesis 3.5): a window of instance state machines (3.5.4), phase 1
 * pre-executed for the whole window (3.7.1), at most `concurrency` instances in phase 2 and
 * client values assigned lowest instance first (3.7.2), and the leader's life: taking over,
 * stepping down, a new log. The functions here only turn inputs into instance events;
 * instance.c decides, admission.c says what the window may take (leader_state.h lists the
 * other files).
 *
 * Thesis 3.5: "Its state consists of a window of instances. The lower bound for this window is
 * the lowest instance not yet closed". Here it is the lowest not yet delivered (first), as in
 * 3.5.4, so that a closed instance behind a hole keeps its record until its delivery (D).
 */
#include <paxos/proposer.h>

#include "leader_state.h"
#include "paxos_assert.h"

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
	for (paxos_iid iid = proposer_frontier(p); iid - p->first < p->o.window; iid++) {
		if (pending_count(&p->pending) == 0 && !p->skip_wanted && !p->command.wanted &&
		    iid >= p->fill_to)
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
		if (!proposer_config_known(p, iid)) {
			p->config_wait = true;
			return;
		}
		if (!proposer_config_names_us(p, iid) && proposer_config_names_us(p, p->first))
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
		proposer_command_released(p);
		p->skip_wanted = false;
		p->values_from = 0;
		p->fill_to = 0;
		p->takeover_end = 0;
		repairs_clear(&p->repairs);
		return;
	}
	p->leader = true;
	p->values_from = proposer_handover_at(p, first > p->first ? first : p->first);
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
	paxos_iid reached = p->highest_iid, was_first = p->first;
	paxos_proposer_set_leader(p, false, 0, now, out); /* values back to the pending list */
	for (paxos_iid iid = 1; iid <= p->o.window; iid++)
		reset(p, slot_of(p, iid), iid);
	p->first = p->frontier = 1;
	p->chosen = (struct chosen_range){0};
	/* What our accepts reached was in the old log: a recovering acceptor of the new one
	 * needs no floor for it (the fence covers those ballots). */
	p->highest_iid = 0;
	/* Our instances may have run in the new log already (the learner hears of it later
	 * than the acceptors vote in it): each starts again above every ballot we used, so
	 * that none pairs a ballot with a second value. */
	if (p->highest > p->to_beat)
		p->to_beat = p->highest;
	repairs_clear(&p->repairs);
	if (!leader)
		return;
	paxos_proposer_set_leader(p, true, 1, now, out);
	/* Those of our instances the new log took hold values above instances nobody proposed
	 * in it (a proposer started from a snapshot's instance, a leader that ran through):
	 * waiting there for client values would hold the learners at each hole. Skips fill
	 * them first, as at a handover, when the old window reached into the new one; above it
	 * client values fill the instances in order before the window gets there. */
	if (reached >= was_first && was_first <= p->o.window && p->values_from <= reached) {
		p->values_from = p->fill_to = reached + 1;
		assign_pending(p, now, out);
	}
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

void paxos_proposer_assign(struct paxos_proposer *p, paxos_time now,
			   const struct paxos_emitter *out)
{
	proposer_refuse(p, out);
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
		proposer_refuse(p, out);
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

void paxos_proposer_handle(struct paxos_proposer *p, const struct paxos_message *m, paxos_time now,
			   const struct paxos_emitter *out)
{
	if (!m)
		return;
	proposer_note_time(p, now);
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
			proposer_refuse(p, out);
		break;
	}
	case PAXOS_MSG_REPAIR:
		repair(p, &m->u.repair, now, out);
		break;
	case PAXOS_MSG_RECOVER_ASK:
		proposer_answer_recovering(p, &m->u.recover_ask, now, out);
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

/* A membership command taken (changes.c) goes to the first instance that may take it. */
static int command_taken(struct paxos_proposer *p, int rc, paxos_time now,
			 const struct paxos_emitter *out)
{
	if (rc == PAXOS_OK)
		assign_pending(p, now, out);
	return rc;
}

int paxos_proposer_change(struct paxos_proposer *p, const struct paxos_value *command,
			  paxos_time now, const struct paxos_emitter *out)
{
	return command_taken(p, proposer_change_command(p, command), now, out);
}

int paxos_proposer_change_membership(struct paxos_proposer *p, uint32_t members, paxos_time now,
				     const struct paxos_emitter *out)
{
	return command_taken(p, proposer_change_set(p, PAXOS_MEMBERSHIP_ACCEPTORS, members), now,
			     out);
}

int paxos_proposer_change_proposers(struct paxos_proposer *p, uint32_t proposers, paxos_time now,
				    const struct paxos_emitter *out)
{
	return command_taken(p, proposer_change_set(p, PAXOS_MEMBERSHIP_PROPOSERS, proposers), now,
			     out);
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

/*
 * Instance iid was delivered with the value proposed at ballot (0: not known). When that is our
 * last accept of the instance's value (v2_ballot), the value we proposed at that ballot is the
 * chosen one, and the accepts we send at it say so from then on, for every instance of the
 * unbroken run of such deliveries (paxos_accept.chosen_to). Anything else ends the run: an
 * accept names one ballot, and what it says must hold for every instance it names.
 */
static void note_chosen(struct paxos_proposer *p, paxos_iid iid, paxos_ballot ballot)
{
	const struct instance *inst = slot_of(p, iid);
	struct chosen_range *c = &p->chosen;
	bool ours = ballot && iid == p->first && inst->iid == iid && inst->v2_ballot == ballot;
	if (!ours)
		*c = (struct chosen_range){.accepted = c->accepted};
	else if (c->ballot == ballot && iid == c->to + 1)
		c->to = iid;
	else
		*c = (struct chosen_range){ballot, iid, iid, 0, c->accepted};
}

/* An idle leader's word on what its last accepts left unsaid: learning acceptors learn from
 * the leader's word alone (paxos_accept.chosen_to), and the instances chosen after its last
 * accept would otherwise wait for their hole check, or for a quorum that may be gone by then.
 * Said once per tick that follows one without accepts, and only what grew. */
static void say_chosen(struct paxos_proposer *p, const struct paxos_emitter *out)
{
	struct chosen_range *c = &p->chosen;
	bool idle = !c->accepted;
	c->accepted = false;
	if (!idle || !c->ballot || c->to <= c->said)
		return;
	PAXOS_ASSERT(c->from >= 1 && c->from <= c->to && c->to < p->first,
		     "a leader says chosen only instances its learner delivered");
	struct paxos_message m = {.type = PAXOS_MSG_CHOSEN};
	m.u.chosen = (struct paxos_chosen){c->ballot, c->from, c->to};
	c->said = c->to;
	p->counters->chosen_said++;
	paxos_emit(out, PAXOS_GROUP_ACCEPTORS, &m);
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
	note_chosen(p, iid, ballot);
	slide(p, iid + 1, iid, v, ballot, now, out);
	proposer_command_delivered(p, iid, v);
	if (p->config_wait && p->leader)
		start_window(p, now, out); /* the delivery made another configuration known */
	if (settle)
		instance_settle(&p->ctx, v); /* per client value of the frame (thesis 3.7.4) */
	assign_pending(p, now, out);
}

void paxos_proposer_tick(struct paxos_proposer *p, paxos_time now, const struct paxos_emitter *out)
{
	static const struct instance fresh; /* no timeouts yet: the base wait */
	proposer_note_time(p, now);
	p->counters->phase1_timeout_us = instance_timeout(&p->ctx, &fresh, 1);
	p->counters->phase2_timeout_us = instance_timeout(&p->ctx, &fresh, 2);
	proposer_refuse(p, out); /* values dropped since the last read */
	if (!p->leader)
		return;
	say_chosen(p, out);
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

void paxos_proposer_spares_rest(struct paxos_proposer *p, bool rest)
{
	if (p)
		p->spares_rest = rest;
}

/* A scan of the window: read on demand (monitoring), never on the protocol's path. */
bool paxos_proposer_votes_wanted(const struct paxos_proposer *p)
{
	return p && p->leader && 2 * p->in_phase2 >= p->congestion.window;
}

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
