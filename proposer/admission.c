/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which instances of the window a leader may open, and which may take client values and how
 * many: the ordering rule of thesis 3.7.2, flow control (4.6.1), the wait after a takeover
 * and the one at a handover between leaders, and the proposer sets of the configurations.
 */
#include "leader_state.h"

/* The lowest live instance that has no value and is not closed (first + window if none). */
paxos_iid proposer_frontier(struct paxos_proposer *p)
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
uint32_t proposer_may_assign(void *arg, const struct instance *inst)
{
	struct paxos_proposer *p = arg;
	if (inst->iid > proposer_frontier(p) || !took_over(p))
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

/* Whether iid's configuration is known, so that it may be opened (always, without one). */
bool proposer_config_known(const struct paxos_proposer *p, paxos_iid iid)
{
	return !p->o.membership || paxos_membership_known(p->o.membership, iid);
}

/* Whether iid's configuration names us in its proposer set (always, without one). A leader
 * a change removes opens no instance from where the change is in force: there the next leader
 * starts, so the two never hold values in the same instances, and the values the old leader
 * got chosen below are delivered to the next one before it proposes anything (a value both
 * proposed could otherwise be chosen twice, in two instances). Known configurations only
 * (proposer_config_known). */
bool proposer_config_names_us(const struct paxos_proposer *p, paxos_iid iid)
{
	return !p->o.membership || p->o.id >= 32 ||
	       (paxos_membership_proposers(p->o.membership, iid) & (1u << p->o.id)) != 0;
}

/*
 * A leader taking over where a proposer change comes in force (a planned removal of the old
 * leader): the old leader opens nothing from there (proposer_config_names_us) but may still get
 * values chosen below, values we hold too (every proposer queues every client value). So
 * below that instance we close with skips what phase 1 finds empty, and propose client
 * values from there on only once our learner delivered everything below: by then each of
 * the old leader's values chosen there has been settled from our list, and none is chosen
 * twice. 0: no such change ahead of first.
 */
paxos_iid proposer_handover_at(const struct paxos_proposer *p, paxos_iid first)
{
	if (!p->o.membership)
		return 0;
	const struct paxos_configuration *c = paxos_membership_latest(p->o.membership);
	if (!c || c->first <= first || !paxos_membership_known(p->o.membership, first))
		return 0;
	return paxos_membership_proposers(p->o.membership, first) != c->proposers ? c->first : 0;
}
