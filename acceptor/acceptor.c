/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Acceptor protocol logic (thesis 2.2.2, 3.4): per instance it remembers the highest ballot
 * promised and the last value accepted (thesis 2.2.2: "the acceptor keeps a state record,
 * consisting of <iid, B, V, VB>"), and answers repeat requests and trims for the learners. A
 * learning acceptor (thesis 3.7.5) also marks the instances its learner closed as final and from
 * then on only ever answers with the chosen value. The acceptor reads its storage but never
 * writes it: each step adds to a ready (paxos/acceptor.h, struct paxos_ready) the records to
 * write and the replies, each tagged with the write it reports on, and its driver writes the
 * records before it sends what they back, since an answer must never get ahead of the state it
 * promises. Thesis 3.4: "Any change to the state must be made permanent before sending the
 * corresponding acknowledgement." A step takes a whole batch of messages, written in one
 * transaction (group commit), as thesis 3.7.3 has it: batching "allows the acceptors to process
 * different requests and update their state in stable storage with a single atomic operation,
 * requiring a single (larger) disk write."
 *
 * The ready itself, its records, replies and arena, and its hand-over to the driver are in
 * ready.c, the one-call drivers in handle.c; state.h holds what they share.
 */
#include <paxos/acceptor.h>

#include "state.h"
#include "paxos_assert.h"

#include <stdlib.h>
#include <string.h>

/* Repeat answers stop once the held values reach PAXOS_REPEAT_ANSWER_BYTES; the learner asks
 * again for the rest. Bounds the arena even for a batch full of repeat requests, and the burst
 * every learner gets (answers go to the learners group), whose overruns of a socket buffer
 * lose accepted messages and start more repeats. */
#define REPEAT_ARENA_MAX PAXOS_REPEAT_ANSWER_BYTES

static void emit_to_ready(void *ctx, enum paxos_group to, const struct paxos_message *m);

struct paxos_acceptor *paxos_acceptor_new(const struct paxos_acceptor_options *o,
					  struct paxos_storage *st, struct paxos_counters *counters)
{
	if (!o || !st || !counters)
		return NULL;
	struct paxos_acceptor *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->records = calloc(RECORDS_MAX, sizeof(*a->records));
	a->pending = calloc(RECORDS_MAX, sizeof(*a->pending));
	a->slots = calloc(RECORD_SLOTS, sizeof(*a->slots));
	a->messages = calloc(MESSAGES_MAX, sizeof(*a->messages));
	a->meta = calloc(MESSAGES_MAX, sizeof(*a->meta));
	a->arena = malloc(ARENA_INITIAL);
	if (!a->records || !a->pending || !a->slots || !a->messages || !a->meta || !a->arena) {
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
	a->to_ready = (struct paxos_emitter){emit_to_ready, a};
	recovery_init(&a->recovery, a->id, counters);
	return a;
}

/* Final marks still waiting for a ready are dropped: losing them is harmless. */
void paxos_acceptor_free(struct paxos_acceptor *a)
{
	if (!a)
		return;
	free(a->records);
	free(a->pending);
	free(a->slots);
	free(a->messages);
	free(a->meta);
	free(a->arena);
	free(a);
}

static paxos_iid trim_iid(const struct paxos_acceptor *a)
{
	paxos_iid t = a->st->ops->trim_iid(a->st);
	return a->trim > t ? a->trim : t;
}

static paxos_iid highest_accepted(const struct paxos_acceptor *a)
{
	paxos_iid h = a->st->ops->highest_accepted(a->st);
	return a->highest > h ? a->highest : h;
}

/* Whether iid names an instance this acceptor may still hold. */
static bool live_instance(const struct paxos_acceptor *a, paxos_iid iid)
{
	return iid != 0 && iid > trim_iid(a);
}

/* Recovery's hellos and questions report nothing stored. */
static void emit_to_ready(void *ctx, enum paxos_group to, const struct paxos_message *m)
{
	struct paxos_acceptor *a = ctx;
	struct paxos_ready_message *r = acceptor_hold(a, m->type, to, REPLY_FREE, 0);
	r->m = *m;
}

/*
 * The ballot a reject names, which the proposer must go above. Thesis 3.4: "rather than just
 * dropping the request silently, it informs the sender about the currently accepted ballot with
 * a reject message." That is the one promised, or past the recovery fence when that is higher.
 * The fence itself may not be voted for (the acceptor may have promised it before it lost its
 * state), so the reject names fence + 1: the proposer holding exactly the fence (it told
 * recovery its ballot) would take a reject naming its own ballot for a late answer to an older
 * request, ignore it, and wait for its phase 1 timeout.
 */
static paxos_ballot reject_ballot(const struct paxos_acceptor *a, const struct paxos_record *rec)
{
	paxos_ballot fence = a->recovery.fence;
	return rec->promised > fence ? rec->promised : fence + 1;
}

/* A reject naming promised; fence: the ballot was at or below the recovery fence (counted
 * apart: after a recovery, the first round's rejects are the handshake, not contention). */
static void hold_reject(struct paxos_acceptor *a, paxos_iid iid, paxos_ballot promised, bool fence)
{
	struct paxos_ready_message *r =
	    acceptor_hold(a, PAXOS_MSG_REJECT, PAXOS_GROUP_PROPOSERS,
			  fence ? REPLY_FENCE_REJECT : REPLY_REJECT, iid);
	r->m.u.reject.iid = iid;
	r->m.u.reject.ballot = promised;
	r->m.u.reject.acceptor_id = a->id;
}

/* An accepted for rec, its value where v says (pinned). */
static struct paxos_ready_message *hold_accepted(struct paxos_acceptor *a,
						 const struct paxos_record *rec,
						 const struct value_ref *v, enum reply_kind kind)
{
	struct paxos_ready_message *r =
	    acceptor_hold(a, PAXOS_MSG_ACCEPTED, PAXOS_GROUP_LEARNERS, kind, rec->iid);
	r->m.u.accepted.iid = rec->iid;
	r->m.u.accepted.ballot = rec->accepted;
	acceptor_hold_value(a, r, &r->m.u.accepted.value, &rec->value, v);
	r->m.u.accepted.acceptor_id = a->id;
	r->m.u.accepted.final = rec->final;
	r->m.u.accepted.generation = a->recovery.generation;
	return r;
}

/*
 * A prepare for a final instance gets a promise for any ballot, carrying the chosen value with
 * value ballot p->ballot, and the record stays as it is. Thesis 3.7.5: "Storing this final value
 * and refusing to modify it later, does not violate the protocol." Safe: the proposer adopts the
 * value with the highest value ballot among a quorum's promises, and no other acceptor that
 * promises p->ballot can report more than p->ballot; one reporting exactly p->ballot holds what
 * this proposer already proposed at p->ballot, which Paxos makes the chosen value when p->ballot
 * is above the lowest ballot c it was chosen at. Below c the quorum that accepted c refuses
 * p->ballot for good (promised c or final), so whatever the proposer picks can never be chosen.
 * Not storing the promise is safe too: a final record never accepts anything.
 */
static int promise_final(struct paxos_acceptor *a, const struct paxos_prepare *p,
			 const struct paxos_record *rec, struct value_ref *v)
{
	if (!acceptor_pin(a, rec, v))
		return PAXOS_OK; /* no memory: ignoring the prepare is safe */
	struct paxos_ready_message *r =
	    acceptor_hold(a, PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS, REPLY_PROMISE, p->iid);
	r->m.u.promise.iid = p->iid;
	r->m.u.promise.ballot = p->ballot;
	r->m.u.promise.value_ballot = p->ballot;
	r->m.u.promise.acceptor_id = a->id;
	acceptor_hold_value(a, r, &r->m.u.promise.value, &rec->value, v);
	return PAXOS_OK;
}

/*
 * An accept for a final instance, whatever its ballot, is answered with the chosen value
 * flagged final and changes nothing. Safe: the acceptor accepts nothing, which is always
 * allowed, and the answer tells the learners only what is true (the value was chosen); the
 * proposer's learner closes the instance with it, so the proposer moves its own value on.
 */
static int accepted_final(struct paxos_acceptor *a, const struct paxos_record *rec,
			  struct value_ref *v)
{
	if (!acceptor_pin(a, rec, v))
		return PAXOS_OK; /* no memory: staying silent is safe */
	hold_accepted(a, rec, v, REPLY_ACCEPTED);
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

/*
 * Phase 1b. Thesis 2.2.2: "Unless the ballot B in the acceptor record for instance i contains
 * a number higher than b, the acceptor grants the request. It sets B = b and answers with a
 * promise message, consisting of <i, b, V, VB>". A prepare it does not grant gets a reject.
 */
static int handle_prepare(struct paxos_acceptor *a, const struct paxos_prepare *p)
{
	if (!live_instance(a, p->iid))
		return PAXOS_OK;
	struct paxos_record rec;
	struct value_ref v;
	int rc = acceptor_load(a, p->iid, &rec, &v);
	if (rc != PAXOS_OK)
		return rc;
	if (rec.final)
		return promise_final(a, p, &rec, &v);
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
		hold_reject(a, p->iid, reject_ballot(a, &rec), vote == REJECT_BELOW_FENCE);
		return PAXOS_OK;
	}
	/* Copied out of the store: the record and the promise outlive the driver's writes. */
	size_t mark = a->arena_used;
	if (rec.accepted != 0 && !acceptor_pin(a, &rec, &v))
		return PAXOS_OK; /* no memory: ignoring the prepare is safe */
	if (p->ballot > rec.promised) {
		rec.promised = p->ballot;
		if (!acceptor_store(a, &rec, &v)) {
			a->arena_used = mark;
			return PAXOS_OK;
		}
	}
	recovery_note_vote(&a->recovery, p->ballot);
	struct paxos_ready_message *r =
	    acceptor_hold(a, PAXOS_MSG_PROMISE, PAXOS_GROUP_PROPOSERS, REPLY_PROMISE, p->iid);
	r->m.u.promise.iid = p->iid;
	r->m.u.promise.ballot = p->ballot;
	r->m.u.promise.value_ballot = rec.accepted;
	r->m.u.promise.acceptor_id = a->id;
	if (rec.accepted != 0)
		acceptor_hold_value(a, r, &r->m.u.promise.value, &rec.value, &v);
	return PAXOS_OK;
}

/*
 * Phase 2b. Thesis 2.2.2: "Unless the ballot B in the acceptor record for instance i contains
 * a number higher than b, the acceptor grants the request. It sets B = b, V = v, VB = b and
 * answers with a learn message, consisting of <i, b, v>." The learn message (accepted) here
 * leaves v out: the learners heard the leader's accept, and (i, b) names its value, so each
 * value crosses the network once rather than once per acceptor. An accept it does not grant gets
 * a reject too, where thesis 3.4 rejects only prepares: a proposer whose phase 2 lost to a
 * higher ballot then moves on without waiting for its timeout.
 */
static int handle_accept(struct paxos_acceptor *a, const struct paxos_accept *acc)
{
	if (!live_instance(a, acc->iid) || (acc->value.len > 0 && !acc->value.data))
		return PAXOS_OK;
	struct paxos_record rec;
	struct value_ref v;
	int rc = acceptor_load(a, acc->iid, &rec, &v);
	if (rc != PAXOS_OK)
		return rc;
	if (rec.final)
		return accepted_final(a, &rec, &v);
	enum vote vote = recovery_may_vote(&a->recovery, acc->iid, acc->ballot, true);
	if (vote == WITHHOLD) {
		a->counters->votes_withheld++;
		if (a->recovery.recovering)
			a->ask_due = true;
		return PAXOS_OK;
	}
	if (vote == REJECT_BELOW_FENCE || acc->ballot < rec.promised) {
		hold_reject(a, acc->iid, reject_ballot(a, &rec), vote == REJECT_BELOW_FENCE);
		return PAXOS_OK;
	}
	PAXOS_ASSERT(acc->ballot >= rec.promised, "an accept below the promise is refused");
	rec.promised = acc->ballot;
	rec.accepted = acc->ballot;
	rec.value = acc->value; /* the step's, valid until advance */
	v = (struct value_ref){VALUE_STABLE, 0};
	if (!acceptor_store(a, &rec, &v))
		return PAXOS_OK;
	recovery_note_vote(&a->recovery, acc->ballot);
	/* Learners heard the accept itself: (iid, ballot) names its value. The vote goes to the
	 * learners that count votes; learning acceptors learn from the leader's next accept. */
	struct paxos_ready_message *r = hold_accepted(a, &rec, &v, REPLY_ACCEPTED);
	r->to = PAXOS_GROUP_VOTES;
	r->m.u.accepted.value = (struct paxos_value){NULL, 0};
	r->m.u.accepted.valueless = true;
	return PAXOS_OK;
}

/*
 * Replies a repeat request may add: what the ready has left once every message after this one
 * has its own slot kept free, and the withheld prepares theirs.
 */
static size_t repeat_budget(const struct paxos_acceptor *a, size_t messages_after)
{
	size_t taken = a->message_count + messages_after + WITHHELD_MAX;
	return taken < HELD_MAX ? HELD_MAX - taken : 0;
}

/*
 * Read-only. The range is clipped to live, accepted instances, to repeat_batch of them, to the
 * tick's repeat budget and to what the ready can hold, so an absurd request costs no more than
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
	paxos_iid trim = trim_iid(a);
	paxos_iid asked = r->from ? r->from : 1; /* from 0 means from the first instance */
	if (budget > 0 && trim != 0 && asked <= r->to && asked <= trim) {
		struct paxos_ready_message *t =
		    acceptor_hold(a, PAXOS_MSG_TRIMMED, PAXOS_GROUP_LEARNERS, REPLY_TRIMMED, 0);
		t->m.u.trimmed.acceptor_id = a->id;
		t->m.u.trimmed.iid = trim;
		t->m.u.trimmed.generation = a->recovery.generation;
		budget--;
	}

	paxos_iid last = highest_accepted(a);
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

	for (paxos_iid iid = first; iid <= last && budget > 0; iid++) {
		struct paxos_record rec;
		struct value_ref v;
		int rc = acceptor_load(a, iid, &rec, &v);
		if (rc != PAXOS_OK)
			return rc;
		if (rec.accepted == 0)
			continue;
		if (a->repeat_bytes > 0 && rec.value.len > REPEAT_ARENA_MAX - a->repeat_bytes)
			break;
		size_t used = a->arena_used;
		if (!acceptor_pin(a, &rec, &v))
			break;
		a->repeat_bytes += a->arena_used - used;
		hold_accepted(a, &rec, &v, REPLY_REPEATED);
		budget--;
	}
	a->repeat_left -= (uint32_t)(budget_at_start - budget);
	return PAXOS_OK;
}

paxos_iid paxos_acceptor_trim_limit(const struct paxos_acceptor *a)
{
	return a->decided_known ? a->decided : highest_accepted(a);
}

void paxos_acceptor_decided(struct paxos_acceptor *a, paxos_iid iid)
{
	if (!a->decided_known || iid > a->decided)
		a->decided = iid;
	a->decided_known = true;
}

/*
 * Thesis 3.4.1: on snapshot(i) "each acceptor knows that it can safely drop informations about
 * instances up to i, truncating their database." A trim drops instances for good: an undecided
 * one trimmed by a quorum can never be learned, so unlike the thesis' snapshot it goes no
 * further than the instances known decided (paxos_acceptor_decided).
 */
static int handle_trim(struct paxos_acceptor *a, const struct paxos_trim *t)
{
	paxos_iid to = t->iid, limit = paxos_acceptor_trim_limit(a);
	if (to > limit) {
		a->counters->trims_clamped++;
		to = limit;
	}
	if (to <= trim_iid(a))
		return PAXOS_OK;
	a->trim = to;
	a->trims_applied++;
	return PAXOS_OK;
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
	paxos_iid highest = highest_accepted(a);
	paxos_iid trim = trim_iid(a);
	struct paxos_ready_message *r =
	    acceptor_hold(a, PAXOS_MSG_RECOVER_INFO, PAXOS_GROUP_ACCEPTORS, REPLY_STATE, 0);
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

/* Whether a step may start: not stopped, no ready taken and not advanced. */
int acceptor_step_allowed(const struct paxos_acceptor *a)
{
	if (a->stopped)
		return PAXOS_E_STORAGE;
	return a->taken ? PAXOS_E_INVALID : PAXOS_OK;
}

int paxos_acceptor_step(struct paxos_acceptor *a, const struct paxos_message *msgs, size_t n)
{
	if (!a || (!msgs && n > 0) || n > PAXOS_ACCEPTOR_MAX_BATCH)
		return PAXOS_E_INVALID;
	int rc = acceptor_step_allowed(a);
	if (rc != PAXOS_OK)
		return rc;
	a->repeat_bytes = 0;
	for (size_t i = 0; i < n; i++) {
		rc = handle_one(a, &msgs[i], n - i - 1);
		if (rc != PAXOS_OK) {
			rc = acceptor_fail(a, rc);
			if (rc == PAXOS_E_DUPLICATE) /* once more: the running one hears of us */
				recovery_emit_hello(&a->recovery, &a->to_ready);
			return rc;
		}
	}
	/* A proposer is at work while we recover: ask now, not at the next tick, so that its
	 * prepares are answered before its phase 1 timeout. One question per step. */
	if (a->ask_due) {
		a->ask_due = false;
		recovery_emit_ask(&a->recovery, &a->to_ready);
	}
	/* Likewise a peer that started after our hello: it answers this one. */
	if (a->hello_due) {
		a->hello_due = false;
		recovery_emit_hello(&a->recovery, &a->to_ready);
	}
	return PAXOS_OK;
}

void paxos_acceptor_set_retention(struct paxos_acceptor *a, uint64_t instances)
{
	if (a)
		a->retention = instances;
}

/* Trims what the retention bound leaves out, with the tick's ready. Once per tick, not per
 * message: a trim then drops a tick's worth of instances at once. */
static void apply_retention(struct paxos_acceptor *a, paxos_iid highest)
{
	/* Measured from the highest instance known decided, not the highest accepted: one accept
	 * far ahead (a forgery) would otherwise move the bound past every instance decided, and
	 * the history retention is there to keep would go with what is open. A recovered
	 * acceptor measures from its floor at least, whose instances it holds only as finals it
	 * learned (or as accepts of instances open when it recovered): its learner may never
	 * deliver them all if their history is gone, and memory must stay bounded. Without a
	 * learner beside it nothing is known decided: then from the highest accepted. */
	paxos_iid from = highest;
	if (a->decided_known) {
		paxos_iid decided = a->decided > a->recovery.floor ? a->decided : a->recovery.floor;
		if (from > decided)
			from = decided;
	}
	if (a->retention == 0 || from <= a->retention)
		return;
	paxos_iid keep_from = from - a->retention + 1;
	if (keep_from - 1 <= trim_iid(a))
		return;
	a->trim = keep_from - 1;
	a->trims_applied++;
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

uint64_t paxos_acceptor_generation(const struct paxos_acceptor *a)
{
	return a->recovery.generation;
}

void paxos_acceptor_set_old_peers(struct paxos_acceptor *a, bool live)
{
	a->recovery.old_peers = live;
}

enum paxos_acceptor_log paxos_acceptor_began_log(const struct paxos_acceptor *a)
{
	return (enum paxos_acceptor_log)a->recovery.new_log;
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

uint32_t paxos_acceptor_duplicate_older_heard(const struct paxos_acceptor *a)
{
	const struct recovery *r = &a->recovery;
	bool recent = r->ticks - r->older_first < 2 * r->m.duplicate_ticks;
	return recent && r->older_heard < r->m.duplicate_ticks ? r->older_heard : 0;
}

bool paxos_acceptor_duplicate_newer(const struct paxos_acceptor *a)
{
	return a->recovery.duplicate_newer;
}

int paxos_acceptor_step_tick(struct paxos_acceptor *a)
{
	if (!a)
		return PAXOS_E_INVALID;
	int rc = acceptor_step_allowed(a);
	if (rc != PAXOS_OK)
		return rc;
	a->repeat_left = a->repeat_budget;
	a->hellos_again = 0;
	a->repeat_bytes = 0;
	if (a->recovery.joined) {
		bool recovering = a->recovery.recovering;
		recovery_tick(&a->recovery, &a->to_ready);
		if (recovering && !a->recovery.recovering) {
			rc = answer_withheld(a);
			if (rc != PAXOS_OK)
				return acceptor_fail(a, rc);
		}
	}
	paxos_iid highest = highest_accepted(a);
	apply_retention(a, highest);
	/* Thesis 2.2.2: "The acceptor should periodically repeat the state of the highest
	 * instance for which some value was accepted." */
	if (highest > trim_iid(a)) {
		struct paxos_record rec;
		struct value_ref v;
		rc = acceptor_load(a, highest, &rec, &v);
		if (rc != PAXOS_OK)
			return acceptor_fail(a, rc);
		/* A resend of what is stored (or about to be): it waits for that write too. */
		if (rec.accepted != 0 && acceptor_pin(a, &rec, &v))
			hold_accepted(a, &rec, &v, REPLY_STATE);
	}
	struct paxos_ready_message *r =
	    acceptor_hold(a, PAXOS_MSG_ACCEPTOR_STATE, PAXOS_GROUP_LEARNERS, REPLY_STATE, 0);
	r->m.u.acceptor_state.acceptor_id = a->id;
	/* A recovered acceptor's floor was reached before it: learners that look for the
	 * current instance (FROM_CURRENT) must not take its few records below for it. */
	r->m.u.acceptor_state.highest_accepted =
	    a->recovery.floor > highest ? a->recovery.floor : highest;
	r->m.u.acceptor_state.trim_iid = trim_iid(a);
	r->m.u.acceptor_state.generation = a->recovery.generation;
	r->m.u.acceptor_state.recovering = a->recovery.recovering;
	/* The proposers hear it too: it is what tells a proposer it still reaches a quorum of
	 * acceptors (check-quorum, paxos/election.h) when nothing else comes, a lean follower
	 * reading the proposers group only. A sign of life, whose figures no proposer reads: it
	 * waits for no write, so that a slow flush does not put a leader out. */
	struct paxos_ready_message *p =
	    acceptor_hold(a, PAXOS_MSG_ACCEPTOR_STATE, PAXOS_GROUP_PROPOSERS, REPLY_FREE, 0);
	p->m.u.acceptor_state = r->m.u.acceptor_state;
	return PAXOS_OK;
}

/*
 * Thesis 3.7.5: "This update to the state in the acceptor does not require an immediate commit
 * to stable storage." The mark goes into the ready, written with the next step's changes, so
 * learning costs no commit (no fsync) of its own. A crash before that loses the mark, which is
 * harmless: the record is then an ordinary one again; so is a mark dropped when the ready has no
 * room for it.
 */
int paxos_acceptor_learned(struct paxos_acceptor *a, paxos_iid iid, const struct paxos_value *v)
{
	if (!a || !v || (v->len > 0 && !v->data) || a->taken)
		return PAXOS_E_INVALID; /* a ready taken: called from its sending */
	if (a->stopped)
		return PAXOS_E_STORAGE;
	if (!live_instance(a, iid))
		return PAXOS_OK; /* trimmed: nothing is kept for it any more */
	struct paxos_record rec;
	struct value_ref ref;
	int rc = acceptor_load(a, iid, &rec, &ref);
	if (rc != PAXOS_OK)
		return acceptor_fail(a, rc);
	if (rec.final)
		return PAXOS_OK;
	rec.final = true;
	/* Usually the value this acceptor accepted, else the chosen value, accepted at a
	 * higher ballot. Either way copied: v and the store's bytes do not outlive the call. */
	if (rec.accepted == 0 || rec.value.len != v->len ||
	    (v->len > 0 && memcmp(rec.value.data, v->data, v->len) != 0)) {
		rec.value = *v;
		ref = (struct value_ref){VALUE_STORE, 0};
	} else if (ref.home == VALUE_STABLE && rec.value.len > 0) {
		ref.home = VALUE_STORE; /* a step's message, gone by the next step */
	}
	/* A final record must read as holding a value (repeats and the highest-accepted mark
	 * skip records with accepted 0). Which ballot does not matter: every reply for a final
	 * record says final, and promises report the prepare's own ballot. Raising an empty
	 * promise to keep promised >= accepted is safe: the record never accepts again. */
	if (rec.accepted == 0) {
		if (rec.promised == 0)
			rec.promised = 1;
		rec.accepted = rec.promised;
	}
	size_t mark = a->arena_used;
	if (!acceptor_pin(a, &rec, &ref) || !acceptor_store(a, &rec, &ref))
		a->arena_used = mark; /* no room: the mark is dropped, harmless */
	return PAXOS_OK;
}
