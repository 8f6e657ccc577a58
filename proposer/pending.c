#include "pending.h"

#include <stdlib.h>
#include <string.h>

int pending_init(struct pending *q, uint32_t limit, uint32_t capacity, uint32_t max_value)
{
	memset(q, 0, sizeof(*q));
	if (limit == 0 || capacity < limit || max_value == 0)
		return PAXOS_E_INVALID;
	q->data = malloc((size_t)capacity * max_value);
	q->len = calloc(capacity, sizeof(*q->len));
	if (!q->data || !q->len) {
		pending_destroy(q);
		return PAXOS_E_NOMEM;
	}
	q->capacity = capacity;
	q->limit = limit;
	q->max_value = max_value;
	return PAXOS_OK;
}

void pending_destroy(struct pending *q)
{
	free(q->data);
	free(q->len);
	memset(q, 0, sizeof(*q));
}

static uint32_t slot_at(const struct pending *q, uint32_t i)
{
	return (uint32_t)(((uint64_t)q->head + i) % q->capacity);
}

static void store(struct pending *q, uint32_t slot, const uint8_t *data, uint32_t len)
{
	if (len)
		memcpy(q->data + (size_t)slot * q->max_value, data, len);
	q->len[slot] = len;
}

int pending_push_back(struct pending *q, const uint8_t *data, uint32_t len)
{
	if (len > q->max_value)
		return PAXOS_E_TOO_BIG;
	if (q->count >= q->limit)
		return PAXOS_E_FULL;
	store(q, slot_at(q, q->count), data, len);
	q->count++;
	return PAXOS_OK;
}

int pending_push_front(struct pending *q, const uint8_t *data, uint32_t len)
{
	if (len > q->max_value)
		return PAXOS_E_TOO_BIG;
	if (q->count >= q->capacity)
		return PAXOS_E_FULL;
	q->head = q->head == 0 ? q->capacity - 1 : q->head - 1;
	store(q, q->head, data, len);
	q->count++;
	return PAXOS_OK;
}

bool pending_pop_front(struct pending *q, uint8_t *dst, uint32_t *len)
{
	if (q->count == 0)
		return false;
	*len = q->len[q->head];
	if (*len)
		memcpy(dst, q->data + (size_t)q->head * q->max_value, *len);
	q->head = (q->head + 1) % q->capacity;
	q->count--;
	return true;
}

struct paxos_value pending_at(const struct pending *q, uint32_t i)
{
	uint32_t slot = slot_at(q, i);
	struct paxos_value v = {q->data + (size_t)slot * q->max_value, q->len[slot]};
	return v;
}
