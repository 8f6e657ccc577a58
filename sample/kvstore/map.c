/* SPDX-License-Identifier: BSD-3-Clause */
#include "map.h"

#include <stdlib.h>
#include <string.h>

struct kv_map {
	struct kv_entry **buckets;
	size_t nbuckets; /* a power of two */
	size_t size;
};

#define INITIAL_BUCKETS 64

static uint64_t hash(const void *key, size_t len)
{
	const uint8_t *p = key;
	uint64_t h = 14695981039346656037ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

struct kv_map *kv_map_new(void)
{
	struct kv_map *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->nbuckets = INITIAL_BUCKETS;
	m->buckets = calloc(m->nbuckets, sizeof(*m->buckets));
	if (!m->buckets) {
		free(m);
		return NULL;
	}
	return m;
}

void kv_map_free(struct kv_map *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct kv_entry *e = m->buckets[i];
		while (e) {
			struct kv_entry *next = e->next;
			free(e->value);
			free(e);
			e = next;
		}
	}
	free(m->buckets);
	free(m);
}

static struct kv_entry **find(const struct kv_map *m, const void *key, size_t key_len)
{
	struct kv_entry **e = &m->buckets[hash(key, key_len) & (m->nbuckets - 1)];
	while (*e && ((*e)->key_len != key_len || memcmp((*e)->key, key, key_len) != 0))
		e = &(*e)->next;
	return e;
}

const struct kv_entry *kv_map_get(const struct kv_map *m, const void *key, size_t key_len)
{
	return *find(m, key, key_len);
}

/* Doubles the buckets when the chains get long; failing to grow only costs speed. */
static void grow(struct kv_map *m)
{
	size_t n = m->nbuckets * 2;
	struct kv_entry **b = calloc(n, sizeof(*b));
	if (!b)
		return;
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct kv_entry *e = m->buckets[i];
		while (e) {
			struct kv_entry *next = e->next;
			struct kv_entry **head = &b[hash(e->key, e->key_len) & (n - 1)];
			e->next = *head;
			*head = e;
			e = next;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->nbuckets = n;
}

int kv_map_put(struct kv_map *m, const void *key, size_t key_len, const void *value,
	       size_t value_len)
{
	if (key_len > UINT32_MAX || value_len > UINT32_MAX)
		return -1;
	uint8_t *copy = malloc(value_len ? value_len : 1);
	if (!copy)
		return -1;
	if (value_len)
		memcpy(copy, value, value_len);
	struct kv_entry **slot = find(m, key, key_len);
	struct kv_entry *e = *slot;
	if (!e) {
		e = malloc(sizeof(*e) + key_len);
		if (!e) {
			free(copy);
			return -1;
		}
		e->next = NULL;
		e->value = NULL;
		e->key_len = (uint32_t)key_len;
		memcpy(e->key, key, key_len);
		*slot = e;
		m->size++;
	}
	free(e->value);
	e->value = copy;
	e->value_len = (uint32_t)value_len;
	if (m->size > m->nbuckets)
		grow(m);
	return 0;
}

int kv_map_delete(struct kv_map *m, const void *key, size_t key_len)
{
	struct kv_entry **slot = find(m, key, key_len);
	struct kv_entry *e = *slot;
	if (!e)
		return 0;
	*slot = e->next;
	free(e->value);
	free(e);
	m->size--;
	return 1;
}

size_t kv_map_size(const struct kv_map *m)
{
	return m->size;
}

static int compare_entries(const void *a, const void *b)
{
	const struct kv_entry *x = *(const struct kv_entry *const *)a;
	const struct kv_entry *y = *(const struct kv_entry *const *)b;
	size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
	int c = memcmp(x->key, y->key, n);
	if (c)
		return c;
	return (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

const struct kv_entry **kv_map_sorted(const struct kv_map *m)
{
	const struct kv_entry **all = malloc((m->size ? m->size : 1) * sizeof(*all));
	if (!all)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < m->nbuckets; i++)
		for (const struct kv_entry *e = m->buckets[i]; e; e = e->next)
			all[k++] = e;
	qsort(all, k, sizeof(*all), compare_entries);
	return all;
}
