/*
 * An acceptor's membership: its hellos and incarnation (duplicates), and its recovery from
 * lost state, which decides where it may vote (see paxos_acceptor_join). The acceptor core
 * (acceptor.c) asks it before every promise or accept and hands it hellos and answers.
 */
#ifndef PAXOS_ACCEPTOR_RECOVERY_H
#define PAXOS_ACCEPTOR_RECOVERY_H

#include <paxos/acceptor.h>

struct recovery {
	uint32_t id; /* the acceptor's */
	struct paxos_counters *counters;
	bool joined;
	struct paxos_acceptor_membership m;
	bool recovering;
	uint32_t age;                /* ticks spent recovering */
	uint32_t acceptors_answered; /* one bit per acceptor id */
	uint32_t proposers_answered; /* how many of answered[] are set */
	bool answered[PAXOS_MAX_PROPOSERS];
	paxos_iid heard_iid;       /* the highest instance reported while recovering */
	paxos_ballot heard_ballot; /* the highest ballot reported while recovering */
	paxos_iid floor;           /* votes only above this instance */
	paxos_ballot fence;        /* and only above this ballot */
	paxos_ballot voted_ballot; /* the highest ballot promised in this life */
	uint64_t duplicate;        /* another acceptor with our id, by its incarnation */
	uint64_t ticks;            /* recovery_tick calls since join */
	uint64_t duplicate_since;  /* ticks when an older duplicate was first heard */
};

enum vote { VOTE, WITHHOLD, REJECT_BELOW_FENCE };

void recovery_init(struct recovery *r, uint32_t id, struct paxos_counters *counters);
int recovery_join(struct recovery *r, const struct paxos_acceptor_membership *m);

/* Whether (iid, ballot) may get a vote: not while recovering, not at or below the floor (an
 * earlier life may have accepted there), not at or below the fence (it may have promised). */
enum vote recovery_may_vote(const struct recovery *r, paxos_iid iid, paxos_ballot ballot);
/* A promise or accept was given at ballot. */
void recovery_note_vote(struct recovery *r, paxos_ballot ballot);

void recovery_handle_info(struct recovery *r, const struct paxos_recover_info *info);

/* Another acceptor's hello: PAXOS_E_DUPLICATE when an older one with our id still speaks;
 * *answer when it is a recovering peer that gets a recovery_answer. */
int recovery_handle_hello(struct recovery *r, const struct paxos_acceptor_hello *h, bool *answer);
/* Recovering, and acceptor_id has not answered yet (our hello may have gone out before it
 * listened). */
bool recovery_waits_for(const struct recovery *r, uint32_t acceptor_id);
/* The answer to a recovering peer's hello; highest: the highest instance accepted or trimmed
 * here. */
void recovery_answer(const struct recovery *r, const struct paxos_acceptor_hello *h,
		     paxos_iid highest, struct paxos_recover_info *out);

void recovery_emit_hello(const struct recovery *r, const struct paxos_emitter *out);
/* Every acceptor tick once joined: the hello, and while recovering the question to the
 * proposers. */
void recovery_tick(struct recovery *r, const struct paxos_emitter *out);
/* While recovering: asks the proposers for their highest ballot and instance. */
void recovery_emit_ask(const struct recovery *r, const struct paxos_emitter *out);

#endif
