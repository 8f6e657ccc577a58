/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration history of paxos/membership.h: a short array, oldest first. Lookups scan
 * it from the newest (changes are rare, so the one in force is found first).
 */
#include <paxos/membership.h>

#include <stdlib.h>
#include <string.h>

struct paxos_membership {
	uint32_t alpha;
	paxos_iid applied;
	uint32_t count; /* 1 .. PAXOS_MEMBERSHIP_HISTORY */
	struct paxos_configuration c[PAXOS_MEMBERSHIP_HISTORY];
	/* Acceptors' unicast addresses the commands carried (port 0: none). */
	uint32_t addr[PAXOS_MAX_ACCEPTORS];
	uint16_t port[PAXOS_MAX_ACCEPTORS];
	/* The ids a command may name (paxos_membership_limit_ids); UINT32_MAX: any. */
	uint32_t acceptor_ids, proposer_ids;
};

/* The kind of paxos_membership_command_at(): an acceptor set with one member's address. */
#define KIND_ACCEPTOR_AT 3u
/* paxos_membership_command_address()'s is PAXOS_MEMBERSHIP_ADDRESS itself (4). */

/* A length no frame of client values can start with (a value is at most a datagram), as the
 * skip frame's (lib/core/batch.h), but another one. */
static const uint8_t marker[4] = {0xfe, 0xff, 0xff, 0xff};

static void put_u32le(uint8_t *p, uint32_t x)
{
	p[0] = (uint8_t)x;
	p[1] = (uint8_t)(x >> 8);
	p[2] = (uint8_t)(x >> 16);
	p[3] = (uint8_t)(x >> 24);
}

static uint32_t get_u32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

struct paxos_membership *paxos_membership_new(uint32_t members, uint32_t alpha)
{
	return paxos_membership_create(members, UINT32_MAX, alpha);
}

struct paxos_membership *paxos_membership_create(uint32_t members, uint32_t proposers,
						 uint32_t alpha)
{
	if (members == 0 || proposers == 0 || alpha == 0)
		return NULL;
	struct paxos_membership *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->alpha = alpha;
	m->count = 1;
	m->acceptor_ids = m->proposer_ids = UINT32_MAX;
	m->c[0] = (struct paxos_configuration){
	    .first = 1, .id = 1, .members = members, .proposers = proposers};
	return m;
}

void paxos_membership_free(struct paxos_membership *m)
{
	free(m);
}

uint32_t paxos_membership_alpha(const struct paxos_membership *m)
{
	return m->alpha;
}

paxos_iid paxos_membership_applied(const struct paxos_membership *m)
{
	return m->applied;
}

bool paxos_membership_known(const struct paxos_membership *m, paxos_iid iid)
{
	return iid <= m->applied || iid - m->applied <= m->alpha;
}

const struct paxos_configuration *paxos_membership_at(const struct paxos_membership *m,
						      paxos_iid iid)
{
	for (uint32_t k = m->count; k-- > 1;)
		if (m->c[k].first <= iid)
			return &m->c[k];
	return &m->c[0];
}

uint32_t paxos_membership_members(const struct paxos_membership *m, paxos_iid iid)
{
	return paxos_membership_at(m, iid)->members;
}

uint32_t paxos_membership_proposers(const struct paxos_membership *m, paxos_iid iid)
{
	return paxos_membership_at(m, iid)->proposers;
}

uint32_t paxos_membership_quorum(const struct paxos_membership *m, paxos_iid iid)
{
	return paxos_membership_quorum_of(paxos_membership_at(m, iid)->members);
}

const struct paxos_configuration *paxos_membership_latest(const struct paxos_membership *m)
{
	return &m->c[m->count - 1];
}

bool paxos_membership_pending(const struct paxos_membership *m)
{
	return m->c[m->count - 1].first > m->applied + 1;
}

bool paxos_membership_is_command(const struct paxos_value *v)
{
	return v &&
	       (v->len == PAXOS_MEMBERSHIP_COMMAND_LEN || v->len == PAXOS_MEMBERSHIP_COMMAND_MAX) &&
	       v->data && memcmp(v->data, marker, sizeof(marker)) == 0;
}

void paxos_membership_command_at(uint32_t from_id, uint32_t members, uint32_t id, uint32_t addr,
				 uint16_t port, uint8_t *buf)
{
	paxos_membership_command_of(PAXOS_MEMBERSHIP_ACCEPTORS, from_id, members, buf);
	put_u32le(buf + 4, KIND_ACCEPTOR_AT);
	memcpy(buf + 16, &addr, 4); /* network byte order, as it is */
	buf[20] = (uint8_t)port;
	buf[21] = (uint8_t)(port >> 8);
	buf[22] = (uint8_t)id;
	buf[23] = 0;
}

void paxos_membership_command_address(uint32_t from_id, uint32_t members, uint32_t id,
				      uint32_t addr, uint16_t port, uint8_t *buf)
{
	paxos_membership_command_at(from_id, members, id, addr, port, buf);
	put_u32le(buf + 4, PAXOS_MEMBERSHIP_ADDRESS);
}

int paxos_membership_decode_address(const struct paxos_value *v, uint32_t *id, uint32_t *addr,
				    uint16_t *port)
{
	if (!paxos_membership_is_command(v) || v->len != PAXOS_MEMBERSHIP_COMMAND_MAX)
		return PAXOS_E_MALFORMED;
	uint32_t kind = get_u32le(v->data + 4);
	if (kind != KIND_ACCEPTOR_AT && kind != PAXOS_MEMBERSHIP_ADDRESS)
		return PAXOS_E_MALFORMED;
	const uint8_t *p = v->data;
	memcpy(addr, p + 16, 4);
	*port = (uint16_t)(p[20] | p[21] << 8);
	*id = p[22];
	if (*id >= PAXOS_MAX_ACCEPTORS || *port == 0 || p[23] != 0)
		return PAXOS_E_MALFORMED;
	return PAXOS_OK;
}

bool paxos_membership_address(const struct paxos_membership *m, uint32_t id, uint32_t *addr,
			      uint16_t *port)
{
	if (id >= PAXOS_MAX_ACCEPTORS || m->port[id] == 0)
		return false;
	*addr = m->addr[id];
	*port = m->port[id];
	return true;
}

void paxos_membership_set_address(struct paxos_membership *m, uint32_t id, uint32_t addr,
				  uint16_t port)
{
	if (id >= PAXOS_MAX_ACCEPTORS || port == 0)
		return;
	m->addr[id] = addr;
	m->port[id] = port;
}

void paxos_membership_command_of(enum paxos_membership_kind kind, uint32_t from_id, uint32_t set,
				 uint8_t *buf)
{
	memcpy(buf, marker, sizeof(marker));
	put_u32le(buf + 4, (uint32_t)kind);
	put_u32le(buf + 8, from_id);
	put_u32le(buf + 12, set);
}

void paxos_membership_command(uint32_t from_id, uint32_t members, uint8_t *buf)
{
	paxos_membership_command_of(PAXOS_MEMBERSHIP_ACCEPTORS, from_id, members, buf);
}

int paxos_membership_decode_of(const struct paxos_value *v, enum paxos_membership_kind *kind,
			       uint32_t *from_id, uint32_t *set)
{
	if (!paxos_membership_is_command(v))
		return PAXOS_E_MALFORMED;
	uint32_t k = get_u32le(v->data + 4), id, addr;
	uint16_t port;
	if (v->len == PAXOS_MEMBERSHIP_COMMAND_MAX) {
		/* An acceptor set and the address of one of its members: a new set, or the same
		 * one with a member moved. */
		if (paxos_membership_decode_address(v, &id, &addr, &port) != PAXOS_OK)
			return PAXOS_E_MALFORMED;
		if (k == KIND_ACCEPTOR_AT)
			k = PAXOS_MEMBERSHIP_ACCEPTORS;
	} else if (k != PAXOS_MEMBERSHIP_ACCEPTORS && k != PAXOS_MEMBERSHIP_PROPOSERS) {
		return PAXOS_E_MALFORMED;
	}
	*kind = (enum paxos_membership_kind)k;
	*from_id = get_u32le(v->data + 8);
	*set = get_u32le(v->data + 12);
	return PAXOS_OK;
}

int paxos_membership_decode(const struct paxos_value *v, uint32_t *from_id, uint32_t *members)
{
	enum paxos_membership_kind kind;
	if (paxos_membership_decode_of(v, &kind, from_id, members) != PAXOS_OK ||
	    kind != PAXOS_MEMBERSHIP_ACCEPTORS)
		return PAXOS_E_MALFORMED;
	return PAXOS_OK;
}

void paxos_membership_limit_ids(struct paxos_membership *m, uint32_t acceptors, uint32_t proposers)
{
	m->acceptor_ids = acceptors;
	m->proposer_ids = proposers;
}

bool paxos_membership_names_known_ids(const struct paxos_membership *m, const struct paxos_value *v)
{
	enum paxos_membership_kind kind;
	uint32_t from, set;
	if (paxos_membership_decode_of(v, &kind, &from, &set) != PAXOS_OK)
		return true;
	return !(set & ~(kind == PAXOS_MEMBERSHIP_PROPOSERS ? m->proposer_ids : m->acceptor_ids));
}

void paxos_membership_skip_to(struct paxos_membership *m, paxos_iid iid)
{
	if (iid > m->applied)
		m->applied = iid;
}

int paxos_membership_apply(struct paxos_membership *m, paxos_iid iid, const struct paxos_value *v)
{
	if (iid <= m->applied)
		return 0;
	m->applied = iid;
	enum paxos_membership_kind kind;
	uint32_t from, set;
	if (paxos_membership_decode_of(v, &kind, &from, &set) != PAXOS_OK)
		return 0;
	const struct paxos_configuration *latest = paxos_membership_latest(m);
	struct paxos_configuration next = *latest;
	uint32_t id, addr;
	uint16_t port;
	bool has_address = paxos_membership_decode_address(v, &id, &addr, &port) == PAXOS_OK;
	if (kind == PAXOS_MEMBERSHIP_ACCEPTORS)
		next.members = set;
	else if (kind == PAXOS_MEMBERSHIP_PROPOSERS)
		next.proposers = set;
	/* Made against an older configuration (a second change at once, or a retry of one
	 * already chosen), or an acceptor set changing nothing: ignored, the same way
	 * everywhere. A proposer set equal to the newest is applied all the same (a new
	 * configuration, no change): "every proposer" (UINT32_MAX) and the ids a history was
	 * made with would compare differently at different processes. A move names the
	 * members as they are, the moved one among them. */
	if (from != latest->id || set == 0 ||
	    (kind == PAXOS_MEMBERSHIP_ACCEPTORS && set == latest->members) ||
	    (kind == PAXOS_MEMBERSHIP_ADDRESS &&
	     (set != latest->members || !has_address || !(set & (1u << id)))) ||
	    latest->id == UINT32_MAX || iid > UINT64_MAX - m->alpha ||
	    !paxos_membership_names_known_ids(m, v))
		return 0;
	next.first = iid + m->alpha;
	next.id = latest->id + 1;
	if (has_address && (set & (1u << id)))
		paxos_membership_set_address(m, id, addr, port);
	if (m->count == PAXOS_MEMBERSHIP_HISTORY) {
		memmove(&m->c[0], &m->c[1], (m->count - 1) * sizeof(m->c[0]));
		m->count--;
	}
	m->c[m->count++] = next;
	return 1;
}

const struct paxos_configuration *paxos_membership_history(const struct paxos_membership *m,
							   uint32_t *count)
{
	*count = m->count;
	return m->c;
}

/* Whether c[0..count) is a history paxos_membership_apply() could have made. */
static bool history_valid(const struct paxos_configuration *c, uint32_t count, paxos_iid applied,
			  uint32_t alpha)
{
	if (count == 0 || count > PAXOS_MEMBERSHIP_HISTORY || c[0].id == 0 || c[0].members == 0 ||
	    c[0].proposers == 0 || (c[0].id == 1 && c[0].first != 1))
		return false;
	if (c[0].id > 1 && (c[0].first <= alpha || c[0].first - alpha > applied))
		return false;
	for (uint32_t k = 1; k < count; k++)
		if (c[k].members == 0 || c[k].proposers == 0 || c[k].id != c[k - 1].id + 1 ||
		    c[k].first <= c[k - 1].first || c[k].first <= alpha ||
		    c[k].first - alpha > applied)
			return false;
	return true;
}

struct paxos_membership *paxos_membership_restore(const struct paxos_configuration *c,
						  uint32_t count, paxos_iid applied, uint32_t alpha)
{
	if (!c || alpha == 0 || !history_valid(c, count, applied, alpha))
		return NULL;
	struct paxos_membership *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->alpha = alpha;
	m->applied = applied;
	m->count = count;
	m->acceptor_ids = m->proposer_ids = UINT32_MAX;
	memcpy(m->c, c, count * sizeof(*c));
	return m;
}

uint32_t paxos_membership_voted_in(const struct paxos_membership *m, uint32_t id, uint32_t *out,
				   paxos_iid *ends, uint32_t max)
{
	uint32_t bit = id < 32 ? 1u << id : 0, n = 0;
	bool somewhere = false;
	for (uint32_t k = 0; k < m->count; k++)
		somewhere |= (m->c[k].members & bit) != 0;
	for (uint32_t k = m->count; k-- > 0 && n < max;) {
		/* A member of none: the newest alone, so that recovery still hears someone. */
		if (!(m->c[k].members & bit) && (somewhere || k + 1 != m->count))
			continue;
		out[n] = m->c[k].members;
		if (ends)
			ends[n] = k + 1 < m->count ? m->c[k + 1].first - 1 : 0;
		n++;
	}
	if (n < max) {
		out[n] = 0;
		if (ends)
			ends[n] = 0;
	}
	return n;
}

/* ---- the history on the wire (paxos_membership_encode) ----
 * little-endian: version 1 (1 byte), count (1), alpha (4), applied (8); count times first
 * (8), id (4), members (4), proposers (4); the number of addresses (1), each id (1), address
 * (4), port (2). */
#define ENCODED_VERSION 1u

static void put_u64le(uint8_t *p, uint64_t x)
{
	put_u32le(p, (uint32_t)x);
	put_u32le(p + 4, (uint32_t)(x >> 32));
}

static uint64_t get_u64le(const uint8_t *p)
{
	return (uint64_t)get_u32le(p) | (uint64_t)get_u32le(p + 4) << 32;
}

size_t paxos_membership_encode(const struct paxos_membership *m, uint8_t *buf, size_t cap)
{
	if (cap < PAXOS_MEMBERSHIP_ENCODED_MAX)
		return 0;
	size_t at = 0;
	buf[at++] = ENCODED_VERSION;
	buf[at++] = (uint8_t)m->count;
	put_u32le(buf + at, m->alpha);
	put_u64le(buf + at + 4, m->applied);
	at += 12;
	for (uint32_t k = 0; k < m->count; k++) {
		put_u64le(buf + at, m->c[k].first);
		put_u32le(buf + at + 8, m->c[k].id);
		put_u32le(buf + at + 12, m->c[k].members);
		put_u32le(buf + at + 16, m->c[k].proposers);
		at += 20;
	}
	size_t count_at = at++;
	uint8_t addresses = 0;
	for (uint32_t id = 0; id < PAXOS_MAX_ACCEPTORS; id++) {
		if (!m->port[id])
			continue;
		buf[at] = (uint8_t)id;
		put_u32le(buf + at + 1, m->addr[id]);
		buf[at + 5] = (uint8_t)m->port[id];
		buf[at + 6] = (uint8_t)(m->port[id] >> 8);
		at += 7;
		addresses++;
	}
	buf[count_at] = addresses;
	return at;
}

struct paxos_membership *paxos_membership_decode_history(const uint8_t *buf, size_t len,
							 uint32_t alpha)
{
	if (!buf || len < 14 || len > PAXOS_MEMBERSHIP_ENCODED_MAX || buf[0] != ENCODED_VERSION)
		return NULL;
	uint32_t count = buf[1];
	if (count == 0 || count > PAXOS_MEMBERSHIP_HISTORY || get_u32le(buf + 2) != alpha)
		return NULL;
	paxos_iid applied = get_u64le(buf + 6);
	size_t at = 14;
	if (len < at + (size_t)count * 20 + 1)
		return NULL;
	struct paxos_configuration c[PAXOS_MEMBERSHIP_HISTORY];
	for (uint32_t k = 0; k < count; k++, at += 20)
		c[k] = (struct paxos_configuration){.first = get_u64le(buf + at),
						    .id = get_u32le(buf + at + 8),
						    .members = get_u32le(buf + at + 12),
						    .proposers = get_u32le(buf + at + 16)};
	uint32_t addresses = buf[at++];
	if (addresses > PAXOS_MAX_ACCEPTORS || len != at + (size_t)addresses * 7)
		return NULL;
	struct paxos_membership *m = paxos_membership_restore(c, count, applied, alpha);
	if (!m)
		return NULL;
	for (uint32_t k = 0; k < addresses; k++, at += 7) {
		uint16_t port = (uint16_t)(buf[at + 5] | buf[at + 6] << 8);
		if (buf[at] >= PAXOS_MAX_ACCEPTORS || port == 0 || m->port[buf[at]]) {
			free(m);
			return NULL;
		}
		paxos_membership_set_address(m, buf[at], get_u32le(buf + at + 1), port);
	}
	return m;
}

/* The configuration of history m with id @p id, or NULL when m does not keep it. */
static const struct paxos_configuration *with_id(const struct paxos_membership *m, uint32_t id)
{
	if (id < m->c[0].id || id > m->c[m->count - 1].id)
		return NULL;
	return &m->c[id - m->c[0].id];
}

static bool same_configuration(const struct paxos_configuration *a,
			       const struct paxos_configuration *b)
{
	return a->first == b->first && a->id == b->id && a->members == b->members &&
	       a->proposers == b->proposers;
}

bool paxos_membership_agrees(const struct paxos_membership *a, const struct paxos_membership *b)
{
	if (a->alpha != b->alpha)
		return false;
	for (uint32_t k = 0; k < a->count; k++) {
		const struct paxos_configuration *o = with_id(b, a->c[k].id);
		if (o && !same_configuration(o, &a->c[k]))
			return false;
	}
	return true;
}

int paxos_membership_vouched(const struct paxos_membership *const *answers, uint32_t count,
			     const struct paxos_membership *known, uint32_t *config_id)
{
	if (count > PAXOS_MAX_ACCEPTORS)
		count = PAXOS_MAX_ACCEPTORS;
	int best = -1;
	uint32_t best_id = 0;
	for (uint32_t a = 0; a < count; a++) {
		const struct paxos_membership *h = answers[a];
		if (!h || (known && !paxos_membership_agrees(h, known)))
			continue;
		const struct paxos_configuration *c = paxos_membership_latest(h);
		if (c->id < best_id || (c->id == best_id && h->applied <= answers[best]->applied))
			continue;
		/* Vouched: the members of c that answered with c itself in their history. */
		uint32_t vouchers = 0;
		for (uint32_t b = 0; b < count; b++) {
			if (b >= 32 || !(c->members & (1u << b)) || !answers[b] ||
			    (known && !paxos_membership_agrees(answers[b], known)))
				continue;
			const struct paxos_configuration *o = with_id(answers[b], c->id);
			if (o && same_configuration(o, c))
				vouchers |= 1u << b;
		}
		if ((uint32_t)__builtin_popcount(vouchers) < paxos_membership_quorum_of(c->members))
			continue;
		best = (int)a;
		best_id = c->id;
	}
	if (best >= 0 && config_id)
		*config_id = best_id;
	return best;
}

int paxos_membership_adopt(struct paxos_membership *m, const struct paxos_membership *from)
{
	if (!paxos_membership_agrees(from, m))
		return PAXOS_E_INVALID;
	/* Ids m may not name are refused in a history as in a command. */
	for (uint32_t k = 0; k < from->count; k++)
		if ((from->c[k].members & ~m->acceptor_ids) ||
		    (from->c[k].proposers != UINT32_MAX &&
		     (from->c[k].proposers & ~m->proposer_ids)))
			return PAXOS_E_INVALID;
	uint32_t mine = paxos_membership_latest(m)->id, theirs = paxos_membership_latest(from)->id;
	if (theirs < mine || (theirs == mine && from->applied <= m->applied))
		return 0;
	uint32_t addr[PAXOS_MAX_ACCEPTORS];
	uint16_t port[PAXOS_MAX_ACCEPTORS];
	memcpy(addr, m->addr, sizeof(addr));
	memcpy(port, m->port, sizeof(port));
	paxos_iid applied = m->applied;
	uint32_t acceptor_ids = m->acceptor_ids, proposer_ids = m->proposer_ids;
	*m = *from;
	m->acceptor_ids = acceptor_ids;
	m->proposer_ids = proposer_ids;
	/* Never back: a learner that started at the current instance skipped to there, and
	 * would otherwise wait for ever for a configuration of instances the answer's applied
	 * + alpha does not reach, which only its own deliveries, stuck on them, could bring. */
	if (applied > m->applied)
		m->applied = applied;
	/* Addresses set here and not carried by the answer stay (paxos_node_set_acceptor_address
	 * for an acceptor about to be added). */
	for (uint32_t id = 0; id < PAXOS_MAX_ACCEPTORS; id++)
		if (!m->port[id] && port[id]) {
			m->port[id] = port[id];
			m->addr[id] = addr[id];
		}
	return 1;
}
