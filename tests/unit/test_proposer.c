/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proposer through its public API, against three acceptors simulated here (promise when
 * the ballot is at least the promised one, accept likewise, reject otherwise) and a tiny
 * quorum learner that reports closed/delivered instances back, like the internal learner.
 * Messages travel through a simulated network that can lose, drop by type and reorder.
 * Instance values are frames of client values (lib/core/batch.h); the learner here unpacks them
 * and records each client value with its instance and position.
 */
#include "check_main.h"
#include <paxos/options.h>
#include <paxos/proposer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "support.h"
#include "config_fields.h"

#define NACC 3u
#define QUORUM 2u
#define MAX_IID 1024u
#define MAX_VALUES 2048u
#define VMAX 32u
#define NET_MAX 65536u
#define PHASE1_TIMEOUT 5000u
#define PHASE2_TIMEOUT 7000u

struct packet {
	enum paxos_group to;
	struct paxos_message m;
	uint8_t buf[VMAX];
};

struct acceptor_slot {
	paxos_ballot promised;
	paxos_ballot accepted;
	uint8_t value[VMAX];
	uint32_t len;
};

struct learner_slot {
	paxos_ballot ballot[NACC]; /* 0: nothing heard from that acceptor */
	uint8_t value[NACC][VMAX];
	uint32_t len[NACC];
	bool closed;
	uint8_t chosen[VMAX];
	uint32_t chosen_len;
};

struct sim {
	struct paxos_proposer *p;
	struct paxos_counters counters;
	struct paxos_emitter out;
	uint32_t concurrency;
	paxos_time now;
	/* network */
	struct packet *net;
	size_t net_len;
	uint64_t rng;
	unsigned loss_percent;
	bool reorder;
	bool drop[PAXOS_MSG_TYPE_MAX + 1];
	/* acceptors and learner */
	struct acceptor_slot acc[NACC][MAX_IID];
	struct learner_slot learn[MAX_IID];
	paxos_iid next_deliver;
	char delivered[MAX_VALUES][VMAX + 1]; /* client values, in delivery order */
	paxos_iid delivered_iid[MAX_VALUES];
	uint32_t delivered_pos[MAX_VALUES];
	size_t ndelivered;
	size_t ninstances; /* instances delivered */
	size_t nskips;     /* of those, skips */
	/* what the proposer sent */
	bool accept_sent[MAX_IID];
	uint32_t max_in_phase2;
	paxos_ballot prepares[MAX_IID][8]; /* ballots of the prepares for an iid, in order */
	uint32_t nprepares[MAX_IID];
};

static uint32_t rnd(struct sim *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return (uint32_t)(s->rng >> 11);
}

/* What the proposer does, observed as it is sent (before any loss). */
static void observe(struct sim *s, const struct paxos_message *m)
{
	if (m->type == PAXOS_MSG_PREPARE && m->u.prepare.iid < MAX_IID) {
		paxos_iid iid = m->u.prepare.iid;
		if (s->nprepares[iid] < 8)
			s->prepares[iid][s->nprepares[iid]++] = m->u.prepare.ballot;
	}
	if (m->type == PAXOS_MSG_ACCEPT && m->u.accept.iid < MAX_IID) {
		s->accept_sent[m->u.accept.iid] = true;
		uint32_t in_phase2 = 0;
		for (paxos_iid i = 1; i < MAX_IID; i++)
			if (s->accept_sent[i] && !s->learn[i].closed)
				in_phase2++;
		if (in_phase2 > s->max_in_phase2)
			s->max_in_phase2 = in_phase2;
	}
}

static void note_due(struct sim *s);

static void net_emit(void *ctx, enum paxos_group to, const struct paxos_message *m)
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

static uint32_t sim_batch_limit = 1; /* for the next sim_new */
static uint32_t sim_max_backlog = 0;
static paxos_time sim_skip_idle = 0;

static struct paxos_proposer_options sim_options(uint32_t window, uint32_t concurrency,
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

static struct sim *sim_new(uint32_t window, uint32_t concurrency, uint32_t pending_size)
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

static void sim_free(struct sim *s)
{
	paxos_proposer_free(s->p);
	free(s->net);
	free(s);
}

static void acceptor_reply(struct sim *s, enum paxos_group to, struct paxos_message *m)
{
	net_emit(s, to, m);
}

static void reject(struct sim *s, uint32_t a, paxos_iid iid, paxos_ballot promised)
{
	struct paxos_message r = {.type = PAXOS_MSG_REJECT};
	r.u.reject = (struct paxos_reject){.iid = iid, .ballot = promised, .acceptor_id = a};
	acceptor_reply(s, PAXOS_GROUP_PROPOSERS, &r);
}

static void acceptor_handle(struct sim *s, uint32_t a, const struct paxos_message *m)
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

static void deliver_ready(struct sim *s)
{
	while (s->next_deliver < MAX_IID && s->learn[s->next_deliver].closed) {
		struct learner_slot *l = &s->learn[s->next_deliver];
		struct paxos_value v = {l->chosen, l->chosen_len}, one;
		uint32_t count;
		if (paxos_batch_is_skip(&v)) {
			s->nskips++;
			s->ninstances++;
			paxos_proposer_delivered(s->p, s->next_deliver++, &v, s->now, &s->out);
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
		paxos_proposer_delivered(s->p, s->next_deliver++, &v, s->now, &s->out);
	}
}

/* Closed when a quorum accepted the same ballot; a later quorum must agree (safety). */
static void learner_handle(struct sim *s, const struct paxos_accepted *ac)
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
	struct paxos_value v = {l->chosen, l->chosen_len};
	paxos_proposer_closed(s->p, ac->iid, &v, s->now, &s->out);
	deliver_ready(s);
}

/* Deliver one message from the network; returns false when it is empty. */
static bool pump(struct sim *s)
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

static void run(struct sim *s)
{
	for (int n = 0; pump(s); n++)
		ck_assert_int_lt(n, 1000000);
}

static void advance(struct sim *s, paxos_time dt)
{
	s->now += dt;
	paxos_proposer_tick(s->p, s->now, &s->out);
}

static int submit(struct sim *s, const char *v)
{
	struct paxos_value val = value_of(v);
	return paxos_proposer_submit(s->p, &val, s->now, &s->out);
}

/* A client value naming its submission, as a node submits it. */
static int submit_id(struct sim *s, const char *v, uint64_t id)
{
	struct paxos_message m = {.type = PAXOS_MSG_CLIENT_VALUE};
	m.u.client_value.value = value_of(v);
	m.u.client_value.id = id;
	int rc = paxos_proposer_queue_value(s->p, &m.u.client_value);
	paxos_proposer_assign(s->p, s->now, &s->out);
	return rc;
}

/* Appends client value v of submission id to the frame buf (VMAX bytes, *used filled). */
static void frame_add(uint8_t *buf, uint32_t *used, const char *v, uint64_t id)
{
	struct paxos_value one = value_of(v);
	uint8_t *dst = paxos_batch_reserve_id(buf, VMAX, used, one.len, id);
	ck_assert_ptr_nonnull(dst);
	memcpy(dst, one.data, one.len);
}

static void lead(struct sim *s)
{
	paxos_proposer_set_leader(s->p, true, 1, s->now, &s->out);
}

/* The frame of one client value s (in a static buffer). */
static struct paxos_value frame1(const char *s)
{
	static uint8_t buf[VMAX];
	uint32_t used = 0;
	struct paxos_value one = value_of(s);
	ck_assert_int_eq(paxos_batch_append(buf, sizeof(buf), &used, &one), PAXOS_OK);
	struct paxos_value f = {buf, used};
	return f;
}

static bool frame1_is(const struct paxos_value *v, const char *s)
{
	struct paxos_value f = frame1(s);
	return v->len == f.len && memcmp(v->data, f.data, f.len) == 0;
}

/* Seed acceptor a with (the frame of) v accepted at ballot b for iid. */
static void seed_accepted(struct sim *s, uint32_t a, paxos_iid iid, paxos_ballot b, const char *v)
{
	struct acceptor_slot *st = &s->acc[a][iid];
	struct paxos_value f = frame1(v);
	st->promised = st->accepted = b;
	st->len = f.len;
	memcpy(st->value, f.data, f.len);
}

static void send_repair(struct sim *s, paxos_iid from, paxos_iid to)
{
	struct paxos_message m = {.type = PAXOS_MSG_REPAIR};
	m.u.repair = (struct paxos_repair){from, to};
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
}

/*
 * A learner stalled on instance 1, which the leader decided and delivered: the leader runs it
 * again, phase 1 above every ballot it used, then phase 2 with the value phase 1 finds (the
 * learner of this test checks that a second quorum agrees with the first). A follower ignores
 * the request; the leader ignores instances it has not opened.
 */
START_TEST(test_repair_runs_a_decided_instance_again)
{
	struct sim *s = sim_new(4, 4, 8);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	send_repair(s, 1, 1); /* not leading yet */
	ck_assert_uint_eq(s->net_len, 0);
	lead(s);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	paxos_ballot used = 0;
	for (paxos_iid iid = 1; iid <= 4; iid++)
		for (uint32_t k = 0; k < s->nprepares[iid]; k++)
			if (s->prepares[iid][k] > used)
				used = s->prepares[iid][k];
	uint32_t before = s->nprepares[1];
	send_repair(s, 1, 1);
	send_repair(s, 1, 1); /* a second learner: one repair runs */
	ck_assert_uint_eq(s->nprepares[1], before + 1);
	ck_assert_uint_gt(s->prepares[1][before], used);
	s->accept_sent[1] = false;
	run(s);
	ck_assert(s->accept_sent[1]);
	ck_assert_uint_eq(s->counters.instances_repaired, 1);
	ck_assert_uint_eq(s->ndelivered, 1); /* nothing new, nothing twice */
	/* Once its phase 2 wait passed, the repair is over; a new request starts another. */
	advance(s, PHASE2_TIMEOUT);
	send_repair(s, 1, 1);
	ck_assert_uint_eq(s->nprepares[1], before + 2);
	run(s);
	ck_assert_uint_eq(s->counters.instances_repaired, 2);
	/* Beyond the window: not opened yet, nothing to repair. */
	send_repair(s, 50, 60);
	ck_assert_uint_eq(s->net_len, 0);
	sim_free(s);
}
END_TEST

START_TEST(test_options_from_config)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	cfg.acceptors = 5;
	cfg.proposer_window = 77;
	cfg.proposer_concurrency = 9;
	cfg.pending_size = 333;
	cfg.phase1_timeout_ms = 12;
	cfg.phase2_timeout_ms = 34;
	struct paxos_proposer_options o;
	paxos_proposer_options_from_config(&o, &cfg, 4);
	ck_assert_uint_eq(o.id, 4);
	ck_assert_uint_eq(o.acceptors, 5);
	ck_assert_uint_eq(o.window, 77);
	ck_assert_uint_eq(o.concurrency, 9);
	ck_assert_uint_eq(o.pending_size, 333);
	ck_assert_uint_eq(o.max_value, paxos_config_max_instance_value(&cfg));
	ck_assert_uint_eq(o.max_value, paxos_config_max_value(&cfg) + PAXOS_BATCH_HEADER);
	ck_assert_uint_eq(o.batch_limit, 64);
	ck_assert_uint_eq(o.max_backlog, 32);
	ck_assert_uint_eq(o.phase1_timeout, 12000);
	ck_assert_uint_eq(o.phase2_timeout, 34000);
	struct paxos_proposer *p = paxos_proposer_new(&o, NULL);
	ck_assert_ptr_nonnull(p);
	paxos_proposer_free(p);
}
END_TEST

START_TEST(test_bad_options)
{
	struct paxos_proposer_options good = {.id = 1,
					      .acceptors = 3,
					      .window = 4,
					      .concurrency = 1,
					      .pending_size = 4,
					      .max_value = 16};
	struct paxos_proposer_options o = good;
	o.id = PAXOS_MAX_PROPOSERS;
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o = good;
	o.acceptors = PAXOS_MAX_ACCEPTORS + 1;
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o = good;
	o.window = 0;
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o = good;
	o.concurrency = 0;
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o = good;
	o.max_value = 0;
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o.max_value = PAXOS_BATCH_HEADER; /* no room for a framed value */
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o = good;
	o.epoch = PAXOS_PROPOSER_EPOCH_LIMIT;
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o.epoch = PAXOS_PLAUSIBLE_EPOCHS; /* its ballots would be dropped as implausible */
	ck_assert_ptr_null(paxos_proposer_new(&o, NULL));
	o.epoch = PAXOS_PLAUSIBLE_EPOCHS - 1;
	struct paxos_proposer *last = paxos_proposer_new(&o, NULL);
	ck_assert_ptr_nonnull(last);
	paxos_proposer_free(last);
	ck_assert_ptr_null(paxos_proposer_new(NULL, NULL));
	paxos_proposer_free(NULL);
}
END_TEST

START_TEST(test_leader_preexecutes_window)
{
	struct paxos_counters c = {0};
	struct paxos_proposer_options o = {.id = 2,
					   .acceptors = 3,
					   .window = 5,
					   .concurrency = 2,
					   .pending_size = 8,
					   .max_value = 16,
					   .phase1_timeout = 100,
					   .phase2_timeout = 100};
	struct paxos_proposer *p = paxos_proposer_new(&o, &c);
	struct recorder *r = recorder_new();
	ck_assert(!paxos_proposer_is_leader(p));
	ck_assert_uint_eq(paxos_proposer_ballot(p), 0);
	paxos_proposer_set_leader(p, true, 1, 0, &r->emitter);
	ck_assert(paxos_proposer_is_leader(p));
	ck_assert_uint_eq(paxos_proposer_ballot(p), 102);
	ck_assert_uint_eq(paxos_proposer_window_in_use(p), 0); /* phase 1 only, no value */
	ck_assert_uint_eq(r->count, 5);
	for (size_t i = 0; i < 5; i++) {
		ck_assert_int_eq(r->group[i], PAXOS_GROUP_ACCEPTORS);
		ck_assert_int_eq(r->msg[i].type, PAXOS_MSG_PREPARE);
		ck_assert_uint_eq(r->msg[i].u.prepare.iid, i + 1);
		ck_assert_uint_eq(r->msg[i].u.prepare.ballot, 102);
	}
	/* Leading again changes nothing: every instance is started. */
	recorder_clear(r);
	paxos_proposer_set_leader(p, true, 1, 0, &r->emitter);
	ck_assert_uint_eq(r->count, 0);
	recorder_free(r);
	paxos_proposer_free(p);
}
END_TEST

/*
 * learner-merge: a leader that proposed nothing for skip_idle closes its next instance with a
 * skip, one at a time (not while one is in phase 2), and none while values wait; a follower
 * proposes none. Skips are chosen like values and client values still go in order after them.
 */
START_TEST(test_idle_leader_proposes_skips)
{
	sim_skip_idle = 10000;
	struct sim *s = sim_new(5, 3, 8);
	sim_skip_idle = 0;
	advance(s, 50000); /* not leading: nothing */
	run(s);
	ck_assert_uint_eq(s->counters.skips_proposed, 0);
	lead(s);
	run(s);
	advance(s, 5000); /* idle, but not for long enough yet */
	run(s);
	ck_assert_uint_eq(s->ninstances, 0);
	advance(s, 6000);
	ck_assert_uint_eq(s->net_len, 1); /* one accept, with the skip frame */
	ck_assert_int_eq(s->net[0].m.type, PAXOS_MSG_ACCEPT);
	ck_assert(paxos_batch_is_skip(&s->net[0].m.u.accept.value));
	ck_assert_uint_eq(s->counters.values_proposed, 0);
	advance(s, 20000); /* still in phase 2: no second skip */
	ck_assert_uint_eq(s->counters.skips_proposed, 1);
	run(s);
	ck_assert_uint_eq(s->ninstances, 1);
	ck_assert_uint_eq(s->nskips, 1);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	run(s);
	advance(s, 5000); /* busy recently: no skip */
	run(s);
	ck_assert_uint_eq(s->counters.skips_proposed, 1);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "a");
	ck_assert_uint_eq(s->delivered_iid[0], 2);
	advance(s, 11000);
	run(s);
	ck_assert_uint_eq(s->counters.skips_proposed, 2);
	ck_assert_uint_eq(s->nskips, 2);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 0);
	sim_free(s);
}
END_TEST

/*
 * A new leader that may lack the clients' values announces its ballot: once phase 1 is done it
 * closes one instance with a skip (learners deliver an instance of the new leadership, and
 * their clients submit again; paxos_node_on_new_leader). A follower announces nothing, and
 * values waiting announce the ballot themselves: no skip then.
 */
START_TEST(test_new_leader_announces_itself_with_a_skip)
{
	struct sim *s = sim_new(5, 3, 8);
	paxos_proposer_announce(s->p, s->now, &s->out); /* not leading: nothing */
	run(s);
	ck_assert_uint_eq(s->counters.skips_proposed, 0);
	lead(s);
	paxos_proposer_announce(s->p, s->now, &s->out);
	run(s);
	ck_assert_uint_eq(s->counters.skips_proposed, 1);
	ck_assert_uint_eq(s->ninstances, 1);
	ck_assert_uint_eq(s->nskips, 1);
	ck_assert_uint_eq(s->ndelivered, 0);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK); /* values go on after it */
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_uint_eq(s->delivered_iid[0], 2);
	advance(s, 1000000); /* one skip per announcement, none when idle (no skip_idle) */
	run(s);
	ck_assert_uint_eq(s->counters.skips_proposed, 1);

	paxos_proposer_set_leader(s->p, false, 0, s->now, &s->out);
	ck_assert_int_eq(submit(s, "b"), PAXOS_OK);
	paxos_proposer_set_leader(s->p, true, 3, s->now, &s->out);
	paxos_proposer_announce(s->p, s->now, &s->out); /* "b" waits: it announces */
	run(s);
	ck_assert_uint_eq(s->counters.skips_proposed, 1);
	ck_assert_uint_eq(s->ndelivered, 2);
	ck_assert_str_eq(s->delivered[1], "b");
	ck_assert_uint_eq(s->delivered_iid[1], 3);
	sim_free(s);
}
END_TEST

START_TEST(test_non_leader_sends_nothing)
{
	struct sim *s = sim_new(4, 2, 8);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	struct paxos_message m = {.type = PAXOS_MSG_PROMISE};
	m.u.promise = (struct paxos_promise){.iid = 1, .ballot = 102, .acceptor_id = 0};
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	advance(s, 1000000);
	ck_assert_uint_eq(s->net_len, 0);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	ck_assert_uint_eq(s->counters.phase2_waited_phase1, 0);
	sim_free(s);
}
END_TEST

START_TEST(test_accept_right_after_phase1)
{
	struct sim *s = sim_new(5, 3, 8);
	lead(s);
	run(s); /* phase 1 for the window; no value yet: NV */
	ck_assert_uint_eq(s->net_len, 0);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	/* The accept leaves within submit: no phase 1 on the way. */
	ck_assert_uint_eq(s->net_len, 1);
	ck_assert_int_eq(s->net[0].m.type, PAXOS_MSG_ACCEPT);
	ck_assert_uint_eq(s->net[0].m.u.accept.iid, 1);
	ck_assert_uint_eq(s->net[0].m.u.accept.ballot, 102);
	ck_assert(frame1_is(&s->net[0].m.u.accept.value, "a"));
	ck_assert_uint_eq(s->counters.phase2_waited_phase1, 0);
	ck_assert_uint_eq(s->counters.values_proposed, 1);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "a");
	/* The window slid: instance 6 started phase 1. */
	ck_assert_uint_eq(s->nprepares[6], 1);
	sim_free(s);
}
END_TEST

START_TEST(test_value_waits_for_phase1)
{
	struct sim *s = sim_new(5, 3, 8);
	lead(s);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	ck_assert_uint_eq(s->counters.phase2_waited_phase1, 1);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "a");
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 0);
	sim_free(s);
}
END_TEST

START_TEST(test_concurrency_limit)
{
	struct sim *s = sim_new(10, 3, 16);
	lead(s);
	run(s);
	char v[16][8];
	for (int i = 0; i < 10; i++) {
		snprintf(v[i], sizeof(v[i]), "v%d", i);
		ck_assert_int_eq(submit(s, v[i]), PAXOS_OK);
	}
	/* Three accepts out, for the three lowest instances; the rest wait. */
	size_t accepts = 0;
	for (size_t i = 0; i < s->net_len; i++)
		if (s->net[i].m.type == PAXOS_MSG_ACCEPT) {
			ck_assert_uint_eq(s->net[i].m.u.accept.iid, ++accepts);
		}
	ck_assert_uint_eq(accepts, 3);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 7);
	ck_assert_uint_eq(paxos_proposer_window_in_use(s->p), 3);
	ck_assert_uint_eq(s->counters.phase2_waited_phase1, 0);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 10);
	ck_assert_uint_eq(s->max_in_phase2, 3);
	ck_assert_uint_eq(paxos_proposer_window_in_use(s->p), 0); /* all delivered */
	sim_free(s);
}
END_TEST

START_TEST(test_fifo_with_concurrency_one)
{
	struct sim *s = sim_new(8, 1, 64);
	s->rng = 12345;
	s->loss_percent = 20;
	s->reorder = true;
	lead(s);
	char v[40][8];
	for (int i = 0; i < 40; i++) {
		snprintf(v[i], sizeof(v[i]), "f%d", i);
		ck_assert_int_eq(submit(s, v[i]), PAXOS_OK);
	}
	for (int step = 0; s->ndelivered < 40; step++) {
		ck_assert_int_lt(step, 200000);
		if (!pump(s) || rnd(s) % 20 == 0)
			advance(s, 1000);
	}
	for (int i = 0; i < 40; i++)
		ck_assert_str_eq(s->delivered[i], v[i]);
	ck_assert_uint_eq(s->max_in_phase2, 1);
	sim_free(s);
}
END_TEST

START_TEST(test_pending_overflow)
{
	struct sim *s = sim_new(4, 1, 4);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(submit(s, "x"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "y"), PAXOS_E_FULL);
	struct paxos_message m = {.type = PAXOS_MSG_CLIENT_VALUE};
	m.u.client_value.value = value_of("z");
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	ck_assert_uint_eq(s->counters.pending_dropped, 2);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 4);
	char big[VMAX + 2];
	memset(big, 'b', VMAX + 1);
	big[VMAX + 1] = 0;
	ck_assert_int_eq(submit(s, big), PAXOS_E_TOO_BIG);
	ck_assert_uint_eq(s->counters.pending_dropped, 2);
	/* Once leading, the values go out and room frees up. */
	lead(s);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 4);
	ck_assert_int_eq(submit(s, "y"), PAXOS_OK);
	sim_free(s);
}
END_TEST

/* The refusals sent since net[from]: how many, the values they say were dropped, and whether
 * the last one names `want` (by paxos_value_hash). */
static uint32_t refusals_since(const struct sim *s, size_t from, uint32_t *dropped,
			       const char *want)
{
	uint32_t n = 0;
	bool named = want == NULL;
	for (size_t i = from; i < s->net_len; i++)
		if (s->net[i].m.type == PAXOS_MSG_REFUSED) {
			const struct paxos_refused *r = &s->net[i].m.u.refused;
			ck_assert_int_eq(s->net[i].to, PAXOS_GROUP_LEARNERS);
			ck_assert_uint_eq(r->proposer_id, 2);
			*dropped += r->dropped;
			n++;
			for (uint32_t k = 0; want && k < r->hashes.len / 8; k++) {
				uint64_t h = 0;
				for (int b = 7; b >= 0; b--)
					h = h << 8 | r->hashes.data[8 * k + (uint32_t)b];
				named |= h == paxos_value_hash(want, strlen(want));
			}
		}
	ck_assert(named);
	return n;
}

/* Flow control: a leader whose list is full tells the submitters (the learners group) which
 * values it dropped, once per read (here: per submit, or per assign after queued values); a
 * follower, whose list holds values the leader got too, says nothing. */
START_TEST(test_full_leader_refuses)
{
	struct sim *s = sim_new(4, 1, 2);
	uint32_t dropped = 0;
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "b"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "c"), PAXOS_E_FULL);
	advance(s, 1000);
	ck_assert_uint_eq(refusals_since(s, 0, &dropped, NULL), 0);
	lead(s);
	size_t mark = s->net_len;
	ck_assert_int_eq(submit(s, "d"), PAXOS_E_FULL); /* phase 1 is not done: a, b wait */
	ck_assert_uint_eq(refusals_since(s, mark, &dropped, "d"), 1);
	ck_assert_uint_eq(dropped, 1);
	/* A read's values are queued, then assigned together: one refusal names them all. */
	mark = s->net_len;
	dropped = 0;
	struct paxos_value e = value_of("e"), f = value_of("f");
	ck_assert_int_eq(paxos_proposer_queue(s->p, &e), PAXOS_E_FULL);
	ck_assert_int_eq(paxos_proposer_queue(s->p, &f), PAXOS_E_FULL);
	ck_assert_uint_eq(refusals_since(s, mark, &dropped, NULL), 0);
	paxos_proposer_assign(s->p, s->now, &s->out);
	ck_assert_uint_eq(refusals_since(s, mark, &dropped, "f"), 1);
	ck_assert_uint_eq(dropped, 2);
	ck_assert_uint_eq(s->counters.refusals_sent, 2);
	ck_assert_uint_eq(s->counters.pending_dropped, 4);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 2);
	sim_free(s);
}
END_TEST

/* paxos_proposer_drop_pending: a follower going lean empties its list (counted); a leader
 * keeps its values; the list takes values again afterwards. */
START_TEST(test_drop_pending)
{
	struct sim *s = sim_new(4, 1, 4);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(submit(s, "x"), PAXOS_OK);
	paxos_proposer_drop_pending(s->p);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 0);
	ck_assert_uint_eq(s->counters.pending_dropped, 3);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(submit(s, "y"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "y"), PAXOS_E_FULL);
	paxos_proposer_drop_pending(s->p);
	ck_assert_int_eq(submit(s, "z"), PAXOS_OK);
	lead(s);
	ck_assert_int_eq(submit(s, "w"), PAXOS_OK);
	paxos_proposer_drop_pending(s->p); /* leading: ignored */
	run(s);
	ck_assert_uint_eq(s->ndelivered, 2);
	ck_assert_str_eq(s->delivered[0], "z");
	ck_assert_str_eq(s->delivered[1], "w");
	sim_free(s);
}
END_TEST

START_TEST(test_client_value_message_and_other_types)
{
	struct sim *s = sim_new(4, 1, 4);
	lead(s);
	run(s);
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted = (struct paxos_accepted){.iid = 1, .ballot = 102, .value = value_of("q")};
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	m.type = PAXOS_MSG_PREPARE;
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	m.type = (enum paxos_msg_type)77;
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	paxos_proposer_handle(s->p, NULL, s->now, &s->out);
	ck_assert_uint_eq(s->net_len, 0);
	m = (struct paxos_message){.type = PAXOS_MSG_CLIENT_VALUE};
	m.u.client_value.value = value_of("cv");
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "cv");
	sim_free(s);
}
END_TEST

START_TEST(test_phase1_timeout)
{
	struct sim *s = sim_new(2, 1, 4);
	s->drop[PAXOS_MSG_PREPARE] = true;
	lead(s);
	advance(s, PHASE1_TIMEOUT - 1);
	ck_assert_uint_eq(s->nprepares[1], 1);
	advance(s, 1);
	ck_assert_uint_eq(s->nprepares[1], 2);
	ck_assert_uint_eq(s->nprepares[2], 2);
	ck_assert_uint_eq(s->prepares[1][1], 202);
	ck_assert_uint_eq(s->prepares[2][1], 202);
	ck_assert_uint_eq(s->counters.phase1_timeouts, 2);
	/* Each timeout doubles the next wait. */
	advance(s, 2 * PHASE1_TIMEOUT - 1);
	ck_assert_uint_eq(s->nprepares[1], 2);
	advance(s, 1);
	ck_assert_uint_eq(s->prepares[1][2], 302);
	s->drop[PAXOS_MSG_PREPARE] = false;
	advance(s, 4 * PHASE1_TIMEOUT);
	ck_assert_int_eq(submit(s, "late"), PAXOS_OK);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	sim_free(s);
}
END_TEST

START_TEST(test_phase2_timeout_restarts_phase1)
{
	struct sim *s = sim_new(2, 1, 4);
	lead(s);
	run(s);
	s->drop[PAXOS_MSG_ACCEPT] = true;
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	ck_assert(s->accept_sent[1]);
	advance(s, PHASE2_TIMEOUT);
	ck_assert_uint_eq(s->counters.phase2_timeouts, 1);
	ck_assert_uint_eq(s->nprepares[1], 2);
	ck_assert_uint_eq(s->prepares[1][1], 202);
	ck_assert_uint_eq(s->net_len, 1); /* the prepare, not an accept */
	ck_assert_int_eq(s->net[0].m.type, PAXOS_MSG_PREPARE);
	s->drop[PAXOS_MSG_ACCEPT] = false;
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "a");
	ck_assert_uint_eq(s->acc[0][1].accepted, 202);
	sim_free(s);
}
END_TEST

/* Congestion: accepts that time out together halve the phase 2 window once (a burst lost in
 * one overflowing buffer is one signal), and instances closed let it grow back, never past
 * the configured concurrency. */
START_TEST(test_phase2_timeouts_halve_the_window)
{
	struct sim *s = sim_new(32, 8, 64);
	lead(s);
	run(s);
	ck_assert_uint_eq(s->counters.phase2_window, 8);
	s->drop[PAXOS_MSG_ACCEPT] = true;
	char v[40][8];
	for (int i = 0; i < 40; i++) {
		snprintf(v[i], sizeof(v[i]), "c%d", i);
		ck_assert_int_eq(submit(s, v[i]), PAXOS_OK);
	}
	advance(s, PHASE2_TIMEOUT);
	ck_assert_uint_eq(s->counters.phase2_timeouts, 8);
	ck_assert_uint_eq(s->counters.congestion_cuts, 1);
	ck_assert_uint_eq(s->counters.phase2_window, 4);
	s->drop[PAXOS_MSG_ACCEPT] = false;
	s->max_in_phase2 = 0;
	run(s);
	ck_assert_uint_eq(s->ndelivered, 40);
	ck_assert_uint_le(s->max_in_phase2, 8);
	ck_assert_uint_gt(s->counters.phase2_window, 4);
	ck_assert_uint_le(s->counters.phase2_window, 8);
	sim_free(s);
}
END_TEST

START_TEST(test_reject_skips_ballot)
{
	struct sim *s = sim_new(2, 1, 4);
	for (uint32_t a = 0; a < NACC; a++)
		s->acc[a][1].promised = 507;
	lead(s);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	run(s);
	/* Three rejects for 102; the ballot jumps once, past 507. */
	ck_assert_uint_eq(s->nprepares[1], 2);
	ck_assert_uint_eq(s->prepares[1][0], 102);
	ck_assert_uint_eq(s->prepares[1][1], 602);
	ck_assert_uint_eq(s->counters.rejects_received, 1);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "a");
	sim_free(s);
}
END_TEST

/* Epoch e's first ballot is (e * 2^32 + 1) * n + id; a restarted proposer gets e + 1. */
START_TEST(test_epoch_sets_first_ballot)
{
	struct sim *s = sim_new(2, 1, 4);
	paxos_proposer_free(s->p);
	struct paxos_proposer_options o = sim_options(2, 1, 4);
	o.epoch = 5;
	s->p = paxos_proposer_new(&o, &s->counters);
	ck_assert_uint_eq(paxos_proposer_epoch(s->p), 5);
	lead(s);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	run(s);
	paxos_ballot first = ((5ull << 32) + 1) * PAXOS_MAX_PROPOSERS + 2;
	ck_assert_uint_eq(s->prepares[1][0], first);
	ck_assert_uint_eq(s->prepares[2][0], first);
	ck_assert_uint_eq(s->acc[0][1].accepted, first);
	ck_assert_str_eq(s->delivered[0], "a");
	/* Leading again later never goes back to a ballot used before. */
	paxos_proposer_set_leader(s->p, false, 0, s->now, &s->out);
	paxos_proposer_set_leader(s->p, true, 2, s->now, &s->out);
	ck_assert_uint_eq(s->nprepares[2], 2);
	ck_assert_uint_eq(s->prepares[2][1], first + PAXOS_MAX_PROPOSERS);
	sim_free(s);
}
END_TEST

/* A recovering acceptor asks: the answer from a recorder, or NULL when there is none. */
static struct paxos_recover_info *ask_recovery(struct paxos_proposer *p, paxos_time now,
					       struct recorder *r, struct paxos_recover_info *info)
{
	struct paxos_message m = {.type = PAXOS_MSG_RECOVER_ASK};
	m.u.recover_ask.acceptor_id = 1;
	m.u.recover_ask.incarnation = 42;
	recorder_clear(r);
	paxos_proposer_handle(p, &m, now, &r->emitter);
	const struct paxos_message *a = recorder_find(r, PAXOS_MSG_RECOVER_INFO, 0);
	if (!a)
		return NULL;
	*info = a->u.recover_info;
	return info;
}

/* A restarted proposer (epoch above 1) answers a recovering acceptor only once it has run for
 * recovery_grace: what its earlier life sent may still be on its way, and its answer covers
 * only this life; until then it says that it ran before. In its first life it answers at
 * once. */
START_TEST(test_restarted_proposer_answers_recovery_after_grace)
{
	struct recorder *r = recorder_new();
	struct paxos_recover_info info;
	struct paxos_proposer_options o = sim_options(2, 1, 4);
	o.recovery_grace = 2000000;
	o.epoch = 1;
	struct paxos_proposer *first = paxos_proposer_new(&o, NULL);
	ck_assert_ptr_nonnull(ask_recovery(first, 1000, r, &info));
	ck_assert_uint_eq(info.highest_iid, 0);
	ck_assert_uint_eq(info.incarnation, 42);
	paxos_proposer_free(first);

	o.epoch = 3;
	struct paxos_proposer *again = paxos_proposer_new(&o, NULL);
	paxos_proposer_tick(again, 5000000, &r->emitter); /* its life starts here */
	/* Meanwhile it says only that it ran before: ballot 0, which no answer has. */
	ck_assert_ptr_nonnull(ask_recovery(again, 5000000, r, &info));
	ck_assert_uint_eq(info.highest_ballot, 0);
	ck_assert_uint_eq(info.highest_iid, 0);
	ck_assert_ptr_nonnull(ask_recovery(again, 6999999, r, &info));
	ck_assert_uint_eq(info.highest_ballot, 0);
	ck_assert_ptr_nonnull(ask_recovery(again, 7000000, r, &info));
	/* Below its first ballot: every ballot of its earlier lives. */
	ck_assert_uint_eq(info.highest_ballot, ((3ull << 32) + 1) * PAXOS_MAX_PROPOSERS + 2 - 1);
	paxos_proposer_free(again);
	recorder_free(r);
}
END_TEST

/* The acceptors began a new log: the leader's window starts over at its instance 1 (phase 1
 * for the whole window again), and a recovering acceptor of the new log is told of no accept
 * of the old one. */
START_TEST(test_new_log_starts_the_window_over)
{
	struct paxos_counters c = {0};
	struct paxos_proposer_options o = {.id = 2,
					   .acceptors = 3,
					   .window = 5,
					   .concurrency = 2,
					   .pending_size = 8,
					   .max_value = 16,
					   .phase1_timeout = 100,
					   .phase2_timeout = 100};
	struct paxos_proposer *p = paxos_proposer_new(&o, &c);
	struct recorder *r = recorder_new();
	paxos_proposer_set_leader(p, true, 1, 0, &r->emitter);
	for (paxos_iid iid = 1; iid <= 3; iid++)
		paxos_proposer_delivered(p, iid, NULL, 0, &r->emitter);
	recorder_clear(r);
	paxos_proposer_new_log(p, 0, &r->emitter);
	ck_assert(paxos_proposer_is_leader(p));
	ck_assert_uint_eq(recorder_count(r, PAXOS_MSG_PREPARE, PAXOS_GROUP_ACCEPTORS), 5);
	for (size_t i = 0; i < 5; i++)
		ck_assert_uint_eq(recorder_find(r, PAXOS_MSG_PREPARE, i)->u.prepare.iid, i + 1);
	struct paxos_recover_info info;
	ck_assert_ptr_nonnull(ask_recovery(p, 0, r, &info));
	ck_assert_uint_eq(info.highest_iid, 0);
	/* A follower starts over too, and sends nothing. */
	paxos_proposer_set_leader(p, false, 0, 0, &r->emitter);
	paxos_proposer_delivered(p, 1, NULL, 0, &r->emitter);
	recorder_clear(r);
	paxos_proposer_new_log(p, 0, &r->emitter);
	ck_assert_uint_eq(r->count, 0);
	paxos_proposer_set_leader(p, true, 1, 0, &r->emitter);
	ck_assert_uint_eq(recorder_find(r, PAXOS_MSG_PREPARE, 0)->u.prepare.iid, 1);
	recorder_free(r);
	paxos_proposer_free(p);
}
END_TEST

/*
 * A leader started at instance 4 (a learner started from a snapshot) had "a" and "b" chosen
 * at 4 and 5 before it heard that the acceptors began a new log: the new log holds them above
 * instances 1..3 that nobody proposed. After the new log it fills those with skips before
 * anything else, so that its learners are not held there until client values come; "a" and
 * "b" are delivered once, where the new log has them, and a new value goes after them.
 */
START_TEST(test_new_log_fills_the_holes_below_our_instances)
{
	struct sim *s = sim_new(8, 4, 8);
	paxos_proposer_set_leader(s->p, true, 4, s->now, &s->out);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "b"), PAXOS_OK);
	run(s);
	ck_assert(s->learn[4].closed);
	ck_assert(s->learn[5].closed);
	ck_assert_uint_eq(s->ninstances, 0); /* the learner waits at 1 */
	paxos_proposer_new_log(s->p, s->now, &s->out);
	run(s);
	ck_assert_uint_eq(s->nskips, 3);
	ck_assert_uint_eq(s->ndelivered, 2);
	ck_assert_str_eq(s->delivered[0], "a");
	ck_assert_uint_eq(s->delivered_iid[0], 4);
	ck_assert_str_eq(s->delivered[1], "b");
	ck_assert_uint_eq(s->delivered_iid[1], 5);
	ck_assert_int_eq(submit(s, "c"), PAXOS_OK);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 3);
	ck_assert_str_eq(s->delivered[2], "c");
	ck_assert_uint_eq(s->delivered_iid[2], 6);
	sim_free(s);
}
END_TEST

static uint32_t raised_to;
static uint32_t prepares_before_raise; /* prepares emitted before the epoch was reported */

static uint32_t prepares_seen(const struct sim *s)
{
	uint32_t n = 0;
	for (paxos_iid iid = 0; iid < MAX_IID; iid++)
		n += s->nprepares[iid];
	return n;
}

/* The first ready that holds an epoch is noted, with the prepares sent before it, and
 * stored at once. */
static void note_due(struct sim *s)
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

/* A reject from a later incarnation's ballot: INCREMENTSKIP lands in that epoch's range, so
 * the proposer takes that epoch and returns it in its ready (a storage write its sender makes
 * before the ballot leaves) before it emits the ballot; or, without raise_epochs, does not
 * use it at all. */
static struct sim *sim_behind(paxos_ballot theirs, bool report)
{
	struct sim *s = sim_new(1, 1, 4);
	paxos_proposer_free(s->p);
	struct paxos_proposer_options o = sim_options(1, 1, 4);
	o.epoch = 1;
	o.raise_epochs = report;
	s->p = paxos_proposer_new(&o, &s->counters);
	raised_to = 0;
	prepares_before_raise = UINT32_MAX;
	for (uint32_t a = 0; a < NACC; a++)
		s->acc[a][1].promised = theirs;
	lead(s);
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	run(s);
	return s;
}

static struct sim *sim_behind_later_epoch(bool report)
{
	/* epoch 3, round 7 */
	return sim_behind(((3ull << 32) + 7) * PAXOS_MAX_PROPOSERS + 1, report);
}

START_TEST(test_skip_into_later_epoch_raises_epoch)
{
	struct sim *s = sim_behind_later_epoch(true);
	ck_assert_uint_eq(raised_to, 3);
	ck_assert_uint_eq(paxos_proposer_epoch(s->p), 3);
	ck_assert_uint_eq(s->counters.epochs_raised, 1);
	ck_assert_uint_eq(s->nprepares[1], 2);
	ck_assert_uint_eq(s->prepares[1][1], ((3ull << 32) + 8) * PAXOS_MAX_PROPOSERS + 2);
	/* Reported while only the prepare of epoch 1 had gone out: the write comes first. */
	ck_assert_uint_eq(prepares_before_raise, 1);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "a");
	sim_free(s);
}
END_TEST

START_TEST(test_skip_into_later_epoch_refused)
{
	struct sim *s = sim_behind_later_epoch(false);
	ck_assert_uint_eq(raised_to, 0);
	ck_assert_uint_eq(paxos_proposer_epoch(s->p), 1);
	for (int round = 0; round < 3; round++) {
		advance(s, PHASE1_TIMEOUT);
		run(s);
	}
	/* Only ballots of its own epoch went out, and nothing could be chosen with them. */
	ck_assert_uint_ge(s->nprepares[1], 2);
	for (uint32_t k = 0; k < s->nprepares[1]; k++)
		ck_assert_uint_lt(s->prepares[1][k], (2ull << 32) * PAXOS_MAX_PROPOSERS);
	ck_assert_uint_eq(s->counters.epochs_raised, 0);
	ck_assert_uint_eq(s->ndelivered, 0);
	sim_free(s);
}
END_TEST

/* A reject far ahead, yet plausible: the proposer raises to exactly the epoch that ballot
 * needs, once, not to the end of the epoch space. */
START_TEST(test_far_reject_raises_only_as_needed)
{
	uint64_t far = PAXOS_PLAUSIBLE_EPOCHS - 1000;
	struct sim *s = sim_behind(((far << 32) + 7) * PAXOS_MAX_PROPOSERS + 1, true);
	ck_assert_uint_eq(raised_to, far);
	ck_assert_uint_eq(paxos_proposer_epoch(s->p), far);
	ck_assert_uint_eq(s->counters.epochs_raised, 1);
	ck_assert_uint_eq(s->ndelivered, 1);
	sim_free(s);
}
END_TEST

/* Rejects and promises with a ballot beyond every plausible epoch (a forgery or a bug) are
 * dropped and counted: the epoch is not raised, and nothing else changes. */
START_TEST(test_implausible_ballots_dropped)
{
	paxos_ballot forged = ((uint64_t)(PAXOS_PROPOSER_EPOCH_LIMIT - 1) << 32) * 100 + 1;
	ck_assert(!paxos_ballot_plausible(forged));
	ck_assert(!paxos_ballot_plausible(UINT64_MAX));
	ck_assert(paxos_ballot_plausible(
	    (((uint64_t)PAXOS_PLAUSIBLE_EPOCHS << 32) - 1) * PAXOS_MAX_PROPOSERS + 99));
	ck_assert(!paxos_ballot_plausible(((uint64_t)PAXOS_PLAUSIBLE_EPOCHS << 32) *
					  PAXOS_MAX_PROPOSERS));
	struct sim *s = sim_behind(forged, true);
	ck_assert_uint_eq(raised_to, 0);
	ck_assert_uint_eq(paxos_proposer_epoch(s->p), 1);
	ck_assert_uint_eq(s->counters.epochs_raised, 0);
	ck_assert_uint_ge(s->counters.implausible_ballots, 2); /* a quorum rejected */
	ck_assert_uint_eq(s->counters.rejects_received, 0);
	/* A promise with an implausible value ballot is dropped too. */
	struct paxos_message m = {.type = PAXOS_MSG_PROMISE};
	m.u.promise = (struct paxos_promise){.iid = 1, .ballot = 102, .value_ballot = UINT64_MAX};
	uint64_t before = s->counters.implausible_ballots;
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	ck_assert_uint_eq(s->counters.implausible_ballots, before + 1);
	sim_free(s);
}
END_TEST

START_TEST(test_found_value_proposed_without_client)
{
	struct sim *s = sim_new(3, 1, 4);
	seed_accepted(s, 0, 1, 101, "orphan"); /* acceptor 0 answers first */
	lead(s);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "orphan");
	ck_assert_uint_eq(s->counters.values_proposed, 0);
	sim_free(s);
}
END_TEST

START_TEST(test_other_proposers_value_wins_client_value_moves)
{
	struct sim *s = sim_new(3, 1, 4);
	lead(s);
	run(s);
	ck_assert_int_eq(submit(s, "mine"), PAXOS_OK); /* accept(1, 102, mine) in flight */
	/* Meanwhile proposer 5 got "foreign" accepted at ballot 105 by a quorum. */
	seed_accepted(s, 0, 1, 105, "foreign");
	seed_accepted(s, 1, 1, 105, "foreign");
	run(s);
	/* Rejected, phase 1 at INCREMENTSKIP(102, 105) = 202 finds "foreign" (R1); "mine"
	 * goes back to the head of the list and into instance 2. */
	ck_assert_uint_eq(s->prepares[1][1], 202);
	ck_assert_uint_eq(s->counters.values_requeued, 1);
	ck_assert_uint_eq(s->ndelivered, 2);
	ck_assert_str_eq(s->delivered[0], "foreign");
	ck_assert_str_eq(s->delivered[1], "mine");
	sim_free(s);
}
END_TEST

/*
 * A new leader holds values every proposer queued, and the old leader got "x" chosen in
 * instance 3. Phase 1 answers for instances 1 and 2 come first and find nothing; proposing
 * "x" there before instance 3 reported it would choose it twice. The leader waits until
 * phase 1 finished across its window: "x" is adopted in 3 and leaves the list.
 */
START_TEST(test_takeover_adopts_before_proposing)
{
	struct sim *s = sim_new(3, 3, 8);
	const char *values[] = {"x", "y", "z"};
	for (int i = 0; i < 3; i++) {
		struct paxos_value v = value_of(values[i]);
		ck_assert_int_eq(paxos_proposer_queue(s->p, &v), PAXOS_OK);
	}
	seed_accepted(s, 0, 3, 101, "x");
	seed_accepted(s, 1, 3, 101, "x");
	lead(s);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 3);
	ck_assert_str_eq(s->delivered[0], "y");
	ck_assert_str_eq(s->delivered[1], "z");
	ck_assert_str_eq(s->delivered[2], "x");
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 0);
	sim_free(s);
}
END_TEST

START_TEST(test_stop_leading_requeues_in_order)
{
	struct sim *s = sim_new(4, 3, 8);
	lead(s);
	run(s);
	s->drop[PAXOS_MSG_ACCEPT] = true;
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "b"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "c"), PAXOS_OK);
	ck_assert_int_eq(submit(s, "d"), PAXOS_OK);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	paxos_proposer_set_leader(s->p, false, 0, s->now, &s->out);
	ck_assert(!paxos_proposer_is_leader(s->p));
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 4);
	ck_assert_uint_eq(s->counters.values_requeued, 3);
	advance(s, 10 * PHASE2_TIMEOUT); /* no timers while not leading */
	ck_assert_uint_eq(s->net_len, 0);
	s->drop[PAXOS_MSG_ACCEPT] = false;
	lead(s);
	/* Ballots are not reused after leading before: 102 was used, 202 now. */
	ck_assert_uint_eq(s->prepares[1][1], 202);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 4);
	ck_assert_str_eq(s->delivered[0], "a");
	ck_assert_str_eq(s->delivered[1], "b");
	ck_assert_str_eq(s->delivered[2], "c");
	ck_assert_str_eq(s->delivered[3], "d");
	sim_free(s);
}
END_TEST

START_TEST(test_delivered_jumps_window)
{
	struct sim *s = sim_new(4, 1, 8);
	struct paxos_value v = frame1("x");
	paxos_proposer_delivered(s->p, 5, &v, s->now, &s->out); /* started late */
	paxos_proposer_delivered(s->p, 3, &v, s->now, &s->out); /* old: ignored */
	paxos_proposer_closed(s->p, 100, &v, s->now, &s->out);  /* beyond the window */
	ck_assert_uint_eq(s->net_len, 0);
	paxos_proposer_set_leader(s->p, true, 6, s->now, &s->out);
	for (paxos_iid i = 1; i <= 5; i++)
		ck_assert_uint_eq(s->nprepares[i], 0);
	for (paxos_iid i = 6; i <= 9; i++)
		ck_assert_uint_eq(s->nprepares[i], 1);
	ck_assert_uint_eq(s->nprepares[10], 0);
	/* Leading from a later instance jumps too (far beyond the window). */
	paxos_proposer_set_leader(s->p, true, 40, s->now, &s->out);
	for (paxos_iid i = 40; i <= 43; i++)
		ck_assert_uint_eq(s->nprepares[i], 1);
	ck_assert_uint_eq(s->nprepares[44], 0);
	/* A promise for an instance beyond the window is counted, not used. */
	struct paxos_message m = {.type = PAXOS_MSG_PROMISE};
	m.u.promise = (struct paxos_promise){.iid = 60, .ballot = 102, .acceptor_id = 0};
	paxos_proposer_handle(s->p, &m, s->now, &s->out);
	ck_assert_uint_eq(s->counters.instances_out_of_window, 1);
	sim_free(s);
}
END_TEST

/* Simulator seed 4392: a follower's learner closes another leader's instance
 * behind a hole, holding "a" and "b"; only "a" was queued here (the client's copy of "b" was
 * lost, and its resubmission comes after the close). "b" must not be queued either, or this
 * proposer, leading once the change that removes the old leader is in force, proposes it a
 * second time. */
START_TEST(test_value_closed_elsewhere_is_settled_at_once)
{
	struct sim *s = sim_new(4, 2, 8);
	ck_assert_int_eq(submit_id(s, "a", 1), PAXOS_OK);
	ck_assert_int_eq(submit_id(s, "c", 3), PAXOS_OK);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 2);
	uint8_t buf[VMAX];
	uint32_t used = 0;
	frame_add(buf, &used, "a", 1);
	frame_add(buf, &used, "b", 2);
	struct paxos_value ab = {buf, used};
	paxos_proposer_closed(s->p, 2, &ab, s->now, &s->out);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1); /* "c" */
	ck_assert_int_eq(submit_id(s, "b", 2), PAXOS_OK);   /* the late copy: settled */
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	ck_assert_uint_eq(s->counters.values_settled, 2);
	/* The deliveries settle nothing more: a copy of "a" or "b" arriving now is a
	 * resubmission of a delivered value, and the credits are spent. */
	struct paxos_value x = frame1("x");
	paxos_proposer_delivered(s->p, 1, &x, s->now, &s->out);
	paxos_proposer_delivered(s->p, 2, &ab, s->now, &s->out);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	ck_assert_uint_eq(s->counters.values_settled, 2);
	/* Leading from instance 3, it proposes "c" only. */
	s->next_deliver = 3;
	paxos_proposer_set_leader(s->p, true, 3, s->now, &s->out);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "c");
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 0);
	sim_free(s);
}
END_TEST

/* Two clients submit the same bytes ("INCR x"): two values, both delivered. One client's
 * copy never reached this follower, and its value was delivered; the other's arrives after.
 * It is not that value's late copy, so it is queued and proposed once this proposer leads.
 * Only a late copy of the delivered submission itself is dropped. */
START_TEST(test_equal_values_of_two_submitters)
{
	/* Values that name no submission: never dropped as delivered before they arrived. */
	struct sim *s = sim_new(4, 2, 8);
	struct paxos_value x = frame1("INCR x");
	paxos_proposer_delivered(s->p, 1, &x, s->now, &s->out);
	ck_assert_int_eq(submit(s, "INCR x"), PAXOS_OK);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	ck_assert_uint_eq(s->counters.values_settled, 0);
	s->next_deliver = 2;
	paxos_proposer_set_leader(s->p, true, 2, s->now, &s->out);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "INCR x");
	sim_free(s);

	/* Submissions 7 and 8 of the same bytes: 7 delivered before it reached us, 8 queued; a
	 * late copy of 7 is dropped, 8 is proposed. */
	s = sim_new(4, 2, 8);
	uint8_t buf[VMAX];
	uint32_t used = 0;
	frame_add(buf, &used, "INCR x", 7);
	struct paxos_value x7 = {buf, used};
	paxos_proposer_delivered(s->p, 1, &x7, s->now, &s->out);
	ck_assert_int_eq(submit_id(s, "INCR x", 8), PAXOS_OK);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	ck_assert_int_eq(submit_id(s, "INCR x", 7), PAXOS_OK);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	ck_assert_uint_eq(s->counters.values_settled, 1);
	/* A delivery of 8 would take 8's copy, not another submission's. */
	ck_assert_int_eq(submit_id(s, "INCR x", 9), PAXOS_OK);
	used = 0;
	frame_add(buf, &used, "INCR x", 8);
	struct paxos_value x8 = {buf, used};
	paxos_proposer_delivered(s->p, 2, &x8, s->now, &s->out);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	s->next_deliver = 3;
	paxos_proposer_set_leader(s->p, true, 3, s->now, &s->out);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "INCR x");
	sim_free(s);
}
END_TEST

START_TEST(test_jump_requeues_client_values)
{
	struct sim *s = sim_new(4, 2, 8);
	s->concurrency = 99; /* the test's learner never hears of instances 1..3 closing */
	lead(s);
	run(s);
	s->drop[PAXOS_MSG_ACCEPT] = true;
	submit(s, "a");
	submit(s, "b");
	struct paxos_value v = frame1("other");
	/* Another leader's instances 1..3 were delivered; ours were not among them. */
	paxos_proposer_delivered(s->p, 3, &v, s->now, &s->out);
	ck_assert_uint_eq(s->counters.values_requeued, 2);
	/* Both went back to the head in order; "a" already went to instance 4, the only one
	 * of the new window whose phase 1 is done. */
	ck_assert(s->accept_sent[4]);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	s->drop[PAXOS_MSG_ACCEPT] = false;
	run(s);
	ck_assert_uint_eq(s->ndelivered, 0); /* the test's learner starts at 1: nothing */
	sim_free(s);
}
END_TEST

/* A new leader finds a client value accepted under its predecessor (v1) that also waits in
 * its own list (clients send to every proposer): the value is proposed where it was found,
 * and nowhere else, so it is delivered once. */
START_TEST(test_adopted_value_leaves_pending)
{
	struct sim *s = sim_new(4, 3, 8);
	struct paxos_value f = frame1("b");
	for (uint32_t a = 0; a < QUORUM; a++) {
		s->acc[a][1].promised = 50;
		s->acc[a][1].accepted = 50; /* below any ballot of ours */
		memcpy(s->acc[a][1].value, f.data, f.len);
		s->acc[a][1].len = f.len;
	}
	ck_assert_int_eq(submit(s, "b"), PAXOS_OK); /* not leading: it waits in the list */
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	lead(s);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "b");
	ck_assert_uint_eq(s->delivered_iid[0], 1);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 0);
	ck_assert(!s->accept_sent[2]);
	sim_free(s);
}
END_TEST

START_TEST(test_random_loss_exactly_once)
{
	enum { N = 150 };
	struct sim *s = sim_new(8, 3, 16);
	s->rng = 0x9E3779B97F4A7C15ull * (uint64_t)(_i + 1);
	s->loss_percent = 15;
	s->reorder = true;
	lead(s);
	static char v[N][16];
	int submitted = 0;
	for (int step = 0; s->ndelivered < N; step++) {
		ck_assert_msg(step < 2000000, "stuck: %zu of %d delivered", s->ndelivered, N);
		uint32_t r = rnd(s) % 100;
		if (submitted < N && r < 20) {
			snprintf(v[submitted], sizeof(v[submitted]), "r%d", submitted);
			if (submit(s, v[submitted]) == PAXOS_OK)
				submitted++; /* a full list: the client tries again later */
		} else if (r < 95 && pump(s)) {
			continue;
		} else {
			advance(s, 1000);
		}
	}
	ck_assert_uint_eq(s->ndelivered, N);
	int seen[N] = {0};
	for (size_t i = 0; i < s->ndelivered; i++) {
		int k;
		ck_assert_int_eq(sscanf(s->delivered[i], "r%d", &k), 1);
		ck_assert(k >= 0 && k < N);
		seen[k]++;
	}
	for (int k = 0; k < N; k++)
		ck_assert_msg(seen[k] == 1, "value r%d delivered %d times", k, seen[k]);
	ck_assert_uint_le(s->max_in_phase2, 3);
	ck_assert_uint_gt(s->counters.phase1_timeouts + s->counters.phase2_timeouts, 0);
	sim_free(s);
}
END_TEST

/*
 * Value batching (thesis 3.7.4) under loss and reordering: every value delivered exactly once;
 * within an instance, positions 0, 1, ... in the order the values were submitted; with FIFO
 * (concurrency 1) the whole sequence in submission order. _i even: batch_limit 8 (several
 * values per instance, up to what fits in VMAX); odd: limit 1, one value per instance.
 */
START_TEST(test_batching_exactly_once_in_order)
{
	enum { N = 120 };
	bool batching = _i % 2 == 0;
	uint32_t concurrency = _i < 2 ? 1 : 3;
	sim_batch_limit = batching ? 8 : 1;
	struct sim *s = sim_new(6, concurrency, 64);
	sim_batch_limit = 1;
	s->rng = 0x2545F4914F6CDD1Dull * (uint64_t)(_i + 3);
	s->loss_percent = 10;
	s->reorder = true;
	lead(s);
	static char v[N][16];
	int submitted = 0;
	for (int step = 0; s->ndelivered < N; step++) {
		ck_assert_msg(step < 2000000, "stuck: %zu of %d delivered", s->ndelivered, N);
		uint32_t r = rnd(s) % 100;
		if (submitted < N && r < 40) {
			snprintf(v[submitted], sizeof(v[submitted]), "b%d", submitted);
			if (submit(s, v[submitted]) == PAXOS_OK)
				submitted++;
		} else if (r < 95 && pump(s)) {
			continue;
		} else {
			advance(s, 1000);
		}
	}
	int seen[N] = {0};
	int last_in_iid = -1;
	for (size_t i = 0; i < s->ndelivered; i++) {
		int k;
		ck_assert_int_eq(sscanf(s->delivered[i], "b%d", &k), 1);
		ck_assert(k >= 0 && k < N);
		seen[k]++;
		bool same_iid = i > 0 && s->delivered_iid[i] == s->delivered_iid[i - 1];
		ck_assert_uint_eq(s->delivered_pos[i], same_iid ? s->delivered_pos[i - 1] + 1 : 0);
		if (same_iid) /* one instance's values are in submission order */
			ck_assert_int_gt(k, last_in_iid);
		last_in_iid = k;
		if (concurrency == 1)
			ck_assert_int_eq(k, (int)i);
	}
	for (int k = 0; k < N; k++)
		ck_assert_msg(seen[k] == 1, "value b%d delivered %d times", k, seen[k]);
	if (batching) {
		ck_assert_uint_lt(s->ninstances, N);
		ck_assert_uint_gt(s->counters.values_proposed, s->counters.instances_proposed);
	} else {
		ck_assert_uint_eq(s->ninstances, N);
		ck_assert_uint_eq(s->counters.values_proposed, s->counters.instances_proposed);
	}
	sim_free(s);
}
END_TEST

/* Values waiting while an instance is ready all go into it at once; a lone value goes out
 * alone at once (no waiting for a batch to fill). */
START_TEST(test_batch_packs_waiting_values)
{
	sim_batch_limit = 8;
	struct sim *s = sim_new(4, 1, 16);
	sim_batch_limit = 1;
	lead(s);
	run(s);
	ck_assert_int_eq(submit(s, "solo"), PAXOS_OK);
	ck_assert_uint_eq(s->net_len, 1); /* its accept, right away */
	ck_assert(frame1_is(&s->net[0].m.u.accept.value, "solo"));
	const char *more[] = {"m0", "m1", "m2", "m3", "m4"};
	for (int k = 0; k < 5; k++) /* instance 1 in phase 2 (concurrency 1): they wait */
		ck_assert_int_eq(submit(s, more[k]), PAXOS_OK);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 5);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 6);
	ck_assert_uint_eq(s->ninstances, 2); /* 4 * (4 + 2) = 24 bytes fit in VMAX */
	for (int k = 0; k < 5; k++) {
		ck_assert_str_eq(s->delivered[k + 1], more[k]);
		ck_assert_uint_eq(s->delivered_iid[k + 1], 2);
		ck_assert_uint_eq(s->delivered_pos[k + 1], (uint32_t)k);
	}
	ck_assert_uint_eq(s->counters.values_proposed, 6);
	ck_assert_uint_eq(s->counters.instances_proposed, 2);
	sim_free(s);
}
END_TEST

/* Values queued in one read share an instance once assigned, although phase 2 has room for
 * each: the node queues a read's values and assigns once (thesis 3.7.4). Nothing goes out
 * before assign, and a lone value goes out at its assign. */
START_TEST(test_queue_then_assign_packs_a_read)
{
	sim_batch_limit = 8;
	struct sim *s = sim_new(8, 8, 16);
	sim_batch_limit = 1;
	lead(s);
	run(s);
	const char *v[] = {"r0", "r1", "r2"};
	for (int k = 0; k < 3; k++) {
		struct paxos_value val = value_of(v[k]);
		ck_assert_int_eq(paxos_proposer_queue(s->p, &val), PAXOS_OK);
	}
	ck_assert_uint_eq(s->net_len, 0);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 3);
	paxos_proposer_assign(s->p, s->now, &s->out);
	ck_assert_uint_eq(s->net_len, 1); /* one accept for the three */
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 0);
	struct paxos_value lone = value_of("lone");
	ck_assert_int_eq(paxos_proposer_queue(s->p, &lone), PAXOS_OK);
	paxos_proposer_assign(s->p, s->now, &s->out);
	ck_assert_uint_eq(s->net_len, 2);
	ck_assert(frame1_is(&s->net[1].m.u.accept.value, "lone"));
	run(s);
	ck_assert_uint_eq(s->ndelivered, 4);
	for (int k = 0; k < 3; k++) {
		ck_assert_str_eq(s->delivered[k], v[k]);
		ck_assert_uint_eq(s->delivered_iid[k], 1);
		ck_assert_uint_eq(s->delivered_pos[k], (uint32_t)k);
	}
	ck_assert_str_eq(s->delivered[3], "lone");
	ck_assert_uint_eq(s->counters.instances_proposed, 2);
	/* A follower queues and keeps its values: assign sends nothing. */
	struct paxos_value late = value_of("late");
	paxos_proposer_set_leader(s->p, false, 0, s->now, &s->out);
	size_t sent = s->net_len;
	ck_assert_int_eq(paxos_proposer_queue(s->p, &late), PAXOS_OK);
	paxos_proposer_assign(s->p, s->now, &s->out);
	ck_assert_uint_eq(s->net_len, sent);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 1);
	sim_free(s);
}
END_TEST

/* Leadership lost with batches in flight: every value goes back, in order, and is delivered
 * once when leading again. */
START_TEST(test_batch_pushed_back_whole)
{
	sim_batch_limit = 3;
	struct sim *s = sim_new(4, 1, 16);
	sim_batch_limit = 1;
	s->drop[PAXOS_MSG_ACCEPT] = true;
	const char *v[] = {"p0", "p1", "p2", "p3", "p4"};
	for (int k = 0; k < 5; k++)
		ck_assert_int_eq(submit(s, v[k]), PAXOS_OK);
	lead(s);
	run(s); /* instance 1 takes p0..p2 (the limit); p3, p4 wait for concurrency */
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 2);
	paxos_proposer_set_leader(s->p, false, 0, s->now, &s->out);
	ck_assert_uint_eq(paxos_proposer_pending(s->p), 5);
	ck_assert_uint_eq(s->counters.values_requeued, 3);
	s->drop[PAXOS_MSG_ACCEPT] = false;
	lead(s);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 5);
	for (int k = 0; k < 5; k++)
		ck_assert_str_eq(s->delivered[k], v[k]);
	ck_assert_uint_eq(s->delivered_iid[3], 2); /* p3, p4 in the next instance */
	sim_free(s);
}
END_TEST

/* Flow control: no more than in_flight_max values in instances (here max(window 2, pending
 * 6) = 6), and no new instance while max_backlog instances wait closed behind a hole. */
START_TEST(test_flow_control)
{
	sim_batch_limit = 8;
	struct sim *s = sim_new(2, 2, 6);
	s->drop[PAXOS_MSG_ACCEPT] = true;
	const char *v[] = {"a", "b", "c", "d", "e", "f"};
	for (int k = 0; k < 6; k++)
		ck_assert_int_eq(submit(s, v[k]), PAXOS_OK);
	lead(s);
	run(s);
	ck_assert(s->accept_sent[1]);
	ck_assert_int_eq(submit(s, "g"), PAXOS_OK);
	ck_assert(!s->accept_sent[2]); /* 6 values in flight already */
	ck_assert_uint_gt(s->counters.flow_control_holds, 0);
	s->drop[PAXOS_MSG_ACCEPT] = false;
	advance(s, PHASE2_TIMEOUT);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 7);
	sim_free(s);

	sim_batch_limit = 1;
	sim_max_backlog = 2;
	s = sim_new(8, 8, 16);
	sim_max_backlog = 0;
	lead(s);
	run(s);
	s->drop[PAXOS_MSG_ACCEPT] = true;
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(submit(s, v[k]), PAXOS_OK);
	/* Our learner closed 2 and 3 but lost 1: two closed instances wait behind it. */
	paxos_proposer_closed(s->p, 2, &(struct paxos_value){0}, s->now, &s->out);
	paxos_proposer_closed(s->p, 3, &(struct paxos_value){0}, s->now, &s->out);
	uint64_t holds = s->counters.flow_control_holds;
	ck_assert_int_eq(submit(s, "d"), PAXOS_OK);
	ck_assert(!s->accept_sent[4]);
	ck_assert_uint_gt(s->counters.flow_control_holds, holds);
	/* The hole is repaired: 1 is delivered, then 2 (the backlog drops below the limit),
	 * and the leader opens instances again. */
	struct paxos_value f = frame1("a");
	paxos_proposer_delivered(s->p, 1, &f, s->now, &s->out);
	ck_assert(!s->accept_sent[4]); /* 2 and 3 still wait */
	f = frame1("b");
	paxos_proposer_delivered(s->p, 2, &f, s->now, &s->out);
	ck_assert(s->accept_sent[4]);
	sim_free(s);
}
END_TEST

/* Flow control counts only instances we ran phase 2 for: instances closed by final accepteds
 * nobody sent (forged, or a bug) do not hold new values back, even past max_backlog. */
START_TEST(test_flow_control_ignores_instances_not_opened)
{
	sim_max_backlog = 2;
	struct sim *s = sim_new(8, 8, 16);
	sim_max_backlog = 0;
	lead(s);
	run(s);
	for (paxos_iid iid = 2; iid <= 6; iid++)
		paxos_proposer_closed(s->p, iid, &(struct paxos_value){0}, s->now, &s->out);
	uint64_t holds = s->counters.flow_control_holds;
	ck_assert_int_eq(submit(s, "a"), PAXOS_OK);
	ck_assert(s->accept_sent[1]);
	ck_assert_uint_eq(s->counters.flow_control_holds, holds);
	run(s);
	ck_assert_uint_eq(s->ndelivered, 1);
	ck_assert_str_eq(s->delivered[0], "a");
	sim_free(s);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("proposer");
	TCase *t = tcase_create("api");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_options_from_config);
	tcase_add_test(t, test_bad_options);
	tcase_add_test(t, test_leader_preexecutes_window);
	tcase_add_test(t, test_repair_runs_a_decided_instance_again);
	tcase_add_test(t, test_non_leader_sends_nothing);
	tcase_add_test(t, test_idle_leader_proposes_skips);
	tcase_add_test(t, test_new_leader_announces_itself_with_a_skip);
	tcase_add_test(t, test_accept_right_after_phase1);
	tcase_add_test(t, test_value_waits_for_phase1);
	tcase_add_test(t, test_concurrency_limit);
	tcase_add_test(t, test_fifo_with_concurrency_one);
	tcase_add_test(t, test_pending_overflow);
	tcase_add_test(t, test_full_leader_refuses);
	tcase_add_test(t, test_drop_pending);
	tcase_add_test(t, test_client_value_message_and_other_types);
	tcase_add_test(t, test_phase1_timeout);
	tcase_add_test(t, test_phase2_timeout_restarts_phase1);
	tcase_add_test(t, test_phase2_timeouts_halve_the_window);
	tcase_add_test(t, test_reject_skips_ballot);
	tcase_add_test(t, test_epoch_sets_first_ballot);
	tcase_add_test(t, test_restarted_proposer_answers_recovery_after_grace);
	tcase_add_test(t, test_new_log_starts_the_window_over);
	tcase_add_test(t, test_new_log_fills_the_holes_below_our_instances);
	tcase_add_test(t, test_skip_into_later_epoch_raises_epoch);
	tcase_add_test(t, test_skip_into_later_epoch_refused);
	tcase_add_test(t, test_far_reject_raises_only_as_needed);
	tcase_add_test(t, test_flow_control_ignores_instances_not_opened);
	tcase_add_test(t, test_implausible_ballots_dropped);
	tcase_add_test(t, test_found_value_proposed_without_client);
	tcase_add_test(t, test_other_proposers_value_wins_client_value_moves);
	tcase_add_test(t, test_takeover_adopts_before_proposing);
	tcase_add_test(t, test_stop_leading_requeues_in_order);
	tcase_add_test(t, test_delivered_jumps_window);
	tcase_add_test(t, test_jump_requeues_client_values);
	tcase_add_test(t, test_value_closed_elsewhere_is_settled_at_once);
	tcase_add_test(t, test_equal_values_of_two_submitters);
	tcase_add_test(t, test_adopted_value_leaves_pending);
	tcase_add_loop_test(t, test_random_loss_exactly_once, 0, 5);
	tcase_add_loop_test(t, test_batching_exactly_once_in_order, 0, 4);
	tcase_add_test(t, test_batch_packs_waiting_values);
	tcase_add_test(t, test_queue_then_assign_packs_a_read);
	tcase_add_test(t, test_batch_pushed_back_whole);
	tcase_add_test(t, test_flow_control);
	suite_add_tcase(s, t);
	return s;
}
