/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kvstore's wire format. Commands travel through Paxos as values; replies come back from
 * the replicas on the reply group (kvstore.conf). Both are binary, integers big-endian:
 *
 *   command: 'K' 'V' version(1) op(1) client(8) seq(8) then, per argument, len(2) bytes
 *   reply:   'K' 'R' version(1) status(1) client(8) seq(8) iid(8) replica(4) len(2) bytes
 *
 * put has 2 arguments (key, value), get and delete 1 (key), cas 3 (key, expected, new), copy 2
 * (from key, to key: the one command with two keys, refused when they are in different
 * partitions, see shard.h).
 * A reply with status NEW_LEADER is a notice, not an answer (client 0): a replica delivered
 * the first instance of a new leadership of partition seq (iid: the new leader's proposer id).
 * That leader may never have read the commands that waited on the one before (a proposer that
 * follows a partition lean drops them; with unicast only the leader hears a submit), so the
 * clients submit theirs in that partition again at once rather than after resubmit-ms.
 * snapshot is the replicas' own command: "replica <client> has a snapshot up to instance
 * <seq>", with one optional argument, the generation of the log it is a snapshot of (8
 * bytes); it is ordered like any other command so every replica agrees on how far the
 * acceptors may trim. One of another log than the log that delivers it (sent before the
 * acceptors began a new log) is ignored alike by every replica.
 */
#ifndef KVSTORE_COMMAND_H
#define KVSTORE_COMMAND_H

#include <stddef.h>
#include <stdint.h>

#define KV_VERSION 1
#define KV_MAX_ARGS 3
#define KV_COMMAND_HEADER 20 /* bytes before the arguments */
#define KV_REPLY_HEADER 34   /* bytes before the value */
#define KV_MAX_FIELD 65535   /* longest key or value: the length field is 16 bits */

enum kv_op {
	KV_PUT = 1,
	KV_GET = 2,
	KV_DELETE = 3,
	KV_CAS = 4,
	KV_SNAPSHOT = 5,
	KV_COPY = 6,
	KV_OP_LAST = KV_COPY
};

enum kv_status {
	KV_OK = 0,         /* done; get carries the value */
	KV_NOT_FOUND = 1,  /* get, delete or cas of a missing key */
	KV_CAS_FAILED = 2, /* cas: the value was not the expected one; carries the current one */
	KV_WRONG_PARTITION = 3, /* the key belongs to another partition (client and replica
				   disagree on "partitions"): not applied */
	KV_CROSS_PARTITION = 4, /* copy between keys of different partitions: not applied */
	KV_NEW_LEADER = 5,      /* a notice: partition seq has a new leader (see above) */
	KV_STATUS_LAST = KV_NEW_LEADER
};

/* A borrowed byte range. */
struct kv_bytes {
	const uint8_t *data;
	uint16_t len;
};

struct kv_command {
	enum kv_op op;
	uint64_t client; /* snapshot: the replica id */
	uint64_t seq;    /* snapshot: the instance its snapshot covers */
	struct kv_bytes arg[KV_MAX_ARGS];
};

struct kv_reply {
	enum kv_status status;
	uint64_t client, seq;
	uint64_t iid;     /* instance the command was delivered in (the first time) */
	uint32_t replica; /* who answers */
	struct kv_bytes value;
};

/* Arguments each operation takes; 0 for an unknown op. */
int kv_op_args(enum kv_op op);
/* How many of them, from the first, are keys (1, copy 2; snapshot and unknown ops 0). */
int kv_op_keys(enum kv_op op);
/* "put", "get", ... and back (0 if unknown). */
const char *kv_op_name(enum kv_op op);
enum kv_op kv_op_parse(const char *name);
const char *kv_status_name(enum kv_status status);

/* A client acts on a new-leader notice for what it submitted at least this long before the
 * notice came: each replica sends one, and the first one is enough. */
#define KV_NOTICE_GUARD_S 0.005

/* Encoders return the length written, or 0 if it does not fit in cap. */
size_t kv_command_encode(const struct kv_command *c, uint8_t *buf, size_t cap);
size_t kv_reply_encode(const struct kv_reply *r, uint8_t *buf, size_t cap);

/* Decoders return 0, or -1 for anything malformed (wrong magic, version, op, argument
 * count, lengths, trailing bytes). Results borrow from buf. */
int kv_command_decode(const uint8_t *buf, size_t len, struct kv_command *c);
int kv_reply_decode(const uint8_t *buf, size_t len, struct kv_reply *r);

#endif
