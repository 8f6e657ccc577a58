/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The merged-order checker for partitioned runs (learner-merge). Each simulated learner process
 * feeds its partitions' deliveries into the library's merge (lib/core/merge.h), as a node group
 * does; the checker records what each merge hands on and verifies, at every step, that
 *   - every merged learner's sequence is a prefix of the others' (one merged order), and
 *   - that sequence is the one the specification gives for the chosen logs: rounds taking from
 *     partitions 0, 1, ... in turn a segment of `segment` instances, or fewer up to one that
 *     holds a skip (computed here from the per-partition checkers' chosen values, without the
 *     library's merge code);
 * and, for liveness, whether a learner has merged every value submitted.
 */
#ifndef PAXOS_SIM_MERGED_H
#define PAXOS_SIM_MERGED_H

#include "checker.h"
#include "merge.h"
#include "sim.h"

/* One client value of the merged order. */
struct merged_entry {
	uint32_t partition;
	uint32_t position; /* among the values of its instance */
	paxos_iid iid;
	int64_t id; /* the value's id, -1 for bytes no client submitted */
};

struct merged;

/* One learner process: its merge and what came out of it. */
struct merged_learner {
	struct merged *owner;
	uint32_t index;
	struct merge merge;
	uint64_t out;    /* values handed on so far */
	uint32_t *count; /* merged deliveries per value id */
	/* A snapshot: taken inside the delivery of value capture_at (1: the first), as an
	 * application snapshots after applying a value, mid-instance too. */
	uint64_t capture_at;
	bool captured;
	uint64_t captured_out;
	struct merge_position captured_pos;
};

struct merged {
	uint32_t partitions, segment, values, learners;
	bool broken; /* SIM_MUTANT_MERGE_SKIP: skips are fed as instances with no value */
	struct merged_learner l[SIM_MAX_LEARNERS];
	struct merged_entry *seq; /* the merged order so far, as its longest learner has it */
	size_t len, cap;
	/* The specified order, computed from the chosen logs up to where they are known. */
	struct merged_entry *spec;
	size_t spec_len, spec_cap;
	uint32_t spec_turn;                             /* partition whose segment comes next */
	paxos_iid spec_next[SIM_MAX_PARTITIONS];        /* its next instance, per partition */
	uint32_t *submitted;                            /* per value id */
	size_t checked;                                 /* seq and spec agree below this */
	const struct checker *logs[SIM_MAX_PARTITIONS]; /* each partition's chosen values */
	enum sim_violation violation;
	char message[512];
};

/* Returns 0, or -1 when out of memory or the merge refuses (segment 0). */
int merged_init(struct merged *m, uint32_t partitions, uint32_t segment, uint32_t learners,
		uint32_t values, const struct checker *const *logs);
void merged_destroy(struct merged *m);

void merged_submitted(struct merged *m, uint32_t id);

/* Values in the merged order, over all learners. */
uint64_t merged_total(const struct merged *m);

/* Learner `learner`'s core of `partition` delivered instance iid holding frame (a frame of
 * client values, or a skip): fed to its merge as lib/node/partitions.c does. */
void merged_delivered(struct merged *m, uint32_t learner, uint32_t partition, paxos_iid iid,
		      const struct paxos_value *frame, paxos_time now);

/* Learner `learner` snapshots inside its merged delivery `after` values from now. */
void merged_arm(struct merged *m, uint32_t learner, uint32_t after);

/* Learner `learner` restarts from its snapshot: a new merge resumes from the snapshot's
 * position, stored in pos (its cores must start at pos->next[p]), and what it merged since
 * no longer counts. Returns 0, 1 when no snapshot was taken yet, or -1. */
int merged_restart(struct merged *m, uint32_t learner, struct merge_position *pos);

/* Whether learner's merged order holds every value submitted. */
bool merged_complete(const struct merged *m, uint32_t learner);

#endif
