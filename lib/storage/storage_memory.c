/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Volatile acceptor storage. Thesis 3.7.6: "The storage can be made volatile and thus much
 * faster.", provided "a majority of acceptors does not crash simultaneously" (or an up-to-date
 * learning acceptor survives); acceptor/recovery.c lets one that restarts empty vote again.
 * Records live in a ring of slots, instance iid at iid mod capacity, spanning trim + 1 onwards,
 * so get and put are O(1) and trimming costs only the instances dropped (an acceptor with a
 * retention bound trims at every tick). Values live in big chunks filled front to back (see
 * value_alloc), so a new instance costs no malloc.
 */
#include <paxos/storage_backends.h>
#include <paxos/storage.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "storage_head.h"

/*
 * Most instances the ring spans past the trim point. A put further out is refused with
 * PAXOS_E_FULL instead of allocating for it: one bogus iid must not cost gigabytes
 * (16 Mi slots of 32 bytes are 512 MiB of mostly untouched, lazily zeroed pages).
 */
#define MEMORY_MAX_SPAN (1ull << 24)
#define MEMORY_MIN_SLOTS 64u /* a power of two, as every capacity */
/* Value chunks: aligned to their size, so a value's chunk is found from its address. */
#define CHUNK_SIZE (2u << 20)
#define VALUE_ALIGN 16u
#define MEMORY_MAX_VALUE (CHUNK_SIZE / 4)
/* Emptied chunks kept for reuse: a store trimming at its retention bound writes into memory
 * already paged in instead of faulting in fresh (zeroed) pages for every value. */
#define SPARE_CHUNKS 4u
/* A fresh chunk's pages are mapped this many bytes at a time, ahead of the values written
 * into them: one madvise for 16 pages instead of a page fault each (see value_alloc). */
#define POPULATE_STEP (64u << 10)

/* A retention bound leaves room in the span for what arrives between two trims. */
_Static_assert(PAXOS_MEMORY_MAX_RETENTION <= MEMORY_MAX_SPAN / 2, "retention past the span");

enum { SLOT_STORED = 1, SLOT_FINAL = 2 };

/* One instance; the iid is implicit in the position. Kept at 32 bytes (two 64-bit ballots)
 * so that a sparse array of a million slots stays around 32 MiB. */
struct slot {
	uint8_t *data; /* NULL, or cap_units * VALUE_ALIGN bytes in a chunk, reused across puts */
	paxos_ballot promised;
	paxos_ballot accepted;
	uint32_t len;
	uint8_t flags;
	uint16_t cap_units;
};
_Static_assert(MEMORY_MAX_VALUE / VALUE_ALIGN <= UINT16_MAX, "cap_units too small");
_Static_assert(sizeof(void *) != 8 || sizeof(struct slot) == 32, "slot grew");

struct memory_storage {
	struct storage_head h; /* first, so the storage pointer is the container */
	struct slot *slots;    /* instance iid is slots[iid & (cap - 1)] */
	size_t cap;            /* slots allocated, a power of two */
	size_t used;           /* instances past trim + used are all empty; used <= cap */
	struct chunk *current; /* values are cut from here */
	size_t current_used;   /* bytes of current in use, header included */
	size_t current_mapped; /* bytes of current known to be paged in */
	bool populate_failed;  /* the kernel refused MADV_POPULATE_WRITE: faults do */
	struct chunk *spare[SPARE_CHUNKS]; /* emptied chunks, reused before new ones */
	size_t spare_count;
};

/* A chunk's header: how many values point into it, plus one while it is current. */
struct chunk {
	uint32_t live;
	uint8_t pad[VALUE_ALIGN - sizeof(uint32_t)];
};

static struct memory_storage *of(struct paxos_storage *st)
{
	return (struct memory_storage *)st;
}

static struct slot *slot_of(struct memory_storage *m, paxos_iid iid)
{
	return &m->slots[iid & (m->cap - 1)];
}

/* Records why a call failed (paxos_storage_error) and returns rc. */
static int failed(struct memory_storage *m, int rc, paxos_iid iid, size_t len)
{
	snprintf(m->h.error, sizeof(m->h.error), "memory storage: instance %llu (%zu bytes): %s",
		 (unsigned long long)iid, len,
		 rc == PAXOS_E_TOO_BIG ? "value larger than a chunk holds" : "out of memory");
	return rc;
}

static int memory_begin(struct paxos_storage *st)
{
	(void)st;
	return PAXOS_OK;
}

static int memory_commit(struct paxos_storage *st)
{
	(void)st;
	return PAXOS_OK;
}

static int memory_get(struct paxos_storage *st, paxos_iid iid, struct paxos_record *rec)
{
	struct memory_storage *m = of(st);
	if (iid == 0 || !rec)
		return PAXOS_E_INVALID;
	if (iid <= m->h.trim || iid - m->h.trim - 1 >= m->used)
		return 0;
	const struct slot *s = slot_of(m, iid);
	if (!(s->flags & SLOT_STORED))
		return 0;
	rec->iid = iid;
	rec->promised = s->promised;
	rec->accepted = s->accepted;
	rec->value.data = s->data;
	rec->value.len = s->len;
	rec->final = (s->flags & SLOT_FINAL) != 0;
	return 1;
}

/* Makes room for instance trim + 1 + i. Growing copies the stored slots into fresh zeroed
 * memory, each to its place under the new capacity; untouched parts of a big sparse ring are
 * never paged in. */
static int reserve(struct memory_storage *m, size_t i)
{
	if (i < m->cap)
		return PAXOS_OK;
	size_t cap = m->cap ? m->cap : MEMORY_MIN_SLOTS;
	while (cap <= i)
		cap *= 2;
	struct slot *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return PAXOS_E_NOMEM;
	for (size_t k = 0; k < m->used; k++) {
		paxos_iid iid = m->h.trim + 1 + k;
		const struct slot *s = slot_of(m, iid);
		if (s->flags || s->data)
			slots[iid & (cap - 1)] = *s;
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return PAXOS_OK;
}

static struct chunk *chunk_of(const uint8_t *value)
{
	return (struct chunk *)((uintptr_t)value & ~(uintptr_t)(CHUNK_SIZE - 1));
}

static void chunk_release(struct memory_storage *m, struct chunk *c)
{
	if (--c->live > 0)
		return;
	if (m->spare_count < SPARE_CHUNKS)
		m->spare[m->spare_count++] = c;
	else
		free(c);
}

/*
 * Pages in the current chunk up to at least its first end bytes, POPULATE_STEP at a time.
 * Every value of a growing store lands in memory never touched before, and a page fault per
 * 4 kB page (taken inside the memcpy) cost more than everything else the acceptor does for a
 * 1000 B value (docs/BENCHMARKS.md, "CPU per value of the acceptor"); one madvise maps 16
 * pages in one go. Best effort: where the kernel lacks it (before Linux 5.14), faults do.
 */
static void populate(struct memory_storage *m, size_t end)
{
#ifdef MADV_POPULATE_WRITE
	if (end <= m->current_mapped || m->populate_failed)
		return;
	/* Whole steps: madvise wants a page-aligned start, and the next call starts here. */
	size_t from = m->current_mapped;
	size_t to = (end + POPULATE_STEP - 1) / POPULATE_STEP * POPULATE_STEP;
	if (to > CHUNK_SIZE)
		to = CHUNK_SIZE;
	if (madvise((uint8_t *)m->current + from, to - from, MADV_POPULATE_WRITE) != 0)
		m->populate_failed = true;
	m->current_mapped = to;
#else
	(void)m;
	(void)end;
#endif
}

/*
 * Room for len bytes, cut from the current chunk; a new chunk when it is full. A chunk is
 * emptied once no value points into it (trim, overwrite): instances are trimmed in order, so
 * chunks empty in order too, and a few empty ones wait for reuse. No huge pages: where the
 * kernel zeroes a 2 MiB page at its first touch, that fault held the acceptor for
 * milliseconds every 2 MiB of values (measured in docs/BENCHMARKS.md), while mapping 64 kB
 * at a time spreads the same work evenly.
 */
static uint8_t *value_alloc(struct memory_storage *m, size_t need)
{
	if (!m->current || CHUNK_SIZE - m->current_used < need) {
		bool spare = m->spare_count > 0;
		struct chunk *c =
		    spare ? m->spare[--m->spare_count] : aligned_alloc(CHUNK_SIZE, CHUNK_SIZE);
		if (!c)
			return NULL;
		c->live = 1;
		if (m->current)
			chunk_release(m, m->current);
		m->current = c;
		m->current_used = sizeof(*c);
		/* A spare chunk was written all over before. */
		m->current_mapped = spare ? CHUNK_SIZE : 0;
	}
	populate(m, m->current_used + need);
	uint8_t *p = (uint8_t *)m->current + m->current_used;
	m->current_used += need;
	m->current->live++;
	return p;
}

static void value_free(struct memory_storage *m, uint8_t *value)
{
	if (value)
		chunk_release(m, chunk_of(value));
}

/* Copies the value into the slot's space, taking new space only for a longer value. The
 * source may be the slot's own space (a record read with get and put back), hence memmove
 * and releasing the old space only after the copy. */
static int store_value(struct memory_storage *m, struct slot *s, struct paxos_value v)
{
	if (v.len > MEMORY_MAX_VALUE)
		return PAXOS_E_TOO_BIG;
	if (v.len > 0 && (!s->data || v.len > (size_t)s->cap_units * VALUE_ALIGN)) {
		size_t need = (v.len + VALUE_ALIGN - 1) / VALUE_ALIGN * VALUE_ALIGN;
		uint8_t *data = value_alloc(m, need);
		if (!data)
			return PAXOS_E_NOMEM;
		memcpy(data, v.data, v.len);
		value_free(m, s->data);
		s->data = data;
		s->cap_units = (uint16_t)(need / VALUE_ALIGN);
	} else if (v.len > 0 && v.data != s->data) {
		memmove(s->data, v.data, v.len);
	}
	s->len = v.len;
	return PAXOS_OK;
}

static int memory_put(struct paxos_storage *st, const struct paxos_record *rec)
{
	struct memory_storage *m = of(st);
	if (!rec || rec->iid == 0 || (rec->value.len > 0 && !rec->value.data))
		return PAXOS_E_INVALID;
	if (rec->iid <= m->h.trim)
		return PAXOS_E_INVALID; /* dropped for good */
	if (rec->iid - m->h.trim > MEMORY_MAX_SPAN)
		return PAXOS_E_FULL;
	size_t i = (size_t)(rec->iid - m->h.trim - 1);
	int rc = reserve(m, i);
	if (rc != PAXOS_OK)
		return failed(m, rc, rec->iid, rec->value.len);
	struct slot *s = slot_of(m, rec->iid);
	rc = store_value(m, s, rec->value);
	if (rc != PAXOS_OK)
		return failed(m, rc, rec->iid, rec->value.len);
	s->promised = rec->promised;
	s->accepted = rec->accepted;
	s->flags = SLOT_STORED | (rec->final ? SLOT_FINAL : 0);
	if (i >= m->used)
		m->used = i + 1;
	if (rec->accepted != 0 && rec->iid > m->h.highest_accepted)
		m->h.highest_accepted = rec->iid;
	return PAXOS_OK;
}

/* Costs the instances dropped, not the ones kept. Empty slots are only read, so the untouched
 * pages of a sparse ring stay unmapped. */
static int memory_trim(struct paxos_storage *st, paxos_iid iid)
{
	struct memory_storage *m = of(st);
	if (iid <= m->h.trim)
		return PAXOS_OK;
	paxos_iid shift = iid - m->h.trim;
	size_t dropped = shift < m->used ? (size_t)shift : m->used;
	for (size_t k = 0; k < dropped; k++) {
		struct slot *s = slot_of(m, m->h.trim + 1 + k);
		if (s->flags || s->data) {
			value_free(m, s->data);
			memset(s, 0, sizeof(*s));
		}
	}
	m->used -= dropped;
	m->h.trim = iid;
	return PAXOS_OK;
}

static void memory_destroy(struct paxos_storage *st)
{
	struct memory_storage *m = of(st);
	for (size_t k = 0; k < m->used; k++)
		value_free(m, slot_of(m, m->h.trim + 1 + k)->data);
	if (m->current)
		chunk_release(m, m->current);
	while (m->spare_count > 0)
		free(m->spare[--m->spare_count]);
	free(m->slots);
	free(m);
}

static const struct paxos_storage_ops memory_ops = {
    .name = "memory",
    .begin = memory_begin,
    .commit = memory_commit,
    .get = memory_get,
    .put = memory_put,
    .trim = memory_trim,
    .trim_iid = storage_head_trim_iid,
    .highest_accepted = storage_head_highest_accepted,
    .destroy = memory_destroy,
    .error = storage_head_error,
};

struct paxos_storage *paxos_storage_memory_new(void)
{
	struct memory_storage *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->h.base.ops = &memory_ops;
	if (reserve(m, MEMORY_MIN_SLOTS - 1) != PAXOS_OK) {
		free(m);
		return NULL;
	}
	return &m->h.base;
}
