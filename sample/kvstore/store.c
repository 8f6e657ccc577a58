/* SPDX-License-Identifier: BSD-3-Clause */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "map.h"
#include "shard.h"

struct kv_store {
	struct kv_map *data;
	uint32_t replicas;
	uint64_t *announced; /* per replica */
	uint64_t commands;
	uint32_t partition, partitions; /* the shard this store holds (0 of 1: all keys) */
	uint64_t generation;            /* the log it was built from, if generation_known */
	bool generation_known;
};

/* Client records of snapshots written before the library's sessions: skipped on load. */
#define OLD_CLIENT_RECORD 17

static void be_put(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

static uint64_t be_get(const uint8_t *p, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

struct kv_store *kv_store_new(uint32_t replicas)
{
	struct kv_store *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->replicas = replicas;
	s->partitions = 1;
	s->data = kv_map_new();
	s->announced = calloc(replicas ? replicas : 1, sizeof(*s->announced));
	if (!s->data || !s->announced) {
		kv_store_free(s);
		return NULL;
	}
	return s;
}

void kv_store_free(struct kv_store *s)
{
	if (!s)
		return;
	kv_map_free(s->data);
	free(s->announced);
	free(s);
}

/* Runs a new command against the table; the result value borrows from the table or from c. */
static int execute(struct kv_store *s, const struct kv_command *c, enum kv_status *status,
		   struct kv_bytes *result)
{
	const struct kv_bytes *key = &c->arg[0];
	*status = KV_OK;
	*result = (struct kv_bytes){NULL, 0};
	/* A key of another shard: the command was routed by a client that counts partitions
	 * differently, or spans shards; every replica of this partition refuses it alike. */
	int p = kv_command_partition(c, s->partitions, NULL);
	if (p < 0 || (uint32_t)p != s->partition) {
		*status = p < 0 ? KV_CROSS_PARTITION : KV_WRONG_PARTITION;
		return 0;
	}
	const struct kv_entry *e = kv_map_get(s->data, key->data, key->len);
	switch (c->op) {
	case KV_PUT:
		return kv_map_put(s->data, key->data, key->len, c->arg[1].data, c->arg[1].len);
	case KV_GET:
		if (!e)
			*status = KV_NOT_FOUND;
		else
			*result = (struct kv_bytes){e->value, (uint16_t)e->value_len};
		return 0;
	case KV_DELETE:
		if (!kv_map_delete(s->data, key->data, key->len))
			*status = KV_NOT_FOUND;
		return 0;
	case KV_CAS:
		if (!e) {
			*status = KV_NOT_FOUND;
			return 0;
		}
		if (e->value_len != c->arg[1].len ||
		    (e->value_len && memcmp(e->value, c->arg[1].data, e->value_len) != 0)) {
			*status = KV_CAS_FAILED;
			*result = (struct kv_bytes){e->value, (uint16_t)e->value_len};
			return 0;
		}
		return kv_map_put(s->data, key->data, key->len, c->arg[2].data, c->arg[2].len);
	case KV_COPY:
		if (!e) {
			*status = KV_NOT_FOUND;
			return 0;
		}
		/* kv_map_put copies the value before it touches the table. */
		return kv_map_put(s->data, c->arg[1].data, c->arg[1].len, e->value, e->value_len);
	case KV_SNAPSHOT:
		break;
	}
	return -1;
}

void kv_store_set_partition(struct kv_store *s, uint32_t partition, uint32_t partitions)
{
	s->partition = partition;
	s->partitions = partitions ? partitions : 1;
}

enum kv_outcome kv_store_apply(struct kv_store *s, const struct kv_command *c, uint64_t iid,
			       struct kv_reply *reply)
{
	if (c->op == KV_SNAPSHOT) {
		if (c->client >= s->replicas)
			return KV_INVALID;
		if (c->seq > s->announced[c->client])
			s->announced[c->client] = c->seq;
		return KV_ANNOUNCED;
	}
	enum kv_status status;
	struct kv_bytes result;
	if (execute(s, c, &status, &result) != 0)
		return KV_NOMEM;
	s->commands++;
	*reply = (struct kv_reply){
	    .status = status, .client = c->client, .seq = c->seq, .iid = iid, .value = result};
	return KV_APPLIED;
}

int kv_store_get(const struct kv_store *s, const struct kv_bytes *key, struct kv_bytes *value)
{
	if (kv_key_partition(key->data, key->len, s->partitions) != s->partition)
		return -1;
	const struct kv_entry *e = kv_map_get(s->data, key->data, key->len);
	if (!e)
		return 0;
	*value = (struct kv_bytes){e->value, (uint16_t)e->value_len};
	return 1;
}

uint64_t kv_store_announced(const struct kv_store *s, uint32_t replica)
{
	return replica < s->replicas ? s->announced[replica] : 0;
}

uint64_t kv_store_all_announced(const struct kv_store *s)
{
	uint64_t low = UINT64_MAX;
	for (uint32_t r = 0; r < s->replicas; r++)
		if (s->announced[r] < low)
			low = s->announced[r];
	return s->replicas ? low : 0;
}

uint64_t kv_store_commands(const struct kv_store *s)
{
	return s->commands;
}

size_t kv_store_keys(const struct kv_store *s)
{
	return kv_map_size(s->data);
}

void kv_store_set_generation(struct kv_store *s, uint64_t generation)
{
	s->generation = generation;
	s->generation_known = true;
}

bool kv_store_generation(const struct kv_store *s, uint64_t *generation)
{
	*generation = s->generation;
	return s->generation_known;
}

/* ---- snapshots ----
 * "KVSNAP4\n" iid(8) known(1) generation(8) replicas(4) commands(8) 0(8) announced(8 each)
 * membership_len(4) membership sessions_len(4) sessions, then the data table as count(8) and per
 * entry key_len(4) key value_len(4) value; then an FNV-1a hash(8) of everything before it. known is
 * 1 when generation names the log the store was built from. "KVSNAP3\n" lacks both. "KVSNAP2\n" has
 * no sessions but a table of the clients' last commands before the data table (the same form),
 * skipped on load; "KVSNAP1\n" has no membership either. */

#define SNAP_MAGIC "KVSNAP4\n"
#define SNAP_MAGIC_3 "KVSNAP3\n"
#define SNAP_MAGIC_2 "KVSNAP2\n"
#define SNAP_MAGIC_1 "KVSNAP1\n"
/* The most bytes of session table a snapshot takes (36 + 24 per client: 16M clients). */
#define SNAP_SESSIONS_MAX (400u << 20)
/* The most bytes of membership a snapshot takes (paxos_membership_encode writes less). */
#define SNAP_MEMBERSHIP_MAX 4096u

struct writer {
	FILE *f;
	uint64_t hash;
};

static void w_bytes(struct writer *w, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		w->hash = (w->hash ^ b[i]) * 1099511628211ull;
	if (n)
		fwrite(p, 1, n, w->f);
}

static void w_uint(struct writer *w, uint64_t v, int bytes)
{
	uint8_t b[8];
	be_put(b, v, bytes);
	w_bytes(w, b, (size_t)bytes);
}

static int w_map(struct writer *w, const struct kv_map *m)
{
	const struct kv_entry **all = kv_map_sorted(m);
	if (!all)
		return -1;
	w_uint(w, kv_map_size(m), 8);
	for (size_t i = 0; i < kv_map_size(m); i++) {
		w_uint(w, all[i]->key_len, 4);
		w_bytes(w, all[i]->key, all[i]->key_len);
		w_uint(w, all[i]->value_len, 4);
		w_bytes(w, all[i]->value, all[i]->value_len);
	}
	free((void *)all);
	return 0;
}

static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	close(fd);
	return rc;
}

int kv_store_save(const struct kv_store *s, const char *dir, uint64_t iid,
		  const uint8_t *membership, size_t membership_len, const uint8_t *sessions,
		  size_t sessions_len, char *err, size_t errlen)
{
	if (membership_len > SNAP_MEMBERSHIP_MAX || (membership_len && !membership)) {
		snprintf(err, errlen, "%s: a membership of %zu bytes", dir, membership_len);
		return -1;
	}
	if (sessions_len > SNAP_SESSIONS_MAX || (sessions_len && !sessions)) {
		snprintf(err, errlen, "%s: a session table of %zu bytes", dir, sessions_len);
		return -1;
	}
	char tmp[PATH_MAX], path[PATH_MAX];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/snapshot.tmp", dir) >= sizeof(tmp) ||
	    (size_t)snprintf(path, sizeof(path), "%s/snapshot", dir) >= sizeof(path)) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -1;
	}
	struct writer w = {fopen(tmp, "wb"), 14695981039346656037ull};
	if (!w.f) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	w_bytes(&w, SNAP_MAGIC, 8);
	w_uint(&w, iid, 8);
	w_uint(&w, s->generation_known, 1);
	w_uint(&w, s->generation, 8);
	w_uint(&w, s->replicas, 4);
	w_uint(&w, s->commands, 8);
	w_uint(&w, 0, 8);
	for (uint32_t r = 0; r < s->replicas; r++)
		w_uint(&w, s->announced[r], 8);
	w_uint(&w, membership_len, 4);
	w_bytes(&w, membership, membership_len);
	w_uint(&w, sessions_len, 4);
	w_bytes(&w, sessions, sessions_len);
	int rc = w_map(&w, s->data);
	uint64_t hash = w.hash;
	w_uint(&w, hash, 8);
	/* Durable before it replaces the old snapshot: fflush, fsync, rename, fsync the dir. */
	if (rc != 0 || fflush(w.f) != 0 || ferror(w.f) || fsync(fileno(w.f)) != 0) {
		snprintf(err, errlen, "%s: %s", tmp, rc ? "out of memory" : strerror(errno));
		fclose(w.f);
		unlink(tmp);
		return -1;
	}
	if (fclose(w.f) != 0 || rename(tmp, path) != 0 || sync_dir(dir) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

struct reader {
	const uint8_t *p;
	size_t left;
	int bad;
};

static const uint8_t *r_bytes(struct reader *r, size_t n)
{
	if (r->bad || n > r->left) {
		r->bad = 1;
		return NULL;
	}
	const uint8_t *p = r->p;
	r->p += n;
	r->left -= n;
	return p;
}

static uint64_t r_uint(struct reader *r, int bytes)
{
	const uint8_t *p = r_bytes(r, (size_t)bytes);
	return p ? be_get(p, bytes) : 0;
}

static int r_map(struct reader *r, struct kv_map *m, uint32_t min_value)
{
	uint64_t count = r_uint(r, 8);
	for (uint64_t i = 0; i < count && !r->bad; i++) {
		uint32_t klen = (uint32_t)r_uint(r, 4);
		const uint8_t *key = r_bytes(r, klen);
		uint32_t vlen = (uint32_t)r_uint(r, 4);
		const uint8_t *value = r_bytes(r, vlen);
		if (r->bad || klen > KV_MAX_FIELD || vlen < min_value ||
		    vlen - min_value > KV_MAX_FIELD || kv_map_put(m, key, klen, value, vlen) != 0)
			r->bad = 1;
	}
	return r->bad ? -1 : 0;
}

/* The whole file in memory (a sample's snapshots are small); NULL with errno set. */
static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 65536, n = 0;
	uint8_t *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break; /* end of file, or an error */
		uint8_t *more = realloc(buf, cap *= 2);
		if (!more)
			free(buf);
		buf = more;
	}
	int failed = !buf || ferror(f);
	fclose(f);
	if (failed) {
		int why = buf ? EIO : ENOMEM;
		free(buf);
		errno = why;
		return NULL;
	}
	*len = n;
	return buf;
}

/* A copy of n bytes at p into *out (NULL for none); -1 when out of memory. */
static int copy_out(const uint8_t *p, size_t n, uint8_t **out, size_t *out_len)
{
	*out = NULL;
	*out_len = n;
	if (!n)
		return 0;
	if (!(*out = malloc(n)))
		return -1;
	memcpy(*out, p, n);
	return 0;
}

struct kv_store *kv_store_load(const char *dir, uint32_t replicas, uint64_t *iid,
			       uint8_t **membership, size_t *membership_len, uint8_t **sessions,
			       size_t *sessions_len, char *err, size_t errlen)
{
	char path[PATH_MAX];
	err[0] = 0;
	*membership = *sessions = NULL;
	*membership_len = *sessions_len = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/snapshot", dir) >= sizeof(path)) {
		snprintf(err, errlen, "%s: path too long", dir);
		return NULL;
	}
	size_t len;
	uint8_t *buf = read_file(path, &len);
	if (!buf) {
		if (errno != ENOENT)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	struct kv_store *s = kv_store_new(replicas);
	struct reader r = {buf, len, !s};
	uint64_t hash = 14695981039346656037ull;
	for (size_t i = 0; len >= 8 && i < len - 8; i++)
		hash = (hash ^ buf[i]) * 1099511628211ull;
	const uint8_t *magic = r_bytes(&r, 8);
	bool format1 = magic && memcmp(magic, SNAP_MAGIC_1, 8) == 0;
	bool format2 = magic && memcmp(magic, SNAP_MAGIC_2, 8) == 0;
	bool format3 = magic && memcmp(magic, SNAP_MAGIC_3, 8) == 0;
	if (!magic || (!format1 && !format2 && !format3 && memcmp(magic, SNAP_MAGIC, 8) != 0) ||
	    be_get(buf + len - 8, 8) != hash) {
		snprintf(err, errlen, "%s: not a snapshot, or damaged", path);
		goto fail;
	}
	r.left -= 8; /* the hash */
	*iid = r_uint(&r, 8);
	if (!format1 && !format2 && !format3) {
		uint64_t known = r_uint(&r, 1);
		s->generation = r_uint(&r, 8);
		s->generation_known = known == 1;
		if (known > 1)
			r.bad = 1;
	}
	if (r_uint(&r, 4) != replicas) {
		snprintf(err, errlen, "%s: written for another number of replicas than %u", path,
			 replicas);
		goto fail;
	}
	s->commands = r_uint(&r, 8);
	r_uint(&r, 8); /* duplicates, counted by the store before the library's sessions */
	for (uint32_t i = 0; i < replicas; i++)
		s->announced[i] = r_uint(&r, 8);
	size_t mlen = format1 ? 0 : (size_t)r_uint(&r, 4);
	const uint8_t *m = r_bytes(&r, mlen);
	if (r.bad || mlen > SNAP_MEMBERSHIP_MAX) {
		snprintf(err, errlen, "%s: damaged", path);
		goto fail;
	}
	if (copy_out(m, mlen, membership, membership_len) != 0)
		goto fail;
	size_t slen = format1 || format2 ? 0 : (size_t)r_uint(&r, 4);
	const uint8_t *st = r_bytes(&r, slen);
	if (r.bad || slen > SNAP_SESSIONS_MAX) {
		snprintf(err, errlen, "%s: damaged", path);
		goto fail;
	}
	if (copy_out(st, slen, sessions, sessions_len) != 0)
		goto fail;
	if (format1 || format2) { /* the clients' last commands: the sessions keep that now */
		struct kv_map *old = kv_map_new();
		int rc = old ? r_map(&r, old, OLD_CLIENT_RECORD) : -1;
		kv_map_free(old);
		if (rc != 0)
			r.bad = 1;
	}
	if (r.bad || r_map(&r, s->data, 0) != 0 || r.left) {
		snprintf(err, errlen, "%s: damaged", path);
		goto fail;
	}
	free(buf);
	return s;
fail:
	if (!err[0])
		snprintf(err, errlen, "out of memory");
	free(*membership);
	free(*sessions);
	*membership = *sessions = NULL;
	*membership_len = *sessions_len = 0;
	kv_store_free(s);
	free(buf);
	return NULL;
}

static void dump_bytes(FILE *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] > ' ' && p[i] < 127 && p[i] != '%')
			fputc(p[i], out);
		else
			fprintf(out, "%%%02X", p[i]);
	}
}

int kv_store_dump(const struct kv_store *s, FILE *out)
{
	const struct kv_entry **all = kv_map_sorted(s->data);
	if (!all)
		return -1;
	fprintf(out, "commands %llu\n", (unsigned long long)s->commands);
	for (size_t i = 0; i < kv_map_size(s->data); i++) {
		dump_bytes(out, all[i]->key, all[i]->key_len);
		fputc(' ', out);
		dump_bytes(out, all[i]->value, all[i]->value_len);
		fputc('\n', out);
	}
	free((void *)all);
	return ferror(out) ? -1 : 0;
}
