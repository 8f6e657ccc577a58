/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The replicated state machine: a key-value table and the snapshot instance each replica
 * announced (for trimming, thesis 3.4.1). Every replica applies the same commands in the same
 * order, so every replica holds the same store. Exactly-once, per-client FIFO execution
 * (thesis 3.2.2) is the library's client sessions' (paxos/session.h): a command reaches the
 * store once. No I/O except snapshots and dumps.
 */
#ifndef KVSTORE_STORE_H
#define KVSTORE_STORE_H

#include <stdbool.h>
#include <stdio.h>

#include "command.h"

struct kv_store;

enum kv_outcome {
	KV_APPLIED,   /* applied, reply filled */
	KV_ANNOUNCED, /* a replica's snapshot announcement: recorded, no reply */
	KV_INVALID,   /* a snapshot announcement from an unknown replica: ignored */
	KV_NOMEM,     /* out of memory: this replica can no longer follow the others */
};

/* A store for replicas with ids 0..replicas-1; NULL when out of memory. */
struct kv_store *kv_store_new(uint32_t replicas);
void kv_store_free(struct kv_store *s);

/* The store holds partition `partition` of `partitions` (shard.h; default 0 of 1: every
 * key). A command with a key of another partition gets KV_WRONG_PARTITION, a copy whose keys
 * are in two partitions KV_CROSS_PARTITION: recorded and answered like any result, nothing
 * changed. Every replica of the partition must use the same values. */
void kv_store_set_partition(struct kv_store *s, uint32_t partition, uint32_t partitions);

/* The generation of the log the store was built from (paxos_node_generation()), kept in its
 * snapshots: a replica started from one knows whether the acceptors serve another log now. */
void kv_store_set_generation(struct kv_store *s, uint64_t generation);
/* true with *generation set when the store knows it (snapshots of before it do not). */
bool kv_store_generation(const struct kv_store *s, uint64_t *generation);
/* Applies one command delivered in instance iid; the reply names c's client and seq (the
 * session's). reply's value stays valid until the next call. */
enum kv_outcome kv_store_apply(struct kv_store *s, const struct kv_command *c, uint64_t iid,
			       struct kv_reply *reply);

/* A local read of key: 1 with its value in *value (valid until the next change), 0 when it
 * is missing, -1 when it belongs to another partition. */
int kv_store_get(const struct kv_store *s, const struct kv_bytes *key, struct kv_bytes *value);

/* The highest snapshot instance replica announced (0: none). */
uint64_t kv_store_announced(const struct kv_store *s, uint32_t replica);
/* The lowest of them: every replica has a snapshot covering the instances up to here. */
uint64_t kv_store_all_announced(const struct kv_store *s);

uint64_t kv_store_commands(const struct kv_store *s); /* client commands applied */
size_t kv_store_keys(const struct kv_store *s);

/*
 * Snapshots: DIR/snapshot holds the whole store plus iid, the last instance it covers, and
 * two byte strings the store keeps without reading them: `membership` (membership_len of
 * them, at most 4096; 0: none), the replica's configuration history as of the snapshot
 * (paxos_membership_encode), so that a replica started from the snapshot, or from a copy of
 * another's, knows the configurations the trimmed instances chose; and `sessions`, the
 * library's session table as of the end of iid (paxos_session_table_export). Save writes
 * DIR/snapshot.tmp, syncs it and renames it over DIR/snapshot, so a crash leaves the old or
 * the new snapshot, never a torn one. Return 0, or -1 with err filled.
 */
int kv_store_save(const struct kv_store *s, const char *dir, uint64_t iid,
		  const uint8_t *membership, size_t membership_len, const uint8_t *sessions,
		  size_t sessions_len, char *err, size_t errlen);
/* Loads DIR/snapshot, its membership and sessions bytes into *membership and *sessions
 * (malloc'd, the caller frees; NULL and 0 when it has none, as a snapshot of before them).
 * NULL with err empty if there is none,
 * NULL with err filled if it is unreadable, damaged or written for another number of
 * replicas. */
struct kv_store *kv_store_load(const char *dir, uint32_t replicas, uint64_t *iid,
			       uint8_t **membership, size_t *membership_len, uint8_t **sessions,
			       size_t *sessions_len, char *err, size_t errlen);

/* The state as text, keys in order: "commands N", then "KEY VALUE" lines
 * with bytes outside printable ASCII (and '%') written as %XX. Equal stores, equal text. */
int kv_store_dump(const struct kv_store *s, FILE *out);

#endif
