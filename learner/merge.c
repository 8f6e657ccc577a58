/* SPDX-License-Identifier: BSD-3-Clause */
#include "merge.h"

#include <stdlib.h>
#include <string.h>

/* A queued record: a value, or the end of a segment; a value's bytes follow it. */
enum { RECORD_VALUE, RECORD_SEGMENT_END };

struct record {
	uint32_t kind;
	uint32_t position;
	paxos_iid iid;
	uint32_t len;
};

/* Records start at multiples of this, so that each can be read in place. */
#define RECORD_ALIGN 8u

static size_t record_size(uint32_t len)
{
	size_t n = sizeof(struct record) + len;
	return (n + RECORD_ALIGN - 1) & ~(size_t)(RECORD_ALIGN - 1);
}

static bool queue_empty(const struct merge_queue *q)
{
	return q->head == q->tail;
}

static bool queue_push(struct merge *m, struct merge_queue *q, uint32_t kind, paxos_iid iid,
		       uint32_t position, const struct paxos_value *v)
{
	uint32_t len = v ? v->len : 0;
	size_t need = record_size(len);
	if (queue_empty(q))
		q->head = q->tail = 0;
	if (q->tail + need > q->cap) {
		if (q->head > 0) { /* what waits moves to the front first */
			memmove(q->buf, q->buf + q->head, q->tail - q->head);
			q->tail -= q->head;
			q->head = 0;
		}
		size_t cap = q->cap ? q->cap : 65536;
		while (q->tail + need > cap)
			cap *= 2;
		if (cap != q->cap) {
			uint8_t *buf = realloc(q->buf, cap);
			if (!buf)
				return false;
			q->buf = buf;
			q->cap = cap;
		}
	}
	struct record r = {kind, position, iid, len};
	memcpy(q->buf + q->tail, &r, sizeof(r));
	if (len)
		memcpy(q->buf + q->tail + sizeof(r), v->data, len);
	q->tail += need;
	m->waiting += need;
	return true;
}

static void next_turn(struct merge *m)
{
	m->turn = (m->turn + 1) % m->partitions;
}

/* Delivers whole waiting segments while the partition whose turn it is has one. */
static void drain(struct merge *m)
{
	if (m->draining)
		return; /* a delivery led here again: the outer loop goes on */
	m->draining = true;
	for (struct merge_queue *q = &m->queues[m->turn]; q->segments > 0;
	     q = &m->queues[m->turn]) {
		for (;;) {
			struct record r;
			memcpy(&r, q->buf + q->head, sizeof(r));
			size_t size = record_size(r.len);
			if (r.kind == RECORD_SEGMENT_END) {
				q->head += size;
				m->waiting -= size;
				break;
			}
			struct paxos_value v = {q->buf + q->head + sizeof(r), r.len};
			m->deliver(m->deliver_arg, m->turn, r.iid, r.position, &v);
			q->head += size;
			m->waiting -= size;
		}
		q->segments--;
		next_turn(m);
	}
	m->draining = false;
}

int merge_init(struct merge *m, uint32_t partitions, uint32_t segment, merge_deliver_fn deliver,
	       void *arg)
{
	memset(m, 0, sizeof(*m));
	if (partitions == 0 || partitions > PAXOS_MAX_PARTITIONS || segment == 0 || !deliver)
		return PAXOS_E_INVALID;
	m->partitions = partitions;
	m->segment = segment;
	m->deliver = deliver;
	m->deliver_arg = arg;
	return PAXOS_OK;
}

void merge_destroy(struct merge *m)
{
	for (uint32_t p = 0; p < PAXOS_MAX_PARTITIONS; p++)
		free(m->queues[p].buf);
	memset(m, 0, sizeof(*m));
}

int merge_value(struct merge *m, uint32_t partition, paxos_iid iid, uint32_t position,
		const struct paxos_value *v)
{
	if (partition >= m->partitions)
		return PAXOS_E_INVALID;
	struct merge_queue *q = &m->queues[partition];
	if (m->turn == partition && queue_empty(q) && !m->draining) {
		m->deliver(m->deliver_arg, partition, iid, position, v);
		return PAXOS_OK;
	}
	return queue_push(m, q, RECORD_VALUE, iid, position, v) ? PAXOS_OK : PAXOS_E_NOMEM;
}

int merge_instance(struct merge *m, uint32_t partition, paxos_iid iid, bool skip)
{
	if (partition >= m->partitions)
		return PAXOS_E_INVALID;
	struct merge_queue *q = &m->queues[partition];
	if (!skip && ++q->in_segment < m->segment)
		return PAXOS_OK;
	q->in_segment = 0;
	if (m->turn == partition && queue_empty(q) && !m->draining) {
		next_turn(m); /* its segment went out as it came */
	} else {
		if (!queue_push(m, q, RECORD_SEGMENT_END, iid, 0, NULL))
			return PAXOS_E_NOMEM;
		q->segments++;
	}
	drain(m);
	return PAXOS_OK;
}
