/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node makes the epoch its proposer took durable before any of the proposer's datagrams
 * leaves (lib/node/node_epoch.c): on a stub transport, with a stub epoch store that fails
 * when told to. A reject naming a later incarnation's ballot makes the proposer skip into
 * that epoch; while the store fails nothing of the proposer's is sent, and once a store
 * succeeds the raised ballots go out.
 */
#include "check_main.h"
#include <event2/event.h>
#include <paxos/paxos.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "config_fields.h"
#include "stub_transport.h"

/* A reject from acceptor 0 beating the proposer's ballots: epoch 3, round 7, proposer 1. */
#define LATER_BALLOT ((((uint64_t)3 << 32) + 7) * PAXOS_MAX_PROPOSERS + 1)

struct stub_epochs {
	struct paxos_epoch_store es;
	uint32_t stored;
	uint32_t stores; /* store calls */
	bool fail;
	bool destroyed;
};

static int stub_next(struct paxos_epoch_store *es, uint32_t *epoch)
{
	struct stub_epochs *s = (struct stub_epochs *)es;
	*epoch = ++s->stored;
	return PAXOS_OK;
}

static int stub_store(struct paxos_epoch_store *es, uint32_t epoch)
{
	struct stub_epochs *s = (struct stub_epochs *)es;
	s->stores++;
	if (s->fail)
		return PAXOS_E_IO;
	if (epoch > s->stored)
		s->stored = epoch;
	return PAXOS_OK;
}

static void stub_destroy(struct paxos_epoch_store *es)
{
	((struct stub_epochs *)es)->destroyed = true;
}

static const char *stub_error(struct paxos_epoch_store *es)
{
	return ((struct stub_epochs *)es)->fail ? "stub store: No space left on device" : "";
}

static const struct paxos_epoch_store_ops stub_epoch_ops = {
    .name = "stub",
    .next = stub_next,
    .store = stub_store,
    .destroy = stub_destroy,
    .error = stub_error,
};

static char warnings[4][256], infos[32][256];
static unsigned nwarnings, ninfos;

static void keep_line(void *arg, enum paxos_log_level level, const char *line)
{
	(void)arg;
	if (level == PAXOS_LOG_WARNING && nwarnings < 4)
		snprintf(warnings[nwarnings++], sizeof(warnings[0]), "%s", line);
	else if (level == PAXOS_LOG_INFO && ninfos < 32)
		snprintf(infos[ninfos++], sizeof(infos[0]), "%s", line);
}

static bool logged(char lines[][256], unsigned n, const char *what)
{
	for (unsigned i = 0; i < n; i++)
		if (strstr(lines[i], what))
			return true;
	return false;
}

static void note_prepare_epoch(void *arg, const struct paxos_header *h,
			       const struct paxos_message *m)
{
	uint32_t *highest = arg;
	if (h->role != PAXOS_ROLE_PROPOSER || m->type != PAXOS_MSG_PREPARE)
		return;
	uint64_t seq = m->u.prepare.ballot / PAXOS_MAX_PROPOSERS;
	if ((uint32_t)(seq >> 32) > *highest)
		*highest = (uint32_t)(seq >> 32);
}

/* The epoch of the highest ballot in the proposer's prepares the stub sent from datagram
 * first on; 0 if the proposer sent none. */
static uint32_t highest_prepare_epoch(const struct stub *s, size_t first)
{
	uint32_t highest = 0;
	stub_each_sent(s, first, note_prepare_epoch, &highest);
	return highest;
}

static void note_proposer(void *arg, const struct paxos_header *h, const struct paxos_message *m)
{
	(void)m;
	*(bool *)arg |= h->role == PAXOS_ROLE_PROPOSER;
}

/* Whether the proposer sent anything from datagram first on. */
static bool proposer_sent(const struct stub *s, size_t first)
{
	bool any = false;
	stub_each_sent(s, first, note_proposer, &any);
	return any;
}

/* Acceptor 0 rejects the proposer's prepare for iid with LATER_BALLOT. */
static void reject(struct stub *s, paxos_iid iid)
{
	uint8_t buf[256];
	struct paxos_header from = {.role = PAXOS_ROLE_ACCEPTOR, .sender_id = 0};
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, sizeof(buf), &from);
	struct paxos_message m = {.type = PAXOS_MSG_REJECT};
	m.u.reject = (struct paxos_reject){.iid = iid, .ballot = LATER_BALLOT, .acceptor_id = 0};
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	struct paxos_rx_datagram d = {.data = buf, .len = e.len, .from = NULL};
	s->deliver(s->deliver_arg, PAXOS_GROUP_PROPOSERS, &d, 1);
}

START_TEST(test_raised_ballot_waits_for_its_epoch)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	cfg.proposers = 1;
	cfg.proposer_window = 4;
	/* Timers far out: on a loaded machine a tick between two steps would retry a prepare and
	 * try the failing store once more than the test counts. */
	cfg.phase1_timeout_ms = cfg.phase2_timeout_ms = cfg.hole_check_ms = 60000;
	struct event_base *base = event_base_new();
	struct stub *s = calloc(1, sizeof(*s));
	struct stub_epochs epochs = {.es.ops = &stub_epoch_ops};
	paxos_set_log(keep_line, NULL);
	char err[256];
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_proposer_with(n, 0, &epochs.es), PAXOS_OK);
	ck_assert_uint_eq(epochs.stored, 1); /* this incarnation: the store's next */

	/* Leading from the start: the window's prepares, in epoch 1, leave with no store. */
	event_base_loop(base, EVLOOP_NONBLOCK);
	ck_assert_uint_eq(highest_prepare_epoch(s, 0), 1);
	ck_assert_uint_eq(epochs.stores, 0);

	/* A later incarnation's ballot: the proposer skips into epoch 3 at once, and the node
	 * cannot store it. Nothing of the proposer's leaves; the failure is logged, once. */
	epochs.fail = true;
	size_t before = s->sent;
	reject(s, 1);
	event_base_loop(base, EVLOOP_NONBLOCK);
	ck_assert_uint_eq(epochs.stores, 1);
	ck_assert_uint_eq(epochs.stored, 1);
	ck_assert(!proposer_sent(s, before));
	const struct paxos_counters *c = paxos_node_counters(n, PAXOS_ROLE_PROPOSER);
	ck_assert_uint_ge(c->epoch_drops, 1);
	ck_assert_uint_eq(c->epochs_raised, 1);
	ck_assert_uint_eq(nwarnings, 1);
	ck_assert_msg(strstr(warnings[0], "proposer 0: cannot make epoch 3 durable") &&
			  strstr(warnings[0], "stub store: No space left on device"),
		      "%s", warnings[0]);

	/* The store works again: the next round stores epoch 3 first, then the raised ballot
	 * leaves, and the log names the datagram that asked for it. */
	epochs.fail = false;
	before = s->sent;
	reject(s, 2);
	event_base_loop(base, EVLOOP_NONBLOCK);
	ck_assert_uint_eq(epochs.stored, 3);
	ck_assert_uint_eq(highest_prepare_epoch(s, before), 3);
	ck_assert(logged(infos, ninfos,
			 "proposer 0: epoch 1 -> 3, to beat a ballot (datagram "
			 "from acceptor 0)"));
	ck_assert_uint_eq(nwarnings, 1);

	/* From now on epoch 3 is durable: no store before each send. */
	unsigned stores = epochs.stores;
	before = s->sent;
	reject(s, 3);
	event_base_loop(base, EVLOOP_NONBLOCK);
	ck_assert_uint_eq(epochs.stores, stores);
	ck_assert_uint_eq(highest_prepare_epoch(s, before), 3);

	paxos_node_free(n);
	ck_assert(epochs.destroyed);
	paxos_set_log(NULL, NULL);
	free(s);
	event_base_free(base);
}
END_TEST

/* The node owns the store it is given, even when it refuses the proposer. */
START_TEST(test_refused_proposer_store_destroyed)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	struct event_base *base = event_base_new();
	struct stub *s = calloc(1, sizeof(*s));
	char err[256];
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	struct stub_epochs epochs = {.es.ops = &stub_epoch_ops};
	ck_assert_int_eq(paxos_node_add_proposer_with(n, cfg.proposers, &epochs.es),
			 PAXOS_E_INVALID);
	ck_assert(epochs.destroyed);
	ck_assert_int_eq(paxos_node_add_proposer_with(n, 0, NULL), PAXOS_E_INVALID);
	ck_assert_str_eq(paxos_node_error(n), "a proposer needs an epoch store");
	paxos_node_free(n);
	free(s);
	event_base_free(base);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("node_epoch");
	TCase *tc = tcase_create("epoch");
	tcase_add_test(tc, test_raised_ballot_waits_for_its_epoch);
	tcase_add_test(tc, test_refused_proposer_store_destroyed);
	suite_add_tcase(s, tc);
	return s;
}
