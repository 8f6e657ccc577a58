/* SPDX-License-Identifier: BSD-3-Clause */
/* A hash map from byte strings to byte strings: the store's table and its client table. */
#ifndef KVSTORE_MAP_H
#define KVSTORE_MAP_H

#include <stddef.h>
#include <stdint.h>

struct kv_entry {
	struct kv_entry *next; /* bucket chain */
	uint8_t *value;
	uint32_t key_len, value_len;
	uint8_t key[]; /* key_len bytes */
};

struct kv_map;

struct kv_map *kv_map_new(void);
void kv_map_free(struct kv_map *m);

/* The entry for key, or NULL. */
const struct kv_entry *kv_map_get(const struct kv_map *m, const void *key, size_t key_len);
/* Inserts or replaces; 0, or -1 when out of memory (the map is unchanged then). */
int kv_map_put(struct kv_map *m, const void *key, size_t key_len, const void *value,
	       size_t value_len);
/* 1 if key was there and is removed, 0 if it was not there. */
int kv_map_delete(struct kv_map *m, const void *key, size_t key_len);
size_t kv_map_size(const struct kv_map *m);

/* Every entry in key order (bytewise, shorter first on a tie), so that equal maps print and
 * save identically. A malloc'd array of kv_map_size() entries the caller frees; NULL when
 * out of memory (or the map is empty). */
const struct kv_entry **kv_map_sorted(const struct kv_map *m);

#endif
