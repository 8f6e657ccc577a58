/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulated network's plumbing: a pool of deep-copied messages (values in sim-owned
 * memory, one copy shared by all deliveries of an emission) and the event queue, a binary
 * heap ordered by time and then by insertion, so equal times keep a deterministic order.
 */
#ifndef PAXOS_SIM_NETWORK_H
#define PAXOS_SIM_NETWORK_H

#include <paxos/message.h>

/* Largest instance value the simulated cores are configured for: a frame of client values
 * (lib/core/batch.h), room for several of the checker's values (up to 47 bytes, 51 framed). */
#define SIM_MAX_VALUE 256u

/* A message with its value bytes inline. */
struct sim_msg {
	struct paxos_message m;
	uint32_t refs;   /* deliveries still scheduled */
	uint32_t sender; /* opaque sender id, see sim.c */
	uint8_t value[SIM_MAX_VALUE];
};

/* Slots are reused through a free list; the pool grows by doubling and never shrinks. */
struct sim_pool {
	struct sim_msg *msgs;
	uint32_t *free;
	uint32_t free_count;
	uint32_t cap;
};

void pool_init(struct sim_pool *p);
void pool_destroy(struct sim_pool *p);
/* Deep-copies m. Returns the slot, or UINT32_MAX when out of memory or the value is larger
 * than SIM_MAX_VALUE. The slot starts with refs 0. */
uint32_t pool_put(struct sim_pool *p, const struct paxos_message *m, uint32_t sender);
/* Copies slot i into out (the value pointer then points into out) and drops one reference;
 * the pool may move while out is used, so deliveries always work on such a copy. */
void pool_take(struct sim_pool *p, uint32_t i, struct sim_msg *out);
void pool_release(struct sim_pool *p, uint32_t i);

/* Points the message's value (if its type carries one) at buf. */
void msg_rebind_value(struct sim_msg *s);

struct sim_event {
	paxos_time at;
	uint64_t seq;
	uint32_t kind;   /* enum sim_event_kind of sim.c */
	uint32_t target; /* whom the event is for */
	uint32_t arg;    /* a message slot, or an event-specific number */
};

struct sim_queue {
	struct sim_event *heap;
	size_t count;
	size_t cap;
	uint64_t seq;
};

void queue_init(struct sim_queue *q);
void queue_destroy(struct sim_queue *q);
/* Returns 0, or -1 when out of memory. */
int queue_push(struct sim_queue *q, paxos_time at, uint32_t kind, uint32_t target, uint32_t arg);
/* Removes the earliest event into e. Returns false when the queue is empty. */
bool queue_pop(struct sim_queue *q, struct sim_event *e);

#endif
