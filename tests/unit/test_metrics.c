/* SPDX-License-Identifier: BSD-3-Clause */
/* The metrics server (paxos/metrics.h) over real HTTP, with libevent's HTTP client: /metrics,
 * /health (503 and the reason once the node failed), 404, and the errors of a port in use or
 * an address not of this host. Listens on 127.0.0.1: ctest runs it in a private network
 * namespace (tests/netns-run.sh). */
#include "check_main.h"
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <paxos/paxos.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_fields.h"
#include "support.h"

#define PORT 19464 /* metrics-listen 127.0.0.1:19464 */

static struct event_base *base;
static struct paxos_node *node;
static struct paxos_metrics *metrics;
static struct paxos_config cfg;

struct response {
	bool done;
	int code; /* 0: no answer */
	char type[128];
	char body[1 << 17];
};

static void on_response(struct evhttp_request *req, void *arg)
{
	struct response *r = arg;
	r->done = true;
	if (req && evhttp_request_get_response_code(req)) {
		r->code = evhttp_request_get_response_code(req);
		const char *type =
		    evhttp_find_header(evhttp_request_get_input_headers(req), "Content-Type");
		snprintf(r->type, sizeof(r->type), "%s", type ? type : "");
		struct evbuffer *in = evhttp_request_get_input_buffer(req);
		size_t len = evbuffer_get_length(in);
		ck_assert_uint_lt(len, sizeof(r->body));
		evbuffer_remove(in, r->body, len);
		r->body[len] = '\0';
	}
	event_base_loopbreak(base);
}

static void on_give_up(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/* Runs the loop (the node's events too) until the answer to method path arrives. */
static struct response *request(enum evhttp_cmd_type method, const char *path)
{
	struct response *r = calloc(1, sizeof(*r));
	struct evhttp_connection *c = evhttp_connection_base_new(base, NULL, "127.0.0.1", PORT);
	struct evhttp_request *req = evhttp_request_new(on_response, r);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Host", "127.0.0.1");
	ck_assert_int_eq(evhttp_make_request(c, req, method, path), 0);
	/* A bound on a broken server, not a measurement: answers come in milliseconds. */
	struct timeval limit = {10, 0};
	struct event *give_up = evtimer_new(base, on_give_up, base);
	evtimer_add(give_up, &limit);
	while (!r->done && evtimer_pending(give_up, NULL))
		event_base_dispatch(base);
	event_free(give_up);
	evhttp_connection_free(c);
	ck_assert_msg(r->done, "no answer to %s", path);
	return r;
}

static void serve(struct paxos_node *n)
{
	char err[256];
	ck_assert_int_eq(
	    paxos_config_set(&cfg, "metrics-listen", "127.0.0.1:19464", err, sizeof(err)),
	    PAXOS_OK);
	metrics = paxos_metrics_new(base, n, &cfg, err, sizeof(err));
	ck_assert_msg(metrics != NULL, "%s", err);
}

static void setup(void)
{
	char err[256];
	paxos_config_defaults(&cfg);
	cfg.counters_interval_ms = 0;
	base = event_base_new();
	node = paxos_node_new(base, &cfg, err, sizeof(err));
	ck_assert_msg(node != NULL, "%s", err);
}

static void teardown(void)
{
	paxos_metrics_free(metrics);
	metrics = NULL;
	paxos_node_free(node);
	event_base_free(base);
}

/* A memory acceptor, which recovers until other acceptors answer, and its learner. */
START_TEST(test_metrics_of_the_hosted_roles)
{
	ck_assert_int_eq(paxos_node_add_acceptor(node, 1, paxos_storage_memory_new()), PAXOS_OK);
	serve(node);
	struct response *r = request(EVHTTP_REQ_GET, "/metrics");
	ck_assert_int_eq(r->code, 200);
	ck_assert_str_eq(r->type, "text/plain; version=0.0.4; charset=utf-8");
	const char *want[] = {
	    "# HELP paxos_instances_delivered_total instances delivered: batches of client values, "
	    "skips, commands\n# TYPE paxos_instances_delivered_total counter\n",
	    "\npaxos_instances_delivered_total{role=\"acceptor\",id=\"1\"} 0\n",
	    "\npaxos_instances_delivered_total{role=\"learner\",id=\"0\"} 0\n",
	    "\npaxos_instances_delivered_total{role=\"transport\",id=\"0\"} 0\n",
	    "\n# TYPE paxos_phase1_timeout_seconds gauge\n",
	    "\n# TYPE paxos_acceptor_recovering gauge\n"
	    "paxos_acceptor_recovering{role=\"acceptor\",id=\"1\"} 1\n",
	    "\npaxos_acceptor_accepted_instance{role=\"acceptor\",id=\"1\"} 0\n",
	    "\npaxos_acceptor_trimmed_instance{role=\"acceptor\",id=\"1\"} 0\n",
	    "\npaxos_learner_delivered_instance{role=\"learner\",id=\"0\"} 0\n",
	    "\npaxos_learner_seen_instance{role=\"learner\",id=\"0\"} 0\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++)
		ck_assert_msg(strstr(r->body, want[i]), "missing: %s", want[i]);
	/* No proposer here, and memory storage cannot tell its size. */
	ck_assert_ptr_null(strstr(r->body, "role=\"proposer\""));
	ck_assert_ptr_null(strstr(r->body, "paxos_proposer_"));
	ck_assert_ptr_null(strstr(r->body, "storage_bytes"));
	free(r);

	r = request(EVHTTP_REQ_GET, "/health");
	ck_assert_int_eq(r->code, 200);
	ck_assert_str_eq(r->body, "ok\n");
	free(r);
	r = request(EVHTTP_REQ_GET, "/metrics?name[]=x"); /* the query is not the path */
	ck_assert_int_eq(r->code, 200);
	free(r);
}
END_TEST

START_TEST(test_other_paths_and_methods)
{
	serve(node);
	struct response *r = request(EVHTTP_REQ_GET, "/");
	ck_assert_int_eq(r->code, 404);
	ck_assert_str_eq(r->body, "not found: try /metrics or /health\n");
	free(r);
	r = request(EVHTTP_REQ_GET, "/metrics/x");
	ck_assert_int_eq(r->code, 404);
	free(r);
	r = request(EVHTTP_REQ_HEAD, "/health");
	ck_assert_int_eq(r->code, 200);
	ck_assert_str_eq(r->body, "");
	free(r);
	/* GET and HEAD only: evhttp answers other methods 501 Not Implemented. */
	r = request(EVHTTP_REQ_POST, "/metrics");
	ck_assert_int_eq(r->code, 501);
	free(r);
}
END_TEST

/* The acceptor's first tick fails reading its store: the node stops its loop; an application that
 * runs the loop on (or a health check that comes in before the process exits) gets 503 and
 * the reason, on one line. */
START_TEST(test_health_after_a_failure)
{
	char err[256];
	paxos_node_free(node);
	cfg.acceptor_repeat_ms = 1;
	node = paxos_node_new(base, &cfg, err, sizeof(err));
	ck_assert_msg(node != NULL, "%s", err);
	struct paxos_storage *st =
	    failing_storage_new("test store: writing instance 7:\nNo space left on device");
	ck_assert_int_eq(paxos_node_add_acceptor(node, 0, st), PAXOS_OK);
	serve(node);
	struct timeval limit = {10, 0};
	struct event *give_up = evtimer_new(base, on_give_up, base);
	evtimer_add(give_up, &limit);
	event_base_dispatch(base); /* until the node fails */
	event_free(give_up);
	ck_assert_int_eq(paxos_node_failed(node), PAXOS_E_STORAGE);

	struct response *r = request(EVHTTP_REQ_GET, "/health");
	ck_assert_int_eq(r->code, 503);
	ck_assert_str_eq(r->body, "failed: acceptor storage: storage error: test store: writing "
				  "instance 7: No space left on device\n");
	free(r);
	r = request(EVHTTP_REQ_GET, "/metrics"); /* still readable: what happened before */
	ck_assert_int_eq(r->code, 200);
	free(r);
}
END_TEST

START_TEST(test_listen_errors)
{
	char err[256];
	ck_assert_ptr_null(paxos_metrics_new(base, node, &cfg, err, sizeof(err)));
	ck_assert_str_eq(err, "metrics: metrics-listen is not set");
	serve(node);
	ck_assert_ptr_null(paxos_metrics_new(base, node, &cfg, err, sizeof(err)));
	ck_assert_str_eq(err,
			 "metrics-listen 127.0.0.1:19464: cannot listen: Address already in use");
	/* Only loopback exists in the test's network namespace. */
	ck_assert_int_eq(
	    paxos_config_set(&cfg, "metrics-listen", "10.0.0.1:19464", err, sizeof(err)), PAXOS_OK);
	ck_assert_ptr_null(paxos_metrics_new(base, node, &cfg, err, sizeof(err)));
	ck_assert_str_eq(err, "metrics-listen 10.0.0.1:19464: cannot listen: Cannot assign "
			      "requested address");
	ck_assert_ptr_null(paxos_metrics_new(base, NULL, &cfg, err, sizeof(err)));
	ck_assert_str_eq(err, "metrics: invalid arguments");
	paxos_metrics_free(NULL);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("metrics");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_metrics_of_the_hosted_roles);
	tcase_add_test(tc, test_other_paths_and_methods);
	tcase_add_test(tc, test_health_after_a_failure);
	tcase_add_test(tc, test_listen_errors);
	suite_add_tcase(s, tc);
	return s;
}
