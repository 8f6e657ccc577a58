/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wire codec: paxos messages to and from msgpack datagrams (format in codec.h).
 *
 * Decoding uses msgpack_unpack() with a zone the decoder owns and clears between objects.
 * msgpack_unpack_next() would be the obvious call, but in msgpack-c (4.x) it frees the
 * unpacked zone and allocates a fresh one on every call.
 */
#include "codec.h"

#include <paxos/membership.h>
#include <paxos/version.h>

#include <string.h>

/* Fields per message array, the type included; indexed by type. */
static const uint32_t field_count[PAXOS_MSG_TYPE_MAX + 1] = {
    [PAXOS_MSG_PREPARE] = 3,      [PAXOS_MSG_PROMISE] = 6,        [PAXOS_MSG_ACCEPT] = 4,
    [PAXOS_MSG_ACCEPTED] = 7,     [PAXOS_MSG_REJECT] = 4,         [PAXOS_MSG_REPEAT] = 3,
    [PAXOS_MSG_TRIM] = 2,         [PAXOS_MSG_ACCEPTOR_STATE] = 6, [PAXOS_MSG_CLIENT_VALUE] = 3,
    [PAXOS_MSG_TRIMMED] = 4,      [PAXOS_MSG_HEARTBEAT] = 3,      [PAXOS_MSG_LEADER] = 3,
    [PAXOS_MSG_REPAIR] = 3,       [PAXOS_MSG_ACCEPTOR_HELLO] = 7, [PAXOS_MSG_RECOVER_ASK] = 3,
    [PAXOS_MSG_RECOVER_INFO] = 9, [PAXOS_MSG_CONFIG_ASK] = 2,     [PAXOS_MSG_CONFIG_INFO] = 5,
    [PAXOS_MSG_CONFIG_PUSH] = 4,  [PAXOS_MSG_REFUSED] = 4,
};

#define HEADER_FIELDS 4u

/* The widest array we ever decode; bounds what msgpack allocates per object. */
#define MAX_FIELDS 9u

/* ---- encoding ---- */

/* msgpack write callback: append to the caller's buffer, or note that it does not fit. */
static int append(void *data, const char *bytes, size_t n)
{
	struct paxos_encoder *e = data;

	if (e->overflow || n > e->cap - e->len) {
		e->overflow = true;
		return -1;
	}
	if (n)
		memcpy(e->buf + e->len, bytes, n);
	e->len += n;
	return 0;
}

static void pack_bool(msgpack_packer *pk, bool b)
{
	if (b)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
}

static void pack_value(msgpack_packer *pk, const struct paxos_value *v)
{
	msgpack_pack_bin(pk, v->len);
	if (v->len)
		msgpack_pack_bin_body(pk, v->data, v->len);
}

static bool value_ok(const struct paxos_value *v)
{
	return v->len == 0 || v->data != NULL;
}

static bool recover_info_ok(const struct paxos_recover_info *r)
{
	return r->acceptor_id < PAXOS_MAX_ACCEPTORS &&
	       ((r->role == PAXOS_ROLE_ACCEPTOR && r->sender_id < PAXOS_MAX_ACCEPTORS) ||
		(r->role == PAXOS_ROLE_PROPOSER && r->sender_id < PAXOS_MAX_PROPOSERS));
}

/* A history within bounds: the decoder takes no more (paxos_membership_decode_history
 * checks the rest where it is used). */
static bool config_info_ok(const struct paxos_config_info *c)
{
	return c->acceptor_id < PAXOS_MAX_ACCEPTORS && c->history.len > 0 &&
	       c->history.len <= PAXOS_MEMBERSHIP_ENCODED_MAX && value_ok(&c->history);
}

static bool config_push_ok(const struct paxos_config_push *c)
{
	return c->proposer_id < PAXOS_MAX_PROPOSERS && c->history.len > 0 &&
	       c->history.len <= PAXOS_MEMBERSHIP_ENCODED_MAX && value_ok(&c->history);
}

static bool refused_ok(const struct paxos_refused *r)
{
	return r->proposer_id < PAXOS_MAX_PROPOSERS && value_ok(&r->hashes) &&
	       r->hashes.len % 8 == 0 && r->hashes.len <= 8 * PAXOS_REFUSED_HASHES_MAX;
}

/* Whether the decoder would accept m; the encoder never builds a datagram it would reject. */
static bool message_ok(const struct paxos_message *m)
{
	switch (m->type) {
	case PAXOS_MSG_PREPARE:
	case PAXOS_MSG_TRIM:
		return true;
	case PAXOS_MSG_PROMISE:
		return value_ok(&m->u.promise.value) &&
		       m->u.promise.acceptor_id < PAXOS_MAX_ACCEPTORS;
	case PAXOS_MSG_ACCEPT:
		return value_ok(&m->u.accept.value);
	case PAXOS_MSG_ACCEPTED:
		return (m->u.accepted.valueless || value_ok(&m->u.accepted.value)) &&
		       m->u.accepted.acceptor_id < PAXOS_MAX_ACCEPTORS;
	case PAXOS_MSG_REJECT:
		return m->u.reject.acceptor_id < PAXOS_MAX_ACCEPTORS;
	case PAXOS_MSG_REPEAT:
		return m->u.repeat.from <= m->u.repeat.to;
	case PAXOS_MSG_REPAIR:
		return m->u.repair.from <= m->u.repair.to;
	case PAXOS_MSG_ACCEPTOR_HELLO:
		return m->u.acceptor_hello.acceptor_id < PAXOS_MAX_ACCEPTORS;
	case PAXOS_MSG_RECOVER_ASK:
		return m->u.recover_ask.acceptor_id < PAXOS_MAX_ACCEPTORS;
	case PAXOS_MSG_RECOVER_INFO:
		return recover_info_ok(&m->u.recover_info);
	case PAXOS_MSG_CONFIG_ASK:
		return true;
	case PAXOS_MSG_CONFIG_INFO:
		return config_info_ok(&m->u.config_info);
	case PAXOS_MSG_CONFIG_PUSH:
		return config_push_ok(&m->u.config_push);
	case PAXOS_MSG_ACCEPTOR_STATE:
		return m->u.acceptor_state.acceptor_id < PAXOS_MAX_ACCEPTORS;
	case PAXOS_MSG_CLIENT_VALUE:
		return value_ok(&m->u.client_value.value);
	case PAXOS_MSG_TRIMMED:
		return m->u.trimmed.acceptor_id < PAXOS_MAX_ACCEPTORS;
	case PAXOS_MSG_HEARTBEAT:
		return m->u.heartbeat.proposer_id < PAXOS_MAX_PROPOSERS;
	case PAXOS_MSG_REFUSED:
		return refused_ok(&m->u.refused);
	case PAXOS_MSG_LEADER:
		return m->u.leader.leader_id < PAXOS_MAX_PROPOSERS ||
		       m->u.leader.leader_id == PAXOS_LEADER_AUTO;
	}
	return false;
}

/* A client value without a submission id leaves its last field out. */
static uint32_t fields_of(const struct paxos_message *m)
{
	return field_count[m->type] - (m->type == PAXOS_MSG_CLIENT_VALUE && !m->u.client_value.id);
}

static void pack_message(msgpack_packer *pk, const struct paxos_message *m)
{
	msgpack_pack_array(pk, fields_of(m));
	msgpack_pack_uint32(pk, (uint32_t)m->type);
	switch (m->type) {
	case PAXOS_MSG_PREPARE:
		msgpack_pack_uint64(pk, m->u.prepare.iid);
		msgpack_pack_uint64(pk, m->u.prepare.ballot);
		break;
	case PAXOS_MSG_PROMISE:
		msgpack_pack_uint64(pk, m->u.promise.iid);
		msgpack_pack_uint64(pk, m->u.promise.ballot);
		msgpack_pack_uint64(pk, m->u.promise.value_ballot);
		pack_value(pk, &m->u.promise.value);
		msgpack_pack_uint32(pk, m->u.promise.acceptor_id);
		break;
	case PAXOS_MSG_ACCEPT:
		msgpack_pack_uint64(pk, m->u.accept.iid);
		msgpack_pack_uint64(pk, m->u.accept.ballot);
		pack_value(pk, &m->u.accept.value);
		break;
	case PAXOS_MSG_ACCEPTED:
		msgpack_pack_uint64(pk, m->u.accepted.iid);
		msgpack_pack_uint64(pk, m->u.accepted.ballot);
		if (m->u.accepted.valueless)
			msgpack_pack_nil(pk);
		else
			pack_value(pk, &m->u.accepted.value);
		msgpack_pack_uint32(pk, m->u.accepted.acceptor_id);
		pack_bool(pk, m->u.accepted.final);
		msgpack_pack_uint64(pk, m->u.accepted.generation);
		break;
	case PAXOS_MSG_REJECT:
		msgpack_pack_uint64(pk, m->u.reject.iid);
		msgpack_pack_uint64(pk, m->u.reject.ballot);
		msgpack_pack_uint32(pk, m->u.reject.acceptor_id);
		break;
	case PAXOS_MSG_REPEAT:
		msgpack_pack_uint64(pk, m->u.repeat.from);
		msgpack_pack_uint64(pk, m->u.repeat.to);
		break;
	case PAXOS_MSG_REPAIR:
		msgpack_pack_uint64(pk, m->u.repair.from);
		msgpack_pack_uint64(pk, m->u.repair.to);
		break;
	case PAXOS_MSG_ACCEPTOR_HELLO:
		msgpack_pack_uint32(pk, m->u.acceptor_hello.acceptor_id);
		msgpack_pack_uint64(pk, m->u.acceptor_hello.incarnation);
		if (m->u.acceptor_hello.recovering)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		msgpack_pack_uint64(pk, m->u.acceptor_hello.age);
		msgpack_pack_uint64(pk, m->u.acceptor_hello.echo);
		msgpack_pack_uint64(pk, m->u.acceptor_hello.generation);
		break;
	case PAXOS_MSG_RECOVER_ASK:
		msgpack_pack_uint32(pk, m->u.recover_ask.acceptor_id);
		msgpack_pack_uint64(pk, m->u.recover_ask.incarnation);
		break;
	case PAXOS_MSG_RECOVER_INFO:
		msgpack_pack_uint32(pk, m->u.recover_info.role);
		msgpack_pack_uint32(pk, m->u.recover_info.sender_id);
		msgpack_pack_uint32(pk, m->u.recover_info.acceptor_id);
		msgpack_pack_uint64(pk, m->u.recover_info.incarnation);
		msgpack_pack_uint64(pk, m->u.recover_info.highest_iid);
		msgpack_pack_uint64(pk, m->u.recover_info.highest_ballot);
		msgpack_pack_uint64(pk, m->u.recover_info.generation);
		pack_bool(pk, m->u.recover_info.founder);
		break;
	case PAXOS_MSG_TRIM:
		msgpack_pack_uint64(pk, m->u.trim.iid);
		break;
	case PAXOS_MSG_ACCEPTOR_STATE:
		msgpack_pack_uint32(pk, m->u.acceptor_state.acceptor_id);
		msgpack_pack_uint64(pk, m->u.acceptor_state.highest_accepted);
		msgpack_pack_uint64(pk, m->u.acceptor_state.trim_iid);
		msgpack_pack_uint64(pk, m->u.acceptor_state.generation);
		pack_bool(pk, m->u.acceptor_state.recovering);
		break;
	case PAXOS_MSG_CLIENT_VALUE:
		pack_value(pk, &m->u.client_value.value);
		if (m->u.client_value.id)
			msgpack_pack_uint64(pk, m->u.client_value.id);
		break;
	case PAXOS_MSG_TRIMMED:
		msgpack_pack_uint32(pk, m->u.trimmed.acceptor_id);
		msgpack_pack_uint64(pk, m->u.trimmed.iid);
		msgpack_pack_uint64(pk, m->u.trimmed.generation);
		break;
	case PAXOS_MSG_HEARTBEAT:
		msgpack_pack_uint32(pk, m->u.heartbeat.proposer_id);
		msgpack_pack_uint64(pk, m->u.heartbeat.next_iid);
		break;
	case PAXOS_MSG_LEADER:
		msgpack_pack_uint32(pk, m->u.leader.leader_id);
		msgpack_pack_uint64(pk, m->u.leader.sent_at);
		break;
	case PAXOS_MSG_REFUSED:
		msgpack_pack_uint32(pk, m->u.refused.proposer_id);
		msgpack_pack_uint32(pk, m->u.refused.dropped);
		pack_value(pk, &m->u.refused.hashes);
		break;
	case PAXOS_MSG_CONFIG_ASK:
		msgpack_pack_uint64(pk, m->u.config_ask.nonce);
		break;
	case PAXOS_MSG_CONFIG_INFO:
		msgpack_pack_uint32(pk, m->u.config_info.acceptor_id);
		msgpack_pack_uint64(pk, m->u.config_info.nonce);
		if (m->u.config_info.settled)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		pack_value(pk, &m->u.config_info.history);
		break;
	case PAXOS_MSG_CONFIG_PUSH:
		msgpack_pack_uint32(pk, m->u.config_push.proposer_id);
		if (m->u.config_push.settled)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		pack_value(pk, &m->u.config_push.history);
		break;
	}
}

void paxos_encoder_init(struct paxos_encoder *e, uint8_t *buf, size_t cap,
			const struct paxos_header *h)
{
	e->buf = buf;
	e->cap = cap;
	e->len = 0;
	e->count = 0;
	e->overflow = false;
	msgpack_packer_init(&e->pk, e, append);

	msgpack_pack_array(&e->pk, HEADER_FIELDS);
	msgpack_pack_uint32(&e->pk, PAXOS_WIRE_MAGIC);
	msgpack_pack_uint32(&e->pk, PAXOS_WIRE_VERSION);
	msgpack_pack_uint32(&e->pk, (uint32_t)h->role);
	msgpack_pack_uint32(&e->pk, h->sender_id);
	if (e->overflow) {
		/* No room for the header: an empty buffer that refuses every message. */
		e->cap = 0;
		e->len = 0;
	}
	e->header_len = e->len;
}

void paxos_encoder_reset(struct paxos_encoder *e)
{
	e->len = e->header_len;
	e->count = 0;
	e->overflow = false;
}

int paxos_encoder_add(struct paxos_encoder *e, const struct paxos_message *m)
{
	if (!message_ok(m))
		return PAXOS_E_INVALID;
	/* The decoder rejects datagrams with more messages, so they do not "fit" either. */
	if (e->count >= PAXOS_MAX_MESSAGES_PER_DATAGRAM)
		return PAXOS_E_FULL;

	size_t before = e->len;
	e->overflow = false;
	/* Rebind in case the encoder struct was moved since init. */
	msgpack_packer_init(&e->pk, e, append);
	pack_message(&e->pk, m);
	if (e->overflow) {
		e->len = before;
		e->overflow = false;
		return PAXOS_E_FULL;
	}
	e->count++;
	return PAXOS_OK;
}

/* ---- decoding ---- */

void paxos_decoder_init(struct paxos_decoder *d)
{
	msgpack_unpacked_init(&d->unpacked);
	/* May fail; paxos_decode retries and reports PAXOS_E_NOMEM. */
	d->unpacked.zone = msgpack_zone_new(MSGPACK_ZONE_CHUNK_SIZE);
}

void paxos_decoder_destroy(struct paxos_decoder *d)
{
	msgpack_unpacked_destroy(&d->unpacked);
}

/* Bytes a msgpack scalar starting at p occupies, or 0 if it is a container, an invalid
 * byte, or runs past avail. */
static size_t scalar_size(const uint8_t *p, size_t avail)
{
	size_t head;          /* bytes before the body: type byte, length field, ext type */
	size_t len_bytes = 0; /* width of the big-endian length field after the type byte */
	size_t body = 0;

	if (avail == 0)
		return 0;
	uint8_t b = p[0];
	if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
		return 1; /* fixints, nil, bools */
	if (b >= 0xa0 && b <= 0xbf) {
		head = 1; /* fixstr */
		body = b & 0x1fu;
	} else {
		/* clang-format off */
		switch (b) {
		case 0xcc: case 0xd0: head = 2; break;            /* 8-bit ints */
		case 0xcd: case 0xd1: head = 3; break;            /* 16-bit ints */
		case 0xca: case 0xce: case 0xd2: head = 5; break; /* float 32, 32-bit ints */
		case 0xcb: case 0xcf: case 0xd3: head = 9; break; /* float 64, 64-bit ints */
		case 0xd4: head = 3; break;                       /* fixext 1..16 */
		case 0xd5: head = 4; break;
		case 0xd6: head = 6; break;
		case 0xd7: head = 10; break;
		case 0xd8: head = 18; break;
		case 0xc4: case 0xd9: head = 2; len_bytes = 1; break; /* bin 8, str 8 */
		case 0xc5: case 0xda: head = 3; len_bytes = 2; break;
		case 0xc6: case 0xdb: head = 5; len_bytes = 4; break;
		case 0xc7: head = 3; len_bytes = 1; break; /* ext 8: length, type, data */
		case 0xc8: head = 4; len_bytes = 2; break;
		case 0xc9: head = 6; len_bytes = 4; break;
		default: return 0; /* maps, arrays, 0xc1 */
		}
		/* clang-format on */
	}
	if (avail < head)
		return 0;
	for (size_t i = 1; i <= len_bytes; i++)
		body = body << 8 | p[i];
	return body <= avail - head ? head + body : 0;
}

/*
 * Whether buf[off..len) starts with an array of at most MAX_FIELDS scalars. msgpack
 * allocates a container's elements before reading them, so a hostile length header could
 * make it allocate gigabytes; after this check, one object always fits in the zone's first
 * chunk and decoding never allocates.
 */
static bool flat_array_ahead(const uint8_t *buf, size_t len, size_t off)
{
	const uint8_t *p = buf + off;
	size_t avail = len - off, head;
	uint32_t n;

	if (avail == 0)
		return false;
	if (p[0] >= 0x90 && p[0] <= 0x9f) {
		head = 1;
		n = p[0] & 0x0fu;
	} else if (p[0] == 0xdc && avail >= 3) {
		head = 3;
		n = (uint32_t)p[1] << 8 | p[2];
	} else if (p[0] == 0xdd && avail >= 5) {
		head = 5;
		n = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
	} else {
		return false;
	}
	if (n > MAX_FIELDS)
		return false;
	p += head;
	avail -= head;
	for (uint32_t i = 0; i < n; i++) {
		size_t sz = scalar_size(p, avail);
		if (sz == 0)
			return false;
		p += sz;
		avail -= sz;
	}
	return true;
}

/* The next array at *off, advancing *off past it; NULL if there is none or it is bad. */
static const msgpack_object *next_array(struct paxos_decoder *d, const uint8_t *buf, size_t len,
					size_t *off)
{
	if (!flat_array_ahead(buf, len, *off))
		return NULL;
	msgpack_zone_clear(d->unpacked.zone);
	msgpack_unpack_return r =
	    msgpack_unpack((const char *)buf, len, off, d->unpacked.zone, &d->unpacked.data);
	if (r != MSGPACK_UNPACK_SUCCESS && r != MSGPACK_UNPACK_EXTRA_BYTES)
		return NULL;
	if (d->unpacked.data.type != MSGPACK_OBJECT_ARRAY)
		return NULL;
	return &d->unpacked.data;
}

static bool get_u64(const msgpack_object *o, uint64_t *out)
{
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return false;
	*out = o->via.u64;
	return true;
}

static bool get_u32(const msgpack_object *o, uint32_t *out)
{
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER || o->via.u64 > UINT32_MAX)
		return false;
	*out = (uint32_t)o->via.u64;
	return true;
}

static bool get_acceptor_id(const msgpack_object *o, uint32_t *out)
{
	return get_u32(o, out) && *out < PAXOS_MAX_ACCEPTORS;
}

static bool get_bool(const msgpack_object *o, bool *out)
{
	if (o->type != MSGPACK_OBJECT_BOOLEAN)
		return false;
	*out = o->via.boolean;
	return true;
}

/* Zero copy: the value points into buf. msgpack-c already points bin objects into the
 * input; checking it costs nothing and keeps the promise explicit. */
static bool get_value(const msgpack_object *o, const uint8_t *buf, size_t len,
		      struct paxos_value *out)
{
	if (o->type != MSGPACK_OBJECT_BIN)
		return false;
	uintptr_t start = (uintptr_t)buf, p = (uintptr_t)o->via.bin.ptr;
	size_t n = o->via.bin.size;
	if (p < start || p - start > len || n > len - (p - start))
		return false;
	out->data = (const uint8_t *)o->via.bin.ptr;
	out->len = (uint32_t)n;
	return true;
}

bool paxos_wire_version(const uint8_t *buf, size_t len, uint32_t *version)
{
	/* [magic, version, ...]: an array, the magic as a uint16, the version a positive fixint,
	 * as every encoder so far wrote them. */
	if (len < 5 || (buf[0] & 0xf0) != 0x90 || buf[1] != 0xcd ||
	    buf[2] != (PAXOS_WIRE_MAGIC >> 8) || buf[3] != (PAXOS_WIRE_MAGIC & 0xff) ||
	    buf[4] > 0x7f)
		return false;
	*version = buf[4];
	return true;
}

/* An accepted message's value, or nil for one that leaves it out (valueless). */
static bool get_accepted_value(const msgpack_object *o, const uint8_t *buf, size_t len,
			       struct paxos_accepted *a)
{
	a->valueless = o->type == MSGPACK_OBJECT_NIL;
	if (a->valueless) {
		a->value = (struct paxos_value){NULL, 0};
		return true;
	}
	return get_value(o, buf, len, &a->value);
}

static bool decode_header(const msgpack_object *o, struct paxos_header *h)
{
	const msgpack_object *f = o->via.array.ptr;
	uint32_t magic, version, role;

	if (o->via.array.size != HEADER_FIELDS)
		return false;
	if (!get_u32(&f[0], &magic) || magic != PAXOS_WIRE_MAGIC)
		return false;
	if (!get_u32(&f[1], &version) || version != PAXOS_WIRE_VERSION)
		return false;
	if (!get_u32(&f[2], &role) || role >= PAXOS_ROLE_COUNT)
		return false;
	h->role = (enum paxos_role)role;
	return get_u32(&f[3], &h->sender_id);
}

static bool decode_message(const msgpack_object *o, const uint8_t *buf, size_t len,
			   struct paxos_message *m)
{
	const msgpack_object *f = o->via.array.ptr;
	uint32_t type;

	if (o->via.array.size < 1 || !get_u32(&f[0], &type))
		return false;
	/* A client value may leave its submission id out. */
	if (type < PAXOS_MSG_PREPARE || type > PAXOS_MSG_TYPE_MAX ||
	    (o->via.array.size != field_count[type] &&
	     (type != PAXOS_MSG_CLIENT_VALUE || o->via.array.size != field_count[type] - 1)))
		return false;
	m->type = (enum paxos_msg_type)type;
	switch (m->type) {
	case PAXOS_MSG_PREPARE:
		return get_u64(&f[1], &m->u.prepare.iid) && get_u64(&f[2], &m->u.prepare.ballot);
	case PAXOS_MSG_PROMISE:
		return get_u64(&f[1], &m->u.promise.iid) && get_u64(&f[2], &m->u.promise.ballot) &&
		       get_u64(&f[3], &m->u.promise.value_ballot) &&
		       get_value(&f[4], buf, len, &m->u.promise.value) &&
		       get_acceptor_id(&f[5], &m->u.promise.acceptor_id);
	case PAXOS_MSG_ACCEPT:
		return get_u64(&f[1], &m->u.accept.iid) && get_u64(&f[2], &m->u.accept.ballot) &&
		       get_value(&f[3], buf, len, &m->u.accept.value);
	case PAXOS_MSG_ACCEPTED:
		return get_u64(&f[1], &m->u.accepted.iid) &&
		       get_u64(&f[2], &m->u.accepted.ballot) &&
		       get_accepted_value(&f[3], buf, len, &m->u.accepted) &&
		       get_acceptor_id(&f[4], &m->u.accepted.acceptor_id) &&
		       get_bool(&f[5], &m->u.accepted.final) &&
		       get_u64(&f[6], &m->u.accepted.generation);
	case PAXOS_MSG_REJECT:
		return get_u64(&f[1], &m->u.reject.iid) && get_u64(&f[2], &m->u.reject.ballot) &&
		       get_acceptor_id(&f[3], &m->u.reject.acceptor_id);
	case PAXOS_MSG_REPEAT:
		return get_u64(&f[1], &m->u.repeat.from) && get_u64(&f[2], &m->u.repeat.to) &&
		       m->u.repeat.from <= m->u.repeat.to;
	case PAXOS_MSG_REPAIR:
		return get_u64(&f[1], &m->u.repair.from) && get_u64(&f[2], &m->u.repair.to) &&
		       m->u.repair.from <= m->u.repair.to;
	case PAXOS_MSG_ACCEPTOR_HELLO:
		return get_acceptor_id(&f[1], &m->u.acceptor_hello.acceptor_id) &&
		       get_u64(&f[2], &m->u.acceptor_hello.incarnation) &&
		       get_bool(&f[3], &m->u.acceptor_hello.recovering) &&
		       get_u64(&f[4], &m->u.acceptor_hello.age) &&
		       get_u64(&f[5], &m->u.acceptor_hello.echo) &&
		       get_u64(&f[6], &m->u.acceptor_hello.generation);
	case PAXOS_MSG_RECOVER_ASK:
		return get_acceptor_id(&f[1], &m->u.recover_ask.acceptor_id) &&
		       get_u64(&f[2], &m->u.recover_ask.incarnation);
	case PAXOS_MSG_RECOVER_INFO:
		return get_u32(&f[1], &m->u.recover_info.role) &&
		       get_u32(&f[2], &m->u.recover_info.sender_id) &&
		       get_acceptor_id(&f[3], &m->u.recover_info.acceptor_id) &&
		       get_u64(&f[4], &m->u.recover_info.incarnation) &&
		       get_u64(&f[5], &m->u.recover_info.highest_iid) &&
		       get_u64(&f[6], &m->u.recover_info.highest_ballot) &&
		       get_u64(&f[7], &m->u.recover_info.generation) &&
		       get_bool(&f[8], &m->u.recover_info.founder) &&
		       recover_info_ok(&m->u.recover_info);
	case PAXOS_MSG_TRIM:
		return get_u64(&f[1], &m->u.trim.iid);
	case PAXOS_MSG_ACCEPTOR_STATE:
		return get_acceptor_id(&f[1], &m->u.acceptor_state.acceptor_id) &&
		       get_u64(&f[2], &m->u.acceptor_state.highest_accepted) &&
		       get_u64(&f[3], &m->u.acceptor_state.trim_iid) &&
		       get_u64(&f[4], &m->u.acceptor_state.generation) &&
		       get_bool(&f[5], &m->u.acceptor_state.recovering);
	case PAXOS_MSG_CLIENT_VALUE:
		m->u.client_value.id = 0;
		return get_value(&f[1], buf, len, &m->u.client_value.value) &&
		       (o->via.array.size < 3 || get_u64(&f[2], &m->u.client_value.id));
	case PAXOS_MSG_TRIMMED:
		return get_acceptor_id(&f[1], &m->u.trimmed.acceptor_id) &&
		       get_u64(&f[2], &m->u.trimmed.iid) &&
		       get_u64(&f[3], &m->u.trimmed.generation);
	case PAXOS_MSG_HEARTBEAT:
		return get_u32(&f[1], &m->u.heartbeat.proposer_id) &&
		       m->u.heartbeat.proposer_id < PAXOS_MAX_PROPOSERS &&
		       get_u64(&f[2], &m->u.heartbeat.next_iid);
	case PAXOS_MSG_LEADER:
		return get_u32(&f[1], &m->u.leader.leader_id) &&
		       get_u64(&f[2], &m->u.leader.sent_at) &&
		       (m->u.leader.leader_id < PAXOS_MAX_PROPOSERS ||
			m->u.leader.leader_id == PAXOS_LEADER_AUTO);
	case PAXOS_MSG_REFUSED:
		return get_u32(&f[1], &m->u.refused.proposer_id) &&
		       get_u32(&f[2], &m->u.refused.dropped) &&
		       get_value(&f[3], buf, len, &m->u.refused.hashes) &&
		       refused_ok(&m->u.refused);
	case PAXOS_MSG_CONFIG_ASK:
		return get_u64(&f[1], &m->u.config_ask.nonce);
	case PAXOS_MSG_CONFIG_INFO:
		return get_acceptor_id(&f[1], &m->u.config_info.acceptor_id) &&
		       get_u64(&f[2], &m->u.config_info.nonce) &&
		       get_bool(&f[3], &m->u.config_info.settled) &&
		       get_value(&f[4], buf, len, &m->u.config_info.history) &&
		       config_info_ok(&m->u.config_info);
	case PAXOS_MSG_CONFIG_PUSH:
		return get_u32(&f[1], &m->u.config_push.proposer_id) &&
		       get_bool(&f[2], &m->u.config_push.settled) &&
		       get_value(&f[3], buf, len, &m->u.config_push.history) &&
		       config_push_ok(&m->u.config_push);
	}
	return false;
}

int paxos_decode(struct paxos_decoder *d, const uint8_t *buf, size_t len, struct paxos_header *h,
		 struct paxos_message *msgs, size_t max, size_t *n)
{
	struct paxos_header header;
	const msgpack_object *o;
	size_t off = 0, count = 0;

	*n = 0;
	if (d->unpacked.zone == NULL)
		d->unpacked.zone = msgpack_zone_new(MSGPACK_ZONE_CHUNK_SIZE);
	if (d->unpacked.zone == NULL)
		return PAXOS_E_NOMEM;
	if (buf == NULL)
		return PAXOS_E_MALFORMED;
	if (max > PAXOS_MAX_MESSAGES_PER_DATAGRAM)
		max = PAXOS_MAX_MESSAGES_PER_DATAGRAM;

	o = next_array(d, buf, len, &off);
	if (o == NULL || !decode_header(o, &header))
		return PAXOS_E_MALFORMED;
	while (off < len) {
		if (count == max)
			return PAXOS_E_MALFORMED;
		o = next_array(d, buf, len, &off);
		if (o == NULL || !decode_message(o, buf, len, &msgs[count]))
			return PAXOS_E_MALFORMED;
		count++;
	}
	*h = header;
	*n = count;
	return PAXOS_OK;
}

/* paxos/version.h: the codec is where the wire version lives. */
uint32_t paxos_wire_format_version(void)
{
	return PAXOS_WIRE_VERSION;
}
