/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulated cluster's state and its cores' plumbing (sim.c), and what of it the set-up and
 * the run (run.c), the event steps and deliveries (deliver.c), the faults (faults.c) and the
 * membership changes (reconfig.c) use. Internal to the simulator.
 */
#ifndef PAXOS_SIM_CLUSTER_H
#define PAXOS_SIM_CLUSTER_H

#include "sim.h"

#include "checker.h"
#include "merged.h"
#include "network.h"
#include "rng.h"

#include <paxos/acceptor.h>
#include <paxos/learner.h>
#include <paxos/membership.h>
#include <paxos/proposer.h>
#include <paxos/storage.h>

#include "leadership.h"

/* Simulated time, in microseconds. Network delays are far below the timeouts, as on a LAN,
 * but large enough that messages overtake each other all the time. */
#define DELAY_MIN 50u
#define DELAY_MAX 2000u
#define PHASE_TIMEOUT 10000u
#define HOLE_CHECK 10000u
#define TICK (PHASE_TIMEOUT / 4) /* as lib/node/node.c: a quarter of the shortest timeout */
#define ACCEPTOR_REPEAT 20000u
#define SUBMIT_SPAN 200000u      /* clients submit their values during the first 200 ms */
#define RESUBMIT_AFTER 120000u   /* a value not delivered by then is submitted again */
#define FAULT_PHASE 400000u      /* faults happen before this; then the network heals */
#define LIVENESS_BUDGET 3000000u /* after healing, everything must be delivered this fast */
#define MAX_EVENTS 20000000u
#define RECOVERY_GRACE (10 * DELAY_MAX) /* a restarted proposer's wait before it answers */

#define LEARNER_WINDOW 64u
#define REPEAT_BATCH 16u
#define PENDING_SIZE 64u

enum endpoint_kind { EP_ACCEPTOR, EP_PROPOSER, EP_LEARNER, EP_CLIENT };

struct endpoint {
	struct sim *sim;
	enum endpoint_kind kind;
	uint32_t index;
	struct paxos_emitter emitter;
	uint32_t partition; /* the log of the core it is (one endpoint per core) */
};

enum sim_event_kind {
	SE_DELIVER,          /* target: receiver, arg: message slot */
	SE_TICK,             /* learner and proposer timers */
	SE_ACCEPTOR_TICK,    /* target: acceptor */
	SE_SUBMIT,           /* arg: value id */
	SE_RESUBMIT,         /* arg: value id */
	SE_FAULT,            /* inject the next fault */
	SE_ACCEPTOR_RESTART, /* target: acceptor */
	SE_PROPOSER_RESTART, /* target: proposer */
	SE_PARTITION_END,
	SE_DEMOTE, /* target: a proposer that led alongside another; arg: partition, or ALL */
	SE_HEAL,
	SE_PROPOSER_UNCUT, /* target: a proposer cut off by SIM_FAULT_PCUT */
	SE_PROPOSER_HEARS, /* target: a proposer deaf by SIM_FAULT_DEAF */
	SE_DOUBLE_CRASH,   /* SIM_FAULT_DOUBLE's crash, while the others are frozen */
	SE_RECONFIG,       /* --reconfig: the next membership change, or a step of one */
	SE_SNAPSHOT,       /* target: a merging learner restarts from a snapshot */
};

/* SE_DEMOTE's arg for a proposer that may lead in any partition. */
#define ALL_PARTITIONS UINT32_MAX

/* --reconfig: changes stop this long after the network healed, so that the last ones are
 * made, and the removed acceptors retired, in a healthy cluster too. */
#define RECONFIG_UNTIL (FAULT_PHASE + 300000u)
#define MAX_CONFIGS 64u

struct sim_acceptor {
	struct paxos_storage *st; /* survives crashes: a durable backend */
	struct paxos_acceptor *core;
	struct paxos_learner *learner;       /* learning acceptors: the node's learner, else NULL */
	struct paxos_membership *membership; /* its learner's, with --reconfig */
	bool present;                        /* started once, and not retired */
	bool up;
	bool cut;                /* partitioned away */
	bool lose_state;         /* its storage is lost: it restarts empty and recovers */
	paxos_time frozen_from;  /* stopped (SIGSTOP) from then */
	paxos_time frozen_until; /* until then: hears and sends nothing */
	paxos_iid floor;         /* what its last recovery set, kept with its storage */
	paxos_ballot fence;
	uint64_t generation; /* of its log, kept beside its storage whatever happens to it */
	bool amnesiac;       /* this life started without its state, so it recovers */
	bool served;         /* a life recovered and voted: the node kept its generation then */
	bool restored;       /* whether it held every decision below floor when it crashed */
	uint64_t writes;     /* its core's readies written since it started */
	bool crash_at_write; /* it crashes after its next write, before sending what it backs */
	struct endpoint ep;
	struct paxos_counters counters;
	struct paxos_counters learner_counters;
};

struct sim_proposer {
	struct paxos_proposer *core;
	struct paxos_learner *learner;       /* its internal learner */
	struct paxos_membership *membership; /* its learner's, with --reconfig */
	bool up;
	bool cut;       /* cut off with its learner: sends and hears nothing (SIM_FAULT_PCUT) */
	bool deaf;      /* with its learner: hears nothing, sends as before (SIM_FAULT_DEAF) */
	uint32_t epoch; /* what its durable epoch store holds: stored before a ballot left */
	/* With partitions, a follower is lean (lib/node/node.c): it drops the client values and
	 * the log's traffic, and its learner asks for nothing, until it takes over. */
	bool lean;
	paxos_iid heard_next; /* its learner's next instance, as its last heartbeat said */
	struct endpoint ep;
	struct paxos_counters counters;
	struct paxos_counters learner_counters;
};

struct sim_learner {
	struct paxos_learner *core;
	struct paxos_membership *membership; /* with --reconfig */
	struct endpoint ep;
	struct paxos_counters counters;
};

/* One partition's cores (each process hosts one of every partition, as a node group does) and
 * its checker. Process state (up, cut, frozen, present) is kept alike in every partition's
 * copy: the faults change it for all partitions at once. */
struct sim_partition {
	struct sim_acceptor acc[SIM_MAX_ACCEPTORS];
	struct sim_proposer prop[SIM_MAX_PROPOSERS];
	struct sim_learner lrn[SIM_MAX_LEARNERS];
	struct endpoint client;
	/* Who proposed what learner 0, the client's, delivered (leadership.h): a new leader
	 * sends the client's values again. */
	struct leadership client_leadership;
	struct checker check;
};

struct sim {
	struct sim_options o;
	/* The partition being worked on (use()): these point into part[cur]. */
	uint32_t cur;
	struct sim_acceptor *acc;
	struct sim_proposer *prop;
	struct sim_learner *lrn;
	struct checker *check;
	struct sim_partition part[SIM_MAX_PARTITIONS];
	struct merged merged; /* with partitions: the learners' merged order */
	bool merging;
	uint32_t segment; /* merge-segment, drawn from the seed */
	struct sim_rng rng;
	struct sim_pool pool;
	struct sim_queue queue;
	paxos_time now;
	uint32_t loss;
	bool healed;
	bool partitioned;
	uint32_t window, concurrency; /* the proposers', drawn from the seed */
	uint32_t submitted_distinct;
	uint64_t incarnations; /* the last incarnation number given to an acceptor */
	uint32_t amnesias;     /* acceptors that lost their storage during the run */
	uint32_t rolling_next; /* SIM_FAULT_ROLLING: the acceptor whose turn is next */
	bool doubled;          /* SIM_FAULT_DOUBLE happened: liveness is not required */
	/* Acceptor slots in use: ids 0 .. ids - 1 (o.acceptors, more once --reconfig added). */
	uint32_t ids;
	/* --reconfig: the history as the chosen values say (fed from the checker), every
	 * configuration it held and the change asked for but not chosen yet. */
	uint32_t alpha;
	struct paxos_membership *truth;
	uint32_t configs[MAX_CONFIGS];
	uint32_t config_count;
	bool issued;
	uint32_t issued_from, issued_members;
	/* The change asked for is of the proposer set (to issued_proposers; issued_members are
	 * the acceptors as they stay). */
	bool issued_kind_proposers;
	uint32_t issued_proposers;
	uint32_t proposer_changes; /* proposer set changes chosen in the run */
	/* Acceptors that lost their state in the run, were lost for good, or retired: in each
	 * configuration ever chosen they must stay a minority (see budget_ok). */
	uint32_t amnesia_mask, lost_mask, retired_mask;
	struct sim_result *r;
};

/* ---- sim.c, for the faults ---- */

/* Makes partition p the one s->acc, s->prop, s->lrn and s->check are of; returns the one that
 * was. */
uint32_t use(struct sim *s, uint32_t p);
/* For each partition p, made current; partition 0 is current after the loop. */
#define EACH_PARTITION(s, p)                                                                       \
	for (uint32_t p = 0; p < (s)->o.partitions ? (use(s, p), true) : (use(s, 0), false); p++)
/* A line of the run's trace at verbosity level (--verbose). */
void trace(struct sim *s, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void acceptor_crash(struct sim *s, uint32_t i);
void acceptor_restart(struct sim *s, uint32_t i);
bool budget_ok(const struct sim *s, uint32_t bad);
void demote(struct sim *s, uint32_t i);
void ensure_leader(struct sim *s);
bool leads(const struct sim *s, uint32_t i);
void lean_follow(struct sim *s, uint32_t i);
bool may_lead(const struct sim *s, uint32_t i);
uint32_t pick_proposer(struct sim *s, int want_leader);
void promote(struct sim *s, uint32_t i);
bool proposer_start(struct sim *s, uint32_t i);
void proposer_stop(struct sim_proposer *p);
uint32_t proposer_view(const struct sim *s, uint32_t i);
/* The event kind for target and arg at time at. */
void schedule(struct sim *s, paxos_time at, enum sim_event_kind kind, uint32_t target,
	      uint32_t arg);
bool without_state(const struct sim_acceptor *a);
/* Starts acceptor i (amnesiac: without its state, so it recovers); false if it cannot. */
bool acceptor_start(struct sim *s, uint32_t i, bool amnesiac);
void endpoint_init(struct sim *s, struct endpoint *ep, enum endpoint_kind kind, uint32_t index);
/* The chosen values the checker saw, applied to the history the cluster agrees on. */
void truth_advance(struct sim *s);

/* What a learner decided goes to another core. */
typedef void (*learner_event_fn)(void *arg, const struct paxos_learner_event *e);
/* Learners: a step of learner l with m and its ready run through the callbacks; a restart
 * from a snapshot; the cores' callbacks. Clients: a submission and a resubmission when due. */
void acceptor_learn(struct sim *s, uint32_t i, const struct paxos_message *m);
void hash_mix(struct sim *s, uint64_t x);
uint32_t leader_count(const struct sim *s);
void learner_snapshot_restart(struct sim *s, uint32_t i);
void learner_step(struct sim *s, struct paxos_learner *l, const struct paxos_message *m,
		  struct endpoint *ep, learner_event_fn closed, learner_event_fn delivered,
		  learner_event_fn new_log);
void maybe_resubmit(struct sim *s, uint32_t id);
void on_client_deliver(void *arg, const struct paxos_learner_event *e);
void on_internal_closed(void *arg, const struct paxos_learner_event *e);
void on_internal_deliver(void *arg, const struct paxos_learner_event *e);
void on_internal_new_log(void *arg, const struct paxos_learner_event *e);
void submit(struct sim *s, uint32_t id);
const char *violation(const struct sim *s, enum sim_violation *v);

/* For run.c: a learner of the cluster's (--reconfig: with a history of its own), an
 * application learner's deliveries, and a removed proposer's handover. */
void handover_removed(struct sim *s);
struct paxos_learner *learner_new(struct sim *s, paxos_instance_delivered_fn delivered,
				  paxos_instance_closed_fn closed, struct endpoint *ep,
				  struct paxos_counters *counters, struct paxos_membership **m);
void on_learner_deliver(void *arg, paxos_iid iid, const struct paxos_value *v);

/* ---- deliver.c ---- */

bool complete(const struct sim *s);
void deliver(struct sim *s, uint32_t to, uint32_t slot);
void report_liveness(struct sim *s);
void step(struct sim *s, const struct sim_event *e);

/* ---- faults.c ---- */

void double_crash(struct sim *s);
void end_partition(struct sim *s);
void heal(struct sim *s);
void inject_fault(struct sim *s);
void proposer_hears(struct sim *s, uint32_t i);
void uncut_proposer(struct sim *s, uint32_t i);

/* ---- reconfig.c ---- */

/* The next step of --reconfig: retire what was removed, keep the change asked for going, or
 * ask for a new one. */
void reconfigure(struct sim *s);

#endif
