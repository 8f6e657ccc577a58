/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * With a storage whose commits are pipelined (paxos/storage.h, sync), the node sends none of
 * the acceptor's or the serializer's replies before the commit they follow is durable. A stub
 * storage (the memory backend inside) says a commit is durable only when the test releases
 * it, as a flush on the storage's thread would (storage-flush-thread yes), or when the node
 * flushes on its own loop (a lone acceptor by default); a stub transport keeps what the node
 * sends.
 */
#include "check_main.h"
#include <event2/event.h>
#include <paxos/paxos.h>
#include <paxos/storage_backends.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "codec.h"
#include "config_fields.h"
#include "stub_transport.h"

struct stub_storage {
	struct paxos_storage base;
	struct paxos_storage *mem;
	bool changed;       /* the open batch wrote */
	uint64_t committed; /* commits with changes */
	uint64_t durable;   /* released by the test */
	uint64_t flushes;
	bool fail;
	unsigned waits;             /* sync calls with wait: flushes on the caller's thread */
	unsigned starts;            /* sync calls without */
	struct stub *t;             /* the node's transport */
	unsigned promises_at_flush; /* promises sent when the last flush on the loop began */
	int fds[2];
	bool destroyed;
};

static unsigned sent(const struct stub *t, size_t first, enum paxos_msg_type type, paxos_iid iid);

static struct stub_storage *of(struct paxos_storage *st)
{
	return (struct stub_storage *)st;
}

static int stub_begin(struct paxos_storage *st)
{
	return of(st)->mem->ops->begin(of(st)->mem);
}

static int stub_commit(struct paxos_storage *st)
{
	struct stub_storage *s = of(st);
	int rc = s->mem->ops->commit(s->mem);
	if (rc == PAXOS_OK && s->changed)
		s->committed++;
	s->changed = false;
	return rc;
}

static int stub_get(struct paxos_storage *st, paxos_iid iid, struct paxos_record *rec)
{
	return of(st)->mem->ops->get(of(st)->mem, iid, rec);
}

static int stub_put(struct paxos_storage *st, const struct paxos_record *rec)
{
	of(st)->changed = true;
	return of(st)->mem->ops->put(of(st)->mem, rec);
}

static int stub_trim(struct paxos_storage *st, paxos_iid iid)
{
	of(st)->changed = true;
	return of(st)->mem->ops->trim(of(st)->mem, iid);
}

static paxos_iid stub_trim_iid(struct paxos_storage *st)
{
	return of(st)->mem->ops->trim_iid(of(st)->mem);
}

static paxos_iid stub_highest_accepted(struct paxos_storage *st)
{
	return of(st)->mem->ops->highest_accepted(of(st)->mem);
}

static void stub_destroy(struct paxos_storage *st)
{
	struct stub_storage *s = of(st);
	paxos_storage_destroy(s->mem);
	close(s->fds[0]);
	close(s->fds[1]);
	s->destroyed = true;
}

static const char *stub_error(struct paxos_storage *st)
{
	return of(st)->fail ? "stub: flush failed: Input/output error" : "";
}

static uint64_t stub_committed(struct paxos_storage *st)
{
	return of(st)->committed;
}

/* With wait, everything committed becomes durable: what a real backend's thread would do. */
static int stub_sync(struct paxos_storage *st, bool wait, struct paxos_storage_progress *p)
{
	struct stub_storage *s = of(st);
	char buf[16];
	while (read(s->fds[0], buf, sizeof(buf)) > 0)
		;
	if (s->fail)
		return PAXOS_E_STORAGE;
	if (wait) {
		s->waits++;
		if (s->t)
			s->promises_at_flush = sent(s->t, 0, PAXOS_MSG_PROMISE, 0);
		s->durable = s->committed;
	} else {
		s->starts++;
	}
	if (p)
		*p = (struct paxos_storage_progress){.committed = s->committed,
						     .durable = s->durable,
						     .flushes = s->flushes,
						     .flushed_records = 3 * s->flushes,
						     .flush_us = 500 * s->flushes};
	return PAXOS_OK;
}

static int stub_sync_fd(struct paxos_storage *st)
{
	return of(st)->fds[0];
}

static const struct paxos_storage_ops stub_ops = {
    .name = "stub",
    .begin = stub_begin,
    .commit = stub_commit,
    .get = stub_get,
    .put = stub_put,
    .trim = stub_trim,
    .trim_iid = stub_trim_iid,
    .highest_accepted = stub_highest_accepted,
    .destroy = stub_destroy,
    .error = stub_error,
    .committed = stub_committed,
    .sync = stub_sync,
    .sync_fd = stub_sync_fd,
};

/* A stub holding instance 1 accepted already, so the acceptor votes from the start (it does
 * not recover as one that lost its state would). */
static struct stub_storage *stub_storage_new(void)
{
	struct stub_storage *s = calloc(1, sizeof(*s));
	s->base.ops = &stub_ops;
	s->mem = paxos_storage_memory_new();
	ck_assert_int_eq(pipe2(s->fds, O_NONBLOCK), 0);
	struct paxos_record r = {1, 1, 1, {(const uint8_t *)"x", 1}, false};
	ck_assert_int_eq(s->mem->ops->put(s->mem, &r), PAXOS_OK);
	return s;
}

/* The test's flush thread: commits up to upto are durable, and the node is woken. */
static void release(struct stub_storage *s, uint64_t upto)
{
	s->durable = upto;
	s->flushes++;
	ck_assert_int_eq(write(s->fds[1], "", 1), 1);
}

static void deliver(struct stub *t, enum paxos_group g, enum paxos_role role,
		    const struct paxos_message *m)
{
	uint8_t buf[512];
	uint32_t id = 0;
	paxos_msg_proposer(m, &id); /* a ballot's proposer sends it */
	struct paxos_header from = {.role = role, .sender_id = id};
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, sizeof(buf), &from);
	ck_assert_int_eq(paxos_encoder_add(&e, m), PAXOS_OK);
	struct paxos_rx_datagram d = {.data = buf, .len = e.len, .from = NULL};
	t->deliver(t->deliver_arg, g, &d, 1);
}

static void prepare(struct stub *t, paxos_iid iid, paxos_ballot ballot)
{
	struct paxos_message m = {.type = PAXOS_MSG_PREPARE};
	m.u.prepare = (struct paxos_prepare){.iid = iid, .ballot = ballot};
	deliver(t, PAXOS_GROUP_ACCEPTORS, PAXOS_ROLE_PROPOSER, &m);
}

struct count_arg {
	enum paxos_msg_type type;
	paxos_iid iid; /* 0: any */
	unsigned found;
};

static void count_one(void *arg, const struct paxos_header *h, const struct paxos_message *m)
{
	(void)h;
	struct count_arg *c = arg;
	paxos_iid iid = c->type == PAXOS_MSG_PROMISE    ? m->u.promise.iid
			: c->type == PAXOS_MSG_REJECT   ? m->u.reject.iid
			: c->type == PAXOS_MSG_ACCEPTED ? m->u.accepted.iid
							: 0;
	c->found += m->type == c->type && (c->iid == 0 || iid == c->iid);
}

/* How many messages of type for instance iid (0: any) the node sent from datagram first on. */
static unsigned sent(const struct stub *t, size_t first, enum paxos_msg_type type, paxos_iid iid)
{
	struct count_arg c = {type, iid, 0};
	stub_each_sent(t, first, count_one, &c);
	return c.found;
}

struct fixture {
	struct paxos_config cfg;
	struct event_base *base;
	struct stub *t;
	struct stub_storage *st;
	struct paxos_node *n;
	char dir[64];
};

/* With threaded, flushes run on the storage's thread (here: the test releases them). */
static void set_up_with(struct fixture *f, bool threaded)
{
	paxos_config_defaults(&f->cfg);
	snprintf(f->cfg.storage, sizeof(f->cfg.storage), "lmdb"); /* durable: no recovery */
	snprintf(f->dir, sizeof(f->dir), "/tmp/paxos-node-durable-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	snprintf(f->cfg.storage_path, sizeof(f->cfg.storage_path), "%s", f->dir);
	f->cfg.learning_acceptors = false;
	f->cfg.counters_interval_ms = 0;
	f->cfg.storage_flush_thread = threaded ? PAXOS_FLUSH_THREAD_YES : PAXOS_FLUSH_THREAD_AUTO;
	f->base = event_base_new();
	f->t = calloc(1, sizeof(*f->t));
	f->st = stub_storage_new();
	f->st->t = f->t;
	char err[256];
	f->n = paxos_node_new_on(f->base, &f->cfg, stub_open, f->t, err, sizeof(err));
	ck_assert_msg(f->n != NULL, "%s", err);
}

static void set_up(struct fixture *f)
{
	set_up_with(f, true);
}

static void tear_down(struct fixture *f)
{
	if (f->n)
		paxos_node_free(f->n);
	ck_assert(f->st->destroyed);
	free(f->st);
	free(f->t);
	event_base_free(f->base);
	rmdir(f->dir);
}

static void run(struct fixture *f)
{
	event_base_loop(f->base, EVLOOP_NONBLOCK);
}

START_TEST(test_promise_waits_for_its_commit)
{
	struct fixture f;
	set_up(&f);
	ck_assert_int_eq(paxos_node_add_acceptor(f.n, 0, &f.st->base), PAXOS_OK);

	/* Two prepares, two commits: nothing of the acceptor's leaves. */
	prepare(f.t, 5, 101);
	run(&f);
	prepare(f.t, 6, 101);
	run(&f);
	ck_assert_uint_eq(f.st->committed, 2);
	ck_assert_uint_eq(sent(f.t, 0, PAXOS_MSG_PROMISE, 0), 0);
	/* Meanwhile the acceptors' group is read when a flush returns, not as it arrives. */
	ck_assert(f.t->lazy[PAXOS_GROUP_ACCEPTORS]);

	/* The first commit is durable: its promise leaves, the second's does not. */
	release(f.st, 1);
	run(&f);
	ck_assert_uint_eq(sent(f.t, 0, PAXOS_MSG_PROMISE, 5), 1);
	ck_assert_uint_eq(sent(f.t, 0, PAXOS_MSG_PROMISE, 6), 0);
	release(f.st, 2);
	run(&f);
	ck_assert_uint_eq(sent(f.t, 0, PAXOS_MSG_PROMISE, 6), 1);
	ck_assert(!f.t->lazy[PAXOS_GROUP_ACCEPTORS]); /* nothing waits: read as it arrives */
	const struct paxos_counters *c = paxos_node_counters(f.n, PAXOS_ROLE_ACCEPTOR);
	ck_assert_uint_eq(c->promises_sent, 2);
	ck_assert_uint_eq(c->storage_flushes, 2);
	ck_assert_uint_eq(c->storage_flush_records, 6);
	ck_assert_uint_eq(c->storage_flush_us, 1000);
	/* Held datagrams count like the others once they leave. */
	size_t bytes = 0;
	for (size_t i = 0; i < f.t->sent; i++)
		bytes += f.t->sent_len[i];
	ck_assert_uint_eq(paxos_node_transport_counters(f.n)->bytes_sent, bytes);
	ck_assert_uint_eq(paxos_node_transport_counters(f.n)->datagrams_sent, f.t->sent);

	/* A reject changes nothing: with every commit durable it leaves at once. */
	size_t before = f.t->sent;
	prepare(f.t, 5, 50);
	run(&f);
	ck_assert_uint_eq(f.st->committed, 2);
	ck_assert_uint_eq(sent(f.t, before, PAXOS_MSG_REJECT, 5), 1);

	/* An accept waits for its commit like a promise. */
	before = f.t->sent;
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPT};
	m.u.accept =
	    (struct paxos_accept){.iid = 5, .ballot = 101, .value = {(const uint8_t *)"v", 1}};
	deliver(f.t, PAXOS_GROUP_ACCEPTORS, PAXOS_ROLE_PROPOSER, &m);
	run(&f);
	ck_assert_uint_eq(sent(f.t, before, PAXOS_MSG_ACCEPTED, 5), 0);
	release(f.st, 3);
	run(&f);
	ck_assert_uint_eq(sent(f.t, before, PAXOS_MSG_ACCEPTED, 5), 1);
	tear_down(&f);
}
END_TEST

/* A flush that fails stops the node with the storage's words; the replies it held never
 * leave. */
START_TEST(test_failed_flush_stops_the_node)
{
	struct fixture f;
	set_up(&f);
	ck_assert_int_eq(paxos_node_add_acceptor(f.n, 0, &f.st->base), PAXOS_OK);
	prepare(f.t, 5, 101);
	run(&f);
	f.st->fail = true;
	release(f.st, 1);
	run(&f);
	ck_assert_int_eq(paxos_node_failed(f.n), PAXOS_E_STORAGE);
	ck_assert_msg(strstr(paxos_node_error(f.n), "acceptor storage") &&
			  strstr(paxos_node_error(f.n), "stub: flush failed: Input/output error"),
		      "%s", paxos_node_error(f.n));
	paxos_node_free(f.n);
	f.n = NULL;
	ck_assert_uint_eq(sent(f.t, 0, PAXOS_MSG_PROMISE, 0), 0);
	tear_down(&f);
}
END_TEST

/* Stopping the node waits until what it holds is durable, then sends it. */
START_TEST(test_free_sends_once_durable)
{
	struct fixture f;
	set_up(&f);
	ck_assert_int_eq(paxos_node_add_acceptor(f.n, 0, &f.st->base), PAXOS_OK);
	prepare(f.t, 5, 101);
	run(&f);
	ck_assert_uint_eq(sent(f.t, 0, PAXOS_MSG_PROMISE, 5), 0);
	paxos_node_free(f.n);
	f.n = NULL;
	ck_assert_uint_ge(f.st->waits, 1);
	ck_assert_uint_eq(sent(f.t, 0, PAXOS_MSG_PROMISE, 5), 1);
	tear_down(&f);
}
END_TEST

/* The serializer's values wait for durability too. */
START_TEST(test_serializer_value_waits)
{
	struct fixture f;
	set_up(&f);
	ck_assert_int_eq(paxos_node_add_serializer(f.n, &f.st->base), PAXOS_OK);
	struct paxos_message m = {.type = PAXOS_MSG_CLIENT_VALUE};
	m.u.client_value.value = (struct paxos_value){(const uint8_t *)"hello", 5};
	deliver(f.t, PAXOS_GROUP_SUBMIT, PAXOS_ROLE_CLIENT, &m);
	run(&f);
	ck_assert_uint_eq(f.st->committed, 1);
	ck_assert_uint_eq(sent(f.t, 0, PAXOS_MSG_ACCEPTED, 2), 0);
	release(f.st, 1);
	run(&f);
	ck_assert_uint_eq(sent(f.t, 0, PAXOS_MSG_ACCEPTED, 2), 1);
	tear_down(&f);
}
END_TEST

/* By default a lone acceptor flushes on its own loop at the end of the round, then sends: the
 * promise leaves in the same round, never before the flush began. */
START_TEST(test_flush_on_the_loop)
{
	struct fixture f;
	set_up_with(&f, false);
	ck_assert_int_eq(paxos_node_add_acceptor(f.n, 0, &f.st->base), PAXOS_OK);
	unsigned starts = f.st->starts;
	prepare(f.t, 5, 101);
	ck_assert_uint_eq(sent(f.t, 0, PAXOS_MSG_PROMISE, 0), 0);
	run(&f);
	ck_assert_uint_eq(f.st->waits, 1);
	ck_assert_uint_eq(f.st->promises_at_flush, 0);
	ck_assert_uint_eq(sent(f.t, 0, PAXOS_MSG_PROMISE, 5), 1);
	ck_assert_uint_eq(f.st->starts, starts); /* nothing handed to the storage's thread */
	ck_assert(!f.t->lazy[PAXOS_GROUP_ACCEPTORS]);

	/* A reject changes nothing: no flush for it. */
	prepare(f.t, 5, 50);
	run(&f);
	ck_assert_uint_eq(f.st->waits, 1);
	ck_assert_uint_eq(sent(f.t, 0, PAXOS_MSG_REJECT, 5), 1);
	tear_down(&f);
}
END_TEST

static void on_value(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)arg;
	(void)iid;
	(void)position;
	(void)v;
}

/* By default an acceptor beside an application's learner flushes on the storage's thread: the
 * loop goes on, the promise waits until the flush is released. */
START_TEST(test_auto_flushes_on_the_thread_beside_a_learner)
{
	struct fixture f;
	set_up_with(&f, false);
	ck_assert_int_eq(paxos_node_add_learner(f.n, on_value, NULL), PAXOS_OK);
	ck_assert_int_eq(paxos_node_add_acceptor(f.n, 0, &f.st->base), PAXOS_OK);
	prepare(f.t, 5, 101);
	run(&f);
	ck_assert_uint_eq(f.st->waits, 0);
	ck_assert_uint_ge(f.st->starts, 1);
	ck_assert_uint_eq(sent(f.t, 0, PAXOS_MSG_PROMISE, 5), 0);
	release(f.st, 1);
	run(&f);
	ck_assert_uint_eq(sent(f.t, 0, PAXOS_MSG_PROMISE, 5), 1);
	tear_down(&f);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("node_durable");
	TCase *tc = tcase_create("durable");
	tcase_add_test(tc, test_promise_waits_for_its_commit);
	tcase_add_test(tc, test_failed_flush_stops_the_node);
	tcase_add_test(tc, test_free_sends_once_durable);
	tcase_add_test(tc, test_serializer_value_waits);
	tcase_add_test(tc, test_flush_on_the_loop);
	tcase_add_test(tc, test_auto_flushes_on_the_thread_beside_a_learner);
	suite_add_tcase(s, tc);
	return s;
}
