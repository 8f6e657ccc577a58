/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proposer's bounded pending list of client values. Thesis 3.5.1: "A more general solution is
 * to limit the maximum pending list size. Values that don't fit are simply ignored." Used as a
 * deque: clients add at the back, up to `limit` values; values the proposer must propose again go
 * back to the front (thesis 3.5: "push back v2 to the head of the pending list"). Room for
 * `capacity` >= limit values is preallocated so that giving back the values the instances hold
 * never fails (see setup.c).
 *
 * A value may also leave from the middle: when another proposer got it delivered (after a leader
 * change every proposer holds the clients' values, as thesis 4.7 suggests to shorten the switch),
 * keeping it would make the next leader propose it again. So values live in fixed buffers that
 * never move, an index hashed by content and submission id finds one in O(1), and the order is a
 * ring of buffer numbers in which a removed entry is marked and skipped; the ring is twice the
 * capacity and is compacted when full, which costs O(1) per removal amortized. Of several equal
 * values, the one nearest the front is removed.
 *
 * A steady leader removes only from the front: it needs neither the index nor the hashes,
 * which were a tenth of its CPU per 64 B value. So both are made on demand: a value's hash
 * when a caller has it or a removal from the middle wants the index, and the index at the
 * first such removal (over the values waiting then), dropped again once `capacity` values
 * went in without one (a follower, which removes every delivered value, keeps it).
 */
#ifndef PAXOS_PROPOSER_PENDING_H
#define PAXOS_PROPOSER_PENDING_H

#include <paxos/types.h>

struct pending {
	uint8_t *data;       /* capacity buffers of max_value bytes; a value never moves */
	uint32_t *len;       /* per buffer */
	uint64_t *hash;      /* per buffer: its key (pending_key), or PENDING_NO_HASH (not yet) */
	uint64_t *sid;       /* per buffer: its submission id; 0: none */
	uint32_t *where;     /* per buffer in use: its position in order */
	uint32_t *free_bufs; /* stack of unused buffers */
	uint32_t free_count;
	uint32_t *order;     /* ring of buffers, front to back; PENDING_GONE: removed */
	uint32_t order_cap;  /* 2 * capacity */
	uint32_t head;       /* position of the front entry */
	uint32_t used;       /* entries in order, removed ones included */
	uint32_t *index;     /* open addressing on hash: buffer + 1, 0 = empty */
	uint32_t index_mask; /* index size - 1; the size is a power of two >= 2 * capacity */
	bool indexed;        /* index holds every value waiting (else it is all empty) */
	uint32_t unsearched; /* values added since the index was last searched */
	uint32_t capacity;
	uint32_t limit;
	uint32_t max_value;
	uint32_t count; /* values waiting */
};

/* Bytes pending_init allocates for this capacity and value size. */
uint64_t pending_memory(uint32_t capacity, uint32_t max_value);

/* Returns PAXOS_OK, PAXOS_E_INVALID or PAXOS_E_NOMEM. */
int pending_init(struct pending *q, uint32_t limit, uint32_t capacity, uint32_t max_value);
void pending_destroy(struct pending *q);

static inline uint32_t pending_count(const struct pending *q)
{
	return q->count;
}

/* What pending_hash never returns: a hash not computed yet. */
#define PENDING_NO_HASH 0

/* A client value: PAXOS_OK, PAXOS_E_TOO_BIG, or PAXOS_E_FULL when `limit` values wait. */
int pending_push_back(struct pending *q, const uint8_t *data, uint32_t len);
/* The same with hash = pending_hash(data, len) already computed by the caller, or
 * PENDING_NO_HASH to leave it to when it is needed. */
int pending_push_back_hashed(struct pending *q, const uint8_t *data, uint32_t len, uint64_t hash);
/* A client value of submission id (0: none) with key = pending_key(data, len, id), or
 * PENDING_NO_HASH to leave it to when it is needed. */
int pending_push_back_id(struct pending *q, const uint8_t *data, uint32_t len, uint64_t id,
			 uint64_t key);

/* A value to propose again, ahead of the others: PAXOS_OK, PAXOS_E_TOO_BIG, or PAXOS_E_FULL
 * when `capacity` values wait. */
int pending_push_front(struct pending *q, const uint8_t *data, uint32_t len);
/* The same for a value of submission id (0: none). */
int pending_push_front_id(struct pending *q, const uint8_t *data, uint32_t len, uint64_t id);

/* Moves the front value into dst (max_value bytes). Returns false when empty. */
bool pending_pop_front(struct pending *q, uint8_t *dst, uint32_t *len);
/* The submission id of the front value (0: none, or nothing waits). */
uint64_t pending_front_id(const struct pending *q);
/* Drops every value waiting. */
void pending_clear(struct pending *q);

/* Removes the value equal to data/len that names no submission, nearest the front, wherever
 * it is. Returns whether there was one. */
bool pending_remove(struct pending *q, const uint8_t *data, uint32_t len);
/* The same with hash = pending_hash(data, len) already computed by the caller. */
bool pending_remove_hashed(struct pending *q, const uint8_t *data, uint32_t len, uint64_t hash);
/* Removes the value of submission id (0: one that names none) equal to data/len, with key =
 * pending_key(data, len, id). A value of another submission stays, whatever its bytes. */
bool pending_remove_id(struct pending *q, const uint8_t *data, uint32_t len, uint64_t id,
		       uint64_t key);

/* The content hash of a value (PAXOS_MSG_REFUSED names values by it); never
 * PENDING_NO_HASH. */
uint64_t pending_hash(const uint8_t *data, uint32_t len);
/* What the list indexes a value by, and settled.h keeps: its content hash mixed with its
 * submission id (the content hash alone for id 0); never PENDING_NO_HASH. */
uint64_t pending_key(const uint8_t *data, uint32_t len, uint64_t id);

/* The value at position i from the front (0 is the front), borrowed; i < count. O(1) unless
 * values were removed from the middle (then O(i); only tests use it). */
struct paxos_value pending_at(const struct pending *q, uint32_t i);

#endif
