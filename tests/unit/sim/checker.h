/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The invariant checker. Every delivery (an instance value: a frame of client values, each
 * checked on its own for validity and duplicates) of every learner (the proposers' internal ones
 * too) and every acceptor state change is reported here as it happens, so a violation is caught at
 * the step that causes it. Most restate the broadcast's conditions of thesis chapter 1:
 *   agreement  - all learners deliver the same bytes for an instance ("Uniform Agreement: if a
 *                process ADelivers v, then all correct processes eventually deliver v.");
 *   validity   - a delivered value is one a client submitted ("Uniform Integrity: [...] only
 *                if v previously submitted by some process");
 *   duplicates - while no leader fails, no learner delivers a value more often than one
 *                proposer that led received it (as leader or, before it led, as a follower
 *                that queued it: thesis 4.7); a planned hand-over (a removed leader) keeps
 *                this; a leader's failure may deliver a value twice (at-least-once: thesis
 *                3.2.2 lets a client keep "trying to submit a value until it is delivered,
 *                risking to deliver it twice"), where Uniform Integrity says "at most once";
 *   order      - each learner delivers instances 1, 2, 3, ... without gaps or repeats, and
 *                starts again at 1 only in a new log (a higher generation) it was told of
 *                ("Uniform Total Order: if a process delivers value v before delivering value
 *                v', then all processes deliver v before v'.");
 *   promises   - an acceptor's promise for an instance never goes down, restarts included
 *                (thesis 2.2.2: "acceptors are not allowed to lose any information in case
 *                of a crash").
 */
#ifndef PAXOS_SIM_CHECKER_H
#define PAXOS_SIM_CHECKER_H

#include "network.h"
#include "sim.h"

#include <paxos/storage.h>

#define CHECKER_MAX_VIEWS (SIM_MAX_LEARNERS + SIM_MAX_PROPOSERS)

/* What one learner incarnation has delivered. */
struct checker_view {
	paxos_iid next;  /* the instance it must deliver next */
	uint32_t *count; /* deliveries per value id */
	uint32_t distinct;
	uint64_t generation; /* the log it delivers */
	/* Per value id: not delivered here when the view moved to a new log. The old log may
	 * have chosen it, and that is lost with the old log: it need not be delivered. */
	uint8_t *excused;
};

/* The values one log chose, by iid. */
#define CHECKER_LOGS 16u
struct checker_log {
	uint64_t generation;
	struct checker_chosen *chosen;
	size_t cap;
};

struct checker_chosen {
	bool known;
	uint32_t len;
	uint8_t bytes[SIM_MAX_VALUE];
};

struct checker {
	uint32_t values;
	uint32_t *submitted; /* client submissions per value id */
	uint32_t proposers;
	uint32_t *received; /* copies handed to proposer p, [p * values + id], as leader or not */
	uint32_t led;       /* bit p: proposer p led (so proposed what it received) */
	bool integrity;     /* check duplicates (no leader fails in this run) */
	bool skips;         /* proposers may close idle instances with skips */
	bool reconfig;      /* membership commands may be chosen */
	struct checker_log logs[CHECKER_LOGS]; /* by generation */
	uint32_t log_count;
	struct checker_view views[CHECKER_MAX_VIEWS];
	uint32_t view_count;
	paxos_ballot *promised[SIM_MAX_ACCEPTORS]; /* highest promise seen, by iid */
	size_t promised_cap[SIM_MAX_ACCEPTORS];
	uint64_t deliveries;
	uint64_t duplicates;
	enum sim_violation violation; /* the first one */
	char message[512];
};

/* Value ids are encoded into the bytes ("v00042:" and a tail whose length depends on the id),
 * so a delivered value names the submission it came from. */
uint32_t value_encode(uint32_t id, uint8_t *buf);
/* The id of a well-formed value below `values`, or -1. */
int64_t value_decode(const struct paxos_value *v, uint32_t values);
/* The id of the first value of an instance value (a frame), or -1. */
int64_t frame_first_id(const struct paxos_value *frame, uint32_t values);

int checker_init(struct checker *c, uint32_t values, uint32_t views, uint32_t proposers);
void checker_destroy(struct checker *c);

/* Records the first violation only; later ones are usually its consequences. */
void checker_fail(struct checker *c, enum sim_violation v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void checker_submitted(struct checker *c, uint32_t id);
/* Proposer p queued a copy of a client value (network duplicates included). */
void checker_received(struct checker *c, uint32_t proposer, const struct paxos_value *v);
/* Proposer p leads: what it received may be proposed. */
void checker_led(struct checker *c, uint32_t proposer);
/* View delivered v in instance iid of the log of generation. */
void checker_delivered(struct checker *c, uint32_t view, uint64_t generation, paxos_iid iid,
		       const struct paxos_value *v, paxos_time now);
/* A learning acceptor learned v for iid: it must agree with every learner's delivery. */
void checker_learned(struct checker *c, uint32_t acceptor, uint64_t generation, paxos_iid iid,
		     const struct paxos_value *v, paxos_time now);
/* The value a learner delivered for iid of the log of generation; NULL while none did. */
const struct checker_chosen *checker_chosen_in(const struct checker *c, uint64_t generation,
					       paxos_iid iid);
/* A learner that delivered nothing yet follows the log of generation without a word: what
 * earlier logs chose it cannot deliver. */
void checker_view_heard_log(struct checker *c, uint32_t view, uint64_t generation);
/* The view's learner said the acceptors began a new log: it delivers from its instance 1. */
void checker_view_new_log(struct checker *c, uint32_t view, uint64_t generation, paxos_time now);
/* An acceptor lost its storage (a fault, not a mutant): its promise history starts again. */
void checker_forget_promises(struct checker *c, uint32_t acceptor);
/* A learner restarted (a proposer's internal learner): it delivers from instance 1 again. */
void checker_view_reset(struct checker *c, uint32_t view);
/* A learner restarted from a snapshot: it delivers from instance from again, and what it
 * delivered from there on no longer counts (from at most its next instance). */
void checker_view_rewind(struct checker *c, uint32_t view, paxos_iid from);
/* A learner skipped to first (a lean follower taking over, paxos_learner_skip_to): the
 * instances below were chosen elsewhere, and it delivers from first on. */
void checker_view_skip(struct checker *c, uint32_t view, paxos_iid first);
/* Whether the view delivered every value submitted so far. */
bool checker_view_complete(const struct checker *c, uint32_t view);
/* Reads the promise for iid back through the storage interface and checks it did not drop.
 */
void checker_promise(struct checker *c, uint32_t acceptor, struct paxos_storage *st, paxos_iid iid,
		     paxos_time now);
/* The same for every instance the acceptor ever promised (after a restart). */
void checker_promises_all(struct checker *c, uint32_t acceptor, struct paxos_storage *st,
			  paxos_time now);

#endif
