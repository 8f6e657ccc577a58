/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The deterministic merge of several partitions' logs (learner-merge, paxos/partitions.h;
 * Multi-Ring Paxos): free of I/O, fed with each partition's deliveries in that partition's
 * instance order, it hands them on in one order that depends on the logs alone. Each log is
 * cut into segments of `segment` instances, or fewer up to an instance holding a skip; round r
 * delivers segment r of partition 0, then of partition 1, ... What a partition delivers before
 * its turn waits, copied once into a buffer that grows by doubling (no allocation per value);
 * the partition whose turn it is goes straight through.
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

struct merge {
	uint32_t partitions;
	uint32_t segment;
	uint32_t turn; /* the partition whose segment the merged order takes now */
	bool draining;
	merge_deliver_fn deliver;
	void *deliver_arg;
	uint64_t waiting; /* bytes queued over all partitions */
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

/* Bytes waiting for their turn. */
static inline uint64_t merge_waiting(const struct merge *m)
{
	return m->waiting;
}

#endif
