/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The learner core (thesis 3.3, 3.6.2): counts accepted messages per instance in a ring of
 * preallocated slots (each acceptor's latest ballot per instance), closes an instance once a
 * quorum reports one ballot or one acceptor says the value is final, delivers closed instances in
 * order and asks the acceptors again for the holes it cannot fill by listening. Accepted messages
 * usually carry no value: the learner keeps the value of the leader's accept it heard, and asks
 * for a repeat (which carries it) when a quorum names a ballot whose value it lacks. Instances
 * trimmed by so many acceptors that no quorum can answer for them any more are skipped, and the
 * application is told (thesis 3.4.1). It also fetches single past instances on request (thesis
 * 3.3), counting the answers in a small table of its own, apart from delivery.
 *
 * Thesis 2.2.1: "Whenever the learner realizes that a majority of acceptors has been reached
 * for an instance, it knows that the value for that instance is permanently and unambiguously
 * chosen." The votes are counted in slots.c.
 *
 * What a step decides (closed, delivered, trimmed) is not told through callbacks but added to
 * an array of events allocated with the learner, its ready (the Ready pattern): the driver
 * hands them on and advances. paxos_learner_handle() is that, with the options' callbacks.
 *
 * Votes and values per slot are counted in slots.c, catch-up and hole checks are in
 * catch_up.c, fetches in fetch.c; window.h holds what they share.
 */
#include <paxos/learner.h>

#include "window.h"
#include "paxos_assert.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Events of one step beyond two per slot: an instance reported closed again, a trim. */
#define EVENTS_EXTRA 4u

static bool options_valid(const struct paxos_learner_options *o)
{
	return o->acceptors > 0 && o->acceptors <= PAXOS_MAX_ACCEPTORS && o->window > 0 &&
	       o->repeat_batch > 0 &&
	       (o->start == PAXOS_START_FROM_FIRST || o->start == PAXOS_START_FROM_CURRENT);
}

uint64_t paxos_learner_memory(const struct paxos_learner_options *o)
{
	if (!o)
		return 0;
	struct paxos_learner *l = NULL; /* for the sizes of the arrays' elements only */
	uint64_t per_instance = sizeof(*l->slots) + (uint64_t)o->max_value + SLOT_SMALL +
				(uint64_t)o->acceptors * sizeof(*l->votes) + 2 * sizeof(*l->events);
	return sizeof(*l) + o->window * per_instance + 1 + EVENTS_EXTRA * sizeof(*l->events) +
	       (uint64_t)PAXOS_LEARNER_MAX_FETCHES * o->max_value + 1;
}

struct paxos_learner *paxos_learner_new(const struct paxos_learner_options *o,
					struct paxos_counters *counters)
{
	if (!o || !counters || !options_valid(o))
		return NULL;
	if (o->max_value && o->window > SIZE_MAX / o->max_value)
		return NULL;
	struct paxos_learner *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->opt = *o;
	l->counters = counters;
	l->quorum = o->acceptors / 2 + 1;
	l->all = o->acceptors >= 32 ? UINT32_MAX : (1u << o->acceptors) - 1;
	l->started = o->start == PAXOS_START_FROM_FIRST || o->start_iid;
	l->next = o->start_iid ? o->start_iid : 1;
	l->began_at = l->next;
	if (o->start_generation_known && l->next > 1) {
		l->generation = o->start_generation;
		l->generation_known = true;
	}
	if (o->membership && l->next > 1) /* what lies below is not delivered here */
		paxos_membership_skip_to(o->membership, l->next - 1);
	l->slots = calloc(o->window, sizeof(*l->slots));
	/* At least one byte so that max_value 0 still gets a valid pointer. */
	l->values = malloc((size_t)o->window * o->max_value + 1);
	/* Paged in at once by the write: a megabyte with the defaults, where each first use of a
	 * page would fault on the path of a value. */
	l->small_values = malloc((size_t)o->window * SLOT_SMALL);
	if (l->small_values)
		memset(l->small_values, 0, (size_t)o->window * SLOT_SMALL);
	l->votes = calloc((size_t)o->window * o->acceptors, sizeof(*l->votes));
	l->fetch_values = malloc((size_t)PAXOS_LEARNER_MAX_FETCHES * o->max_value + 1);
	l->event_cap = 2 * (size_t)o->window + EVENTS_EXTRA;
	l->events = malloc(l->event_cap * sizeof(*l->events));
	if (!l->slots || !l->values || !l->small_values || !l->votes || !l->fetch_values ||
	    !l->events) {
		paxos_learner_free(l);
		return NULL;
	}
	long page = sysconf(_SC_PAGESIZE);
	l->page_size = page > 0 && (page & (page - 1)) == 0 ? (size_t)page : 0;
	for (uint32_t i = 0; i < o->window; i++) {
		l->slots[i].big = l->values + (size_t)i * o->max_value;
		l->slots[i].small = l->small_values + (size_t)i * SLOT_SMALL;
		l->slots[i].data = l->slots[i].small;
		l->slots[i].votes = l->votes + (size_t)i * o->acceptors;
	}
	for (uint32_t i = 0; i < PAXOS_LEARNER_MAX_FETCHES; i++) {
		l->fetches[i].s.data = l->fetch_values + (size_t)i * o->max_value;
		l->fetches[i].s.small = l->fetches[i].s.big = l->fetches[i].s.data;
		l->fetches[i].s.votes = l->fetches[i].votes;
	}
	if (!l->opt.fetch_timeout)
		l->opt.fetch_timeout = 50 * o->hole_check;
	return l;
}

void paxos_learner_free(struct paxos_learner *l)
{
	if (!l)
		return;
	free(l->slots);
	free(l->values);
	free(l->small_values);
	free(l->votes);
	free(l->fetch_values);
	free(l->events);
	free(l);
}

/* Adds an event to the ready. The bound (event_cap) is never reached; if it were, the event
 * would be lost rather than written past the array. */
static void add_event(struct paxos_learner *l, enum paxos_learner_event_kind kind, paxos_iid iid,
		      paxos_iid to, const uint8_t *data, uint32_t len, paxos_ballot ballot)
{
	if (l->event_count == l->event_cap)
		return;
	struct paxos_learner_event *e = &l->events[l->event_count++];
	e->kind = kind;
	e->iid = iid;
	e->to = to;
	e->value.data = data;
	e->value.len = len;
	e->ballot = ballot;
	e->generation = l->generation;
}

static void recheck(struct paxos_learner *l, paxos_iid iid);
static void report_closed(struct paxos_learner *l, const struct slot *s);

/*
 * Closes s if the leader said its value is chosen: s holds the value of the leader's accept at
 * the ballot it named, which an acceptor of this log accepted (vouched). One ballot carries one
 * value per instance, so that value is the one chosen. This is how a learning acceptor, which
 * does not hear the others' votes, learns.
 */
static void close_by_claim(struct paxos_learner *l, struct slot *s)
{
	if (!l->claim_ballot || s->iid < l->claim_from || s->iid > l->claim_to || !s->has_value ||
	    !s->exact || !s->vouched || s->ballot != l->claim_ballot)
		return;
	if (!s->chosen || s->chosen > s->ballot)
		s->chosen = s->ballot;
	s->closed = true;
	l->counters->instances_closed_by_leader++;
	report_closed(l, s);
}

/*
 * Delivers every closed instance from next on, into the ready. Thesis 2.2.1: "Knowing the chosen
 * value for an instance is therefore not sufficient for delivering it: all instances from 1 to
 * the current iid must have been delivered already." Thesis 3.3: "Once an instance is delivered,
 * the current instance number is incremented and the learner can completely forget about the
 * associated value". The slot is released and next advanced at once; the value bytes stay in the
 * slot's buffer until a later step reuses it, which is after paxos_learner_advance.
 */
static void deliver_ready(struct paxos_learner *l)
{
	if (l->held)
		return; /* next is trimmed: only a snapshot moves it */
	while (!l->change_held) {
		struct slot *s = slot_of(l, l->next);
		if (s->iid == l->next && !s->closed)
			close_by_claim(l, s);
		if (s->iid != l->next || !s->closed)
			return;
		paxos_iid iid = l->next;
		struct paxos_value v = {s->data, s->len};
		paxos_ballot ballot = s->exact ? s->ballot : 0;
		learner_slot_reset(l, s, 0);
		l->next++;
		l->counters->instances_delivered++;
		l->counters->bytes_delivered += v.len;
		l->instance_bytes_x8 = l->instance_bytes_x8
					   ? l->instance_bytes_x8 + v.len - l->instance_bytes_x8 / 8
					   : (uint64_t)v.len * 8;
		if (l->opt.membership)
			paxos_membership_apply(l->opt.membership, iid, &v);
		add_event(l, PAXOS_LEARNER_DELIVERED, iid, iid, v.data, v.len, ballot);
		/* Its delivery made the configuration of iid + alpha known. */
		if (l->opt.membership)
			recheck(l, iid + paxos_membership_alpha(l->opt.membership));
		if (l->opt.membership && l->opt.hold_changes && paxos_membership_is_command(&v))
			l->change_held = true;
	}
}

static void report_closed(struct paxos_learner *l, const struct slot *s)
{
	add_event(l, PAXOS_LEARNER_CLOSED, s->iid, s->iid, s->data, s->len,
		  s->exact ? s->ballot : 0);
}

/* The highest point a quorum of acceptors reported reaching: the quorum-th largest report,
 * among the members of the configuration in force at next (the one the learner decides with
 * now; the configurations of instances above it may differ: docs/operating.md, "Changing the
 * cluster"). */
/* How many of members reported at least t. */
static uint32_t reported(const struct paxos_learner *l, const paxos_iid *reports, uint32_t members,
			 paxos_iid t)
{
	uint32_t at_least = 0;
	for (uint32_t b = 0; b < l->opt.acceptors; b++)
		if (reports[b] >= t && (members & (1u << b)))
			at_least++;
	return at_least;
}

static paxos_iid quorum_point(const struct paxos_learner *l, const paxos_iid *reports)
{
	uint32_t quorum = 0, members = learner_deciders(l, l->next, &quorum);
	paxos_iid point = 0;
	for (uint32_t a = 0; a < l->opt.acceptors; a++) {
		paxos_iid t = reports[a];
		if (t <= point)
			continue;
		if ((members & (1u << a)) && reported(l, reports, members, t) >= quorum) {
			point = t;
			continue;
		}
		/* With a history taken from the acceptors' answers (paxos_membership_adopt), which
		 * was applied beyond t by the members, the members of next's configuration may be
		 * gone for good: a quorum of the configuration that governs the first instance
		 * after the skip, whose members hold what comes next, is as good a word. Only
		 * then: a learner that delivers the log itself (applied below next) waits for a
		 * quorum of next's configuration as before, so instances its old members still
		 * hold are not skipped. */
		const struct paxos_membership *h = l->opt.membership;
		uint32_t q_after = 0;
		uint32_t after = h && paxos_membership_applied(h) >= t
				     ? learner_deciders(l, t + 1, &q_after)
				     : 0;
		if ((after & (1u << a)) && reported(l, reports, after, t) >= q_after)
			point = t;
	}
	return point;
}

/* Acceptor a sent an accepted message for iid: it accepted that far. */
static void note_accepted(struct paxos_learner *l, uint32_t acceptor, paxos_iid iid)
{
	if (iid > l->acceptor_highest[acceptor])
		l->acceptor_highest[acceptor] = iid;
	if (iid > l->highest_seen)
		l->highest_seen = iid;
}

/* Acceptor a's state says it accepted up to highest: its report, replacing the last one. */
static void note_state(struct paxos_learner *l, uint32_t acceptor, paxos_iid highest)
{
	l->acceptor_highest[acceptor] = highest;
	l->highest_seen = 0;
	for (uint32_t a = 0; a < l->opt.acceptors; a++)
		if (l->acceptor_highest[a] > l->highest_seen)
			l->highest_seen = l->acceptor_highest[a];
}

static bool value_valid(const struct paxos_learner *l, const struct paxos_value *v)
{
	return v->len <= l->opt.max_value && (v->len == 0 || v->data != NULL);
}

static bool accepted_valid(const struct paxos_learner *l, const struct paxos_accepted *a)
{
	return a->iid != 0 && a->acceptor_id < l->opt.acceptors &&
	       (a->valueless || value_valid(l, &a->value));
}

/* A quorum named a ballot whose value this learner lacks: the accept may still wait in
 * another socket's queue behind the accepted messages, so the tick asks for it only a while
 * later (ask_values). */
static void note_lacking(struct paxos_learner *l, struct slot *s, paxos_time now)
{
	if (!s->lacking) {
		s->lacking = true;
		s->lacking_since = now;
	}
	l->lacking = true;
}

/*
 * The configuration of iid just became known: the votes it kept may make a quorum now. It is
 * closed without delivering (deliver_ready, which calls this, goes on up to it).
 */
static void recheck(struct paxos_learner *l, paxos_iid iid)
{
	if (iid < l->next || iid - l->next >= l->opt.window)
		return;
	struct slot *s = slot_of(l, iid);
	if (s->iid != iid || s->closed)
		return;
	for (uint32_t k = 0; k < l->opt.acceptors; k++) {
		paxos_ballot q = s->votes[k] ? learner_quorum_ballot(l, s, s->votes[k]) : 0;
		if (q && (!s->chosen || q < s->chosen))
			s->chosen = q;
	}
	if (learner_value_known(s)) {
		s->closed = true;
		report_closed(l, s);
	} else if (s->chosen) {
		note_lacking(l, s, l->now);
	}
}

/* Every instance of the window whose configuration is known (after a jump of next). */
static void recheck_window(struct paxos_learner *l)
{
	for (uint32_t k = 0; l->opt.membership && k < l->opt.window; k++)
		recheck(l, l->next + k);
}

/* Closes s and delivers what is ready: the instance was just decided here. */
static void slot_closed_now(struct paxos_learner *l, struct slot *s)
{
	s->closed = true;
	report_closed(l, s);
	deliver_ready(l);
}

/* The leader's accept: its value, kept for the accepted messages that name its ballot. */
static void handle_accept(struct paxos_learner *l, const struct paxos_accept *acc)
{
	if (!l->started || acc->iid < l->next || acc->iid - l->next >= l->opt.window ||
	    acc->ballot == 0 || !value_valid(l, &acc->value))
		return;
	struct slot *s = slot_of(l, acc->iid);
	if (s->iid != acc->iid)
		learner_slot_reset(l, s, acc->iid);
	if (s->closed)
		return;
	bool vouched = false;
	for (uint32_t a = 0; a < l->opt.acceptors && !vouched; a++)
		vouched = s->votes[a] == acc->ballot;
	learner_take_value(l, s, acc->ballot, &acc->value, vouched);
	if (learner_value_known(s))
		slot_closed_now(l, s);
}

/* What the leader says was chosen (paxos_accept.chosen_to, paxos_chosen): the word of the
 * highest ballot is kept, and closes what it covers from next on, in order (deliver_ready,
 * close_by_claim). */
static void handle_claim(struct paxos_learner *l, paxos_ballot ballot, paxos_iid from, paxos_iid to)
{
	if (!to || from > to || ballot < l->claim_ballot)
		return;
	l->claim_ballot = ballot;
	l->claim_from = from;
	l->claim_to = to;
	if (l->started && to >= l->next)
		deliver_ready(l);
}

/*
 * A log of a higher generation began (acceptor/recovery.c): what this learner delivered
 * belongs to another log, whose instance numbers the new one uses again. Everything held
 * is dropped and delivery starts over at the new log's instance 1, after an event that says
 * so, before anything of it is delivered. Deliveries of one log never mix with another's.
 */
static void begin_generation(struct paxos_learner *l, uint64_t generation)
{
	/* Votes counted before are another log's. */
	for (uint32_t i = 0; i < l->opt.window; i++)
		if (l->slots[i].iid != 0)
			learner_slot_reset(l, &l->slots[i], 0);
	/* The first log heard, nothing delivered yet and no state of a known log below the
	 * start: taken without a word. */
	bool told = l->generation != 0 || l->generation_known || l->next != l->began_at;
	l->generation = generation;
	if (!told)
		return;
	learner_fetch_drop(l);
	l->started = true;
	l->held = false;
	l->next = l->began_at = 1;
	l->highest_seen = 0;
	memset(l->acceptor_highest, 0, sizeof(l->acceptor_highest));
	memset(l->acceptor_trim, 0, sizeof(l->acceptor_trim));
	l->asked = l->answered = l->lacking = false;
	l->last_asked_to = 0;
	l->next_at_last_check = 0;
	l->stalled_checks = 0;
	l->counters->new_logs++;
	add_event(l, PAXOS_LEARNER_NEW_LOG, 1, 1, NULL, 0, 0);
}

/*
 * Whether a message of acceptor's about log generation is of the log delivered. A learner
 * moves to a higher generation once a quorum of acceptors reports it: a value can be chosen
 * in it only then, and one acceptor (a forged report, a stale store) cannot make learners
 * leave the log the others still serve. An acceptor state replaces that acceptor's report, so
 * a forged one lasts until its next state. Messages of another log are dropped.
 */
static bool of_this_log(struct paxos_learner *l, uint32_t acceptor, uint64_t generation, bool state,
			bool recovering)
{
	/* A recovering acceptor's is of the log it lost: no report of one it serves. */
	if (acceptor >= l->opt.acceptors || recovering)
		return generation == l->generation;
	if (state && generation < l->acceptor_gen[acceptor])
		l->acceptor_gen[acceptor] = generation;
	if (generation > l->acceptor_gen[acceptor]) {
		l->acceptor_gen[acceptor] = generation;
		uint64_t q = quorum_point(l, l->acceptor_gen);
		if (q > l->generation)
			begin_generation(l, q);
	}
	return generation == l->generation;
}

static void handle_accepted(struct paxos_learner *l, const struct paxos_accepted *a, paxos_time now)
{
	if (!accepted_valid(l, a))
		return;
	if (!l->started) {
		/* FROM_CURRENT (thesis 3.3: "A learner should have an alternative startup
		 * method, which starts delivering from the present instance rather than starting
		 * from number 1."): delivery begins at the first instance heard of that is not
		 * below what the acceptors report they reached: not at a repeat of history that
		 * another learner asked for (or a leader's repair of it), which would start it
		 * in the past, maybe where no acceptor holds anything any more. */
		if (!l->hint_known || a->iid < l->current_hint)
			return;
		l->started = true;
		l->next = a->iid;
		if (l->opt.membership)
			paxos_membership_skip_to(l->opt.membership, l->next - 1);
	}
	note_accepted(l, a->acceptor_id, a->iid);
	/* An acceptor that sends an instance has not trimmed it: its reports saying so were
	 * forged (or overtaken), and count for nothing until the learner asks again. */
	if (a->acceptor_id < l->opt.acceptors && a->iid <= l->acceptor_trim[a->acceptor_id]) {
		l->acceptor_trim[a->acceptor_id] = a->iid - 1;
		l->trim_refuted |= 1u << a->acceptor_id;
		l->trim_heard &= ~(1u << a->acceptor_id);
	}
	if (a->iid < l->next)
		return;
	if (a->iid - l->next >= l->opt.window) {
		/* No slot for it yet; the hole check asks for it again once the window reaches it.
		 */
		l->counters->instances_out_of_window++;
		return;
	}
	struct slot *s = slot_of(l, a->iid);
	if (s->iid != a->iid)
		learner_slot_reset(l, s, a->iid);
	if (s->closed) {
		/* Closed, waiting for a hole below. Someone still sends accepteds for it: a
		 * proposer may be running it again because the first report came before the
		 * instance entered its window. Reporting again lets it stop. */
		report_closed(l, s);
		return;
	}
	if (learner_slot_take(l, s, a))
		slot_closed_now(l, s);
	else if (s->chosen)
		note_lacking(l, s, now);
	else if (a->iid == l->next && l->claim_ballot)
		deliver_ready(l); /* a vote vouched for a value the leader's word names */
}

/*
 * Instances next..to cannot be learned any more. Everything closed below next was delivered
 * already (deliveries are eager), so next is missing: skip from there, drop what is held up to
 * to (it cannot be delivered in order), then deliver what is closed above it.
 */
static void skip_trimmed(struct paxos_learner *l, paxos_iid to)
{
	paxos_iid from = l->next;
	if (l->opt.hold_trimmed) {
		/* Said once; a later trim only raises what the snapshot must cover. */
		if (!l->held)
			add_event(l, PAXOS_LEARNER_TRIMMED, from, to, NULL, 0, 0);
		if (!l->held || to > l->held_to)
			l->held_to = to;
		l->held = true;
		return;
	}
	for (uint32_t i = 0; i < l->opt.window; i++)
		if (l->slots[i].iid != 0 && l->slots[i].iid <= to)
			learner_slot_reset(l, &l->slots[i], 0);
	l->next = to + 1;
	if (to > l->highest_seen)
		l->highest_seen = to;
	l->counters->instances_skipped_trimmed += to - from + 1;
	if (l->opt.membership)
		paxos_membership_skip_to(l->opt.membership, to);
	add_event(l, PAXOS_LEARNER_TRIMMED, from, to, NULL, 0, 0);
	recheck_window(l);
	deliver_ready(l);
}

/*
 * The highest instance a quorum of acceptors has trimmed, by reports: the quorum-th largest
 * trim point reported, within what is known to exist; 0 when nothing from next on is lost.
 * Fewer acceptors (acceptors - quorum + 1) would already leave no quorum to answer, but
 * skipping loses instances for good, so it takes the word of a quorum: a forged or buggy
 * report from a minority (the node lets one datagram speak for one acceptor only) cannot make
 * learners skip what can still be learned.
 */
static paxos_iid lost_from_next(const struct paxos_learner *l, const paxos_iid *reports)
{
	paxos_iid lost = quorum_point(l, reports);
	if (lost > l->highest_seen)
		lost = l->highest_seen;
	if (lost == UINT64_MAX)
		lost--; /* next must stay representable */
	return lost >= l->next ? lost : 0;
}

/*
 * Skipping loses instances for good, and without authentication anyone can send a quorum of
 * trim reports, with the acceptors' addresses too. So a learner skips only once it asked the
 * acceptors for what it would skip (a repeat from next) and a quarter hole check passed with a
 * quorum of them still saying it is trimmed: an acceptor that still holds the instances
 * answers with them by then, which refutes its reports (handle_accepted) until the learner
 * asks again, however often they are sent. Only in a step (a skip is events of its ready),
 * on a report: the acceptors report their trim point every tick.
 */
static void skip_if_asked(struct paxos_learner *l, const struct paxos_emitter *out)
{
	paxos_iid lost = lost_from_next(l, l->acceptor_trim);
	if (!lost)
		return;
	if (l->trim_ask != l->next) {
		paxos_iid span =
		    l->opt.repeat_batch < l->opt.window ? l->opt.repeat_batch : l->opt.window;
		paxos_iid to = lost - l->next < span ? lost : l->next + span - 1;
		learner_note_asked(l, l->next, l->now);
		l->counters->repeats_requested += to - l->next + 1;
		send_repeat(out, l->next, to);
		return;
	}
	if (l->now < l->trim_ask_at) {
		l->trim_ask_at = l->now; /* the clock went back */
		return;
	}
	if (l->now - l->trim_ask_at < l->opt.hole_check / 4)
		return;
	paxos_iid since[PAXOS_MAX_ACCEPTORS] = {0};
	for (uint32_t a = 0; a < l->opt.acceptors; a++)
		if (l->trim_heard & ~l->trim_refuted & (1u << a))
			since[a] = l->acceptor_trim[a];
	lost = lost_from_next(l, since);
	if (lost)
		skip_trimmed(l, lost);
}

/* An acceptor reports it trimmed up to trim. Evidence only counts for instances known to
 * exist (highest_seen): a report of 2^64-1 is a bug or a forgery, and so is the part of any
 * report beyond what the acceptors have reached. Reports are kept as sent and checked again
 * at every report, so one that ran ahead counts once the acceptors are there. */
static void handle_trim_report(struct paxos_learner *l, uint32_t acceptor, paxos_iid trim,
			       const struct paxos_emitter *out)
{
	if (!l->started || acceptor >= l->opt.acceptors)
		return;
	if (trim > l->highest_seen)
		l->counters->trim_reports_clamped++;
	if (l->trim_refuted & (1u << acceptor))
		return; /* it answered with what it says it trimmed, since the learner asked */
	if (trim > l->acceptor_trim[acceptor])
		l->acceptor_trim[acceptor] = trim;
	if (l->trim_ask == l->next && trim >= l->next)
		l->trim_heard |= 1u << acceptor;
	skip_if_asked(l, out);
}

static void handle_acceptor_state(struct paxos_learner *l, const struct paxos_acceptor_state *st,
				  const struct paxos_emitter *out)
{
	if (!l->started && st->acceptor_id < l->opt.acceptors) {
		if (!l->hint_known || st->highest_accepted < l->current_hint)
			l->current_hint = st->highest_accepted;
		l->hint_known = true;
	}
	if (l->started && st->acceptor_id < l->opt.acceptors)
		note_state(l, st->acceptor_id, st->highest_accepted);
	handle_trim_report(l, st->acceptor_id, st->trim_iid, out);
}

int paxos_learner_step(struct paxos_learner *l, const struct paxos_message *m, paxos_time now,
		       const struct paxos_emitter *out)
{
	if (!l || !m || l->event_count)
		return PAXOS_E_INVALID;
	l->now = now;
	switch (m->type) {
	case PAXOS_MSG_ACCEPTED:
		if (!paxos_msg_plausible(m)) {
			l->counters->implausible_ballots++;
			break;
		}
		if (!of_this_log(l, m->u.accepted.acceptor_id, m->u.accepted.generation, false,
				 false))
			break;
		if (l->fetching && accepted_valid(l, &m->u.accepted))
			learner_fetch_accepted(l, &m->u.accepted);
		handle_accepted(l, &m->u.accepted, now);
		learner_catch_up_on_accepted(l, now, out);
		break;
	case PAXOS_MSG_ACCEPT:
		if (!paxos_msg_plausible(m)) {
			l->counters->implausible_ballots++;
			break;
		}
		handle_accept(l, &m->u.accept);
		handle_claim(l, m->u.accept.ballot, m->u.accept.chosen_from, m->u.accept.chosen_to);
		break;
	case PAXOS_MSG_CHOSEN:
		if (!paxos_msg_plausible(m)) {
			l->counters->implausible_ballots++;
			break;
		}
		handle_claim(l, m->u.chosen.ballot, m->u.chosen.from, m->u.chosen.to);
		break;
	case PAXOS_MSG_ACCEPTOR_STATE:
		if (!of_this_log(l, m->u.acceptor_state.acceptor_id, m->u.acceptor_state.generation,
				 true, m->u.acceptor_state.recovering))
			break;
		if (l->fetching && m->u.acceptor_state.trim_iid)
			learner_fetch_trimmed(l, m->u.acceptor_state.acceptor_id,
					      m->u.acceptor_state.trim_iid);
		handle_acceptor_state(l, &m->u.acceptor_state, out);
		break;
	case PAXOS_MSG_TRIMMED:
		if (!of_this_log(l, m->u.trimmed.acceptor_id, m->u.trimmed.generation, false,
				 false))
			break;
		if (l->fetching)
			learner_fetch_trimmed(l, m->u.trimmed.acceptor_id, m->u.trimmed.iid);
		handle_trim_report(l, m->u.trimmed.acceptor_id, m->u.trimmed.iid, out);
		break;
	default:
		break;
	}
	return PAXOS_OK;
}

bool paxos_learner_ready(const struct paxos_learner *l, struct paxos_learner_ready *rd)
{
	rd->events = l->events;
	rd->event_count = l->event_count;
	return l->event_count != 0;
}

void paxos_learner_advance(struct paxos_learner *l)
{
	l->event_count = 0;
}

/* The options' callbacks, for each event of the ready, then the advance. */
static void run_callbacks(struct paxos_learner *l)
{
	for (size_t i = 0; i < l->event_count; i++) {
		const struct paxos_learner_event *e = &l->events[i];
		switch (e->kind) {
		case PAXOS_LEARNER_CLOSED:
			if (l->opt.closed)
				l->opt.closed(l->opt.closed_arg, e->iid, &e->value);
			break;
		case PAXOS_LEARNER_DELIVERED:
			if (l->opt.deliver)
				l->opt.deliver(l->opt.deliver_arg, e->iid, &e->value);
			break;
		case PAXOS_LEARNER_TRIMMED:
			if (l->opt.trimmed)
				l->opt.trimmed(l->opt.trimmed_arg, e->iid, e->to);
			break;
		case PAXOS_LEARNER_NEW_LOG:
			if (l->opt.new_log)
				l->opt.new_log(l->opt.new_log_arg, e->generation);
			break;
		}
	}
	paxos_learner_advance(l);
}

void paxos_learner_handle(struct paxos_learner *l, const struct paxos_message *m, paxos_time now,
			  const struct paxos_emitter *out)
{
	if (paxos_learner_step(l, m, now, out) == PAXOS_OK)
		run_callbacks(l);
}

int paxos_learner_step_skip_to(struct paxos_learner *l, paxos_iid first)
{
	if (l->event_count)
		return PAXOS_E_INVALID;
	if (!l->started) { /* FROM_CURRENT: this is the current instance */
		l->started = true;
		l->next = first > l->next ? first : l->next;
	}
	if (l->held && first > l->held_to)
		l->held = false;
	if (first <= l->next)
		return PAXOS_OK;
	for (uint32_t i = 0; i < l->opt.window; i++)
		if (l->slots[i].iid != 0 && l->slots[i].iid < first)
			learner_slot_reset(l, &l->slots[i], 0);
	l->counters->instances_skipped_known += first - l->next;
	l->next = first;
	if (first - 1 > l->highest_seen)
		l->highest_seen = first - 1;
	if (l->opt.membership)
		paxos_membership_skip_to(l->opt.membership, first - 1);
	recheck_window(l);
	deliver_ready(l);
	return PAXOS_OK;
}

void paxos_learner_skip_to(struct paxos_learner *l, paxos_iid first)
{
	if (paxos_learner_step_skip_to(l, first) == PAXOS_OK)
		run_callbacks(l);
}

paxos_iid paxos_learner_next_iid(const struct paxos_learner *l)
{
	return l->next;
}

int paxos_learner_step_change_kept(struct paxos_learner *l)
{
	if (l->event_count)
		return PAXOS_E_INVALID;
	if (l->change_held) {
		l->change_held = false;
		deliver_ready(l);
	}
	return PAXOS_OK;
}

bool paxos_learner_change_held(const struct paxos_learner *l)
{
	return l->change_held;
}

bool paxos_learner_held(const struct paxos_learner *l, paxos_iid *to)
{
	if (l->held && to)
		*to = l->held_to;
	return l->held;
}

paxos_iid paxos_learner_highest_seen(const struct paxos_learner *l)
{
	return l->highest_seen;
}

uint64_t paxos_learner_generation(const struct paxos_learner *l)
{
	return l->generation;
}
