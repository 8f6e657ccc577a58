/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Snapshot transfer between two nodes on in-process stub transports (paxos/node.h,
 * paxos_node_offer_snapshot and paxos_node_on_install_snapshot): the test carries each
 * node's datagrams to the other, and the acceptors' reports that make the asker's next
 * instance trimmed. A snapshot of many chunks and several windows arrives whole, lost chunks
 * are asked for again, a snapshot over snapshot-max-bytes is refused, and delivery goes on
 * after the installed instance.
 */
#include "check_main.h"
#include <event2/event.h>
#include <paxos/paxos.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "codec.h"
#include "stub_transport.h"
#include "support.h"
#include "config_fields.h"

struct side {
	struct stub *stub;
	struct paxos_node *node;
	/* What the installer saw */
	size_t installs;
	paxos_iid installed_iid;
	uint8_t *installed;
	size_t installed_len;
	int answer; /* what the installer returns */
	paxos_iid delivered_iid;
};

static struct event_base *base;
static struct paxos_config cfg;

static void on_value(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)position;
	(void)v;
	((struct side *)arg)->delivered_iid = iid;
}

static int on_install(void *arg, paxos_iid iid, const void *bytes, size_t len)
{
	struct side *s = arg;
	s->installs++;
	if (s->answer != PAXOS_OK)
		return s->answer;
	free(s->installed);
	s->installed = malloc(len ? len : 1);
	memcpy(s->installed, bytes, len);
	s->installed_len = len;
	s->installed_iid = iid;
	return PAXOS_OK;
}

static void side_open(struct side *s, bool installs)
{
	memset(s, 0, sizeof(*s));
	s->stub = calloc(1, sizeof(*s->stub));
	char err[256];
	s->node = paxos_node_new_on(base, &cfg, stub_open, s->stub, err, sizeof(err));
	ck_assert_msg(s->node != NULL, "%s", err);
	if (installs)
		ck_assert_int_eq(paxos_node_on_install_snapshot(s->node, on_install, s), PAXOS_OK);
	ck_assert_int_eq(paxos_node_add_learner(s->node, on_value, s), PAXOS_OK);
}

static void side_close(struct side *s)
{
	paxos_node_free(s->node);
	free(s->stub);
	free(s->installed);
}

/* Runs a round of the loop (the nodes send what they emitted), then hands each datagram the
 * node from sent to the other, on its group, but those drop says to lose (by index). */
static size_t carry(struct side *from, struct side *to, size_t drop)
{
	event_base_loop(base, EVLOOP_NONBLOCK);
	size_t n = from->stub->sent;
	for (size_t i = 0; i < n; i++) {
		if (i == drop)
			continue;
		struct paxos_rx_datagram d = {.data = from->stub->sent_data[i],
					      .len = from->stub->sent_len[i]};
		if (to->stub->joined[from->stub->sent_to[i]])
			to->stub->deliver(to->stub->deliver_arg, from->stub->sent_to[i], &d, 1);
	}
	from->stub->sent = 0;
	return n;
}

/* Acceptor id reports to node s that it accepted up to highest and trimmed up to trim. */
static void acceptor_state(struct side *s, uint32_t id, paxos_iid highest, paxos_iid trim)
{
	uint8_t buf[256];
	struct paxos_header h = {.role = PAXOS_ROLE_ACCEPTOR, .sender_id = id};
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, sizeof(buf), &h);
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_STATE};
	m.u.acceptor_state = (struct paxos_acceptor_state){
	    .acceptor_id = id, .highest_accepted = highest, .trim_iid = trim, .generation = 1};
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	struct paxos_rx_datagram d = {.data = buf, .len = e.len};
	s->stub->deliver(s->stub->deliver_arg, PAXOS_GROUP_LEARNERS, &d, 1);
}

/* A quorum of acceptors says instances up to trim are gone; the learner asks first, and
 * believes them a quarter hole check later. */
static void trim_below(struct side *s, paxos_iid highest, paxos_iid trim)
{
	for (uint32_t a = 0; a < 3; a++)
		acceptor_state(s, a, highest, trim);
	usleep(2 * cfg.hole_check_ms * 1000u);
	for (uint32_t a = 0; a < 3; a++)
		acceptor_state(s, a, highest, trim);
}

/* An acceptor's final accepted of instance iid, holding one client value. */
static void final_value(struct side *s, paxos_iid iid)
{
	uint8_t frame[64], buf[512];
	uint32_t used = 0;
	struct paxos_value one = {(const uint8_t *)"after", 5};
	ck_assert_int_eq(paxos_batch_append(frame, sizeof(frame), &used, &one), PAXOS_OK);
	struct paxos_header h = {.role = PAXOS_ROLE_ACCEPTOR, .sender_id = 0};
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, sizeof(buf), &h);
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted = (struct paxos_accepted){.iid = iid,
					       .ballot = 102,
					       .value = {frame, used},
					       .acceptor_id = 0,
					       .final = true,
					       .generation = 1};
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	struct paxos_rx_datagram d = {.data = buf, .len = e.len};
	s->stub->deliver(s->stub->deliver_arg, PAXOS_GROUP_LEARNERS, &d, 1);
}

static uint64_t learner_counter(const struct side *s, size_t offset)
{
	const struct paxos_counters *c = paxos_node_counters(s->node, PAXOS_ROLE_LEARNER);
	return *(const uint64_t *)(const void *)((const char *)c + offset);
}
#define COUNTER(s, name) learner_counter(s, offsetof(struct paxos_counters, name))

static void setup(void)
{
	paxos_config_defaults(&cfg);
	cfg.max_datagram = 1024; /* within the stub's datagrams: many chunks */
	cfg.hole_check_ms = 4;
	base = event_base_new();
}

static void teardown(void)
{
	event_base_free(base);
}

START_TEST(test_snapshot_fetched_and_installed)
{
	struct side server, asker;
	side_open(&server, false);
	side_open(&asker, true);
	/* 40 kB: about 45 chunks, three windows. */
	size_t len = 40000;
	uint8_t *snap = malloc(len);
	for (size_t i = 0; i < len; i++)
		snap[i] = (uint8_t)(i * 7 + i / 251);
	ck_assert_int_eq(paxos_node_offer_snapshot(server.node, 120, snap, len), PAXOS_OK);

	trim_below(&asker, 130, 100);
	ck_assert_uint_eq(paxos_node_next_iid(asker.node), 1); /* held, not skipped */
	ck_assert_uint_eq(COUNTER(&asker, instances_skipped_trimmed), 0);
	/* The ask, the offer, the asks and the windows of chunks; one chunk lost once. */
	size_t dropped = 0;
	for (int round = 0; round < 50 && !asker.installs; round++) {
		carry(&asker, &server, (size_t)-1);
		size_t drop = (size_t)-1;
		if (server.stub->sent > 5 && !dropped) {
			drop = 3;
			dropped = 1;
		}
		carry(&server, &asker, drop);
		if (!asker.installs)
			usleep(110000); /* past NODE_SNAPSHOT_RETRY_US: the asker asks again */
		event_base_loop(base, EVLOOP_NONBLOCK);
	}
	ck_assert_uint_eq(asker.installs, 1);
	ck_assert_uint_eq(asker.installed_iid, 120);
	ck_assert_uint_eq(asker.installed_len, len);
	ck_assert(memcmp(asker.installed, snap, len) == 0);
	ck_assert_uint_eq(COUNTER(&asker, snapshots_installed), 1);
	ck_assert_uint_ge(COUNTER(&server, snapshots_sent), 1); /* again if asked twice */
	ck_assert_uint_eq(paxos_node_next_iid(asker.node), 121);
	/* Delivery goes on from the log after the snapshot. */
	final_value(&asker, 121);
	ck_assert_uint_eq(asker.delivered_iid, 121);
	free(snap);
	side_close(&server);
	side_close(&asker);
}
END_TEST

/* A provider lends its bytes at each ask instead of a copy. */
static uint8_t lent[3000];
static size_t provided;

static int provide(void *arg, paxos_iid *iid, const void **bytes, size_t *len)
{
	(void)arg;
	provided++;
	*iid = 150;
	*bytes = lent;
	*len = sizeof(lent);
	return PAXOS_OK;
}

START_TEST(test_snapshot_from_a_provider)
{
	struct side server, asker;
	side_open(&server, false);
	side_open(&asker, true);
	for (size_t i = 0; i < sizeof(lent); i++)
		lent[i] = (uint8_t)(i % 253);
	ck_assert_int_eq(paxos_node_on_snapshot_request(server.node, provide, NULL), PAXOS_OK);
	trim_below(&asker, 160, 100);
	for (int round = 0; round < 20 && !asker.installs; round++) {
		carry(&asker, &server, (size_t)-1);
		carry(&server, &asker, (size_t)-1);
		if (!asker.installs)
			usleep(110000);
		event_base_loop(base, EVLOOP_NONBLOCK);
	}
	ck_assert_uint_eq(asker.installs, 1);
	ck_assert_uint_eq(asker.installed_iid, 150);
	ck_assert_uint_eq(asker.installed_len, sizeof(lent));
	ck_assert(memcmp(asker.installed, lent, sizeof(lent)) == 0);
	ck_assert_uint_ge(provided, 2); /* the offer, then the chunks */
	ck_assert_uint_eq(paxos_node_next_iid(asker.node), 151);
	side_close(&server);
	side_close(&asker);
}
END_TEST

/* A snapshot over snapshot-max-bytes is refused, by the server and by the asker; one the
 * application refuses is fetched again. */
START_TEST(test_snapshot_bounds_and_refusals)
{
	cfg.snapshot_max_bytes = 1000;
	struct side server, asker;
	side_open(&server, false);
	side_open(&asker, true);
	uint8_t snap[2000] = {0};
	ck_assert_int_eq(paxos_node_offer_snapshot(server.node, 120, snap, sizeof(snap)),
			 PAXOS_E_TOO_BIG);
	ck_assert_ptr_nonnull(strstr(paxos_node_error(server.node), "snapshot-max-bytes"));
	ck_assert_int_eq(paxos_node_offer_snapshot(server.node, 0, snap, 10), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_node_on_install_snapshot(server.node, on_install, &server),
			 PAXOS_E_INVALID); /* after the learner */
	ck_assert_int_eq(paxos_node_offer_snapshot(server.node, 120, snap, 900), PAXOS_OK);

	trim_below(&asker, 130, 100);
	asker.answer = PAXOS_E_INVALID;
	for (int round = 0; round < 20 && asker.installs < 2; round++) {
		carry(&asker, &server, (size_t)-1);
		carry(&server, &asker, (size_t)-1);
		usleep(110000);
		event_base_loop(base, EVLOOP_NONBLOCK);
	}
	ck_assert_uint_ge(asker.installs, 2); /* refused, fetched again */
	ck_assert_uint_ge(COUNTER(&asker, snapshots_refused), 2);
	ck_assert_uint_eq(paxos_node_next_iid(asker.node), 1);
	asker.answer = PAXOS_OK;
	for (int round = 0; round < 20 && !asker.installed; round++) {
		carry(&asker, &server, (size_t)-1);
		carry(&server, &asker, (size_t)-1);
		usleep(110000);
		event_base_loop(base, EVLOOP_NONBLOCK);
	}
	ck_assert_uint_eq(asker.installed_iid, 120);
	ck_assert_uint_eq(paxos_node_next_iid(asker.node), 121);
	side_close(&server);
	side_close(&asker);

	/* An offer larger than the asker takes is refused with a counter. */
	struct side big, small;
	cfg.snapshot_max_bytes = 100000;
	side_open(&big, false);
	cfg.snapshot_max_bytes = 1000;
	side_open(&small, true);
	uint8_t *large = calloc(1, 5000);
	ck_assert_int_eq(paxos_node_offer_snapshot(big.node, 120, large, 5000), PAXOS_OK);
	trim_below(&small, 130, 100);
	carry(&small, &big, (size_t)-1);
	carry(&big, &small, (size_t)-1);
	ck_assert_uint_eq(COUNTER(&small, snapshots_refused), 1);
	ck_assert_uint_eq(small.installs, 0);
	free(large);
	side_close(&big);
	side_close(&small);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("snapshot");
	TCase *tc = tcase_create("transfer");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_snapshot_fetched_and_installed);
	tcase_add_test(tc, test_snapshot_bounds_and_refusals);
	tcase_add_test(tc, test_snapshot_from_a_provider);
	suite_add_tcase(s, tc);
	return s;
}
