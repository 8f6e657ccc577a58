/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Proposer epochs (incarnation numbers) kept durable: one interface, and the file store
 * (lib/storage/epoch.c) libpaxos ships. The proposer core never calls it: it returns the
 * epochs it takes as data (struct paxos_proposer_ready), and the node stores them before any
 * of the proposer's datagrams that depend on them leaves.
 */
#ifndef PAXOS_EPOCH_H
#define PAXOS_EPOCH_H

#include <paxos/config.h>
#include <paxos/types.h>

struct paxos_epoch_store;

/** An epoch store's functions, one table per implementation. Every function returns PAXOS_OK
 * or a negative status; error() says why in words. */
struct paxos_epoch_store_ops {
	const char *name; /**< the implementation's name, e.g. "file" */
	/** A new incarnation: stores the stored epoch plus one (1 when none is stored yet) and
	 * returns it in *epoch, below PAXOS_PLAUSIBLE_EPOCHS. Reading and storing are one step
	 * for every user of the store, so that no two incarnations get the same epoch. */
	int (*next)(struct paxos_epoch_store *es, uint32_t *epoch);
	/** Makes epoch (below PAXOS_PLAUSIBLE_EPOCHS) durable, unless a higher one is stored
	 * already; returns once it is. */
	int (*store)(struct paxos_epoch_store *es, uint32_t epoch);
	void (*destroy)(struct paxos_epoch_store *es); /**< closes and frees the store */
	/** Why the last call failed ("" if nothing failed). NULL: never says more than the
	 * status code. Use paxos_epoch_store_error(). */
	const char *(*error)(struct paxos_epoch_store *es);
};

/** An epoch store: implementations embed this as their first member. */
struct paxos_epoch_store {
	const struct paxos_epoch_store_ops *ops; /**< the implementation */
};

/** Why the last call on @p es failed, "" if it cannot say (or @p es is NULL); owned by the
 * store. */
static inline const char *paxos_epoch_store_error(struct paxos_epoch_store *es)
{
	if (!es || !es->ops->error)
		return "";
	return es->ops->error(es);
}

/** Closes and frees @p es; NULL is ignored. */
static inline void paxos_epoch_store_destroy(struct paxos_epoch_store *es)
{
	if (es)
		es->ops->destroy(es);
}

/**
 * The file store: dir/epoch holds, in decimal, the highest epoch any incarnation used ballots
 * of. dir is created (mode 0700, with its parents) if missing. Every update is
 * write-to-temporary, fsync, rename, fsync of the directory, under a lock on the directory;
 * a corrupt file is an error and is never overwritten. Returns the store, which the caller owns
 * (paxos_epoch_store_destroy(), or hand it to paxos_node_add_proposer_with()), or NULL with the
 * reason in @p err (@p errlen bytes) on failure.
 */
PAXOS_API struct paxos_epoch_store *paxos_epoch_store_open(const char *dir, char *err,
							   size_t errlen);

/** Where a node keeps proposer proposer_id's epochs: storage-path/proposer-ID in @p buf (@p cap
 * bytes). Returns PAXOS_OK, or PAXOS_E_INVALID if it does not fit in cap. */
PAXOS_API int paxos_epoch_store_dir(const struct paxos_config *cfg, uint32_t proposer_id, char *buf,
				    size_t cap);

#endif
