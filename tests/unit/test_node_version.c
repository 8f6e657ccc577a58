/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The wire version a node speaks (lib/node/node_version.c), on a stub transport: its own until
 * it hears a node of the release before, then that one's, written as spoken down, and its own
 * again once none was heard for the hold, each change said once; a node speaking down for
 * another makes it follow (relayed), one that only follows does not.
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

static unsigned logged(const char *what)
{
	unsigned times = 0;
	for (unsigned i = 0; i < nlines; i++)
		times += strstr(lines[i], what) != NULL;
	return times;
}

/* Acceptor 0's periodic state to the proposers group, in wire version 5 as speech says. */
static void old_state(struct stub *s, enum paxos_wire_speech speech)
{
	uint8_t buf[256];
	struct paxos_header from = {
	    .role = PAXOS_ROLE_ACCEPTOR, .sender_id = 0, .version = 5, .speech = speech};
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, sizeof(buf), &from);
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_STATE};
	m.u.acceptor_state = (struct paxos_acceptor_state){.acceptor_id = 0};
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	struct paxos_rx_datagram d = {.data = buf, .len = e.len, .from = NULL};
	s->deliver(s->deliver_arg, PAXOS_GROUP_PROPOSERS, &d, 1);
}

/* Every datagram the stub kept says version and speech; returns how many it kept. */
static size_t sent_in(const struct stub *s, uint32_t version, enum paxos_wire_speech speech)
{
	struct paxos_decoder dec;
	paxos_decoder_init(&dec);
	static struct paxos_message m[PAXOS_MAX_MESSAGES_PER_DATAGRAM];
	for (size_t i = 0; i < s->sent; i++) {
		struct paxos_header h;
		size_t count;
		ck_assert_int_eq(paxos_decode(&dec, s->sent_data[i], s->sent_len[i], &h, m,
					      PAXOS_MAX_MESSAGES_PER_DATAGRAM, &count),
				 PAXOS_OK);
		ck_assert_uint_eq(h.version, version);
		ck_assert_int_eq(h.speech, speech);
	}
	paxos_decoder_destroy(&dec);
	return s->sent;
}

struct fixture {
	struct event_base *base;
	struct stub *s;
	struct memory_epochs epochs;
	struct paxos_node *n;
};

/* A leading proposer (check-quorum off: it beats whatever it hears), sending heartbeats. */
static void fixture_start(struct fixture *f)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	cfg.check_quorum = false;
	cfg.phase1_timeout_ms = cfg.phase2_timeout_ms = cfg.hole_check_ms = 60000;
	cfg.counters_interval_ms = 0;
	f->base = event_base_new();
	f->s = calloc(1, sizeof(*f->s));
	f->epochs = (struct memory_epochs){.es.ops = &memory_epoch_ops};
	nlines = 0;
	paxos_set_log(keep_line, NULL);
	char err[256];
	f->n = paxos_node_new_on(f->base, &cfg, stub_open, f->s, err, sizeof(err));
	ck_assert_msg(f->n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_proposer_with(f->n, 0, &f->epochs.es), PAXOS_OK);
}

static void fixture_stop(struct fixture *f)
{
	paxos_node_free(f->n);
	paxos_set_log(NULL, NULL);
	free(f->s);
	event_base_free(f->base);
}

START_TEST(test_node_speaks_down_and_up)
{
	struct fixture f;
	fixture_start(&f);
	support_run_for(f.base, 300);
	ck_assert_uint_gt(sent_in(f.s, PAXOS_WIRE_VERSION, PAXOS_WIRE_NATIVE), 0);

	/* A node of the release before is heard: from the end of that read on, version 5. */
	old_state(f.s, PAXOS_WIRE_NATIVE);
	support_run_for(f.base, 50);
	f.s->sent = 0;
	for (int i = 0; i < 6; i++) {
		old_state(f.s, PAXOS_WIRE_NATIVE);
		support_run_for(f.base, 50);
	}
	ck_assert_uint_gt(sent_in(f.s, 5, PAXOS_WIRE_DOWN), 0);
	ck_assert_uint_eq(logged("speaking wire version 5: acceptor 0 at stub is of the release "
				 "before; no new log begins until every node speaks version 6"),
			  1);

	/* Not heard for the hold (5 s): version 6 again, said once. */
	for (int i = 0; i < 60 && !logged("speaking wire version 6 again"); i++)
		support_run_for(f.base, 100);
	ck_assert_uint_eq(logged("speaking wire version 6 again: no node of version 5 heard for "
				 "5 s"),
			  1);
	f.s->sent = 0;
	support_run_for(f.base, 300);
	ck_assert_uint_gt(sent_in(f.s, PAXOS_WIRE_VERSION, PAXOS_WIRE_NATIVE), 0);
	ck_assert_uint_eq(logged("speaking wire version 5"), 1);
	fixture_stop(&f);
}
END_TEST

START_TEST(test_node_follows_one_speaking_down)
{
	struct fixture f;
	fixture_start(&f);
	/* One that only follows another is no reason to speak down. */
	old_state(f.s, PAXOS_WIRE_DOWN_RELAYED);
	f.s->sent = 0;
	support_run_for(f.base, 300);
	ck_assert_uint_gt(sent_in(f.s, PAXOS_WIRE_VERSION, PAXOS_WIRE_NATIVE), 0);
	/* One that heard a node of the release before itself is: the node follows it. */
	old_state(f.s, PAXOS_WIRE_DOWN);
	support_run_for(f.base, 50);
	f.s->sent = 0;
	support_run_for(f.base, 300);
	ck_assert_uint_gt(sent_in(f.s, 5, PAXOS_WIRE_DOWN_RELAYED), 0);
	ck_assert_uint_eq(logged("speaking wire version 5: acceptor 0 at stub speaks it for a node "
				 "of the release before"),
			  1);
	fixture_stop(&f);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("node_version");
	TCase *tc = tcase_create("speaking");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_node_speaks_down_and_up);
	tcase_add_test(tc, test_node_follows_one_speaking_down);
	suite_add_tcase(s, tc);
	return s;
}
