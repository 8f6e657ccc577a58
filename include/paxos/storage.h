/* Acceptor storage: one interface, one implementation per backend. The acceptor only ever
 * talks to this interface. */
#ifndef PAXOS_STORAGE_H
#define PAXOS_STORAGE_H

#include <paxos/config.h>
#include <paxos/types.h>

/* What an acceptor remembers about one instance. */
struct paxos_record {
	paxos_iid iid;
	paxos_ballot promised;    /* highest ballot promised, 0: none */
	paxos_ballot accepted;    /* ballot of the accepted value, 0: none */
	struct paxos_value value; /* valid when accepted != 0 */
	bool final;               /* value is known to be chosen */
};

struct paxos_storage;

/* Every function returns PAXOS_OK or a negative status (PAXOS_E_STORAGE on backend
 * failure, after which the acceptor must stop). */
struct paxos_storage_ops {
	const char *name;
	/* Group commit: changes between begin and commit become durable together. */
	int (*begin)(struct paxos_storage *st);
	int (*commit)(struct paxos_storage *st);
	/* Returns 1 and fills rec if iid is stored, 0 if not. rec->value stays valid until the
	 * next put, trim or commit on this storage. */
	int (*get)(struct paxos_storage *st, paxos_iid iid, struct paxos_record *rec);
	/* Stores a copy of rec (the value bytes are copied). */
	int (*put)(struct paxos_storage *st, const struct paxos_record *rec);
	/* Drops every instance <= iid. */
	int (*trim)(struct paxos_storage *st, paxos_iid iid);
	/* Highest instance trimmed (0: none) and highest with an accepted value (0: none). */
	paxos_iid (*trim_iid)(struct paxos_storage *st);
	paxos_iid (*highest_accepted)(struct paxos_storage *st);
	void (*destroy)(struct paxos_storage *st);
	/* Why the last call failed, in words ("" if nothing failed). NULL: never says more than
	 * the status code. Use paxos_storage_error(). */
	const char *(*error)(struct paxos_storage *st);
};

struct paxos_storage {
	const struct paxos_storage_ops *ops;
};

/* Volatile storage (thesis "ND"): nothing survives the process. Its records span at most
 * 16 Mi instances past the trim point (a put further out is refused with PAXOS_E_FULL); an
 * acceptor bounds it with a retention (paxos_acceptor_set_retention, paxos.conf
 * memory-retention), at most PAXOS_MEMORY_MAX_RETENTION instances. */
#define PAXOS_MEMORY_MAX_RETENTION (1u << 23)
struct paxos_storage *paxos_storage_memory_new(void);

/*
 * Durable backends keep one store per directory, which must exist. A second open of the same
 * directory, from this process or another, is refused while the first is open (a lock on
 * DIR/paxos.lock). On failure they return NULL with the reason in err.
 */

/* LMDB; mode PAXOS_DURABILITY_SYNC or PAXOS_DURABILITY_NOSYNC; map_size bounds the store
 * (a put past it fails with PAXOS_E_STORAGE). */
struct paxos_storage *paxos_storage_lmdb_new(const char *dir, enum paxos_durability mode,
					     uint64_t map_size, char *err, size_t errlen);

/* Berkeley DB transactional B-tree; mode PAXOS_DURABILITY_INMEMORY_LOG, _NOSYNC,
 * _WRITE_NOSYNC, _SYNC or _DBSYNC. With _INMEMORY_LOG the store survives only a clean
 * destroy: reopening one that was not closed cleanly fails. */
struct paxos_storage *paxos_storage_bdb_new(const char *dir, enum paxos_durability mode, char *err,
					    size_t errlen);

/* Where paxos_storage_open keeps an acceptor's store: cfg->storage_path/acceptor-<id>.
 * Returns PAXOS_OK, or PAXOS_E_INVALID if it does not fit in cap. */
int paxos_storage_dir(const struct paxos_config *cfg, uint32_t acceptor_id, char *buf, size_t cap);

/* Opens the store cfg->storage names for an acceptor, creating its directory (and parents)
 * if needed. fresh (or cfg->storage_fresh) deletes what the directory held first; the caller
 * says so in its log. Otherwise existing state is recovered. NULL with err on failure. */
struct paxos_storage *paxos_storage_open(const struct paxos_config *cfg, uint32_t acceptor_id,
					 bool fresh, char *err, size_t errlen);

/* The backend's description of its last failure, "" if it has none. */
static inline const char *paxos_storage_error(struct paxos_storage *st)
{
	if (!st || !st->ops->error)
		return "";
	return st->ops->error(st);
}

static inline void paxos_storage_destroy(struct paxos_storage *st)
{
	if (st)
		st->ops->destroy(st);
}

#endif
