/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sharding: which partition (paxos.conf "partitions", one Paxos log each) owns a key. Clients
 * route a command to its key's partition and every replica checks it again, so both sides
 * must agree: the hash is FNV-1a (64 bits) of the key's bytes, mixed by MurmurHash3's 64-bit
 * finaliser, modulo the partition count, and it never changes. A command whose keys live in
 * different partitions has no single log to be ordered in; it is refused (KV_CROSS_PARTITION), not
 * split.
 */
#ifndef KVSTORE_SHARD_H
#define KVSTORE_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "command.h"

/* The partition of a key, 0..partitions-1 (0 when partitions is 0 or 1). */
uint32_t kv_key_partition(const uint8_t *key, size_t len, uint32_t partitions);

/* The partition every key of c lives in, or -1 if its keys span partitions; in *other the
 * partition of the first key that differs (when other is not NULL). A snapshot announcement
 * has no key: -1 too (it belongs to the log it is submitted to). */
int kv_command_partition(const struct kv_command *c, uint32_t partitions, uint32_t *other);

#endif
