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
 * What a step decides (closed, delivered, trimmed) is not told through callbacks but added to
 * an array of events allocated with the learner, its ready (the Ready pattern): the driver
 * hands them on and advances. paxos_learner_handle() is that, with the options' callbacks.
 */
#include <paxos/learner.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct slot {
	paxos_iid iid;       /* 0: empty */
	paxos_ballot ballot; /* the highest ballot whose value data holds (has_value) */
	bool has_value;
	bool exact; /* data is the value proposed at ballot (not a final one labelled so) */
	paxos_ballot chosen; /* a ballot a quorum reported (0: none yet) */
	bool lacking;        /* chosen, without its value since lacking_since */
	paxos_time lacking_since;
	bool asked; /* a repeat for the value went out at asked_at */
	paxos_time asked_at;
	bool closed;
	uint32_t len;
	uint8_t *data; /* max_value bytes, owned by the learner's value buffer */
	/* Per acceptor, the highest ballot it reported (0: none); owned by the vote buffer. */
	paxos_ballot *votes;
};

/* One outstanding fetch: a slot of its own (same vote counting) outside the window. */
struct fetch {
	struct slot s; /* s.iid 0: free; s.data in the fetch buffer, s.votes in votes */
	paxos_instance_fetched_fn done;
	void *arg;
	paxos_time started, last_sent;
	uint32_t trimmed_by; /* acceptors that said they trimmed s.iid, one bit each */
	paxos_ballot votes[PAXOS_MAX_ACCEPTORS];
};

struct paxos_learner {
	struct paxos_learner_options opt;
	struct paxos_counters *counters;
	uint32_t quorum; /* without a membership: of all the acceptors */
	uint32_t all;    /* every acceptor id, one bit each */
	paxos_time now;  /* of the last handle or tick: for votes counted on a delivery */
	bool started;    /* false only while FROM_CURRENT waits for its first accepted */
	/* FROM_CURRENT, before it started: the lowest highest-accepted instance acceptors
	 * reported (the lowest, so that one forged report cannot hold the start back). */
	paxos_iid current_hint;
	bool hint_known;
	paxos_iid next;
	/* The highest instance an acceptor reports: the most of acceptor_highest. */
	paxos_iid highest_seen;
	/* Per acceptor, the highest instance it accepted as its last acceptor state says, raised
	 * by its accepted messages since. Each state replaces the report: a forged or buggy one
	 * (2^64-1) lasts until that acceptor's next state, not for ever, so the learner does not
	 * take itself for behind or stalled, asking for repeats and repairs, for good. */
	paxos_iid acceptor_highest[PAXOS_MAX_ACCEPTORS];
	bool checked_once; /* the first tick only records the hole check baseline */
	paxos_time last_check;
	paxos_iid next_at_last_check;
	/* Catch-up: the last repeat request sent and when; a learner that is behind asks for
	 * the next batch once next has passed last_asked_to. */
	bool asked;
	paxos_iid last_asked_to;
	paxos_time last_asked_at;
	bool answered; /* next has passed last_asked_to since that request */
	/* Eight times the moving average of the value bytes of the instances delivered (each
	 * delivery weighs 1/8): sizes catch-up requests to what one answer carries. */
	uint64_t instance_bytes_x8;
	/* Some slot may be lacking the value a quorum named (see ask_values). */
	bool lacking;
	/* Hole checks in a row that found next neither delivered nor idle (see ask_repair). */
	uint32_t stalled_checks;
	struct slot *slots;
	uint8_t *values;
	size_t values_mapped; /* bytes of values paged in ahead (see map_slot) */
	size_t page_size;
	paxos_ballot *votes; /* window x acceptors */
	/* Highest trim point each acceptor reported (TRIMMED or ACCEPTOR_STATE), 0: none. */
	paxos_iid acceptor_trim[PAXOS_MAX_ACCEPTORS];
	struct fetch fetches[PAXOS_LEARNER_MAX_FETCHES];
	uint32_t fetching; /* fetches outstanding */
	uint8_t *fetch_values;
	/* The ready: the events of the last step, until paxos_learner_advance. One step closes
	 * and delivers each instance of the window at most once, so event_cap (two per slot and
	 * a few more) always holds them. */
	struct paxos_learner_event *events;
	size_t event_count, event_cap;
};

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
	uint64_t per_instance = sizeof(*l->slots) + (uint64_t)o->max_value +
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
	if (o->membership && l->next > 1) /* what lies below is not delivered here */
		paxos_membership_skip_to(o->membership, l->next - 1);
	l->slots = calloc(o->window, sizeof(*l->slots));
	/* At least one byte so that max_value 0 still gets a valid pointer. */
	l->values = malloc((size_t)o->window * o->max_value + 1);
	l->votes = calloc((size_t)o->window * o->acceptors, sizeof(*l->votes));
	l->fetch_values = malloc((size_t)PAXOS_LEARNER_MAX_FETCHES * o->max_value + 1);
	l->event_cap = 2 * (size_t)o->window + EVENTS_EXTRA;
	l->events = malloc(l->event_cap * sizeof(*l->events));
	if (!l->slots || !l->values || !l->votes || !l->fetch_values || !l->events) {
		paxos_learner_free(l);
		return NULL;
	}
	long page = sysconf(_SC_PAGESIZE);
	l->page_size = page > 0 && (page & (page - 1)) == 0 ? (size_t)page : 0;
	for (uint32_t i = 0; i < o->window; i++) {
		l->slots[i].data = l->values + (size_t)i * o->max_value;
		l->slots[i].votes = l->votes + (size_t)i * o->acceptors;
	}
	for (uint32_t i = 0; i < PAXOS_LEARNER_MAX_FETCHES; i++) {
		l->fetches[i].s.data = l->fetch_values + (size_t)i * o->max_value;
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
	free(l->votes);
	free(l->fetch_values);
	free(l->events);
	free(l);
}

static struct slot *slot_of(struct paxos_learner *l, paxos_iid iid)
{
	return &l->slots[iid % l->opt.window];
}

/*
 * Pages in the window's value buffer ahead of the slots as they are first used, 64 kB at a
 * time: its first pass (32 MiB with the defaults) otherwise takes a page fault per 4 kB page,
 * on some virtual machines about 19 us each (docs/BENCHMARKS.md, "CPU per value of the
 * acceptor and the proposer"). Best effort; pages past the mark fault as before.
 */
static void map_slot(struct paxos_learner *l, const struct slot *s)
{
#ifdef MADV_POPULATE_WRITE
	if (s < l->slots || s >= l->slots + l->opt.window || !l->page_size)
		return; /* a fetch's slot */
	size_t end = (size_t)(s->data - l->values) + l->opt.max_value;
	if (end <= l->values_mapped)
		return;
	size_t from = (size_t)(s->data - l->values);
	if (from < l->values_mapped)
		from = l->values_mapped;
	size_t total = (size_t)l->opt.window * l->opt.max_value;
	size_t to = end + (64u << 10) < total ? end + (64u << 10) : total;
	uintptr_t a = (uintptr_t)(l->values + from) & ~(uintptr_t)(l->page_size - 1);
	if (madvise((void *)a, (uintptr_t)(l->values + to) - a, MADV_POPULATE_WRITE) != 0)
		l->page_size = 0; /* not on this kernel: faults do */
	l->values_mapped = to;
#else
	(void)l;
	(void)s;
#endif
}

static void slot_reset(struct paxos_learner *l, struct slot *s, paxos_iid iid)
{
	if (iid)
		map_slot(l, s);
	s->iid = iid;
	s->ballot = 0;
	s->has_value = false;
	s->exact = false;
	s->chosen = 0;
	s->lacking = false;
	s->asked = false;
	s->closed = false;
	s->len = 0;
	memset(s->votes, 0, l->opt.acceptors * sizeof(*s->votes));
}

static void slot_store(struct slot *s, paxos_ballot ballot, const struct paxos_value *v)
{
	s->ballot = ballot;
	s->has_value = true;
	s->exact = true;
	s->len = v->len;
	if (v->len)
		memcpy(s->data, v->data, v->len);
}

static bool slot_closed(const struct paxos_learner *l, paxos_iid iid)
{
	const struct slot *s = &l->slots[iid % l->opt.window];
	return s->iid == iid && s->closed;
}

/* The acceptors whose votes decide iid and their quorum: every acceptor without a membership,
 * else the members of iid's configuration; 0 while that is not known yet. */
static uint32_t deciders(const struct paxos_learner *l, paxos_iid iid, uint32_t *quorum)
{
	const struct paxos_membership *m = l->opt.membership;
	if (!m) {
		*quorum = l->quorum;
		return l->all;
	}
	if (!paxos_membership_known(m, iid))
		return 0;
	uint32_t members = paxos_membership_members(m, iid);
	*quorum = paxos_membership_quorum_of(members);
	return members & l->all;
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
}

static void recheck(struct paxos_learner *l, paxos_iid iid);

/* Delivers every closed instance from next on, into the ready. The slot is released and next
 * advanced at once; the value bytes stay in the slot's buffer until a later step reuses it,
 * which is after paxos_learner_advance. */
static void deliver_ready(struct paxos_learner *l)
{
	for (;;) {
		struct slot *s = slot_of(l, l->next);
		if (s->iid != l->next || !s->closed)
			return;
		paxos_iid iid = l->next;
		struct paxos_value v = {s->data, s->len};
		paxos_ballot ballot = s->exact ? s->ballot : 0;
		slot_reset(l, s, 0);
		l->next++;
		l->counters->values_delivered++;
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
	}
}

/*
 * Keeps the value proposed at ballot if it is the highest one heard of. In Paxos every value
 * proposed (accept) or accepted at a ballot at or above a chosen one is the chosen value (a
 * proposer of a higher ballot hears of it from the quorum that accepted it), so the value of
 * the highest ballot serves for any quorum ballot at or below it.
 */
static void take_value(struct slot *s, paxos_ballot ballot, const struct paxos_value *v)
{
	if (!s->has_value || ballot > s->ballot)
		slot_store(s, ballot, v);
}

/* b, when the deciders of the slot's instance that report it are a quorum of them; else 0. */
static paxos_ballot quorum_ballot(const struct paxos_learner *l, const struct slot *s,
				  paxos_ballot b)
{
	uint32_t quorum = 0, same = 0;
	for (uint32_t rest = deciders(l, s->iid, &quorum); rest; rest &= rest - 1)
		same += s->votes[__builtin_ctz(rest)] == b;
	return quorum && same >= quorum ? b : 0;
}

/*
 * Counts a non-final vote: each acceptor's latest ballot replaces its earlier one (its record
 * holds only the latest). Returns a ballot b a quorum of acceptors now reports, any b, not
 * only the highest, or 0: the value chosen at b is then the one to deliver.
 */
static paxos_ballot record_vote(struct paxos_learner *l, struct slot *s,
				const struct paxos_accepted *a)
{
	paxos_ballot *mine = &s->votes[a->acceptor_id];
	if (a->ballot <= *mine)
		return 0; /* a duplicate, or older than what this acceptor reported */
	*mine = a->ballot;
	return quorum_ballot(l, s, a->ballot);
}

/* Whether the slot holds the chosen value: a quorum ballot and a value at or above it. */
static bool value_known(const struct slot *s)
{
	return s->chosen && s->has_value && s->ballot >= s->chosen;
}

/* Takes accepted a into s; returns whether s now holds the chosen value. A final answer
 * without its value (none is ever sent) counts as a vote. */
static bool slot_take(struct paxos_learner *l, struct slot *s, const struct paxos_accepted *a)
{
	if (a->final && !a->valueless) {
		/* The sender knows this value is the chosen one, whatever ballot we counted. Its
		 * ballot need not be one the value was proposed at: an acceptor that learns a
		 * decision without having accepted labels it with its promise (acceptor.c). So
		 * the value is known to be the one proposed at its label only if an accept at
		 * that very ballot brought these bytes before (rare path: no per-value cost). */
		paxos_ballot label = a->ballot > s->ballot ? a->ballot : s->ballot;
		bool proposed_there =
		    s->has_value && s->exact && s->ballot == label && s->len == a->value.len &&
		    (a->value.len == 0 || memcmp(s->data, a->value.data, s->len) == 0);
		if (s->chosen && !value_known(s)) {
			/* A quorum accepted at s->chosen, whose value (its accept was lost) is the
			 * chosen one, so these bytes: proposed there. A new leader's first
			 * instance is then known as its own (paxos_node_on_new_leader). */
			label = s->chosen;
			proposed_there = true;
		}
		slot_store(s, label, &a->value);
		s->exact = proposed_there;
		s->chosen = s->ballot;
		return true;
	}
	if (!a->valueless)
		take_value(s, a->ballot, &a->value);
	paxos_ballot q = record_vote(l, s, a);
	if (q && (!s->chosen || q < s->chosen))
		s->chosen = q;
	return value_known(s);
}

static void report_closed(struct paxos_learner *l, const struct slot *s)
{
	add_event(l, PAXOS_LEARNER_CLOSED, s->iid, s->iid, s->data, s->len,
		  s->exact ? s->ballot : 0);
}

/* The highest point a quorum of acceptors reported reaching: the quorum-th largest report,
 * among the members of the configuration in force at next (the one the learner decides with
 * now; the configurations of instances above it may differ, see the README). */
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
	uint32_t quorum = 0, members = deciders(l, l->next, &quorum);
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
		uint32_t after =
		    h && paxos_membership_applied(h) >= t ? deciders(l, t + 1, &q_after) : 0;
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
		paxos_ballot q = s->votes[k] ? quorum_ballot(l, s, s->votes[k]) : 0;
		if (q && (!s->chosen || q < s->chosen))
			s->chosen = q;
	}
	if (value_known(s)) {
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
		slot_reset(l, s, acc->iid);
	if (s->closed)
		return;
	take_value(s, acc->ballot, &acc->value);
	if (value_known(s))
		slot_closed_now(l, s);
}

static void handle_accepted(struct paxos_learner *l, const struct paxos_accepted *a, paxos_time now)
{
	if (!accepted_valid(l, a))
		return;
	if (!l->started) {
		/* FROM_CURRENT: delivery begins at the first instance heard of that is not below
		 * what the acceptors report they reached: not at a repeat of history that another
		 * learner asked for (or a leader's repair of it), which would start it in the past,
		 * maybe where no acceptor holds anything any more. */
		if (!l->hint_known || a->iid < l->current_hint)
			return;
		l->started = true;
		l->next = a->iid;
		if (l->opt.membership)
			paxos_membership_skip_to(l->opt.membership, l->next - 1);
	}
	note_accepted(l, a->acceptor_id, a->iid);
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
		slot_reset(l, s, a->iid);
	if (s->closed) {
		/* Closed, waiting for a hole below. Someone still sends accepteds for it: a
		 * proposer may be running it again because the first report came before the
		 * instance entered its window. Reporting again lets it stop. */
		report_closed(l, s);
		return;
	}
	if (slot_take(l, s, a))
		slot_closed_now(l, s);
	else if (s->chosen)
		note_lacking(l, s, now);
}

/*
 * The highest instance a quorum of acceptors has trimmed: the quorum-th largest trim point
 * reported. Fewer acceptors (acceptors - quorum + 1) would already leave no quorum to answer,
 * but skipping loses instances for good, so it takes the word of a quorum: a forged or buggy
 * report from a minority (the node lets one datagram speak for one acceptor only) cannot make
 * learners skip what can still be learned.
 */
static paxos_iid lost_up_to(const struct paxos_learner *l)
{
	return quorum_point(l, l->acceptor_trim);
}

/*
 * Instances next..to cannot be learned any more. Everything closed below next was delivered
 * already (deliveries are eager), so next is missing: skip from there, drop what is held up to
 * to (it cannot be delivered in order), then deliver what is closed above it.
 */
static void skip_trimmed(struct paxos_learner *l, paxos_iid to)
{
	paxos_iid from = l->next;
	for (uint32_t i = 0; i < l->opt.window; i++)
		if (l->slots[i].iid != 0 && l->slots[i].iid <= to)
			slot_reset(l, &l->slots[i], 0);
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

/* An acceptor reports it trimmed up to trim. Evidence only counts for instances known to
 * exist (highest_seen): a report of 2^64-1 is a bug or a forgery, and so is the part of any
 * report beyond what the acceptors have reached. Reports are kept as sent and checked again
 * at every report, so one that ran ahead counts once the acceptors are there. */
static void handle_trim_report(struct paxos_learner *l, uint32_t acceptor, paxos_iid trim)
{
	if (!l->started || acceptor >= l->opt.acceptors)
		return;
	if (trim > l->highest_seen)
		l->counters->trim_reports_clamped++;
	if (trim > l->acceptor_trim[acceptor])
		l->acceptor_trim[acceptor] = trim;
	paxos_iid lost = lost_up_to(l);
	if (lost > l->highest_seen)
		lost = l->highest_seen;
	if (lost == UINT64_MAX)
		lost--; /* next must stay representable */
	if (lost >= l->next)
		skip_trimmed(l, lost);
}

static void handle_acceptor_state(struct paxos_learner *l, const struct paxos_acceptor_state *st)
{
	if (!l->started && st->acceptor_id < l->opt.acceptors) {
		if (!l->hint_known || st->highest_accepted < l->current_hint)
			l->current_hint = st->highest_accepted;
		l->hint_known = true;
	}
	if (l->started && st->acceptor_id < l->opt.acceptors)
		note_state(l, st->acceptor_id, st->highest_accepted);
	handle_trim_report(l, st->acceptor_id, st->trim_iid);
}

/* ---- fetching single instances (thesis 3.3) ---- */

static void send_repeat(const struct paxos_emitter *out, paxos_iid from, paxos_iid to)
{
	struct paxos_message m = {.type = PAXOS_MSG_REPEAT};
	m.u.repeat.from = from;
	m.u.repeat.to = to;
	if (out)
		paxos_emit(out, PAXOS_GROUP_ACCEPTORS, &m);
}

/* The fetch is freed before done runs, so that done may start another; the value stays in the
 * fetch's buffer during the call (starting a fetch does not touch it). */
static void fetch_finish(struct paxos_learner *l, struct fetch *f, int status)
{
	struct paxos_value v = {f->s.data, f->s.len};
	paxos_iid iid = f->s.iid;
	f->s.iid = 0;
	l->fetching--;
	f->done(f->arg, iid, status, status == PAXOS_OK ? &v : NULL);
}

int paxos_learner_fetch(struct paxos_learner *l, paxos_iid iid, paxos_time now,
			paxos_instance_fetched_fn done, void *arg, const struct paxos_emitter *out)
{
	if (!l || iid == 0 || !done)
		return PAXOS_E_INVALID;
	struct fetch *f = NULL;
	for (uint32_t i = 0; i < PAXOS_LEARNER_MAX_FETCHES && !f; i++)
		if (l->fetches[i].s.iid == 0)
			f = &l->fetches[i];
	if (!f)
		return PAXOS_E_FULL;
	slot_reset(l, &f->s, iid);
	f->done = done;
	f->arg = arg;
	f->started = f->last_sent = now;
	f->trimmed_by = 0;
	l->fetching++;
	send_repeat(out, iid, iid);
	return PAXOS_OK;
}

static void fetch_accepted(struct paxos_learner *l, const struct paxos_accepted *a)
{
	for (uint32_t i = 0; i < PAXOS_LEARNER_MAX_FETCHES; i++) {
		struct fetch *f = &l->fetches[i];
		if (f->s.iid == a->iid && slot_take(l, &f->s, a))
			fetch_finish(l, f, PAXOS_OK);
	}
}

/* An acceptor trimmed everything up to trim: once a quorum did so for an instance (see
 * lost_up_to), it cannot be fetched any more. */
static void fetch_trimmed(struct paxos_learner *l, uint32_t acceptor, paxos_iid trim)
{
	if (acceptor >= l->opt.acceptors)
		return;
	for (uint32_t i = 0; i < PAXOS_LEARNER_MAX_FETCHES; i++) {
		struct fetch *f = &l->fetches[i];
		if (f->s.iid == 0 || f->s.iid > trim)
			continue;
		f->trimmed_by |= 1u << acceptor;
		uint32_t quorum = 0, members = deciders(l, f->s.iid, &quorum);
		if (quorum && (uint32_t)__builtin_popcount(f->trimmed_by & members) >= quorum)
			fetch_finish(l, f, PAXOS_E_TRIMMED);
	}
}

/* Resends unanswered fetches every hole check, gives up after fetch_timeout. */
static void fetch_tick(struct paxos_learner *l, paxos_time now, const struct paxos_emitter *out)
{
	for (uint32_t i = 0; i < PAXOS_LEARNER_MAX_FETCHES && l->fetching; i++) {
		struct fetch *f = &l->fetches[i];
		if (f->s.iid == 0)
			continue;
		if (now < f->started || now < f->last_sent) {
			/* The clock went back: restart the timers rather than wait for it. */
			f->started = f->last_sent = now;
		} else if (now - f->started >= l->opt.fetch_timeout) {
			fetch_finish(l, f, PAXOS_E_TIMEOUT);
		} else if (now - f->last_sent >= l->opt.hole_check) {
			f->last_sent = now;
			send_repeat(out, f->s.iid, f->s.iid);
		}
	}
}

/* ---- hole checks and catch-up ---- */

static paxos_iid min_iid(paxos_iid a, paxos_iid b)
{
	return a < b ? a : b;
}

/*
 * Behind: a whole batch of instances from next on is known to exist and none of them is
 * closed, far more than a healthy cluster has in flight. Instances beyond the window are
 * being dropped meanwhile, so waiting for a stall between requests could let a busy cluster
 * outrun the learner for good.
 */
static bool behind(const struct paxos_learner *l)
{
	if (!l->started || l->highest_seen < l->next ||
	    l->highest_seen - l->next < l->opt.repeat_batch)
		return false;
	paxos_iid batch = min_iid(l->opt.repeat_batch, l->opt.window);
	for (paxos_iid k = 1; k < batch; k++)
		if (slot_closed(l, l->next + k))
			return false;
	return true;
}

static bool asked_recently(const struct paxos_learner *l, paxos_time now)
{
	return l->asked && now >= l->last_asked_at && now - l->last_asked_at < l->opt.hole_check;
}

/*
 * Thesis 4.6.1: a lagging learner must not flood the acceptors. One request is outstanding
 * at a time: the next goes as soon as the previous range is delivered (so the acceptors'
 * answers pace it, however busy they are), or after a hole check if part of the answer was
 * lost.
 */
static bool may_catch_up(const struct paxos_learner *l, paxos_time now)
{
	return behind(l) && (l->next > l->last_asked_to || !asked_recently(l, now));
}

/*
 * Instances one catch-up request asks for: repeat_batch, or fewer when the instances delivered
 * lately are large: an acceptor stops its answer at PAXOS_REPEAT_ANSWER_BYTES, and a learner
 * that asked for more would wait a whole hole check for the rest (the self-clocked ask goes out
 * only once the whole range is in), catching up no faster than a live cluster moves on. Half
 * of those bytes, so that instances up to twice the average still fit.
 */
static paxos_iid catch_up_span(const struct paxos_learner *l)
{
	uint64_t average = l->instance_bytes_x8 / 8;
	paxos_iid fit = average ? PAXOS_REPEAT_ANSWER_BYTES / 2 / average : l->opt.repeat_batch;
	return fit < 1 ? 1 : min_iid(fit, l->opt.repeat_batch);
}

/* Asks for a catch-up span of instances from next on (what the window can hold). */
static void ask_from_next(struct paxos_learner *l, paxos_time now, const struct paxos_emitter *out)
{
	paxos_iid from = l->next;
	/* As an offset from next, so that no bound can overflow. */
	paxos_iid span = min_iid(l->highest_seen - from, catch_up_span(l) - 1);
	span = min_iid(span, l->opt.window - 1);
	paxos_iid to = from + span;
	uint64_t missing = 0;
	for (paxos_iid k = 0; k <= span; k++)
		if (!slot_closed(l, from + k))
			missing++;
	l->counters->repeats_requested += missing;
	l->asked = true;
	l->answered = false;
	l->last_asked_to = to;
	l->last_asked_at = now;
	send_repeat(out, from, to);
}

/*
 * The answer to the last request is in, yet the instance right after its range is missing
 * while a later one is closed: the hole that request was for (a stall's, or the end of a
 * catch-up) goes on, so its next part is asked for at once rather than after two more hole
 * checks. Looked at once per answer.
 */
static bool hole_goes_on(const struct paxos_learner *l)
{
	if (l->next != l->last_asked_to + 1 || slot_closed(l, l->next))
		return false;
	paxos_iid top = min_iid(l->highest_seen, l->next + l->opt.window - 1);
	for (paxos_iid iid = l->next + 1; iid <= top; iid++)
		if (slot_closed(l, iid))
			return true;
	return false;
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
		if (l->fetching && accepted_valid(l, &m->u.accepted))
			fetch_accepted(l, &m->u.accepted);
		handle_accepted(l, &m->u.accepted, now);
		/* Self-clocked catch-up: the answer to the last request is in, ask for the
		 * next batch now rather than at the next tick. */
		if (l->asked && l->next > l->last_asked_to) {
			bool just_answered = !l->answered;
			l->answered = true;
			if (may_catch_up(l, now) || (just_answered && hole_goes_on(l)))
				ask_from_next(l, now, out);
		}
		break;
	case PAXOS_MSG_ACCEPT:
		if (!paxos_msg_plausible(m)) {
			l->counters->implausible_ballots++;
			break;
		}
		handle_accept(l, &m->u.accept);
		break;
	case PAXOS_MSG_ACCEPTOR_STATE:
		if (l->fetching && m->u.acceptor_state.trim_iid)
			fetch_trimmed(l, m->u.acceptor_state.acceptor_id,
				      m->u.acceptor_state.trim_iid);
		handle_acceptor_state(l, &m->u.acceptor_state);
		break;
	case PAXOS_MSG_TRIMMED:
		if (l->fetching)
			fetch_trimmed(l, m->u.trimmed.acceptor_id, m->u.trimmed.iid);
		handle_trim_report(l, m->u.trimmed.acceptor_id, m->u.trimmed.iid);
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

/*
 * Stalled for PAXOS_REPAIR_AFTER hole checks although the repeats were answered: the acceptors
 * this learner hears hold no quorum ballot for next (a quorum that chose it lost a member, and
 * none of the rest learned it as final). Only the leader can close such an instance, by
 * running it again (PAXOS_MSG_REPAIR); asked again every PAXOS_REPAIR_EVERY checks while
 * stalled. The request names next and the last instance up to PAXOS_REPAIR_SPAN - 1 above it
 * that is not closed either.
 */
static void ask_repair(struct paxos_learner *l, const struct paxos_emitter *out)
{
	paxos_iid span = min_iid(l->highest_seen - l->next, PAXOS_REPAIR_SPAN - 1);
	span = min_iid(span, l->opt.window - 1);
	paxos_iid to = l->next;
	for (paxos_iid k = 1; k <= span; k++)
		if (!slot_closed(l, l->next + k))
			to = l->next + k;
	struct paxos_message m = {.type = PAXOS_MSG_REPAIR};
	m.u.repair.from = l->next;
	m.u.repair.to = to;
	l->counters->repairs_requested++;
	if (out)
		paxos_emit(out, PAXOS_GROUP_PROPOSERS, &m);
}

/*
 * Values a quorum named that are still missing a quarter hole check later were lost, not late:
 * a repeat for each such instance (its answer carries the value), again every hole check.
 * Asking at once would, under load, ask for most values the accepts are about to bring, and
 * every repeat answer goes to every learner.
 */
static void ask_values(struct paxos_learner *l, paxos_time now, const struct paxos_emitter *out)
{
	bool still = false;
	for (paxos_iid k = 0; l->started && k < l->opt.window && l->next + k <= l->highest_seen;
	     k++) {
		struct slot *s = slot_of(l, l->next + k);
		if (s->iid != l->next + k || s->closed || !s->lacking)
			continue;
		still = true;
		if (now < s->lacking_since || (s->asked && now < s->asked_at)) {
			s->lacking_since = s->asked_at = now; /* the clock went back */
			continue;
		}
		if (s->asked ? now - s->asked_at < l->opt.hole_check
			     : now - s->lacking_since < l->opt.hole_check / 4)
			continue;
		s->asked = true;
		s->asked_at = now;
		l->counters->repeats_requested++;
		send_repeat(out, s->iid, s->iid);
	}
	l->lacking = still;
}

void paxos_learner_tick(struct paxos_learner *l, paxos_time now, const struct paxos_emitter *out)
{
	if (!l)
		return;
	l->now = now;
	if (l->fetching)
		fetch_tick(l, now, out);
	if (l->lacking)
		ask_values(l, now, out);
	if (!l->checked_once || now < l->last_check) {
		l->checked_once = true;
		l->last_check = now;
		l->next_at_last_check = l->next;
		return;
	}
	bool check_due = now - l->last_check >= l->opt.hole_check;
	/* Stalled: next did not move for a whole hole check, and something above it exists. */
	bool stalled = l->next == l->next_at_last_check && l->started && l->highest_seen >= l->next;
	if (check_due) {
		l->last_check = now;
		l->next_at_last_check = l->next;
		l->stalled_checks = stalled ? l->stalled_checks + 1 : 0;
		if (l->stalled_checks >= PAXOS_REPAIR_AFTER &&
		    (l->stalled_checks - PAXOS_REPAIR_AFTER) % PAXOS_REPAIR_EVERY == 0)
			ask_repair(l, out);
	}
	if (may_catch_up(l, now)) {
		ask_from_next(l, now, out);
		return;
	}
	/* Otherwise only a stalled learner asks: a busy one's "holes" are mostly instances in
	 * flight. */
	if (!check_due || !stalled || asked_recently(l, now))
		return;
	ask_from_next(l, now, out);
}

int paxos_learner_step_skip_to(struct paxos_learner *l, paxos_iid first)
{
	if (l->event_count)
		return PAXOS_E_INVALID;
	if (!l->started) { /* FROM_CURRENT: this is the current instance */
		l->started = true;
		l->next = first > l->next ? first : l->next;
	}
	if (first <= l->next)
		return PAXOS_OK;
	for (uint32_t i = 0; i < l->opt.window; i++)
		if (l->slots[i].iid != 0 && l->slots[i].iid < first)
			slot_reset(l, &l->slots[i], 0);
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

paxos_iid paxos_learner_highest_seen(const struct paxos_learner *l)
{
	return l->highest_seen;
}
