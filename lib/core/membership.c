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
};

/* The kind of paxos_membership_command_at(): an acceptor set with one member's address. */
#define KIND_ACCEPTOR_AT 3u

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

int paxos_membership_decode_address(const struct paxos_value *v, uint32_t *id, uint32_t *addr,
				    uint16_t *port)
{
	if (!paxos_membership_is_command(v) || v->len != PAXOS_MEMBERSHIP_COMMAND_MAX ||
	    get_u32le(v->data + 4) != KIND_ACCEPTOR_AT)
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
		/* An acceptor set, and the address of one of its members. */
		if (paxos_membership_decode_address(v, &id, &addr, &port) != PAXOS_OK)
			return PAXOS_E_MALFORMED;
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
	if (kind == PAXOS_MEMBERSHIP_ACCEPTORS)
		next.members = set;
	else
		next.proposers = set;
	/* Made against an older configuration (a second change at once, or a retry of one
	 * already chosen), or an acceptor set changing nothing: ignored, the same way
	 * everywhere. A proposer set equal to the newest is applied all the same (a new
	 * configuration, no change): "every proposer" (UINT32_MAX) and the ids a history was
	 * made with would compare differently at different processes. */
	if (from != latest->id || set == 0 ||
	    (kind == PAXOS_MEMBERSHIP_ACCEPTORS && set == latest->members) ||
	    latest->id == UINT32_MAX || iid > UINT64_MAX - m->alpha)
		return 0;
	next.first = iid + m->alpha;
	next.id = latest->id + 1;
	uint32_t id, addr;
	uint16_t port;
	if (paxos_membership_decode_address(v, &id, &addr, &port) == PAXOS_OK && (set & (1u << id)))
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
