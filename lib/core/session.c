/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Session headers and the learners' dedupe table (paxos/session.h). The table is a fixed
 * array of clients, a linear-probing index from client id to entry, and a list in the order
 * the clients last applied a value: the head is evicted when a new client needs room. Nothing
 * is allocated after the table is made.
 */
#include <paxos/session_table.h>

#include <stdlib.h>
#include <string.h>

/* ---- header ---- */

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* 0 and *v, or -1 for a truncated varint or one longer than 64 bits or not minimal. */
static int get_varint(const uint8_t *p, size_t len, size_t *off, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0, i = 0; *off < len && i < 10; shift += 7, i++) {
		uint8_t b = p[(*off)++];
		if (i == 9 && b > 1)
			return -1; /* beyond 64 bits */
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (i > 0 && b == 0)
				return -1; /* not minimal: one value, one encoding */
			*v = x;
			return 0;
		}
	}
	return -1;
}

size_t paxos_session_header_encode(const struct paxos_session_header *h, uint8_t *buf, size_t cap)
{
	if (!h || !buf || h->client == 0 || h->seq == 0 || h->base == 0 || h->base > h->seq ||
	    (h->flags & ~PAXOS_SESSION_NOOP))
		return 0;
	uint8_t tmp[PAXOS_SESSION_HEADER_MAX];
	size_t n = 0;
	tmp[n++] = PAXOS_SESSION_MAGIC0;
	tmp[n++] = PAXOS_SESSION_MAGIC1;
	tmp[n++] = PAXOS_SESSION_VERSION;
	tmp[n++] = h->flags;
	n += put_varint(tmp + n, h->client);
	n += put_varint(tmp + n, h->seq);
	n += put_varint(tmp + n, h->seq - h->base); /* small: the values in flight */
	if (n > cap)
		return 0;
	memcpy(buf, tmp, n);
	return n;
}

int paxos_session_header_decode(const void *value, size_t len, struct paxos_session_header *h,
				size_t *header_len)
{
	const uint8_t *p = value;
	if (!p || len < 2 || p[0] != PAXOS_SESSION_MAGIC0 || p[1] != PAXOS_SESSION_MAGIC1)
		return 0;
	if (len < 4 || p[2] != PAXOS_SESSION_VERSION || (p[3] & ~PAXOS_SESSION_NOOP))
		return PAXOS_E_MALFORMED;
	size_t off = 4;
	uint64_t client, seq, behind;
	if (get_varint(p, len, &off, &client) || get_varint(p, len, &off, &seq) ||
	    get_varint(p, len, &off, &behind) || client == 0 || seq == 0 || behind >= seq)
		return PAXOS_E_MALFORMED;
	h->client = client;
	h->seq = seq;
	h->base = seq - behind;
	h->flags = p[3];
	*header_len = off;
	return 1;
}

/* ---- table ---- */

#define NONE UINT32_MAX

struct entry {
	uint64_t client; /* 0: free */
	uint64_t seq;
	paxos_iid iid;
	uint32_t older, newer; /* the LRU list; NONE at its ends */
};

struct paxos_session_table {
	uint32_t limit, count;
	struct entry *entries;
	uint32_t *index; /* entry + 1 per slot, 0: empty; mask + 1 slots */
	uint32_t mask;
	uint32_t oldest, newest, free_head; /* free entries chain through newer */
	uint64_t applied, duplicates, gaps;
};

static uint32_t slot_of(const struct paxos_session_table *t, uint64_t client)
{
	client ^= client >> 33;
	client *= 0xff51afd7ed558ccdull;
	client ^= client >> 33;
	return (uint32_t)client & t->mask;
}

static void reset(struct paxos_session_table *t)
{
	memset(t->index, 0, ((size_t)t->mask + 1) * sizeof(*t->index));
	for (uint32_t i = 0; i < t->limit; i++) {
		t->entries[i] =
		    (struct entry){.older = NONE, .newer = i + 1 < t->limit ? i + 1 : NONE};
	}
	t->free_head = t->limit ? 0 : NONE;
	t->oldest = t->newest = NONE;
	t->count = 0;
}

struct paxos_session_table *paxos_session_table_new(uint32_t max_clients)
{
	if (max_clients == 0)
		max_clients = PAXOS_SESSION_CLIENTS_DEFAULT;
	if (max_clients > PAXOS_SESSION_CLIENTS_MAX)
		return NULL;
	struct paxos_session_table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	uint32_t slots = 1;
	while (slots < 2 * max_clients)
		slots <<= 1;
	t->limit = max_clients;
	t->mask = slots - 1;
	t->entries = malloc((size_t)max_clients * sizeof(*t->entries));
	t->index = malloc((size_t)slots * sizeof(*t->index));
	if (!t->entries || !t->index) {
		paxos_session_table_free(t);
		return NULL;
	}
	reset(t);
	return t;
}

void paxos_session_table_free(struct paxos_session_table *t)
{
	if (!t)
		return;
	free(t->entries);
	free(t->index);
	free(t);
}

/* The index slot that holds client, or the empty one where it would go. */
static uint32_t find(const struct paxos_session_table *t, uint64_t client)
{
	uint32_t s = slot_of(t, client);
	while (t->index[s] && t->entries[t->index[s] - 1].client != client)
		s = (s + 1) & t->mask;
	return s;
}

/* Removes slot s from the index, moving back the entries after it that probed past it. */
static void unindex(struct paxos_session_table *t, uint32_t s)
{
	uint32_t hole = s;
	for (uint32_t i = (s + 1) & t->mask; t->index[i]; i = (i + 1) & t->mask) {
		uint32_t home = slot_of(t, t->entries[t->index[i] - 1].client);
		/* Movable into the hole when its home is not cyclically in (hole, i]. */
		if (((i - home) & t->mask) >= ((i - hole) & t->mask)) {
			t->index[hole] = t->index[i];
			hole = i;
		}
	}
	t->index[hole] = 0;
}

static void unlink_entry(struct paxos_session_table *t, uint32_t e)
{
	struct entry *x = &t->entries[e];
	if (x->older != NONE)
		t->entries[x->older].newer = x->newer;
	else
		t->oldest = x->newer;
	if (x->newer != NONE)
		t->entries[x->newer].older = x->older;
	else
		t->newest = x->older;
	x->older = x->newer = NONE;
}

static void push_newest(struct paxos_session_table *t, uint32_t e)
{
	struct entry *x = &t->entries[e];
	x->older = t->newest;
	x->newer = NONE;
	if (t->newest != NONE)
		t->entries[t->newest].newer = e;
	else
		t->oldest = e;
	t->newest = e;
}

/* An entry for a new client (evicting the oldest when full), indexed at slot s and newest. */
static uint32_t insert(struct paxos_session_table *t, uint64_t client)
{
	if (t->free_head == NONE) {
		uint32_t old = t->oldest;
		unindex(t, find(t, t->entries[old].client));
		unlink_entry(t, old);
		t->entries[old].newer = NONE;
		t->free_head = old;
		t->count--;
	}
	uint32_t e = t->free_head;
	t->free_head = t->entries[e].newer;
	t->entries[e] = (struct entry){.client = client, .older = NONE, .newer = NONE};
	t->index[find(t, client)] = e + 1;
	push_newest(t, e);
	t->count++;
	return e;
}

enum paxos_session_verdict paxos_session_table_apply(struct paxos_session_table *t,
						     const struct paxos_session_header *h,
						     paxos_iid iid)
{
	uint32_t s = find(t, h->client);
	uint32_t e = t->index[s] ? t->index[s] - 1 : NONE;
	uint64_t last = e != NONE ? t->entries[e].seq : 0;
	if (e != NONE && h->seq <= last) {
		t->duplicates++;
		return PAXOS_SESSION_DUPLICATE;
	}
	/* Next in order; or everything before base is finished at the session (applied, or
	 * given up and so never to be applied after this one). An unknown client has last 0. */
	if (!((e != NONE && h->seq == last + 1) || h->seq == h->base)) {
		t->gaps++;
		return PAXOS_SESSION_GAP;
	}
	if (e == NONE)
		e = insert(t, h->client);
	else {
		unlink_entry(t, e);
		push_newest(t, e);
	}
	t->entries[e].seq = h->seq;
	t->entries[e].iid = iid;
	t->applied++;
	return PAXOS_SESSION_APPLY;
}

bool paxos_session_table_last(const struct paxos_session_table *t, uint64_t client, uint64_t *seq,
			      paxos_iid *iid)
{
	uint32_t s = find(t, client);
	if (!t->index[s])
		return false;
	const struct entry *x = &t->entries[t->index[s] - 1];
	if (seq)
		*seq = x->seq;
	if (iid)
		*iid = x->iid;
	return true;
}

uint32_t paxos_session_table_count(const struct paxos_session_table *t)
{
	return t->count;
}

uint32_t paxos_session_table_limit(const struct paxos_session_table *t)
{
	return t->limit;
}

void paxos_session_table_stats(const struct paxos_session_table *t, uint64_t *applied,
			       uint64_t *duplicates, uint64_t *gaps)
{
	if (applied)
		*applied = t->applied;
	if (duplicates)
		*duplicates = t->duplicates;
	if (gaps)
		*gaps = t->gaps;
}

/* "PXST" version(1) 0 0 0 count(4) applied(8) duplicates(8) gaps(8), then per client, oldest
 * first, client(8) seq(8) iid(8); all little-endian. */
#define EXPORT_MAGIC "PXST"
#define EXPORT_VERSION 1u
#define EXPORT_HEAD 36u
#define EXPORT_ENTRY 24u

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
	uint64_t v = 0;
	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

size_t paxos_session_table_export_size(const struct paxos_session_table *t)
{
	return EXPORT_HEAD + (size_t)t->count * EXPORT_ENTRY;
}

int paxos_session_table_export(const struct paxos_session_table *t, uint8_t *buf, size_t cap,
			       size_t *len)
{
	size_t need = paxos_session_table_export_size(t);
	if (!buf || cap < need)
		return PAXOS_E_FULL;
	memcpy(buf, EXPORT_MAGIC, 4);
	buf[4] = EXPORT_VERSION;
	buf[5] = buf[6] = buf[7] = 0;
	put_le(buf + 8, t->count, 4);
	put_le(buf + 12, t->applied, 8);
	put_le(buf + 20, t->duplicates, 8);
	put_le(buf + 28, t->gaps, 8);
	uint8_t *p = buf + EXPORT_HEAD;
	for (uint32_t e = t->oldest; e != NONE; e = t->entries[e].newer, p += EXPORT_ENTRY) {
		put_le(p, t->entries[e].client, 8);
		put_le(p + 8, t->entries[e].seq, 8);
		put_le(p + 16, t->entries[e].iid, 8);
	}
	if (len)
		*len = need;
	return PAXOS_OK;
}

int paxos_session_table_import(struct paxos_session_table *t, const uint8_t *buf, size_t len)
{
	reset(t);
	t->applied = t->duplicates = t->gaps = 0;
	if (!buf || len < EXPORT_HEAD || memcmp(buf, EXPORT_MAGIC, 4) != 0 ||
	    buf[4] != EXPORT_VERSION || buf[5] || buf[6] || buf[7])
		return PAXOS_E_MALFORMED;
	uint64_t count = get_le(buf + 8, 4);
	if ((len - EXPORT_HEAD) % EXPORT_ENTRY || (len - EXPORT_HEAD) / EXPORT_ENTRY != count)
		return PAXOS_E_MALFORMED;
	if (count > t->limit)
		return PAXOS_E_FULL;
	const uint8_t *p = buf + EXPORT_HEAD;
	for (uint64_t i = 0; i < count; i++, p += EXPORT_ENTRY) {
		uint64_t client = get_le(p, 8), seq = get_le(p + 8, 8);
		if (client == 0 || seq == 0 || t->index[find(t, client)]) {
			reset(t); /* a zero or a client twice: not a table we wrote */
			return PAXOS_E_MALFORMED;
		}
		uint32_t e = insert(t, client);
		t->entries[e].seq = seq;
		t->entries[e].iid = get_le(p + 16, 8);
	}
	t->applied = get_le(buf + 12, 8);
	t->duplicates = get_le(buf + 20, 8);
	t->gaps = get_le(buf + 28, 8);
	return PAXOS_OK;
}
