/* SPDX-License-Identifier: BSD-3-Clause */
#include "merge.h"

#include <stdlib.h>
#include <string.h>

/* A queued record: a value, or the end of an instance (position 1: it ends a segment); a
 * value's bytes follow it. */
enum { RECORD_VALUE, RECORD_INSTANCE_END };

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

/* The merged order takes a value of the partition whose turn it is. */
static void out_value(struct merge *m, paxos_iid iid, uint32_t position,
		      const struct paxos_value *v)
{
	m->out.values = position + 1;
	m->deliver(m->deliver_arg, m->turn, iid, position, v);
}

/* ... and the end of its instance iid, maybe the end of its segment: the next one's turn. */
static void out_instance(struct merge *m, paxos_iid iid, bool ends)
{
	m->out.next[m->turn] = iid + 1;
	m->out.values = 0;
	m->out.in_segment++;
	if (ends) {
		m->out.in_segment = 0;
		m->turn = (m->turn + 1) % m->partitions;
	}
}

/* Delivers whole waiting segments while the partition whose turn it is has one. */
static void drain(struct merge *m)
{
	if (m->draining)
		return; /* a delivery led here again: the outer loop goes on */
	m->draining = true;
	for (struct merge_queue *q = &m->queues[m->turn]; q->segments > 0;
	     q = &m->queues[m->turn]) {
		for (bool ends = false; !ends;) {
			struct record r;
			memcpy(&r, q->buf + q->head, sizeof(r));
			size_t size = record_size(r.len);
			if (r.kind == RECORD_INSTANCE_END) {
				q->head += size;
				m->waiting -= size;
				ends = r.position != 0;
				if (ends)
					q->segments--;
				out_instance(m, r.iid, ends);
				continue;
			}
			struct paxos_value v = {q->buf + q->head + sizeof(r), r.len};
			out_value(m, r.iid, r.position, &v);
			q->head += size;
			m->waiting -= size;
		}
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
	for (uint32_t p = 0; p < partitions; p++)
		m->out.next[p] = 1;
	return PAXOS_OK;
}

void merge_position(const struct merge *m, struct merge_position *pos)
{
	*pos = m->out;
	pos->turn = m->turn;
}

int merge_resume(struct merge *m, const struct merge_position *pos)
{
	bool fresh = m->turn == 0 && m->out.in_segment == 0 && m->out.values == 0;
	for (uint32_t p = 0; p < m->partitions; p++)
		fresh = fresh && m->out.next[p] == 1 && m->queues[p].tail == 0 &&
			m->queues[p].in_segment == 0 && pos->next[p] > 0;
	if (!fresh || pos->turn >= m->partitions || pos->in_segment >= m->segment)
		return PAXOS_E_INVALID;
	m->out = *pos;
	m->turn = pos->turn;
	m->queues[pos->turn].in_segment = pos->in_segment;
	m->resume_partition = pos->turn;
	m->resume_iid = pos->next[pos->turn];
	m->resume_skip = pos->values;
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
	if (m->resume_skip && partition == m->resume_partition && iid == m->resume_iid &&
	    position < m->resume_skip)
		return PAXOS_OK; /* went out before the position merge_resume started from */
	if (m->turn == partition && queue_empty(q) && !m->draining) {
		out_value(m, iid, position, v);
		return PAXOS_OK;
	}
	return queue_push(m, q, RECORD_VALUE, iid, position, v) ? PAXOS_OK : PAXOS_E_NOMEM;
}

int merge_instance(struct merge *m, uint32_t partition, paxos_iid iid, bool skip)
{
	if (partition >= m->partitions)
		return PAXOS_E_INVALID;
	struct merge_queue *q = &m->queues[partition];
	if (m->resume_skip && iid == m->resume_iid && partition == m->resume_partition)
		m->resume_skip = 0;
	bool ends = skip || ++q->in_segment >= m->segment;
	if (ends)
		q->in_segment = 0;
	if (m->turn == partition && queue_empty(q) && !m->draining) {
		out_instance(m, iid, ends); /* its instance went out as it came */
	} else {
		if (!queue_push(m, q, RECORD_INSTANCE_END, iid, ends, NULL))
			return PAXOS_E_NOMEM;
		q->segments += ends;
	}
	if (ends)
		drain(m);
	return PAXOS_OK;
}
