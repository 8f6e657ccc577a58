/* SPDX-License-Identifier: BSD-3-Clause */
/* The proposer's unit tests' harness (proposer_fixture.h). */
#include "proposer_fixture.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "support.h"

uint32_t rnd(struct sim *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return (uint32_t)(s->rng >> 11);
}

/* What the proposer does, observed as it is sent (before any loss). */
void observe(struct sim *s, const struct paxos_message *m)
{
	if (m->type == PAXOS_MSG_PREPARE && m->u.prepare.iid < MAX_IID) {
		paxos_iid iid = m->u.prepare.iid;
		if (s->nprepares[iid] < 8)
			s->prepares[iid][s->nprepares[iid]++] = m->u.prepare.ballot;
	}
	if (m->type == PAXOS_MSG_CHOSEN) {
		/* The same word as an accept's range: each instance closed at its ballot. */
		const struct paxos_chosen *c = &m->u.chosen;
		ck_assert_uint_ge(c->from, 1);
		ck_assert_uint_le(c->from, c->to);
		for (paxos_iid i = c->from; i <= c->to; i++) {
			ck_assert_uint_lt(i, MAX_IID);
			ck_assert(s->learn[i].closed && s->learn[i].chosen_ballot == c->ballot);
		}
		s->chosen_sent++;
		s->chosen_from = c->from;
		s->chosen_to = c->to;
	}
	if (m->type == PAXOS_MSG_ACCEPT && m->u.accept.iid < MAX_IID) {
		/* What an accept says was chosen is: each instance closed with the value proposed
		 * at the accept's ballot. */
		const struct paxos_accept *a = &m->u.accept;
		s->said_from = a->chosen_from;
		s->said_to = a->chosen_to;
		s->said_rest = a->spares_rest;
		for (paxos_iid i = a->chosen_from; a->chosen_to && i <= a->chosen_to; i++) {
			ck_assert_uint_lt(i, MAX_IID);
			ck_assert_msg(s->learn[i].closed && s->learn[i].chosen_ballot == a->ballot,
				      "accept %llu says %llu was chosen at %llu",
				      (unsigned long long)a->iid, (unsigned long long)i,
				      (unsigned long long)a->ballot);
			s->instances_said++;
		}
		s->accept_sent[m->u.accept.iid] = true;
		uint32_t in_phase2 = 0;
		for (paxos_iid i = 1; i < MAX_IID; i++)
			if (s->accept_sent[i] && !s->learn[i].closed)
				in_phase2++;
		if (in_phase2 > s->max_in_phase2)
			s->max_in_phase2 = in_phase2;
	}
}

void net_emit(void *ctx, enum paxos_group to, const struct paxos_message *m)
{
	struct sim *s = ctx;
	note_due(s); /* an epoch the proposer took is stored before its message leaves */
	observe(s, m);
	if (s->drop[m->type] || rnd(s) % 100 < s->loss_percent)
		return;
	ck_assert_uint_lt(s->net_len, NET_MAX);
	struct packet *pk = &s->net[s->net_len++];
	pk->to = to;
	pk->m = *m;
	struct paxos_value *v = paxos_msg_value(&pk->m);
	if (v) {
		ck_assert_uint_le(v->len, VMAX);
		memcpy(pk->buf, v->data, v->len);
		v->data = pk->buf;
	}
}

uint32_t sim_batch_limit = 1; /* for the next sim_new */
uint32_t sim_max_backlog = 0;
paxos_time sim_skip_idle = 0;

struct paxos_proposer_options sim_options(uint32_t window, uint32_t concurrency,
					  uint32_t pending_size)
{
	struct paxos_proposer_options o = {
	    .id = 2,
	    .acceptors = NACC,
	    .window = window,
	    .concurrency = concurrency,
	    .pending_size = pending_size,
	    .max_value = VMAX,
	    .batch_limit = sim_batch_limit,
	    .max_backlog = sim_max_backlog,
	    .phase1_timeout = PHASE1_TIMEOUT,
	    .phase2_timeout = PHASE2_TIMEOUT,
	    .skip_idle = sim_skip_idle,
	};
	return o;
}

struct sim *sim_new(uint32_t window, uint32_t concurrency, uint32_t pending_size)
{
	struct sim *s = calloc(1, sizeof(*s));
	s->net = malloc(sizeof(*s->net) * NET_MAX);
	s->rng = 88172645463325252ull;
	s->out.emit = net_emit;
	s->out.ctx = s;
	s->next_deliver = 1;
	s->concurrency = concurrency;
	s->now = 1000;
	struct paxos_proposer_options o = sim_options(window, concurrency, pending_size);
	s->p = paxos_proposer_new(&o, &s->counters);
	ck_assert_ptr_nonnull(s->p);
	return s;
}

void sim_free(struct sim *s)
{
	paxos_proposer_free(s->p);
	free(s->net);
	free(s);
}

void acceptor_reply(struct sim *s, enum paxos_group to, struct paxos_message *m)
{
	net_emit(s, to, m);
}

void reject(struct sim *s, uint32_t a, paxos_iid iid, paxos_ballot promised)
{
	struct paxos_message r = {.type = PAXOS_MSG_REJECT};
	r.u.reject = (struct paxos_reject){.iid = iid, .ballot = promised, .acceptor_id = a};
	acceptor_reply(s, PAXOS_GROUP_PROPOSERS, &r);
}

void acceptor_handle(struct sim *s, uint32_t a, const struct paxos_message *m)
{
	if (m->type == PAXOS_MSG_PREPARE) {
		const struct paxos_prepare *pr = &m->u.prepare;
		ck_assert_uint_lt(pr->iid, MAX_IID);
		struct acceptor_slot *st = &s->acc[a][pr->iid];
		if (pr->ballot < st->promised) {
			reject(s, a, pr->iid, st->promised);
			return;
		}
		st->promised = pr->ballot;
		struct paxos_message r = {.type = PAXOS_MSG_PROMISE};
		r.u.promise = (struct paxos_promise){.iid = pr->iid,
						     .ballot = pr->ballot,
						     .value_ballot = st->accepted,
						     .value = {st->value, st->len},
						     .acceptor_id = a};
		acceptor_reply(s, PAXOS_GROUP_PROPOSERS, &r);
	} else if (m->type == PAXOS_MSG_ACCEPT) {
		const struct paxos_accept *ac = &m->u.accept;
		ck_assert_uint_lt(ac->iid, MAX_IID);
		struct acceptor_slot *st = &s->acc[a][ac->iid];
		if (ac->ballot < st->promised) {
			reject(s, a, ac->iid, st->promised);
			return;
		}
		st->promised = st->accepted = ac->ballot;
		memcpy(st->value, ac->value.data, ac->value.len);
		st->len = ac->value.len;
		struct paxos_message r = {.type = PAXOS_MSG_ACCEPTED};
		r.u.accepted = (struct paxos_accepted){.iid = ac->iid,
						       .ballot = ac->ballot,
						       .value = {st->value, st->len},
						       .acceptor_id = a};
		acceptor_reply(s, PAXOS_GROUP_LEARNERS, &r);
	}
}

void deliver_ready(struct sim *s)
{
	while (s->next_deliver < MAX_IID && s->learn[s->next_deliver].closed) {
		struct learner_slot *l = &s->learn[s->next_deliver];
		struct paxos_value v = {l->chosen, l->chosen_len}, one;
		uint32_t count;
		if (paxos_batch_is_skip(&v)) {
			s->nskips++;
			s->ninstances++;
			paxos_proposer_delivered_ballot(s->p, s->next_deliver++, &v,
							s->deliver_ballots ? l->chosen_ballot : 0,
							s->now, &s->out);
			continue;
		}
		ck_assert_int_eq(paxos_batch_count(&v, &count), PAXOS_OK);
		struct paxos_batch_iter it;
		paxos_batch_iter_init(&it, &v);
		for (uint32_t pos = 0; paxos_batch_next(&it, &one) == 1; pos++) {
			ck_assert_uint_lt(s->ndelivered, MAX_VALUES);
			memcpy(s->delivered[s->ndelivered], one.data, one.len);
			s->delivered[s->ndelivered][one.len] = 0;
			s->delivered_iid[s->ndelivered] = s->next_deliver;
			s->delivered_pos[s->ndelivered] = pos;
			s->ndelivered++;
		}
		s->ninstances++;
		paxos_proposer_delivered_ballot(s->p, s->next_deliver++, &v,
						s->deliver_ballots ? l->chosen_ballot : 0, s->now,
						&s->out);
	}
}

/* Closed when a quorum accepted the same ballot; a later quorum must agree (safety). */
void learner_handle(struct sim *s, const struct paxos_accepted *ac)
{
	ck_assert_uint_lt(ac->iid, MAX_IID);
	struct learner_slot *l = &s->learn[ac->iid];
	uint32_t a = ac->acceptor_id;
	if (ac->ballot < l->ballot[a])
		return;
	l->ballot[a] = ac->ballot;
	memcpy(l->value[a], ac->value.data, ac->value.len);
	l->len[a] = ac->value.len;
	uint32_t same = 0;
	for (uint32_t b = 0; b < NACC; b++)
		if (l->ballot[b] == ac->ballot)
			same++;
	if (same < QUORUM)
		return;
	if (l->closed) {
		ck_assert_msg(l->chosen_len == ac->value.len &&
				  memcmp(l->chosen, ac->value.data, ac->value.len) == 0,
			      "instance %llu chose two values", (unsigned long long)ac->iid);
		return;
	}
	l->closed = true;
	memcpy(l->chosen, ac->value.data, ac->value.len);
	l->chosen_len = ac->value.len;
	l->chosen_ballot = ac->ballot;
	struct paxos_value v = {l->chosen, l->chosen_len};
	paxos_proposer_closed(s->p, ac->iid, &v, s->now, &s->out);
	deliver_ready(s);
}

/* Deliver one message from the network; returns false when it is empty. */
bool pump(struct sim *s)
{
	if (s->net_len == 0)
		return false;
	size_t i = s->reorder ? rnd(s) % s->net_len : 0;
	struct packet pk = s->net[i];
	struct paxos_value *v = paxos_msg_value(&pk.m);
	if (v)
		v->data = pk.buf;
	if (s->reorder)
		s->net[i] = s->net[--s->net_len];
	else
		memmove(&s->net[0], &s->net[1], --s->net_len * sizeof(*s->net));
	switch (pk.to) {
	case PAXOS_GROUP_ACCEPTORS:
		for (uint32_t a = 0; a < NACC; a++)
			acceptor_handle(s, a, &pk.m);
		break;
	case PAXOS_GROUP_PROPOSERS:
		paxos_proposer_handle(s->p, &pk.m, s->now, &s->out);
		break;
	case PAXOS_GROUP_LEARNERS:
		if (pk.m.type == PAXOS_MSG_ACCEPTED)
			learner_handle(s, &pk.m.u.accepted);
		break;
	default:
		break;
	}
	ck_assert_uint_le(s->max_in_phase2, s->concurrency);
	return true;
}

void run(struct sim *s)
{
	for (int n = 0; pump(s); n++)
		ck_assert_int_lt(n, 1000000);
}

void advance(struct sim *s, paxos_time dt)
{
	s->now += dt;
	paxos_proposer_tick(s->p, s->now, &s->out);
}

int submit(struct sim *s, const char *v)
{
	struct paxos_value val = value_of(v);
	return paxos_proposer_submit(s->p, &val, s->now, &s->out);
}

/* A client value naming its submission, as a node submits it. */
int submit_id(struct sim *s, const char *v, uint64_t id)
{
	struct paxos_message m = {.type = PAXOS_MSG_CLIENT_VALUE};
	m.u.client_value.value = value_of(v);
	m.u.client_value.id = id;
	int rc = paxos_proposer_queue_value(s->p, &m.u.client_value);
	paxos_proposer_assign(s->p, s->now, &s->out);
	return rc;
}

/* Appends client value v of submission id to the frame buf (VMAX bytes, *used filled). */
void frame_add(uint8_t *buf, uint32_t *used, const char *v, uint64_t id)
{
	struct paxos_value one = value_of(v);
	uint8_t *dst = paxos_batch_reserve_id(buf, VMAX, used, one.len, id);
	ck_assert_ptr_nonnull(dst);
	memcpy(dst, one.data, one.len);
}

void lead(struct sim *s)
{
	paxos_proposer_set_leader(s->p, true, 1, s->now, &s->out);
}

/* The frame of one client value s (in a static buffer). */
struct paxos_value frame1(const char *s)
{
	static uint8_t buf[VMAX];
	uint32_t used = 0;
	struct paxos_value one = value_of(s);
	ck_assert_int_eq(paxos_batch_append(buf, sizeof(buf), &used, &one), PAXOS_OK);
	struct paxos_value f = {buf, used};
	return f;
}

bool frame1_is(const struct paxos_value *v, const char *s)
{
	struct paxos_value f = frame1(s);
	return v->len == f.len && memcmp(v->data, f.data, f.len) == 0;
}

/* Seed acceptor a with (the frame of) v accepted at ballot b for iid. */
void seed_accepted(struct sim *s, uint32_t a, paxos_iid iid, paxos_ballot b, const char *v)
{
	struct acceptor_slot *st = &s->acc[a][iid];
	struct paxos_value f = frame1(v);
	st->promised = st->accepted = b;
	st->len = f.len;
	memcpy(st->value, f.data, f.len);
}

void send_repair(struct sim *s, paxos_iid from, paxos_iid to)
{
	struct paxos_message m = {.type = PAXOS_MSG_REPAIR};
	m.u.repair = (struct paxos_repair){from, to};
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
}

uint32_t raised_to;
uint32_t prepares_before_raise; /* prepares emitted before the epoch was reported */

uint32_t prepares_seen(const struct sim *s)
{
	uint32_t n = 0;
	for (paxos_iid iid = 0; iid < MAX_IID; iid++)
		n += s->nprepares[iid];
	return n;
}

/* The first ready that holds an epoch is noted, with the prepares sent before it, and
 * stored at once. */
void note_due(struct sim *s)
{
	struct paxos_proposer_ready rd;
	if (!s->p || !paxos_proposer_ready(s->p, &rd))
		return;
	if (!raised_to) {
		raised_to = rd.epoch;
		prepares_before_raise = prepares_seen(s);
	}
	paxos_proposer_advance(s->p, rd.epoch);
}
