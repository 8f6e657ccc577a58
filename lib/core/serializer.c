/* SPDX-License-Identifier: BSD-3-Clause */
#include <paxos/serializer.h>

#include "batch.h"

#include <stdlib.h>

/* The serializer speaks as acceptor 0 with one fixed ballot; learners trust the final flag. */
#define SERIALIZER_ID 0u
#define SERIALIZER_BALLOT PAXOS_MAX_PROPOSERS

struct paxos_serializer {
	struct paxos_storage *st;
	struct paxos_counters *counters;
	paxos_iid next;
	int failed;
	uint32_t max_value; /* largest client value: framed, it still fits in a datagram */
	uint8_t *frame;     /* max_value + PAXOS_BATCH_HEADER bytes */
};

struct paxos_serializer *paxos_serializer_new(struct paxos_storage *st, uint32_t max_value,
					      struct paxos_counters *counters)
{
	if (!st || !counters || max_value == 0 || max_value > UINT32_MAX - PAXOS_BATCH_HEADER)
		return NULL;
	struct paxos_serializer *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->frame = malloc((size_t)max_value + PAXOS_BATCH_HEADER);
	if (!s->frame) {
		free(s);
		return NULL;
	}
	s->st = st;
	s->counters = counters;
	s->max_value = max_value;
	s->next = st->ops->highest_accepted(st) + 1;
	return s;
}

void paxos_serializer_free(struct paxos_serializer *s)
{
	if (s)
		free(s->frame);
	free(s);
}

paxos_iid paxos_serializer_next_iid(const struct paxos_serializer *s)
{
	return s->next;
}

static void emit_final(struct paxos_serializer *s, paxos_iid iid, struct paxos_value v,
		       const struct paxos_emitter *out)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted =
	    (struct paxos_accepted){iid, SERIALIZER_BALLOT, v, SERIALIZER_ID, true, false, 0};
	paxos_emit(out, PAXOS_GROUP_LEARNERS, &m);
	s->counters->accepteds_sent++;
}

/* The instance value of one client value: a frame of one (lib/core/batch.h), like the proposer's
 * frames, so learners unpack both alike. Valid until the next call. */
static struct paxos_value frame_of(struct paxos_serializer *s, const struct paxos_value *v)
{
	uint32_t used = 0;
	paxos_batch_append(s->frame, s->max_value + PAXOS_BATCH_HEADER, &used, v);
	return (struct paxos_value){s->frame, used};
}

/* A client value the serializer takes: longer ones would not fit in a datagram once framed
 * (the proposer refuses them too). */
static bool takes(const struct paxos_serializer *s, const struct paxos_message *m)
{
	return m->type == PAXOS_MSG_CLIENT_VALUE && m->u.client_value.value.len <= s->max_value &&
	       (m->u.client_value.value.len == 0 || m->u.client_value.value.data);
}

static int fail(struct paxos_serializer *s, int rc)
{
	s->failed = rc;
	return rc;
}

/* Answer from storage; values read are only valid until the next storage call. */
static int repeat(struct paxos_serializer *s, const struct paxos_repeat *r,
		  const struct paxos_emitter *out)
{
	paxos_iid from = r->from ? r->from : 1, trim = s->st->ops->trim_iid(s->st);
	if (from <= trim) {
		struct paxos_message m = {.type = PAXOS_MSG_TRIMMED};
		m.u.trimmed = (struct paxos_trimmed){SERIALIZER_ID, trim, 0};
		paxos_emit(out, PAXOS_GROUP_LEARNERS, &m);
		from = trim + 1;
	}
	for (paxos_iid i = from; i <= r->to && i < s->next && i - from < 512; i++) {
		struct paxos_record rec;
		int rc = s->st->ops->get(s->st, i, &rec);
		if (rc < 0)
			return rc;
		if (rc == 1 && rec.accepted) {
			emit_final(s, i, rec.value, out);
			s->counters->repeats_answered++;
		}
	}
	return PAXOS_OK;
}

int paxos_serializer_handle_batch(struct paxos_serializer *s, const struct paxos_message *msgs,
				  size_t n, const struct paxos_emitter *out)
{
	if (s->failed)
		return s->failed;
	/* Store every value of the datagram in one transaction (group commit) ... */
	paxos_iid first = s->next;
	int rc = s->st->ops->begin(s->st);
	for (size_t i = 0; i < n && rc == PAXOS_OK; i++) {
		if (!takes(s, &msgs[i]))
			continue;
		struct paxos_record rec = {s->next++, SERIALIZER_BALLOT, SERIALIZER_BALLOT,
					   frame_of(s, &msgs[i].u.client_value.value), true};
		rc = s->st->ops->put(s->st, &rec);
	}
	if (rc == PAXOS_OK)
		rc = s->st->ops->commit(s->st);
	if (rc != PAXOS_OK)
		return fail(s, rc);
	if (s->next != first)
		s->counters->storage_commits++;
	/* ... and only then announce them, framed again from the caller's datagram. */
	paxos_iid iid = first;
	for (size_t i = 0; i < n; i++) {
		const struct paxos_message *m = &msgs[i];
		if (takes(s, m)) {
			emit_final(s, iid++, frame_of(s, &m->u.client_value.value), out);
		} else if (m->type == PAXOS_MSG_REPEAT) {
			if ((rc = repeat(s, &m->u.repeat, out)) != PAXOS_OK)
				return fail(s, rc);
		} else if (m->type == PAXOS_MSG_TRIM) {
			/* Never beyond what exists, so later values cannot land below the trim. */
			paxos_iid upto = m->u.trim.iid < s->next ? m->u.trim.iid : s->next - 1;
			if (upto <= s->st->ops->trim_iid(s->st))
				continue;
			if ((rc = s->st->ops->begin(s->st)) != PAXOS_OK ||
			    (rc = s->st->ops->trim(s->st, upto)) != PAXOS_OK ||
			    (rc = s->st->ops->commit(s->st)) != PAXOS_OK)
				return fail(s, rc);
			s->counters->storage_commits++;
			s->counters->instances_trimmed++;
		}
	}
	return PAXOS_OK;
}

int paxos_serializer_tick(struct paxos_serializer *s, const struct paxos_emitter *out)
{
	if (s->failed)
		return s->failed;
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_STATE};
	m.u.acceptor_state = (struct paxos_acceptor_state){.acceptor_id = SERIALIZER_ID,
							   .highest_accepted = s->next - 1,
							   .trim_iid = s->st->ops->trim_iid(s->st)};
	paxos_emit(out, PAXOS_GROUP_LEARNERS, &m);
	return PAXOS_OK;
}
