/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Partitions (paxos.conf `partitions N`): N independent Paxos logs in one cluster, each with
 * its own leader, ports (+10 per partition) and stores. A partitions group hosts one node per
 * partition on one libevent loop, submits a value to the partition the caller names, and
 * delivers what its learners learn with the partition.
 *
 * Order: without `learner-merge`, values are ordered within each partition only; the
 * partitions' deliveries interleave as they arrive. With `learner-merge yes`, a group that
 * hosts every partition delivers them as one total order that every such group agrees on
 * (Multi-Ring Paxos' deterministic merge): rounds, each taking from partitions 0, 1, ... N-1 in
 * turn the next segment of that partition's log, a segment being merge-segment instances or
 * fewer up to one holding a skip. Leaders of idle partitions propose a skip every
 * merge-skip-ms, so an idle partition holds the merged order back by about that much. A
 * leader that crashed holds it back until another proposer leads its partition
 * (heartbeat-timeout-ms); deliveries of the other partitions wait in memory meanwhile. A
 * merging group starts every log at instance 1, or where a merge position stored with a
 * snapshot says (paxos_partitions_merge_position(), paxos_partitions_resume_merge()).
 *
 * Threads: as paxos/node.h, the loop's thread only.
 */
#ifndef PAXOS_PARTITIONS_H
#define PAXOS_PARTITIONS_H

#include <paxos/node.h>

struct event_base;
struct paxos_partitions;

/** A value delivered by a partitions group: its @p partition, its instance @p iid in that
 * partition's log and its @p position among the values batched there; @p value is valid during
 * the call only. Merged (learner-merge), calls come in the merged order. */
typedef void (*paxos_partition_delivered_fn)(void *arg, uint32_t partition, paxos_iid iid,
					     uint32_t position, const struct paxos_value *value);

/** Instances @p from..@p to of @p partition were trimmed before this group's learner learned
 * them (see paxos_node_on_trimmed()): load a snapshot. A merging group stops delivering then:
 * it cannot know where the merged order went on (paxos_partitions_error() says so). */
typedef void (*paxos_partition_trimmed_fn)(void *arg, uint32_t partition, paxos_iid from,
					   paxos_iid to);

/** A group on @p base with a node for each partition of @p cfg whose bit is set in @p hosted
 * (bit P: partition P; bits at or above the configuration's count are refused), hosting no
 * role yet: add roles through paxos_partitions_node(). @p cfg is copied. Returns the group, or
 * NULL with the reason in @p err (@p errlen bytes). */
PAXOS_API struct paxos_partitions *paxos_partitions_new(struct event_base *base,
							const struct paxos_config *cfg,
							uint64_t hosted, char *err, size_t errlen);

/** Frees the group with its nodes (paxos_node_free() of each); NULL is ignored. */
PAXOS_API void paxos_partitions_free(struct paxos_partitions *g);

/** How many partitions the configuration has (hosted or not). */
PAXOS_API uint32_t paxos_partitions_count(const struct paxos_partitions *g);

/** The node of @p partition, owned by the group, or NULL when the group does not host it. */
PAXOS_API struct paxos_node *paxos_partitions_node(const struct paxos_partitions *g,
						   uint32_t partition);

/** Host a learner in every hosted partition's node, delivering to @p deliver(@p arg, ...),
 * merged when the configuration says learner-merge yes. Call it before the loop runs. Returns
 * PAXOS_OK, or PAXOS_E_INVALID (a learner added already, @p deliver NULL, learner-merge with
 * partitions this group does not host) or a node's error, with paxos_partitions_error(). */
PAXOS_API int paxos_partitions_add_learner(struct paxos_partitions *g,
					   paxos_partition_delivered_fn deliver, void *arg);

/** Calls @p trimmed(@p arg, ...) when a hosted partition's learner skips trimmed instances.
 * Call it before paxos_partitions_add_learner(). */
PAXOS_API void paxos_partitions_on_trimmed(struct paxos_partitions *g,
					   paxos_partition_trimmed_fn trimmed, void *arg);

/** paxos_node_submit() to @p partition's proposers. Returns PAXOS_OK, PAXOS_E_INVALID for a
 * partition the configuration does not have or the group does not host, or
 * paxos_node_submit()'s error; paxos_partitions_error() says why. */
PAXOS_API int paxos_partitions_submit(struct paxos_partitions *g, uint32_t partition,
				      const void *value, size_t len);

/** The last error the group reported, as a sentence ("" when none). */
PAXOS_API const char *paxos_partitions_error(const struct paxos_partitions *g);

/** Where a merging group stands in the merged order (learner-merge). Store it with a snapshot
 * of what the application applied: a group started from that snapshot resumes the merged
 * order right after it (paxos_partitions_resume_merge()). Plain data: no pointers, and the
 * same on every group that merged as far. */
struct paxos_merge_position {
	uint32_t partitions; /**< paxos.conf partitions when it was taken */
	uint32_t segment;    /**< merge-segment when it was taken */
	uint32_t turn;       /**< the partition whose segment the merged order takes now */
	uint32_t in_segment; /**< instances of that segment delivered whole */
	uint32_t values;     /**< values of instance next[turn] delivered */
	/** Per partition: the first instance not delivered whole (1 for a log not begun). */
	paxos_iid next[PAXOS_MAX_PARTITIONS];
};

/** Fills @p pos with the merged order's position: everything delivered so far, the value
 * being delivered included when called from the deliver callback. Returns PAXOS_OK, or
 * PAXOS_E_INVALID when the group does not merge (learner-merge no). */
PAXOS_API int paxos_partitions_merge_position(const struct paxos_partitions *g,
					      struct paxos_merge_position *pos);

/** Makes the merged order go on from @p pos, a position a group with the same partitions and
 * merge-segment took (paxos_partitions_merge_position()) when the application snapshotted:
 * each partition's learner starts at @p pos->next[P] (paxos_node_set_learner_start()), and
 * values of the open instance delivered before are not delivered again. Call it before
 * paxos_partitions_add_learner(). Returns PAXOS_OK, or PAXOS_E_INVALID (not merging, a
 * learner added already, partitions or merge-segment differ, a field out of range), with
 * paxos_partitions_error(). */
PAXOS_API int paxos_partitions_resume_merge(struct paxos_partitions *g,
					    const struct paxos_merge_position *pos);

/** Bytes of delivered values waiting in the merge for their partition's turn (0 unmerged). */
PAXOS_API uint64_t paxos_partitions_merge_waiting(const struct paxos_partitions *g);

#endif
