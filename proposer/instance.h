/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One instance of the proposer as the explicit finite state machine of thesis Fig. 3.1
 * (section 3.5). Thesis 3.5: "An approach that we found extremely useful in this task is to
 * model the life of any instance as a finite-state machine." The proposer (proposer.c) only
 * turns messages, ticks and learner callbacks into events; every protocol decision about one
 * instance is in instance_step().
 */
#ifndef PAXOS_PROPOSER_INSTANCE_H
#define PAXOS_PROPOSER_INSTANCE_H

#include <paxos/counters.h>
#include <paxos/membership.h>
#include <paxos/message.h>

#include "pending.h"

enum instance_state {
	INSTANCE_EMPTY,      /* not started (initial record) */
	INSTANCE_P1_PENDING, /* prepare sent, collecting promises */
	INSTANCE_P1_READY,   /* phase 1 done; waiting for a value (NV) or about to run phase 2 */
	INSTANCE_P2_PENDING, /* accept sent */
	INSTANCE_CLOSED,     /* the learner saw it chosen; nothing to send until delivered */
	INSTANCE_STATE_COUNT
};

/*
 * The events of Fig. 3.1. R0, R1, A, NV and E are normally fired by instance_step itself
 * (P reaching a quorum fires R0 or R1, which lead to A/NV and E); they can also be fired
 * directly, which the table-driven test does. Thesis 3.5: "This finite-state machine approach
 * allows to create a test suite to verify that the proposer takes the appropriate action for
 * every <state, event> that can happen."
 *
 * D stands for the figure's D0..D5: one delivery arrow out of each state, all handled by the
 * same rule (thesis 3.5: "Independently of the current state, the event is handled with the
 * following rule"), so it is one event.
 *
 * REPAIR is not in the figure either. A learner asks for it when the acceptors it hears hold
 * no quorum ballot for the instance: someone accepted values there, so a P1_READY record
 * without a value, which would wait for a client value for ever, is outdated and runs phase 1
 * again (the next ballot), which finds that value. In every other state it changes nothing
 * (phases in flight finish or time out by themselves; decided instances are repaired apart,
 * see repair.h).
 *
 * REJECT is not in the figure. Thesis 3.4: the acceptor "informs the sender about the
 * currently accepted ballot with a reject message. This allows the proposer to skip a few
 * ballots ahead when generating the next request." The proposer jumps past it with
 * INCREMENTSKIP (3.5.2). It behaves like TO1/TO2 (back to P1_PENDING, keep v2/cv, prepare
 * again) except for the new ballot and the staleness check, so it is its own event rather
 * than a TO with a special argument.
 */
enum instance_event {
	EV_S,      /* start phase 1 for the first time */
	EV_TO1,    /* phase 1 timeout */
	EV_P,      /* a promise arrived */
	EV_R0,     /* quorum of promises, none with a value */
	EV_R1,     /* quorum of promises, some with a value (v1) */
	EV_NV,     /* phase 1 done, nothing to propose: wait for a client value */
	EV_A,      /* a value for phase 2 is (or may now be) assigned */
	EV_E,      /* execute phase 2 */
	EV_C,      /* the learner closed the instance */
	EV_TO2,    /* phase 2 timeout */
	EV_D,      /* the learner delivered the instance (D0..D5) */
	EV_REJECT, /* an acceptor rejected us with a higher ballot (3.5.2) */
	EV_REPAIR, /* a learner cannot close the instance (PAXOS_MSG_REPAIR) */
	INSTANCE_EVENT_COUNT
};

/* The record <i, S, b, pset, v1, vb, v2, cv> plus the timer deadline. Thesis 3.5: "v1 is the
 * value found after a successful phase 1, vb is the corresponding ballot, v2 is the value to
 * use for phase 2". v1 is null exactly when vb == 0; v2 is null when !has_v2 (a value may be
 * empty). */
struct instance {
	paxos_iid iid;
	enum instance_state state;
	paxos_ballot ballot;
	uint32_t pset; /* bit a: acceptor a promised for `ballot` */
	uint8_t *v1;   /* buffer of max_value bytes */
	uint32_t v1_len;
	paxos_ballot vb;
	uint8_t *v2; /* buffer of max_value bytes */
	uint32_t v2_len;
	bool has_v2;
	/* The ballot of our last accept of v2 (0: none since v2 was set): a value the learner
	 * says was proposed at it is v2, as a ballot carries one value per instance. */
	paxos_ballot v2_ballot;
	bool cv;         /* v2 holds client values taken from the pending list */
	uint32_t values; /* with cv: client values in v2 (lib/core/batch.h frame) */
	bool claimed; /* v2 is another proposer's value (adopted, or closed), not one we packed */
	bool settled; /* v2 is chosen and its client values were settled (instance_settle) */
	bool opened;  /* phase 2 sent at least once: a closed instance we ran ourselves */
	paxos_time deadline;
	paxos_time sent_at; /* when the current prepare or accept went out */
	uint32_t timeouts;  /* TO1/TO2 so far: each doubles the next wait */
};

/* A phase's round trip, smoothed as TCP does (RFC 6298): the adaptive timeout is
 * srtt + 4 * rttvar. Only first transmissions are sampled (Karn), since the answer to a
 * retransmission cannot be told from the answer to the original. */
struct rtt_estimate {
	paxos_time srtt, rttvar;
	bool valid;
};

/* A membership command a proposer was asked to propose (paxos_proposer_change_membership). */
struct instance_command {
	bool wanted;  /* the next instance that may take a value takes it first */
	paxos_iid in; /* the instance it went to, 0: none */
	uint8_t bytes[PAXOS_MEMBERSHIP_COMMAND_MAX];
	uint32_t len; /* PAXOS_MEMBERSHIP_COMMAND_LEN, or _MAX with an acceptor's address */
};

/* What the leader's accepts say was chosen (paxos_accept.chosen_to): in each instance from
 * `from` to `to` the learner delivered the value we proposed at `ballot` (0: nothing to say).
 * said: the last instance of the range an accept or a chosen message carried; accepted: an
 * accept went out since the last tick. A tick after none says the rest (paxos_chosen). */
struct chosen_range {
	paxos_ballot ballot;
	paxos_iid from, to;
	paxos_iid said;
	bool accepted;
};

/* What every instance shares: configuration, the pending list and the counters.
 * Instance values are frames of client values (lib/core/batch.h, thesis 3.7.4). */
struct instance_ctx {
	uint32_t proposer_id;
	uint32_t epoch;     /* first ballots are ballot_first(proposer_id, epoch) */
	uint32_t acceptors; /* quorum is acceptors / 2 + 1 (without a membership) */
	/* NULL: acceptors 0 .. acceptors - 1 for good. Else promises count only from the
	 * members of the instance's configuration, with its quorum (paxos/membership.h). */
	const struct paxos_membership *membership;
	uint32_t max_value;        /* of an instance value (a frame) */
	uint32_t batch_limit;      /* client values packed into one instance at most (>= 1) */
	uint32_t *scratch;         /* batch_limit entries: putting a frame back in order */
	paxos_time phase1_timeout; /* fixed, or the starting point of the adaptive ones */
	paxos_time phase2_timeout;
	paxos_time timeout_floor;   /* adaptive timeouts stay within [floor, ceiling] */
	paxos_time timeout_ceiling; /* and no backed-off wait exceeds the ceiling */
	struct rtt_estimate *rtt;   /* [0] phase 1, [1] phase 2; NULL: fixed timeouts */
	struct pending *pending;
	/* Credits for delivered values that are not in the list (settled.h); NULL: closed
	 * instances only take their values out of the list, delivery settles them (repairs). */
	struct settled *settled;
	struct paxos_counters *counters;
	/* How many pending values may go to inst now, 0 for none (the ordering and concurrency
	 * rule of 3.7.2 and the flow control, which need the whole window). NULL: batch_limit. */
	uint32_t (*may_assign)(void *arg, const struct instance *inst);
	void *may_assign_arg;
	/* Whether ballot b may be used (its epoch is taken, see ballot.h). NULL: always. */
	bool (*may_use_ballot)(void *arg, paxos_ballot b);
	void *may_use_ballot_arg;
	/* The highest ballot any instance prepared with, kept up to date here (NULL: not kept):
	 * a repair starts above it, so its ballot is new for its instance too. */
	paxos_ballot *highest;
	/* The highest instance an accept went out for (NULL: not kept): what a recovering
	 * acceptor asks the proposers (PAXOS_MSG_RECOVER_ASK). */
	paxos_iid *highest_iid;
	/* The highest ballot a reject told any instance to beat (NULL: not kept): instances
	 * started later (S) start above it at once, as a Multi-Paxos leader keeps one ballot
	 * for the instances ahead, instead of each being rejected once (a recovered acceptor's
	 * fence, a former leader's window). */
	paxos_ballot *to_beat;
	/* Set when the next instance that finds no client value should close with a skip
	 * (learner-merge: an idle leader, see paxos_proposer_tick); cleared when one does. NULL:
	 * never (repairs). */
	bool *skip_wanted;
	/* Instances below it close with a skip where phase 1 found no value: a handover's
	 * (admission.c proposer_handover_at). NULL or 0: none. */
	const paxos_iid *values_from;
	/* The membership command to propose, before any client value; NULL: never (repairs). */
	struct instance_command *command;
	/* Said in each accept at its ballot (learners close those instances on it); NULL: never
	 * (repairs). */
	struct chosen_range *chosen;
	/* Said in each accept (paxos_accept.spares_rest); NULL: never (repairs). */
	const bool *spares_rest;
};

/* The event's input: promise for P, reject for REJECT, value for C and D (NULL for D means
 * "delivered, value unknown", which counts as a different value). */
struct instance_arg {
	const struct paxos_promise *promise;
	const struct paxos_reject *reject;
	const struct paxos_value *value;
	paxos_ballot value_ballot; /* D: the ballot value was proposed at, 0 if not known */
};

/* Whether v, proposed at ballot (0: not known), is the instance's v2: by the ballot when
 * we sent v2 at it, else by the bytes. */
bool instance_holds(const struct instance *inst, const struct paxos_value *v, paxos_ballot ballot);

/* A chosen frame v of client values settles them: each leaves the pending list, or, not in
 * it, leaves a credit in ctx->settled (when there is one) so that a copy arriving later is
 * not queued (a proposer that leads later would propose it again). */
void instance_settle(const struct instance_ctx *ctx, const struct paxos_value *v);

/* The wait before TO1 (phase 1) or TO2 (phase 2) of inst. */
paxos_time instance_timeout(const struct instance_ctx *ctx, const struct instance *inst, int phase);

/* Binds the record to its two value buffers and resets it for instance 0. */
void instance_init(struct instance *inst, uint8_t *v1_buf, uint8_t *v2_buf);

/* The thesis' initial record <iid, empty, 0, {}, null, 0, null, false>. */
void instance_reset(struct instance *inst, paxos_iid iid);

/* Applies one event (Fig. 3.1); messages go to out. Events that do not apply in the current
 * state, or whose message is for another iid or ballot, change nothing. Returns the new
 * state. Timeouts are not checked here: the caller fires TO1/TO2 when the deadline passed. */
enum instance_state instance_step(const struct instance_ctx *ctx, struct instance *inst,
				  enum instance_event ev, const struct instance_arg *arg,
				  paxos_time now, const struct paxos_emitter *out);

/* Leadership lost (not a Fig. 3.1 event): the client values the instance holds go back to
 * the front of the pending list, in order, and the instance is reset but keeps its ballot (the next
 * S continues above it), unless it is closed (then D will settle its value). */
void instance_release(const struct instance_ctx *ctx, struct instance *inst);

/* Whether the instance occupies a phase 2 slot for the concurrency limit of 3.7.2: phase 2
 * sent, or a value held while phase 1 is (re)run. */
bool instance_in_phase2(const struct instance *inst);

const char *instance_state_name(enum instance_state s);
const char *instance_event_name(enum instance_event e);

#endif
