/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Acceptor storage: one interface, one implementation per backend (paxos/storage_backends.h
 * opens the shipped ones). The acceptor only ever reads through this interface; its driver
 * writes what the acceptor's ready says (paxos/acceptor.h, paxos_acceptor_write()). A store is used
 * by one thread at a time (its node's event loop thread); a backend with pipelined commits may
 * flush on a thread of its own, which its users never see.
 */
#ifndef PAXOS_STORAGE_H
#define PAXOS_STORAGE_H

#include <paxos/types.h>

/** What an acceptor remembers about one instance. */
struct paxos_record {
	paxos_iid iid;            /**< the instance */
	paxos_ballot promised;    /**< highest ballot promised, 0: none */
	paxos_ballot accepted;    /**< ballot of the accepted value, 0: none */
	struct paxos_value value; /**< valid when accepted != 0 */
	bool final;               /**< value is known to be chosen */
};

struct paxos_storage;

/** Where the commits of a backend with pipelined commits stand (paxos_storage_ops.sync). The
 * commits that held changes are numbered from 1 in the order they were made. */
struct paxos_storage_progress {
	uint64_t committed;       /**< the number of the last commit */
	uint64_t durable;         /**< every commit up to this number is durable */
	uint64_t flushes;         /**< flushes finished so far */
	uint64_t flushed_records; /**< records those flushes wrote */
	uint64_t flush_us;        /**< microseconds spent in them */
};

/** A backend's functions, one table per backend. Every function returns PAXOS_OK or a
 * negative status (PAXOS_E_STORAGE on backend failure, after which the acceptor must stop). */
struct paxos_storage_ops {
	const char *name; /**< the backend's name: "memory", "lmdb", "bdb" */
	/** Group commit: changes between begin and commit become durable together (at commit,
	 * or for pipelined commits once sync says so, see below). destroy makes every commit
	 * durable first; an unfinished batch is dropped. */
	int (*begin)(struct paxos_storage *st);
	/** Ends the transaction begin started: see begin. */
	int (*commit)(struct paxos_storage *st);
	/** Returns 1 and fills rec if iid is stored, 0 if not. rec->value stays valid until the
	 * next put, trim or commit on this storage. */
	int (*get)(struct paxos_storage *st, paxos_iid iid, struct paxos_record *rec);
	/** Stores a copy of rec (the value bytes are copied). */
	int (*put)(struct paxos_storage *st, const struct paxos_record *rec);
	/** Drops every instance <= iid. */
	int (*trim)(struct paxos_storage *st, paxos_iid iid);
	/** Highest instance trimmed (0: none). */
	paxos_iid (*trim_iid)(struct paxos_storage *st);
	/** Highest instance with an accepted value (0: none). */
	paxos_iid (*highest_accepted)(struct paxos_storage *st);
	/** Makes every commit durable, drops an unfinished batch, closes and frees the store. */
	void (*destroy)(struct paxos_storage *st);
	/** Why the last call failed, in words ("" if nothing failed). NULL: never says more than
	 * the status code. Use paxos_storage_error(). */
	const char *(*error)(struct paxos_storage *st);
	/** Bytes the store takes and the most it may take (0: no limit of its own), when the
	 * backend can tell without a scan; NULL: it cannot. Use paxos_storage_space(). */
	void (*space)(struct paxos_storage *st, uint64_t *used, uint64_t *limit);

	/**
	 * The number of the last commit (0: none yet); only reads.
	 *
	 * Pipelined commits, optional: NULL for a backend whose commit returns once the changes
	 * are as durable as its mode makes them. A backend that has them returns from commit at
	 * once: get sees the changes, which become durable only when a flush makes them so, one
	 * flush at a time, in commit order, each flush taking every commit not flushed yet (group
	 * commit growing with the load). Whoever answers from the store holds back what a commit
	 * backs until sync says it is durable: for the acceptor, each message of its ready until
	 * the write it is tagged with is (the node does, lib/node/node_hold.c).
	 *
	 * sync collects a finished flush and, if none runs, starts one for the commits not
	 *   flushed yet on a thread of the backend's own; with wait, returns only once every
	 *   commit so far is durable, flushing on the caller's thread (after a running flush).
	 *   Fills p (NULL: not wanted). Like commit, it ends the validity of what get returned.
	 *   PAXOS_OK, or PAXOS_E_STORAGE when a flush failed (the store then refuses everything;
	 *   error says why).
	 * sync_fd gives a descriptor that becomes readable when a flush on the thread finished:
	 * call sync then.
	 */
	uint64_t (*committed)(struct paxos_storage *st);
	/** Collects a finished flush and starts the next (see committed); NULL: commits are not
	 * pipelined. */
	int (*sync)(struct paxos_storage *st, bool wait, struct paxos_storage_progress *p);
	/** The descriptor readable when a flush finished (see committed). */
	int (*sync_fd)(struct paxos_storage *st);
};

/** A store: backends embed this as their first member. Whoever opened it owns it and frees it
 * with paxos_storage_destroy(), unless it handed it to a node (paxos_node_add_acceptor()). */
struct paxos_storage {
	const struct paxos_storage_ops *ops; /**< the backend */
};

/** The backend's description of its last failure, "" if it has none (or @p st is NULL); owned
 * by the store, valid until its next call. */
static inline const char *paxos_storage_error(struct paxos_storage *st)
{
	if (!st || !st->ops->error)
		return "";
	return st->ops->error(st);
}

/** PAXOS_OK and the store's size in bytes (paxos_storage_ops.space), or PAXOS_E_INVALID when
 * the backend cannot tell. */
static inline int paxos_storage_space(struct paxos_storage *st, uint64_t *used, uint64_t *limit)
{
	if (!st || !st->ops->space)
		return PAXOS_E_INVALID;
	st->ops->space(st, used, limit);
	return PAXOS_OK;
}

/** Whether st's commits are pipelined (see paxos_storage_ops.sync). */
static inline bool paxos_storage_pipelined(const struct paxos_storage *st)
{
	return st && st->ops->sync != NULL;
}

/** Makes every commit durable, then closes and frees @p st; NULL is ignored. */
static inline void paxos_storage_destroy(struct paxos_storage *st)
{
	if (st)
		st->ops->destroy(st);
}

#endif
