/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which leadership proposed the instances a learner delivers (paxos_node_on_new_leader): the
 * proposer a ballot names (ballot mod PAXOS_MAX_PROPOSERS) and the epoch of its range (a
 * restart raises it; proposer/ballot.h). A new leadership is another proposer than the one
 * before, or the same one in a higher epoch (restarted). Not one in a lower epoch: a leader
 * that skipped past an older leader's ballots proposes some instances in that leader's epoch
 * range and others in its own, and a takeover should be told once, not at every switch.
 * Ballot 0 (a final value heard without its ballot) says nothing.
 */
#ifndef PAXOS_LEADERSHIP_H
#define PAXOS_LEADERSHIP_H

#include <paxos/types.h>

#include <stdbool.h>

struct leadership {
	bool known;
	uint32_t proposer;
	uint32_t epoch; /* the highest seen of that proposer since it took over */
};

/* Whether ballot b, of the next instance delivered, comes from a new leadership (never for
 * the first one known); follows it. */
static inline bool leadership_changed(struct leadership *l, paxos_ballot b)
{
	if (!b)
		return false;
	uint32_t proposer = (uint32_t)(b % PAXOS_MAX_PROPOSERS);
	uint32_t epoch = (uint32_t)((b / PAXOS_MAX_PROPOSERS) >> 32);
	bool changed = l->known && (proposer != l->proposer || epoch > l->epoch);
	if (!l->known || proposer != l->proposer || epoch > l->epoch)
		*l = (struct leadership){true, proposer, epoch};
	return changed;
}

#endif
