/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The election core: when each proposer was last heard, and who leads because of it. The
 * leader is re-evaluated whenever something it depends on changes (a heartbeat, an oracle
 * order, a tick that may expire a proposer), and the owner hears of every change.
 *
 * Thesis 2.2.3: "Proposers relies on an external leader election service, which should
 * nominate a coordinator (or leader) among them. Even a weak failure detector is sufficient
 * for this task." Heartbeats are that detector; a lost heartbeat may make two proposers lead
 * for a while, which costs progress (their ballots keep beating each other), never safety.
 */
#include <paxos/election.h>

#include <stdlib.h>
#include <string.h>

#include "ballot.h"

struct paxos_election {
	struct paxos_election_options o;
	paxos_time last_heard[PAXOS_MAX_PROPOSERS];
	paxos_iid next_iid[PAXOS_MAX_PROPOSERS]; /* as the last heartbeat said */
	paxos_time next_heartbeat;
	bool forced;
	uint32_t forced_leader;
	bool ordered; /* forced by an oracle's order, which holds while its leader is heard */
	uint32_t leader;
	uint32_t members; /* who may lead: ids below 32 by their bit, the others always */
	/* Check-quorum: when each acceptor was last heard, the set in force, and whether a
	 * quorum of it was heard within o.quorum_timeout at the last evaluation. */
	paxos_time acceptor_heard[PAXOS_MAX_ACCEPTORS];
	uint32_t acceptors;
	bool eligible;
};

static bool member(const struct paxos_election *e, uint32_t id)
{
	return id >= 32 || (e->members & (1u << id));
}

static bool options_valid(const struct paxos_election_options *o)
{
	return o->proposers >= 1 && o->proposers <= PAXOS_MAX_PROPOSERS && o->id < o->proposers &&
	       o->heartbeat_interval > 0 && o->heartbeat_timeout > 0 &&
	       (!o->manual || o->manual_leader < o->proposers);
}

bool paxos_election_alive(const struct paxos_election *e, uint32_t id, paxos_time now)
{
	if (id >= e->o.proposers)
		return false;
	if (id == e->o.id)
		return e->eligible;
	/* A time before the last heartbeat (a caller's stale clock) still means alive. */
	return now <= e->last_heard[id] || now - e->last_heard[id] <= e->o.heartbeat_timeout;
}

/* Whether a quorum of the acceptor set was heard within the quorum timeout. */
static bool quorum_heard(const struct paxos_election *e, paxos_time now)
{
	uint32_t heard = 0, set = e->acceptors;
	for (uint32_t id = 0; set; id++, set >>= 1)
		if ((set & 1) && (now <= e->acceptor_heard[id] ||
				  now - e->acceptor_heard[id] <= e->o.quorum_timeout))
			heard++;
	return e->acceptors && heard >= (uint32_t)__builtin_popcount(e->acceptors) / 2 + 1;
}

static uint32_t elect(const struct paxos_election *e, paxos_time now)
{
	/* An order (the oracle's, or election manual) for a proposer the set in force leaves
	 * out is not followed: a removed proposer leads no more, whoever names it. The members
	 * elect as without one until the set takes it back or another order comes. */
	if (e->forced && member(e, e->forced_leader))
		return e->forced_leader;
	/* No member among the ids at all (a node that leaves its own proposer out until it
	 * knows the configuration, lib/node/node_membership.c): no leader here. */
	uint32_t live[PAXOS_MAX_PROPOSERS], count = 0, lowest = PAXOS_MAX_PROPOSERS;
	for (uint32_t id = e->o.proposers; id-- > 0;) {
		if (!member(e, id))
			continue;
		/* Out for want of a quorum, we are no member's fallback either. */
		if (id != e->o.id || e->eligible)
			lowest = id;
		if (paxos_election_alive(e, id, now))
			live[count++] = id;
	}
	/* Outside the set (or out) and no member heard: the lowest member, never us. */
	if (count == 0)
		return lowest;
	return live[count - 1 - e->o.partition % count]; /* live[] runs from the highest id */
}

/* Check-quorum's verdict at now. Only the tick, the acceptor set and an acceptor heard while
 * out ask for it, not a heartbeat or an order: those may be read before the acceptors' state
 * that came with them, and must not put a proposer out that the rest of the read keeps in. */
static void judge(struct paxos_election *e, paxos_time now)
{
	if (e->o.quorum_timeout)
		e->eligible = quorum_heard(e, now);
}

/* An oracle's order names a leader that was alive; once that one is no longer heard (crashed,
 * or out for want of a quorum), the order has nobody left to follow: it is dropped and the
 * rule elects again, rather than every proposer following a dead leader until told
 * otherwise (a replayed or forged order would otherwise stop the cluster). */
static void expire_order(struct paxos_election *e, paxos_time now)
{
	if (e->forced && e->ordered && !paxos_election_alive(e, e->forced_leader, now)) {
		e->forced = false;
		e->ordered = false;
	}
}

static void update(struct paxos_election *e, paxos_time now)
{
	expire_order(e, now);
	uint32_t leader = elect(e, now);
	if (leader == e->leader)
		return;
	uint32_t previous = e->leader;
	e->leader = leader;
	if (e->o.changed)
		e->o.changed(e->o.changed_arg, leader, previous);
}

struct paxos_election *paxos_election_new(const struct paxos_election_options *o, paxos_time now)
{
	if (!o || !options_valid(o))
		return NULL;
	struct paxos_election *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->o = *o;
	for (uint32_t id = 0; id < o->proposers; id++)
		e->last_heard[id] = now;
	e->next_heartbeat = now;
	e->forced = o->manual;
	e->forced_leader = o->manual_leader;
	e->members = o->members ? o->members : UINT32_MAX;
	for (uint32_t id = 0; id < PAXOS_MAX_ACCEPTORS; id++)
		e->acceptor_heard[id] = now;
	e->acceptors = o->acceptors;
	e->eligible = true;
	judge(e, now);
	e->leader = elect(e, now);
	return e;
}

void paxos_election_free(struct paxos_election *e)
{
	free(e);
}

void paxos_election_handle(struct paxos_election *e, const struct paxos_message *m, paxos_time now)
{
	if (!m)
		return;
	if (m->type == PAXOS_MSG_HEARTBEAT) {
		uint32_t id = m->u.heartbeat.proposer_id;
		if (id >= e->o.proposers || id == e->o.id)
			return; /* our own, looped back, or a proposer outside the configuration */
		if (now > e->last_heard[id])
			e->last_heard[id] = now;
		e->next_iid[id] = m->u.heartbeat.next_iid;
	} else if (m->type == PAXOS_MSG_PROMISE) {
		/* A promise answers a prepare just sent, so the owner of its ballot is alive. A
		 * leader is thus heard again as soon as its phase 1 traffic reaches us when a
		 * partition heals, not up to a heartbeat interval later: meanwhile both would
		 * lead, and a client value both queued could be decided twice. */
		paxos_ballot b = m->u.promise.ballot;
		uint32_t id = (uint32_t)(b % PAXOS_MAX_PROPOSERS);
		if (ballot_seq(b) == 0 || id >= e->o.proposers || id == e->o.id)
			return; /* not a ballot any proposer uses, or ours */
		if (now > e->last_heard[id])
			e->last_heard[id] = now;
	} else if (m->type == PAXOS_MSG_LEADER) {
		uint32_t id = m->u.leader.leader_id;
		if (id == PAXOS_LEADER_AUTO) {
			e->forced = false;
			e->ordered = false;
		} else if (id < e->o.proposers && paxos_election_alive(e, id, now)) {
			e->forced = true;
			e->forced_leader = id;
			e->ordered = true;
		} else {
			/* Out of range, or a proposer not heard: nobody to follow. */
			return;
		}
	} else {
		return;
	}
	update(e, now);
}

void paxos_election_heard_acceptor(struct paxos_election *e, uint32_t id, paxos_time now)
{
	if (id >= PAXOS_MAX_ACCEPTORS)
		return;
	if (now > e->acceptor_heard[id])
		e->acceptor_heard[id] = now;
	/* Losing the quorum is found by the tick; only a proposer that is out looks again here,
	 * so that one back in reach leads (and beats) again without waiting for it. */
	if (!e->eligible) {
		judge(e, now);
		update(e, now);
	}
}

void paxos_election_tick(struct paxos_election *e, paxos_time now, paxos_iid next_iid,
			 const struct paxos_emitter *out)
{
	/* First the quorum: a proposer out of it sends no heartbeat, so that the others expire
	 * it within their timeout and elect among themselves, as after its crash. */
	judge(e, now);
	update(e, now);
	if (now >= e->next_heartbeat && out && e->eligible) {
		struct paxos_message m = {.type = PAXOS_MSG_HEARTBEAT};
		m.u.heartbeat.proposer_id = e->o.id;
		m.u.heartbeat.next_iid = next_iid;
		paxos_emit(out, PAXOS_GROUP_PROPOSERS, &m);
		/* The acceptors hear every live proposer too, not only the leader: without a key,
		 * the address a proposer talks from is what tells it from a forger using its id. */
		paxos_emit(out, PAXOS_GROUP_ACCEPTORS, &m);
		/* On the interval's grid, so coarse ticks do not stretch it; after a stall,
		 * from now rather than a burst of catch-up beats. */
		e->next_heartbeat += e->o.heartbeat_interval;
		if (e->next_heartbeat <= now)
			e->next_heartbeat = now + e->o.heartbeat_interval;
	}
}

void paxos_election_set_members(struct paxos_election *e, uint32_t members, paxos_time now)
{
	if (members == e->members)
		return;
	e->members = members;
	update(e, now);
}

uint32_t paxos_election_members(const struct paxos_election *e)
{
	return e->members;
}

void paxos_election_set_acceptors(struct paxos_election *e, uint32_t acceptors, paxos_time now)
{
	if (acceptors == e->acceptors)
		return;
	/* A newcomer has had no chance to be heard: it counts as heard when it joins. */
	for (uint32_t id = 0; id < PAXOS_MAX_ACCEPTORS; id++)
		if ((acceptors & ~e->acceptors) >> id & 1)
			e->acceptor_heard[id] = now;
	e->acceptors = acceptors;
	judge(e, now);
	update(e, now);
}

bool paxos_election_eligible(const struct paxos_election *e)
{
	return e->eligible;
}

bool paxos_election_quorum_lost(const struct paxos_election *e, paxos_time now)
{
	return e->o.quorum_timeout && !quorum_heard(e, now);
}

uint32_t paxos_election_leader(const struct paxos_election *e)
{
	return e->leader;
}

bool paxos_election_is_leader(const struct paxos_election *e)
{
	return e->leader == e->o.id;
}

bool paxos_election_forced(const struct paxos_election *e)
{
	return e->forced;
}

paxos_iid paxos_election_next_iid_of(const struct paxos_election *e, uint32_t id)
{
	return id < e->o.proposers ? e->next_iid[id] : 0;
}
