/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Leader election among proposers (thesis 3.6.3, 4.7), free of I/O: a heartbeat failure
 * detector plus the rule "the leader of partition P is the (P mod live)-th live proposer in
 * id order" (the lowest-id live one for a single log), and the oracle's manual override. Every
 * proposer runs one and they agree once heartbeats have settled; while they disagree two proposers
 * may both lead, which costs progress, never safety.
 */
#ifndef PAXOS_ELECTION_H
#define PAXOS_ELECTION_H

#include <paxos/message.h>

struct paxos_election;

/** The leader changed from previous to leader (either may be any proposer id). Called from
 * inside paxos_election_handle(), paxos_election_tick() and paxos_election_set_members(), at
 * most once per call: a driver may as well read paxos_election_leader() after each call and
 * compare it with the last one it acted on (the node does, leaving changed NULL). */
typedef void (*paxos_leader_changed_fn)(void *arg, uint32_t leader, uint32_t previous);

/** What an election is made with (paxos_election_options_from_config() fills it). */
struct paxos_election_options {
	uint32_t id;                   /**< this proposer, below proposers */
	uint32_t proposers;            /**< 1 .. PAXOS_MAX_PROPOSERS */
	paxos_time heartbeat_interval; /**< microseconds between our heartbeats */
	paxos_time heartbeat_timeout; /**< microseconds of silence after which a proposer is dead */
	bool manual;                  /**< start forced to manual_leader instead of electing */
	uint32_t manual_leader;       /**< the leader when manual is set */
	paxos_leader_changed_fn changed; /**< may be NULL */
	void *changed_arg;               /**< changed's first argument, not owned */
	/** The partition (paxos.conf "partitions") this election picks a leader for: the live
	 * proposers share the partitions evenly, and a dead one's move to the others. 0: one
	 * log, led by the lowest-id live proposer. */
	uint32_t partition;
	/** The proposers that may lead at first (paxos_election_set_members()); 0: every one. */
	uint32_t members;
	/** Check-quorum: a proposer that has heard from no quorum of the acceptor set in force
	 * for this long (microseconds) is out: it leads nothing, sends no heartbeats (so the
	 * others expire it) and counts itself dead, until it hears a quorum within it again.
	 * Manual election still stands (nobody would take over from it); an oracle's order
	 * naming it ends, as when it crashes.
	 * 0: off, a proposer always counts itself alive. */
	paxos_time quorum_timeout;
	/** The acceptors at first, one bit per id (paxos_election_set_acceptors()); 0: none
	 * (check-quorum then never lets this proposer lead). */
	uint32_t acceptors;
};

/**
 * Every proposer and every acceptor is presumed alive at creation (as if just heard), so a
 * starting cluster agrees on the lowest id at once instead of each proposer leading until it
 * hears the others, and a proposer is eligible for a quorum timeout before it must have heard
 * a quorum. The first leader is paxos_election_leader(); changed is not called for it.
 * NULL on bad options or no memory.
 */
PAXOS_API struct paxos_election *paxos_election_new(const struct paxos_election_options *o,
						    paxos_time now);
/** Frees the election; NULL is ignored. */
PAXOS_API void paxos_election_free(struct paxos_election *e);

/** A message sent to the proposers group: heartbeats, oracle orders and promises (which show
 * the owner of their ballot alive) are used, anything else (and anything out of range) is
 * ignored. An oracle's order naming a proposer that is not alive (paxos_election_alive) is
 * ignored, and one that was followed is dropped once the proposer it names is no longer
 * alive: the rule elects again. Whether an order is fresh (paxos_leader.sent_at) is the
 * caller's to check (the node does). */
PAXOS_API void paxos_election_handle(struct paxos_election *e, const struct paxos_message *m,
				     paxos_time now);

/** Acceptor id was heard from (any message it sent that reached this proposer): what
 * check-quorum counts. Cheap while this proposer is eligible; when it is out, this may make it
 * eligible again and change the leader. Ids from PAXOS_MAX_ACCEPTORS on are ignored. */
PAXOS_API void paxos_election_heard_acceptor(struct paxos_election *e, uint32_t id, paxos_time now);

/** Call often (a fraction of the interval): sends our heartbeat, carrying next_iid (the lowest
 * instance our learner has not delivered), when one is due and this proposer is eligible,
 * expires silent proposers, and puts this one out when it has heard no quorum. */
PAXOS_API void paxos_election_tick(struct paxos_election *e, paxos_time now, paxos_iid next_iid,
				   const struct paxos_emitter *out);

/** The proposers that may lead, one bit per id (ids from 32 on always may): with
 * membership-alpha, the proposer set of the configuration in force (paxos/membership.h).
 * Every proposer at creation. The live members share the partitions as above; a proposer
 * outside the set never leads (this one included: it then takes the lowest live member, or
 * the lowest member when it hears none; PAXOS_MAX_PROPOSERS, no leader, when the set names none
 * of the ids). The oracle's order still wins. */
PAXOS_API void paxos_election_set_members(struct paxos_election *e, uint32_t members,
					  paxos_time now);
/** The set paxos_election_set_members() gave last (UINT32_MAX: every proposer). */
PAXOS_API uint32_t paxos_election_members(const struct paxos_election *e);

/** The acceptors whose quorum check-quorum asks for, one bit per id: the acceptor set of
 * the configuration in force. An acceptor new to the set counts as heard when it joins. */
PAXOS_API void paxos_election_set_acceptors(struct paxos_election *e, uint32_t acceptors,
					    paxos_time now);

/** Whether this proposer may lead and sends heartbeats: always without check-quorum, else
 * while it has heard a quorum of the acceptors within the quorum timeout (as of the last
 * call that took a time). */
PAXOS_API bool paxos_election_eligible(const struct paxos_election *e);

/** Whether no quorum of the acceptors was heard within the quorum timeout at time now (false
 * without check-quorum): the next call that takes now puts this proposer out, or keeps it out.
 * A driver whose process may have stalled reads what waits for it first: what the acceptors
 * sent meanwhile is there, unread. */
PAXOS_API bool paxos_election_quorum_lost(const struct paxos_election *e, paxos_time now);

/** The proposer this one takes for the leader now. */
PAXOS_API uint32_t paxos_election_leader(const struct paxos_election *e);
/** Whether this proposer is the leader now. */
PAXOS_API bool paxos_election_is_leader(const struct paxos_election *e);

/** Whether the oracle (or the manual configuration) fixes the leader right now. An order for
 * a proposer outside the set in force (paxos_election_set_members) stays, but is not
 * followed while the set leaves it out: the members elect meanwhile. The oracle's order ends
 * when the proposer it names is no longer alive; the manual configuration's does not. */
PAXOS_API bool paxos_election_forced(const struct paxos_election *e);

/** Whether proposer id counts as alive at time now (this proposer does while it is
 * eligible, paxos_election_eligible()). */
PAXOS_API bool paxos_election_alive(const struct paxos_election *e, uint32_t id, paxos_time now);

/** The next_iid the last heartbeat of proposer id carried (0: none heard). */
PAXOS_API paxos_iid paxos_election_next_iid_of(const struct paxos_election *e, uint32_t id);

#endif
