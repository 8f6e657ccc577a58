/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wire codec: paxos messages to and from msgpack datagrams (format in codec.h, the messages'
 * fields in wire_schema.h).
 *
 * Decoding uses msgpack_unpack() with a zone the decoder owns and clears between objects.
 * msgpack_unpack_next() would be the obvious call, but in msgpack-c (4.x) it frees the
 * unpacked zone and allocates a fresh one on every call.
 */
#include "codec.h"

#include <paxos/membership.h>
#include <paxos/version.h>

#include <string.h>

#include "wire_schema.h"

/* ---- what the fields' kinds mean ---- */

/* Packing: WIRE_PACK_<kind>(pk, s, field) writes s->field. The helpers take pointers, so that
 * a kind that does not match its field's type is a compiler warning. */
static void pack_u64(msgpack_packer *pk, const uint64_t *v)
{
	msgpack_pack_uint64(pk, *v);
}

static void pack_u32(msgpack_packer *pk, const uint32_t *v)
{
	msgpack_pack_uint32(pk, *v);
}

static void pack_bool(msgpack_packer *pk, const bool *b)
{
	if (*b)
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

static void pack_value_or_nil(msgpack_packer *pk, const struct paxos_value *v, bool nil)
{
	if (nil)
		msgpack_pack_nil(pk);
	else
		pack_value(pk, v);
}

#define WIRE_PACK_U64(pk, s, f) pack_u64(pk, &(s)->f)
#define WIRE_PACK_U32(pk, s, f) pack_u32(pk, &(s)->f)
#define WIRE_PACK_ACCEPTOR(pk, s, f) pack_u32(pk, &(s)->f)
#define WIRE_PACK_PROPOSER(pk, s, f) pack_u32(pk, &(s)->f)
#define WIRE_PACK_BOOL(pk, s, f) pack_bool(pk, &(s)->f)
#define WIRE_PACK_VALUE(pk, s, f) pack_value(pk, &(s)->f)
#define WIRE_PACK_VALUE_OR_NIL(pk, s, f) pack_value_or_nil(pk, &(s)->f, (s)->valueless)
#define WIRE_PACK_OPT_U64(pk, s, f)                                                                \
	do {                                                                                       \
		if ((s)->f)                                                                        \
			pack_u64(pk, &(s)->f);                                                     \
	} while (0)

/* Reading: WIRE_GET_<kind>(o, s, field) takes object o into s->field if its type is right;
 * ranges are WIRE_OK's. */
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

static bool get_value_or_nil(const msgpack_object *o, const uint8_t *buf, size_t len,
			     struct paxos_value *out, bool *nil)
{
	*nil = o->type == MSGPACK_OBJECT_NIL;
	if (*nil) {
		*out = (struct paxos_value){NULL, 0};
		return true;
	}
	return get_value(o, buf, len, out);
}

/* An optional field past the array's end reads as 0. */
static bool get_opt_u64(const msgpack_object *o, const msgpack_object *end, uint64_t *out)
{
	if (o >= end) {
		*out = 0;
		return true;
	}
	return get_u64(o, out);
}

#define WIRE_GET_U64(o, s, f) get_u64(o, &(s)->f)
#define WIRE_GET_OPT_U64(o, s, f) get_opt_u64(o, end, &(s)->f)
#define WIRE_GET_U32(o, s, f) get_u32(o, &(s)->f)
#define WIRE_GET_ACCEPTOR(o, s, f) get_u32(o, &(s)->f)
#define WIRE_GET_PROPOSER(o, s, f) get_u32(o, &(s)->f)
#define WIRE_GET_BOOL(o, s, f) get_bool(o, &(s)->f)
#define WIRE_GET_VALUE(o, s, f) get_value(o, buf, len, &(s)->f)
#define WIRE_GET_VALUE_OR_NIL(o, s, f) get_value_or_nil(o, buf, len, &(s)->f, &(s)->valueless)

/* Checking: WIRE_OK_<kind>(s, field), whether s->field may go on the wire. The encoder and
 * the decoder both ask, so the encoder never builds a datagram the decoder would reject. */
static bool value_ok(const struct paxos_value *v)
{
	return v->len == 0 || v->data != NULL;
}

#define WIRE_OK_U64(s, f) true
#define WIRE_OK_OPT_U64(s, f) true
#define WIRE_OK_U32(s, f) true
#define WIRE_OK_ACCEPTOR(s, f) ((s)->f < PAXOS_MAX_ACCEPTORS)
#define WIRE_OK_PROPOSER(s, f) ((s)->f < PAXOS_MAX_PROPOSERS)
#define WIRE_OK_BOOL(s, f) true
#define WIRE_OK_VALUE(s, f) value_ok(&(s)->f)
#define WIRE_OK_VALUE_OR_NIL(s, f) ((s)->valueless || value_ok(&(s)->f))

/* Sizing: WIRE_MAX_<kind>, the most bytes a field takes, a value's bytes left out. */
#define WIRE_MAX_U64 9u
#define WIRE_MAX_OPT_U64 9u
#define WIRE_MAX_U32 5u
#define WIRE_MAX_ACCEPTOR 5u
#define WIRE_MAX_PROPOSER 5u
#define WIRE_MAX_BOOL 1u
#define WIRE_MAX_VALUE 5u
#define WIRE_MAX_VALUE_OR_NIL 5u

/* ---- what the messages' checks mean ---- */

static bool no_check(const void *s)
{
	(void)s;
	return true;
}

/* A range of chosen instances, or none (both 0: two optional fields, left off together). */
static bool accept_ok(const struct paxos_accept *a)
{
	return (a->chosen_from == 0) == (a->chosen_to == 0) && a->chosen_from <= a->chosen_to;
}

/* A range of instances at a leader's ballot: the word of an accept's chosen_from and
 * chosen_to, which never names instance 0 or ballot 0. */
static bool chosen_ok(const struct paxos_chosen *c)
{
	return c->ballot != 0 && c->from != 0 && c->from <= c->to;
}

static bool repeat_ok(const struct paxos_repeat *r)
{
	return r->from <= r->to;
}

static bool repair_ok(const struct paxos_repair *r)
{
	return r->from <= r->to;
}

static bool leader_ok(const struct paxos_leader *l)
{
	return l->leader_id < PAXOS_MAX_PROPOSERS || l->leader_id == PAXOS_LEADER_AUTO;
}

static bool recover_info_ok(const struct paxos_recover_info *r)
{
	return (r->role == PAXOS_ROLE_ACCEPTOR && r->sender_id < PAXOS_MAX_ACCEPTORS) ||
	       (r->role == PAXOS_ROLE_PROPOSER && r->sender_id < PAXOS_MAX_PROPOSERS);
}

/* A history within bounds: the decoder takes no more (paxos_membership_decode_history
 * checks the rest where it is used). */
static bool history_ok(const struct paxos_value *history)
{
	return history->len > 0 && history->len <= PAXOS_MEMBERSHIP_ENCODED_MAX;
}

static bool config_info_ok(const struct paxos_config_info *c)
{
	return history_ok(&c->history);
}

static bool config_push_ok(const struct paxos_config_push *c)
{
	return history_ok(&c->history);
}

static bool refused_ok(const struct paxos_refused *r)
{
	return r->hashes.len % 8 == 0 && r->hashes.len <= 8 * PAXOS_REFUSED_HASHES_MAX;
}

static bool change_ok(const struct paxos_change *c)
{
	return c->command.len >= PAXOS_MEMBERSHIP_COMMAND_LEN &&
	       c->command.len <= PAXOS_MEMBERSHIP_COMMAND_MAX &&
	       c->mac.len == PAXOS_CHANGE_MAC_BYTES;
}

static bool snapshot_offer_ok(const struct paxos_snapshot_offer *o)
{
	return o->server != 0;
}

/* The bytes lie within the snapshot. */
static bool snapshot_chunk_ok(const struct paxos_snapshot_chunk *c)
{
	return c->offset <= c->total && c->bytes.len <= c->total - c->offset;
}

/* ---- what the schema expands to ---- */

#define HEADER_FIELDS 4u
/* The header's most bytes: array, magic, version (spoken down: a uint16), role, sender id. */
#define HEADER_MAX (1u + 3u + 3u + 1u + WIRE_MAX_U32)

#define WIRE_ONE(kind, field, since) +1u
#define WIRE_FIELD_COUNT(T) (1u WIRE_##T(WIRE_ONE)) /* the type included */
/* The count in a datagram of wire version `version` (a variable where it is used). */
#define WIRE_ONE_AT(kind, field, since) +((since) <= version)
#define WIRE_FIELD_COUNT_AT(T) (1u WIRE_##T(WIRE_ONE_AT))
/* Optional fields (OPT_): how many of a message's the version has, and how many of s's are
 * left off the wire. */
#define WIRE_IS_OPTIONAL_U64 0u
#define WIRE_IS_OPTIONAL_U32 0u
#define WIRE_IS_OPTIONAL_ACCEPTOR 0u
#define WIRE_IS_OPTIONAL_PROPOSER 0u
#define WIRE_IS_OPTIONAL_BOOL 0u
#define WIRE_IS_OPTIONAL_VALUE 0u
#define WIRE_IS_OPTIONAL_VALUE_OR_NIL 0u
#define WIRE_IS_OPTIONAL_OPT_U64 1u
#define WIRE_OPTIONAL_AT(kind, field, since) +((since) <= version ? WIRE_IS_OPTIONAL_##kind : 0u)
#define WIRE_OPTIONAL_COUNT_AT(T) (0u WIRE_##T(WIRE_OPTIONAL_AT))
#define WIRE_ABSENT_U64(s, f) 0u
#define WIRE_ABSENT_U32(s, f) 0u
#define WIRE_ABSENT_ACCEPTOR(s, f) 0u
#define WIRE_ABSENT_PROPOSER(s, f) 0u
#define WIRE_ABSENT_BOOL(s, f) 0u
#define WIRE_ABSENT_VALUE(s, f) 0u
#define WIRE_ABSENT_VALUE_OR_NIL(s, f) 0u
#define WIRE_ABSENT_OPT_U64(s, f) ((s)->f == 0 ? 1u : 0u)
#define WIRE_ABSENT_AT(kind, field, since) +((since) <= version ? WIRE_ABSENT_##kind(s, field) : 0u)

#define WIRE_PACK_FIELD(kind, field, since)                                                        \
	if ((since) <= version)                                                                    \
		WIRE_PACK_##kind(pk, s, field);
/* A field the datagram's version lacks reads as 0. */
#define WIRE_GET_FIELD(kind, field, since)                                                         \
	&&((since) <= version ? WIRE_GET_##kind(o++, s, field)                                     \
			      : (memset(&(s)->field, 0, sizeof((s)->field)), true))
#define WIRE_OK_FIELD(kind, field, since) &&WIRE_OK_##kind(s, field)
#define WIRE_MAX_FIELD(kind, field, since) +WIRE_MAX_##kind

/* Per message: whether it may go on the wire, its packing in wire version `version`, its
 * decoding from the fields f[0..count) of its array (f[0] is the type, already read), of a
 * datagram of that version. */
#define WIRE_FUNCTIONS(T, member, check, since)                                                    \
	static bool ok_##member(const struct paxos_message *m)                                     \
	{                                                                                          \
		const struct paxos_##member *s = &m->u.member;                                     \
		return true WIRE_##T(WIRE_OK_FIELD) && check(s);                                   \
	}                                                                                          \
	static void pack_##member(msgpack_packer *pk, const struct paxos_message *m,               \
				  uint32_t version)                                                \
	{                                                                                          \
		const struct paxos_##member *s = &m->u.member;                                     \
		msgpack_pack_array(pk, WIRE_FIELD_COUNT_AT(T) - (0u WIRE_##T(WIRE_ABSENT_AT)));    \
		msgpack_pack_uint32(pk, (uint32_t)PAXOS_MSG_##T);                                  \
		WIRE_##T(WIRE_PACK_FIELD)                                                          \
	}                                                                                          \
	static bool decode_##member(const msgpack_object *f, uint32_t count, const uint8_t *buf,   \
				    size_t len, uint32_t version, struct paxos_message *m)         \
	{                                                                                          \
		struct paxos_##member *s = &m->u.member;                                           \
		const msgpack_object *o = f + 1, *end = f + count;                                 \
		(void)buf;                                                                         \
		(void)len;                                                                         \
		(void)end;                                                                         \
		return count <= WIRE_FIELD_COUNT_AT(T) &&                                          \
		       count + WIRE_OPTIONAL_COUNT_AT(T) >= WIRE_FIELD_COUNT_AT(T)                 \
								WIRE_##T(WIRE_GET_FIELD) &&        \
		       ok_##member(m);                                                             \
	}
WIRE_MESSAGES(WIRE_FUNCTIONS)

struct wire_message {
	uint32_t since; /* the first wire version with it; 0: no such type */
	bool (*ok)(const struct paxos_message *m);
	void (*pack)(msgpack_packer *pk, const struct paxos_message *m, uint32_t version);
	bool (*decode)(const msgpack_object *f, uint32_t count, const uint8_t *buf, size_t len,
		       uint32_t version, struct paxos_message *m);
};

#define WIRE_ENTRY(T, member, check, since)                                                        \
	[PAXOS_MSG_##T] = {since, ok_##member, pack_##member, decode_##member},
static const struct wire_message wire[PAXOS_MSG_TYPE_MAX + 1] = {WIRE_MESSAGES(WIRE_ENTRY)};

#define WIRE_COUNT_MESSAGE(T, member, check, since) +1
#define WIRE_SINCE_OK(T, member, check, since)                                                     \
	_Static_assert((since) >= PAXOS_WIRE_VERSION_MIN && (since) <= PAXOS_WIRE_VERSION,         \
		       #T " comes with a version this codec speaks");
WIRE_MESSAGES(WIRE_SINCE_OK)
_Static_assert((0 WIRE_MESSAGES(WIRE_COUNT_MESSAGE)) == PAXOS_MSG_TYPE_MAX,
	       "WIRE_MESSAGES lists every message type");

/* The widest array we ever decode, as the size of a union with an array of each width; bounds
 * what msgpack allocates per object. */
#define WIRE_WIDTH(T, member, check, since) char member[WIRE_FIELD_COUNT(T)];
union wire_widths {
	WIRE_MESSAGES(WIRE_WIDTH)
	char header[HEADER_FIELDS];
};
#define MAX_FIELDS ((uint32_t)sizeof(union wire_widths))
_Static_assert(MAX_FIELDS <= 15, "every array is a fixarray");
_Static_assert(MAX_FIELDS * sizeof(msgpack_object) <= MSGPACK_ZONE_CHUNK_SIZE,
	       "one array fits in the decoder zone's first chunk");

/* PAXOS_WIRE_OVERHEAD holds the header and any message that carries a value but the value's
 * bytes: array and type, then the fields at their widest. */
#define WIRE_CARRIES_U64 0
#define WIRE_CARRIES_OPT_U64 0
#define WIRE_CARRIES_U32 0
#define WIRE_CARRIES_ACCEPTOR 0
#define WIRE_CARRIES_PROPOSER 0
#define WIRE_CARRIES_BOOL 0
#define WIRE_CARRIES_VALUE 1
#define WIRE_CARRIES_VALUE_OR_NIL 1
#define WIRE_CARRIES_FIELD(kind, field, since) || WIRE_CARRIES_##kind
#define WIRE_FITS(T, member, check, since)                                                         \
	_Static_assert(!(0 WIRE_##T(WIRE_CARRIES_FIELD)) ||                                        \
			   HEADER_MAX + 2u WIRE_##T(WIRE_MAX_FIELD) <=                             \
			       PAXOS_WIRE_OVERHEAD + (PAXOS_MSG_##T == PAXOS_MSG_SNAPSHOT_CHUNK    \
							  ? PAXOS_SNAPSHOT_CHUNK_EXTRA             \
							  : 0u),                                   \
		       #T " fits in PAXOS_WIRE_OVERHEAD");
WIRE_MESSAGES(WIRE_FITS)

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

/* Whether the decoder would accept m. */
static bool message_ok(const struct paxos_message *m)
{
	return (unsigned)m->type <= PAXOS_MSG_TYPE_MAX && wire[m->type].ok != NULL &&
	       wire[m->type].ok(m);
}

void paxos_encoder_init(struct paxos_encoder *e, uint8_t *buf, size_t cap,
			const struct paxos_header *h)
{
	e->buf = buf;
	e->cap = cap;
	e->len = 0;
	e->count = 0;
	e->overflow = false;
	e->version = h->version >= PAXOS_WIRE_VERSION_MIN && h->version < PAXOS_WIRE_VERSION
			 ? h->version
			 : PAXOS_WIRE_VERSION;
	msgpack_packer_init(&e->pk, e, append);

	msgpack_pack_array(&e->pk, HEADER_FIELDS);
	msgpack_pack_uint32(&e->pk, PAXOS_WIRE_MAGIC);
	/* The version as codec.h's paxos_wire_speech says; msgpack_pack_uint32 writes the
	 * smallest form. */
	uint8_t v = (uint8_t)e->version;
	if (e->version == PAXOS_WIRE_VERSION || h->speech == PAXOS_WIRE_NATIVE)
		msgpack_pack_uint32(&e->pk, e->version);
	else if (h->speech == PAXOS_WIRE_DOWN)
		append(e, (const char[]){(char)0xcc, (char)v}, 2);
	else
		append(e, (const char[]){(char)0xcd, 0, (char)v}, 3);
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
	if (!message_ok(m) || wire[m->type].since > e->version)
		return PAXOS_E_INVALID;
	/* The decoder rejects datagrams with more messages, so they do not "fit" either. */
	if (e->count >= PAXOS_MAX_MESSAGES_PER_DATAGRAM)
		return PAXOS_E_FULL;

	size_t before = e->len;
	e->overflow = false;
	/* Rebind in case the encoder struct was moved since init. */
	msgpack_packer_init(&e->pk, e, append);
	wire[m->type].pack(&e->pk, m, e->version);
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

/* For the type bytes 0xc0..0xdf: the bytes before a scalar's body (type byte, length field,
 * an ext's type; fixext and fixed-width numbers count whole) and the width of the big-endian
 * length field after the type byte. head 0: not a scalar (0xc1, arrays, maps). */
static const struct {
	uint8_t head, len_bytes;
} scalar_heads[0x20] = {
    [0xc0 - 0xc0] = {1, 0},  /* nil */
    [0xc2 - 0xc0] = {1, 0},  /* false */
    [0xc3 - 0xc0] = {1, 0},  /* true */
    [0xc4 - 0xc0] = {2, 1},  /* bin 8 */
    [0xc5 - 0xc0] = {3, 2},  /* bin 16 */
    [0xc6 - 0xc0] = {5, 4},  /* bin 32 */
    [0xc7 - 0xc0] = {3, 1},  /* ext 8: length, type, data */
    [0xc8 - 0xc0] = {4, 2},  /* ext 16 */
    [0xc9 - 0xc0] = {6, 4},  /* ext 32 */
    [0xca - 0xc0] = {5, 0},  /* float 32 */
    [0xcb - 0xc0] = {9, 0},  /* float 64 */
    [0xcc - 0xc0] = {2, 0},  /* uint 8 */
    [0xcd - 0xc0] = {3, 0},  /* uint 16 */
    [0xce - 0xc0] = {5, 0},  /* uint 32 */
    [0xcf - 0xc0] = {9, 0},  /* uint 64 */
    [0xd0 - 0xc0] = {2, 0},  /* int 8 */
    [0xd1 - 0xc0] = {3, 0},  /* int 16 */
    [0xd2 - 0xc0] = {5, 0},  /* int 32 */
    [0xd3 - 0xc0] = {9, 0},  /* int 64 */
    [0xd4 - 0xc0] = {3, 0},  /* fixext 1: type, ext type, data */
    [0xd5 - 0xc0] = {4, 0},  /* fixext 2 */
    [0xd6 - 0xc0] = {6, 0},  /* fixext 4 */
    [0xd7 - 0xc0] = {10, 0}, /* fixext 8 */
    [0xd8 - 0xc0] = {18, 0}, /* fixext 16 */
    [0xd9 - 0xc0] = {2, 1},  /* str 8 */
    [0xda - 0xc0] = {3, 2},  /* str 16 */
    [0xdb - 0xc0] = {5, 4},  /* str 32 */
};

/* Bytes a msgpack scalar starting at p occupies, or 0 if it is a container, an invalid
 * byte, or runs past avail. */
static size_t scalar_size(const uint8_t *p, size_t avail)
{
	size_t head, len_bytes = 0, body = 0;

	if (avail == 0)
		return 0;
	uint8_t b = p[0];
	if (b <= 0x7f || b >= 0xe0)
		return 1; /* fixints */
	if (b < 0xa0)
		return 0; /* fixmaps, fixarrays */
	if (b <= 0xbf) {
		head = 1; /* fixstr */
		body = b & 0x1fu;
	} else {
		head = scalar_heads[b - 0xc0].head;
		len_bytes = scalar_heads[b - 0xc0].len_bytes;
		if (head == 0)
			return 0;
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

/* How the header at buf (a whole array of scalars, already decoded) writes its version: the
 * type byte after the array's and the magic's. */
static enum paxos_wire_speech header_speech(const uint8_t *buf, size_t len)
{
	if (len < 2 || buf[0] < 0x90 || buf[0] > 0x9f)
		return PAXOS_WIRE_NATIVE;
	size_t magic = scalar_size(buf + 1, len - 1);
	if (magic == 0 || 1 + magic >= len)
		return PAXOS_WIRE_NATIVE;
	uint8_t b = buf[1 + magic];
	return b == 0xcc   ? PAXOS_WIRE_DOWN
	       : b == 0xcd ? PAXOS_WIRE_DOWN_RELAYED
			   : PAXOS_WIRE_NATIVE;
}

static bool decode_header(const msgpack_object *o, const uint8_t *buf, size_t len,
			  struct paxos_header *h)
{
	const msgpack_object *f = o->via.array.ptr;
	uint32_t magic, version, role;

	if (o->via.array.size != HEADER_FIELDS)
		return false;
	if (!get_u32(&f[0], &magic) || magic != PAXOS_WIRE_MAGIC)
		return false;
	if (!get_u32(&f[1], &version) || version < PAXOS_WIRE_VERSION_MIN ||
	    version > PAXOS_WIRE_VERSION)
		return false;
	if (!get_u32(&f[2], &role) || role >= PAXOS_ROLE_COUNT)
		return false;
	h->role = (enum paxos_role)role;
	h->version = version;
	h->speech = version == PAXOS_WIRE_VERSION ? PAXOS_WIRE_NATIVE : header_speech(buf, len);
	return get_u32(&f[3], &h->sender_id);
}

static bool decode_message(const msgpack_object *o, const uint8_t *buf, size_t len,
			   uint32_t version, struct paxos_message *m)
{
	const msgpack_object *f = o->via.array.ptr;
	uint32_t type;

	if (o->via.array.size < 1 || !get_u32(&f[0], &type))
		return false;
	if (type > PAXOS_MSG_TYPE_MAX || wire[type].since == 0 || wire[type].since > version)
		return false;
	m->type = (enum paxos_msg_type)type;
	return wire[type].decode(f, o->via.array.size, buf, len, version, m);
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
	if (o == NULL || !decode_header(o, buf, off, &header))
		return PAXOS_E_MALFORMED;
	while (off < len) {
		if (count == max)
			return PAXOS_E_MALFORMED;
		o = next_array(d, buf, len, &off);
		if (o == NULL || !decode_message(o, buf, len, header.version, &msgs[count]))
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
