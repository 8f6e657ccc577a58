/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A partitions group (paxos/partitions.h): one node per hosted partition, and for
 * learner-merge the deterministic merge of their deliveries (merge.h).
 */
#include <paxos/partitions.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_fields.h"
#include "log_line.h"
#include "merge.h"
#include "parts.h"

struct partition_slot {
	struct paxos_partitions *group;
	uint32_t partition;
	struct paxos_node *node;
};

struct paxos_partitions {
	uint32_t count;
	bool merging;
	uint32_t segment; /* merge-segment */
	struct merge merge;
	bool stopped; /* merged order lost (trimmed instances, no memory): delivers no more */
	paxos_partition_delivered_fn deliver;
	void *deliver_arg;
	paxos_partition_trimmed_fn trimmed;
	void *trimmed_arg;
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

static void merge_failed(struct paxos_partitions *g, uint32_t partition)
{
	g->stopped = true;
	set_error(g, "learner-merge: partition %u ran out of memory for values waiting their turn",
		  partition);
	paxos_logf(PAXOS_LOG_ERROR, "paxos: %s", g->error);
}

/* The merge's output, and every delivery when not merging. */
static void deliver_merged(void *arg, uint32_t partition, paxos_iid iid, uint32_t position,
			   const struct paxos_value *v)
{
	struct paxos_partitions *g = arg;
	g->deliver(g->deliver_arg, partition, iid, position, v);
}

static void on_value(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	struct partition_slot *s = arg;
	struct paxos_partitions *g = s->group;
	if (!g->merging)
		deliver_merged(g, s->partition, iid, position, v);
	else if (!g->stopped && merge_value(&g->merge, s->partition, iid, position, v) != PAXOS_OK)
		merge_failed(g, s->partition);
}

/* An instance of s's partition was delivered (values, or a skip): it may end a segment. */
static void on_instance(void *arg, paxos_iid iid, bool skip)
{
	struct partition_slot *s = arg;
	struct paxos_partitions *g = s->group;
	if (g->merging && !g->stopped &&
	    merge_instance(&g->merge, s->partition, iid, skip) != PAXOS_OK)
		merge_failed(g, s->partition);
}

static void on_trimmed(void *arg, paxos_iid from, paxos_iid to)
{
	struct partition_slot *s = arg;
	struct paxos_partitions *g = s->group;
	if (g->merging && !g->stopped) {
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

/* A partition began a new log: without a merge its deliveries go on from its instance 1 (the
 * node and the application's callback say so). The merged order has no place for a second
 * log of one partition (its positions count that partition's instances from the first log's
 * 1): the learner stops rather than deliver an order no other learner would. */
static void on_new_log(void *arg, uint64_t generation)
{
	struct partition_slot *s = arg;
	struct paxos_partitions *g = s->group;
	if (!g->merging || g->stopped)
		return;
	g->stopped = true;
	set_error(
	    g,
	    "learner-merge: partition %u began a new log (generation %llu): the merged order "
	    "cannot take a second log of a partition; this learner stops (restart the merging "
	    "learners without merge positions)",
	    s->partition, (unsigned long long)generation);
	paxos_logf(PAXOS_LOG_ERROR, "paxos: fatal: %s; stopping", g->error);
	struct paxos_node *n = s->node;
	n->failed = PAXOS_E_INVALID;
	node_set_error(n, "%s", g->error);
	event_base_loopbreak(n->base);
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
	g->merging = cfg->learner_merge;
	g->segment = cfg->merge_segment ? cfg->merge_segment : 1;
	if (merge_init(&g->merge, count, g->segment, deliver_merged, g) != PAXOS_OK) {
		snprintf(err, errlen, "partitions: bad merge-segment");
		goto fail;
	}
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
	for (uint32_t p = 0; p < PAXOS_MAX_PARTITIONS; p++)
		paxos_node_free(g->slots[p].node);
	merge_destroy(&g->merge);
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
	struct merge_position at;
	merge_position(&g->merge, &at);
	for (uint32_t p = 0; g->merging && p < g->count; p++) {
		paxos_iid start =
		    g->slots[p].node ? g->slots[p].node->learner.app.learner_start : 0;
		if (g->slots[p].node && (start ? start : 1) != at.next[p]) {
			/* Every merging learner must cut each log into the same segments. */
			set_error(g,
				  "learner-merge: partition %u's learner starts at instance %llu, "
				  "but the merged order takes that log from instance %llu (start "
				  "where a merge position says: paxos_partitions_resume_merge())",
				  p, (unsigned long long)start, (unsigned long long)at.next[p]);
			return PAXOS_E_INVALID;
		}
		if (!g->slots[p].node) {
			set_error(g,
				  "learner-merge: partition %u is not hosted here, and the merged "
				  "order needs every partition (host all %u, or set learner-merge "
				  "no)",
				  p, g->count);
			return PAXOS_E_INVALID;
		}
	}
	g->deliver = deliver;
	g->deliver_arg = arg;
	for (uint32_t p = 0; p < g->count; p++) {
		struct partition_slot *s = &g->slots[p];
		if (!s->node)
			continue;
		paxos_node_on_trimmed(s->node, on_trimmed, s);
		node_on_instance_done(s->node, on_instance, s);
		node_on_group_new_log(s->node, on_new_log, s);
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

int paxos_partitions_merge_position(const struct paxos_partitions *g,
				    struct paxos_merge_position *pos)
{
	if (!g || !pos || !g->merging)
		return PAXOS_E_INVALID;
	struct merge_position at;
	merge_position(&g->merge, &at);
	memset(pos, 0, sizeof(*pos));
	pos->partitions = g->count;
	pos->segment = g->segment;
	pos->turn = at.turn;
	pos->in_segment = at.in_segment;
	pos->values = at.values;
	memcpy(pos->next, at.next, sizeof(pos->next));
	return PAXOS_OK;
}

int paxos_partitions_resume_merge(struct paxos_partitions *g,
				  const struct paxos_merge_position *pos)
{
	if (!g || !pos)
		return PAXOS_E_INVALID;
	if (!g->merging || g->deliver) {
		set_error(g, g->merging
				 ? "learner-merge: resume the merge before adding the learner"
				 : "learner-merge is off: there is no merged order to resume");
		return PAXOS_E_INVALID;
	}
	if (pos->partitions != g->count || pos->segment != g->segment) {
		set_error(g,
			  "learner-merge: the merge position was taken with partitions %u and "
			  "merge-segment %u, but paxos.conf has partitions %u and merge-segment %u",
			  pos->partitions, pos->segment, g->count, g->segment);
		return PAXOS_E_INVALID;
	}
	struct merge_position at = {
	    .turn = pos->turn, .in_segment = pos->in_segment, .values = pos->values};
	memcpy(at.next, pos->next, sizeof(at.next));
	if (merge_resume(&g->merge, &at) != PAXOS_OK) {
		set_error(g,
			  "learner-merge: bad merge position (turn %u of %u partitions, %u of a "
			  "segment of %u instances, or an instance 0), or resumed already",
			  pos->turn, g->count, pos->in_segment, g->segment);
		return PAXOS_E_INVALID;
	}
	for (uint32_t p = 0; p < g->count; p++) {
		struct paxos_node *n = g->slots[p].node;
		if (n && paxos_node_set_learner_start(n, pos->next[p]) != PAXOS_OK) {
			set_error(g, "partition %u: %s", p, paxos_node_error(n));
			return PAXOS_E_INVALID;
		}
	}
	return PAXOS_OK;
}

uint64_t paxos_partitions_merge_waiting(const struct paxos_partitions *g)
{
	return merge_waiting(&g->merge);
}
