/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Acceptor protocol logic (thesis 2.2.2, 3.4): per instance it remembers the highest ballot
 * promised and the last value accepted, and answers repeat requests and trims for the
 * learners. A learning acceptor (thesis 3.7.5) also marks the instances its learner closed as
 * final and from then on only ever answers with the chosen value. Messages are handled in batches
 * under one storage transaction (group commit): replies are held until the commit succeeds, since
 * an answer must never get ahead of the state it promises.
 */
#include <paxos/acceptor.h>

#include "recovery.h"

#include <stdlib.h>
#include <string.h>

/* First size of the arena held reply values are copied into; it doubles when needed. */
#define ARENA_INITIAL 4096u

/* Repeat answers stop once the held values reach this many bytes; the learner asks again
 * for the rest. Bounds the arena even for a batch full of repeat requests, and the burst every
 * learner gets (answers go to the learners group): three acceptors' answers stay well within
 * one receiver's socket buffer, whose overruns lose accepted messages and start more repeats. */
#define REPEAT_ARENA_MAX (256u << 10)

/* Prepares kept while recovering, answered once recovery ends (answer_withheld): a window's
 * worth of instances of one proposer; beyond it the proposer's timeout retries them. */
#define WITHHELD_MAX 256u

/* Replies one batch may hold: one per message, plus one whole repeat answer (trimmed
 * notice included) on top, so at least the first repeat of a batch is answered in full, plus
 * the answers to the prepares withheld while recovering. */
#define HELD_MAX (PAXOS_ACCEPTOR_MAX_BATCH + PAXOS_ACCEPTOR_MAX_REPEAT + 1u + WITHHELD_MAX)

/* Which counter a held reply bumps once it is really sent. */
enum reply_kind {
	REPLY_PROMISE,
	REPLY_REJECT,
	REPLY_ACCEPTED,
	REPLY_REPEATED,
	REPLY_TRIMMED,
	REPLY_RECOVER_INFO
};

struct held_reply {
	struct paxos_message m;
	enum paxos_group to;
	enum reply_kind kind;
	bool value_in_arena; /* the value is at arena + value_off (the arena may move) */
	size_t value_off;
};

struct paxos_acceptor {
	uint32_t id;
	uint32_t repeat_batch;  /* most instances per repeat request */
	uint32_t repeat_budget; /* most instances repeated per tick */
	uint32_t repeat_left;   /* of the budget, until the next tick */
	bool decided_known;     /* paxos_acceptor_decided was called: trims stop at decided */
	paxos_iid decided;
	struct paxos_storage *st;
	struct paxos_counters *counters;
	bool stopped;       /* storage failed: answering anything now could break safety */
	uint64_t retention; /* instances kept below the highest accepted; 0: all */

	/* The batch in progress. */
	bool in_txn;
	bool changed; /* the transaction holds a put or a trim: its commit reaches the disk */
	uint64_t trims_applied;
	struct held_reply *held;
	size_t held_count;
	/* Values read from storage are only valid until the next put or commit, yet replies go
	 * out after the commit, so they are copied here. Reused from batch to batch. */
	uint8_t *arena;
	size_t arena_cap;
	size_t arena_used;

	struct recovery recovery;                    /* membership and recovery from lost state */
	struct paxos_prepare withheld[WITHHELD_MAX]; /* while recovering: one per instance */
	size_t withheld_count;
	bool ask_due;          /* a vote was withheld while recovering: ask the proposers at once */
	bool hello_due;        /* recovering, we heard a peer that has not answered us: say hello */
	uint32_t hellos_again; /* the peers a hello was repeated for since the last tick */
};

struct paxos_acceptor *paxos_acceptor_new(const struct paxos_acceptor_options *o,
					  struct paxos_storage *st, struct paxos_counters *counters)
{
	if (!o || !st || !counters)
		return NULL;
	struct paxos_acceptor *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->held = calloc(HELD_MAX, sizeof(*a->held));
	a->arena = malloc(ARENA_INITIAL);
	if (!a->held || !a->arena) {
		paxos_acceptor_free(a);
		return NULL;
	}
	a->arena_cap = ARENA_INITIAL;
	a->id = o->id;
	a->repeat_batch = o->repeat_batch && o->repeat_batch < PAXOS_ACCEPTOR_MAX_REPEAT
			      ? o->repeat_batch
			      : PAXOS_ACCEPTOR_MAX_REPEAT;
	a->repeat_budget =
	    o->repeat_budget ? o->repeat_budget : PAXOS_ACCEPTOR_REPEAT_BURST * a->repeat_batch;
	a->repeat_left = a->repeat_budget;
	a->st = st;
	a->counters = counters;
	recovery_init(&a->recovery, a->id, counters);
	return a;
}

/* Commits the open transaction, if any, counting the ones that wrote something. */
static int commit_txn(struct paxos_acceptor *a)
{
	if (!a->in_txn)
		return PAXOS_OK;
	int rc = a->st->ops->commit(a->st);
	a->in_txn = false;
	if (rc == PAXOS_OK && a->changed)
		a->counters->storage_commits++;
	a->changed = false;
	return rc;
}

void paxos_acceptor_free(struct paxos_acceptor *a)
{
	if (!a)
		return;
	/* Final marks still pending (paxos_acceptor_learned); losing them would be safe too. */
	if (!a->stopped)
		(void)commit_txn(a);
	free(a->held);
	free(a->arena);
	free(a);
}

/* Forgets the held replies of a batch that will not be sent. */
static void drop_held(struct paxos_acceptor *a)
{
	a->held_count = 0;
	a->arena_used = 0;
	a->trims_applied = 0;
	a->in_txn = false;
	a->changed = false;
}

/* Any storage error stops the acceptor for good; the caller sees the first error. */
static int fail(struct paxos_acceptor *a, int rc)
{
	a->stopped = true;
	drop_held(a);
	return rc < 0 ? rc : PAXOS_E_STORAGE;
}

/* Opens the batch's transaction on first need, so a batch of ignored messages costs none. */
static int ensure_txn(struct paxos_acceptor *a)
{
	if (a->in_txn)
		return PAXOS_OK;
	int rc = a->st->ops->begin(a->st);
	if (rc == PAXOS_OK)
		a->in_txn = true;
	return rc;
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
	if (rc == PAXOS_OK)
		a->changed = true;
	if (*dropped) {
		a->counters->instances_out_of_window++;
		return PAXOS_OK;
	}
	return rc;
}

/* Copies v to the end of the arena, growing it only past the largest batch so far.
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

/* Room is always there for one reply per message (see HELD_MAX and repeat_budget). */
static struct held_reply *hold(struct paxos_acceptor *a, enum paxos_msg_type type,
			       enum paxos_group to, enum reply_kind kind)
{
	struct held_reply *r = &a->held[a->held_count++];
	memset(&r->m, 0, sizeof(r->m));
	r->m.type = type;
	r->to = to;
	r->kind = kind;
	r->value_in_arena = false;
	r->value_off = 0;
	return r;
}

/*
 * The ballot a reject names, which the proposer must go above: the one promised, or past the
 * recovery fence when that is higher. The fence itself may not be voted for (the acceptor may
 * have promised it before it lost its state), so the reject names fence + 1: the proposer
 * holding exactly the fence (it told recovery its ballot) would take a reject naming its own
 * ballot for a late answer to an older request, ignore it, and wait for its phase 1 timeout.
 */
static paxos_ballot reject_ballot(const struct paxos_acceptor *a, const struct paxos_record *rec)
{
	paxos_ballot fence = a->recovery.fence;
	return rec->promised > fence ? rec->promised : fence + 1;
}

static void hold_reject(struct paxos_acceptor *a, paxos_iid iid, paxos_ballot promised)
{
	struct held_reply *r = hold(a, PAXOS_MSG_REJECT, PAXOS_GROUP_PROPOSERS, REPLY_REJECT);
	r->m.u.reject.iid = iid;
	r->m.u.reject.ballot = promised;
	r->m.u.reject.acceptor_id = a->id;
}

static struct held_reply *hold_accepted(struct paxos_acceptor *a, const struct paxos_record *rec,
					enum reply_kind kind)
{
	struct held_reply *r = hold(a, PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS, kind);
	r->m.u.accepted.iid = rec->iid;
	r->m.u.accepted.ballot = rec->accepted;
	r->m.u.accepted.value = rec->value;
	r->m.u.accepted.acceptor_id = a->id;
	r->m.u.accepted.final = rec->final;
	return r;
}

/*
 * A prepare for a final instance gets a promise for any ballot, carrying the chosen value
 * with value ballot p->ballot, and the record stays as it is. Safe: the proposer adopts the
 * value with the highest value ballot among a quorum's promises, and no other acceptor that
 * promises p->ballot can report more than p->ballot; one reporting exactly p->ballot holds
 * what this proposer already proposed at p->ballot, which Paxos makes the chosen value when
 * p->ballot is above the lowest ballot c it was chosen at. Below c the quorum that accepted c
 * refuses p->ballot for good (promised c or final), so whatever the proposer picks can never
 * be chosen. Not storing the promise is safe too: a final record never accepts anything.
 */
static int promise_final(struct paxos_acceptor *a, const struct paxos_prepare *p,
			 const struct paxos_record *rec)
{
	size_t off = arena_copy(a, &rec->value);
	if (off == SIZE_MAX)
		return PAXOS_OK; /* no memory: ignoring the prepare is safe */
	struct held_reply *r = hold(a, PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS, REPLY_PROMISE);
	r->m.u.promise.iid = p->iid;
	r->m.u.promise.ballot = p->ballot;
	r->m.u.promise.value_ballot = p->ballot;
	r->m.u.promise.acceptor_id = a->id;
	r->m.u.promise.value.len = rec->value.len;
	r->value_in_arena = true;
	r->value_off = off;
	return PAXOS_OK;
}

/*
 * An accept for a final instance, whatever its ballot, is answered with the chosen value
 * flagged final and changes nothing. Safe: the acceptor accepts nothing, which is always
 * allowed, and the answer tells the learners only what is true (the value was chosen); the
 * proposer's learner closes the instance with it, so the proposer moves its own value on.
 */
static int accepted_final(struct paxos_acceptor *a, const struct paxos_record *rec)
{
	size_t off = arena_copy(a, &rec->value);
	if (off == SIZE_MAX)
		return PAXOS_OK; /* no memory: staying silent is safe */
	struct held_reply *r = hold_accepted(a, rec, REPLY_ACCEPTED);
	r->m.u.accepted.value.data = NULL;
	r->value_in_arena = true;
	r->value_off = off;
	return PAXOS_OK;
}

/* Keeps a prepare withheld while recovering, the highest ballot per instance, while there is
 * room (beyond it the proposer's phase 1 timeout asks again). */
static void keep_withheld(struct paxos_acceptor *a, const struct paxos_prepare *p)
{
	for (size_t i = 0; i < a->withheld_count; i++)
		if (a->withheld[i].iid == p->iid) {
			if (p->ballot > a->withheld[i].ballot)
				a->withheld[i].ballot = p->ballot;
			return;
		}
	if (a->withheld_count < WITHHELD_MAX)
		a->withheld[a->withheld_count++] = *p;
}

static int handle_prepare(struct paxos_acceptor *a, const struct paxos_prepare *p);

/*
 * Once recovery ends, the prepares withheld meanwhile are answered as if they arrived now (a
 * late prepare is one Paxos always allows), with the floor and fence recovery set: a cluster
 * whose acceptors all start without state need not wait out the proposer's phase 1 timeout,
 * which may be long, after they recovered.
 */
static int answer_withheld(struct paxos_acceptor *a)
{
	size_t n = a->withheld_count;
	a->withheld_count = 0;
	for (size_t i = 0; i < n; i++) {
		struct paxos_prepare p = a->withheld[i];
		int rc = handle_prepare(a, &p);
		if (rc != PAXOS_OK)
			return rc;
	}
	return PAXOS_OK;
}

static int handle_prepare(struct paxos_acceptor *a, const struct paxos_prepare *p)
{
	if (!live_instance(a, p->iid))
		return PAXOS_OK;
	struct paxos_record rec;
	int rc = ensure_txn(a);
	if (rc == PAXOS_OK)
		rc = load(a, p->iid, &rec);
	if (rc != PAXOS_OK)
		return rc;
	if (rec.final)
		return promise_final(a, p, &rec);
	enum vote vote = recovery_may_vote(&a->recovery, p->iid, p->ballot, false);
	if (vote == WITHHOLD) {
		a->counters->votes_withheld++;
		if (a->recovery.recovering) {
			keep_withheld(a, p);
			a->ask_due = true;
		}
		return PAXOS_OK;
	}
	if (vote == REJECT_BELOW_FENCE || p->ballot < rec.promised) {
		hold_reject(a, p->iid, reject_ballot(a, &rec));
		return PAXOS_OK;
	}
	/* Copied before the put, which may overwrite what get returned. */
	size_t mark = a->arena_used, off = 0;
	if (rec.accepted != 0) {
		off = arena_copy(a, &rec.value);
		if (off == SIZE_MAX)
			return PAXOS_OK; /* no memory: ignoring the prepare is safe */
		rec.value.data = a->arena + off;
	}
	if (p->ballot > rec.promised) {
		bool dropped;
		rec.promised = p->ballot;
		rc = store(a, &rec, &dropped);
		if (rc != PAXOS_OK || dropped) {
			a->arena_used = mark;
			return rc;
		}
	}
	recovery_note_vote(&a->recovery, p->ballot);
	struct held_reply *r = hold(a, PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS, REPLY_PROMISE);
	r->m.u.promise.iid = p->iid;
	r->m.u.promise.ballot = p->ballot;
	r->m.u.promise.value_ballot = rec.accepted;
	r->m.u.promise.acceptor_id = a->id;
	if (rec.accepted != 0) {
		r->m.u.promise.value.len = rec.value.len;
		r->value_in_arena = true;
		r->value_off = off;
	}
	return PAXOS_OK;
}

static int handle_accept(struct paxos_acceptor *a, const struct paxos_accept *acc)
{
	if (!live_instance(a, acc->iid) || (acc->value.len > 0 && !acc->value.data))
		return PAXOS_OK;
	struct paxos_record rec;
	int rc = ensure_txn(a);
	if (rc == PAXOS_OK)
		rc = load(a, acc->iid, &rec);
	if (rc != PAXOS_OK)
		return rc;
	if (rec.final)
		return accepted_final(a, &rec);
	enum vote vote = recovery_may_vote(&a->recovery, acc->iid, acc->ballot, true);
	if (vote == WITHHOLD) {
		a->counters->votes_withheld++;
		if (a->recovery.recovering)
			a->ask_due = true;
		return PAXOS_OK;
	}
	if (vote == REJECT_BELOW_FENCE || acc->ballot < rec.promised) {
		hold_reject(a, acc->iid, reject_ballot(a, &rec));
		return PAXOS_OK;
	}
	bool dropped;
	rec.promised = acc->ballot;
	rec.accepted = acc->ballot;
	rec.value = acc->value; /* the caller's, valid for the whole batch */
	rc = store(a, &rec, &dropped);
	if (rc != PAXOS_OK || dropped)
		return rc;
	recovery_note_vote(&a->recovery, acc->ballot);
	/* Learners heard the accept itself: (iid, ballot) names its value. */
	struct held_reply *r = hold_accepted(a, &rec, REPLY_ACCEPTED);
	r->m.u.accepted.value = (struct paxos_value){NULL, 0};
	r->m.u.accepted.valueless = true;
	return PAXOS_OK;
}

/*
 * Replies a repeat request may add: what the held array has left once every message after
 * this one has its own slot kept free, and the withheld prepares theirs.
 */
static size_t repeat_budget(const struct paxos_acceptor *a, size_t messages_after)
{
	size_t taken = a->held_count + messages_after + WITHHELD_MAX;
	return taken < HELD_MAX ? HELD_MAX - taken : 0;
}

/*
 * Read-only. The range is clipped to live, accepted instances, to repeat_batch of them, to the
 * tick's repeat budget and to what the batch can hold, so an absurd request costs no more than
 * a fair one, and a flood of them no more than the budget; the learner asks again for the
 * rest. Trimmed instances cannot be sent: the learner is told so once (thesis 3.4.1), then
 * gets whatever is left of the range.
 */
static int handle_repeat(struct paxos_acceptor *a, const struct paxos_repeat *r,
			 size_t messages_after)
{
	if (a->repeat_left == 0) {
		a->counters->repeats_deferred++;
		return PAXOS_OK;
	}
	size_t budget = repeat_budget(a, messages_after);
	if (budget > a->repeat_left)
		budget = a->repeat_left;
	size_t budget_at_start = budget;
	paxos_iid trim = a->st->ops->trim_iid(a->st);
	paxos_iid asked = r->from ? r->from : 1; /* from 0 means from the first instance */
	if (budget > 0 && trim != 0 && asked <= r->to && asked <= trim) {
		struct held_reply *t =
		    hold(a, PAXOS_MSG_TRIMMED, PAXOS_GROUP_LEARNERS, REPLY_TRIMMED);
		t->m.u.trimmed.acceptor_id = a->id;
		t->m.u.trimmed.iid = trim;
		budget--;
	}

	paxos_iid last = a->st->ops->highest_accepted(a->st);
	paxos_iid first = asked > trim ? asked : trim + 1;
	if (r->to < last)
		last = r->to;
	if (r->to >= asked && r->to - asked >= a->repeat_batch)
		a->counters->repeats_capped++; /* no learner asks for more */
	if (first > last || trim == UINT64_MAX || budget == 0) {
		a->repeat_left -= (uint32_t)(budget_at_start - budget);
		return PAXOS_OK;
	}
	if (last - first >= a->repeat_batch)
		last = first + a->repeat_batch - 1;

	int rc = ensure_txn(a);
	if (rc != PAXOS_OK)
		return rc;
	for (paxos_iid iid = first; iid <= last && budget > 0; iid++) {
		struct paxos_record rec;
		rc = a->st->ops->get(a->st, iid, &rec);
		if (rc < 0)
			return rc;
		if (rc == 0 || rec.accepted == 0)
			continue;
		if (a->arena_used > 0 && rec.value.len > REPEAT_ARENA_MAX - a->arena_used)
			break;
		size_t off = arena_copy(a, &rec.value);
		if (off == SIZE_MAX)
			break;
		rec.iid = iid;
		struct held_reply *h = hold_accepted(a, &rec, REPLY_REPEATED);
		h->m.u.accepted.value.data = NULL;
		h->value_in_arena = true;
		h->value_off = off;
		budget--;
	}
	a->repeat_left -= (uint32_t)(budget_at_start - budget);
	return PAXOS_OK;
}

paxos_iid paxos_acceptor_trim_limit(const struct paxos_acceptor *a)
{
	return a->decided_known ? a->decided : a->st->ops->highest_accepted(a->st);
}

void paxos_acceptor_decided(struct paxos_acceptor *a, paxos_iid iid)
{
	if (!a->decided_known || iid > a->decided)
		a->decided = iid;
	a->decided_known = true;
}

/* A trim drops instances for good: an undecided one trimmed by a quorum can never be learned,
 * so it goes no further than the instances known decided (paxos_acceptor_decided). */
static int handle_trim(struct paxos_acceptor *a, const struct paxos_trim *t)
{
	paxos_iid to = t->iid, limit = paxos_acceptor_trim_limit(a);
	if (to > limit) {
		a->counters->trims_clamped++;
		to = limit;
	}
	if (to <= a->st->ops->trim_iid(a->st))
		return PAXOS_OK;
	int rc = ensure_txn(a);
	if (rc == PAXOS_OK)
		rc = a->st->ops->trim(a->st, to);
	if (rc == PAXOS_OK) {
		a->trims_applied++;
		a->changed = true;
	}
	return rc;
}

/* Another acceptor's hello: a recovering one gets what this one accepted and promised. */
static int handle_hello(struct paxos_acceptor *a, const struct paxos_acceptor_hello *h)
{
	bool answer, hello_now;
	int rc = recovery_handle_hello(&a->recovery, h, &answer, &hello_now);
	if (hello_now)
		a->hello_due = true;
	if (rc == PAXOS_OK && recovery_waits_for(&a->recovery, h->acceptor_id) &&
	    !(a->hellos_again & (1u << h->acceptor_id))) {
		a->hellos_again |= 1u << h->acceptor_id; /* once per peer and tick */
		a->hello_due = true;
	}
	if (rc != PAXOS_OK || !answer)
		return rc;
	paxos_iid highest = a->st->ops->highest_accepted(a->st);
	paxos_iid trim = a->st->ops->trim_iid(a->st);
	struct held_reply *r =
	    hold(a, PAXOS_MSG_RECOVER_INFO, PAXOS_GROUP_ACCEPTORS, REPLY_RECOVER_INFO);
	recovery_answer(&a->recovery, h, trim > highest ? trim : highest, &r->m.u.recover_info);
	return PAXOS_OK;
}

static int handle_one(struct paxos_acceptor *a, const struct paxos_message *m,
		      size_t messages_after)
{
	if (!paxos_msg_plausible(m)) {
		/* Promising it would lock every proposer out of the instance for good. */
		a->counters->implausible_ballots++;
		return PAXOS_OK;
	}
	switch (m->type) {
	case PAXOS_MSG_PREPARE:
		return handle_prepare(a, &m->u.prepare);
	case PAXOS_MSG_ACCEPT:
		return handle_accept(a, &m->u.accept);
	case PAXOS_MSG_REPEAT:
		return handle_repeat(a, &m->u.repeat, messages_after);
	case PAXOS_MSG_TRIM:
		return handle_trim(a, &m->u.trim);
	case PAXOS_MSG_ACCEPTOR_HELLO:
		return handle_hello(a, &m->u.acceptor_hello);
	case PAXOS_MSG_RECOVER_INFO: {
		bool recovering = a->recovery.recovering;
		recovery_handle_info(&a->recovery, &m->u.recover_info);
		return recovering && !a->recovery.recovering ? answer_withheld(a) : PAXOS_OK;
	}
	default:
		return PAXOS_OK; /* not for acceptors */
	}
}

/* Sends what the committed batch held, counting each reply as it goes out. */
static void emit_held(struct paxos_acceptor *a, const struct paxos_emitter *out)
{
	for (size_t i = 0; i < a->held_count; i++) {
		struct held_reply *r = &a->held[i];
		switch (r->kind) {
		case REPLY_PROMISE:
			a->counters->promises_sent++;
			if (r->value_in_arena)
				r->m.u.promise.value.data = a->arena + r->value_off;
			break;
		case REPLY_REJECT:
			a->counters->rejects_sent++;
			break;
		case REPLY_ACCEPTED:
		case REPLY_REPEATED:
			if (r->kind == REPLY_ACCEPTED)
				a->counters->accepteds_sent++;
			else
				a->counters->repeats_answered++;
			if (r->value_in_arena)
				r->m.u.accepted.value.data = a->arena + r->value_off;
			break;
		case REPLY_TRIMMED:
		case REPLY_RECOVER_INFO:
			break;
		}
		paxos_emit(out, r->to, &r->m);
	}
	a->counters->instances_trimmed += a->trims_applied;
	drop_held(a);
}

/* One group commit over at most PAXOS_ACCEPTOR_MAX_BATCH messages. */
static int handle_chunk(struct paxos_acceptor *a, const struct paxos_message *msgs, size_t n,
			const struct paxos_emitter *out)
{
	for (size_t i = 0; i < n; i++) {
		int rc = handle_one(a, &msgs[i], n - i - 1);
		if (rc == PAXOS_E_DUPLICATE) /* once more, so that the running one hears of us */
			recovery_emit_hello(&a->recovery, out);
		if (rc != PAXOS_OK)
			return fail(a, rc);
	}
	int rc = commit_txn(a);
	if (rc != PAXOS_OK)
		return fail(a, rc);
	emit_held(a, out);
	/* A proposer is at work while we recover: ask now, not at the next tick, so that its
	 * prepares are answered before its phase 1 timeout. One question per batch. */
	if (a->ask_due) {
		a->ask_due = false;
		recovery_emit_ask(&a->recovery, out);
	}
	/* Likewise a peer that started after our hello: it answers this one. */
	if (a->hello_due) {
		a->hello_due = false;
		recovery_emit_hello(&a->recovery, out);
	}
	return PAXOS_OK;
}

int paxos_acceptor_handle_batch(struct paxos_acceptor *a, const struct paxos_message *msgs,
				size_t n, const struct paxos_emitter *out)
{
	if (!a || (!msgs && n > 0) || !out)
		return PAXOS_E_INVALID;
	if (a->stopped)
		return PAXOS_E_STORAGE;
	while (n > 0) {
		size_t chunk = n < PAXOS_ACCEPTOR_MAX_BATCH ? n : PAXOS_ACCEPTOR_MAX_BATCH;
		int rc = handle_chunk(a, msgs, chunk, out);
		if (rc != PAXOS_OK)
			return rc;
		msgs += chunk;
		n -= chunk;
	}
	return PAXOS_OK;
}

int paxos_acceptor_handle(struct paxos_acceptor *a, const struct paxos_message *m,
			  const struct paxos_emitter *out)
{
	if (!m)
		return PAXOS_E_INVALID;
	return paxos_acceptor_handle_batch(a, m, 1, out);
}

void paxos_acceptor_set_retention(struct paxos_acceptor *a, uint64_t instances)
{
	if (a)
		a->retention = instances;
}

/* Trims what the retention bound leaves out, inside the tick's transaction. Once per tick,
 * not per message: a trim then drops a tick's worth of instances at once. */
static int apply_retention(struct paxos_acceptor *a, paxos_iid highest)
{
	if (a->retention == 0 || highest <= a->retention)
		return PAXOS_OK;
	paxos_iid keep_from = highest - a->retention + 1;
	/* Never beyond the instances known decided: one accept far ahead (a forgery) would
	 * otherwise trim all that is open. A recovered acceptor also trims up to its floor,
	 * whose instances it holds only as finals it learned (or as accepts of instances open
	 * when it recovered, retention's length behind the highest): its learner may never
	 * deliver them all if their history is gone, and memory must stay bounded. */
	if (a->decided_known) {
		paxos_iid decided = a->decided > a->recovery.floor ? a->decided : a->recovery.floor;
		if (keep_from > decided + 1)
			keep_from = decided + 1;
	}
	if (keep_from - 1 <= a->st->ops->trim_iid(a->st))
		return PAXOS_OK;
	int rc = a->st->ops->trim(a->st, keep_from - 1);
	if (rc == PAXOS_OK) {
		a->changed = true;
		a->counters->instances_trimmed++;
	}
	return rc;
}

static void emit_accepted_now(struct paxos_acceptor *a, const struct paxos_record *rec,
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

int paxos_acceptor_join(struct paxos_acceptor *a, const struct paxos_acceptor_membership *m)
{
	if (!a)
		return PAXOS_E_INVALID;
	a->withheld_count = 0;
	return recovery_join(&a->recovery, m);
}

bool paxos_acceptor_restored(const struct paxos_acceptor *a)
{
	const struct recovery *r = &a->recovery;
	return !r->recovering && (r->floor == 0 || (a->decided_known && a->decided >= r->floor));
}

void paxos_acceptor_recovery_wait(const struct paxos_acceptor *a,
				  struct paxos_acceptor_recovery_wait *w)
{
	recovery_wait(&a->recovery, w);
}

bool paxos_acceptor_recovering(const struct paxos_acceptor *a)
{
	return a->recovery.recovering;
}

paxos_iid paxos_acceptor_floor(const struct paxos_acceptor *a)
{
	return a->recovery.floor;
}

paxos_ballot paxos_acceptor_fence(const struct paxos_acceptor *a)
{
	return a->recovery.fence;
}

uint64_t paxos_acceptor_duplicate(const struct paxos_acceptor *a)
{
	return a->recovery.duplicate;
}

void paxos_acceptor_set_age(struct paxos_acceptor *a, uint64_t age_us)
{
	if (a)
		a->recovery.age_us = age_us ? age_us : 1;
}

bool paxos_acceptor_duplicate_newer(const struct paxos_acceptor *a)
{
	return a->recovery.duplicate_newer;
}

int paxos_acceptor_tick(struct paxos_acceptor *a, const struct paxos_emitter *out)
{
	if (!a || !out)
		return PAXOS_E_INVALID;
	if (a->stopped)
		return PAXOS_E_STORAGE;
	a->repeat_left = a->repeat_budget;
	a->hellos_again = 0;
	if (a->recovery.joined) {
		bool recovering = a->recovery.recovering;
		recovery_tick(&a->recovery, out);
		if (recovering && !a->recovery.recovering) {
			int rc = answer_withheld(a);
			if (rc != PAXOS_OK)
				return fail(a, rc);
		}
	}
	paxos_iid highest = a->st->ops->highest_accepted(a->st);
	/* The transaction may be open already with final marks (paxos_acceptor_learned): this
	 * commit makes them durable. */
	int rc = ensure_txn(a);
	if (rc == PAXOS_OK)
		rc = apply_retention(a, highest);
	if (rc != PAXOS_OK)
		return fail(a, rc);
	if (highest > a->st->ops->trim_iid(a->st)) {
		struct paxos_record rec;
		rc = a->st->ops->get(a->st, highest, &rec);
		if (rc < 0)
			return fail(a, rc);
		if (rc == 1 && rec.accepted != 0) {
			rec.iid = highest;
			/* Read-only: a resend, sent while the value is valid. */
			emit_accepted_now(a, &rec, out);
		}
	}
	rc = commit_txn(a);
	if (rc != PAXOS_OK)
		return fail(a, rc);
	emit_held(a, out); /* the answers to withheld prepares, when recovery just ended */

	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_STATE};
	m.u.acceptor_state.acceptor_id = a->id;
	/* A recovered acceptor's floor was reached before it: learners that look for the
	 * current instance (FROM_CURRENT) must not take its few records below for it. */
	m.u.acceptor_state.highest_accepted =
	    a->recovery.floor > highest ? a->recovery.floor : highest;
	m.u.acceptor_state.trim_iid = a->st->ops->trim_iid(a->st);
	paxos_emit(out, PAXOS_GROUP_LEARNERS, &m);
	return PAXOS_OK;
}

/*
 * Thesis 3.7.5: "this update does not need an immediate commit". The mark is written inside
 * the acceptor's transaction, which is left open: the next batch or tick commits it together
 * with its own changes, so learning costs no commit (no fsync) of its own. A crash before that
 * loses the mark, which is harmless: the record is then an ordinary one again.
 */
int paxos_acceptor_learned(struct paxos_acceptor *a, paxos_iid iid, const struct paxos_value *v)
{
	if (!a || !v || (v->len > 0 && !v->data) || a->held_count > 0)
		return PAXOS_E_INVALID; /* held replies: called from a batch's emitter */
	if (a->stopped)
		return PAXOS_E_STORAGE;
	if (!live_instance(a, iid))
		return PAXOS_OK; /* trimmed: nothing is kept for it any more */
	struct paxos_record rec;
	int rc = ensure_txn(a);
	if (rc == PAXOS_OK)
		rc = load(a, iid, &rec);
	if (rc != PAXOS_OK)
		return fail(a, rc);
	if (rec.final)
		return PAXOS_OK;
	rec.final = true;
	/* Usually the value this acceptor accepted: then the stored bytes stay where they are
	 * (a put of what get returned), else the chosen value, accepted at a higher ballot. */
	if (rec.accepted == 0 || rec.value.len != v->len ||
	    (v->len > 0 && memcmp(rec.value.data, v->data, v->len) != 0))
		rec.value = *v;
	/* A final record must read as holding a value (repeats and the highest-accepted mark
	 * skip records with accepted 0). Which ballot does not matter: every reply for a final
	 * record says final, and promises report the prepare's own ballot. Raising an empty
	 * promise to keep promised >= accepted is safe: the record never accepts again. */
	if (rec.accepted == 0) {
		if (rec.promised == 0)
			rec.promised = 1;
		rec.accepted = rec.promised;
	}
	bool dropped;
	rc = store(a, &rec, &dropped);
	return rc == PAXOS_OK ? PAXOS_OK : fail(a, rc);
}
