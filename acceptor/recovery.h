/* SPDX-License-Identifier: BSD-3-Clause */
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
	uint32_t
	    configs[PAXOS_ACCEPTOR_CONFIGURATIONS]; /* m.configurations, or all of m.acceptors */
	uint32_t others;                            /* their members but us */
	uint32_t proposers_answered;                /* how many of answered[] are set */
	uint32_t proposers_needed; /* m.proposers, or the members of m.proposer_set */
	bool answered[PAXOS_MAX_PROPOSERS];
	/* Per proposer, as its last answer said: in its first life, and no accept sent yet. */
	bool fresh[PAXOS_MAX_PROPOSERS];
	bool ran_before; /* a proposer said it restarted (its answer comes later) */
	bool said_ran_before[PAXOS_MAX_PROPOSERS]; /* which did */
	paxos_iid heard_iid;       /* the highest instance reported while recovering */
	paxos_ballot heard_ballot; /* the highest ballot reported while recovering */
	paxos_iid floor;           /* votes only above this instance */
	paxos_ballot fence;        /* and only above this ballot */
	paxos_ballot voted_ballot; /* the highest ballot promised in this life */
	uint32_t peers_recovering; /* while recovering: peers whose hellos say they recover too */
	/* Peers heard recovering since the last proposer answer that reported accepts: what
	 * they said before it may be stale (they recovered, and the proposer's accepts went to
	 * them). */
	uint32_t recovering_since_accepts;
	uint32_t peers_empty;   /* peers whose last answer reported nothing accepted */
	uint32_t peers_holding; /* peers that answered they accepted something */
	uint64_t duplicate;     /* another acceptor with our id, by its incarnation (echoed) */
	bool duplicate_newer;   /* it heard us and started after us: it stops */
	uint32_t older_heard;   /* ticks an older duplicate was heard on (duplicate_ticks) */
	uint64_t older_first;   /* the tick of the first of them */
	uint64_t older_last;    /* the tick of the last of them */
	uint64_t ticks;         /* recovery_tick calls since join */
	uint64_t age_us;        /* our age as the node last said (0: never; ticks stand in) */
	/* The log served (see recovery.c, "Generations"): while recovering, the highest one an
	 * earlier life voted in (m.generation); then the one it votes in. */
	uint64_t generation;
	uint64_t gen_seen;     /* while recovering: the most of ours and every hello's */
	uint64_t gen_answered; /* the most of the acceptors' answers (0: none) */
	uint64_t founder_gen;  /* a log whose answer said we founded it (0: none) */
	int new_log;           /* enum paxos_acceptor_log: how this life came to its log */
	bool old_peers; /* nodes of an older wire version are live: they cannot serve a new log */
	/* Per acceptor id: the incarnation of its last hello that said it recovers (0: none),
	 * and of those recovering when this acceptor began its log, the founders. */
	uint64_t recovering_as[PAXOS_MAX_ACCEPTORS];
	uint64_t founders[PAXOS_MAX_ACCEPTORS];
};

enum vote { VOTE, WITHHOLD, REJECT_BELOW_FENCE };

void recovery_init(struct recovery *r, uint32_t id, struct paxos_counters *counters);
int recovery_join(struct recovery *r, const struct paxos_acceptor_membership *m);

/* Whether (iid, ballot) may get a vote: not while recovering, no promise at or below the floor
 * (an earlier life may have accepted there), nothing at or below the fence (it may have
 * promised). An accept above the fence is taken at any instance (see recovery.c). */
enum vote recovery_may_vote(const struct recovery *r, paxos_iid iid, paxos_ballot ballot,
			    bool accept);
/* A promise or accept was given at ballot. */
void recovery_note_vote(struct recovery *r, paxos_ballot ballot);

void recovery_handle_info(struct recovery *r, const struct paxos_recover_info *info);

/* Another acceptor's hello: PAXOS_E_DUPLICATE when one with our id answers our own hello
 * (it echoes our incarnation, so it runs now) and is older; *answer when it is a recovering
 * peer that gets a recovery_answer: only an acceptor that holds its state answers (one that
 * recovers itself knows nothing of its earlier life). *hello_now when ours should go out at
 * once (a duplicate waits for our echo). */
int recovery_handle_hello(struct recovery *r, const struct paxos_acceptor_hello *h, bool *answer,
			  bool *hello_now);
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
/* While recovering: what it still waits for (paxos_acceptor_recovery_wait). */
void recovery_wait(const struct recovery *r, struct paxos_acceptor_recovery_wait *w);

#endif
