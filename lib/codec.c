/*
 * Wire codec: paxos messages to and from msgpack datagrams (format in codec.h), encoded and
 * decoded by hand on the hot path (every role decodes every datagram it hears; msgpack-c's
 * generic unpacker was the largest single cost of the acceptors and the proposer).
 */
#include "codec.h"

#include <string.h>

/* Fields per message array, the type included; indexed by type. */
static const uint32_t field_count[PAXOS_MSG_TYPE_MAX + 1] = {
    [PAXOS_MSG_PREPARE] = 3,  [PAXOS_MSG_PROMISE] = 6,        [PAXOS_MSG_ACCEPT] = 4,
    [PAXOS_MSG_ACCEPTED] = 6, [PAXOS_MSG_REJECT] = 4,         [PAXOS_MSG_REPEAT] = 3,
    [PAXOS_MSG_TRIM] = 2,     [PAXOS_MSG_ACCEPTOR_STATE] = 4, [PAXOS_MSG_CLIENT_VALUE] = 2,
    [PAXOS_MSG_TRIMMED] = 3,  [PAXOS_MSG_HEARTBEAT] = 3,      [PAXOS_MSG_LEADER] = 2,
};

#define HEADER_FIELDS 4u

/* The widest message array. */
#define MAX_FIELDS 6u

/* ---- encoding ---- */

/*
 * The msgpack encodings are written by hand: msgpack-c's packer calls a write callback per
 * field, which cost more than the rest of encoding. The bytes are the ones msgpack-c writes
 * (smallest integer form, bin for values), so any msgpack reader still reads them.
 */

/* Bytes of an unsigned integer in its smallest msgpack form. */
static size_t uint_size(uint64_t x)
{
	if (x < 0x80)
		return 1;
	if (x <= UINT8_MAX)
		return 2;
	if (x <= UINT16_MAX)
		return 3;
	if (x <= UINT32_MAX)
		return 5;
	return 9;
}

static uint8_t *put_be(uint8_t *p, uint64_t x, size_t bytes)
{
	for (size_t i = bytes; i-- > 0; x >>= 8)
		p[i] = (uint8_t)x;
	return p + bytes;
}

static uint8_t *put_uint(uint8_t *p, uint64_t x)
{
	if (x < 0x80) {
		*p = (uint8_t)x;
		return p + 1;
	}
	if (x <= UINT8_MAX) {
		*p = 0xcc;
		return put_be(p + 1, x, 1);
	}
	if (x <= UINT16_MAX) {
		*p = 0xcd;
		return put_be(p + 1, x, 2);
	}
	if (x <= UINT32_MAX) {
		*p = 0xce;
		return put_be(p + 1, x, 4);
	}
	*p = 0xcf;
	return put_be(p + 1, x, 8);
}

static size_t bin_size(const struct paxos_value *v)
{
	size_t head = v->len <= UINT8_MAX ? 2 : v->len <= UINT16_MAX ? 3 : 5;
	return head + v->len;
}

static uint8_t *put_bin(uint8_t *p, const struct paxos_value *v)
{
	if (v->len <= UINT8_MAX) {
		*p = 0xc4;
		p = put_be(p + 1, v->len, 1);
	} else if (v->len <= UINT16_MAX) {
		*p = 0xc5;
		p = put_be(p + 1, v->len, 2);
	} else {
		*p = 0xc6;
		p = put_be(p + 1, v->len, 4);
	}
	if (v->len)
		memcpy(p, v->data, v->len);
	return p + v->len;
}

static uint8_t *put_bool(uint8_t *p, bool b)
{
	*p = b ? 0xc3 : 0xc2;
	return p + 1;
}

/* Field counts are below 16: a fixarray. */
static uint8_t *put_array(uint8_t *p, uint32_t n)
{
	*p = (uint8_t)(0x90 | n);
	return p + 1;
}

static bool value_ok(const struct paxos_value *v)
{
	return v->len == 0 || v->data != NULL;
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
		return value_ok(&m->u.accepted.value) &&
		       m->u.accepted.acceptor_id < PAXOS_MAX_ACCEPTORS;
	case PAXOS_MSG_REJECT:
		return m->u.reject.acceptor_id < PAXOS_MAX_ACCEPTORS;
	case PAXOS_MSG_REPEAT:
		return m->u.repeat.from <= m->u.repeat.to;
	case PAXOS_MSG_ACCEPTOR_STATE:
		return m->u.acceptor_state.acceptor_id < PAXOS_MAX_ACCEPTORS;
	case PAXOS_MSG_CLIENT_VALUE:
		return value_ok(&m->u.client_value.value);
	case PAXOS_MSG_TRIMMED:
		return m->u.trimmed.acceptor_id < PAXOS_MAX_ACCEPTORS;
	case PAXOS_MSG_HEARTBEAT:
		return m->u.heartbeat.proposer_id < PAXOS_MAX_PROPOSERS;
	case PAXOS_MSG_LEADER:
		return m->u.leader.leader_id < PAXOS_MAX_PROPOSERS ||
		       m->u.leader.leader_id == PAXOS_LEADER_AUTO;
	}
	return false;
}

/* Encoded size of m. */
static size_t message_size(const struct paxos_message *m)
{
	size_t n = 2; /* array and type */
	switch (m->type) {
	case PAXOS_MSG_PREPARE:
		return n + uint_size(m->u.prepare.iid) + uint_size(m->u.prepare.ballot);
	case PAXOS_MSG_PROMISE:
		return n + uint_size(m->u.promise.iid) + uint_size(m->u.promise.ballot) +
		       uint_size(m->u.promise.value_ballot) + bin_size(&m->u.promise.value) +
		       uint_size(m->u.promise.acceptor_id);
	case PAXOS_MSG_ACCEPT:
		return n + uint_size(m->u.accept.iid) + uint_size(m->u.accept.ballot) +
		       bin_size(&m->u.accept.value);
	case PAXOS_MSG_ACCEPTED:
		return n + uint_size(m->u.accepted.iid) + uint_size(m->u.accepted.ballot) +
		       bin_size(&m->u.accepted.value) + uint_size(m->u.accepted.acceptor_id) + 1;
	case PAXOS_MSG_REJECT:
		return n + uint_size(m->u.reject.iid) + uint_size(m->u.reject.ballot) +
		       uint_size(m->u.reject.acceptor_id);
	case PAXOS_MSG_REPEAT:
		return n + uint_size(m->u.repeat.from) + uint_size(m->u.repeat.to);
	case PAXOS_MSG_TRIM:
		return n + uint_size(m->u.trim.iid);
	case PAXOS_MSG_ACCEPTOR_STATE:
		return n + uint_size(m->u.acceptor_state.acceptor_id) +
		       uint_size(m->u.acceptor_state.highest_accepted) +
		       uint_size(m->u.acceptor_state.trim_iid);
	case PAXOS_MSG_CLIENT_VALUE:
		return n + bin_size(&m->u.client_value.value);
	case PAXOS_MSG_TRIMMED:
		return n + uint_size(m->u.trimmed.acceptor_id) + uint_size(m->u.trimmed.iid);
	case PAXOS_MSG_HEARTBEAT:
		return n + uint_size(m->u.heartbeat.proposer_id) +
		       uint_size(m->u.heartbeat.next_iid);
	case PAXOS_MSG_LEADER:
		return n + uint_size(m->u.leader.leader_id);
	}
	return SIZE_MAX;
}

/* Writes m at p, which has room for message_size(m) bytes; returns the end. */
static uint8_t *put_message(uint8_t *p, const struct paxos_message *m)
{
	p = put_array(p, field_count[m->type]);
	p = put_uint(p, (uint32_t)m->type);
	switch (m->type) {
	case PAXOS_MSG_PREPARE:
		p = put_uint(p, m->u.prepare.iid);
		return put_uint(p, m->u.prepare.ballot);
	case PAXOS_MSG_PROMISE:
		p = put_uint(p, m->u.promise.iid);
		p = put_uint(p, m->u.promise.ballot);
		p = put_uint(p, m->u.promise.value_ballot);
		p = put_bin(p, &m->u.promise.value);
		return put_uint(p, m->u.promise.acceptor_id);
	case PAXOS_MSG_ACCEPT:
		p = put_uint(p, m->u.accept.iid);
		p = put_uint(p, m->u.accept.ballot);
		return put_bin(p, &m->u.accept.value);
	case PAXOS_MSG_ACCEPTED:
		p = put_uint(p, m->u.accepted.iid);
		p = put_uint(p, m->u.accepted.ballot);
		p = put_bin(p, &m->u.accepted.value);
		p = put_uint(p, m->u.accepted.acceptor_id);
		return put_bool(p, m->u.accepted.final);
	case PAXOS_MSG_REJECT:
		p = put_uint(p, m->u.reject.iid);
		p = put_uint(p, m->u.reject.ballot);
		return put_uint(p, m->u.reject.acceptor_id);
	case PAXOS_MSG_REPEAT:
		p = put_uint(p, m->u.repeat.from);
		return put_uint(p, m->u.repeat.to);
	case PAXOS_MSG_TRIM:
		return put_uint(p, m->u.trim.iid);
	case PAXOS_MSG_ACCEPTOR_STATE:
		p = put_uint(p, m->u.acceptor_state.acceptor_id);
		p = put_uint(p, m->u.acceptor_state.highest_accepted);
		return put_uint(p, m->u.acceptor_state.trim_iid);
	case PAXOS_MSG_CLIENT_VALUE:
		return put_bin(p, &m->u.client_value.value);
	case PAXOS_MSG_TRIMMED:
		p = put_uint(p, m->u.trimmed.acceptor_id);
		return put_uint(p, m->u.trimmed.iid);
	case PAXOS_MSG_HEARTBEAT:
		p = put_uint(p, m->u.heartbeat.proposer_id);
		return put_uint(p, m->u.heartbeat.next_iid);
	case PAXOS_MSG_LEADER:
		return put_uint(p, m->u.leader.leader_id);
	}
	return p;
}

void paxos_encoder_init(struct paxos_encoder *e, uint8_t *buf, size_t cap,
			const struct paxos_header *h)
{
	e->buf = buf;
	e->cap = cap;
	e->len = 0;
	e->count = 0;
	e->overflow = false;
	uint8_t head[1 + 4 * 9];
	uint8_t *p = put_array(head, HEADER_FIELDS);
	p = put_uint(p, PAXOS_WIRE_MAGIC);
	p = put_uint(p, PAXOS_WIRE_VERSION);
	p = put_uint(p, (uint32_t)h->role);
	p = put_uint(p, h->sender_id);
	size_t n = (size_t)(p - head);
	if (n > cap) {
		/* No room for the header: an empty buffer that refuses every message. */
		e->cap = 0;
	} else {
		memcpy(buf, head, n);
		e->len = n;
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
	size_t size = message_size(m);
	if (e->cap == 0 || size > e->cap - e->len)
		return PAXOS_E_FULL;
	e->len = (size_t)(put_message(e->buf + e->len, m) - e->buf);
	e->count++;
	return PAXOS_OK;
}

/* ---- decoding ---- */

/*
 * Decoding is hand-written too, straight from the bytes: each field is read as the type it
 * must have, every length checked against the end, nothing allocated, values pointing into
 * the datagram (zero copy). It accepts what msgpack-c would decode to the same objects: any
 * integer form holding a non-negative value, fixarray/array16/array32 headers.
 */
struct reader {
	const uint8_t *p, *end;
};

static uint64_t get_be(const uint8_t *p, size_t bytes)
{
	uint64_t x = 0;
	for (size_t i = 0; i < bytes; i++)
		x = x << 8 | p[i];
	return x;
}

/* Takes `bytes` bytes after the type byte; false if they run past the end. */
static bool take(struct reader *r, size_t bytes, const uint8_t **at)
{
	if ((size_t)(r->end - r->p) < 1 + bytes)
		return false;
	*at = r->p + 1;
	r->p += 1 + bytes;
	return true;
}

static bool read_array(struct reader *r, uint32_t *n)
{
	const uint8_t *at;
	if (r->p == r->end)
		return false;
	uint8_t b = *r->p;
	if (b >= 0x90 && b <= 0x9f) {
		r->p++;
		*n = b & 0x0fu;
		return true;
	}
	if (b == 0xdc && take(r, 2, &at)) {
		*n = (uint32_t)get_be(at, 2);
		return true;
	}
	if (b == 0xdd && take(r, 4, &at)) {
		*n = (uint32_t)get_be(at, 4);
		return true;
	}
	return false;
}

/* Any integer form with a value >= 0 (msgpack-c reads signed forms of such values as
 * positive integers too). */
static bool get_u64(struct reader *r, uint64_t *out)
{
	const uint8_t *at;
	if (r->p == r->end)
		return false;
	uint8_t b = *r->p;
	if (b <= 0x7f) {
		r->p++;
		*out = b;
		return true;
	}
	size_t bytes;
	bool is_signed = false;
	switch (b) {
	case 0xcc:
		bytes = 1;
		break;
	case 0xcd:
		bytes = 2;
		break;
	case 0xce:
		bytes = 4;
		break;
	case 0xcf:
		bytes = 8;
		break;
	case 0xd0:
		bytes = 1, is_signed = true;
		break;
	case 0xd1:
		bytes = 2, is_signed = true;
		break;
	case 0xd2:
		bytes = 4, is_signed = true;
		break;
	case 0xd3:
		bytes = 8, is_signed = true;
		break;
	default:
		return false;
	}
	if (!take(r, bytes, &at))
		return false;
	if (is_signed && (at[0] & 0x80))
		return false; /* negative */
	*out = get_be(at, bytes);
	return true;
}

static bool get_u32(struct reader *r, uint32_t *out)
{
	uint64_t x;
	if (!get_u64(r, &x) || x > UINT32_MAX)
		return false;
	*out = (uint32_t)x;
	return true;
}

static bool get_acceptor_id(struct reader *r, uint32_t *out)
{
	return get_u32(r, out) && *out < PAXOS_MAX_ACCEPTORS;
}

static bool get_bool(struct reader *r, bool *out)
{
	if (r->p == r->end || (*r->p != 0xc2 && *r->p != 0xc3))
		return false;
	*out = *r->p++ == 0xc3;
	return true;
}

/* Zero copy: the value points into the datagram. */
static bool get_value(struct reader *r, struct paxos_value *out)
{
	const uint8_t *at;
	if (r->p == r->end)
		return false;
	size_t head;
	switch (*r->p) {
	case 0xc4:
		head = 1;
		break;
	case 0xc5:
		head = 2;
		break;
	case 0xc6:
		head = 4;
		break;
	default:
		return false;
	}
	if (!take(r, head, &at))
		return false;
	uint64_t n = get_be(at, head);
	if (n > (uint64_t)(r->end - r->p))
		return false;
	out->data = r->p;
	out->len = (uint32_t)n;
	r->p += n;
	return true;
}

static bool decode_header(struct reader *r, struct paxos_header *h)
{
	uint32_t n, magic, version, role;

	if (!read_array(r, &n) || n != HEADER_FIELDS)
		return false;
	if (!get_u32(r, &magic) || magic != PAXOS_WIRE_MAGIC)
		return false;
	if (!get_u32(r, &version) || version != PAXOS_WIRE_VERSION)
		return false;
	if (!get_u32(r, &role) || role >= PAXOS_ROLE_COUNT)
		return false;
	h->role = (enum paxos_role)role;
	return get_u32(r, &h->sender_id);
}

static bool decode_message(struct reader *r, struct paxos_message *m)
{
	uint32_t n, type;

	if (!read_array(r, &n) || n < 1 || n > MAX_FIELDS || !get_u32(r, &type))
		return false;
	if (type < PAXOS_MSG_PREPARE || type > PAXOS_MSG_TYPE_MAX || n != field_count[type])
		return false;
	m->type = (enum paxos_msg_type)type;
	switch (m->type) {
	case PAXOS_MSG_PREPARE:
		return get_u64(r, &m->u.prepare.iid) && get_u64(r, &m->u.prepare.ballot);
	case PAXOS_MSG_PROMISE:
		return get_u64(r, &m->u.promise.iid) && get_u64(r, &m->u.promise.ballot) &&
		       get_u64(r, &m->u.promise.value_ballot) &&
		       get_value(r, &m->u.promise.value) &&
		       get_acceptor_id(r, &m->u.promise.acceptor_id);
	case PAXOS_MSG_ACCEPT:
		return get_u64(r, &m->u.accept.iid) && get_u64(r, &m->u.accept.ballot) &&
		       get_value(r, &m->u.accept.value);
	case PAXOS_MSG_ACCEPTED:
		return get_u64(r, &m->u.accepted.iid) && get_u64(r, &m->u.accepted.ballot) &&
		       get_value(r, &m->u.accepted.value) &&
		       get_acceptor_id(r, &m->u.accepted.acceptor_id) &&
		       get_bool(r, &m->u.accepted.final);
	case PAXOS_MSG_REJECT:
		return get_u64(r, &m->u.reject.iid) && get_u64(r, &m->u.reject.ballot) &&
		       get_acceptor_id(r, &m->u.reject.acceptor_id);
	case PAXOS_MSG_REPEAT:
		return get_u64(r, &m->u.repeat.from) && get_u64(r, &m->u.repeat.to) &&
		       m->u.repeat.from <= m->u.repeat.to;
	case PAXOS_MSG_TRIM:
		return get_u64(r, &m->u.trim.iid);
	case PAXOS_MSG_ACCEPTOR_STATE:
		return get_acceptor_id(r, &m->u.acceptor_state.acceptor_id) &&
		       get_u64(r, &m->u.acceptor_state.highest_accepted) &&
		       get_u64(r, &m->u.acceptor_state.trim_iid);
	case PAXOS_MSG_CLIENT_VALUE:
		return get_value(r, &m->u.client_value.value);
	case PAXOS_MSG_TRIMMED:
		return get_acceptor_id(r, &m->u.trimmed.acceptor_id) &&
		       get_u64(r, &m->u.trimmed.iid);
	case PAXOS_MSG_HEARTBEAT:
		return get_u32(r, &m->u.heartbeat.proposer_id) &&
		       m->u.heartbeat.proposer_id < PAXOS_MAX_PROPOSERS &&
		       get_u64(r, &m->u.heartbeat.next_iid);
	case PAXOS_MSG_LEADER:
		return get_u32(r, &m->u.leader.leader_id) &&
		       (m->u.leader.leader_id < PAXOS_MAX_PROPOSERS ||
			m->u.leader.leader_id == PAXOS_LEADER_AUTO);
	}
	return false;
}

void paxos_decoder_init(struct paxos_decoder *d)
{
	/* The hand-written decoder needs no state; the zone stays for API compatibility. */
	msgpack_unpacked_init(&d->unpacked);
	d->unpacked.zone = msgpack_zone_new(MSGPACK_ZONE_CHUNK_SIZE);
}

void paxos_decoder_destroy(struct paxos_decoder *d)
{
	msgpack_unpacked_destroy(&d->unpacked);
}

int paxos_decode(struct paxos_decoder *d, const uint8_t *buf, size_t len, struct paxos_header *h,
		 struct paxos_message *msgs, size_t max, size_t *n)
{
	struct paxos_header header;
	size_t count = 0;

	(void)d;
	*n = 0;
	if (buf == NULL)
		return PAXOS_E_MALFORMED;
	if (max > PAXOS_MAX_MESSAGES_PER_DATAGRAM)
		max = PAXOS_MAX_MESSAGES_PER_DATAGRAM;
	struct reader r = {buf, buf + len};
	if (!decode_header(&r, &header))
		return PAXOS_E_MALFORMED;
	while (r.p < r.end) {
		if (count == max || !decode_message(&r, &msgs[count]))
			return PAXOS_E_MALFORMED;
		count++;
	}
	*h = header;
	*n = count;
	return PAXOS_OK;
}
