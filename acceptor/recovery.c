#include "recovery.h"

#include <string.h>

void recovery_init(struct recovery *r, uint32_t id, struct paxos_counters *counters)
{
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->counters = counters;
}

/* Other acceptors that must answer: enough to share one with every quorum that includes us. */
static uint32_t acceptors_needed(const struct recovery *r)
{
	uint32_t n = r->m.acceptors, need = n - (n / 2 + 1) + 1;
	return need > n - 1 ? n - 1 : need;
}

static void maybe_recovered(struct recovery *r)
{
	if (!r->recovering ||
	    (uint32_t)__builtin_popcount(r->acceptors_answered) < acceptors_needed(r))
		return;
	if (r->proposers_answered < r->m.proposers &&
	    (r->m.recovery_ticks == 0 || r->age < r->m.recovery_ticks))
		return;
	r->recovering = false;
	r->floor = r->heard_iid;
	r->fence = r->heard_ballot;
	r->counters->recoveries++;
}

int recovery_join(struct recovery *r, const struct paxos_acceptor_membership *m)
{
	if (!m || m->acceptors == 0 || m->acceptors > PAXOS_MAX_ACCEPTORS ||
	    r->id >= m->acceptors || m->proposers > PAXOS_MAX_PROPOSERS || m->incarnation == 0)
		return PAXOS_E_INVALID;
	recovery_init(r, r->id, r->counters);
	r->joined = true;
	r->m = *m;
	r->recovering = m->amnesiac;
	r->floor = m->floor;
	r->fence = m->fence;
	if (r->recovering)
		maybe_recovered(r); /* a single acceptor with no proposers has no one to ask */
	return PAXOS_OK;
}

enum vote recovery_may_vote(const struct recovery *r, paxos_iid iid, paxos_ballot ballot)
{
	if (r->recovering || iid <= r->floor)
		return WITHHOLD;
	return ballot <= r->fence ? REJECT_BELOW_FENCE : VOTE;
}

void recovery_note_vote(struct recovery *r, paxos_ballot ballot)
{
	if (ballot > r->voted_ballot)
		r->voted_ballot = ballot;
}

void recovery_handle_info(struct recovery *r, const struct paxos_recover_info *info)
{
	if (!r->recovering || info->acceptor_id != r->id || info->incarnation != r->m.incarnation ||
	    !paxos_ballot_plausible(info->highest_ballot))
		return;
	if (info->role == PAXOS_ROLE_ACCEPTOR) {
		if (info->sender_id == r->id || info->sender_id >= r->m.acceptors)
			return;
		r->acceptors_answered |= 1u << info->sender_id;
	} else if (info->role == PAXOS_ROLE_PROPOSER) {
		if (info->sender_id >= r->m.proposers)
			return;
		if (!r->answered[info->sender_id]) {
			r->answered[info->sender_id] = true;
			r->proposers_answered++;
		}
	} else {
		return;
	}
	if (info->highest_iid > r->heard_iid)
		r->heard_iid = info->highest_iid;
	if (info->highest_ballot > r->heard_ballot)
		r->heard_ballot = info->highest_ballot;
	maybe_recovered(r);
}

int recovery_handle_hello(struct recovery *r, const struct paxos_acceptor_hello *h, bool *answer)
{
	*answer = false;
	if (!r->joined)
		return PAXOS_OK;
	if (h->acceptor_id == r->id) {
		if (h->incarnation == r->m.incarnation)
			return PAXOS_OK; /* our own, looped back */
		r->counters->duplicate_acceptors++;
		if (h->incarnation > r->m.incarnation) {
			r->duplicate = h->incarnation; /* a newer one: it stops */
			return PAXOS_OK;
		}
		/* An older one: stop only if it still speaks two of our ticks after we first
		 * heard it; a predecessor that crashed may have a hello still on its way. */
		if (r->duplicate != h->incarnation) {
			r->duplicate = h->incarnation;
			r->duplicate_since = r->ticks;
			return PAXOS_OK;
		}
		return r->ticks - r->duplicate_since >= 2 ? PAXOS_E_DUPLICATE : PAXOS_OK;
	}
	*answer = h->recovering && h->acceptor_id < r->m.acceptors;
	return PAXOS_OK;
}

bool recovery_waits_for(const struct recovery *r, uint32_t acceptor_id)
{
	return r->recovering && acceptor_id < r->m.acceptors && acceptor_id != r->id &&
	       !(r->acceptors_answered & (1u << acceptor_id));
}

/*
 * The highest instance this acceptor accepted (or, below its own floor, may have) a value for.
 * A recovering acceptor's earlier life accepted only in instances where a quorum promised
 * first, and enough of the others answer that one of them is in that quorum: its promise was
 * followed by the accept, which the proposer's answer covers while it is on its way, and which
 * this acceptor's record shows once it arrived here. Promises alone (phase 1 runs a window
 * ahead) do not raise the floor: below the fence they cannot be used again.
 */
void recovery_answer(const struct recovery *r, const struct paxos_acceptor_hello *h,
		     paxos_iid highest, struct paxos_recover_info *out)
{
	*out = (struct paxos_recover_info){
	    .role = PAXOS_ROLE_ACCEPTOR,
	    .sender_id = r->id,
	    .acceptor_id = h->acceptor_id,
	    .incarnation = h->incarnation,
	    .highest_iid = r->floor > highest ? r->floor : highest,
	    .highest_ballot = r->voted_ballot > r->fence ? r->voted_ballot : r->fence,
	};
}

void recovery_emit_hello(const struct recovery *r, const struct paxos_emitter *out)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_HELLO};
	m.u.acceptor_hello.acceptor_id = r->id;
	m.u.acceptor_hello.incarnation = r->m.incarnation;
	m.u.acceptor_hello.recovering = r->recovering;
	paxos_emit(out, PAXOS_GROUP_ACCEPTORS, &m);
}

/* Answers may be lost: the question is asked until recovered. */
void recovery_tick(struct recovery *r, const struct paxos_emitter *out)
{
	r->ticks++;
	recovery_emit_hello(r, out);
	if (!r->recovering)
		return;
	r->age++;
	maybe_recovered(r);
	recovery_emit_ask(r, out);
}

void recovery_emit_ask(const struct recovery *r, const struct paxos_emitter *out)
{
	if (!r->recovering)
		return;
	struct paxos_message m = {.type = PAXOS_MSG_RECOVER_ASK};
	m.u.recover_ask.acceptor_id = r->id;
	m.u.recover_ask.incarnation = r->m.incarnation;
	paxos_emit(out, PAXOS_GROUP_PROPOSERS, &m);
}
