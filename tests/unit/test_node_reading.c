/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which groups a node reads as they arrive and which only when it is woken anyway
 * (lib/node/node_learner.c), on a stub transport: a multicast learner reads the leader's
 * values after the votes that close them and still delivers them in that round; a proposer
 * without an application reads the votes lazily; a node with an application reads as before;
 * a learning acceptor's learner does not hear the votes group, and learns what was chosen from
 * the leader's accepts and its own acceptor's votes.
 */
#include "check_main.h"
#include <event2/event.h>
#include <paxos/paxos.h>
#include <paxos/storage_backends.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "config_fields.h"
#include "stub_transport.h"
#include "support.h"

static void ignore_value(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)arg;
	(void)iid;
	(void)position;
	(void)v;
}

static struct paxos_config config(void)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	cfg.counters_interval_ms = 0;
	return cfg;
}

START_TEST(test_learner_reads_values_after_their_votes)
{
	struct paxos_config cfg = config();
	ck_assert_int_eq(cfg.transport, PAXOS_TRANSPORT_MULTICAST);
	struct event_base *base = event_base_new();
	struct stub *s = calloc(1, sizeof(*s));
	char err[256];
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_learner(n, ignore_value, NULL), PAXOS_OK);
	/* Woken by the votes, not by the values. */
	ck_assert(s->joined[PAXOS_GROUP_ACCEPTORS]);
	ck_assert(s->lazy[PAXOS_GROUP_ACCEPTORS]);
	ck_assert(!s->lazy[PAXOS_GROUP_LEARNERS]);

	/* The leader's value for instance 1 waits unread; two of the three acceptors' votes
	 * arrive. */
	const paxos_ballot ballot = PAXOS_MAX_PROPOSERS; /* proposer 0's first ballot */
	uint8_t value_buf[256];
	struct paxos_message accept = {.type = PAXOS_MSG_ACCEPT};
	accept.u.accept = (struct paxos_accept){.iid = 1, .ballot = ballot};
	accept.u.accept.value = (struct paxos_value){.data = (uint8_t *)"v1", .len = 2};
	s->waiting[PAXOS_GROUP_ACCEPTORS] = value_buf;
	s->waiting_len[PAXOS_GROUP_ACCEPTORS] =
	    stub_encode(value_buf, sizeof(value_buf), PAXOS_ROLE_PROPOSER, 0, 0, &accept);
	unsigned reads_before = s->reads[PAXOS_GROUP_ACCEPTORS];
	for (uint32_t a = 0; a < 2; a++) {
		struct paxos_message vote = {.type = PAXOS_MSG_ACCEPTED};
		vote.u.accepted = (struct paxos_accepted){
		    .iid = 1, .ballot = ballot, .acceptor_id = a, .valueless = true};
		stub_deliver(s, PAXOS_GROUP_LEARNERS, PAXOS_ROLE_ACCEPTOR, a, &vote);
	}
	/* The round that read the votes reads the value (at its end, which the loop runs) and
	 * closes the instance. */
	support_run_for(base, 1);
	ck_assert_uint_gt(s->reads[PAXOS_GROUP_ACCEPTORS], reads_before);
	ck_assert_ptr_null(s->waiting[PAXOS_GROUP_ACCEPTORS]);
	const struct paxos_counters *lc = paxos_node_counters(n, PAXOS_ROLE_LEARNER);
	for (int i = 0; i < 50 && lc->instances_delivered == 0; i++)
		support_run_for(base, 1);
	/* Delivered with the value read after the votes (not a batch frame of client values,
	 * so the application is handed none of it). */
	ck_assert_uint_eq(lc->instances_delivered, 1);
	ck_assert_uint_eq(lc->bytes_delivered, 2);
	ck_assert_uint_eq(paxos_node_counters(n, PAXOS_ROLE_LEARNER)->repeats_requested, 0);
	paxos_node_free(n);
	event_base_free(base);
	free(s);
}
END_TEST

/* A proposer whose node serves no application reads the votes lazily; once an application's
 * learner joins it, as they arrive, and so does the learner beside a proposer read its
 * values. */
START_TEST(test_proposer_reads_votes_lazily_until_an_application_joins)
{
	struct paxos_config cfg = config();
	struct event_base *base = event_base_new();
	struct stub *s = calloc(1, sizeof(*s));
	struct memory_epochs epochs = {.es.ops = &memory_epoch_ops};
	char err[256];
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_proposer_with(n, 0, &epochs.es), PAXOS_OK);
	ck_assert(s->joined[PAXOS_GROUP_LEARNERS]);
	ck_assert(s->joined[PAXOS_GROUP_VOTES]);
	ck_assert(s->lazy[PAXOS_GROUP_VOTES]);
	/* The votes come on a group of their own: the learners group may wake it. */
	ck_assert(!s->lazy[PAXOS_GROUP_LEARNERS]);
	ck_assert_int_eq(paxos_node_add_learner(n, ignore_value, NULL), PAXOS_OK);
	ck_assert(!s->lazy[PAXOS_GROUP_VOTES]);
	ck_assert(!s->lazy[PAXOS_GROUP_LEARNERS]);
	paxos_node_free(n);
	event_base_free(base);
	free(s);
}
END_TEST

/* The leader's accept for iid at ballot, saying first..last were chosen (0: nothing),
 * delivered to the node on the acceptors group. */
static void deliver_accept(struct stub *s, paxos_iid iid, paxos_ballot ballot, const char *value,
			   paxos_iid first, paxos_iid last)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPT};
	m.u.accept = (struct paxos_accept){
	    .iid = iid, .ballot = ballot, .chosen_from = first, .chosen_to = last};
	m.u.accept.value =
	    (struct paxos_value){.data = (const uint8_t *)value, .len = (uint32_t)strlen(value)};
	stub_deliver(s, PAXOS_GROUP_ACCEPTORS, PAXOS_ROLE_PROPOSER, 0, &m);
}

/* The groups the datagrams sent from first on went to, one bit each. */
static unsigned sent_groups(const struct stub *s, size_t first)
{
	unsigned groups = 0;
	for (size_t i = first; i < s->sent; i++)
		groups |= 1u << s->sent_to[i];
	return groups;
}

/*
 * A learning acceptor's learner does not join the votes group, and reads the learners group
 * as it arrives (it carries little now); its acceptor reads the acceptors group as it arrives.
 * It learns from the leader's accepts: a value its acceptor voted for closes once an accept
 * says it was chosen, or a chosen message does. A node of wire version 5 heard, the votes go to the
 * learners group, which the learner reads lazily again.
 */
START_TEST(test_learning_acceptor_learns_from_the_leader)
{
	struct paxos_config cfg = config();
	ck_assert(cfg.learning_acceptors);
	/* Durable by its name, and a store with a vote in it: no recovery to wait for. */
	snprintf(cfg.storage, sizeof(cfg.storage), "lmdb");
	char dir[] = "/tmp/paxos-node-reading-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cfg.storage_path, sizeof(cfg.storage_path), "%s", dir);
	const paxos_ballot ballot = PAXOS_MAX_PROPOSERS; /* proposer 0's first ballot */
	struct paxos_storage *st = paxos_storage_memory_new();
	struct paxos_record rec = {.iid = 1, .promised = ballot, .accepted = ballot};
	rec.value = (struct paxos_value){.data = (const uint8_t *)"a", .len = 1};
	ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);

	struct event_base *base = event_base_new();
	struct stub *s = calloc(1, sizeof(*s));
	char err[256];
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_acceptor(n, 0, st), PAXOS_OK);
	ck_assert(s->joined[PAXOS_GROUP_LEARNERS]);
	ck_assert(!s->joined[PAXOS_GROUP_VOTES]);
	ck_assert(!s->lazy[PAXOS_GROUP_LEARNERS]);
	ck_assert(!s->lazy[PAXOS_GROUP_ACCEPTORS]);

	/* Instance 1 again (the leader retries it), then 2, which says 1 was chosen. */
	size_t sent_before = s->sent;
	deliver_accept(s, 1, ballot, "a", 0, 0);
	support_run_for(base, 1);
	ck_assert_uint_eq(sent_groups(s, sent_before), 1u << PAXOS_GROUP_VOTES);
	const struct paxos_counters *lc = paxos_node_counters(n, PAXOS_ROLE_LEARNER);
	ck_assert_uint_eq(lc->instances_delivered, 0);
	deliver_accept(s, 2, ballot, "b", 1, 1);
	support_run_for(base, 1);
	ck_assert_uint_eq(lc->instances_delivered, 1);
	ck_assert_uint_eq(lc->instances_closed_by_leader, 1);
	ck_assert_uint_eq(lc->bytes_delivered, 1);
	/* The leader paused: its word comes alone (a chosen message), for the learner only. */
	struct paxos_message said = {.type = PAXOS_MSG_CHOSEN, .u.chosen = {ballot, 1, 2}};
	sent_before = s->sent;
	stub_deliver(s, PAXOS_GROUP_ACCEPTORS, PAXOS_ROLE_PROPOSER, 0, &said);
	support_run_for(base, 1);
	ck_assert_uint_eq(lc->instances_delivered, 2);
	ck_assert_uint_eq(lc->instances_closed_by_leader, 2);
	ck_assert_uint_eq(sent_groups(s, sent_before) & (1u << PAXOS_GROUP_VOTES), 0);
	/* A word for a ballot its acceptor did not vote at closes nothing. */
	deliver_accept(s, 3, ballot + PAXOS_MAX_PROPOSERS, "c", 2, 2);
	support_run_for(base, 1);
	ck_assert_uint_eq(lc->instances_delivered, 2);

	/* Acceptor 1 speaks wire version 5: so does this node, with the votes to the learners
	 * group, which its learner reads lazily again. */
	uint8_t buf[256];
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_STATE};
	m.u.acceptor_state = (struct paxos_acceptor_state){.acceptor_id = 1, .highest_accepted = 3};
	struct paxos_rx_datagram d = {
	    .data = buf, .len = stub_encode(buf, sizeof(buf), PAXOS_ROLE_ACCEPTOR, 1, 5, &m)};
	s->deliver(s->deliver_arg, PAXOS_GROUP_LEARNERS, &d, 1);
	support_run_for(base, 1);
	ck_assert(s->lazy[PAXOS_GROUP_LEARNERS]);
	sent_before = s->sent;
	deliver_accept(s, 4, ballot + PAXOS_MAX_PROPOSERS, "d", 0, 0);
	support_run_for(base, 1);
	ck_assert_uint_eq(sent_groups(s, sent_before) & (1u << PAXOS_GROUP_VOTES), 0);
	ck_assert_uint_ne(sent_groups(s, sent_before) & (1u << PAXOS_GROUP_LEARNERS), 0);
	paxos_node_free(n);
	event_base_free(base);
	free(s);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("node_reading");
	TCase *tc = tcase_create("node_reading");
	tcase_add_test(tc, test_learner_reads_values_after_their_votes);
	tcase_add_test(tc, test_proposer_reads_votes_lazily_until_an_application_joins);
	tcase_add_test(tc, test_learning_acceptor_learns_from_the_leader);
	suite_add_tcase(s, tc);
	return s;
}
