/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the durable storage backends (storage_lmdb.c, storage_bdb.c) share: the directory
 * lock and the on-disk layout. Internal to libpaxos.
 *
 * Layout, all integers big-endian:
 *   key: the iid in 8 bytes, so keys sort numerically; iid 0 (never a real instance) is
 *        the metadata record.
 *   record: promised u64, accepted u64, flags u32 (bit 0: final), value length u32, value.
 *   metadata: magic u32, version u32, trim iid u64, highest accepted iid u64 at that trim
 *        (trimming may delete the record that held it). Written when a store is created, so
 *        a store without it but with records predates format 2 (32-bit ballots).
 */
#ifndef PAXOS_STORAGE_BACKEND_H
#define PAXOS_STORAGE_BACKEND_H

#include <paxos/storage.h>

#define STORAGE_LOCK_FILE "paxos.lock"
#define STORAGE_KEY_SIZE 8
#define STORAGE_HEADER_SIZE 24
#define STORAGE_META_SIZE 24
/* Bumped whenever the layout changes; a store of another version is refused. 1 had 32-bit
 * ballots. */
#define STORAGE_FORMAT_VERSION 2u
#define STORAGE_META_IID 0
#define STORAGE_FLAG_FINAL 1u

struct storage_meta {
	uint32_t version; /* decode fills it in; encode writes STORAGE_FORMAT_VERSION */
	paxos_iid trim;
	paxos_iid highest_accepted;
};

/* Creates and exclusively locks dir/paxos.lock (flock, so a second open in this process is
 * refused too). Returns the descriptor that holds the lock, or -1 with err set. */
int storage_lock_dir(const char *dir, char *err, size_t errlen);
void storage_unlock_dir(int fd);

/* mkdir -p: every missing component of path, mode 0700 (acceptor and proposer state is
 * private). Returns PAXOS_OK, or PAXOS_E_IO with err set. */
int storage_make_dirs(const char *path, char *err, size_t errlen);

/* Replaces dirfd/name with text so that a crash leaves the old or the new file, never a
 * mix: written to dirfd/temp (mode 0600), fsync, rename, fsync of the directory. Returns 0,
 * or an errno; *created says whether the temporary file could be made at all. */
int storage_replace_file(int dirfd, const char *name, const char *temp, const char *text,
			 size_t len, bool *created);

/* The same in the directory dir, by path: PAXOS_OK, or PAXOS_E_IO with err saying which file
 * could not be written and why. */
int storage_replace_in_dir(const char *dir, const char *name, const char *temp, const char *text,
			   size_t len, char *err, size_t errlen);

/* Reads the whole small file dir/name (opened at dirfd, or by path when dirfd is -1) into
 * text[cap], NUL-terminated: PAXOS_OK with *len its length, up to cap - 1 (a caller that
 * must tell a longer file asks one byte more than it accepts), and *missing when there is no
 * such file; PAXOS_E_IO with the reason in err. */
int storage_read_small(int dirfd, const char *dir, const char *name, char *text, size_t cap,
		       size_t *len, bool *missing, char *err, size_t errlen);

void storage_key_encode(uint8_t key[STORAGE_KEY_SIZE], paxos_iid iid);
paxos_iid storage_key_decode(const uint8_t key[STORAGE_KEY_SIZE]);

/* Header plus value bytes into out, which has room for STORAGE_HEADER_SIZE + value.len. */
void storage_record_encode(uint8_t *out, const struct paxos_record *rec);

/* Fills rec from a stored record; rec->value points into data. Returns false if data is not
 * a well-formed record (a corrupt store). */
bool storage_record_decode(paxos_iid iid, const uint8_t *data, size_t size,
			   struct paxos_record *rec);

/* Scanning back from the last key for the highest accepted instance (promise-only records may
 * follow it): what the record at key, data says. */
enum storage_scan {
	STORAGE_SCAN_ON,      /* not it: go on to the key before */
	STORAGE_SCAN_DONE,    /* *highest is the store's highest accepted instance */
	STORAGE_SCAN_CORRUPT, /* not a key or not a record */
};
enum storage_scan storage_scan_back(const void *key, size_t key_size, const void *data, size_t size,
				    paxos_iid *highest);

void storage_meta_encode(uint8_t out[STORAGE_META_SIZE], const struct storage_meta *meta);

enum storage_meta_status {
	STORAGE_META_OK,
	STORAGE_META_CORRUPT,
	STORAGE_META_OTHER_VERSION, /* meta->version says which */
};

/* Checks a store's metadata record (NULL data: there is none) and says in err, which has
 * room for errlen bytes, why a store cannot be used. Returns true when it can; *create then
 * tells whether the metadata record must still be written (a new, empty store). */
bool storage_meta_check(const uint8_t *data, size_t size, bool has_records,
			struct storage_meta *meta, bool *create, char *err, size_t errlen);

/* Grows *buf (holding *cap bytes, 0 when none yet) to at least size bytes, doubling from
 * first: the backends' scratch buffers for encoded records. PAXOS_OK or PAXOS_E_NOMEM (*buf
 * unchanged). */
int storage_grow_buffer(uint8_t **buf, size_t *cap, size_t size, size_t first);

#endif
