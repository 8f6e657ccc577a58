/* SPDX-License-Identifier: BSD-3-Clause */
/* The simulation's invariant checker (see checker.h). */
#include "checker.h"

#include "batch.h"

#include <paxos/membership.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALUE_HEAD 7u /* "v00042:" */
#define VALUE_TAIL_MAX 40u

uint32_t value_encode(uint32_t id, uint8_t *buf)
{
	char head[VALUE_HEAD + 1];
	snprintf(head, sizeof(head), "v%05u:", (unsigned)(id % 100000u));
	memcpy(buf, head, VALUE_HEAD);
	/* Different lengths, so a value cut short or padded out is caught too. */
	uint32_t tail = (id * 7u) % VALUE_TAIL_MAX;
	for (uint32_t k = 0; k < tail; k++)
		buf[VALUE_HEAD + k] = (uint8_t)('a' + (id + k) % 26);
	return VALUE_HEAD + tail;
}

int64_t value_decode(const struct paxos_value *v, uint32_t values)
{
	if (!v || v->len < VALUE_HEAD || v->len > SIM_MAX_VALUE || !v->data || v->data[0] != 'v' ||
	    v->data[VALUE_HEAD - 1] != ':')
		return -1;
	uint32_t id = 0;
	for (uint32_t k = 1; k < VALUE_HEAD - 1; k++) {
		if (v->data[k] < '0' || v->data[k] > '9')
			return -1;
		id = id * 10 + (uint32_t)(v->data[k] - '0');
	}
	if (id >= values)
		return -1;
	uint8_t expect[SIM_MAX_VALUE];
	uint32_t len = value_encode(id, expect);
	if (len != v->len || memcmp(expect, v->data, len) != 0)
		return -1;
	return id;
}

int checker_init(struct checker *c, uint32_t values, uint32_t views, uint32_t proposers)
{
	memset(c, 0, sizeof(*c));
	if (views > CHECKER_MAX_VIEWS || proposers == 0 || proposers > SIM_MAX_PROPOSERS)
		return -1;
	c->values = values;
	c->view_count = views;
	c->proposers = proposers;
	c->submitted = calloc(values, sizeof(*c->submitted));
	c->received = calloc((size_t)values * proposers, sizeof(*c->received));
	if (!c->submitted || !c->received)
		return -1;
	for (uint32_t i = 0; i < views; i++) {
		c->views[i].next = 1;
		c->views[i].count = calloc(values, sizeof(uint32_t));
		c->views[i].excused = calloc(values, 1);
		if (!c->views[i].count || !c->views[i].excused)
			return -1;
	}
	return 0;
}

void checker_destroy(struct checker *c)
{
	free(c->submitted);
	free(c->received);
	for (uint32_t g = 0; g < c->log_count; g++)
		free(c->logs[g].chosen);
	for (uint32_t i = 0; i < CHECKER_MAX_VIEWS; i++) {
		free(c->views[i].count);
		free(c->views[i].excused);
	}
	for (uint32_t a = 0; a < SIM_MAX_ACCEPTORS; a++)
		free(c->promised[a]);
	memset(c, 0, sizeof(*c));
}

void checker_fail(struct checker *c, enum sim_violation v, const char *fmt, ...)
{
	if (c->violation != SIM_OK)
		return;
	c->violation = v;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
}

/* Grows a zeroed array of elem-sized entries so that index i fits. */
static int grow(void **array, size_t *cap, size_t i, size_t elem)
{
	if (i < *cap)
		return 0;
	size_t n = *cap ? *cap : 256;
	while (n <= i)
		n *= 2;
	uint8_t *a = realloc(*array, n * elem);
	if (!a)
		return -1;
	memset(a + *cap * elem, 0, (n - *cap) * elem);
	*array = a;
	*cap = n;
	return 0;
}

void checker_submitted(struct checker *c, uint32_t id)
{
	if (id < c->values)
		c->submitted[id]++;
}

void checker_received(struct checker *c, uint32_t proposer, const struct paxos_value *v)
{
	int64_t id = value_decode(v, c->values);
	if (id >= 0 && proposer < c->proposers)
		c->received[(size_t)proposer * c->values + (size_t)id]++;
}

void checker_led(struct checker *c, uint32_t proposer)
{
	if (proposer < c->proposers)
		c->led |= 1u << proposer;
}

/* The most copies of value id one proposer that led received: each proposer drops from its
 * list what the others got delivered, so no more may be delivered. */
static uint32_t received_bound(const struct checker *c, int64_t id)
{
	uint32_t most = 0;
	for (uint32_t p = 0; p < c->proposers; p++)
		if ((c->led & (1u << p)) && c->received[(size_t)p * c->values + (size_t)id] > most)
			most = c->received[(size_t)p * c->values + (size_t)id];
	return most;
}

static void printable(const struct paxos_value *v, char *buf, size_t cap)
{
	size_t n = 0;
	for (uint32_t k = 0; k < v->len && n + 5 < cap; k++) {
		uint8_t ch = v->data[k];
		n +=
		    (size_t)snprintf(buf + n, cap - n, ch >= 32 && ch < 127 ? "%c" : "\\x%02x", ch);
	}
	buf[n] = 0;
}

/* The log of generation (made when first named), or NULL past CHECKER_LOGS. */
static struct checker_log *log_of(struct checker *c, uint64_t generation)
{
	for (uint32_t g = 0; g < c->log_count; g++)
		if (c->logs[g].generation == generation)
			return &c->logs[g];
	if (c->log_count == CHECKER_LOGS) {
		checker_fail(c, SIM_V_INTERNAL, "more than %u logs", CHECKER_LOGS);
		return NULL;
	}
	c->logs[c->log_count].generation = generation;
	return &c->logs[c->log_count++];
}

const struct checker_chosen *checker_chosen_in(const struct checker *c, uint64_t generation,
					       paxos_iid iid)
{
	for (uint32_t g = 0; g < c->log_count; g++) {
		const struct checker_log *log = &c->logs[g];
		if (log->generation == generation)
			return iid < log->cap && log->chosen[iid].known ? &log->chosen[iid] : NULL;
	}
	return NULL;
}

/* The instance's value must be the one every other learner delivered for it in that log. */
static void check_agreement(struct checker *c, uint32_t view, uint64_t generation, paxos_iid iid,
			    const struct paxos_value *v, paxos_time now)
{
	struct checker_log *log = log_of(c, generation);
	if (!log)
		return;
	if (iid > (1u << 24) ||
	    grow((void **)&log->chosen, &log->cap, (size_t)iid, sizeof(*log->chosen)) != 0) {
		checker_fail(c, SIM_V_INTERNAL, "instance %" PRIu64 " out of the checker's range",
			     iid);
		return;
	}
	struct checker_chosen *ch = &log->chosen[iid];
	if (!ch->known) {
		ch->known = true;
		ch->len = v->len;
		memcpy(ch->bytes, v->data, v->len);
		return;
	}
	if (ch->len == v->len && memcmp(ch->bytes, v->data, v->len) == 0)
		return;
	char first[128], now_v[128];
	struct paxos_value fv = {ch->bytes, ch->len};
	printable(&fv, first, sizeof(first));
	printable(v, now_v, sizeof(now_v));
	checker_fail(c, SIM_V_AGREEMENT,
		     "t=%" PRIu64 "us: learner view %u delivered \"%s\" in instance %" PRIu64
		     " of log %" PRIu64 ", another learner delivered \"%s\"",
		     now, view, now_v, iid, generation, first);
}

void checker_learned(struct checker *c, uint32_t acceptor, uint64_t generation, paxos_iid iid,
		     const struct paxos_value *v, paxos_time now)
{
	/* views past the learners */
	check_agreement(c, CHECKER_MAX_VIEWS + acceptor, generation, iid, v, now);
}

void checker_view_heard_log(struct checker *c, uint32_t view, uint64_t generation)
{
	if (view >= c->view_count)
		return;
	struct checker_view *w = &c->views[view];
	if (generation <= w->generation || w->next != 1 || w->distinct != 0)
		return;
	w->generation = generation;
	for (uint32_t id = 0; id < c->values; id++)
		if (c->submitted[id])
			w->excused[id] = 1;
}

void checker_view_new_log(struct checker *c, uint32_t view, uint64_t generation, paxos_time now)
{
	if (view >= c->view_count)
		return;
	struct checker_view *w = &c->views[view];
	if (generation <= w->generation) {
		checker_fail(c, SIM_V_ORDER,
			     "t=%" PRIu64 "us: view %u was told of log %" PRIu64
			     " while it delivered log %" PRIu64,
			     now, view, generation, w->generation);
		return;
	}
	w->generation = generation;
	w->next = 1;
	for (uint32_t id = 0; id < c->values; id++)
		if (c->submitted[id] && w->count[id] == 0)
			w->excused[id] = 1;
}

static void delivered_one(struct checker *c, uint32_t view, paxos_iid iid,
			  const struct paxos_value *v, paxos_time now);

void checker_delivered(struct checker *c, uint32_t view, uint64_t generation, paxos_iid iid,
		       const struct paxos_value *v, paxos_time now)
{
	if (view >= c->view_count) {
		checker_fail(c, SIM_V_INTERNAL, "delivery to unknown view %u", view);
		return;
	}
	struct checker_view *w = &c->views[view];
	if (v->len > SIM_MAX_VALUE || (v->len && !v->data)) {
		checker_fail(c, SIM_V_VALIDITY,
			     "t=%" PRIu64 "us: view %u delivered a malformed value in %" PRIu64,
			     now, view, iid);
		return;
	}
	checker_view_heard_log(c, view, generation);
	if (generation != w->generation)
		checker_fail(c, SIM_V_ORDER,
			     "t=%" PRIu64 "us: view %u delivered instance %" PRIu64
			     " of log %" PRIu64 " while it delivers log %" PRIu64,
			     now, view, iid, generation, w->generation);
	if (iid != w->next)
		checker_fail(c, SIM_V_ORDER,
			     "t=%" PRIu64 "us: view %u delivered instance %" PRIu64
			     " while %" PRIu64 " was next",
			     now, view, iid, w->next);
	w->next = iid + 1;
	check_agreement(c, view, generation, iid, v, now);
	if (paxos_batch_is_skip(v)) { /* learner-merge: no client value there */
		if (!c->skips)
			checker_fail(c, SIM_V_VALIDITY,
				     "t=%" PRIu64
				     "us: view %u delivered a skip in instance %" PRIu64
				     ", but no proposer proposes skips",
				     now, view, iid);
		return;
	}
	if (paxos_membership_is_command(v)) { /* for the library, no client value */
		if (!c->reconfig)
			checker_fail(c, SIM_V_VALIDITY,
				     "t=%" PRIu64 "us: view %u delivered a membership command in "
				     "instance %" PRIu64 ", but no change was asked for",
				     now, view, iid);
		return;
	}
	uint32_t values;
	if (paxos_batch_count(v, &values) != PAXOS_OK) {
		char text[128];
		printable(v, text, sizeof(text));
		checker_fail(c, SIM_V_VALIDITY,
			     "t=%" PRIu64 "us: view %u delivered \"%s\" in instance %" PRIu64
			     ", which is no frame of client values",
			     now, view, text, iid);
		return;
	}
	struct paxos_batch_iter it;
	struct paxos_value one;
	paxos_batch_iter_init(&it, v);
	while (paxos_batch_next(&it, &one) == 1)
		delivered_one(c, view, iid, &one, now);
}

int64_t frame_first_id(const struct paxos_value *frame, uint32_t values)
{
	struct paxos_batch_iter it;
	struct paxos_value one;
	paxos_batch_iter_init(&it, frame);
	return paxos_batch_next(&it, &one) == 1 ? value_decode(&one, values) : -1;
}

/* One client value out of a delivered frame: validity and duplicates. */
static void delivered_one(struct checker *c, uint32_t view, paxos_iid iid,
			  const struct paxos_value *v, paxos_time now)
{
	struct checker_view *w = &c->views[view];
	c->deliveries++;
	int64_t id = value_decode(v, c->values);
	if (id < 0 || c->submitted[id] == 0) {
		char text[128];
		printable(v, text, sizeof(text));
		checker_fail(c, SIM_V_VALIDITY,
			     "t=%" PRIu64 "us: view %u delivered \"%s\" in instance %" PRIu64
			     ", which no client submitted",
			     now, view, text, iid);
		return;
	}
	uint32_t n = ++w->count[id];
	if (n == 1)
		w->distinct++;
	else
		c->duplicates++;
	uint32_t bound = c->integrity ? received_bound(c, id) : n;
	if (n > bound)
		checker_fail(c, SIM_V_DUPLICATE,
			     "t=%" PRIu64 "us: view %u delivered value %" PRId64
			     " %u times (instance %" PRIu64
			     ") but no proposer that led received it more than %u times",
			     now, view, id, n, iid, bound);
}

void checker_view_reset(struct checker *c, uint32_t view)
{
	if (view >= c->view_count)
		return;
	struct checker_view *w = &c->views[view];
	w->next = 1;
	w->distinct = 0;
	w->generation = 0;
	memset(w->count, 0, c->values * sizeof(*w->count));
	memset(w->excused, 0, c->values);
}

void checker_view_rewind(struct checker *c, uint32_t view, paxos_iid from)
{
	if (view >= c->view_count || from == 0 || from > c->views[view].next) {
		checker_fail(c, SIM_V_INTERNAL, "view %u cannot rewind to %" PRIu64, view, from);
		return;
	}
	struct checker_view *w = &c->views[view];
	struct checker_log *log = log_of(c, w->generation);
	for (paxos_iid iid = from; log && iid < w->next; iid++) {
		struct paxos_value v = {log->chosen[iid].bytes, log->chosen[iid].len}, one;
		uint32_t n;
		if (paxos_batch_is_skip(&v) || paxos_batch_count(&v, &n) != PAXOS_OK)
			continue;
		struct paxos_batch_iter it;
		paxos_batch_iter_init(&it, &v);
		while (paxos_batch_next(&it, &one) == 1) {
			int64_t id = value_decode(&one, c->values);
			if (id < 0 || w->count[id] == 0)
				continue;
			c->deliveries--;
			if (--w->count[id] == 0)
				w->distinct--;
			else
				c->duplicates--;
		}
	}
	w->next = from;
}

void checker_view_skip(struct checker *c, uint32_t view, paxos_iid first)
{
	if (view < c->view_count && first > c->views[view].next)
		c->views[view].next = first;
}

bool checker_view_complete(const struct checker *c, uint32_t view)
{
	const struct checker_view *w = &c->views[view];
	for (uint32_t id = 0; id < c->values; id++)
		if (c->submitted[id] > 0 && w->count[id] == 0 && !w->excused[id])
			return false;
	return true;
}

static paxos_ballot stored_promise(struct checker *c, struct paxos_storage *st, paxos_iid iid)
{
	struct paxos_record rec;
	int rc = st->ops->get(st, iid, &rec);
	if (rc < 0) {
		checker_fail(c, SIM_V_INTERNAL, "storage get(%" PRIu64 ") failed: %d", iid, rc);
		return 0;
	}
	return rc == 1 ? rec.promised : 0;
}

void checker_promise(struct checker *c, uint32_t acceptor, struct paxos_storage *st, paxos_iid iid,
		     paxos_time now)
{
	if (acceptor >= SIM_MAX_ACCEPTORS || iid == 0 || iid > (1u << 24))
		return;
	if (grow((void **)&c->promised[acceptor], &c->promised_cap[acceptor], (size_t)iid,
		 sizeof(paxos_ballot)) != 0) {
		checker_fail(c, SIM_V_INTERNAL, "out of memory");
		return;
	}
	paxos_ballot now_b = stored_promise(c, st, iid);
	paxos_ballot *seen = &c->promised[acceptor][iid];
	if (now_b < *seen)
		checker_fail(c, SIM_V_PROMISE,
			     "t=%" PRIu64 "us: acceptor %u's promise for instance %" PRIu64
			     " went down from %" PRIu64 " to %" PRIu64,
			     now, acceptor, iid, *seen, now_b);
	else
		*seen = now_b;
}

void checker_forget_promises(struct checker *c, uint32_t acceptor)
{
	if (acceptor < SIM_MAX_ACCEPTORS && c->promised[acceptor])
		memset(c->promised[acceptor], 0,
		       c->promised_cap[acceptor] * sizeof(c->promised[acceptor][0]));
}

void checker_promises_all(struct checker *c, uint32_t acceptor, struct paxos_storage *st,
			  paxos_time now)
{
	if (acceptor >= SIM_MAX_ACCEPTORS)
		return;
	for (size_t iid = 1; iid < c->promised_cap[acceptor]; iid++)
		if (c->promised[acceptor][iid] != 0)
			checker_promise(c, acceptor, st, iid, now);
}
