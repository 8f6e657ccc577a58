/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The overlay of a backend with pipelined commits (see overlay.h): an append-only array of
 * entries with their values in one byte buffer, and an open-addressing index from iid to the
 * latest entry.
 */
#include "overlay.h"

#include <stdlib.h>
#include <string.h>

#define FIRST_ENTRIES 64u
#define FIRST_SLOTS 256u
#define FIRST_BYTES (64u << 10)
/* An index this much larger than what it last held is freed at clear rather than zeroed. */
#define SHRINK_FACTOR 16u

static size_t slot_for(const struct overlay *o, paxos_iid iid)
{
	size_t mask = o->slot_cap - 1;
	size_t s = (size_t)((iid * 0x9E3779B97F4A7C15ull) >> 32) & mask;
	while (o->slots[s] != 0 && o->entries[o->slots[s] - 1].iid != iid)
		s = (s + 1) & mask;
	return s;
}

static void index_entries(struct overlay *o)
{
	memset(o->slots, 0, o->slot_cap * sizeof(*o->slots));
	for (size_t i = 0; i < o->count; i++)
		o->slots[slot_for(o, o->entries[i].iid)] = (uint32_t)(i + 1);
}

/* Room for need entries in the index, kept at most half full. */
static int reserve_slots(struct overlay *o, size_t need)
{
	if (need * 2 <= o->slot_cap)
		return PAXOS_OK;
	size_t cap = o->slot_cap ? o->slot_cap : FIRST_SLOTS;
	while (need * 2 > cap)
		cap *= 2;
	if (cap > UINT32_MAX)
		return PAXOS_E_NOMEM;
	uint32_t *slots = realloc(o->slots, cap * sizeof(*slots));
	if (!slots)
		return PAXOS_E_NOMEM;
	o->slots = slots;
	o->slot_cap = cap;
	index_entries(o);
	return PAXOS_OK;
}

static int reserve_entry(struct overlay *o)
{
	if (o->count < o->cap)
		return PAXOS_OK;
	size_t cap = o->cap ? o->cap * 2 : FIRST_ENTRIES;
	struct overlay_entry *entries = realloc(o->entries, cap * sizeof(*entries));
	if (!entries)
		return PAXOS_E_NOMEM;
	o->entries = entries;
	o->cap = cap;
	return PAXOS_OK;
}

/* Appends len bytes from data, which may lie in o->bytes: a new buffer is filled before the
 * old one is freed. Returns the offset, or SIZE_MAX when out of memory. */
static size_t append_bytes(struct overlay *o, const void *data, size_t len)
{
	size_t off = o->used;
	if (len > o->bytes_cap - o->used) {
		size_t cap = o->bytes_cap ? o->bytes_cap : FIRST_BYTES;
		while (len > cap - o->used) {
			if (cap > SIZE_MAX / 2)
				return SIZE_MAX;
			cap *= 2;
		}
		uint8_t *bytes = malloc(cap);
		if (!bytes)
			return SIZE_MAX;
		if (o->used)
			memcpy(bytes, o->bytes, o->used);
		memcpy(bytes + off, data, len);
		free(o->bytes);
		o->bytes = bytes;
		o->bytes_cap = cap;
	} else if (len) {
		memcpy(o->bytes + off, data, len);
	}
	o->used += len;
	return off;
}

int overlay_put(struct overlay *o, const struct paxos_record *rec)
{
	if (reserve_entry(o) != PAXOS_OK || reserve_slots(o, o->count + 1) != PAXOS_OK)
		return PAXOS_E_NOMEM;
	size_t off = append_bytes(o, rec->value.data, rec->value.len);
	if (off == SIZE_MAX)
		return PAXOS_E_NOMEM;
	o->entries[o->count] = (struct overlay_entry){
	    .iid = rec->iid,
	    .promised = rec->promised,
	    .accepted = rec->accepted,
	    .final = rec->final,
	    .len = rec->value.len,
	    .off = off,
	};
	o->slots[slot_for(o, rec->iid)] = (uint32_t)(o->count + 1);
	o->count++;
	return PAXOS_OK;
}

void overlay_entry_record(const struct overlay *o, size_t i, struct paxos_record *rec)
{
	const struct overlay_entry *x = &o->entries[i];
	rec->iid = x->iid;
	rec->promised = x->promised;
	rec->accepted = x->accepted;
	rec->final = x->final;
	rec->value.data = x->len ? o->bytes + x->off : NULL;
	rec->value.len = x->len;
}

bool overlay_get(const struct overlay *o, paxos_iid iid, struct paxos_record *rec)
{
	if (o->count == 0)
		return false;
	uint32_t e = o->slots[slot_for(o, iid)];
	if (e == 0)
		return false;
	overlay_entry_record(o, e - 1, rec);
	return true;
}

void overlay_trim(struct overlay *o, paxos_iid iid, paxos_iid highest_accepted)
{
	o->trim = iid;
	o->trim_highest = highest_accepted;
}

struct overlay_mark overlay_mark(const struct overlay *o)
{
	return (struct overlay_mark){o->count, o->trim, o->trim_highest};
}

int overlay_split(struct overlay *o, struct overlay_mark mark, struct overlay *rest)
{
	for (size_t i = mark.count; rest && i < o->count; i++) {
		struct paxos_record rec;
		overlay_entry_record(o, i, &rec);
		if (overlay_put(rest, &rec) != PAXOS_OK) {
			overlay_clear(rest);
			return PAXOS_E_NOMEM;
		}
	}
	if (rest && o->trim != mark.trim)
		overlay_trim(rest, o->trim, o->trim_highest);
	if (mark.count < o->count) {
		const struct overlay_entry *last = mark.count ? &o->entries[mark.count - 1] : NULL;
		o->count = mark.count;
		o->used = last ? last->off + last->len : 0;
		index_entries(o);
	}
	o->trim = mark.trim;
	o->trim_highest = mark.trim_highest;
	return PAXOS_OK;
}

void overlay_clear(struct overlay *o)
{
	if (o->slot_cap > FIRST_SLOTS && o->slot_cap / SHRINK_FACTOR > o->count * 2) {
		free(o->slots); /* after a burst: regrown to the size needed now */
		o->slots = NULL;
		o->slot_cap = 0;
	} else if (o->count) {
		memset(o->slots, 0, o->slot_cap * sizeof(*o->slots));
	}
	o->count = 0;
	o->used = 0;
	o->trim = 0;
	o->trim_highest = 0;
}

void overlay_free(struct overlay *o)
{
	free(o->entries);
	free(o->slots);
	free(o->bytes);
	memset(o, 0, sizeof(*o));
}
