/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ballot numbers. Thesis 3.5.2: "Two distinct proposers never generate the same ballot for
 * the same instance." and "Proposer p's first ballot number for each instance is created as
 * an integer n + p". With n = PAXOS_MAX_PROPOSERS, proposer p's ballots are seq * n + p, so
 * ballot mod n names the owner and no two proposers share one. seq = epoch * 2^32 + round:
 * every incarnation (epoch, persisted by the node and raised at each start) begins at round 1,
 * above the rounds of the incarnations before it. This departs from the thesis, whose first
 * ballot is always n + p: a restarted proposer must not reuse its ballots, since a reused
 * ballot could be paired with a second value. b++ is one round (b + n); INCREMENTSKIP is
 * Algorithm 1 on seq.
 *
 * A skip past another proposer's ballot can land in a later epoch's range; the proposer core
 * then takes that epoch and returns it in its ready (see ballot_epoch and struct
 * paxos_proposer_ready), and the node makes it durable before such a ballot leaves, so the
 * next incarnation still starts above it.
 */
#ifndef PAXOS_PROPOSER_BALLOT_H
#define PAXOS_PROPOSER_BALLOT_H

#include <paxos/proposer.h>
#include <paxos/types.h>

#define BALLOT_ROUND_BITS 32
/* The first seq no ballot may reach: epochs stay below PAXOS_PROPOSER_EPOCH_LIMIT, so that
 * seq * n + p fits in 64 bits. */
#define BALLOT_SEQ_LIMIT ((uint64_t)PAXOS_PROPOSER_EPOCH_LIMIT << BALLOT_ROUND_BITS)

static inline uint64_t ballot_seq(paxos_ballot b)
{
	return b / PAXOS_MAX_PROPOSERS;
}

/* The epoch whose range b lies in (its incarnation, unless a skip brought it there). */
static inline uint32_t ballot_epoch(paxos_ballot b)
{
	return (uint32_t)(ballot_seq(b) >> BALLOT_ROUND_BITS);
}

/* The first ballot of every instance for proposer p in incarnation epoch (< the limit). */
static inline paxos_ballot ballot_first(uint32_t proposer_id, uint32_t epoch)
{
	uint64_t seq = (uint64_t)epoch << BALLOT_ROUND_BITS | 1u;
	return seq * PAXOS_MAX_PROPOSERS + proposer_id;
}

/* b++, one round up. Thesis 3.5.2: "Incrementing ballot b is straightforward", b++ being
 * b + n. A ballot that would leave the ballot space stays where it is: the proposer then has
 * no new ballot (and does not reuse one). */
static inline paxos_ballot ballot_increment(paxos_ballot b)
{
	if (ballot_seq(b) + 1 >= BALLOT_SEQ_LIMIT)
		return b;
	return b + PAXOS_MAX_PROPOSERS;
}

/*
 * INCREMENTSKIP(b, b'), thesis Algorithm 1 on sequence numbers: the next ballot of proposer
 * p that beats both b and the ballot b' an acceptor told us to beat. Thesis 3.5.2: "When
 * receiving a reject message containing the current ballot "to beat" b', the proposer can
 * specifically generate the next one rather than just incrementing the current b".
 *
 *   my_seq = (b - p) / n; b'_seq = (b' - b' mod n) / n;
 *   use_seq = max(my_seq, b'_seq) + 1; return use_seq * n + p
 *
 * E.g. p = 3: INCREMENTSKIP(103, 507) = 6 * 100 + 3 = 603. The division by n departs from the
 * algorithm as printed, whose "use_seq += 1" on undivided numbers would return 504, a ballot
 * of proposer 4. Returns b when the result would leave the ballot space.
 */
static inline paxos_ballot ballot_increment_skip(paxos_ballot b, paxos_ballot beat,
						 uint32_t proposer_id)
{
	uint64_t my_seq = b >= proposer_id ? (b - proposer_id) / PAXOS_MAX_PROPOSERS : 0;
	uint64_t beat_seq = ballot_seq(beat);
	uint64_t use_seq = (my_seq > beat_seq ? my_seq : beat_seq) + 1;
	if (use_seq >= BALLOT_SEQ_LIMIT)
		return b;
	return use_seq * PAXOS_MAX_PROPOSERS + proposer_id;
}

#endif
