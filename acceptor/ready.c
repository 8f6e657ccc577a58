/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The acceptor's ready (struct paxos_ready): the records and replies a step adds, each record
 * found by its instance in an open-addressing table, the values read from storage copied into
 * an arena; and its hand-over to the driver, which takes it, writes it and advances
 * (handle.c does all three in one call).
 */
#include "state.h"
#include "paxos_assert.h"

#include <stdlib.h>
#include <string.h>

static size_t slot_of(paxos_iid iid)
{
	uint64_t h = iid * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 40) & (RECORD_SLOTS - 1);
}

/* The index of the ready's record for iid, or -1. */
static long find_record(const struct paxos_acceptor *a, paxos_iid iid)
{
	for (size_t s = slot_of(iid);; s = (s + 1) & (RECORD_SLOTS - 1)) {
		uint32_t k = a->slots[s];
		if (k == 0)
			return -1;
		if (a->pending[k - 1].iid == iid)
			return (long)(k - 1);
	}
}

/* Forgets the ready: its records, messages and the arena they point into. */
static void clear_ready(struct paxos_acceptor *a)
{
	for (size_t i = 0; i < a->record_count; i++) {
		size_t s = slot_of(a->pending[i].iid);
		while (a->slots[s] != 0) {
			a->slots[s] = 0;
			s = (s + 1) & (RECORD_SLOTS - 1);
		}
	}
	a->record_count = 0;
	a->message_count = 0;
	a->arena_used = 0;
	a->trims_applied = 0;
	a->trim = 0;
	a->highest = 0;
	a->taken = false;
}

/* Any storage error stops the acceptor for good; the caller sees the first error. */
int acceptor_fail(struct paxos_acceptor *a, int rc)
{
	a->stopped = true;
	clear_ready(a);
	return rc < 0 ? rc : PAXOS_E_STORAGE;
}

/* The record for iid as the ready leaves it, or as stored, or an empty one; *v says where its
 * value lives. Returns PAXOS_OK or a storage error. */
int acceptor_load(struct paxos_acceptor *a, paxos_iid iid, struct paxos_record *rec,
		  struct value_ref *v)
{
	long k = find_record(a, iid);
	if (k >= 0) {
		*rec = a->records[k];
		*v = a->pending[k].v;
		if (v->home == VALUE_ARENA)
			rec->value.data = a->arena + v->off;
		return PAXOS_OK;
	}
	int rc = a->st->ops->get(a->st, iid, rec);
	if (rc < 0)
		return rc;
	if (rc == 0)
		memset(rec, 0, sizeof(*rec));
	rec->iid = iid;
	if (rec->accepted == 0)
		rec->value = (struct paxos_value){NULL, 0}; /* holds none */
	*v = (struct value_ref){rec->value.len > 0 ? VALUE_STORE : VALUE_STABLE, 0};
	return PAXOS_OK;
}

/* Copies v to the end of the arena, growing it only past the largest ready so far.
 * Returns the offset, or SIZE_MAX when memory ran out. */
static size_t arena_copy(struct paxos_acceptor *a, const struct paxos_value *v)
{
	size_t off = a->arena_used;
	if (v->len > a->arena_cap - off) {
		size_t cap = a->arena_cap;
		while (cap - off < v->len) {
			if (cap > SIZE_MAX / 2)
				return SIZE_MAX;
			cap *= 2;
		}
		uint8_t *arena = realloc(a->arena, cap);
		if (!arena)
			return SIZE_MAX;
		a->arena = arena;
		a->arena_cap = cap;
	}
	if (v->len)
		memcpy(a->arena + off, v->data, v->len);
	a->arena_used += v->len;
	return off;
}

/* Makes rec's value outlive the driver's writes: a value the store returned is copied into
 * the arena. false when memory ran out. */
bool acceptor_pin(struct paxos_acceptor *a, const struct paxos_record *rec, struct value_ref *v)
{
	if (v->home != VALUE_STORE)
		return true;
	size_t off = arena_copy(a, &rec->value);
	if (off == SIZE_MAX)
		return false;
	*v = (struct value_ref){VALUE_ARENA, off};
	return true;
}

/* Puts rec (its value pinned, see acceptor_pin) into the ready, replacing what it held for
 * rec->iid. false when the ready has no room for another record: the vote is then not given. */
bool acceptor_store(struct paxos_acceptor *a, const struct paxos_record *rec,
		    const struct value_ref *v)
{
	long k = find_record(a, rec->iid);
	PAXOS_ASSERT(rec->accepted <= rec->promised, "nothing is accepted above the promise");
	PAXOS_ASSERT(k < 0 || rec->promised >= a->records[k].promised, "a promise never goes down");
	PAXOS_ASSERT(k < 0 || rec->final || !a->records[k].final, "a final record stays final");
	if (k < 0) {
		if (a->record_count == RECORDS_MAX)
			return false;
		k = (long)a->record_count++;
		size_t s = slot_of(rec->iid);
		while (a->slots[s] != 0)
			s = (s + 1) & (RECORD_SLOTS - 1);
		a->slots[s] = (uint32_t)k + 1;
	}
	a->records[k] = *rec;
	a->pending[k].iid = rec->iid;
	a->pending[k].v = *v;
	if (v->home == VALUE_ARENA)
		a->records[k].value.data = NULL; /* set when the ready is taken */
	if (rec->accepted != 0 && rec->iid > a->highest)
		a->highest = rec->iid;
	return true;
}

/* A message into the ready, naming the record of its instance when the ready holds one. Room
 * is always there for one reply per message (see HELD_MAX and repeat_budget); past it the
 * message is built where it is never sent. */
struct paxos_ready_message *acceptor_hold(struct paxos_acceptor *a, enum paxos_msg_type type,
					  enum paxos_group to, enum reply_kind kind, paxos_iid iid)
{
	struct paxos_ready_message *r = &a->spare;
	struct reply_meta *meta = &a->spare_meta;
	if (a->message_count < MESSAGES_MAX) {
		r = &a->messages[a->message_count];
		meta = &a->meta[a->message_count++];
	}
	memset(&r->m, 0, sizeof(r->m));
	r->m.type = type;
	r->to = to;
	r->after = 0;
	long k = iid ? find_record(a, iid) : -1;
	r->record = k >= 0 ? (uint32_t)k : PAXOS_READY_NO_RECORD;
	*meta = (struct reply_meta){kind, false, 0};
	return r;
}

/* Where a message's value lives: v of a pinned record. */
void acceptor_hold_value(struct paxos_acceptor *a, struct paxos_ready_message *r,
			 struct paxos_value *field, const struct paxos_value *value,
			 const struct value_ref *v)
{
	struct reply_meta *meta = r == &a->spare ? &a->spare_meta : &a->meta[r - a->messages];
	*field = *value;
	if (v->home == VALUE_ARENA) {
		field->data = NULL;
		meta->value_in_arena = true;
		meta->value_off = v->off;
	}
}

bool paxos_acceptor_ready(struct paxos_acceptor *a, struct paxos_ready *rd)
{
	memset(rd, 0, sizeof(*rd));
	if (!a)
		return false;
	a->taken = true;
	for (size_t i = 0; i < a->record_count; i++)
		if (a->pending[i].v.home == VALUE_ARENA)
			a->records[i].value.data = a->arena + a->pending[i].v.off;
	bool writes = a->trim != 0 || a->record_count > 0;
	if (writes)
		a->writes++;
	for (size_t i = 0; i < a->message_count; i++) {
		struct paxos_ready_message *r = &a->messages[i];
		const struct reply_meta *meta = &a->meta[i];
		r->after = meta->kind == REPLY_FREE ? 0 : a->writes;
		if (!meta->value_in_arena)
			continue;
		struct paxos_value *v =
		    r->m.type == PAXOS_MSG_PROMISE ? &r->m.u.promise.value : &r->m.u.accepted.value;
		v->data = a->arena + meta->value_off;
	}
	rd->trim = a->trim;
	rd->records = a->records;
	rd->record_count = a->record_count;
	rd->messages = a->messages;
	rd->message_count = a->message_count;
	rd->write = writes ? a->writes : 0;
	return writes || a->message_count > 0;
}

int paxos_acceptor_write(struct paxos_storage *st, struct paxos_ready *rd)
{
	if (!st || !rd)
		return PAXOS_E_INVALID;
	if (rd->write == 0)
		return PAXOS_OK;
	int rc = st->ops->begin(st);
	if (rc == PAXOS_OK && rd->trim)
		rc = st->ops->trim(st, rd->trim);
	for (size_t i = 0; i < rd->record_count && rc == PAXOS_OK; i++) {
		if (rd->records[i].iid <= rd->trim)
			continue;
		rc = st->ops->put(st, &rd->records[i]);
		if (rc == PAXOS_E_FULL) { /* that far out the store cannot hold it: unsaid */
			rd->records[i].iid = 0;
			rc = PAXOS_OK;
		}
	}
	if (rc == PAXOS_OK)
		rc = st->ops->commit(st);
	return rc;
}

void paxos_acceptor_advance(struct paxos_acceptor *a, int write_status)
{
	if (!a)
		return;
	if (write_status != PAXOS_OK) {
		(void)acceptor_fail(a, write_status);
		return;
	}
	struct paxos_counters *c = a->counters;
	if (a->taken && (a->trim != 0 || a->record_count > 0))
		c->storage_commits++;
	c->instances_trimmed += a->trims_applied;
	for (size_t i = 0; i < a->record_count; i++)
		if (a->records[i].iid == 0)
			c->instances_out_of_window++;
	for (size_t i = 0; i < a->message_count; i++) {
		if (!acceptor_sendable(a, &a->messages[i]))
			continue;
		switch (a->meta[i].kind) {
		case REPLY_PROMISE:
			c->promises_sent++;
			break;
		case REPLY_REJECT:
			c->rejects_sent++;
			break;
		case REPLY_FENCE_REJECT:
			c->fence_rejects++;
			break;
		case REPLY_ACCEPTED:
			c->accepteds_sent++;
			break;
		case REPLY_REPEATED:
			c->repeats_answered++;
			break;
		case REPLY_TRIMMED:
		case REPLY_STATE:
		case REPLY_FREE:
			break;
		}
	}
	clear_ready(a);
}
