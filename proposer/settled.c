/* SPDX-License-Identifier: BSD-3-Clause */
#include "settled.h"

#include <stdlib.h>
#include <string.h>

#define SETTLED_MAX_SIZE (1u << 30)

/* 0 marks an empty ring slot, so hash 0 is stored as 1 (a collision that costs nothing). */
static uint64_t key_of(uint64_t hash)
{
	return hash ? hash : 1;
}

/* The hash index: a power of two >= 2 * size. */
static uint32_t index_size_for(uint32_t size)
{
	uint32_t index_size = 2;
	while (index_size < 2 * size)
		index_size *= 2;
	return index_size;
}

uint64_t settled_memory(uint32_t size)
{
	struct settled *s = NULL; /* for the sizes of the arrays' elements only */
	return (uint64_t)size * sizeof(*s->ring) +
	       (uint64_t)index_size_for(size) * sizeof(*s->index);
}

int settled_init(struct settled *s, uint32_t size)
{
	memset(s, 0, sizeof(*s));
	if (size == 0 || size > SETTLED_MAX_SIZE)
		return PAXOS_E_INVALID;
	uint32_t index_size = index_size_for(size);
	s->ring = calloc(size, sizeof(*s->ring));
	s->index = calloc(index_size, sizeof(*s->index));
	if (!s->ring || !s->index) {
		settled_destroy(s);
		return PAXOS_E_NOMEM;
	}
	s->size = size;
	s->index_mask = index_size - 1;
	return PAXOS_OK;
}

void settled_destroy(struct settled *s)
{
	free(s->ring);
	free(s->index);
	memset(s, 0, sizeof(*s));
}

static uint32_t home(const struct settled *s, uint64_t key)
{
	return (uint32_t)key & s->index_mask;
}

/* Empties ring slot `slot` and its index entry (linear probing, backward shift). */
static void forget(struct settled *s, uint32_t slot)
{
	uint32_t i = home(s, s->ring[slot]);
	while (s->index[i] != slot + 1)
		i = (i + 1) & s->index_mask;
	for (uint32_t j = (i + 1) & s->index_mask; s->index[j]; j = (j + 1) & s->index_mask) {
		uint32_t h = home(s, s->ring[s->index[j] - 1]);
		bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
		if (!stays) {
			s->index[i] = s->index[j];
			i = j;
		}
	}
	s->index[i] = 0;
	s->ring[slot] = 0;
	s->count--;
}

void settled_add(struct settled *s, uint64_t hash)
{
	uint32_t slot = s->next;
	s->next = (s->next + 1) % s->size;
	if (s->ring[slot])
		forget(s, slot); /* the oldest credit goes */
	uint64_t key = key_of(hash);
	s->ring[slot] = key;
	uint32_t i = home(s, key);
	while (s->index[i])
		i = (i + 1) & s->index_mask;
	s->index[i] = slot + 1;
	s->count++;
}

/* Ring slots from the oldest credit on: the next one to be overwritten comes first. */
static uint32_t age_rank(const struct settled *s, uint32_t slot)
{
	return (slot + s->size - s->next) % s->size;
}

bool settled_take(struct settled *s, uint64_t hash)
{
	/* The leader's usual case: its own values are settled by their instances, never here,
	 * and a probe of the index is a cache miss per client value on a busy machine. */
	if (s->count == 0)
		return false;
	uint64_t key = key_of(hash);
	uint32_t found = UINT32_MAX;
	for (uint32_t i = home(s, key); s->index[i]; i = (i + 1) & s->index_mask) {
		uint32_t slot = s->index[i] - 1;
		if (s->ring[slot] == key &&
		    (found == UINT32_MAX || age_rank(s, slot) < age_rank(s, found)))
			found = slot;
	}
	if (found == UINT32_MAX)
		return false;
	forget(s, found); /* the oldest of equal credits, so the others live longest */
	return true;
}
