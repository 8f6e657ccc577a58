/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The metrics server: libevent's evhttp on the node's own loop, so a scrape reads the node
 * between two of its events and needs no lock. It only reads the node, through its public
 * interface (collect.c); a slow or stuck client costs a connection, never the loop.
 */
#include <paxos/metrics.h>

#include "collect.h"
#include "log_line.h"
#include "config_fields.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* Idle keep-alive connections (a scraper keeps one open between scrapes) are closed after
 * this long; a scrape interval is usually 15 to 60 s. */
#define IDLE_TIMEOUT_S 120
/* Requests are a line and a few headers: anything bigger is not a scraper. */
#define MAX_HEADERS 8192
/* GET and HEAD carry no body: a request with more than this is refused (413), not read. */
#define MAX_BODY 1024
/* Out of file descriptors (EMFILE, ENFILE): the listener rests this long, then tries again,
 * instead of failing accept() as fast as the loop turns. Its line is logged at most once a
 * period, with how many such errors the period saw. */
#define ACCEPT_REST_MS 1000
#define ACCEPT_LOG_PERIOD_S 10
/* Connections open at once: a scraper keeps one, so this is plenty; each holds a descriptor
 * the node needs for its own work, so a quarter of the descriptors if that is fewer. At the
 * cap the listener rests until one closes: the others wait in the kernel's queue. */
#define MAX_CONNS 64
#define MIN_CONNS 4
/* How often the connections evhttp has freed are counted out, while any is open. */
#define SWEEP_MS 100

struct paxos_metrics {
	struct paxos_metrics *next; /* in servers */
	struct evhttp *http;
	const struct paxos_node *nodes[PAXOS_MAX_PARTITIONS]; /* one per partition served */
	uint32_t node_count;
	struct evconnlistener *listener;
	struct event *rest; /* re-enables the listener */
	char where[64];     /* ADDRESS:PORT, for the log */
	time_t logged_at;   /* the last accept error line */
	uint64_t unlogged;  /* accept errors since */
	/* Each connection's bufferevent, with a reference of ours: evhttp 2.1 says nothing when
	 * it frees a connection, but freeing clears the callbacks, which the sweep sees. */
	struct bufferevent *conns[MAX_CONNS];
	unsigned open, max_open;
	struct event *sweep;
	time_t full_logged_at;  /* the last line about the cap */
	uint64_t full_unlogged; /* times at the cap since */
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
	struct paxos_sample *samples =
	    calloc(metrics_sample_room() * m->node_count, sizeof(*samples));
	struct evbuffer *body = evbuffer_new();
	char *text = NULL;
	size_t len = 0;
	if (samples && body) {
		size_t count = 0;
		for (uint32_t i = 0; i < m->node_count; i++)
			count += metrics_collect(m->nodes[i], samples + count);
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
	const struct paxos_node *failed = NULL;
	for (uint32_t i = 0; i < m->node_count && !failed; i++)
		if (paxos_node_failed(m->nodes[i]))
			failed = m->nodes[i];
	if (!failed) {
		reply_text(req, HTTP_OK, "OK", "ok\n");
		return;
	}
	/* One line: a backend's sentence could hold a line break. */
	char line[1400];
	snprintf(line, sizeof(line), "failed: %s\n", paxos_node_error(failed));
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

/* The listener's error callback gets the argument evhttp gave its accept callback (the
 * evhttp), not ours: the servers of the process, to find ours by it. A node's loop may run
 * on any thread, hence the lock. */
static struct paxos_metrics *servers;
static pthread_mutex_t servers_lock = PTHREAD_MUTEX_INITIALIZER;

static struct paxos_metrics *server_of(const struct evhttp *http)
{
	pthread_mutex_lock(&servers_lock);
	struct paxos_metrics *m = servers;
	while (m && m->http != http)
		m = m->next;
	pthread_mutex_unlock(&servers_lock);
	return m;
}

/* The listener accepts while there is room and it is not resting after EMFILE. */
static void listen_if_room(struct paxos_metrics *m)
{
	if (m->open < m->max_open && !evtimer_pending(m->rest, NULL))
		evconnlistener_enable(m->listener);
	else
		evconnlistener_disable(m->listener);
}

static void on_rest_over(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	listen_if_room(arg);
}

/* Drops our reference to the connections evhttp has freed (their callbacks are cleared): the
 * last reference closes the descriptor. */
static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct paxos_metrics *m = arg;
	for (unsigned i = 0; i < m->open;) {
		bufferevent_data_cb r, w;
		bufferevent_event_cb e;
		bufferevent_getcb(m->conns[i], &r, &w, &e, NULL);
		if (r || w || e) {
			i++;
			continue;
		}
		bufferevent_decref(m->conns[i]);
		m->conns[i] = m->conns[--m->open];
	}
	if (m->open) {
		struct timeval every = {0, SWEEP_MS * 1000};
		evtimer_add(m->sweep, &every);
	}
	listen_if_room(m);
}

/* Each accepted connection's bufferevent, made here to be counted (evhttp sets its socket);
 * NULL lets evhttp make its own. */
static struct bufferevent *on_connection(struct event_base *base, void *arg)
{
	struct paxos_metrics *m = arg;
	if (m->open >= m->max_open)
		return NULL; /* unreachable: the listener rests at the cap */
	struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!bev)
		return NULL;
	bufferevent_incref(bev);
	m->conns[m->open++] = bev;
	if (!evtimer_pending(m->sweep, NULL)) {
		struct timeval every = {0, SWEEP_MS * 1000};
		evtimer_add(m->sweep, &every);
	}
	if (m->open < m->max_open)
		return bev;
	evconnlistener_disable(m->listener);
	time_t now = time(NULL);
	if (m->full_logged_at != 0 && now - m->full_logged_at < ACCEPT_LOG_PERIOD_S) {
		m->full_unlogged++;
		return bev;
	}
	paxos_logf(PAXOS_LOG_WARNING,
		   "paxos: metrics %s: %u connections open, the most it serves at once: not "
		   "accepting until one closes (%llu more times in the last %d s)",
		   m->where, m->open, (unsigned long long)m->full_unlogged, ACCEPT_LOG_PERIOD_S);
	m->full_logged_at = now;
	m->full_unlogged = 0;
	return bev;
}

static unsigned max_connections(void)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY ||
	    r.rlim_cur / 4 >= MAX_CONNS)
		return MAX_CONNS;
	return r.rlim_cur / 4 > MIN_CONNS ? (unsigned)(r.rlim_cur / 4) : MIN_CONNS;
}

/* An accept() that failed: out of descriptors, rest (the connections wait in the kernel's
 * queue) rather than spin; anything else is logged too, at the same bounded rate. */
static void on_accept_error(struct evconnlistener *listener, void *arg)
{
	(void)listener;
	int e = EVUTIL_SOCKET_ERROR();
	struct paxos_metrics *m = server_of(arg);
	if (!m)
		return;
	bool exhausted = e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM;
	if (exhausted) {
		struct timeval rest = {ACCEPT_REST_MS / 1000, (ACCEPT_REST_MS % 1000) * 1000};
		evtimer_add(m->rest, &rest);
		listen_if_room(m);
	}
	time_t now = time(NULL);
	if (m->logged_at != 0 && now - m->logged_at < ACCEPT_LOG_PERIOD_S) {
		m->unlogged++;
		return;
	}
	paxos_logf(PAXOS_LOG_WARNING,
		   "paxos: metrics %s: cannot accept a connection: %s%s (%llu more such errors "
		   "in the last %d s)",
		   m->where, evutil_socket_error_to_string(e),
		   exhausted ? "; not accepting for 1 s" : "", (unsigned long long)m->unlogged,
		   ACCEPT_LOG_PERIOD_S);
	m->logged_at = now;
	m->unlogged = 0;
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
	m->nodes[m->node_count++] = node;
	evhttp_set_allowed_methods(m->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_max_headers_size(m->http, MAX_HEADERS);
	evhttp_set_max_body_size(m->http, MAX_BODY);
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
	struct evhttp_bound_socket *bound = evhttp_bind_socket_with_handle(m->http, addr, at->port);
	if (!bound) {
		int e = EVUTIL_SOCKET_ERROR();
		snprintf(err, errlen, "metrics-listen %s:%u: cannot listen: %s", addr, at->port,
			 e ? evutil_socket_error_to_string(e) : "unknown error");
		paxos_metrics_free(m);
		return NULL;
	}
	snprintf(m->where, sizeof(m->where), "%s:%u", addr, at->port);
	m->listener = evhttp_bound_socket_get_listener(bound);
	m->rest = evtimer_new(base, on_rest_over, m);
	m->sweep = evtimer_new(base, on_sweep, m);
	if (!m->listener || !m->rest || !m->sweep) {
		snprintf(err, errlen, "metrics-listen %s:%u: out of memory", addr, at->port);
		paxos_metrics_free(m);
		return NULL;
	}
	pthread_mutex_lock(&servers_lock);
	m->next = servers;
	servers = m;
	pthread_mutex_unlock(&servers_lock);
	evconnlistener_set_error_cb(m->listener, on_accept_error);
	m->max_open = max_connections();
	evhttp_set_bevcb(m->http, on_connection, m);
	return m;
}

int paxos_metrics_add_node(struct paxos_metrics *m, const struct paxos_node *node)
{
	if (!m || !node)
		return PAXOS_E_INVALID;
	if (m->node_count >= PAXOS_MAX_PARTITIONS)
		return PAXOS_E_FULL;
	m->nodes[m->node_count++] = node;
	return PAXOS_OK;
}

void paxos_metrics_free(struct paxos_metrics *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&servers_lock);
	for (struct paxos_metrics **p = &servers; *p; p = &(*p)->next)
		if (*p == m) {
			*p = m->next;
			break;
		}
	pthread_mutex_unlock(&servers_lock);
	if (m->http)
		evhttp_free(m->http); /* frees its connections: ours are the last references */
	for (unsigned i = 0; i < m->open; i++)
		bufferevent_decref(m->conns[i]);
	if (m->rest)
		event_free(m->rest);
	if (m->sweep)
		event_free(m->sweep);
	free(m);
}
