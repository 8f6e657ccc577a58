/* SPDX-License-Identifier: BSD-3-Clause */
/* Client sessions and the read barrier on a small cluster of nodes in this process. Joins
 * multicast groups: ctest runs it in a private network namespace (tests/netns-run.sh). */
#include "check_main.h"
#include <event2/event.h>
#include <paxos/paxos.h>
#include <paxos/storage_backends.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_fields.h"
#include "support.h"

/* Client sessions on real nodes (paxos/session.h): every value of a session sent twice
 * (paxos_session_resend) reaches the application of a learner with sessions once, in order,
 * header stripped, and completes once; a plain value passes untouched; a read barrier fires
 * once everything chosen before it was delivered. */
struct session_seen {
	struct paxos_node *node;
	uint32_t n, plain;
	bool ordered, named;
	paxos_iid last_iid;
};

static void session_deliver(void *arg, paxos_iid iid, uint32_t position,
			    const struct paxos_value *v)
{
	(void)position;
	struct session_seen *o = arg;
	uint64_t client, seq;
	if (!paxos_node_delivery_session(o->node, &client, &seq)) {
		o->plain += v->len == 5 && memcmp(v->data, "plain", 5) == 0;
		return;
	}
	char want[16];
	int len = snprintf(want, sizeof(want), "v%04u", o->n++);
	o->ordered &= v->len == (uint32_t)len && memcmp(v->data, want, v->len) == 0;
	o->named &= seq == o->n;
	o->last_iid = iid;
}

struct completions {
	uint32_t ok, other, out_of_order;
	uint64_t last;
};

static void session_done(void *arg, uint64_t seq, int status, paxos_iid iid)
{
	struct completions *c = arg;
	if (status == PAXOS_OK && iid > 0)
		c->ok++;
	else
		c->other++;
	c->out_of_order += seq != c->last + 1;
	c->last = seq;
}

static void barrier_done(void *arg, int status, paxos_iid iid)
{
	paxos_iid *at = arg;
	*at = status == PAXOS_OK ? iid : (paxos_iid)-1;
}

START_TEST(test_sessions_apply_once_and_complete)
{
	struct support_cluster c;
	support_cluster_start(&c, "");
	struct event_base *b = c.base;
	static struct session_seen seen;
	static struct completions done;
	struct paxos_node *leader = support_cluster_node(&c), *other = support_cluster_node(&c),
			  *client = support_cluster_node(&c);
	seen = (struct session_seen){.node = other, .ordered = true, .named = true};
	done = (struct completions){0};
	ck_assert_int_eq(paxos_node_add_proposer(leader, 0), PAXOS_OK);
	ck_assert_int_eq(paxos_node_enable_sessions(other, 16), PAXOS_OK);
	ck_assert_int_eq(paxos_node_add_learner(other, session_deliver, &seen), PAXOS_OK);
	ck_assert_int_eq(paxos_node_enable_sessions(other, 16), PAXOS_E_INVALID);
	/* A session needs a learner on its node; so does a barrier. */
	ck_assert_ptr_null(paxos_session_new(client, NULL));
	ck_assert_int_eq(paxos_node_barrier(client, barrier_done, NULL), PAXOS_E_INVALID);
	static struct session_seen client_seen;
	client_seen = (struct session_seen){.node = client};
	ck_assert_int_eq(paxos_node_add_learner(client, session_deliver, &client_seen), PAXOS_OK);
	struct paxos_session_options o;
	paxos_session_options_default(&o);
	o.window = 4;
	struct paxos_session *s = paxos_session_new(client, &o);
	ck_assert_ptr_nonnull(s);
	support_run_for(b, 300); /* the acceptors recover (a first start) */
	char value[16];
	for (uint32_t k = 0; k < 100;) {
		int len = snprintf(value, sizeof(value), "v%04u", k);
		uint64_t seq = 0;
		int rc = paxos_session_submit(s, value, (size_t)len, session_done, &done, &seq);
		if (rc == PAXOS_E_FULL) { /* the window: wait for completions */
			support_run_for(b, 5);
			continue;
		}
		ck_assert_int_eq(rc, PAXOS_OK);
		ck_assert_uint_eq(seq, ++k);
		paxos_session_resend(s); /* a copy of each in the log */
	}
	ck_assert_int_eq(paxos_node_submit(client, "plain", 5), PAXOS_OK);
	for (int i = 0; i < 200 && (done.ok + done.other < 100 || seen.plain == 0); i++)
		support_run_for(b, 20);
	ck_assert_msg(seen.n == 100 && seen.ordered && seen.named, "delivered %u", seen.n);
	ck_assert_uint_eq(seen.plain, 1);
	ck_assert_msg(done.ok == 100 && done.other == 0 && done.out_of_order == 0,
		      "completions: %u ok, %u other, %u out of order", done.ok, done.other,
		      done.out_of_order);
	ck_assert_uint_eq(paxos_session_in_flight(s), 0);
	uint64_t applied, dups;
	paxos_session_table_stats(paxos_node_session_table(other), &applied, &dups, NULL);
	ck_assert_uint_eq(applied, 100);
	ck_assert_uint_ge(dups, 1);
	/* A barrier on the other learner fires at or after the last value delivered. */
	paxos_iid at = 0;
	ck_assert_int_eq(paxos_node_barrier(other, barrier_done, &at), PAXOS_OK);
	for (int i = 0; i < 200 && at == 0; i++)
		support_run_for(b, 10);
	ck_assert_uint_ge(at, seen.last_iid);
	ck_assert(at != (paxos_iid)-1);
	ck_assert_uint_eq(seen.n, 100); /* the barrier's no-op reached no application */
	paxos_node_free(client);        /* and its session */
	paxos_node_free(other);
	paxos_node_free(leader);
	support_cluster_free(&c);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("node_sessions");
	TCase *tc = tcase_create("sessions");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sessions_apply_once_and_complete);
	suite_add_tcase(s, tc);
	return s;
}
