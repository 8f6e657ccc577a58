/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fetching single past instances on request (paxos_learner_fetch). Thesis 3.3: "Another
 * ability an application may need from the learner is to fetch the value for some specific
 * instance closed in the past. This can be easily achieved using retransmission requests."
 * Each fetch counts the answers to its repeat in a slot of its own outside the window, so that
 * fetching stays apart from delivery.
 */
#include "window.h"

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
	learner_slot_reset(l, &f->s, iid);
	f->done = done;
	f->arg = arg;
	f->started = f->last_sent = now;
	f->trimmed_by = 0;
	f->refuted = 0;
	l->fetching++;
	send_repeat(out, iid, iid);
	return PAXOS_OK;
}

void learner_fetch_accepted(struct paxos_learner *l, const struct paxos_accepted *a)
{
	for (uint32_t i = 0; i < PAXOS_LEARNER_MAX_FETCHES; i++) {
		struct fetch *f = &l->fetches[i];
		if (f->s.iid != a->iid)
			continue;
		if (a->acceptor_id < l->opt.acceptors) { /* it holds the instance */
			f->trimmed_by &= ~(1u << a->acceptor_id);
			f->refuted |= 1u << a->acceptor_id;
		}
		if (learner_slot_take(l, &f->s, a))
			fetch_finish(l, f, PAXOS_OK);
	}
}

/* Trimmed by a quorum (see quorum_point in learner.c): it cannot be fetched any more. Only a
 * quarter hole check after the fetch asked, as for skipping (skip_if_asked in learner.c):
 * reports anyone can forge lose to an acceptor's answer with the instance, which comes first. */
static void fetch_check_trimmed(struct paxos_learner *l, struct fetch *f)
{
	uint32_t quorum = 0, members = learner_deciders(l, f->s.iid, &quorum);
	if (quorum && (uint32_t)__builtin_popcount(f->trimmed_by & members) >= quorum &&
	    l->now >= f->started && l->now - f->started >= l->opt.hole_check / 4)
		fetch_finish(l, f, PAXOS_E_TRIMMED);
}

/* An acceptor trimmed everything up to trim. */
void learner_fetch_trimmed(struct paxos_learner *l, uint32_t acceptor, paxos_iid trim)
{
	if (acceptor >= l->opt.acceptors)
		return;
	for (uint32_t i = 0; i < PAXOS_LEARNER_MAX_FETCHES; i++) {
		struct fetch *f = &l->fetches[i];
		if (f->s.iid == 0 || f->s.iid > trim || (f->refuted & (1u << acceptor)))
			continue;
		f->trimmed_by |= 1u << acceptor;
		fetch_check_trimmed(l, f);
	}
}

/* Resends unanswered fetches every hole check, gives up after fetch_timeout. */
void learner_fetch_tick(struct paxos_learner *l, paxos_time now, const struct paxos_emitter *out)
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
		} else {
			fetch_check_trimmed(l, f);
			if (f->s.iid != 0 && now - f->last_sent >= l->opt.hole_check) {
				f->last_sent = now;
				send_repeat(out, f->s.iid, f->s.iid);
			}
		}
	}
}

void learner_fetch_drop(struct paxos_learner *l)
{
	for (uint32_t i = 0; i < PAXOS_LEARNER_MAX_FETCHES && l->fetching; i++)
		if (l->fetches[i].s.iid != 0)
			fetch_finish(l, &l->fetches[i], PAXOS_E_TRIMMED);
}
