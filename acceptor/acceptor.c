/*
 * Acceptor protocol logic (thesis 2.2.2, 3.4): per instance it remembers the highest ballot
 * promised and the last value accepted, writes every change to storage before answering,
 * and answers repeat requests and trims for the learners.
 */
#include <paxos/acceptor.h>

#include <stdlib.h>
#include <string.h>

/* First size of the buffer a promise's value is copied into; it doubles when needed. */
#define PROMISE_BUFFER_INITIAL 4096u

struct paxos_acceptor {
	uint32_t id;
	struct paxos_storage *st;
	struct paxos_counters *counters;
	/* A value read from storage is only valid until the next put or commit, yet a promise
	 * is sent after both, so its value is copied here first. */
	uint8_t *promise_buf;
	size_t promise_cap;
	bool stopped; /* storage failed: answering anything now could break safety */
};

struct paxos_acceptor *paxos_acceptor_new(uint32_t id, struct paxos_storage *st,
					  struct paxos_counters *counters)
{
	if (!st || !counters)
		return NULL;
	struct paxos_acceptor *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->promise_buf = malloc(PROMISE_BUFFER_INITIAL);
	if (!a->promise_buf) {
		free(a);
		return NULL;
	}
	a->promise_cap = PROMISE_BUFFER_INITIAL;
	a->id = id;
	a->st = st;
	a->counters = counters;
	return a;
}

void paxos_acceptor_free(struct paxos_acceptor *a)
{
	if (!a)
		return;
	free(a->promise_buf);
	free(a);
}

/* Any storage error stops the acceptor for good; the caller sees the first error. */
static int fail(struct paxos_acceptor *a, int rc)
{
	a->stopped = true;
	return rc < 0 ? rc : PAXOS_E_STORAGE;
}

/* Whether iid names an instance this acceptor may still hold. */
static bool live_instance(struct paxos_acceptor *a, paxos_iid iid)
{
	return iid != 0 && iid > a->st->ops->trim_iid(a->st);
}

/* The stored record for iid, or an empty one. Returns PAXOS_OK or a storage error. */
static int load(struct paxos_acceptor *a, paxos_iid iid, struct paxos_record *rec)
{
	int rc = a->st->ops->get(a->st, iid, rec);
	if (rc < 0)
		return rc;
	if (rc == 0)
		memset(rec, 0, sizeof(*rec));
	rec->iid = iid;
	return PAXOS_OK;
}

/* Puts rec. PAXOS_E_FULL means the backend cannot hold an instance that far out: not a
 * failure, the message is dropped (staying silent is always safe). */
static int store(struct paxos_acceptor *a, const struct paxos_record *rec, bool *dropped)
{
	int rc = a->st->ops->put(a->st, rec);
	*dropped = rc == PAXOS_E_FULL;
	if (*dropped) {
		a->counters->instances_out_of_window++;
		return PAXOS_OK;
	}
	return rc;
}

/* Copies v into the promise buffer, growing it only for a value larger than any before. */
static int keep_for_promise(struct paxos_acceptor *a, struct paxos_value *v)
{
	if (v->len == 0)
		return PAXOS_OK;
	if (v->len > a->promise_cap) {
		size_t cap = a->promise_cap;
		while (cap < v->len)
			cap *= 2;
		uint8_t *buf = realloc(a->promise_buf, cap);
		if (!buf)
			return PAXOS_E_NOMEM;
		a->promise_buf = buf;
		a->promise_cap = cap;
	}
	memcpy(a->promise_buf, v->data, v->len);
	v->data = a->promise_buf;
	return PAXOS_OK;
}

static void emit_reject(struct paxos_acceptor *a, paxos_iid iid, paxos_ballot promised,
			const struct paxos_emitter *out)
{
	struct paxos_message m = {.type = PAXOS_MSG_REJECT};
	m.u.reject.iid = iid;
	m.u.reject.ballot = promised;
	m.u.reject.acceptor_id = a->id;
	a->counters->rejects_sent++;
	paxos_emit(out, PAXOS_GROUP_PROPOSERS, &m);
}

static void emit_accepted(struct paxos_acceptor *a, const struct paxos_record *rec,
			  const struct paxos_emitter *out)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted.iid = rec->iid;
	m.u.accepted.ballot = rec->accepted;
	m.u.accepted.value = rec->value;
	m.u.accepted.acceptor_id = a->id;
	m.u.accepted.final = rec->final;
	paxos_emit(out, PAXOS_GROUP_LEARNERS, &m);
}

static int handle_prepare(struct paxos_acceptor *a, const struct paxos_prepare *p,
			  const struct paxos_emitter *out)
{
	if (!live_instance(a, p->iid))
		return PAXOS_OK;
	struct paxos_record rec;
	bool dropped = false;
	int rc = a->st->ops->begin(a->st);
	if (rc == PAXOS_OK)
		rc = load(a, p->iid, &rec);
	if (rc == PAXOS_OK && p->ballot >= rec.promised && rec.accepted != 0)
		rc = keep_for_promise(a, &rec.value);
	if (rc == PAXOS_OK && p->ballot > rec.promised) {
		rec.promised = p->ballot;
		rc = store(a, &rec, &dropped);
	}
	if (rc == PAXOS_OK)
		rc = a->st->ops->commit(a->st);
	if (rc != PAXOS_OK)
		return fail(a, rc);
	if (dropped)
		return PAXOS_OK;

	if (p->ballot < rec.promised) {
		emit_reject(a, p->iid, rec.promised, out);
		return PAXOS_OK;
	}
	struct paxos_message m = {.type = PAXOS_MSG_PROMISE};
	m.u.promise.iid = p->iid;
	m.u.promise.ballot = p->ballot;
	m.u.promise.value_ballot = rec.accepted;
	if (rec.accepted != 0)
		m.u.promise.value = rec.value;
	m.u.promise.acceptor_id = a->id;
	a->counters->promises_sent++;
	paxos_emit(out, PAXOS_GROUP_PROPOSERS, &m);
	return PAXOS_OK;
}

static int handle_accept(struct paxos_acceptor *a, const struct paxos_accept *acc,
			 const struct paxos_emitter *out)
{
	if (!live_instance(a, acc->iid) || (acc->value.len > 0 && !acc->value.data))
		return PAXOS_OK;
	struct paxos_record rec;
	bool granted = false, dropped = false;
	int rc = a->st->ops->begin(a->st);
	if (rc == PAXOS_OK)
		rc = load(a, acc->iid, &rec);
	if (rc == PAXOS_OK && acc->ballot >= rec.promised) {
		granted = true;
		rec.promised = acc->ballot;
		rec.accepted = acc->ballot;
		rec.value = acc->value; /* valid for this call, unlike what storage returned */
		rc = store(a, &rec, &dropped);
	}
	if (rc == PAXOS_OK)
		rc = a->st->ops->commit(a->st);
	if (rc != PAXOS_OK)
		return fail(a, rc);
	if (dropped)
		return PAXOS_OK;

	if (!granted) {
		emit_reject(a, acc->iid, rec.promised, out);
		return PAXOS_OK;
	}
	a->counters->accepteds_sent++;
	emit_accepted(a, &rec, out);
	return PAXOS_OK;
}

/*
 * Read-only, so nothing has to become durable first: each value is sent while the
 * transaction keeps it valid. The range is clipped to live, accepted instances and to
 * PAXOS_ACCEPTOR_MAX_REPEAT of them, so an absurd request costs no more than a fair one.
 */
static int handle_repeat(struct paxos_acceptor *a, const struct paxos_repeat *r,
			 const struct paxos_emitter *out)
{
	paxos_iid trim = a->st->ops->trim_iid(a->st);
	paxos_iid last = a->st->ops->highest_accepted(a->st);
	paxos_iid first = r->from > trim ? r->from : trim + 1;
	if (first == 0)
		first = 1;
	if (r->to < last)
		last = r->to;
	if (first > last || trim == UINT64_MAX)
		return PAXOS_OK;
	if (last - first >= PAXOS_ACCEPTOR_MAX_REPEAT)
		last = first + PAXOS_ACCEPTOR_MAX_REPEAT - 1;

	int rc = a->st->ops->begin(a->st);
	if (rc != PAXOS_OK)
		return fail(a, rc);
	for (paxos_iid iid = first; iid <= last; iid++) {
		struct paxos_record rec;
		rc = a->st->ops->get(a->st, iid, &rec);
		if (rc < 0)
			return fail(a, rc);
		if (rc == 0 || rec.accepted == 0)
			continue;
		rec.iid = iid;
		a->counters->repeats_answered++;
		emit_accepted(a, &rec, out);
	}
	rc = a->st->ops->commit(a->st);
	return rc == PAXOS_OK ? PAXOS_OK : fail(a, rc);
}

static int handle_trim(struct paxos_acceptor *a, const struct paxos_trim *t)
{
	if (t->iid <= a->st->ops->trim_iid(a->st))
		return PAXOS_OK;
	int rc = a->st->ops->begin(a->st);
	if (rc == PAXOS_OK)
		rc = a->st->ops->trim(a->st, t->iid);
	if (rc == PAXOS_OK)
		rc = a->st->ops->commit(a->st);
	if (rc != PAXOS_OK)
		return fail(a, rc);
	a->counters->instances_trimmed++;
	return PAXOS_OK;
}

int paxos_acceptor_handle(struct paxos_acceptor *a, const struct paxos_message *m,
			  const struct paxos_emitter *out)
{
	if (!a || !m || !out)
		return PAXOS_E_INVALID;
	if (a->stopped)
		return PAXOS_E_STORAGE;
	switch (m->type) {
	case PAXOS_MSG_PREPARE:
		return handle_prepare(a, &m->u.prepare, out);
	case PAXOS_MSG_ACCEPT:
		return handle_accept(a, &m->u.accept, out);
	case PAXOS_MSG_REPEAT:
		return handle_repeat(a, &m->u.repeat, out);
	case PAXOS_MSG_TRIM:
		return handle_trim(a, &m->u.trim);
	default:
		return PAXOS_OK; /* not for acceptors */
	}
}

int paxos_acceptor_tick(struct paxos_acceptor *a, const struct paxos_emitter *out)
{
	if (!a || !out)
		return PAXOS_E_INVALID;
	if (a->stopped)
		return PAXOS_E_STORAGE;
	paxos_iid highest = a->st->ops->highest_accepted(a->st);
	int rc = a->st->ops->begin(a->st);
	if (rc != PAXOS_OK)
		return fail(a, rc);
	if (highest > a->st->ops->trim_iid(a->st)) {
		struct paxos_record rec;
		rc = a->st->ops->get(a->st, highest, &rec);
		if (rc < 0)
			return fail(a, rc);
		if (rc == 1 && rec.accepted != 0) {
			rec.iid = highest;
			emit_accepted(a, &rec, out); /* read-only: sent while the value is valid */
		}
	}
	rc = a->st->ops->commit(a->st);
	if (rc != PAXOS_OK)
		return fail(a, rc);

	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_STATE};
	m.u.acceptor_state.acceptor_id = a->id;
	m.u.acceptor_state.highest_accepted = highest;
	m.u.acceptor_state.trim_iid = a->st->ops->trim_iid(a->st);
	paxos_emit(out, PAXOS_GROUP_LEARNERS, &m);
	return PAXOS_OK;
}
