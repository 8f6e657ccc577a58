/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The state of a proposer (thesis 3.5's leader; a follower keeps the same, idle), shared by
 * the files of the proposer core. proposer.c runs the window and the leader's life; it calls
 * the others, which never call it: setup.c (options, memory, creation), admission.c (which
 * instances may open and take client values), submissions.c (the client queue and its
 * refusals), changes.c (membership commands) and incarnation.c (epochs, and the answer to a
 * recovering acceptor).
 */
#ifndef PAXOS_PROPOSER_LEADER_STATE_H
#define PAXOS_PROPOSER_LEADER_STATE_H

#include <paxos/proposer.h>

#include "congestion.h"
#include "instance.h"
#include "pending.h"
#include "repair.h"
#include "settled.h"

/* Dropped values a leader names between two of its readies (one read of the node): a few
 * refusals' worth; more go unnamed, and their submitters send them again on a timeout. */
#define REFUSED_HASHES (8 * PAXOS_REFUSED_HASHES_MAX)

struct paxos_proposer {
	struct paxos_proposer_options o;
	struct paxos_counters *counters;
	struct paxos_counters own_counters; /* when the caller passes none */
	struct pending pending;
	struct settled settled; /* delivered before they reached us */
	struct instance_ctx ctx;
	struct repairs repairs; /* decided instances run again for stalled learners */
	paxos_ballot highest;   /* the highest ballot prepared with (ctx.highest) */
	paxos_iid highest_iid;  /* the highest instance an accept went to (ctx.highest_iid) */
	paxos_ballot to_beat;   /* the highest ballot a reject named (ctx.to_beat) */
	struct instance *slots; /* instance iid lives in slots[iid % window] */
	uint8_t *values;        /* v1 and v2 buffers of every slot */
	uint32_t *scratch;      /* batch_limit entries for the instances (requeue) */
	uint32_t batch_limit;   /* >= 1 */
	uint32_t in_flight_max; /* client values the instances may hold at once */
	paxos_iid first;        /* lowest instance not delivered */
	/* How many instances phase 2 may hold now: at most o.concurrency (congestion.h). */
	struct congestion congestion;
	/* Running totals over the live instances, kept by fire() (see account), so that the
	 * per-value checks of proposer_may_assign cost O(1) rather than a scan of the window. */
	uint32_t in_phase2; /* instance_in_phase2 */
	uint32_t closed;    /* state CLOSED, and opened by us (see proposer_may_assign) */
	uint32_t held;      /* client values held (has_v2 && cv) */
	/* No live instance below it lacks a value unless closed (the ordering rule of 3.7.2).
	 * While we lead, an instance that has a value or is closed keeps it until it leaves the
	 * window, so the frontier only moves up; it is advanced lazily. */
	paxos_iid frontier;
	bool leader;
	uint32_t epoch;        /* highest epoch our ballots may be in: o.epoch, or one raised to */
	uint32_t epoch_stored; /* the highest the driver said is durable (paxos_proposer_advance) */
	bool started;          /* started_at is set: the first call that told the time */
	paxos_time started_at;
	struct rtt_estimate rtt[2]; /* phase 1, phase 2: with adaptive timeouts */
	bool skip_wanted;           /* ctx.skip_wanted: see want_skip */
	paxos_time last_proposed;   /* when an instance last got a value or a skip to propose */
	/* With a membership: some live instance waits for its configuration (start_window). */
	bool config_wait;
	/* ctx.values_from: a leader that took over at a proposer change (proposer_handover_at). */
	paxos_iid values_from;
	/* After a new log: the instances below it take skips without waiting for client values
	 * (paxos_proposer_new_log); 0: none. */
	paxos_iid fill_to;
	/* Since we took over, client values wait until phase 1 finished below it (admission.c
	 * took_over). */
	paxos_iid takeover_end;
	struct instance_command command; /* ctx.command: paxos_proposer_change_membership */
	struct chosen_range chosen;      /* ctx.chosen: see note_chosen (proposer.c) */
	bool spares_rest;                /* ctx.spares_rest: paxos_proposer_spares_rest */
	/* Client values dropped (pending list full) that no refusal told of yet, and the hashes
	 * of the first REFUSED_HASHES of them (proposer_refuse). */
	uint32_t unrefused;
	uint32_t refused_named;
	uint64_t refused_hash[REFUSED_HASHES];
	uint8_t refused_bytes[8 * PAXOS_REFUSED_HASHES_MAX]; /* one message's, little-endian */
};

/* Thesis 3.5.4: "Instances in the window are found with a direct memory access in the array
 * at position iid (mod 100)." (with the window for 100) */
static inline struct instance *slot_of(const struct paxos_proposer *p, paxos_iid iid)
{
	return &p->slots[iid % p->o.window];
}

static inline bool live(const struct paxos_proposer *p, paxos_iid iid)
{
	return iid >= p->first && iid - p->first < p->o.window;
}

/* admission.c */
paxos_iid proposer_frontier(struct paxos_proposer *p);
uint32_t proposer_may_assign(void *arg, const struct instance *inst);
bool proposer_config_known(const struct paxos_proposer *p, paxos_iid iid);
bool proposer_config_names_us(const struct paxos_proposer *p, paxos_iid iid);
paxos_iid proposer_handover_at(const struct paxos_proposer *p, paxos_iid first);

/* submissions.c: tells the submitters of the values dropped since the last call. */
void proposer_refuse(struct paxos_proposer *p, const struct paxos_emitter *out);

/* changes.c */
int proposer_change_command(struct paxos_proposer *p, const struct paxos_value *command);
int proposer_change_set(struct paxos_proposer *p, enum paxos_membership_kind kind, uint32_t set);
void proposer_command_delivered(struct paxos_proposer *p, paxos_iid iid,
				const struct paxos_value *v);
void proposer_command_released(struct paxos_proposer *p);

/* incarnation.c */
bool proposer_may_use_ballot(void *arg, paxos_ballot b);
void proposer_note_time(struct paxos_proposer *p, paxos_time now);
void proposer_answer_recovering(const struct paxos_proposer *p, const struct paxos_recover_ask *r,
				paxos_time now, const struct paxos_emitter *out);

#endif
