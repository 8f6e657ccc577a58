/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Takeover (thesis 4.7): two proposer cores over simulated acceptors and a learner. A follower
 * drops the values the leader got delivered, a new leader proposes the values the old one did
 * not get delivered and none of the delivered ones, a demoted leader stops at once, and two
 * proposers that both lead never choose two values for one instance.
 */
#include "check_main.h"
#include <paxos/options.h>
#include <paxos/election.h>
#include <paxos/proposer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "support.h"
#include "config_fields.h"

#define MS 1000u /* paxos_time is in microseconds */

#define NACC 3u
#define MAXI 256u
#define VMAX 16u
#define NET_MAX 65536u
#define NPROP 2u

struct packet {
	enum paxos_group to;
	struct paxos_message m;
	uint8_t buf[VMAX];
};

struct acceptor_slot {
	paxos_ballot promised, accepted;
	uint8_t value[VMAX];
	uint32_t len;
};

struct learner_slot {
	paxos_ballot ballot[NACC];
	uint8_t value[NACC][VMAX];
	uint32_t len[NACC];
	bool chosen;
	uint8_t chosen_value[VMAX];
	uint32_t chosen_len;
};

struct cluster {
	struct paxos_proposer *p[NPROP];
	struct paxos_counters counters[NPROP];
	struct paxos_emitter out[NPROP];
	bool up[NPROP];
	size_t sent_by[NPROP];
	paxos_time now;
	struct packet *net;
	size_t head, tail;
	struct acceptor_slot acc[NACC][MAXI];
	struct learner_slot learn[MAXI];
	paxos_iid next;
	char delivered[MAXI][VMAX + 1];
};

static struct cluster *C;

static void send_packet(enum paxos_group to, const struct paxos_message *m)
{
	ck_assert_uint_lt(C->tail - C->head, NET_MAX);
	struct packet *pk = &C->net[C->tail++ % NET_MAX];
	pk->to = to;
	pk->m = *m;
	struct paxos_value *v = NULL;
	if (m->type == PAXOS_MSG_PROMISE)
		v = &pk->m.u.promise.value;
	else if (m->type == PAXOS_MSG_ACCEPT)
		v = &pk->m.u.accept.value;
	if (v) {
		ck_assert_uint_le(v->len, VMAX);
		memcpy(pk->buf, v->data, v->len);
		v->data = pk->buf;
	}
}

static void proposer_emit(void *ctx, enum paxos_group to, const struct paxos_message *m)
{
	uint32_t id = (uint32_t)(uintptr_t)ctx;
	C->sent_by[id]++;
	if (C->up[id]) /* a crashed proposer's messages are lost */
		send_packet(to, m);
}

static void learn(uint32_t a, paxos_iid iid, paxos_ballot b, const uint8_t *v, uint32_t len)
{
	struct learner_slot *l = &C->learn[iid];
	if (b < l->ballot[a])
		return;
	l->ballot[a] = b;
	memcpy(l->value[a], v, len);
	l->len[a] = len;
	uint32_t votes = 0;
	for (uint32_t k = 0; k < NACC; k++)
		votes += l->ballot[k] == b;
	if (votes < NACC / 2 + 1)
		return;
	if (l->chosen) { /* safety: a later quorum can only confirm the chosen value */
		ck_assert_uint_eq(len, l->chosen_len);
		ck_assert(memcmp(v, l->chosen_value, len) == 0);
		return;
	}
	l->chosen = true;
	memcpy(l->chosen_value, v, len);
	l->chosen_len = len;
	struct paxos_value cv = {l->chosen_value, len};
	for (uint32_t id = 0; id < NPROP; id++)
		if (C->up[id])
			paxos_proposer_closed(C->p[id], iid, &cv, C->now, &C->out[id]);
	while (C->next < MAXI && C->learn[C->next].chosen) {
		struct learner_slot *d = &C->learn[C->next];
		struct paxos_value dv = {d->chosen_value, d->chosen_len};
		/* An instance value is a frame (lib/core/batch.h); batching is off here: one value.
		 */
		struct paxos_batch_iter it;
		struct paxos_value one = {NULL, 0};
		paxos_batch_iter_init(&it, &dv);
		ck_assert_int_eq(paxos_batch_next(&it, &one), 1);
		memcpy(C->delivered[C->next], one.data, one.len);
		C->delivered[C->next][one.len] = '\0';
		paxos_iid i = C->next++;
		for (uint32_t id = 0; id < NPROP; id++)
			if (C->up[id])
				paxos_proposer_delivered(C->p[id], i, &dv, C->now, &C->out[id]);
	}
}

static void to_acceptors(const struct paxos_message *m)
{
	bool prepare = m->type == PAXOS_MSG_PREPARE;
	paxos_iid iid = prepare ? m->u.prepare.iid : m->u.accept.iid;
	paxos_ballot b = prepare ? m->u.prepare.ballot : m->u.accept.ballot;
	ck_assert_uint_lt(iid, MAXI);
	for (uint32_t a = 0; a < NACC; a++) {
		struct acceptor_slot *s = &C->acc[a][iid];
		struct paxos_message r = {.type = PAXOS_MSG_REJECT};
		if (b < s->promised) {
			r.u.reject = (struct paxos_reject){iid, s->promised, a};
			send_packet(PAXOS_GROUP_PROPOSERS, &r);
			continue;
		}
		s->promised = b;
		if (prepare) {
			r.type = PAXOS_MSG_PROMISE;
			r.u.promise =
			    (struct paxos_promise){iid, b, s->accepted, {s->value, s->len}, a};
			send_packet(PAXOS_GROUP_PROPOSERS, &r);
		} else {
			s->accepted = b;
			memcpy(s->value, m->u.accept.value.data, m->u.accept.value.len);
			s->len = m->u.accept.value.len;
			learn(a, iid, b, s->value, s->len);
		}
	}
}

/* Delivers packets until the network is quiet or limit packets were handled. */
static void run(size_t limit)
{
	for (size_t k = 0; k < limit && C->head < C->tail; k++) {
		struct packet pk = C->net[C->head++ % NET_MAX];
		if (pk.m.type == PAXOS_MSG_PROMISE)
			pk.m.u.promise.value.data = pk.buf;
		if (pk.m.type == PAXOS_MSG_ACCEPT)
			pk.m.u.accept.value.data = pk.buf;
		if (pk.to == PAXOS_GROUP_ACCEPTORS)
			to_acceptors(&pk.m);
		else
			for (uint32_t id = 0; id < NPROP; id++)
				if (C->up[id])
					paxos_proposer_handle(C->p[id], &pk.m, C->now, &C->out[id]);
	}
}

/* Lets time pass in steps, so timeouts fire, until the network stays quiet. */
static void settle(void)
{
	for (int round = 0; round < 200; round++) {
		run(NET_MAX);
		C->now += 10 * MS;
		for (uint32_t id = 0; id < NPROP; id++)
			if (C->up[id])
				paxos_proposer_tick(C->p[id], C->now, &C->out[id]);
	}
	run(NET_MAX);
}

static void cluster_setup(void)
{
	C = calloc(1, sizeof(*C));
	ck_assert_ptr_nonnull(C);
	C->net = calloc(NET_MAX, sizeof(*C->net));
	ck_assert_ptr_nonnull(C->net);
	C->next = 1;
	C->now = 1;
	struct paxos_proposer_options o = {
	    .acceptors = NACC,
	    .window = 8,
	    .concurrency = 2,
	    .pending_size = 32,
	    .max_value = VMAX,
	    .phase1_timeout = 30 * MS,
	    .phase2_timeout = 30 * MS,
	};
	for (uint32_t id = 0; id < NPROP; id++) {
		o.id = id;
		C->p[id] = paxos_proposer_new(&o, &C->counters[id]);
		ck_assert_ptr_nonnull(C->p[id]);
		C->out[id] = (struct paxos_emitter){proposer_emit, (void *)(uintptr_t)id};
		C->up[id] = true;
	}
}

static void cluster_teardown(void)
{
	for (uint32_t id = 0; id < NPROP; id++)
		paxos_proposer_free(C->p[id]);
	free(C->net);
	free(C);
}

/* A client multicasts to the submit group: every live proposer queues the value. */
static void submit(const char *s)
{
	struct paxos_value v = value_of(s);
	for (uint32_t id = 0; id < NPROP; id++)
		if (C->up[id])
			ck_assert_int_eq(paxos_proposer_submit(C->p[id], &v, C->now, &C->out[id]),
					 PAXOS_OK);
}

/* How many times value s was delivered. */
static unsigned times_delivered(const char *s)
{
	unsigned n = 0;
	for (paxos_iid i = 1; i < C->next; i++)
		n += strcmp(C->delivered[i], s) == 0;
	return n;
}

START_TEST(test_follower_drops_values_delivered_by_the_leader)
{
	paxos_proposer_set_leader(C->p[0], true, 1, C->now, &C->out[0]);
	run(NET_MAX);
	submit("a");
	submit("b");
	run(NET_MAX);
	ck_assert_uint_eq(C->next, 3);
	/* The leader proposed them itself; the follower had them queued and lets them go. */
	ck_assert_uint_eq(paxos_proposer_pending(C->p[0]), 0);
	ck_assert_uint_eq(paxos_proposer_pending(C->p[1]), 0);
	ck_assert_uint_eq(C->counters[1].values_settled, 2);
	ck_assert_uint_eq(C->counters[0].values_settled, 0);
	/* A value the follower never saw leaves its list alone. */
	struct paxos_value only0 = value_of("c");
	paxos_proposer_submit(C->p[0], &only0, C->now, &C->out[0]);
	submit("d");
	run(NET_MAX);
	ck_assert_uint_eq(C->next, 5);
	ck_assert_uint_eq(paxos_proposer_pending(C->p[1]), 0);
	ck_assert_uint_eq(C->counters[1].values_settled, 3);
	/* The client's datagram reaches the follower only after the value was delivered: that
	 * copy of its submission is not queued (else the follower would propose it again once
	 * it leads). */
	struct paxos_client_value late = {value_of("e"), 42};
	ck_assert_int_eq(paxos_proposer_queue_value(C->p[0], &late), PAXOS_OK);
	paxos_proposer_assign(C->p[0], C->now, &C->out[0]);
	run(NET_MAX);
	ck_assert_uint_eq(C->next, 6);
	ck_assert_int_eq(paxos_proposer_queue_value(C->p[1], &late), PAXOS_OK);
	ck_assert_uint_eq(paxos_proposer_pending(C->p[1]), 0);
	ck_assert_uint_eq(C->counters[1].values_settled, 4);
	/* A second, later copy is queued: one delivery, one credit. So is another submission of
	 * the same bytes, and one that names no submission. */
	ck_assert_int_eq(paxos_proposer_queue_value(C->p[1], &late), PAXOS_OK);
	ck_assert_uint_eq(paxos_proposer_pending(C->p[1]), 1);
	struct paxos_client_value other = {value_of("e"), 43};
	ck_assert_int_eq(paxos_proposer_queue_value(C->p[1], &other), PAXOS_OK);
	ck_assert_int_eq(paxos_proposer_submit(C->p[1], &late.value, C->now, &C->out[1]), PAXOS_OK);
	ck_assert_uint_eq(paxos_proposer_pending(C->p[1]), 3);
}
END_TEST

START_TEST(test_new_leader_proposes_what_was_not_delivered)
{
	/* Proposer 1 leads first, so its ballots beat proposer 0's first ones. */
	paxos_proposer_set_leader(C->p[1], true, 1, C->now, &C->out[1]);
	run(NET_MAX);
	const char *values[] = {"v1", "v2", "v3", "v4", "v5", "v6"};
	for (size_t i = 0; i < 6; i++)
		submit(values[i]);
	/* Concurrency 2: v1 and v2 are in phase 2. Deliver them, then crash the leader before
	 * anything of v3, v4 reaches the acceptors. */
	size_t k = 0;
	while (C->next < 3 && k++ < NET_MAX)
		run(1);
	ck_assert_uint_eq(C->next, 3);
	C->up[1] = false;
	C->head = C->tail; /* what was in flight is lost with it */
	ck_assert_uint_eq(paxos_proposer_pending(C->p[0]), 4);

	/* Proposer 0 takes over from its first undelivered instance and proposes at once:
	 * the rejects make it jump past the old leader's ballots, no timeout needed. */
	paxos_proposer_set_leader(C->p[0], true, C->next, C->now, &C->out[0]);
	run(NET_MAX);
	ck_assert_uint_eq(C->next, 7);
	for (size_t i = 0; i < 6; i++)
		ck_assert_uint_eq(times_delivered(values[i]), 1);
	ck_assert_uint_eq(paxos_proposer_pending(C->p[0]), 0);
	ck_assert_uint_gt(C->counters[0].rejects_received, 0);
	ck_assert_uint_eq(C->counters[0].phase1_timeouts, 0);
}
END_TEST

START_TEST(test_demoted_leader_stops_at_once)
{
	paxos_proposer_set_leader(C->p[0], true, 1, C->now, &C->out[0]);
	run(NET_MAX);
	submit("x");
	submit("y");
	submit("z");
	paxos_proposer_set_leader(C->p[0], false, 0, C->now, &C->out[0]);
	size_t sent = C->sent_by[0];
	for (int i = 0; i < 10; i++) {
		C->now += 100 * MS;
		paxos_proposer_tick(C->p[0], C->now, &C->out[0]);
		run(NET_MAX);
	}
	ck_assert_uint_eq(C->sent_by[0], sent); /* no retry, no new proposal */
	/* The accepts already sent get x and y chosen; z waits in both lists. */
	paxos_proposer_set_leader(C->p[1], true, C->next, C->now, &C->out[1]);
	run(NET_MAX);
	ck_assert_uint_eq(times_delivered("x"), 1);
	ck_assert_uint_eq(times_delivered("y"), 1);
	ck_assert_uint_eq(times_delivered("z"), 1);
	ck_assert_uint_eq(paxos_proposer_pending(C->p[0]), 0);
}
END_TEST

START_TEST(test_two_leaders_stay_safe)
{
	/* A partition made both lead, each with its own clients: they duel with rejects for
	 * the same instances; learn() asserts that no instance gets a quorum for two values. */
	paxos_proposer_set_leader(C->p[0], true, 1, C->now, &C->out[0]);
	paxos_proposer_set_leader(C->p[1], true, 1, C->now, &C->out[1]);
	char names[20][4];
	for (int i = 0; i < 20; i++) {
		uint32_t side = (uint32_t)i % NPROP;
		snprintf(names[i], sizeof(names[i]), "w%d", i);
		struct paxos_value v = value_of(names[i]);
		paxos_proposer_submit(C->p[side], &v, C->now, &C->out[side]);
		run(7); /* interleave submissions with the duel */
	}
	for (int round = 0; round < 20; round++) {
		run(97);
		C->now += 10 * MS;
		for (uint32_t id = 0; id < NPROP; id++)
			paxos_proposer_tick(C->p[id], C->now, &C->out[id]);
	}
	ck_assert_uint_gt(C->counters[0].rejects_received, 0);
	/* Both proposed in the same instances: the lower ballot lost, and its values went
	 * back to its list. */
	ck_assert_uint_gt(C->counters[0].values_requeued, 0);
	/* The partition heals: 1 steps down, 0 finishes its own values; 1 keeps what it
	 * could not get delivered, for a later leadership. */
	paxos_proposer_set_leader(C->p[1], false, 0, C->now, &C->out[1]);
	settle();
	for (int i = 0; i < 20; i += 2)
		ck_assert_uint_ge(times_delivered(names[i]), 1);
	ck_assert_uint_eq(paxos_proposer_pending(C->p[0]), 0);
	uint32_t undelivered = 0;
	for (int i = 1; i < 20; i += 2)
		undelivered += times_delivered(names[i]) == 0;
	ck_assert_uint_eq(paxos_proposer_pending(C->p[1]), undelivered);
	/* Once it leads again, those go out too. */
	paxos_proposer_set_leader(C->p[0], false, 0, C->now, &C->out[0]);
	paxos_proposer_set_leader(C->p[1], true, C->next, C->now, &C->out[1]);
	settle();
	for (int i = 0; i < 20; i++)
		ck_assert_uint_ge(times_delivered(names[i]), 1);
	ck_assert_uint_eq(paxos_proposer_pending(C->p[1]), 0);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("election_takeover");
	TCase *t = tcase_create("takeover");
	tcase_add_checked_fixture(t, cluster_setup, cluster_teardown);
	tcase_add_test(t, test_follower_drops_values_delivered_by_the_leader);
	tcase_add_test(t, test_new_leader_proposes_what_was_not_delivered);
	tcase_add_test(t, test_demoted_leader_stops_at_once);
	tcase_add_test(t, test_two_leaders_stay_safe);
	suite_add_tcase(s, t);
	return s;
}
