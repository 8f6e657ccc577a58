/*
 * What the durable storage backends (storage_lmdb.c, storage_bdb.c) share: the directory
 * lock and the on-disk layout. Internal to libpaxos.
 *
 * Layout, all integers big-endian:
 *   key: the iid in 8 bytes, so keys sort numerically; iid 0 (never a real instance) is
 *        the metadata record.
 *   record: promised u32, accepted u32, flags u32 (bit 0: final), value length u32, value.
 *   metadata: magic u32, version u32, trim iid u64, highest accepted iid u64 at that trim
 *        (trimming may delete the record that held it).
 */
#ifndef PAXOS_STORAGE_BACKEND_H
#define PAXOS_STORAGE_BACKEND_H

#include <paxos/storage.h>

#define STORAGE_LOCK_FILE "paxos.lock"
#define STORAGE_KEY_SIZE 8
#define STORAGE_HEADER_SIZE 16
#define STORAGE_META_SIZE 24
#define STORAGE_META_IID 0
#define STORAGE_FLAG_FINAL 1u

struct storage_meta {
	paxos_iid trim;
	paxos_iid highest_accepted;
};

/* Creates and exclusively locks dir/paxos.lock (flock, so a second open in this process is
 * refused too). Returns the descriptor that holds the lock, or -1 with err set. */
int storage_lock_dir(const char *dir, char *err, size_t errlen);
void storage_unlock_dir(int fd);

void storage_key_encode(uint8_t key[STORAGE_KEY_SIZE], paxos_iid iid);
paxos_iid storage_key_decode(const uint8_t key[STORAGE_KEY_SIZE]);

/* Header plus value bytes into out, which has room for STORAGE_HEADER_SIZE + value.len. */
void storage_record_encode(uint8_t *out, const struct paxos_record *rec);

/* Fills rec from a stored record; rec->value points into data. Returns false if data is not
 * a well-formed record (a corrupt store). */
bool storage_record_decode(paxos_iid iid, const uint8_t *data, size_t size,
			   struct paxos_record *rec);

void storage_meta_encode(uint8_t out[STORAGE_META_SIZE], const struct storage_meta *meta);
bool storage_meta_decode(const uint8_t *data, size_t size, struct storage_meta *meta);

#endif
