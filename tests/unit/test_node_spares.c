/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Spare acceptors (lib/node/node_spares.c): on a stub transport, the acceptor beyond the
 * quorum reads the acceptors group once a millisecond while the leader's accepts say it may,
 * and at once when they say otherwise; the quorum's acceptors, and every acceptor with
 * spare-acceptors off, always read at once; a leader says the spares may rest while acceptors
 * 0 and 1 voted for every instance its learner knows chosen, and no vote beyond its learner's
 * window (no acceptor's) makes it say so. On a cluster in one event loop (multicast, so
 * ctest runs it in a private network namespace): the leader lets the spare rest while every
 * value is delivered, and once acceptor 0 is gone the spare reads at once again and the
 * values go on being delivered.
 */
#include "check_main.h"
#include <event2/event.h>
#include <paxos/paxos.h>
#include <paxos/storage_backends.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "config_fields.h"
#include "stub_transport.h"
#include "support.h"

static const paxos_ballot ballot = PAXOS_MAX_PROPOSERS; /* proposer 0's first ballot */

/* The leader's accept for iid, saying whether the spares may rest. */
static struct paxos_message accept_saying(paxos_iid iid, bool rest)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPT};
	m.u.accept = (struct paxos_accept){.iid = iid, .ballot = ballot, .spares_rest = rest};
	m.u.accept.value = (struct paxos_value){.data = (const uint8_t *)"v", .len = 1};
	return m;
}

static void deliver_accept(struct stub *s, paxos_iid iid, bool rest)
{
	struct paxos_message m = accept_saying(iid, rest);
	stub_deliver(s, PAXOS_GROUP_ACCEPTORS, PAXOS_ROLE_PROPOSER, 0, &m);
}

/* Votes sent from datagram first on. */
static void count_votes(void *arg, const struct paxos_header *h, const struct paxos_message *m)
{
	(void)h;
	if (m->type == PAXOS_MSG_ACCEPTED)
		(*(unsigned *)arg)++;
}

static unsigned votes_sent(const struct stub *s, size_t first)
{
	unsigned votes = 0;
	stub_each_sent(s, first, count_votes, &votes);
	return votes;
}

struct acceptor_node {
	struct event_base *base;
	struct stub *s;
	struct paxos_node *n;
	char dir[64];
};

/* Acceptor id of three on a stub, with a vote in its store (durable by its name: no recovery
 * to wait for). */
static void acceptor_on_stub(struct acceptor_node *a, uint32_t id, bool spares)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	cfg.counters_interval_ms = 0;
	cfg.spare_acceptors = spares;
	ck_assert_uint_eq(cfg.acceptors, 3);
	snprintf(cfg.storage, sizeof(cfg.storage), "lmdb");
	snprintf(a->dir, sizeof(a->dir), "/tmp/paxos-node-spares-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(a->dir));
	snprintf(cfg.storage_path, sizeof(cfg.storage_path), "%s", a->dir);
	struct paxos_storage *st = paxos_storage_memory_new();
	struct paxos_record rec = {.iid = 1, .promised = ballot, .accepted = ballot};
	rec.value = (struct paxos_value){.data = (const uint8_t *)"v", .len = 1};
	ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	a->base = event_base_new();
	a->s = calloc(1, sizeof(*a->s));
	char err[256];
	a->n = paxos_node_new_on(a->base, &cfg, stub_open, a->s, err, sizeof(err));
	ck_assert_msg(a->n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_acceptor(a->n, id, st), PAXOS_OK);
}

static void acceptor_free(struct acceptor_node *a)
{
	paxos_node_free(a->n);
	event_base_free(a->base);
	free(a->s);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", a->dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_spare_rests_while_the_leader_says_so)
{
	struct acceptor_node a;
	acceptor_on_stub(&a, 2, true);
	struct stub *s = a.s;
	const struct paxos_counters *c = paxos_node_counters(a.n, PAXOS_ROLE_ACCEPTOR);
	ck_assert(!s->lazy[PAXOS_GROUP_ACCEPTORS]);

	/* An accept that says nothing of the spares: it reads at once, and votes. */
	size_t sent = s->sent;
	deliver_accept(s, 2, false);
	support_run_for(a.base, 1);
	ck_assert(!s->lazy[PAXOS_GROUP_ACCEPTORS]);
	ck_assert_uint_eq(votes_sent(s, sent), 1);

	/* One that lets it rest: it votes, then reads the group only on its timer. */
	sent = s->sent;
	deliver_accept(s, 3, true);
	support_run_for(a.base, 1);
	ck_assert_uint_eq(votes_sent(s, sent), 1);
	ck_assert(s->lazy[PAXOS_GROUP_ACCEPTORS]);
	ck_assert_uint_eq(c->spare_rests, 1);

	/* The next accept waits in the socket until the timer reads it; it says the spares may
	 * rest no more: the acceptor votes and reads at once again. */
	uint8_t buf[256];
	s->waiting[PAXOS_GROUP_ACCEPTORS] = buf;
	struct paxos_message later = accept_saying(4, false);
	s->waiting_len[PAXOS_GROUP_ACCEPTORS] =
	    stub_encode(buf, sizeof(buf), PAXOS_ROLE_PROPOSER, 0, 0, &later);
	sent = s->sent;
	unsigned reads = s->reads[PAXOS_GROUP_ACCEPTORS];
	for (int i = 0; i < 100 && s->waiting[PAXOS_GROUP_ACCEPTORS]; i++)
		support_run_for(a.base, 1);
	ck_assert_ptr_null(s->waiting[PAXOS_GROUP_ACCEPTORS]);
	ck_assert_uint_gt(s->reads[PAXOS_GROUP_ACCEPTORS], reads);
	ck_assert_uint_eq(votes_sent(s, sent), 1);
	ck_assert(!s->lazy[PAXOS_GROUP_ACCEPTORS]);
	ck_assert_uint_eq(c->spare_returns, 1);

	/* No reads of its own while it reads at once. */
	reads = s->reads[PAXOS_GROUP_ACCEPTORS];
	support_run_for(a.base, 5);
	ck_assert_uint_eq(s->reads[PAXOS_GROUP_ACCEPTORS], reads);

	/* Resting on an idle cluster: after some reads that find nothing it reads at once again
	 * (no wake-up every millisecond for nothing), and the leader's next word lets it rest. */
	deliver_accept(s, 5, true);
	support_run_for(a.base, 1);
	ck_assert(s->lazy[PAXOS_GROUP_ACCEPTORS]);
	ck_assert_uint_eq(c->spare_rests, 2);
	for (int i = 0; i < 200 && s->lazy[PAXOS_GROUP_ACCEPTORS]; i++)
		support_run_for(a.base, 1);
	ck_assert(!s->lazy[PAXOS_GROUP_ACCEPTORS]);
	ck_assert_uint_eq(c->spare_returns, 1);
	reads = s->reads[PAXOS_GROUP_ACCEPTORS];
	support_run_for(a.base, 5);
	ck_assert_uint_eq(s->reads[PAXOS_GROUP_ACCEPTORS], reads);
	deliver_accept(s, 6, true);
	support_run_for(a.base, 1);
	ck_assert(s->lazy[PAXOS_GROUP_ACCEPTORS]);
	ck_assert_uint_eq(c->spare_rests, 3);
	acceptor_free(&a);
}
END_TEST

/* Acceptor 0 is of the quorum, and spare-acceptors no makes none a spare: both read at once
 * whatever the accepts say. */
START_TEST(test_quorum_acceptors_never_rest)
{
	struct {
		uint32_t id;
		bool spares;
	} cases[] = {{0, true}, {1, true}, {2, false}};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct acceptor_node a;
		acceptor_on_stub(&a, cases[k].id, cases[k].spares);
		size_t sent = a.s->sent;
		deliver_accept(a.s, 2, true);
		support_run_for(a.base, 1);
		ck_assert_uint_eq(votes_sent(a.s, sent), 1);
		ck_assert(!a.s->lazy[PAXOS_GROUP_ACCEPTORS]);
		ck_assert_uint_eq(paxos_node_counters(a.n, PAXOS_ROLE_ACCEPTOR)->spare_rests, 0);
		acceptor_free(&a);
	}
}
END_TEST

/* What the leader sent from datagram first on: the prepares' instances and ballot, and the
 * last accept's instance and word on the spares. */
struct leader_sent {
	paxos_iid prepared[512];
	size_t prepares;
	paxos_ballot ballot;
	paxos_iid accept_iid;
	bool accepts, rest;
};

static void note_sent(void *arg, const struct paxos_header *h, const struct paxos_message *m)
{
	(void)h;
	struct leader_sent *l = arg;
	if (m->type == PAXOS_MSG_PREPARE && l->prepares < 512) {
		l->prepared[l->prepares++] = m->u.prepare.iid;
		l->ballot = m->u.prepare.ballot;
	}
	if (m->type == PAXOS_MSG_ACCEPT) {
		l->accepts = true;
		l->accept_iid = m->u.accept.iid;
		l->rest = m->u.accept.spares_rest;
	}
}

static void vote(struct stub *s, uint32_t id, paxos_iid iid, paxos_ballot b)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted =
	    (struct paxos_accepted){.iid = iid, .ballot = b, .acceptor_id = id, .valueless = true};
	stub_deliver(s, PAXOS_GROUP_VOTES, PAXOS_ROLE_ACCEPTOR, id, &m);
}

/* A client's value for the leader (on the submit group), and what the accept it became said
 * of the spares. */
static struct leader_sent propose(struct event_base *base, struct stub *s, const char *value)
{
	size_t first = s->sent;
	struct paxos_message m = {.type = PAXOS_MSG_CLIENT_VALUE};
	m.u.client_value.value =
	    (struct paxos_value){.data = (const uint8_t *)value, .len = (uint32_t)strlen(value)};
	stub_deliver(s, PAXOS_GROUP_SUBMIT, PAXOS_ROLE_CLIENT, 0, &m);
	struct leader_sent l = {0};
	for (int i = 0; i < 50 && !l.accepts; i++) {
		support_run_for(base, 1);
		stub_each_sent(s, first, note_sent, &l);
	}
	ck_assert(l.accepts);
	return l;
}

/* The leader lets the spares rest once acceptors 0 and 1 voted for every instance its learner
 * knows chosen, and no longer once one was chosen without acceptor 1's vote; a vote far
 * beyond the learner's window (no acceptor's) does not make it say they may rest. */
START_TEST(test_leader_says_whether_spares_rest)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	cfg.counters_interval_ms = 0;
	cfg.proposers = 1;
	struct event_base *base = event_base_new();
	struct stub *s = calloc(1, sizeof(*s));
	struct memory_epochs epochs = {.es.ops = &memory_epoch_ops};
	char err[256];
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_proposer_with(n, 0, &epochs.es), PAXOS_OK);
	/* Phase 1: acceptors 0 and 1 promise every instance of the window. */
	struct leader_sent l = {0};
	for (int i = 0; i < 100 && l.prepares == 0; i++) {
		support_run_for(base, 1);
		stub_each_sent(s, 0, note_sent, &l);
	}
	ck_assert_uint_gt(l.prepares, 0);
	for (size_t k = 0; k < l.prepares; k++)
		for (uint32_t a = 0; a < 2; a++) {
			struct paxos_message m = {.type = PAXOS_MSG_PROMISE};
			m.u.promise = (struct paxos_promise){
			    .iid = l.prepared[k], .ballot = l.ballot, .acceptor_id = a};
			stub_deliver(s, PAXOS_GROUP_PROPOSERS, PAXOS_ROLE_ACCEPTOR, a, &m);
		}
	support_run_for(base, 1);

	/* Nothing chosen yet: the first accept lets no spare rest. */
	struct leader_sent first = propose(base, s, "a");
	ck_assert(!first.rest);
	vote(s, 0, first.accept_iid, l.ballot);
	vote(s, 1, first.accept_iid, l.ballot);
	support_run_for(base, 2);
	const struct paxos_counters *lc = paxos_node_counters(n, PAXOS_ROLE_LEARNER);
	ck_assert_uint_eq(lc->instances_delivered, first.accept_iid);
	struct leader_sent second = propose(base, s, "b");
	ck_assert(second.rest);

	/* A vote from acceptor 1 far beyond the window, then the second instance chosen by
	 * acceptors 0 and 2: acceptor 1 did not vote for it. */
	vote(s, 1, second.accept_iid + 2 * cfg.learner_window, l.ballot);
	vote(s, 0, second.accept_iid, l.ballot);
	vote(s, 2, second.accept_iid, l.ballot);
	support_run_for(base, 2);
	ck_assert_uint_eq(lc->instances_delivered, second.accept_iid);
	struct leader_sent third = propose(base, s, "c");
	ck_assert(!third.rest);

	/* Acceptor 1 votes again: the spares may rest again. */
	vote(s, 0, third.accept_iid, l.ballot);
	vote(s, 1, third.accept_iid, l.ballot);
	support_run_for(base, 2);
	ck_assert(propose(base, s, "d").rest);
	paxos_node_free(n);
	event_base_free(base);
	free(s);
}
END_TEST

static uint32_t delivered;
static bool in_order;

static void check_order(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)arg;
	(void)iid;
	(void)position;
	char want[16];
	int len = snprintf(want, sizeof(want), "v%04u", delivered++);
	in_order &= v->len == (uint32_t)len && memcmp(v->data, want, v->len) == 0;
}

/* Submits count values from delivered on, a few at a time, and runs the loop until all are
 * delivered (or 10 s passed). */
static void submit_and_deliver(struct event_base *b, struct paxos_node *leader, uint32_t count)
{
	uint32_t first = delivered;
	char value[16];
	for (uint32_t k = first; k < first + count; k++) {
		int len = snprintf(value, sizeof(value), "v%04u", k);
		ck_assert_int_eq(paxos_node_submit(leader, value, (size_t)len), PAXOS_OK);
		if (k % 4 == 3)
			support_run_for(b, 2);
	}
	for (int i = 0; i < 200 && delivered < first + count; i++)
		support_run_for(b, 50);
	ck_assert_msg(delivered == first + count, "delivered %u of %u", delivered - first, count);
	ck_assert(in_order);
}

START_TEST(test_spare_reads_at_once_when_an_acceptor_is_gone)
{
	struct support_cluster c;
	support_cluster_start(&c, "");
	ck_assert(c.cfg.spare_acceptors);
	struct event_base *b = c.base;
	struct paxos_node **acc = c.acc, *leader = support_cluster_node(&c);
	delivered = 0;
	in_order = true;
	ck_assert_int_eq(paxos_node_add_learner(leader, check_order, NULL), PAXOS_OK);
	ck_assert_int_eq(paxos_node_add_proposer(leader, 0), PAXOS_OK);
	support_run_for(b, 300); /* the acceptors recover (a first start) */

	/* All three vote: the leader lets acceptor 2 rest, and every value is delivered. */
	submit_and_deliver(b, leader, 100);
	const struct paxos_counters *spare = paxos_node_counters(acc[2], PAXOS_ROLE_ACCEPTOR);
	ck_assert_uint_ge(spare->spare_rests, 1);
	for (uint32_t i = 0; i < 2; i++)
		ck_assert_uint_eq(paxos_node_counters(acc[i], PAXOS_ROLE_ACCEPTOR)->spare_rests, 0);

	/* Acceptor 0 is gone: instances are chosen with the spare's votes, the leader says so,
	 * and the spare reads at once again, for good while acceptor 0 stays away. */
	paxos_node_free(acc[0]);
	acc[0] = NULL;
	submit_and_deliver(b, leader, 100);
	ck_assert_uint_ge(spare->spare_returns, 1);
	uint64_t rests = spare->spare_rests;
	submit_and_deliver(b, leader, 100);
	ck_assert_uint_eq(spare->spare_rests, rests);

	paxos_node_free(leader);
	support_cluster_free(&c);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("node_spares");
	TCase *tc = tcase_create("node_spares");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_spare_rests_while_the_leader_says_so);
	tcase_add_test(tc, test_quorum_acceptors_never_rest);
	tcase_add_test(tc, test_leader_says_whether_spares_rest);
	tcase_add_test(tc, test_spare_reads_at_once_when_an_acceptor_is_gone);
	suite_add_tcase(s, tc);
	return s;
}
