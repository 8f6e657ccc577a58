/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Client sessions on a node (paxos/session.h). On the learner's side, each delivered session
 * value goes through the node's table (lib/core/session.c), and only a value it applies
 * reaches the application, header stripped. On the submitter's side, a session keeps its
 * values in flight in a ring, in sequence order, sends them again until the node's learner
 * sees them chosen, and completes each once. The read barrier is a NOOP value of the node's
 * own session.
 */
#include "parts.h"

#include <paxos/session.h>

#include "clock.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* A submission in flight: its value sits at buf + PAXOS_SESSION_HEADER_MAX, the header is
 * written in front of it at each send (its base moves as earlier ones finish). */
struct session_slot {
	uint64_t seq;
	uint8_t *buf;
	size_t cap, len;
	paxos_time first, next; /* first sent; due again */
	paxos_session_done_fn done;
	void *arg;
	uint8_t flags;
	bool finished; /* completed, waiting for those before it to leave the ring */
	bool gap;      /* the learner saw it come before its predecessor: send once that is done */
};

struct paxos_session {
	struct paxos_node *n;
	struct paxos_session *next_on_node;
	struct paxos_session_options o;
	uint64_t client, next_seq;
	struct session_slot *ring;
	uint32_t head, count;
	struct event *timer;
};

/* ---- the learner's side ---- */

int node_sessions_enable(struct paxos_node *n, uint32_t max_clients)
{
	if (n->sessions.table)
		return PAXOS_OK;
	if (n->cfg.learner_merge) {
		node_set_error(n, "sessions: not with learner-merge");
		return PAXOS_E_INVALID;
	}
	if (max_clients > PAXOS_SESSION_CLIENTS_MAX) {
		node_set_error(n, "sessions: at most %u clients", PAXOS_SESSION_CLIENTS_MAX);
		return PAXOS_E_INVALID;
	}
	n->sessions.table = paxos_session_table_new(max_clients);
	if (!n->sessions.table) {
		node_set_error(n, "sessions: out of memory");
		return PAXOS_E_NOMEM;
	}
	return PAXOS_OK;
}

int paxos_node_enable_sessions(struct paxos_node *n, uint32_t max_clients)
{
	if (!n)
		return PAXOS_E_INVALID;
	if (n->learner.core) {
		node_set_error(n, "sessions: enable them before adding the learner or proposer");
		return PAXOS_E_INVALID;
	}
	return node_sessions_enable(n, max_clients);
}

struct paxos_session_table *paxos_node_session_table(struct paxos_node *n)
{
	return n ? n->sessions.table : NULL;
}

bool paxos_node_delivery_session(const struct paxos_node *n, uint64_t *client, uint64_t *seq)
{
	if (!n || !n->sessions.delivering)
		return false;
	if (client)
		*client = n->sessions.client;
	if (seq)
		*seq = n->sessions.seq;
	return true;
}

void paxos_node_on_instance_end(struct paxos_node *n, paxos_instance_end_fn done, void *arg)
{
	n->sessions.instance_delivered = done;
	n->sessions.instance_delivered_arg = arg;
}

static struct session_slot *slot_at(struct paxos_session *s, uint32_t i)
{
	return &s->ring[(s->head + i) % s->o.window];
}

static uint64_t base_of(const struct paxos_session *s)
{
	for (uint32_t i = 0; i < s->count; i++) {
		const struct session_slot *x = &s->ring[(s->head + i) % s->o.window];
		if (!x->finished)
			return x->seq;
	}
	return s->next_seq;
}

static void send_slot(struct paxos_session *s, struct session_slot *x, paxos_time now)
{
	struct paxos_node *n = s->n;
	x->gap = false;
	if (n->submit.held_until && now < n->submit.held_until) {
		x->next = n->submit.held_until; /* the leader would drop it */
		return;
	}
	struct paxos_session_header h = {
	    .client = s->client, .seq = x->seq, .base = base_of(s), .flags = x->flags};
	uint8_t head[PAXOS_SESSION_HEADER_MAX];
	size_t hl = paxos_session_header_encode(&h, head, sizeof(head));
	uint8_t *start = x->buf + PAXOS_SESSION_HEADER_MAX - hl;
	memcpy(start, head, hl);
	struct paxos_message m = {.type = PAXOS_MSG_CLIENT_VALUE};
	m.u.client_value.value.data = start;
	m.u.client_value.value.len = (uint32_t)(hl + x->len);
	node_emit(&n->net.out[PAXOS_ROLE_CLIENT], PAXOS_GROUP_SUBMIT, &m);
	x->next = now + (paxos_time)s->o.resubmit_ms * 1000;
}

/* Completes x once; then the finished ones at the head leave the ring, and the values the
 * learner saw too early go again now that what they waited for is done. */
static void finish(struct paxos_session *s, struct session_slot *x, int status, paxos_iid iid)
{
	if (x->finished)
		return;
	x->finished = true;
	uint64_t seq = x->seq;
	paxos_session_done_fn done = x->done;
	void *arg = x->arg;
	while (s->count && slot_at(s, 0)->finished) {
		s->head = (s->head + 1) % s->o.window;
		s->count--;
	}
	paxos_time now = paxos_now();
	for (uint32_t i = 0; i < s->count; i++)
		if (slot_at(s, i)->gap)
			send_slot(s, slot_at(s, i), now);
	if (done)
		done(arg, seq, status, iid);
}

static struct session_slot *slot_of_seq(struct paxos_session *s, uint64_t seq)
{
	if (!s->count || seq < slot_at(s, 0)->seq)
		return NULL;
	uint64_t i = seq - slot_at(s, 0)->seq;
	return i < s->count ? slot_at(s, (uint32_t)i) : NULL;
}

/* The node's learner saw value h of one of its own sessions in instance iid. */
static void own_value(struct paxos_node *n, const struct paxos_session_header *h,
		      enum paxos_session_verdict v, paxos_iid iid)
{
	struct paxos_session *s = n->sessions.list;
	while (s && s->client != h->client)
		s = s->next_on_node;
	struct session_slot *x = s ? slot_of_seq(s, h->seq) : NULL;
	if (!x || x->finished)
		return;
	if (v == PAXOS_SESSION_GAP) {
		x->gap = true;
		return;
	}
	/* A duplicate shows it was chosen before: name that instance when the table knows it. */
	uint64_t last;
	paxos_iid at;
	if (v == PAXOS_SESSION_DUPLICATE &&
	    paxos_session_table_last(n->sessions.table, h->client, &last, &at) && last == h->seq)
		iid = at;
	finish(s, x, PAXOS_OK, iid);
}

bool node_session_value(struct paxos_node *n, paxos_iid iid, uint32_t position,
			const struct paxos_value *v)
{
	struct paxos_session_header h;
	size_t hl;
	if (paxos_session_header_decode(v->data, v->len, &h, &hl) != 1)
		return false; /* plain */
	enum paxos_session_verdict verdict = paxos_session_table_apply(n->sessions.table, &h, iid);
	if (verdict == PAXOS_SESSION_APPLY && !(h.flags & PAXOS_SESSION_NOOP) &&
	    n->learner.app.deliver) {
		struct paxos_value app = {.data = (const uint8_t *)v->data + hl,
					  .len = (uint32_t)(v->len - hl)};
		n->sessions.delivering = true;
		n->sessions.client = h.client;
		n->sessions.seq = h.seq;
		n->role_counters[PAXOS_ROLE_LEARNER].values_delivered++;
		n->learner.app.deliver(n->learner.app.deliver_arg, iid, position, &app);
		n->sessions.delivering = false;
	}
	if (n->sessions.list)
		own_value(n, &h, verdict, iid);
	return true;
}

/* ---- barriers ---- */

static void barrier_fire(struct paxos_node *n, struct node_barrier *b, int status, paxos_iid iid)
{
	paxos_barrier_fn done = b->done;
	void *arg = b->arg;
	*b = (struct node_barrier){0};
	n->sessions.barriers_waiting--;
	done(arg, status, iid);
}

static void barrier_chosen(void *arg, uint64_t seq, int status, paxos_iid iid)
{
	(void)seq;
	struct node_barrier *b = arg;
	struct paxos_node *n = b->node;
	if (status != PAXOS_OK) {
		barrier_fire(n, b, status, 0);
		return;
	}
	paxos_iid seen = paxos_learner_highest_seen(n->learner.core);
	b->target = seen > iid ? seen : iid;
	b->chosen = true; /* fired at the end of an instance (node_sessions_instance_end) */
}

void node_sessions_instance_end(struct paxos_node *n, paxos_iid iid)
{
	if (n->sessions.instance_delivered)
		n->sessions.instance_delivered(n->sessions.instance_delivered_arg, iid);
	for (uint32_t i = 0; n->sessions.barriers_waiting && i < NODE_BARRIERS; i++) {
		struct node_barrier *b = &n->sessions.barriers[i];
		if (b->done && b->chosen && b->target <= iid)
			barrier_fire(n, b, PAXOS_OK, iid);
	}
}

int paxos_node_barrier(struct paxos_node *n, paxos_barrier_fn done, void *arg)
{
	if (!n)
		return PAXOS_E_INVALID;
	if (!done || !n->learner.core) {
		node_set_error(n, "paxos_node_barrier: %s",
			       done ? "needs a learner on the node" : "no callback");
		return PAXOS_E_INVALID;
	}
	if (n->cfg.learner_merge) {
		node_set_error(n, "paxos_node_barrier: sessions do not work with learner-merge");
		return PAXOS_E_INVALID;
	}
	if (!n->sessions.own) {
		struct paxos_session_options o;
		paxos_session_options_default(&o);
		o.window = NODE_BARRIERS;
		if (!(n->sessions.own = paxos_session_new(n, &o)))
			return PAXOS_E_NOMEM; /* the rest was checked: memory */
	}
	struct node_barrier *b = NULL;
	for (uint32_t i = 0; i < NODE_BARRIERS && !b; i++)
		if (!n->sessions.barriers[i].done)
			b = &n->sessions.barriers[i];
	if (!b) {
		node_set_error(n, "paxos_node_barrier: %u barriers wait already", NODE_BARRIERS);
		return PAXOS_E_FULL;
	}
	*b = (struct node_barrier){.node = n, .done = done, .arg = arg};
	int rc = node_session_submit(n->sessions.own, NULL, 0, PAXOS_SESSION_NOOP, barrier_chosen,
				     b, NULL);
	if (rc != PAXOS_OK) {
		*b = (struct node_barrier){0};
		return rc;
	}
	n->sessions.barriers_waiting++;
	return PAXOS_OK;
}

/* ---- the submitter's side ---- */

void paxos_session_options_default(struct paxos_session_options *o)
{
	*o = (struct paxos_session_options){
	    .client = 0, .window = 16, .resubmit_ms = 200, .timeout_ms = 10000};
}

static uint64_t random_client(void)
{
	uint64_t id = 0;
	while (id == 0) {
		if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id)) {
			struct timespec t;
			clock_gettime(CLOCK_REALTIME, &t);
			id = ((uint64_t)t.tv_sec * 1000000007u) ^ (uint64_t)t.tv_nsec ^
			     ((uint64_t)getpid() << 40) ^ paxos_now();
		}
	}
	return id;
}

static void on_session_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct paxos_session *s = arg;
	paxos_time now = paxos_now();
	uint64_t timeout = (uint64_t)s->o.timeout_ms * 1000;
	/* Timeouts go in sequence order, as the values were first sent. */
	while (timeout && s->count && now >= slot_at(s, 0)->first + timeout)
		finish(s, slot_at(s, 0), PAXOS_E_TIMEOUT, 0);
	for (uint32_t i = 0; i < s->count; i++) {
		struct session_slot *x = slot_at(s, i);
		if (!x->finished && now >= x->next)
			send_slot(s, x, now);
	}
}

struct paxos_session *paxos_session_new(struct paxos_node *n,
					const struct paxos_session_options *opt)
{
	if (!n)
		return NULL;
	struct paxos_session_options o;
	if (opt)
		o = *opt;
	else
		paxos_session_options_default(&o);
	if (!n->learner.core) {
		node_set_error(n, "paxos_session_new: the node needs a learner to see its values "
				  "chosen: add one first");
		return NULL;
	}
	if (o.window < 1 || o.window > 1024 || o.resubmit_ms == 0) {
		node_set_error(n,
			       "paxos_session_new: window must be 1..1024 and resubmit-ms above 0");
		return NULL;
	}
	if (node_sessions_enable(n, 0) != PAXOS_OK)
		return NULL;
	struct paxos_session *s = calloc(1, sizeof(*s));
	if (s)
		s->ring = calloc(o.window, sizeof(*s->ring));
	uint32_t tick = o.resubmit_ms / 4 ? o.resubmit_ms / 4 : 1;
	struct timeval tv = {tick / 1000, (tick % 1000) * 1000};
	if (s && s->ring)
		s->timer = event_new(n->base, -1, EV_PERSIST, on_session_timer, s);
	if (!s || !s->ring || !s->timer || event_add(s->timer, &tv) != 0) {
		node_set_error(n, "paxos_session_new: out of memory");
		if (s && s->timer)
			event_free(s->timer);
		if (s)
			free(s->ring);
		free(s);
		return NULL;
	}
	s->n = n;
	s->o = o;
	s->client = o.client ? o.client : random_client();
	s->next_seq = 1;
	s->next_on_node = n->sessions.list;
	n->sessions.list = s;
	return s;
}

static void session_destroy(struct paxos_session *s)
{
	event_free(s->timer);
	for (uint32_t i = 0; i < s->o.window; i++)
		free(s->ring[i].buf);
	free(s->ring);
	free(s);
}

void paxos_session_free(struct paxos_session *s)
{
	if (!s)
		return;
	struct paxos_session **p = &s->n->sessions.list;
	while (*p && *p != s)
		p = &(*p)->next_on_node;
	if (*p)
		*p = s->next_on_node;
	if (s->n->sessions.own == s)
		s->n->sessions.own = NULL;
	session_destroy(s);
}

void node_sessions_free(struct paxos_node *n)
{
	while (n->sessions.list) {
		struct paxos_session *s = n->sessions.list;
		n->sessions.list = s->next_on_node;
		session_destroy(s);
	}
	n->sessions.own = NULL;
	paxos_session_table_free(n->sessions.table);
	n->sessions.table = NULL;
}

int node_session_submit(struct paxos_session *s, const void *value, size_t len, uint8_t flags,
			paxos_session_done_fn done, void *arg, uint64_t *seq)
{
	struct paxos_node *n = s->n;
	if (!value && len) {
		node_set_error(n, "paxos_session_submit: value is NULL");
		return PAXOS_E_INVALID;
	}
	if (len + PAXOS_SESSION_HEADER_MAX > n->max_value) {
		node_set_error(n,
			       "paxos_session_submit: value of %zu bytes exceeds the maximum of %u "
			       "bytes less the session header's %u",
			       len, n->max_value, PAXOS_SESSION_HEADER_MAX);
		return PAXOS_E_TOO_BIG;
	}
	paxos_time now = paxos_now();
	if (n->submit.held_until && now < n->submit.held_until) {
		n->net.counters.submits_refused++;
		node_set_error(n, "paxos_session_submit: the leader is full; submit again later");
		return PAXOS_E_FULL;
	}
	if (s->count == s->o.window) {
		node_set_error(n, "paxos_session_submit: %u submissions in flight (the window)",
			       s->o.window);
		return PAXOS_E_FULL;
	}
	struct session_slot *x = slot_at(s, s->count);
	size_t need = PAXOS_SESSION_HEADER_MAX + len;
	if (need > x->cap) { /* grows to the largest value seen, then is reused */
		uint8_t *b = realloc(x->buf, need);
		if (!b) {
			node_set_error(n, "paxos_session_submit: out of memory");
			return PAXOS_E_NOMEM;
		}
		x->buf = b;
		x->cap = need;
	}
	if (len)
		memcpy(x->buf + PAXOS_SESSION_HEADER_MAX, value, len);
	x->len = len;
	x->seq = s->next_seq++;
	x->first = now;
	x->done = done;
	x->arg = arg;
	x->flags = flags;
	x->finished = x->gap = false;
	s->count++;
	if (seq)
		*seq = x->seq;
	send_slot(s, x, now);
	return PAXOS_OK;
}

int paxos_session_submit(struct paxos_session *s, const void *value, size_t len,
			 paxos_session_done_fn done, void *arg, uint64_t *seq)
{
	if (!s)
		return PAXOS_E_INVALID;
	return node_session_submit(s, value, len, 0, done, arg, seq);
}

void paxos_session_resend(struct paxos_session *s)
{
	if (!s)
		return;
	paxos_time now = paxos_now();
	for (uint32_t i = 0; i < s->count; i++)
		if (!slot_at(s, i)->finished)
			send_slot(s, slot_at(s, i), now);
}

uint64_t paxos_session_client(const struct paxos_session *s)
{
	return s ? s->client : 0;
}

uint32_t paxos_session_in_flight(const struct paxos_session *s)
{
	uint32_t k = 0;
	for (uint32_t i = 0; s && i < s->count; i++)
		k += !s->ring[(s->head + i) % s->o.window].finished;
	return k;
}

void node_sessions_new_leader(struct paxos_node *n)
{
	for (struct paxos_session *s = n->sessions.list; s; s = s->next_on_node)
		paxos_session_resend(s);
}

void node_sessions_refused(struct paxos_node *n)
{
	for (struct paxos_session *s = n->sessions.list; s; s = s->next_on_node)
		for (uint32_t i = 0; i < s->count; i++)
			if (slot_at(s, i)->next < n->submit.held_until)
				slot_at(s, i)->next = n->submit.held_until;
}
