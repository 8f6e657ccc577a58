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
/* A request must arrive whole within this long of its first byte, or of the connection's
 * opening: a scraper sends its request at once. evhttp's timeout restarts with each byte read,
 * so without this a client sending one byte now and then (slowloris) holds its connection for
 * ever. */
#define REQUEST_TIMEOUT_S 5
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
 * cap a new connection closes the one whose deadline comes first: resting until one closes
 * would let connections that never finish a request keep every newcomer, /health's too, in
 * the kernel's queue. */
#define MAX_CONNS 64
#define MIN_CONNS 4
/* A connection this young is not closed to make room: its client, maybe slowed down by a busy
 * host, gets this long to send its request. At the cap the listener rests until one is older,
 * so connections that never finish a request take at most the cap every this long, and a
 * newcomer waits in the kernel's queue behind at most the cap of them. */
#define GRACE_MS 250
/* How often the connections evhttp has freed are counted out, and those past their deadline
 * closed, while any is open. */
#define SWEEP_MS 100

/* A warning said at most once each ACCEPT_LOG_PERIOD_S, with how often it was not. */
struct log_limit {
	time_t at;         /* the last line */
	uint64_t unlogged; /* times since */
};

/* Whether the warning is due now; if so *skipped says how many times it was not said since. */
static bool log_due(struct log_limit *l, uint64_t *skipped)
{
	time_t now = time(NULL);
	if (l->at != 0 && now - l->at < ACCEPT_LOG_PERIOD_S) {
		l->unlogged++;
		return false;
	}
	*skipped = l->unlogged;
	l->at = now;
	l->unlogged = 0;
	return true;
}

struct paxos_metrics {
	struct paxos_metrics *next; /* in servers */
	struct evhttp *http;
	const struct paxos_node *nodes[PAXOS_MAX_PARTITIONS]; /* one per partition served */
	uint32_t node_count;
	struct evconnlistener *listener;
	struct event *rest; /* re-enables the listener */
	bool cap_rest;      /* rest is for the cap: over once a connection closes */
	char where[64];     /* ADDRESS:PORT, for the log */
	struct log_limit accept_errors;
	struct conn {
		/* With a reference of ours: evhttp 2.1 says nothing when it frees a
		 * connection, but freeing clears the callbacks, which the sweep sees. NULL: a
		 * free slot (slots stay put: the input's callback points at its own). */
		struct bufferevent *bev;
		struct evbuffer_cb_entry *watch; /* on the input: a request begins */
		int64_t deadline_ms; /* closed then, unless a request is served before */
		bool begun;          /* bytes of a request not served yet arrived */
		uint64_t seq;        /* the order of opening: ties at the cap */
		int64_t opened_ms;   /* see GRACE_MS */
	} conns[MAX_CONNS];
	unsigned open, max_open;
	uint64_t opened;
	struct event *sweep;
	struct log_limit at_cap;
};

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* A request's first bytes: it has REQUEST_TIMEOUT_S to arrive whole. */
static void on_input(struct evbuffer *input, const struct evbuffer_cb_info *info, void *arg)
{
	(void)input;
	struct conn *c = arg;
	if (info->n_added == 0 || c->begun)
		return;
	c->begun = true;
	int64_t by = now_ms() + REQUEST_TIMEOUT_S * 1000;
	if (by < c->deadline_ms)
		c->deadline_ms = by;
}

/* A request arrived whole and is being answered: the connection may idle, kept alive, until
 * the next (already begun if pipelined). */
static void served(struct paxos_metrics *m, struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
	for (unsigned i = 0; bev && i < MAX_CONNS; i++) {
		struct conn *c = &m->conns[i];
		if (c->bev != bev)
			continue;
		c->begun = evbuffer_get_length(bufferevent_get_input(bev)) > 0;
		c->deadline_ms = now_ms() + (c->begun ? REQUEST_TIMEOUT_S : IDLE_TIMEOUT_S) * 1000;
		return;
	}
}

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
	served(m, req);
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
	served(m, req);
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
	served(arg, req);
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

/* The listener accepts unless it is resting: after EMFILE, or at the cap until a connection is
 * past its grace (a new connection then makes room). */
static void listen_if_room(struct paxos_metrics *m)
{
	if (!evtimer_pending(m->rest, NULL))
		evconnlistener_enable(m->listener);
	else
		evconnlistener_disable(m->listener);
}

static void on_rest_over(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct paxos_metrics *m = arg;
	m->cap_rest = false;
	listen_if_room(m);
}

/* Drops our reference to a connection: the last one closes the descriptor. */
static void release(struct paxos_metrics *m, struct conn *c)
{
	evbuffer_remove_cb_entry(bufferevent_get_input(c->bev), c->watch);
	bufferevent_decref(c->bev);
	c->bev = NULL;
	m->open--;
}

/* Whether evhttp still has the connection; if so, the connection (evhttp gives a
 * connection's bufferevent the connection as its callbacks' argument: the only handle on one
 * that has not sent a whole request yet). */
static bool held(const struct conn *c, struct evhttp_connection **evcon)
{
	bufferevent_data_cb r, w;
	bufferevent_event_cb e;
	void *arg;
	bufferevent_getcb(c->bev, &r, &w, &e, &arg);
	*evcon = arg;
	return r || w || e;
}

/* Closes a connection evhttp still has and releases it. */
static void close_conn(struct paxos_metrics *m, struct conn *c)
{
	struct evhttp_connection *evcon;
	if (held(c, &evcon))
		evhttp_connection_free(evcon);
	release(m, c);
}

/* Releases the connections evhttp has freed and closes those past their deadline. */
static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct paxos_metrics *m = arg;
	int64_t now = now_ms();
	for (unsigned i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &m->conns[i];
		struct evhttp_connection *evcon;
		if (!c->bev)
			continue;
		if (!held(c, &evcon))
			release(m, c);
		else if (now >= c->deadline_ms)
			close_conn(m, c);
	}
	if (m->open) {
		struct timeval every = {0, SWEEP_MS * 1000};
		evtimer_add(m->sweep, &every);
	}
	if (m->cap_rest && m->open < m->max_open) {
		evtimer_del(m->rest);
		m->cap_rest = false;
	}
	listen_if_room(m);
}

/* At the cap: closes the connection whose deadline comes first, the oldest of those, among
 * those past GRACE_MS (the listener rests until there is one), to make room. A client served a
 * moment ago, or just arrived, is closed last. */
static void make_room(struct paxos_metrics *m, int64_t now)
{
	struct conn *first = NULL;
	for (int pass = 0; pass < 2 && !first; pass++)
		for (unsigned i = 0; i < MAX_CONNS; i++) {
			struct conn *c = &m->conns[i];
			if (!c->bev || (pass == 0 && now - c->opened_ms < GRACE_MS))
				continue;
			if (!first || c->deadline_ms < first->deadline_ms ||
			    (c->deadline_ms == first->deadline_ms && c->seq < first->seq))
				first = c;
		}
	if (!first)
		return;
	close_conn(m, first);
	uint64_t skipped;
	if (!log_due(&m->at_cap, &skipped))
		return;
	paxos_logf(PAXOS_LOG_WARNING,
		   "paxos: metrics %s: %u connections open, the most it serves at once: each new "
		   "one closes the one nearest its deadline (%llu more times in the last %d s)",
		   m->where, m->open + 1, (unsigned long long)skipped, ACCEPT_LOG_PERIOD_S);
}

/* Each accepted connection's bufferevent, made here to be counted (evhttp sets its socket);
 * NULL lets evhttp make its own. */
static struct bufferevent *on_connection(struct event_base *base, void *arg)
{
	struct paxos_metrics *m = arg;
	int64_t now = now_ms();
	if (m->open >= m->max_open)
		make_room(m, now);
	struct conn *c = NULL;
	for (unsigned i = 0; i < MAX_CONNS && !c; i++)
		if (!m->conns[i].bev)
			c = &m->conns[i];
	if (!c)
		return NULL; /* unreachable: room was made */
	struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!bev)
		return NULL;
	c->watch = evbuffer_add_cb(bufferevent_get_input(bev), on_input, c);
	if (!c->watch) {
		bufferevent_free(bev);
		return NULL;
	}
	bufferevent_incref(bev);
	c->bev = bev;
	c->begun = true; /* the request is due from now */
	c->deadline_ms = now + REQUEST_TIMEOUT_S * 1000;
	c->seq = m->opened++;
	c->opened_ms = now;
	m->open++;
	if (!evtimer_pending(m->sweep, NULL)) {
		struct timeval every = {0, SWEEP_MS * 1000};
		evtimer_add(m->sweep, &every);
	}
	/* At the cap: rest until a connection is past its grace (at least until the loop's next
	 * turn, so that those accepted have their request read first). */
	if (m->open >= m->max_open && !evtimer_pending(m->rest, NULL)) {
		int64_t oldest = now;
		for (unsigned i = 0; i < MAX_CONNS; i++)
			if (m->conns[i].bev && m->conns[i].opened_ms < oldest)
				oldest = m->conns[i].opened_ms;
		int64_t wait = oldest + GRACE_MS > now ? oldest + GRACE_MS - now : 0;
		struct timeval rest = {wait / 1000, (wait % 1000) * 1000};
		evtimer_add(m->rest, &rest);
		m->cap_rest = true;
		evconnlistener_disable(m->listener);
	}
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
		m->cap_rest = false;
		listen_if_room(m);
	}
	uint64_t skipped;
	if (!log_due(&m->accept_errors, &skipped))
		return;
	paxos_logf(PAXOS_LOG_WARNING,
		   "paxos: metrics %s: cannot accept a connection: %s%s (%llu more such errors "
		   "in the last %d s)",
		   m->where, evutil_socket_error_to_string(e),
		   exhausted ? "; not accepting for 1 s" : "", (unsigned long long)skipped,
		   ACCEPT_LOG_PERIOD_S);
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
	for (unsigned i = 0; i < MAX_CONNS; i++)
		if (m->conns[i].bev)
			release(m, &m->conns[i]);
	if (m->rest)
		event_free(m->rest);
	if (m->sweep)
		event_free(m->sweep);
	free(m);
}
