/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The learner's state, shared by its parts: learner.c counts votes, closes and delivers
 * instances and skips trimmed ones, fetch.c fetches single instances, catch_up.c runs the
 * tick's hole checks and asks for what the learner cannot learn by listening. Not a public
 * header.
 */
#ifndef PAXOS_LEARNER_WINDOW_H
#define PAXOS_LEARNER_WINDOW_H

#include <paxos/learner.h>

/* Values up to this size go to a slot's room in a compact buffer: a window of small values
 * then spans a few pages instead of one each. */
#define SLOT_SMALL 256u

struct slot {
	paxos_iid iid;       /* 0: empty */
	paxos_ballot ballot; /* the highest ballot whose value data holds (has_value) */
	bool has_value;
	bool exact; /* data is the value proposed at ballot (not a final one labelled so) */
	/* An acceptor of the log delivered reported ballot: the accept data came from is of
	 * this log (ballots of two logs never meet: a new log's are above the old one's). */
	bool vouched;
	paxos_ballot chosen; /* a ballot a quorum reported (0: none yet) */
	bool lacking;        /* chosen, without its value since lacking_since */
	paxos_time lacking_since;
	bool asked; /* a repeat for the value went out at asked_at */
	paxos_time asked_at;
	bool closed;
	uint32_t len;
	uint8_t *data;   /* where the value is: small or big */
	uint8_t *small;  /* SLOT_SMALL bytes in the learner's compact buffer */
	uint8_t *big;    /* max_value bytes in its value buffer */
	bool big_mapped; /* big was paged in (map_slot) */
	/* Per acceptor, the highest ballot it reported (0: none); owned by the vote buffer. */
	paxos_ballot *votes;
};

/* One outstanding fetch: a slot of its own (same vote counting) outside the window. */
struct fetch {
	struct slot s; /* s.iid 0: free; s.data in the fetch buffer, s.votes in votes */
	paxos_instance_fetched_fn done;
	void *arg;
	paxos_time started, last_sent;
	uint32_t trimmed_by; /* acceptors that said they trimmed s.iid, one bit each */
	uint32_t refuted;    /* acceptors that answered with s.iid: their trims are not believed */
	paxos_ballot votes[PAXOS_MAX_ACCEPTORS];
};

struct paxos_learner {
	struct paxos_learner_options opt;
	struct paxos_counters *counters;
	uint32_t quorum; /* without a membership: of all the acceptors */
	uint32_t all;    /* every acceptor id, one bit each */
	paxos_time now;  /* of the last handle or tick: for votes counted on a delivery */
	bool started;    /* false only while FROM_CURRENT waits for its first accepted */
	/* FROM_CURRENT, before it started: the lowest highest-accepted instance acceptors
	 * reported (the lowest, so that one forged report cannot hold the start back). */
	paxos_iid current_hint;
	bool hint_known;
	paxos_iid next;
	/* The highest instance an acceptor reports: the most of acceptor_highest. */
	paxos_iid highest_seen;
	/* Per acceptor, the highest instance it accepted as its last acceptor state says, raised
	 * by its accepted messages since. Each state replaces the report: a forged or buggy one
	 * (2^64-1) lasts until that acceptor's next state, not for ever, so the learner does not
	 * take itself for behind or stalled, asking for repeats and repairs, for good. */
	paxos_iid acceptor_highest[PAXOS_MAX_ACCEPTORS];
	bool checked_once; /* the first tick only records the hole check baseline */
	paxos_time last_check;
	paxos_iid next_at_last_check;
	/* Catch-up: the last repeat request sent and when; a learner that is behind asks for
	 * the next batch once next has passed last_asked_to. */
	bool asked;
	paxos_iid last_asked_to;
	paxos_time last_asked_at;
	bool answered; /* next has passed last_asked_to since that request */
	/* Eight times the moving average of the value bytes of the instances delivered (each
	 * delivery weighs 1/8): sizes catch-up requests to what one answer carries. */
	uint64_t instance_bytes_x8;
	/* Some slot may be lacking the value a quorum named (see ask_values). */
	bool lacking;
	/* Hole checks in a row that found next neither delivered nor idle (see ask_repair). */
	uint32_t stalled_checks;
	struct slot *slots;
	uint8_t *values;       /* the slots' rooms for large values, max_value bytes each */
	uint8_t *small_values; /* and for small ones, SLOT_SMALL bytes each */
	size_t page_size;
	paxos_ballot *votes; /* window x acceptors */
	/* The generation of the log delivered (0: none heard yet), the next it started from, and
	 * the highest generation each acceptor reported: a quorum of them moves it to a new log. */
	uint64_t generation;
	bool generation_known; /* generation is the log of the state below began_at */
	paxos_iid began_at;
	uint64_t acceptor_gen[PAXOS_MAX_ACCEPTORS];
	/* Highest trim point each acceptor reported (TRIMMED or ACCEPTOR_STATE), 0: none. */
	paxos_iid acceptor_trim[PAXOS_MAX_ACCEPTORS];
	/* Skipping what a quorum reports trimmed (learner.c, skip_if_asked): the next a
	 * repeat was last asked from (0: none) and when; the acceptors whose reports say next is
	 * trimmed, and those that answered since with an instance they said was trimmed. */
	paxos_iid trim_ask;
	paxos_time trim_ask_at;
	uint32_t trim_heard, trim_refuted;
	/* hold_trimmed: next is trimmed up to held_to, and the learner waits there for a
	 * snapshot (paxos_learner_step_skip_to) instead of skipping. */
	bool held;
	bool change_held; /* hold_changes: a membership command delivered, not kept yet */
	/* The last word of a leader on what was chosen (paxos_accept.chosen_from, chosen_to):
	 * in each instance from claim_from to claim_to, the value it proposed at claim_ballot
	 * (0: none heard). */
	paxos_ballot claim_ballot;
	paxos_iid claim_from, claim_to;
	paxos_iid held_to;
	struct fetch fetches[PAXOS_LEARNER_MAX_FETCHES];
	uint32_t fetching; /* fetches outstanding */
	uint8_t *fetch_values;
	/* The ready: the events of the last step, until paxos_learner_advance. One step closes
	 * and delivers each instance of the window at most once, so event_cap (two per slot and
	 * a few more) always holds them. */
	struct paxos_learner_event *events;
	size_t event_count, event_cap;
};

/* The window's slot for iid (which may hold another instance). Thesis 3.5.4 maps instances
 * to a preallocated array by iid modulo its size: "A similar strategy is used to implement
 * the learner." */
static inline struct slot *slot_of(struct paxos_learner *l, paxos_iid iid)
{
	return &l->slots[iid % l->opt.window];
}

/* Asks the acceptors to repeat instances from..to. */
static inline void send_repeat(const struct paxos_emitter *out, paxos_iid from, paxos_iid to)
{
	struct paxos_message m = {.type = PAXOS_MSG_REPEAT};
	m.u.repeat.from = from;
	m.u.repeat.to = to;
	if (out)
		paxos_emit(out, PAXOS_GROUP_ACCEPTORS, &m);
}

/* slots.c */
/* Empties s and gives it to iid (0: frees it). */
void learner_slot_reset(struct paxos_learner *l, struct slot *s, paxos_iid iid);
/* Takes accepted a into s; returns whether s now holds the chosen value. */
bool learner_slot_take(struct paxos_learner *l, struct slot *s, const struct paxos_accepted *a);
/* The acceptors whose votes decide iid, and their quorum; 0 while that is not known yet. */
uint32_t learner_deciders(const struct paxos_learner *l, paxos_iid iid, uint32_t *quorum);
/* Keeps the value proposed at ballot if it is the highest heard of (vouched: by an acceptor
 * of this log). */
void learner_take_value(struct paxos_learner *l, struct slot *s, paxos_ballot ballot,
			const struct paxos_value *v, bool vouched);
/* Whether s holds the chosen value. */
bool learner_value_known(const struct slot *s);
/* b, when the deciders of s's instance that report it are a quorum of them; else 0. */
paxos_ballot learner_quorum_ballot(const struct paxos_learner *l, const struct slot *s,
				   paxos_ballot b);

/* fetch.c: the fetches' part of a step (an accepted, a trim report) and of a tick. */
void learner_fetch_accepted(struct paxos_learner *l, const struct paxos_accepted *a);
void learner_fetch_trimmed(struct paxos_learner *l, uint32_t acceptor, paxos_iid trim);
void learner_fetch_tick(struct paxos_learner *l, paxos_time now, const struct paxos_emitter *out);
/* The log the fetches were for is gone: each ends as trimmed. */
void learner_fetch_drop(struct paxos_learner *l);

/* catch_up.c: a repeat from next went out: trim reports count for skipping from now on. */
void learner_note_asked(struct paxos_learner *l, paxos_iid from, paxos_time now);
/* catch_up.c: after an accepted message, the next catch-up request if it is due now. */
void learner_catch_up_on_accepted(struct paxos_learner *l, paxos_time now,
				  const struct paxos_emitter *out);

#endif
