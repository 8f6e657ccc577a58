/*
 * Ballot numbers (thesis 3.5.2). With n = PAXOS_MAX_PROPOSERS, proposer p's first ballot is
 * n + p and b++ is b + n, so ballot mod n names its owner and no two proposers share one.
 */
#ifndef PAXOS_PROPOSER_BALLOT_H
#define PAXOS_PROPOSER_BALLOT_H

#include <paxos/types.h>

static inline paxos_ballot ballot_first(uint32_t proposer_id)
{
	return PAXOS_MAX_PROPOSERS + proposer_id;
}

/* b++. A ballot that would wrap stays where it is: acceptors then keep rejecting it, which
 * is safe, rather than the proposer reusing a small ballot. */
static inline paxos_ballot ballot_increment(paxos_ballot b)
{
	if (b > UINT32_MAX - PAXOS_MAX_PROPOSERS)
		return b;
	return b + PAXOS_MAX_PROPOSERS;
}

/*
 * INCREMENTSKIP(b, b'), thesis Algorithm 1: the next ballot of proposer p that beats both b
 * and the ballot b' an acceptor told us to beat.
 *
 *   my_seq = b - p; b'_owner = b' mod n; b'_seq = b' - b'_owner;
 *   use_seq = max(my_seq, b'_seq); use_seq += 1; return use_seq + p
 *
 * Sequence numbers here are multiples of n, so "use_seq += 1" is one step of the sequence,
 * that is + n (the same step as b++). Adding a literal 1 would not even beat b': for p = 3,
 * INCREMENTSKIP(103, 507) would be 500 + 1 + 3 = 504 < 507. With the step it is 603.
 */
static inline paxos_ballot ballot_increment_skip(paxos_ballot b, paxos_ballot beat,
						 uint32_t proposer_id)
{
	uint64_t my_seq = b >= proposer_id ? (uint64_t)b - proposer_id : 0;
	uint64_t beat_seq = (uint64_t)beat - beat % PAXOS_MAX_PROPOSERS;
	uint64_t use_seq = my_seq > beat_seq ? my_seq : beat_seq;
	uint64_t next = use_seq + PAXOS_MAX_PROPOSERS + proposer_id;
	return next > UINT32_MAX ? b : (paxos_ballot)next;
}

#endif
