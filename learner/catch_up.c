/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hole checks and catch-up: the learner's tick, and what it asks for the instances it cannot
 * close by listening: the next range from next on when it is behind or stalled (thesis 4.6.1),
 * the values a quorum named that never came, and a repair from the leader when the acceptors
 * it hears hold no quorum ballot. Thesis 3.3: "The learner periodically checks for holes and
 * asks the acceptors to retransmit their decision for the corresponding instances."
 */
#include "window.h"

static paxos_iid min_iid(paxos_iid a, paxos_iid b)
{
	return a < b ? a : b;
}

static bool slot_closed(const struct paxos_learner *l, paxos_iid iid)
{
	const struct slot *s = &l->slots[iid % l->opt.window];
	return s->iid == iid && s->closed;
}

/* An acceptor that answered with an instance its reports said was trimmed is not believed for
 * this many hole checks from the ask, asked again or not: a forger would get in between the
 * learner's repeated question and the acceptors' answers. */
#define TRIM_REFUTED_CHECKS 8u

void learner_note_asked(struct paxos_learner *l, paxos_iid from, paxos_time now)
{
	if (from != l->next)
		return;
	if (l->trim_ask == from && now >= l->trim_ask_at &&
	    now - l->trim_ask_at < TRIM_REFUTED_CHECKS * l->opt.hole_check)
		return;
	l->trim_ask = from;
	l->trim_ask_at = now;
	l->trim_refuted = 0;
	l->trim_heard = 0;
	for (uint32_t a = 0; a < l->opt.acceptors; a++)
		if (l->acceptor_trim[a] >= from)
			l->trim_heard |= 1u << a;
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
 * Thesis 4.6.1: a lagging learner must not flood the acceptors ("The learner starts asking
 * retransmissions, producing more traffic. The acceptors have to answer and produce even more
 * traffic."). One request is outstanding at a time: the next goes as soon as the previous range
 * is delivered (so the acceptors' answers pace it, however busy they are), or after a hole check
 * if part of the answer was lost.
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
	learner_note_asked(l, from, now);
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

/* Self-clocked catch-up: the answer to the last request is in, ask for the next batch now
 * rather than at the next tick. */
void learner_catch_up_on_accepted(struct paxos_learner *l, paxos_time now,
				  const struct paxos_emitter *out)
{
	if (l->asked && l->next > l->last_asked_to) {
		bool just_answered = !l->answered;
		l->answered = true;
		if (may_catch_up(l, now) || (just_answered && hole_goes_on(l)))
			ask_from_next(l, now, out);
	}
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
		learner_fetch_tick(l, now, out);
	if (l->lacking)
		ask_values(l, now, out);
	if (l->held)
		return; /* waiting for a snapshot: nothing from next on can be asked for */
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
