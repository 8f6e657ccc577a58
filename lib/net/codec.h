/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wire format. A datagram is a sequence of msgpack objects: first the header array
 * [magic, version, sender role, sender id], then one array per message [type, fields...].
 * Several messages share a datagram, so batching needs no other format. Thesis 3.7.3: "In each
 * packet there is room for multiple PAXOS messages batched together." Messages of any type
 * share one when they have one sender and one group, as the thesis allows ("different kinds of
 * messages can be batched too if they have the same recipients"). With an
 * auth-key-file the datagram then ends with a tag over all of it (lib/auth.h), added after
 * encoding and checked and cut off before decoding: this codec never sees it.
 */
#ifndef PAXOS_CODEC_H
#define PAXOS_CODEC_H

#include <msgpack.h>
#include <paxos/message.h>

#define PAXOS_WIRE_MAGIC 0x5058u /* "PX" */
/* 2: repair, acceptor hello and recovery messages. 3: an accepted message may leave its value
 * out (nil), learners take it from the accept. 4: an acceptor hello carries its age and echoes a
 * duplicate's incarnation (duplicates are told apart without wall clocks). 5: the auth-key-file
 * tag is a nonce and an XChaCha20-Poly1305 authenticator (lib/net/auth.h), 40 bytes in place of
 * 16 of keyed BLAKE2b. 6: accepted, acceptor state, trimmed and hellos carry the log's
 * generation, recovery answers it and whether the asker founded that log, acceptor states
 * whether votes are withheld.
 *
 * A node reads and speaks its version and the one before (PAXOS_WIRE_VERSION_MIN): what a
 * version added is the last fields of a message, absent (read as 0) in a datagram of the
 * version before, and left out when speaking it (lib/node/node_version.c chooses). Versions
 * further apart drop each other's datagrams as malformed (and say so: paxos_wire_version). */
#define PAXOS_WIRE_VERSION 6u
#define PAXOS_WIRE_VERSION_MIN 5u

/* Bytes a datagram needs besides its values: header plus one message's fields. Values up
 * to max_datagram - PAXOS_WIRE_OVERHEAD (less PAXOS_AUTH_TAG_BYTES with a key) always fit in
 * a datagram of their own. */
#define PAXOS_WIRE_OVERHEAD 64u
/* What a snapshot chunk needs besides PAXOS_WIRE_OVERHEAD: it names its snapshot and its
 * place in it, five 64-bit fields; its sender sizes its bytes to leave this room. */
#define PAXOS_SNAPSHOT_CHUNK_EXTRA 16u

/* Most messages decoded from one datagram; more is malformed. */
#define PAXOS_MAX_MESSAGES_PER_DATAGRAM 1024u

/* How a header writes its version number: as the smallest msgpack integer (NATIVE: the
 * sender's own version), or, from a newer node speaking an older version, as a uint8 (DOWN: it
 * heard a node of that version itself) or a uint16 (DOWN_RELAYED: it follows a node that did).
 * Decoders of every version read the three alike; ours tell an older node from a newer one
 * speaking for it (lib/node/node_version.c). */
enum paxos_wire_speech {
	PAXOS_WIRE_NATIVE = 0,
	PAXOS_WIRE_DOWN,
	PAXOS_WIRE_DOWN_RELAYED,
};

struct paxos_header {
	enum paxos_role role;
	uint32_t sender_id;
	/* Decoded: the datagram's wire version. Encoding: the version to speak, 0 for
	 * PAXOS_WIRE_VERSION. */
	uint32_t version;
	enum paxos_wire_speech speech; /* how the version is written (above) */
};

/* Encodes into a caller-owned buffer; no allocation. */
struct paxos_encoder {
	uint8_t *buf;
	size_t cap;
	size_t len;        /* bytes written, header included */
	size_t header_len; /* len when no message has been added */
	uint32_t count;    /* messages added */
	uint32_t version;  /* the wire version spoken, from the header */
	msgpack_packer pk;
	bool overflow;
};

/* Start a datagram with header h, in the wire version it names (0: PAXOS_WIRE_VERSION; one
 * outside PAXOS_WIRE_VERSION_MIN..PAXOS_WIRE_VERSION is taken as PAXOS_WIRE_VERSION). cap must
 * hold at least the header. */
void paxos_encoder_init(struct paxos_encoder *e, uint8_t *buf, size_t cap,
			const struct paxos_header *h);

/* Drop the messages, keep the header: the buffer is ready for the next datagram. */
void paxos_encoder_reset(struct paxos_encoder *e);

/* Append m. Returns PAXOS_OK, or PAXOS_E_FULL if it does not fit (the datagram is left as
 * it was), or PAXOS_E_INVALID for an unknown type or one the encoder's version lacks. */
int paxos_encoder_add(struct paxos_encoder *e, const struct paxos_message *m);

/* Decodes whole datagrams. Values in decoded messages point into the datagram buffer. The
 * decoder reuses one msgpack zone, so decoding allocates nothing after the first call. */
struct paxos_decoder {
	msgpack_unpacked unpacked;
};

void paxos_decoder_init(struct paxos_decoder *d);
void paxos_decoder_destroy(struct paxos_decoder *d);

/* The wire version a datagram of ours (right magic) says it has, in *version; false for one
 * that does not start like a header. For telling a node of another version from garbage. */
bool paxos_wire_version(const uint8_t *buf, size_t len, uint32_t *version);

/* All or nothing: fills h and msgs[0..*n) and returns PAXOS_OK, or returns
 * PAXOS_E_MALFORMED if any part is wrong (bad magic, a version outside
 * PAXOS_WIRE_VERSION_MIN..PAXOS_WIRE_VERSION, unknown role or type, a type or field count its
 * version does not have, wrong field type, out-of-range number, trailing garbage, more than
 * max messages). Fields the datagram's version lacks are 0. */
int paxos_decode(struct paxos_decoder *d, const uint8_t *buf, size_t len, struct paxos_header *h,
		 struct paxos_message *msgs, size_t max, size_t *n);

#endif
