/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A partitions group (paxos/partitions.h): one node per hosted partition, and for
 * learner-merge the deterministic merge of their deliveries. Each partition's log is cut into
 * segments (merge_segment instances, or fewer up to a skip); round r delivers segment r of
 * partition 0, then of partition 1, and so on. Every learner sees the same logs, so every
 * merging learner cuts the same segments and delivers the same order. What a partition
 * delivers before its turn waits in its queue, copied once into a buffer that grows by
 * doubling (no allocation per value); a partition whose turn it is delivers straight through.
 */
#include <paxos/partitions.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_fields.h"
#include "log_line.h"
#include "node_internal.h"

/* A queued record: a value, or the end of a segment (len unused), then len bytes. */
enum { RECORD_VALUE, RECORD_SEGMENT_END };

struct record {
	uint32_t kind;
	uint32_t position;
	paxos_iid iid;
	uint32_t len;
};

/* Keeps records aligned for struct record. */
#define RECORD_ALIGN 8u

struct merge_queue {
	uint8_t *buf;
	size_t head, tail, cap; /* records in buf[head..tail) */
	uint32_t segments;      /* segment ends queued */
	uint32_t in_segment;    /* instances delivered into the open segment */
};

struct partition_slot {
	struct paxos_partitions *group;
	uint32_t partition;
	struct paxos_node *node;
	struct merge_queue queue;
};

struct paxos_partitions {
	uint32_t count;
	bool merge;
	uint32_t segment; /* merge_segment */
	uint32_t turn;    /* the partition whose segment the merged order takes now */
	bool draining;
	bool stopped; /* merged order lost (trimmed instances): delivers no more */
	paxos_partition_delivered_fn deliver;
	void *deliver_arg;
	paxos_partition_trimmed_fn trimmed;
	void *trimmed_arg;
	uint64_t waiting; /* bytes queued in all partitions */
	char error[256];
	struct partition_slot slots[PAXOS_MAX_PARTITIONS];
};

static void set_error(struct paxos_partitions *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(g->error, sizeof(g->error), fmt, ap);
	va_end(ap);
}

static size_t record_size(uint32_t len)
{
	size_t n = sizeof(struct record) + len;
	return (n + RECORD_ALIGN - 1) & ~(size_t)(RECORD_ALIGN - 1);
}

static bool queue_empty(const struct merge_queue *q)
{
	return q->head == q->tail;
}

/* Appends a record; false when memory ran out. */
static bool queue_push(struct paxos_partitions *g, struct merge_queue *q, uint32_t kind,
		       paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	uint32_t len = v ? v->len : 0;
	size_t need = record_size(len);
	if (q->head == q->tail)
		q->head = q->tail = 0; /* empty: start over at the front */
	if (q->tail + need > q->cap) {
		if (q->head > 0) { /* move what waits to the front first */
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
	g->waiting += need;
	return true;
}

static void next_turn(struct paxos_partitions *g)
{
	g->turn = (g->turn + 1) % g->count;
}

/* Delivers whole queued segments while the partition whose turn it is has one. */
static void drain(struct paxos_partitions *g)
{
	if (g->draining)
		return; /* a delivery callback got here again: the outer loop goes on */
	g->draining = true;
	for (;;) {
		struct partition_slot *s = &g->slots[g->turn];
		struct merge_queue *q = &s->queue;
		if (g->stopped || q->segments == 0)
			break;
		for (;;) {
			struct record r;
			memcpy(&r, q->buf + q->head, sizeof(r));
			size_t size = record_size(r.len);
			if (r.kind == RECORD_SEGMENT_END) {
				q->head += size;
				g->waiting -= size;
				break;
			}
			struct paxos_value v = {q->buf + q->head + sizeof(r), r.len};
			g->deliver(g->deliver_arg, s->partition, r.iid, r.position, &v);
			q->head += size;
			g->waiting -= size;
		}
		q->segments--;
		next_turn(g);
	}
	g->draining = false;
}

static void merge_failed(struct paxos_partitions *g, uint32_t partition)
{
	g->stopped = true;
	set_error(g, "learner-merge: partition %u ran out of memory for values waiting their turn",
		  partition);
	paxos_logf(PAXOS_LOG_ERROR, "paxos: %s", g->error);
}

/* A value of s's partition: straight to the application when it is that partition's turn and
 * nothing of it waits, else queued. */
static void on_value(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	struct partition_slot *s = arg;
	struct paxos_partitions *g = s->group;
	if (!g->merge) {
		g->deliver(g->deliver_arg, s->partition, iid, position, v);
		return;
	}
	if (g->stopped)
		return;
	if (g->turn == s->partition && queue_empty(&s->queue) && !g->draining) {
		g->deliver(g->deliver_arg, s->partition, iid, position, v);
		return;
	}
	if (!queue_push(g, &s->queue, RECORD_VALUE, iid, position, v))
		merge_failed(g, s->partition);
}

/* An instance of s's partition was delivered (values, or a skip): it may end a segment. */
static void on_instance(void *arg, paxos_iid iid, bool skip)
{
	struct partition_slot *s = arg;
	struct paxos_partitions *g = s->group;
	struct merge_queue *q = &s->queue;
	if (g->stopped)
		return;
	if (!skip && ++q->in_segment < g->segment)
		return;
	q->in_segment = 0;
	if (g->turn == s->partition && queue_empty(q) && !g->draining) {
		next_turn(g); /* its segment went out as it came */
		drain(g);
		return;
	}
	if (!queue_push(g, q, RECORD_SEGMENT_END, iid, 0, NULL)) {
		merge_failed(g, s->partition);
		return;
	}
	q->segments++;
	drain(g);
}

static void on_trimmed(void *arg, paxos_iid from, paxos_iid to)
{
	struct partition_slot *s = arg;
	struct paxos_partitions *g = s->group;
	if (g->merge && !g->stopped) {
		g->stopped = true;
		set_error(g,
			  "learner-merge: partition %u's instances %llu..%llu were trimmed before "
			  "this learner merged them: it cannot know the merged order past them and "
			  "delivers no more (trim only what every merging learner delivered)",
			  s->partition, (unsigned long long)from, (unsigned long long)to);
		paxos_logf(PAXOS_LOG_ERROR, "paxos: %s", g->error);
	}
	if (g->trimmed)
		g->trimmed(g->trimmed_arg, s->partition, from, to);
}

struct paxos_partitions *paxos_partitions_new(struct event_base *base,
					      const struct paxos_config *cfg, uint64_t hosted,
					      char *err, size_t errlen)
{
	uint32_t count = paxos_config_partitions(cfg);
	uint64_t all = count >= 64 ? UINT64_MAX : (1ull << count) - 1;
	if (!base || !hosted || (hosted & ~all)) {
		snprintf(err, errlen,
			 "partitions: hosted partitions must be some of 0..%u (paxos.conf "
			 "partitions %u)",
			 count - 1, count);
		return NULL;
	}
	struct paxos_partitions *g = calloc(1, sizeof(*g));
	struct paxos_config *part = paxos_config_new();
	if (!g || !part) {
		snprintf(err, errlen, "partitions: out of memory");
		goto fail;
	}
	g->count = count;
	g->merge = cfg->learner_merge;
	g->segment = cfg->merge_segment ? cfg->merge_segment : 1;
	for (uint32_t p = 0; p < count; p++) {
		struct partition_slot *s = &g->slots[p];
		s->group = g;
		s->partition = p;
		if (!(hosted >> p & 1))
			continue;
		if (paxos_config_partition(cfg, p, part) != PAXOS_OK) {
			snprintf(err, errlen, "partitions: no configuration for partition %u", p);
			goto fail;
		}
		if (!(s->node = paxos_node_new(base, part, err, errlen)))
			goto fail;
	}
	paxos_config_free(part);
	return g;
fail:
	paxos_config_free(part);
	paxos_partitions_free(g);
	return NULL;
}

void paxos_partitions_free(struct paxos_partitions *g)
{
	if (!g)
		return;
	for (uint32_t p = 0; p < PAXOS_MAX_PARTITIONS; p++) {
		paxos_node_free(g->slots[p].node);
		free(g->slots[p].queue.buf);
	}
	free(g);
}

uint32_t paxos_partitions_count(const struct paxos_partitions *g)
{
	return g->count;
}

struct paxos_node *paxos_partitions_node(const struct paxos_partitions *g, uint32_t partition)
{
	return partition < g->count ? g->slots[partition].node : NULL;
}

void paxos_partitions_on_trimmed(struct paxos_partitions *g, paxos_partition_trimmed_fn trimmed,
				 void *arg)
{
	g->trimmed = trimmed;
	g->trimmed_arg = arg;
}

int paxos_partitions_add_learner(struct paxos_partitions *g, paxos_partition_delivered_fn deliver,
				 void *arg)
{
	if (!deliver || g->deliver) {
		set_error(g, deliver ? "partitions: a learner is added already"
				     : "partitions: a learner needs a deliver callback");
		return PAXOS_E_INVALID;
	}
	for (uint32_t p = 0; g->merge && p < g->count; p++)
		if (!g->slots[p].node) {
			set_error(g,
				  "learner-merge: partition %u is not hosted here, and the merged "
				  "order needs every partition (host all %u, or set learner-merge "
				  "no)",
				  p, g->count);
			return PAXOS_E_INVALID;
		}
	g->deliver = deliver;
	g->deliver_arg = arg;
	for (uint32_t p = 0; p < g->count; p++) {
		struct partition_slot *s = &g->slots[p];
		if (!s->node)
			continue;
		paxos_node_on_trimmed(s->node, on_trimmed, s);
		node_on_instance_done(s->node, on_instance, s);
		int rc = paxos_node_add_learner(s->node, on_value, s);
		if (rc != PAXOS_OK) {
			set_error(g, "partition %u: %s", p, paxos_node_error(s->node));
			return rc;
		}
	}
	return PAXOS_OK;
}

int paxos_partitions_submit(struct paxos_partitions *g, uint32_t partition, const void *value,
			    size_t len)
{
	if (partition >= g->count) {
		set_error(g, "partition %u does not exist: paxos.conf has partitions %u (0..%u)",
			  partition, g->count, g->count - 1);
		return PAXOS_E_INVALID;
	}
	struct paxos_node *n = g->slots[partition].node;
	if (!n) {
		set_error(g, "partition %u is not hosted by this group", partition);
		return PAXOS_E_INVALID;
	}
	int rc = paxos_node_submit(n, value, len);
	if (rc != PAXOS_OK)
		set_error(g, "partition %u: %s", partition, paxos_node_error(n));
	return rc;
}

const char *paxos_partitions_error(const struct paxos_partitions *g)
{
	return g->error;
}

uint64_t paxos_partitions_merge_waiting(const struct paxos_partitions *g)
{
	return g->waiting;
}
