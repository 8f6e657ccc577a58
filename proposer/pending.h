/*
 * The proposer's bounded pending list of client values (thesis 3.5.1): a preallocated ring
 * used as a deque. Clients add at the back, up to `limit` values; values the proposer must
 * propose again go back to the front. The ring holds `capacity` >= limit values so that
 * giving back the values the instances hold never fails (see proposer.c).
 */
#ifndef PAXOS_PROPOSER_PENDING_H
#define PAXOS_PROPOSER_PENDING_H

#include <paxos/types.h>

struct pending {
	uint8_t *data; /* capacity slots of max_value bytes */
	uint32_t *len;
	uint32_t capacity;
	uint32_t limit;
	uint32_t max_value;
	uint32_t head; /* slot of the front value */
	uint32_t count;
};

/* Returns PAXOS_OK, PAXOS_E_INVALID or PAXOS_E_NOMEM. */
int pending_init(struct pending *q, uint32_t limit, uint32_t capacity, uint32_t max_value);
void pending_destroy(struct pending *q);

static inline uint32_t pending_count(const struct pending *q)
{
	return q->count;
}

/* A client value: PAXOS_OK, PAXOS_E_TOO_BIG, or PAXOS_E_FULL when `limit` values wait. */
int pending_push_back(struct pending *q, const uint8_t *data, uint32_t len);

/* A value to propose again, ahead of the others: PAXOS_OK, PAXOS_E_TOO_BIG, or PAXOS_E_FULL
 * when the whole ring is in use. */
int pending_push_front(struct pending *q, const uint8_t *data, uint32_t len);

/* Moves the front value into dst (max_value bytes). Returns false when empty. */
bool pending_pop_front(struct pending *q, uint8_t *dst, uint32_t *len);

/* The value at position i from the front (0 is the front), borrowed; i < count. */
struct paxos_value pending_at(const struct pending *q, uint32_t i);

#endif
