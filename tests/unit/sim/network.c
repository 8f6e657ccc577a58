/* SPDX-License-Identifier: BSD-3-Clause */
/* Message pool and event queue of the simulated network (see network.h). */
#include "network.h"

#include <stdlib.h>
#include <string.h>

#define POOL_INITIAL 1024u
#define QUEUE_INITIAL 4096u

void pool_init(struct sim_pool *p)
{
	memset(p, 0, sizeof(*p));
}

void pool_destroy(struct sim_pool *p)
{
	free(p->msgs);
	free(p->free);
	memset(p, 0, sizeof(*p));
}

static int pool_grow(struct sim_pool *p)
{
	uint32_t cap = p->cap ? p->cap * 2 : POOL_INITIAL;
	struct sim_msg *msgs = realloc(p->msgs, (size_t)cap * sizeof(*msgs));
	if (!msgs)
		return -1;
	p->msgs = msgs;
	uint32_t *fr = realloc(p->free, (size_t)cap * sizeof(*fr));
	if (!fr)
		return -1;
	p->free = fr;
	/* Highest first, so slots are handed out in increasing order. */
	for (uint32_t i = cap; i-- > p->cap;)
		p->free[p->free_count++] = i;
	p->cap = cap;
	return 0;
}

void msg_rebind_value(struct sim_msg *s)
{
	struct paxos_value *v = paxos_msg_value(&s->m);
	if (v)
		v->data = s->value;
}

uint32_t pool_put(struct sim_pool *p, const struct paxos_message *m, uint32_t sender)
{
	struct paxos_message copy = *m;
	struct paxos_value *v = paxos_msg_value(&copy);
	if (v && (v->len > SIM_MAX_VALUE || (v->len && !v->data)))
		return UINT32_MAX;
	if (p->free_count == 0 && pool_grow(p) != 0)
		return UINT32_MAX;
	uint32_t i = p->free[--p->free_count];
	struct sim_msg *s = &p->msgs[i];
	s->m = copy;
	s->refs = 0;
	s->sender = sender;
	if (v && v->len)
		memcpy(s->value, v->data, v->len);
	msg_rebind_value(s);
	return i;
}

void pool_take(struct sim_pool *p, uint32_t i, struct sim_msg *out)
{
	*out = p->msgs[i];
	msg_rebind_value(out);
	pool_release(p, i);
}

void pool_release(struct sim_pool *p, uint32_t i)
{
	struct sim_msg *s = &p->msgs[i];
	if (s->refs > 0)
		s->refs--;
	if (s->refs == 0)
		p->free[p->free_count++] = i;
}

void queue_init(struct sim_queue *q)
{
	memset(q, 0, sizeof(*q));
}

void queue_destroy(struct sim_queue *q)
{
	free(q->heap);
	memset(q, 0, sizeof(*q));
}

static bool earlier(const struct sim_event *a, const struct sim_event *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

int queue_push(struct sim_queue *q, paxos_time at, uint32_t kind, uint32_t target, uint32_t arg)
{
	if (q->count == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : QUEUE_INITIAL;
		struct sim_event *h = realloc(q->heap, cap * sizeof(*h));
		if (!h)
			return -1;
		q->heap = h;
		q->cap = cap;
	}
	struct sim_event e = {at, q->seq++, kind, target, arg};
	size_t i = q->count++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!earlier(&e, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = e;
	return 0;
}

bool queue_pop(struct sim_queue *q, struct sim_event *e)
{
	if (q->count == 0)
		return false;
	*e = q->heap[0];
	struct sim_event last = q->heap[--q->count];
	size_t i = 0;
	for (;;) {
		size_t child = 2 * i + 1;
		if (child >= q->count)
			break;
		if (child + 1 < q->count && earlier(&q->heap[child + 1], &q->heap[child]))
			child++;
		if (!earlier(&q->heap[child], &last))
			break;
		q->heap[i] = q->heap[child];
		i = child;
	}
	if (q->count > 0)
		q->heap[i] = last;
	return true;
}
