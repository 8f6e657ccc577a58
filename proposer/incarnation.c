/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A proposer's incarnations: the epoch its ballots are in (each restart starts one above the
 * last), raised past a skip only once durable, and the answer to an acceptor that lost its
 * state, which must cover every ballot and accept of this incarnation and the earlier ones.
 */
#include <paxos/proposer.h>

#include "ballot.h"
#include "leader_state.h"

/* A ballot in a later epoch's range (after a skip) may only leave once that epoch is
 * durable: else our next incarnation, starting one epoch above ours, could reach the same
 * ballot again. The proposer takes it at once, and its ready says to store it (epoch above
 * epoch_stored); the driver stores it before our messages leave. The raise goes to that
 * ballot's epoch, never further, and never to an implausible one (see
 * PAXOS_PLAUSIBLE_EPOCHS): the epochs left for restarts stay. */
bool proposer_may_use_ballot(void *arg, paxos_ballot b)
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

/* An acceptor that lost its state asks every proposer, leading or not, how far its ballots
 * and accepts went: it must not vote at or below them (see paxos_acceptor_join); an accept
 * still on its way could make its earlier life part of a quorum. Earlier
 * incarnations of this proposer used lower epochs: the ballot just below our first covers
 * them even before we prepared anything. */
void proposer_answer_recovering(const struct paxos_proposer *p, const struct paxos_recover_ask *r,
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
void proposer_note_time(struct paxos_proposer *p, paxos_time now)
{
	if (!p->started) {
		p->started = true;
		p->started_at = now;
	}
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
