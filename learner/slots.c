/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A learner's slots (one instance each, in the window or a fetch's): the acceptors' votes
 * counted, the value of the highest ballot kept, and whether that is the chosen one.
 */
#include "paxos_assert.h"
#include "window.h"

#include <string.h>
#include <sys/mman.h>

/*
 * Pages in a slot's room for a large value the first time it takes one: the window's buffer of
 * them (32 MiB with the defaults) otherwise takes a page fault per 4 kB page on its first
 * pass, on some virtual machines about 19 us each (docs/BENCHMARKS.md, "CPU per value of the
 * acceptor and the proposer"). Best effort; pages past it fault as before. Values of up to
 * SLOT_SMALL bytes never touch it: they go to a compact buffer paged in with the learner.
 */
static void map_slot(struct paxos_learner *l, struct slot *s)
{
#ifdef MADV_POPULATE_WRITE
	if (s->big_mapped || s < l->slots || s >= l->slots + l->opt.window || !l->page_size)
		return; /* done, or a fetch's slot */
	s->big_mapped = true;
	uintptr_t a = (uintptr_t)s->big & ~(uintptr_t)(l->page_size - 1);
	if (madvise((void *)a, (uintptr_t)(s->big + l->opt.max_value) - a, MADV_POPULATE_WRITE) !=
	    0)
		l->page_size = 0; /* not on this kernel: faults do */
#else
	(void)l;
	(void)s;
#endif
}

void learner_slot_reset(struct paxos_learner *l, struct slot *s, paxos_iid iid)
{
	s->iid = iid;
	s->ballot = 0;
	s->has_value = false;
	s->exact = false;
	s->vouched = false;
	s->chosen = 0;
	s->lacking = false;
	s->asked = false;
	s->closed = false;
	s->len = 0;
	memset(s->votes, 0, l->opt.acceptors * sizeof(*s->votes));
}

static void slot_store(struct paxos_learner *l, struct slot *s, paxos_ballot ballot,
		       const struct paxos_value *v)
{
	PAXOS_ASSERT(!s->closed, "the value of a closed instance never changes");
	s->data = v->len <= SLOT_SMALL ? s->small : s->big;
	if (s->data == s->big)
		map_slot(l, s);
	s->ballot = ballot;
	s->has_value = true;
	s->exact = true;
	s->len = v->len;
	if (v->len)
		memcpy(s->data, v->data, v->len);
}

/* The acceptors whose votes decide iid and their quorum: every acceptor without a membership,
 * else the members of iid's configuration; 0 while that is not known yet. */
uint32_t learner_deciders(const struct paxos_learner *l, paxos_iid iid, uint32_t *quorum)
{
	const struct paxos_membership *m = l->opt.membership;
	if (!m) {
		*quorum = l->quorum;
		return l->all;
	}
	if (!paxos_membership_known(m, iid))
		return 0;
	uint32_t members = paxos_membership_members(m, iid);
	*quorum = paxos_membership_quorum_of(members);
	return members & l->all;
}

/*
 * Keeps the value proposed at ballot if it is the highest one heard of. In Paxos every value
 * proposed (accept) or accepted at a ballot at or above a chosen one is the chosen value (a
 * proposer of a higher ballot hears of it from the quorum that accepted it), so the value of
 * the highest ballot serves for any quorum ballot at or below it.
 */
void learner_take_value(struct paxos_learner *l, struct slot *s, paxos_ballot ballot,
			const struct paxos_value *v, bool vouched)
{
	PAXOS_ASSERT(!s->closed, "the value of a closed instance never changes");
	if (!s->has_value || ballot > s->ballot || (vouched && !s->vouched)) {
		slot_store(l, s, ballot, v);
		s->vouched = vouched;
	} else if (vouched && ballot == s->ballot) {
		s->vouched = true;
	}
}

/* b, when the deciders of the slot's instance that report it are a quorum of them; else 0. */
paxos_ballot learner_quorum_ballot(const struct paxos_learner *l, const struct slot *s,
				   paxos_ballot b)
{
	uint32_t quorum = 0, same = 0;
	for (uint32_t rest = learner_deciders(l, s->iid, &quorum); rest; rest &= rest - 1)
		same += s->votes[__builtin_ctz(rest)] == b;
	return quorum && same >= quorum ? b : 0;
}

/*
 * Counts a non-final vote: each acceptor's latest ballot replaces its earlier one (its record
 * holds only the latest). Returns a ballot b a quorum of acceptors now reports, any b, not
 * only the highest, or 0: the value chosen at b is then the one to deliver. Thesis 2.4: "As
 * soon as the learners realize that a majority of acceptors granted the same request (same
 * ballot), they can deliver v."
 */
static paxos_ballot record_vote(struct paxos_learner *l, struct slot *s,
				const struct paxos_accepted *a)
{
	paxos_ballot *mine = &s->votes[a->acceptor_id];
	if (a->ballot <= *mine)
		return 0; /* a duplicate, or older than what this acceptor reported */
	*mine = a->ballot;
	return learner_quorum_ballot(l, s, a->ballot);
}

/*
 * Whether the slot holds the chosen value: a quorum ballot and a value at or above it, of this
 * log. A leader's accept carries no generation: one of a new log, heard before this learner
 * moved to it, may hold a higher ballot than the old log's quorum, and its value is no
 * choice of the old log. Only once an acceptor of this log reported its ballot does it serve.
 */
bool learner_value_known(const struct slot *s)
{
	return s->chosen && s->has_value && s->ballot >= s->chosen && s->vouched;
}

/* Takes accepted a into s; returns whether s now holds the chosen value. A final answer
 * without its value (none is ever sent) counts as a vote. A final one with its value closes
 * s at once. Thesis 3.7.5: "When receiving such an answer, a learner does not need to wait for
 * a majority, it can deliver immediately that value." */
bool learner_slot_take(struct paxos_learner *l, struct slot *s, const struct paxos_accepted *a)
{
	if (a->final && !a->valueless) {
		/* The sender knows this value is the chosen one, whatever ballot we counted. Its
		 * ballot need not be one the value was proposed at: an acceptor that learns a
		 * decision without having accepted labels it with its promise (acceptor.c). So
		 * the value is known to be the one proposed at its label only if an accept at
		 * that very ballot brought these bytes before (rare path: no per-value cost). */
		paxos_ballot label = a->ballot > s->ballot ? a->ballot : s->ballot;
		bool proposed_there =
		    s->has_value && s->exact && s->ballot == label && s->len == a->value.len &&
		    (a->value.len == 0 || memcmp(s->data, a->value.data, s->len) == 0);
		if (s->chosen && !learner_value_known(s)) {
			/* A quorum accepted at s->chosen, whose value (its accept was lost) is the
			 * chosen one, so these bytes: proposed there. A new leader's first
			 * instance is then known as its own (paxos_node_on_new_leader). */
			label = s->chosen;
			proposed_there = true;
		}
		slot_store(l, s, label, &a->value);
		s->exact = proposed_there;
		s->vouched = true;
		s->chosen = s->ballot;
		return true;
	}
	if (!a->valueless)
		learner_take_value(l, s, a->ballot, &a->value, true);
	else if (s->has_value && s->ballot == a->ballot)
		s->vouched = true;
	paxos_ballot q = record_vote(l, s, a);
	if (q && (!s->chosen || q < s->chosen))
		s->chosen = q;
	return learner_value_known(s);
}
