/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The deterministic merge of partitions (lib/core/merge.h): the order it delivers depends on
 * the logs alone, never on how the partitions' deliveries interleave; rounds take a segment
 * of each partition in turn; skips end segments early; what waits is handed over whole; a merge
 * resumed from another's position goes on with exactly the rest of the order.
 */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"

#define MAX_PARTS 4u
#define MAX_INSTANCES 300u
#define MAX_OUT 4096u
/* "pP.iI.vV" with three 32-bit numbers, and its end */
#define VALUE_TEXT 36u

/* One partition's log: per instance, how many values (0 with skip set: a skip). */
struct log {
	uint32_t values[MAX_INSTANCES];
	bool skip[MAX_INSTANCES];
	uint32_t instances;
};

/* What a merge delivered, as (partition, iid, position) triples and the value bytes. */
struct out {
	uint32_t partition[MAX_OUT];
	paxos_iid iid[MAX_OUT];
	uint32_t position[MAX_OUT];
	char text[MAX_OUT][VALUE_TEXT];
	uint32_t n;
};

static void record(void *arg, uint32_t partition, paxos_iid iid, uint32_t position,
		   const struct paxos_value *v)
{
	struct out *o = arg;
	ck_assert_uint_lt(o->n, MAX_OUT);
	o->partition[o->n] = partition;
	o->iid[o->n] = iid;
	o->position[o->n] = position;
	ck_assert_uint_lt(v->len, sizeof(o->text[0]));
	memcpy(o->text[o->n], v->data, v->len);
	o->text[o->n][v->len] = 0;
	o->n++;
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Feeds instance k of partition p's log to m. */
static void feed(struct merge *m, const struct log *l, uint32_t p, uint32_t k)
{
	char text[VALUE_TEXT];
	for (uint32_t pos = 0; pos < l->values[k]; pos++) {
		int len = snprintf(text, sizeof(text), "p%u.i%u.v%u", p, k + 1, pos);
		struct paxos_value v = {(const uint8_t *)text, (uint32_t)len};
		ck_assert_int_eq(merge_value(m, p, k + 1, pos, &v), PAXOS_OK);
	}
	ck_assert_int_eq(merge_instance(m, p, k + 1, l->skip[k]), PAXOS_OK);
}

/* Runs a merge over the logs, taking the partitions' next instances in an order the seed
 * picks (each log in its own order, as learners deliver). */
static void run(const struct log *logs, uint32_t parts, uint32_t segment, uint64_t seed,
		struct out *o)
{
	struct merge m;
	ck_assert_int_eq(merge_init(&m, parts, segment, record, o), PAXOS_OK);
	uint32_t next[MAX_PARTS] = {0};
	for (;;) {
		uint32_t open = 0, pick[MAX_PARTS];
		for (uint32_t p = 0; p < parts; p++)
			if (next[p] < logs[p].instances)
				pick[open++] = p;
		if (!open)
			break;
		uint32_t p = pick[rng_next(&seed) % open];
		/* Bursts: a learner often delivers several instances of one log in a row. */
		for (uint64_t burst = 1 + rng_next(&seed) % 5;
		     burst-- && next[p] < logs[p].instances;)
			feed(&m, &logs[p], p, next[p]++);
	}
	merge_destroy(&m);
}

/* The merged order worked out offline from the rule: segments, then rounds over them. */
static void expected(const struct log *logs, uint32_t parts, uint32_t segment, struct out *o)
{
	uint32_t at[MAX_PARTS] = {0};
	for (;;) {
		/* Round by round, until a partition whose turn it is has no segment left. */
		for (uint32_t p = 0; p < parts; p++) {
			uint32_t k = at[p], n = 0;
			bool ended = false;
			while (k < logs[p].instances && !ended) {
				ended = logs[p].skip[k] || ++n == segment;
				k++;
			}
			if (!ended) /* every log ends a segment: p has no instance left */
				return;
			for (; at[p] < k; at[p]++)
				for (uint32_t pos = 0; pos < logs[p].values[at[p]]; pos++) {
					snprintf(o->text[o->n], sizeof(o->text[0]), "p%u.i%u.v%u",
						 p, at[p] + 1, pos);
					o->partition[o->n] = p;
					o->iid[o->n] = at[p] + 1;
					o->position[o->n++] = pos;
				}
		}
	}
}

static void random_logs(struct log *logs, uint32_t parts, uint64_t seed)
{
	for (uint32_t p = 0; p < parts; p++) {
		struct log *l = &logs[p];
		/* A busy log, an idle one (mostly skips), and some in between. */
		uint32_t skip_percent = p == 1 ? 70 : (uint32_t)(rng_next(&seed) % 30);
		l->instances = 20 + (uint32_t)(rng_next(&seed) % 200);
		for (uint32_t k = 0; k < l->instances; k++) {
			l->skip[k] = rng_next(&seed) % 100 < skip_percent;
			l->values[k] = l->skip[k] ? 0 : 1 + (uint32_t)(rng_next(&seed) % 3);
		}
		/* The last segment ends too: values of an open segment go out early or wait,
		 * depending on when its turn comes, until the segment ends. */
		l->skip[l->instances - 1] = true;
		l->values[l->instances - 1] = 0;
	}
}

static void assert_same(const struct out *a, const struct out *b)
{
	ck_assert_uint_eq(a->n, b->n);
	for (uint32_t i = 0; i < a->n; i++)
		ck_assert_msg(strcmp(a->text[i], b->text[i]) == 0 &&
				  a->partition[i] == b->partition[i] && a->iid[i] == b->iid[i] &&
				  a->position[i] == b->position[i],
			      "delivery %u: %s against %s", i, a->text[i], b->text[i]);
}

/* Whatever the interleaving, every merge delivers the order the rule gives. */
START_TEST(test_order_depends_on_the_logs_alone)
{
	static struct log logs[MAX_PARTS];
	static struct out want, got;
	for (uint64_t seed = 1; seed <= 100; seed++) {
		uint32_t parts = 1 + (uint32_t)(seed % MAX_PARTS);
		uint32_t segment = 1 + (uint32_t)(seed % 7);
		memset(logs, 0, sizeof(logs));
		random_logs(logs, parts, seed * 7919);
		memset(&want, 0, sizeof(want));
		expected(logs, parts, segment, &want);
		for (uint64_t order = 1; order <= 4; order++) {
			memset(&got, 0, sizeof(got));
			run(logs, parts, segment, seed * 104729 + order, &got);
			assert_same(&want, &got);
		}
	}
}
END_TEST

/* Two partitions, segments of 2: partition 1's values wait while partition 0's segment is
 * open; a skip ends a segment early; a partition's segment whose turn has come goes out as it
 * comes. */
START_TEST(test_rounds_and_skips)
{
	struct out o = {0};
	struct merge m;
	ck_assert_int_eq(merge_init(&m, 2, 2, record, &o), PAXOS_OK);
	struct paxos_value a = {(const uint8_t *)"a", 1}, b = {(const uint8_t *)"b", 1};
	ck_assert_int_eq(merge_value(&m, 1, 1, 0, &b), PAXOS_OK); /* not its turn: waits */
	ck_assert_int_eq(merge_instance(&m, 1, 1, false), PAXOS_OK);
	ck_assert_uint_eq(o.n, 0);
	ck_assert_uint_gt(merge_waiting(&m), 0);
	ck_assert_int_eq(merge_value(&m, 0, 1, 0, &a), PAXOS_OK); /* its turn: at once */
	ck_assert_uint_eq(o.n, 1);
	ck_assert_int_eq(merge_instance(&m, 0, 1, false), PAXOS_OK);
	ck_assert_int_eq(merge_instance(&m, 0, 2, true), PAXOS_OK); /* a skip ends the segment */
	ck_assert_uint_eq(o.n, 1); /* partition 1's segment is still open */
	ck_assert_int_eq(merge_instance(&m, 1, 2, false), PAXOS_OK);
	ck_assert_uint_eq(o.n, 2);
	ck_assert_str_eq(o.text[1], "b");
	ck_assert_uint_eq(merge_waiting(&m), 0);
	/* Round 2: partition 1 runs ahead; it waits for partition 0's segment (2 instances). */
	ck_assert_int_eq(merge_value(&m, 1, 3, 0, &b), PAXOS_OK);
	ck_assert_int_eq(merge_instance(&m, 1, 3, true), PAXOS_OK);
	ck_assert_int_eq(merge_instance(&m, 0, 3, false), PAXOS_OK);
	ck_assert_uint_eq(o.n, 2);
	ck_assert_int_eq(merge_instance(&m, 0, 4, false), PAXOS_OK);
	ck_assert_uint_eq(o.n, 3);
	ck_assert_uint_eq(o.partition[2], 1);
	ck_assert_uint_eq(o.iid[2], 3);
	ck_assert_int_eq(merge_value(&m, 7, 1, 0, &a), PAXOS_E_INVALID);
	ck_assert_int_eq(merge_instance(&m, 2, 1, false), PAXOS_E_INVALID);
	merge_destroy(&m);
	ck_assert_int_eq(merge_init(&m, 0, 1, record, &o), PAXOS_E_INVALID);
	ck_assert_int_eq(merge_init(&m, 2, 0, record, &o), PAXOS_E_INVALID);
	ck_assert_int_eq(merge_init(&m, PAXOS_MAX_PARTITIONS + 1, 1, record, &o), PAXOS_E_INVALID);
}
END_TEST

/* A partition far ahead: its values wait in one buffer that grows, and come out in order. */
START_TEST(test_long_wait_keeps_order)
{
	static struct out o;
	memset(&o, 0, sizeof(o));
	struct merge m;
	ck_assert_int_eq(merge_init(&m, 2, 1, record, &o), PAXOS_OK);
	char text[24];
	for (uint32_t k = 1; k <= 2000; k++) { /* 2000 instances of partition 1 wait */
		int len = snprintf(text, sizeof(text), "%u", k);
		struct paxos_value v = {(const uint8_t *)text, (uint32_t)len};
		ck_assert_int_eq(merge_value(&m, 1, k, 0, &v), PAXOS_OK);
		ck_assert_int_eq(merge_instance(&m, 1, k, false), PAXOS_OK);
	}
	ck_assert_uint_eq(o.n, 0);
	for (uint32_t k = 1; k <= 2000; k++)
		ck_assert_int_eq(merge_instance(&m, 0, k, true), PAXOS_OK);
	ck_assert_uint_eq(o.n, 2000);
	for (uint32_t k = 0; k < 2000; k++) {
		snprintf(text, sizeof(text), "%u", k + 1);
		ck_assert_str_eq(o.text[k], text);
	}
	ck_assert_uint_eq(merge_waiting(&m), 0);
	merge_destroy(&m);
}
END_TEST

/* A merge fed as run() does, from instance start[p] of each log, that takes its position at
 * delivery `at` (inside the deliver call, as an application snapshots after applying a value)
 * or, when `at` is UINT32_MAX, between two feeds after `steps` feeds. */
struct cut {
	struct out o;
	struct merge m;
	uint32_t at, steps;
	bool taken;
	uint32_t taken_n; /* deliveries up to and with the position */
	struct merge_position pos;
};

static void record_and_cut(void *arg, uint32_t partition, paxos_iid iid, uint32_t position,
			   const struct paxos_value *v)
{
	struct cut *c = arg;
	record(&c->o, partition, iid, position, v);
	if (!c->taken && c->o.n == c->at + 1) {
		merge_position(&c->m, &c->pos);
		c->taken = true;
		c->taken_n = c->o.n;
	}
}

static void run_cut(struct cut *c, const struct log *logs, uint32_t parts, uint32_t segment,
		    uint64_t seed, const struct merge_position *resume)
{
	ck_assert_int_eq(merge_init(&c->m, parts, segment, record_and_cut, c), PAXOS_OK);
	uint32_t next[MAX_PARTS] = {0};
	if (resume) {
		ck_assert_int_eq(merge_resume(&c->m, resume), PAXOS_OK);
		for (uint32_t p = 0; p < parts; p++)
			next[p] = (uint32_t)resume->next[p] - 1;
	}
	for (uint32_t step = 0;; step++) {
		if (c->at == UINT32_MAX && step == c->steps && !c->taken) {
			merge_position(&c->m, &c->pos);
			c->taken = true;
			c->taken_n = c->o.n;
		}
		uint32_t open = 0, pick[MAX_PARTS];
		for (uint32_t p = 0; p < parts; p++)
			if (next[p] < logs[p].instances)
				pick[open++] = p;
		if (!open)
			break;
		uint32_t p = pick[rng_next(&seed) % open];
		feed(&c->m, &logs[p], p, next[p]++);
	}
	merge_destroy(&c->m);
}

/* Wherever a learner snapshots (inside a delivery or between instances), a merge resumed from
 * its position, fed each log from where the position says, delivers exactly the rest. */
START_TEST(test_resume_delivers_the_rest)
{
	static struct log logs[MAX_PARTS];
	static struct out want;
	static struct cut first, second;
	uint32_t resumed = 0;
	for (uint64_t seed = 1; seed <= 150; seed++) {
		uint32_t parts = 1 + (uint32_t)(seed % MAX_PARTS);
		uint32_t segment = 1 + (uint32_t)(seed % 5);
		memset(logs, 0, sizeof(logs));
		random_logs(logs, parts, seed * 6007);
		memset(&want, 0, sizeof(want));
		expected(logs, parts, segment, &want);
		if (want.n == 0)
			continue;
		memset(&first, 0, sizeof(first));
		uint64_t pick = seed * 31337;
		if (seed % 2) {
			first.at = (uint32_t)(rng_next(&pick) % want.n);
		} else {
			first.at = UINT32_MAX;
			first.steps = (uint32_t)(rng_next(&pick) % 200);
		}
		run_cut(&first, logs, parts, segment, seed * 104729, NULL);
		assert_same(&want, &first.o);
		if (!first.taken)
			continue;
		memset(&second, 0, sizeof(second));
		second.at = UINT32_MAX;
		second.steps = UINT32_MAX;
		run_cut(&second, logs, parts, segment, seed * 15485863, &first.pos);
		ck_assert_uint_eq(second.o.n, want.n - first.taken_n);
		for (uint32_t i = 0; i < second.o.n; i++)
			ck_assert_msg(strcmp(second.o.text[i], want.text[first.taken_n + i]) == 0,
				      "seed %llu: resumed delivery %u is %s, not %s",
				      (unsigned long long)seed, i, second.o.text[i],
				      want.text[first.taken_n + i]);
		resumed++;
	}
	ck_assert_uint_gt(resumed, 100);
	/* Positions that cannot be resumed from. */
	struct merge m;
	struct merge_position pos = {.turn = 2, .next = {1, 1}};
	ck_assert_int_eq(merge_init(&m, 2, 3, record, &want), PAXOS_OK);
	ck_assert_int_eq(merge_resume(&m, &pos), PAXOS_E_INVALID); /* no partition 2 */
	pos.turn = 1;
	pos.in_segment = 3;
	ck_assert_int_eq(merge_resume(&m, &pos), PAXOS_E_INVALID); /* segments of 3 */
	pos.in_segment = 0;
	pos.next[1] = 0;
	ck_assert_int_eq(merge_resume(&m, &pos), PAXOS_E_INVALID); /* no instance 0 */
	pos.next[1] = 7;
	ck_assert_int_eq(merge_instance(&m, 0, 1, false), PAXOS_OK);
	ck_assert_int_eq(merge_resume(&m, &pos), PAXOS_E_INVALID); /* fed already */
	merge_destroy(&m);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("merge");
	TCase *t = tcase_create("merge");
	tcase_set_timeout(t, 60); /* a loaded machine: the random cases take a second or two */
	tcase_add_test(t, test_order_depends_on_the_logs_alone);
	tcase_add_test(t, test_rounds_and_skips);
	tcase_add_test(t, test_long_wait_keeps_order);
	tcase_add_test(t, test_resume_delivers_the_rest);
	suite_add_tcase(s, t);
	return s;
}
