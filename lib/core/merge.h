/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The deterministic merge of several partitions' logs (learner-merge, paxos/partitions.h;
 * Multi-Ring Paxos): free of I/O, fed with each partition's deliveries in that partition's
 * instance order, it hands them on in one order that depends on the logs alone. Each log is
 * cut into segments of `segment` instances, or fewer up to an instance holding a skip; round r
 * delivers segment r of partition 0, then of partition 1, ... What a partition delivers before
 * its turn waits, copied once into a buffer that grows by doubling (no allocation per value);
 * the partition whose turn it is goes straight through. The merge knows how far its output
 * went (merge_position), and a new merge can resume from there (merge_resume): a learner
 * restarted from a snapshot goes on with the merged order.
 */
#ifndef PAXOS_MERGE_H
#define PAXOS_MERGE_H

#include <paxos/types.h>

#include <stddef.h>

typedef void (*merge_deliver_fn)(void *arg, uint32_t partition, paxos_iid iid, uint32_t position,
				 const struct paxos_value *value);

/* One partition's deliveries that wait for its turn, as records in buf[head..tail). */
struct merge_queue {
	uint8_t *buf;
	size_t head, tail, cap;
	uint32_t segments;   /* segment ends queued */
	uint32_t in_segment; /* instances delivered into the partition's open segment */
};

/* How far the merged order went: what a merge handed on, enough to resume it. */
struct merge_position {
	uint32_t turn;       /* the partition whose segment the merged order takes now */
	uint32_t in_segment; /* instances of that segment handed on whole */
	uint32_t values;     /* values of its instance next[turn] handed on */
	/* Per partition: the first instance not handed on whole. */
	paxos_iid next[PAXOS_MAX_PARTITIONS];
};

struct merge {
	uint32_t partitions;
	uint32_t segment;
	uint32_t turn; /* the partition whose segment the merged order takes now */
	bool draining;
	merge_deliver_fn deliver;
	void *deliver_arg;
	uint64_t waiting; /* bytes queued over all partitions */
	struct merge_position out;
	/* merge_resume: values of resume_partition's instance resume_iid below resume_skip went
	 * out before the position it resumed from; they are dropped when fed again. */
	uint32_t resume_partition, resume_skip;
	paxos_iid resume_iid;
	struct merge_queue queues[PAXOS_MAX_PARTITIONS];
};

/* PAXOS_OK, or PAXOS_E_INVALID (partitions 0 or above PAXOS_MAX_PARTITIONS, segment 0). */
int merge_init(struct merge *m, uint32_t partitions, uint32_t segment, merge_deliver_fn deliver,
	       void *arg);
void merge_destroy(struct merge *m);

/* A value partition delivered (position in its instance iid). PAXOS_OK, PAXOS_E_INVALID (no
 * such partition) or PAXOS_E_NOMEM (it could not wait: the merged order is lost). */
int merge_value(struct merge *m, uint32_t partition, paxos_iid iid, uint32_t position,
		const struct paxos_value *v);

/* partition delivered instance iid whole (after its values); skip: it held a skip. May
 * deliver what waited. Same returns as merge_value. */
int merge_instance(struct merge *m, uint32_t partition, paxos_iid iid, bool skip);

/* Where the merged order stands, counting the value being handed on during a deliver call. */
void merge_position(const struct merge *m, struct merge_position *pos);

/* Makes a new merge (nothing fed yet) go on from pos, taken from a merge of the same partitions
 * and segment: feed each partition p from instance pos->next[p] on. PAXOS_OK, or
 * PAXOS_E_INVALID (fed already, turn or in_segment out of range, an instance 0). */
int merge_resume(struct merge *m, const struct merge_position *pos);

/* Bytes waiting for their turn. */
static inline uint64_t merge_waiting(const struct merge *m)
{
	return m->waiting;
}

#endif
