/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Values a proposer saw delivered before it received them from the client. Every proposer
 * queues every client value and drops it from its pending list once it is delivered; but a
 * client's datagram may reach a follower after the leader's value was already delivered
 * there, and queueing it then would make the follower, once leader, propose it again. So a
 * delivery that finds no copy in the list leaves a credit here, and the next copy of that
 * submission that arrives takes the credit instead of being queued. A credit is a value's
 * key (pending_key: its bytes and its submission id), so another submission of the same
 * bytes (two clients' "INCR x") is queued and proposed: only values that name their
 * submission leave credits. The most recent `size` are kept; older ones are forgotten (their
 * value was lost on the way to us, or comes so late that a duplicate is the lesser evil).
 */
#ifndef PAXOS_PROPOSER_SETTLED_H
#define PAXOS_PROPOSER_SETTLED_H

#include <paxos/types.h>

struct settled {
	uint64_t *ring;      /* credits, oldest overwritten first; 0 = none */
	uint32_t size;       /* ring slots */
	uint32_t next;       /* slot the next credit goes to */
	uint32_t *index;     /* open addressing on the hash: ring slot + 1, 0 = empty */
	uint32_t index_mask; /* index size - 1; a power of two >= 2 * size */
	uint32_t count;      /* credits held: none, and a lookup touches no memory */
};

/* Bytes settled_init allocates for this size. */
uint64_t settled_memory(uint32_t size);

/* Returns PAXOS_OK, PAXOS_E_INVALID or PAXOS_E_NOMEM. */
int settled_init(struct settled *s, uint32_t size);
void settled_destroy(struct settled *s);

/* A value with this key was delivered without having been queued. */
void settled_add(struct settled *s, uint64_t key);

/* Takes one credit for this key; false if there is none. */
bool settled_take(struct settled *s, uint64_t key);

#endif
