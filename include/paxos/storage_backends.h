/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The storage backends (memory, LMDB, Berkeley DB) and opening an acceptor's store from a
 * configuration. The acceptor core knows only the interface (paxos/storage.h).
 */
#ifndef PAXOS_STORAGE_BACKENDS_H
#define PAXOS_STORAGE_BACKENDS_H

#include <paxos/config.h>
#include <paxos/storage.h>

/** Volatile storage (thesis "ND"): nothing survives the process. Its records span at most
 * 16 Mi instances past the trim point (a put further out is refused with PAXOS_E_FULL); an
 * acceptor bounds it with a retention (paxos_acceptor_set_retention, paxos.conf
 * memory-retention), at most PAXOS_MEMORY_MAX_RETENTION instances. */
#define PAXOS_MEMORY_MAX_RETENTION (1u << 23)
/** A new, empty volatile store, owned by the caller; NULL when out of memory. */
PAXOS_API struct paxos_storage *paxos_storage_memory_new(void);

/*
 * Durable backends keep one store per directory, which must exist. A second open of the same
 * directory, from this process or another, is refused while the first is open (a lock on
 * DIR/paxos.lock). On failure they return NULL with the reason in err.
 */

/** An LMDB store in the existing directory @p dir; @p mode PAXOS_DURABILITY_SYNC or
 * PAXOS_DURABILITY_NOSYNC; @p map_size bounds the store (a put past it fails with
 * PAXOS_E_STORAGE). Existing state is recovered. A second open of the same directory, from
 * this process or another, is refused while the first is open (a lock on DIR/paxos.lock).
 * Returns the store, owned by the caller, or NULL with the reason in @p err (@p errlen bytes). */
PAXOS_API struct paxos_storage *paxos_storage_lmdb_new(const char *dir, enum paxos_durability mode,
						       uint64_t map_size, char *err, size_t errlen);

/** A Berkeley DB transactional B-tree in the existing directory @p dir; @p mode
 * PAXOS_DURABILITY_INMEMORY_LOG, _NOSYNC, _WRITE_NOSYNC, _SYNC or _DBSYNC. Opening and
 * ownership as for paxos_storage_lmdb_new(). With _INMEMORY_LOG the store survives only a clean
 * destroy: reopening one that was not closed cleanly fails. */
PAXOS_API struct paxos_storage *paxos_storage_bdb_new(const char *dir, enum paxos_durability mode,
						      char *err, size_t errlen);

/** Where paxos_storage_open keeps an acceptor's store: storage-path/acceptor-ID, in @p buf (@p cap
 * bytes). Returns PAXOS_OK, or PAXOS_E_INVALID if it does not fit in cap. */
PAXOS_API int paxos_storage_dir(const struct paxos_config *cfg, uint32_t acceptor_id, char *buf,
				size_t cap);

/** Opens the store paxos.conf's "storage" names for acceptor @p acceptor_id, creating its
 * directory (and parents) if needed. @p fresh (or "storage-fresh yes") deletes what the directory
 * held first; the caller says so in its log. Otherwise existing state is recovered. Returns the
 * store, which the caller owns (paxos_storage_destroy(), or hand it to paxos_node_add_acceptor()),
 * or NULL with the reason in @p err (@p errlen bytes) on failure. */
PAXOS_API struct paxos_storage *paxos_storage_open(const struct paxos_config *cfg,
						   uint32_t acceptor_id, bool fresh, char *err,
						   size_t errlen);

#endif
