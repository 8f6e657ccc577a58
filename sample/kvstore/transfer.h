/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Snapshot transfer for the replica (paxos_node_offer_snapshot,
 * paxos_node_on_install_snapshot): the bytes of DIR/snapshot are what a replica offers, and a
 * peer's bytes, written as DIR/snapshot, are what a replica whose next instance was trimmed
 * installs, so that a new or long-stopped replica catches up without a copied file.
 */
#ifndef KV_TRANSFER_H
#define KV_TRANSFER_H

#include <paxos/paxos.h>

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* Offers DIR/snapshot, which covers instances up to iid, to the node's lagging peers. 0, or -1
 * with err filled. */
int kv_transfer_offer(struct paxos_node *n, const char *dir, uint64_t iid, char *err,
		      size_t errlen);

/* Writes bytes, a peer's snapshot of instances up to iid, as DIR/snapshot (atomically, as
 * kv_store_save does) and loads it: the store it holds, or NULL with err filled (bytes that
 * are no snapshot of this store, for another instance, or a failed write). The membership
 * bytes it carries are dropped; its session table is *sessions (malloc'd, the caller frees;
 * NULL and 0 when it has none). */
struct kv_store *kv_transfer_install(const char *dir, uint32_t replicas, uint64_t iid,
				     const void *bytes, size_t len, uint8_t **sessions,
				     size_t *sessions_len, char *err, size_t errlen);

#endif
