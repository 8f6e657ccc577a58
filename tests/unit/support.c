/* SPDX-License-Identifier: BSD-3-Clause */
#include "support.h"

#include <paxos/membership.h>
#include <paxos/node.h>
#include <paxos/proposer.h>
#include <paxos/storage.h>
#include <paxos/storage_backends.h>

#include <check.h>

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "config_fields.h"

void support_run_for(struct event_base *base, long ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

struct paxos_value support_command(uint32_t from, uint32_t members, uint8_t *buf)
{
	paxos_membership_command(from, members, buf);
	return (struct paxos_value){buf, PAXOS_MEMBERSHIP_COMMAND_LEN};
}

int support_change(struct paxos_proposer *p, const struct paxos_value *v)
{
	struct recorder *r = recorder_new();
	int rc = paxos_proposer_change(p, v, 1, &r->emitter);
	recorder_free(r);
	return rc;
}

void support_cluster_start(struct support_cluster *c, const char *options)
{
	char text[512], err[256];
	snprintf(c->dir, sizeof(c->dir), "/tmp/paxos-cluster-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(c->dir));
	int len = snprintf(text, sizeof(text), "acceptors 3\nproposers 1\nstorage-path %s\n%s",
			   c->dir, options);
	paxos_config_defaults(&c->cfg);
	ck_assert_msg(paxos_config_parse(&c->cfg, text, (size_t)len, "cluster", err, sizeof(err)) ==
			  PAXOS_OK,
		      "%s", err);
	c->base = event_base_new();
	ck_assert_ptr_nonnull(c->base);
	for (uint32_t i = 0; i < 3; i++) {
		c->acc[i] = support_cluster_node(c);
		ck_assert_int_eq(paxos_node_add_acceptor(c->acc[i], i, paxos_storage_memory_new()),
				 PAXOS_OK);
	}
}

struct paxos_node *support_cluster_node(struct support_cluster *c)
{
	char err[256];
	struct paxos_node *n = paxos_node_new(c->base, &c->cfg, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	return n;
}

void support_cluster_free(struct support_cluster *c)
{
	for (uint32_t i = 0; i < 3; i++)
		paxos_node_free(c->acc[i]);
	event_base_free(c->base);
	char rm[128];
	snprintf(rm, sizeof(rm), "rm -rf %s", c->dir);
	ck_assert_int_eq(system(rm), 0);
}

static struct paxos_value keep(struct recorder *r, struct paxos_value v)
{
	struct paxos_value copy = {r->arena + r->arena_used, v.len};
	if (r->arena_used + v.len > RECORDER_ARENA)
		abort();
	if (v.len)
		memcpy(r->arena + r->arena_used, v.data, v.len);
	r->arena_used += v.len;
	return copy;
}

static void record(void *ctx, enum paxos_group to, const struct paxos_message *m)
{
	struct recorder *r = ctx;
	if (r->count == RECORDER_MAX)
		abort();
	struct paxos_message *copy = &r->msg[r->count];
	*copy = *m;
	struct paxos_value *v = paxos_msg_value(copy);
	if (v)
		*v = keep(r, *v);
	r->group[r->count++] = to;
}

struct recorder *recorder_new(void)
{
	struct recorder *r = calloc(1, sizeof(*r));
	r->arena = malloc(RECORDER_ARENA);
	r->emitter.emit = record;
	r->emitter.ctx = r;
	return r;
}

void recorder_free(struct recorder *r)
{
	if (!r)
		return;
	free(r->arena);
	free(r);
}

void recorder_clear(struct recorder *r)
{
	r->count = 0;
	r->arena_used = 0;
}

size_t recorder_count(const struct recorder *r, enum paxos_msg_type type, int group)
{
	size_t n = 0;
	for (size_t i = 0; i < r->count; i++)
		if (r->msg[i].type == type && (group < 0 || (int)r->group[i] == group))
			n++;
	return n;
}

const struct paxos_message *recorder_find(const struct recorder *r, enum paxos_msg_type type,
					  size_t n)
{
	for (size_t i = 0; i < r->count; i++)
		if (r->msg[i].type == type && n-- == 0)
			return &r->msg[i];
	return NULL;
}

struct paxos_value value_of(const char *s)
{
	struct paxos_value v = {(const uint8_t *)s, (uint32_t)strlen(s)};
	return v;
}

int value_is(const struct paxos_value *v, const char *s)
{
	size_t n = strlen(s);
	return v->len == n && (n == 0 || memcmp(v->data, s, n) == 0);
}

struct failing_storage {
	struct paxos_storage base; /* first: the storage pointer is the container */
	const char *error;
};

static int failing_begin(struct paxos_storage *st)
{
	(void)st;
	return PAXOS_E_STORAGE;
}

static paxos_iid failing_iid(struct paxos_storage *st)
{
	(void)st;
	return 0;
}

/* Says it holds instance 1, so that the acceptor's first tick reads it, and fails. */
static paxos_iid failing_highest(struct paxos_storage *st)
{
	(void)st;
	return 1;
}

static int failing_get(struct paxos_storage *st, paxos_iid iid, struct paxos_record *rec)
{
	(void)st;
	(void)iid;
	(void)rec;
	return PAXOS_E_STORAGE;
}

static const char *failing_error(struct paxos_storage *st)
{
	return ((struct failing_storage *)st)->error;
}

static void failing_destroy(struct paxos_storage *st)
{
	free(st);
}

static const struct paxos_storage_ops failing_ops = {
    .name = "failing",
    .begin = failing_begin,
    .commit = failing_begin,
    .get = failing_get,
    .trim_iid = failing_iid,
    .highest_accepted = failing_highest,
    .destroy = failing_destroy,
    .error = failing_error,
};

struct paxos_storage *failing_storage_new(const char *error)
{
	struct failing_storage *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->base.ops = &failing_ops;
	f->error = error;
	return &f->base;
}

/* The admin key of this test process (membership changes): written once, removed at exit. */
static char admin_key_path[64];

static void remove_admin_key(void)
{
	unlink(admin_key_path);
}

void support_admin_key(struct paxos_config *cfg)
{
	if (!admin_key_path[0]) {
		char err[256];
		snprintf(admin_key_path, sizeof(admin_key_path), "/tmp/paxos-test-admin-%ld.key",
			 (long)getpid());
		if (paxos_auth_write_key(admin_key_path, true, err, sizeof(err)) != PAXOS_OK)
			abort();
		atexit(remove_admin_key);
	}
	snprintf(cfg->admin_key_file, sizeof(cfg->admin_key_file), "%s", admin_key_path);
}
