/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Check-quorum in the node (lib/node/node_proposer.c, paxos/election.h), on a stub transport:
 * the acceptors' state on the proposers group keeps a leader in; without it the leader steps
 * down after the quorum timeout, says so, counts it and sends no heartbeats; the state of a
 * quorum heard again makes it lead again.
 */
#include "check_main.h"
#include <event2/event.h>
#include <paxos/paxos.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec.h"
#include "config_fields.h"
#include "stub_transport.h"
#include "support.h"

static char lines[64][256];
static unsigned nlines;

static void keep_line(void *arg, enum paxos_log_level level, const char *line)
{
	(void)arg;
	if (level <= PAXOS_LOG_INFO && nlines < 64)
		snprintf(lines[nlines++], sizeof(lines[0]), "%s", line);
}

static bool logged(const char *what)
{
	for (unsigned i = 0; i < nlines; i++)
		if (strstr(lines[i], what))
			return true;
	return false;
}

/* Acceptor id's periodic state, as it sends it to the proposers group. */
static void state_from(struct stub *s, uint32_t id)
{
	uint8_t buf[256];
	struct paxos_header from = {.role = PAXOS_ROLE_ACCEPTOR, .sender_id = id};
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, sizeof(buf), &from);
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_STATE};
	m.u.acceptor_state = (struct paxos_acceptor_state){.acceptor_id = id};
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	struct paxos_rx_datagram d = {.data = buf, .len = e.len, .from = NULL};
	s->deliver(s->deliver_arg, PAXOS_GROUP_PROPOSERS, &d, 1);
}

static double seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void note_heartbeat(void *arg, const struct paxos_header *h, const struct paxos_message *m)
{
	*(bool *)arg |= h->role == PAXOS_ROLE_PROPOSER && m->type == PAXOS_MSG_HEARTBEAT;
}

/* Whether the proposer sent a heartbeat among the datagrams the stub kept. */
static bool heartbeat_sent(const struct stub *s)
{
	bool any = false;
	stub_each_sent(s, 0, note_heartbeat, &any);
	return any;
}

START_TEST(test_leader_without_quorum_steps_down)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	ck_assert(cfg.check_quorum);
	cfg.proposers = 2;
	cfg.proposer_window = 2;
	cfg.phase1_timeout_ms = cfg.phase2_timeout_ms = cfg.hole_check_ms = 60000;
	cfg.counters_interval_ms = 0;
	/* Quorum timeout: 2 * 100 + 100 = 300 ms. */
	const long quorum_ms = 2 * cfg.acceptor_repeat_ms + cfg.heartbeat_timeout_ms;
	struct event_base *base = event_base_new();
	struct stub *s = calloc(1, sizeof(*s));
	struct memory_epochs epochs = {.es.ops = &memory_epoch_ops};
	nlines = 0;
	paxos_set_log(keep_line, NULL);
	char err[256];
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_proposer_with(n, 0, &epochs.es), PAXOS_OK);
	const struct paxos_counters *c = paxos_node_counters(n, PAXOS_ROLE_PROPOSER);

	/* Acceptors 0 and 1 heard every 20 ms for twice the quorum timeout: it stays in. */
	for (double end = seconds() + 2 * quorum_ms / 1e3; seconds() < end;) {
		state_from(s, 0);
		state_from(s, 1);
		support_run_for(base, 20);
	}
	ck_assert_uint_eq(c->quorum_losses, 0);
	ck_assert_uint_eq(paxos_node_leader(n), 0);
	ck_assert(paxos_node_quorum_heard(n));

	/* Only acceptor 2, no quorum of three: out within the quorum timeout (a deadline for a
	 * loaded machine), the leader is proposer 1, and it is said. */
	double deadline = seconds() + 10;
	while (c->quorum_losses == 0 && seconds() < deadline) {
		state_from(s, 2);
		support_run_for(base, 10);
	}
	ck_assert_uint_eq(c->quorum_losses, 1);
	ck_assert_uint_eq(paxos_node_leader(n), 1);
	ck_assert(!paxos_node_quorum_heard(n));
	ck_assert_uint_ge(c->leader_changes, 1);
	ck_assert(logged("proposer 0: heard from no quorum of the acceptors for 300 ms: the "
			 "leader steps down"));

	/* Out, it sends no heartbeats. */
	s->sent = 0;
	support_run_for(base, 3 * cfg.heartbeat_interval_ms);
	ck_assert(!heartbeat_sent(s));

	/* Acceptors 1 and 2 heard again: it leads, and beats, again. */
	deadline = seconds() + 10;
	s->sent = 0;
	while (!heartbeat_sent(s) && seconds() < deadline) {
		state_from(s, 1);
		state_from(s, 2);
		support_run_for(base, 5);
	}
	ck_assert(heartbeat_sent(s));
	ck_assert_uint_eq(paxos_node_leader(n), 0);
	ck_assert(paxos_node_quorum_heard(n));
	ck_assert_uint_eq(c->quorum_losses, 1);
	ck_assert(logged("proposer 0: hears a quorum of the acceptors again"));

	paxos_node_free(n);
	paxos_set_log(NULL, NULL);
	free(s);
	event_base_free(base);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("node_quorum");
	TCase *tc = tcase_create("check_quorum");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_leader_without_quorum_steps_down);
	suite_add_tcase(s, tc);
	return s;
}
