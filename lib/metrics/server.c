/*
 * The metrics server: libevent's evhttp on the node's own loop, so a scrape reads the node
 * between two of its events and needs no lock. It only reads the node, through its public
 * interface (collect.c); a slow or stuck client costs a connection, never the loop.
 */
#include <paxos/metrics.h>

#include "collect.h"
#include "config_fields.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Idle keep-alive connections (a scraper keeps one open between scrapes) are closed after
 * this long; a scrape interval is usually 15 to 60 s. */
#define IDLE_TIMEOUT_S 120
/* Requests are a line and a few headers: anything bigger is not a scraper. */
#define MAX_HEADERS 8192

struct paxos_metrics {
	struct evhttp *http;
	const struct paxos_node *node;
};

static void reply(struct evhttp_request *req, int code, const char *reason,
		  const char *content_type, struct evbuffer *body)
{
	struct evkeyvalq *headers = evhttp_request_get_output_headers(req);
	evhttp_add_header(headers, "Content-Type", content_type);
	evhttp_add_header(headers, "Cache-Control", "no-store");
	evhttp_send_reply(req, code, reason, body);
}

static void reply_text(struct evhttp_request *req, int code, const char *reason, const char *text)
{
	struct evbuffer *body = evbuffer_new();
	if (!body || evbuffer_add(body, text, strlen(text)) != 0) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
	} else {
		reply(req, code, reason, "text/plain; charset=utf-8", body);
	}
	if (body)
		evbuffer_free(body);
}

static void on_metrics(struct evhttp_request *req, void *arg)
{
	struct paxos_metrics *m = arg;
	struct paxos_sample *samples = calloc(metrics_sample_room(), sizeof(*samples));
	struct evbuffer *body = evbuffer_new();
	char *text = NULL;
	size_t len = 0;
	if (samples && body) {
		size_t count = metrics_collect(m->node, samples);
		len = paxos_exposition(samples, count, NULL, 0);
		if ((text = malloc(len + 1)))
			paxos_exposition(samples, count, text, len + 1);
	}
	if (text && evbuffer_add(body, text, len) == 0)
		reply(req, HTTP_OK, "OK", "text/plain; version=0.0.4; charset=utf-8", body);
	else
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
	free(text);
	free(samples);
	if (body)
		evbuffer_free(body);
}

static void on_health(struct evhttp_request *req, void *arg)
{
	struct paxos_metrics *m = arg;
	if (!paxos_node_failed(m->node)) {
		reply_text(req, HTTP_OK, "OK", "ok\n");
		return;
	}
	/* One line: a backend's sentence could hold a line break. */
	char line[1400];
	snprintf(line, sizeof(line), "failed: %s\n", paxos_node_error(m->node));
	for (char *c = line; c[0] && c[1]; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	reply_text(req, 503, "Service Unavailable", line);
}

static void on_other(struct evhttp_request *req, void *arg)
{
	(void)arg;
	reply_text(req, HTTP_NOTFOUND, "Not Found", "not found: try /metrics or /health\n");
}

struct paxos_metrics *paxos_metrics_new(struct event_base *base, const struct paxos_node *node,
					const struct paxos_config *cfg, char *err, size_t errlen)
{
	char addr[INET_ADDRSTRLEN];
	const struct paxos_endpoint *at = cfg ? &cfg->metrics_listen : NULL;
	if (!base || !node || !at || !inet_ntop(AF_INET, &at->addr, addr, sizeof(addr))) {
		snprintf(err, errlen, "metrics: invalid arguments");
		return NULL;
	}
	if (!at->port) {
		snprintf(err, errlen, "metrics: metrics-listen is not set");
		return NULL;
	}
	struct paxos_metrics *m = calloc(1, sizeof(*m));
	if (!m || !(m->http = evhttp_new(base))) {
		snprintf(err, errlen, "metrics-listen %s:%u: out of memory", addr, at->port);
		free(m);
		return NULL;
	}
	m->node = node;
	evhttp_set_allowed_methods(m->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_max_headers_size(m->http, MAX_HEADERS);
	evhttp_set_timeout(m->http, IDLE_TIMEOUT_S);
	if (evhttp_set_cb(m->http, "/metrics", on_metrics, m) != 0 ||
	    evhttp_set_cb(m->http, "/health", on_health, m) != 0) {
		snprintf(err, errlen, "metrics-listen %s:%u: out of memory", addr, at->port);
		paxos_metrics_free(m);
		return NULL;
	}
	evhttp_set_gencb(m->http, on_other, m);
	/* The address is a literal (paxos.conf takes no names): binding never waits on DNS. */
	errno = 0;
	if (!evhttp_bind_socket_with_handle(m->http, addr, at->port)) {
		int e = EVUTIL_SOCKET_ERROR();
		snprintf(err, errlen, "metrics-listen %s:%u: cannot listen: %s", addr, at->port,
			 e ? evutil_socket_error_to_string(e) : "unknown error");
		paxos_metrics_free(m);
		return NULL;
	}
	return m;
}

void paxos_metrics_free(struct paxos_metrics *m)
{
	if (!m)
		return;
	if (m->http)
		evhttp_free(m->http);
	free(m);
}
