/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A deterministic simulation of the I/O-free cores: acceptors, proposers (each with its
 * internal learner) and learners exchange deep-copied messages over a simulated lossy,
 * duplicating, reordering network, under crashes, leader changes and partitions, while a
 * checker verifies the safety invariants after every step and liveness once the network heals.
 * Everything random comes from one seeded PRNG, so a seed and the options replay a run exactly.
 */
#ifndef PAXOS_SIM_H
#define PAXOS_SIM_H

#include <paxos/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_MAX_ACCEPTORS 7u
#define SIM_MAX_PROPOSERS 3u
#define SIM_MAX_LEARNERS 3u
#define SIM_MAX_VALUES 1000u
#define SIM_MAX_PARTITIONS 3u

/* Faults the fault phase may inject (a mask). */
enum sim_fault {
	SIM_FAULT_CRASH = 1u << 0,     /* crash and restart acceptors (storage survives) */
	SIM_FAULT_PCRASH = 1u << 1,    /* crash and restart proposers */
	SIM_FAULT_LEADER = 1u << 2,    /* move the leadership */
	SIM_FAULT_DUAL = 1u << 3,      /* a second proposer leads for a while */
	SIM_FAULT_PARTITION = 1u << 4, /* cut a minority of acceptors off */
	/* When the network heals, a random minority of acceptors stays cut off for good: the
	 * majority that is left must still deliver everything (liveness with a minority down). */
	SIM_FAULT_LOSE = 1u << 5,
	/* A leading proposer (with its learner) is cut off and still believes it leads while
	 * another is promoted; it comes back and steps down a little later, as the election
	 * makes it do once it hears the other's heartbeats. */
	SIM_FAULT_PCUT = 1u << 6,
	/* An acceptor crashes and loses its storage; it restarts empty and must recover (see
	 * paxos_acceptor_join) before it votes again. One at a time: more than a minority
	 * without state could not be made safe. */
	SIM_FAULT_AMNESIA = 1u << 7,
	SIM_FAULT_ALL = (1u << 8) - 1,
	/* A rolling restart: the acceptors lose their storage one after another, in id order
	 * and round and round, each as soon as no other is without its state (the one before
	 * said it recovered), as an operator restarts memory acceptors one by one. Not in
	 * SIM_FAULT_ALL: it takes every acceptor's state in turn, which SIM_FAULT_LOSE's
	 * budget does not allow for. */
	SIM_FAULT_ROLLING = 1u << 8,
	/* A double crash: a quorum of acceptors and every proposer crash together, the
	 * acceptors losing their storage, while the other acceptors are frozen (SIGSTOP) and
	 * come back only after the others restarted. What the lost quorum chose may be known
	 * to nobody: the restarted acceptors must not vote where it could matter, so the run
	 * must stay safe, and liveness is not required. */
	SIM_FAULT_DOUBLE = 1u << 9,
	/* A one-way partition: a leading proposer (with its learner) hears nothing while all it
	 * sends goes out. Another is promoted, as the others' election does once the deaf one
	 * steps down for want of an acceptor quorum (check-quorum) and falls silent; it keeps
	 * leading, and sending, until that step-down a little later. Not in SIM_FAULT_ALL, so
	 * that the mixes before it keep their seeds' runs. */
	SIM_FAULT_DEAF = 1u << 10,
	SIM_FAULT_EVERY = (1u << 11) - 1,
	/* A whole cluster restarted: every acceptor loses its storage and every proposer
	 * restarts, all at once. The log is lost; the acceptors begin a new one, and the
	 * learners that ran through it move to it (they deliver it from instance 1; values the
	 * old log chose that a learner had not delivered are lost for it). Not in
	 * SIM_FAULT_EVERY; one partition, no --reconfig. */
	SIM_FAULT_WHOLE = 1u << 11,
};
#define SIM_FAULT_KINDS 12u

/* Deliberately broken acceptors, to show that the checker catches unsafe behaviour. */
enum sim_mutant {
	SIM_MUTANT_NONE = 0,
	SIM_MUTANT_ACCEPT_LOW, /* accepts ballots below its promise */
	SIM_MUTANT_AMNESIA,    /* a restarted acceptor has lost its storage (thesis 3.7.6) */
	SIM_MUTANT_MERGE_SKIP, /* with partitions: every learner's merge takes skips for values */
	SIM_MUTANT_COUNT
};

enum sim_violation {
	SIM_OK = 0,
	SIM_V_AGREEMENT, /* two learners delivered different values for one instance */
	SIM_V_VALIDITY,  /* a delivered value was never submitted */
	SIM_V_DUPLICATE, /* one leader, yet a value delivered more often than it received it */
	SIM_V_ORDER,     /* a learner skipped or repeated an instance */
	SIM_V_PROMISE,   /* an acceptor's promise went down */
	SIM_V_MERGE,    /* merged learners disagree, or the merged order is not the specified one */
	SIM_V_LIVENESS, /* the healed system did not deliver everything in time */
	SIM_V_INTERNAL, /* the harness itself failed (allocation, core refused to start) */
};

struct sim_options {
	uint64_t seed;
	uint32_t acceptors; /* 1 .. SIM_MAX_ACCEPTORS */
	uint32_t proposers; /* 1 .. SIM_MAX_PROPOSERS */
	uint32_t learners;  /* 1 .. SIM_MAX_LEARNERS, besides the proposers' own */
	uint32_t loss;      /* percent of deliveries dropped during the fault phase */
	uint32_t dup;       /* percent of deliveries duplicated */
	uint32_t values;    /* distinct client values, 1 .. SIM_MAX_VALUES */
	uint32_t faults;    /* enum sim_fault mask */
	enum sim_mutant mutant;
	bool learning_acceptors; /* acceptors also learn (thesis 3.7.5); on by default */
	bool mixed_learning;     /* with learning_acceptors: only the even-numbered ones learn */
	uint32_t batch;          /* client values per instance (thesis 3.7.4); 1 = off */
	/* Percent of the leader's accepts lost on their way to each learner, on top of loss,
	 * in every phase: those learners get the value from a repeat. */
	uint32_t accept_loss;
	/* learner-merge: a leader idle this long closes an instance with a skip; 0: never. */
	uint32_t skip_idle_us;
	/* Membership changes through the log during the run: acceptors added, removed and
	 * replaced (new ids), 3 -> 5 -> 3, each once the one before is in force. */
	bool reconfig;
	/* Partitions: this many logs over the same processes (each hosts a core of every
	 * partition, as a node group does), partition p led by proposer p mod proposers at
	 * first, values spread round-robin; with more than one, the learners also merge the
	 * logs (learner-merge) and leaders close idle instances with skips. Not with reconfig. */
	uint32_t partitions;
	/* With partitions: each partition has acceptors of its own (paxos.conf
	 * partition-acceptors with disjoint sets): an acceptor crash or a network cut hits one
	 * partition's acceptor only, where shared acceptors fail in every partition at once. */
	bool own_acceptors;
	/* A value not delivered this long (us) is submitted again; 0: 120 ms. With partitions
	 * the clients also submit a partition's values again at once when the first instance of
	 * a new leader of it is delivered (paxos_node_on_new_leader), so that a long timeout
	 * does not hold them up after a leader failed (docs/operating.md, "Lean followers"). */
	uint32_t resubmit_us;
	int verbose; /* 0 quiet, 1 faults and failures, 2 every message too */
};

struct sim_result {
	enum sim_violation violation;
	char message[512];   /* what went wrong, when violation != SIM_OK */
	uint64_t messages;   /* message deliveries simulated */
	uint64_t deliveries; /* values delivered, over all learners */
	uint64_t submissions;
	uint64_t duplicates; /* deliveries beyond the first of a value, per learner */
	paxos_time end_time;
	uint64_t trace_hash;       /* digest of every event processed: equal runs, equal hashes */
	uint32_t reconfigurations; /* configurations chosen after the first (--reconfig) */
	uint32_t proposer_reconfigurations; /* of those, changes of the proposer set */
	uint64_t merged;                    /* values in the merged order, over all learners */
	uint32_t snapshots;                 /* merging learners restarted from a snapshot */
	uint32_t client_new_leaders; /* new leaders of a partition the client saw (resubmit_us) */
};

void sim_options_default(struct sim_options *o);

/* Parses "--seed N --acceptors N ... --faults crash,partition --mutant accept-low -v".
 * Returns 0, or -1 with a message in err. */
int sim_options_parse(struct sim_options *o, int argc, char **argv, char *err, size_t errlen);

/* Parses a fault list ("crash,partition", "all", "none") into a mask; -1 on an unknown name. */
int sim_faults_parse(const char *text, uint32_t *mask);

/* The command line that replays o, program name first. */
void sim_options_format(const struct sim_options *o, const char *program, char *buf, size_t cap);

const char *sim_violation_name(enum sim_violation v);

/* Runs one simulation. Returns the violation found (SIM_OK when none), also in r. */
enum sim_violation sim_run(const struct sim_options *o, struct sim_result *r);

#endif
