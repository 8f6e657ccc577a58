/* SPDX-License-Identifier: BSD-3-Clause */
/* The merged-order checker (see merged.h). */
#include "merged.h"

#include "batch.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void merged_fail(struct merged *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void merged_fail(struct merged *m, const char *fmt, ...)
{
	if (m->violation != SIM_OK)
		return;
	m->violation = SIM_V_MERGE;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->message, sizeof(m->message), fmt, ap);
	va_end(ap);
}

static bool push(struct merged_entry **a, size_t *len, size_t *cap, const struct merged_entry *e)
{
	if (*len == *cap) {
		size_t n = *cap ? 2 * *cap : 256;
		struct merged_entry *b = realloc(*a, n * sizeof(*b));
		if (!b)
			return false;
		*a = b;
		*cap = n;
	}
	(*a)[(*len)++] = *e;
	return true;
}

static bool same(const struct merged_entry *a, const struct merged_entry *b)
{
	return a->partition == b->partition && a->iid == b->iid && a->position == b->position &&
	       a->id == b->id;
}

static void describe(const struct merged_entry *e, char *buf, size_t cap)
{
	snprintf(buf, cap, "partition %u instance %" PRIu64 " value %u (id %" PRId64 ")",
		 e->partition, e->iid, e->position, e->id);
}

/* The chosen value of partition p's instance iid, or NULL while no learner delivered it. */
static const struct checker_chosen *chosen(const struct merged *m, uint32_t p, paxos_iid iid)
{
	return checker_chosen_in(m->logs[p], 0, iid); /* partitions: no new logs */
}

/* Appends the next whole segments of the specified order while the logs know them. */
static void spec_extend(struct merged *m)
{
	for (;;) {
		uint32_t p = m->spec_turn;
		paxos_iid first = m->spec_next[p], end = first;
		for (uint32_t k = 0; k < m->segment; k++) {
			const struct checker_chosen *ch = chosen(m, p, end);
			if (!ch)
				return; /* the segment is not known whole yet */
			end++;
			struct paxos_value v = {(uint8_t *)ch->bytes, ch->len};
			if (paxos_batch_is_skip(&v))
				break;
		}
		for (paxos_iid iid = first; iid < end; iid++) {
			const struct checker_chosen *ch = chosen(m, p, iid);
			struct paxos_value v = {(uint8_t *)ch->bytes, ch->len}, one;
			uint32_t count;
			if (paxos_batch_is_skip(&v) || paxos_batch_count(&v, &count) != PAXOS_OK)
				continue;
			struct paxos_batch_iter it;
			paxos_batch_iter_init(&it, &v);
			for (uint32_t pos = 0; paxos_batch_next(&it, &one) == 1; pos++) {
				struct merged_entry e = {p, pos, iid,
							 value_decode(&one, m->values)};
				if (!push(&m->spec, &m->spec_len, &m->spec_cap, &e)) {
					merged_fail(m, "out of memory");
					return;
				}
			}
		}
		m->spec_next[p] = end;
		m->spec_turn = (p + 1) % m->partitions;
	}
}

/* What the learners merged must be what the specification says, as far as both go. */
static void spec_check(struct merged *m)
{
	spec_extend(m);
	for (; m->checked < m->len && m->checked < m->spec_len; m->checked++) {
		if (same(&m->seq[m->checked], &m->spec[m->checked]))
			continue;
		char got[96], want[96];
		describe(&m->seq[m->checked], got, sizeof(got));
		describe(&m->spec[m->checked], want, sizeof(want));
		merged_fail(m, "merged value %zu is %s, but the logs put %s there", m->checked, got,
			    want);
		return;
	}
}

static void on_merged(void *arg, uint32_t partition, paxos_iid iid, uint32_t position,
		      const struct paxos_value *v)
{
	struct merged_learner *l = arg;
	struct merged *m = l->owner;
	struct merged_entry e = {partition, position, iid, value_decode(v, m->values)};
	if (e.id >= 0)
		l->count[e.id]++;
	if (l->out < m->len) {
		if (!same(&m->seq[l->out], &e)) {
			char got[96], want[96];
			describe(&e, got, sizeof(got));
			describe(&m->seq[l->out], want, sizeof(want));
			merged_fail(m,
				    "merged learner %u's value %" PRIu64
				    " is %s, another merged learner's is %s",
				    l->index, l->out, got, want);
		}
	} else if (!push(&m->seq, &m->len, &m->cap, &e)) {
		merged_fail(m, "out of memory");
	}
	l->out++;
	if (!l->captured && l->out == l->capture_at) {
		merge_position(&l->merge, &l->captured_pos);
		l->captured = true;
		l->captured_out = l->out;
	}
}

void merged_arm(struct merged *m, uint32_t learner, uint32_t after)
{
	struct merged_learner *l = &m->l[learner];
	l->captured = false;
	l->capture_at = l->out + after;
}

int merged_init(struct merged *m, uint32_t partitions, uint32_t segment, uint32_t learners,
		uint32_t values, const struct checker *const *logs)
{
	memset(m, 0, sizeof(*m));
	if (partitions == 0 || partitions > SIM_MAX_PARTITIONS || learners > SIM_MAX_LEARNERS)
		return -1;
	m->partitions = partitions;
	m->segment = segment;
	m->values = values;
	m->learners = learners;
	for (uint32_t p = 0; p < partitions; p++) {
		m->logs[p] = logs[p];
		m->spec_next[p] = 1;
	}
	m->submitted = calloc(values, sizeof(*m->submitted));
	if (!m->submitted)
		return -1;
	for (uint32_t i = 0; i < learners; i++) {
		struct merged_learner *l = &m->l[i];
		l->owner = m;
		l->index = i;
		l->count = calloc(values, sizeof(*l->count));
		if (!l->count ||
		    merge_init(&l->merge, partitions, segment, on_merged, l) != PAXOS_OK)
			return -1;
	}
	return 0;
}

void merged_destroy(struct merged *m)
{
	for (uint32_t i = 0; i < SIM_MAX_LEARNERS; i++) {
		if (m->l[i].owner)
			merge_destroy(&m->l[i].merge);
		free(m->l[i].count);
	}
	free(m->submitted);
	free(m->seq);
	free(m->spec);
	memset(m, 0, sizeof(*m));
}

void merged_submitted(struct merged *m, uint32_t id)
{
	if (id < m->values)
		m->submitted[id]++;
}

void merged_delivered(struct merged *m, uint32_t learner, uint32_t partition, paxos_iid iid,
		      const struct paxos_value *frame, paxos_time now)
{
	if (learner >= m->learners || partition >= m->partitions) {
		merged_fail(m, "t=%" PRIu64 "us: delivery of learner %u, partition %u", now,
			    learner, partition);
		return;
	}
	struct merge *g = &m->l[learner].merge;
	bool skip = paxos_batch_is_skip(frame) && !m->broken;
	uint32_t count;
	int rc = PAXOS_OK;
	if (!skip && paxos_batch_count(frame, &count) == PAXOS_OK) {
		struct paxos_batch_iter it;
		struct paxos_value one;
		paxos_batch_iter_init(&it, frame);
		for (uint32_t pos = 0; rc == PAXOS_OK && paxos_batch_next(&it, &one) == 1; pos++)
			rc = merge_value(g, partition, iid, pos, &one);
	}
	if (rc == PAXOS_OK)
		rc = merge_instance(g, partition, iid, skip);
	if (rc != PAXOS_OK)
		merged_fail(m, "t=%" PRIu64 "us: learner %u's merge failed: %s", now, learner,
			    paxos_strerror(rc));
	spec_check(m);
}

int merged_restart(struct merged *m, uint32_t learner, struct merge_position *pos)
{
	struct merged_learner *l = &m->l[learner];
	if (!l->captured)
		return 1;
	*pos = l->captured_pos;
	for (; l->out > l->captured_out; l->out--) /* seq holds what it merged (prefix check) */
		if (m->seq[l->out - 1].id >= 0)
			l->count[m->seq[l->out - 1].id]--;
	l->captured = false;
	l->capture_at = 0;
	merge_destroy(&l->merge);
	if (merge_init(&l->merge, m->partitions, m->segment, on_merged, l) != PAXOS_OK ||
	    merge_resume(&l->merge, pos) != PAXOS_OK) {
		merged_fail(m, "learner %u cannot resume its merge", learner);
		return -1;
	}
	return 0;
}

uint64_t merged_total(const struct merged *m)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < m->learners; i++)
		n += m->l[i].out;
	return n;
}

bool merged_complete(const struct merged *m, uint32_t learner)
{
	const struct merged_learner *l = &m->l[learner];
	for (uint32_t id = 0; id < m->values; id++)
		if (m->submitted[id] > 0 && l->count[id] == 0)
			return false;
	return true;
}
