/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport seam (paxos/transport.h): a node runs on an in-process stub transport, with
 * no socket anywhere. What it sends reaches the stub as whole datagrams to role groups; what
 * the stub delivers reaches the roles. This is what another transport (kernel bypass, a
 * simulated network) plugs into.
 */
#include "check_main.h"
#include <event2/event.h>
#include <paxos/paxos.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "codec.h"
#include "stub_transport.h"
#include "support.h"
#include "config_fields.h"

static char delivered[64];
static paxos_iid delivered_iid;

static void on_value(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)arg;
	(void)position;
	delivered_iid = iid;
	snprintf(delivered, sizeof(delivered), "%.*s", (int)v->len, (const char *)v->data);
}

START_TEST(test_node_runs_on_a_stub_transport)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	struct event_base *base = event_base_new();
	struct stub *s = calloc(1, sizeof(*s));

	char err[256];
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_learner(n, on_value, NULL), PAXOS_OK);
	ck_assert(s->joined[PAXOS_GROUP_LEARNERS]);
	ck_assert(s->joined[PAXOS_GROUP_ACCEPTORS]); /* the leader's accepts carry the values */

	/* A value submitted goes out as one datagram to the submit group, at the round's end. */
	ck_assert_int_eq(paxos_node_submit(n, "hello", 5), PAXOS_OK);
	ck_assert_uint_eq(s->sent, 0);
	event_base_loop(base, EVLOOP_NONBLOCK);
	ck_assert_uint_eq(s->sent, 1);
	ck_assert_int_eq(s->sent_to[0], PAXOS_GROUP_SUBMIT);
	ck_assert_uint_eq(paxos_node_transport_counters(n)->bytes_sent, s->sent_len[0]);
	struct paxos_decoder dec;
	paxos_decoder_init(&dec);
	struct paxos_header h;
	struct paxos_message m[4];
	size_t count;
	ck_assert_int_eq(paxos_decode(&dec, s->sent_data[0], s->sent_len[0], &h, m, 4, &count),
			 PAXOS_OK);
	ck_assert_uint_eq(count, 1);
	ck_assert_int_eq(m[0].type, PAXOS_MSG_CLIENT_VALUE);
	ck_assert(value_is(&m[0].u.client_value.value, "hello"));

	/* An acceptor's final accepted for instance 1, delivered by the stub, is learned. */
	uint8_t frame[64], buf[512];
	uint32_t used = 0;
	struct paxos_value one = {(const uint8_t *)"world", 5};
	ck_assert_int_eq(paxos_batch_append(frame, sizeof(frame), &used, &one), PAXOS_OK);
	struct paxos_header from = {.role = PAXOS_ROLE_ACCEPTOR, .sender_id = 0};
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, sizeof(buf), &from);
	struct paxos_message acc = {.type = PAXOS_MSG_ACCEPTED};
	acc.u.accepted = (struct paxos_accepted){
	    .iid = 1, .ballot = 102, .value = {frame, used}, .acceptor_id = 0, .final = true};
	ck_assert_int_eq(paxos_encoder_add(&e, &acc), PAXOS_OK);
	struct paxos_rx_datagram d = {.data = buf, .len = e.len, .from = NULL};
	s->deliver(s->deliver_arg, PAXOS_GROUP_LEARNERS, &d, 1);
	ck_assert_uint_eq(delivered_iid, 1);
	ck_assert_str_eq(delivered, "world");
	ck_assert_uint_eq(paxos_node_transport_counters(n)->datagrams_received, 1);
	ck_assert_uint_eq(paxos_node_transport_counters(n)->bytes_received, e.len);

	paxos_node_free(n);
	ck_assert(s->destroyed);
	paxos_decoder_destroy(&dec);
	free(s);
	event_base_free(base);
}
END_TEST

/* A transport that cannot open stops the node with its sentence. */
static struct paxos_transport *failing_open(void *arg, struct event_base *base,
					    const struct paxos_config *cfg,
					    paxos_transport_deliver_fn deliver, void *deliver_arg,
					    char *err, size_t errlen)
{
	(void)arg;
	(void)base;
	(void)cfg;
	(void)deliver;
	(void)deliver_arg;
	snprintf(err, errlen, "no such network");
	return NULL;
}

START_TEST(test_transport_that_cannot_open)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	struct event_base *base = event_base_new();
	char err[256];
	ck_assert_ptr_null(paxos_node_new_on(base, &cfg, failing_open, NULL, err, sizeof(err)));
	ck_assert_str_eq(err, "no such network");
	ck_assert_ptr_null(paxos_node_new_on(base, &cfg, NULL, NULL, err, sizeof(err)));
	ck_assert_str_eq(err, "no transport to open");
	event_base_free(base);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("transport");
	TCase *tc = tcase_create("seam");
	tcase_add_test(tc, test_node_runs_on_a_stub_transport);
	tcase_add_test(tc, test_transport_that_cannot_open);
	suite_add_tcase(s, tc);
	return s;
}
