/* SPDX-License-Identifier: BSD-3-Clause */
#include "pending.h"

#include <paxos/proposer.h>

#include <stdlib.h>
#include <string.h>

/* An order entry whose value was removed from the middle. */
#define PENDING_GONE UINT32_MAX

/* Largest capacity: the index needs a power of two >= 2 * capacity in 32 bits. */
#define PENDING_MAX_CAPACITY (1u << 30)

static uint64_t mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

/* Values are up to max-datagram bytes and every one is hashed on the leader's path: four
 * independent lanes of a word each let the multiplies overlap (a single chain took 6 % of
 * the cluster's CPU at 1 kB values). */
uint64_t pending_hash(const uint8_t *data, uint32_t len)
{
	uint64_t lane[4] = {0x9e3779b97f4a7c15ull ^ len, 0x6a09e667f3bcc909ull,
			    0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull};
	uint32_t i = 0;
	for (; i + 32 <= len; i += 32)
		for (int k = 0; k < 4; k++) {
			uint64_t w;
			memcpy(&w, data + i + 8 * k, 8);
			lane[k] = mix(lane[k], w);
		}
	uint64_t h = lane[0];
	for (int k = 1; k < 4; k++)
		h = mix(h, lane[k]);
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, data + i, 8);
		h = mix(h, w);
	}
	uint64_t tail = 0;
	if (len > i)
		memcpy(&tail, data + i, len - i);
	h = (h ^ tail) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	return h == PENDING_NO_HASH ? 1 : h;
}

uint64_t pending_key(const uint8_t *data, uint32_t len, uint64_t id)
{
	uint64_t h = pending_hash(data, len);
	if (id == 0)
		return h;
	h = mix(h, id) * 0x9e3779b97f4a7c15ull;
	return h == PENDING_NO_HASH ? 1 : h;
}

/* The hash index: a power of two >= 2 * capacity. */
static uint32_t index_size_for(uint32_t capacity)
{
	uint32_t index_size = 2;
	while (index_size < 2 * capacity)
		index_size *= 2;
	return index_size;
}

uint64_t pending_memory(uint32_t capacity, uint32_t max_value)
{
	struct pending *q = NULL; /* for the sizes of the arrays' elements only */
	uint64_t per_value = (uint64_t)max_value + sizeof(*q->len) + sizeof(*q->hash) +
			     sizeof(*q->sid) + sizeof(*q->where) + sizeof(*q->free_bufs) +
			     2 * sizeof(*q->order);
	return capacity * per_value + (uint64_t)index_size_for(capacity) * sizeof(*q->index);
}

int pending_init(struct pending *q, uint32_t limit, uint32_t capacity, uint32_t max_value)
{
	memset(q, 0, sizeof(*q));
	if (limit == 0 || capacity < limit || capacity > PENDING_MAX_CAPACITY || max_value == 0)
		return PAXOS_E_INVALID;
	uint32_t index_size = index_size_for(capacity);
	q->data = malloc((size_t)capacity * max_value);
	q->len = calloc(capacity, sizeof(*q->len));
	q->hash = calloc(capacity, sizeof(*q->hash));
	q->sid = calloc(capacity, sizeof(*q->sid));
	q->where = calloc(capacity, sizeof(*q->where));
	q->free_bufs = malloc((size_t)capacity * sizeof(*q->free_bufs));
	q->order = malloc((size_t)2 * capacity * sizeof(*q->order));
	q->index = calloc(index_size, sizeof(*q->index));
	if (!q->data || !q->len || !q->hash || !q->sid || !q->where || !q->free_bufs || !q->order ||
	    !q->index) {
		pending_destroy(q);
		return PAXOS_E_NOMEM;
	}
	for (uint32_t b = 0; b < capacity; b++)
		q->free_bufs[b] = capacity - 1 - b; /* buffer 0 is used first */
	q->free_count = capacity;
	q->order_cap = 2 * capacity;
	q->index_mask = index_size - 1;
	q->capacity = capacity;
	q->limit = limit;
	q->max_value = max_value;
	return PAXOS_OK;
}

void pending_destroy(struct pending *q)
{
	free(q->data);
	free(q->len);
	free(q->hash);
	free(q->sid);
	free(q->where);
	free(q->free_bufs);
	free(q->order);
	free(q->index);
	memset(q, 0, sizeof(*q));
}

static uint8_t *buffer(const struct pending *q, uint32_t b)
{
	return q->data + (size_t)b * q->max_value;
}

/* ---- the content index (linear probing, deletion by backward shift) ---- */

static void index_insert(struct pending *q, uint32_t b)
{
	if (q->hash[b] == PENDING_NO_HASH)
		q->hash[b] = pending_key(buffer(q, b), q->len[b], q->sid[b]);
	uint32_t i = (uint32_t)q->hash[b] & q->index_mask;
	while (q->index[i])
		i = (i + 1) & q->index_mask;
	q->index[i] = b + 1;
}

static void index_erase(struct pending *q, uint32_t b)
{
	uint32_t i = (uint32_t)q->hash[b] & q->index_mask;
	while (q->index[i] != b + 1)
		i = (i + 1) & q->index_mask;
	/* Pull back later entries of the probe run that may not stay behind the hole. */
	for (uint32_t j = (i + 1) & q->index_mask; q->index[j]; j = (j + 1) & q->index_mask) {
		uint32_t home = (uint32_t)q->hash[q->index[j] - 1] & q->index_mask;
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!stays) {
			q->index[i] = q->index[j];
			i = j;
		}
	}
	q->index[i] = 0;
}

/* Distance of buffer b from the front of the order. */
static uint32_t offset_of(const struct pending *q, uint32_t b)
{
	return (q->where[b] + q->order_cap - q->head) % q->order_cap;
}

/* The copy of the value of submission id nearest the front (copies are equal, but order is
 * not), or PENDING_GONE. */
static uint32_t index_find(const struct pending *q, const uint8_t *data, uint32_t len, uint64_t id,
			   uint64_t h)
{
	uint32_t found = PENDING_GONE;
	for (uint32_t i = (uint32_t)h & q->index_mask; q->index[i]; i = (i + 1) & q->index_mask) {
		uint32_t b = q->index[i] - 1;
		if (q->hash[b] == h && q->sid[b] == id && q->len[b] == len &&
		    (len == 0 || memcmp(buffer(q, b), data, len) == 0) &&
		    (found == PENDING_GONE || offset_of(q, b) < offset_of(q, found)))
			found = b;
	}
	return found;
}

/* ---- buffers ---- */

static uint32_t take_buffer(struct pending *q, const uint8_t *data, uint32_t len, uint64_t id,
			    uint64_t hash)
{
	uint32_t b = q->free_bufs[--q->free_count];
	if (len)
		memcpy(buffer(q, b), data, len);
	q->len[b] = len;
	q->sid[b] = id;
	q->hash[b] = hash;
	if (q->indexed) {
		index_insert(q, b);
		/* Unsearched for as many values as the list holds: a steady leader's. */
		if (++q->unsearched > q->capacity) {
			memset(q->index, 0, ((size_t)q->index_mask + 1) * sizeof(*q->index));
			q->indexed = false;
		}
	}
	return b;
}

static void release_buffer(struct pending *q, uint32_t b)
{
	if (q->indexed)
		index_erase(q, b);
	q->free_bufs[q->free_count++] = b;
}

/* ---- the order ring ---- */

static uint32_t position(const struct pending *q, uint32_t i)
{
	return (uint32_t)(((uint64_t)q->head + i) % q->order_cap);
}

static void place(struct pending *q, uint32_t pos, uint32_t b)
{
	q->order[pos] = b;
	q->where[b] = pos;
}

/* Drops removed entries from both ends, so the front entry is always a value. */
static void trim(struct pending *q)
{
	while (q->used && q->order[q->head] == PENDING_GONE) {
		q->head = (q->head + 1) % q->order_cap;
		q->used--;
	}
	while (q->used && q->order[position(q, q->used - 1)] == PENDING_GONE)
		q->used--;
}

/* Squeezes removed entries out, in place and in order. With count <= capacity and a ring of
 * 2 * capacity, this frees at least capacity entries, so it runs at most once per capacity
 * insertions. */
static void compact(struct pending *q)
{
	uint32_t kept = 0;
	for (uint32_t r = 0; r < q->used; r++) {
		uint32_t b = q->order[position(q, r)];
		if (b != PENDING_GONE)
			place(q, position(q, kept++), b);
	}
	q->used = kept;
}

static void make_room(struct pending *q)
{
	if (q->used == q->order_cap)
		compact(q);
}

int pending_push_back(struct pending *q, const uint8_t *data, uint32_t len)
{
	return len > q->max_value ? PAXOS_E_TOO_BIG
				  : pending_push_back_hashed(q, data, len, pending_hash(data, len));
}

int pending_push_back_hashed(struct pending *q, const uint8_t *data, uint32_t len, uint64_t hash)
{
	return pending_push_back_id(q, data, len, 0, hash);
}

int pending_push_back_id(struct pending *q, const uint8_t *data, uint32_t len, uint64_t id,
			 uint64_t key)
{
	if (len > q->max_value)
		return PAXOS_E_TOO_BIG;
	if (q->count >= q->limit)
		return PAXOS_E_FULL;
	make_room(q);
	place(q, position(q, q->used), take_buffer(q, data, len, id, key));
	q->used++;
	q->count++;
	return PAXOS_OK;
}

int pending_push_front(struct pending *q, const uint8_t *data, uint32_t len)
{
	return pending_push_front_id(q, data, len, 0);
}

int pending_push_front_id(struct pending *q, const uint8_t *data, uint32_t len, uint64_t id)
{
	if (len > q->max_value)
		return PAXOS_E_TOO_BIG;
	if (q->count >= q->capacity)
		return PAXOS_E_FULL;
	make_room(q);
	q->head = q->head == 0 ? q->order_cap - 1 : q->head - 1;
	place(q, q->head, take_buffer(q, data, len, id, PENDING_NO_HASH));
	q->used++;
	q->count++;
	return PAXOS_OK;
}

uint64_t pending_front_id(const struct pending *q)
{
	return q->count ? q->sid[q->order[q->head]] : 0; /* trim() keeps the front a value */
}

bool pending_pop_front(struct pending *q, uint8_t *dst, uint32_t *len)
{
	if (q->count == 0)
		return false;
	uint32_t b = q->order[q->head]; /* trim() keeps the front a value */
	*len = q->len[b];
	if (*len)
		memcpy(dst, buffer(q, b), *len);
	q->head = (q->head + 1) % q->order_cap;
	q->used--;
	q->count--;
	release_buffer(q, b);
	trim(q);
	return true;
}

void pending_clear(struct pending *q)
{
	while (q->count) {
		uint32_t b = q->order[q->head]; /* trim() keeps the front a value */
		q->head = (q->head + 1) % q->order_cap;
		q->used--;
		q->count--;
		release_buffer(q, b);
		trim(q);
	}
}

bool pending_remove(struct pending *q, const uint8_t *data, uint32_t len)
{
	return len <= q->max_value && (len == 0 || data) &&
	       pending_remove_hashed(q, data, len, pending_hash(data, len));
}

/* The index over every value waiting, made now if it was not kept. */
static void ensure_index(struct pending *q)
{
	q->unsearched = 0;
	if (q->indexed)
		return;
	for (uint32_t r = 0; r < q->used; r++) {
		uint32_t b = q->order[position(q, r)];
		if (b != PENDING_GONE)
			index_insert(q, b);
	}
	q->indexed = true;
}

bool pending_remove_hashed(struct pending *q, const uint8_t *data, uint32_t len, uint64_t hash)
{
	return pending_remove_id(q, data, len, 0, hash);
}

bool pending_remove_id(struct pending *q, const uint8_t *data, uint32_t len, uint64_t id,
		       uint64_t key)
{
	if (q->count == 0 || len > q->max_value || (len && !data))
		return false;
	ensure_index(q);
	uint32_t b = index_find(q, data, len, id, key);
	if (b == PENDING_GONE)
		return false;
	q->order[q->where[b]] = PENDING_GONE;
	q->count--;
	release_buffer(q, b);
	trim(q);
	return true;
}

struct paxos_value pending_at(const struct pending *q, uint32_t i)
{
	uint32_t b = PENDING_GONE;
	if (q->used == q->count) {
		b = q->order[position(q, i)];
	} else {
		for (uint32_t r = 0, seen = 0; r < q->used; r++) {
			uint32_t e = q->order[position(q, r)];
			if (e != PENDING_GONE && seen++ == i) {
				b = e;
				break;
			}
		}
	}
	struct paxos_value v = {NULL, 0};
	if (b != PENDING_GONE && i < q->count) {
		v.data = buffer(q, b);
		v.len = q->len[b];
	}
	return v;
}

uint64_t paxos_value_hash(const void *data, size_t len)
{
	/* A client value is far below 4 GB (max-datagram); longer input hashes its first 4 GB. */
	return pending_hash(data, len > UINT32_MAX ? UINT32_MAX : (uint32_t)len);
}
