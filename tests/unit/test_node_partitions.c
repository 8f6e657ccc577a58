/* SPDX-License-Identifier: BSD-3-Clause */
/* Partition groups of nodes (paxos/partitions.h): the input they refuse, and a merging learner
 * started from a snapshot of its merge position, on a cluster of two partitions in this
 * process. Joins multicast groups: ctest runs it in a private network namespace
 * (tests/netns-run.sh). */
#include "check_main.h"
#include <event2/event.h>
#include <paxos/paxos.h>
#include <paxos/storage_backends.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_fields.h"
#include "support.h"

static void ignore_value(void *arg, uint32_t partition, paxos_iid iid, uint32_t position,
			 const struct paxos_value *v)
{
	(void)arg;
	(void)partition;
	(void)iid;
	(void)position;
	(void)v;
}

/* Partitions groups refuse, with the reason: unknown and unhosted partitions, a merging
 * learner without every partition or with a log that starts past instance 1. */
START_TEST(test_partitions_group_bad_input)
{
	char err[256];
	struct paxos_config c;
	paxos_config_defaults(&c);
	ck_assert_int_eq(paxos_config_set(&c, "partitions", "2", err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(paxos_config_set(&c, "learner-merge", "yes", err, sizeof(err)), PAXOS_OK);
	struct event_base *b = event_base_new();
	ck_assert_ptr_null(paxos_partitions_new(b, &c, 1u << 2, err, sizeof(err)));
	ck_assert_str_eq(err, "partitions: hosted partitions must be some of 0..1 (paxos.conf "
			      "partitions 2)");
	struct paxos_partitions *g = paxos_partitions_new(b, &c, 1u << 1, err, sizeof(err));
	ck_assert_msg(g != NULL, "%s", err);
	ck_assert_uint_eq(paxos_partitions_count(g), 2);
	ck_assert_ptr_null(paxos_partitions_node(g, 0));
	ck_assert_ptr_nonnull(paxos_partitions_node(g, 1));
	ck_assert_int_eq(paxos_partitions_submit(g, 2, "x", 1), PAXOS_E_INVALID);
	ck_assert_str_eq(paxos_partitions_error(g),
			 "partition 2 does not exist: paxos.conf has partitions 2 (0..1)");
	ck_assert_int_eq(paxos_partitions_submit(g, 0, "x", 1), PAXOS_E_INVALID);
	ck_assert_str_eq(paxos_partitions_error(g), "partition 0 is not hosted by this group");
	ck_assert_int_eq(paxos_partitions_submit(g, 1, "x", 1), PAXOS_OK);
	ck_assert_int_eq(paxos_partitions_add_learner(g, ignore_value, NULL), PAXOS_E_INVALID);
	ck_assert_str_eq(paxos_partitions_error(g),
			 "learner-merge: partition 0 is not hosted here, and the merged order "
			 "needs every partition (host all 2, or set learner-merge no)");
	paxos_partitions_free(g);
	g = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	ck_assert_msg(g != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_set_learner_start(paxos_partitions_node(g, 1), 5), PAXOS_OK);
	ck_assert_int_eq(paxos_partitions_add_learner(g, ignore_value, NULL), PAXOS_E_INVALID);
	ck_assert_str_eq(paxos_partitions_error(g),
			 "learner-merge: partition 1's learner starts at instance 5, but the "
			 "merged order takes that log from instance 1 (start where a merge "
			 "position says: paxos_partitions_resume_merge())");
	ck_assert_int_eq(paxos_partitions_add_learner(g, NULL, NULL), PAXOS_E_INVALID);
	paxos_partitions_free(g);
	/* A merge position from a snapshot: checked against paxos.conf, then the learners start
	 * where it says. */
	g = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	struct paxos_merge_position pos;
	ck_assert_int_eq(paxos_partitions_merge_position(g, &pos), PAXOS_OK);
	ck_assert_uint_eq(pos.partitions, 2);
	ck_assert_uint_eq(pos.next[0], 1);
	ck_assert_uint_eq(pos.next[1], 1);
	pos.partitions = 3;
	ck_assert_int_eq(paxos_partitions_resume_merge(g, &pos), PAXOS_E_INVALID);
	ck_assert_str_eq(paxos_partitions_error(g),
			 "learner-merge: the merge position was taken with partitions 3 and "
			 "merge-segment 64, but paxos.conf has partitions 2 and merge-segment 64");
	pos.partitions = 2;
	pos.turn = 2;
	ck_assert_int_eq(paxos_partitions_resume_merge(g, &pos), PAXOS_E_INVALID);
	pos.turn = 1;
	pos.next[0] = 8;
	pos.next[1] = 0;
	ck_assert_int_eq(paxos_partitions_resume_merge(g, &pos), PAXOS_E_INVALID);
	pos.next[1] = 5;
	pos.values = 2;
	ck_assert_int_eq(paxos_partitions_resume_merge(g, &pos), PAXOS_OK);
	ck_assert_int_eq(paxos_partitions_resume_merge(g, &pos), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_partitions_add_learner(g, ignore_value, NULL), PAXOS_OK);
	struct paxos_merge_position now;
	ck_assert_int_eq(paxos_partitions_merge_position(g, &now), PAXOS_OK);
	ck_assert_mem_eq(&now, &pos, sizeof(now));
	paxos_partitions_free(g);
	g = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	ck_assert_int_eq(paxos_partitions_add_learner(g, ignore_value, NULL), PAXOS_OK);
	ck_assert_int_eq(paxos_partitions_add_learner(g, ignore_value, NULL), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_partitions_resume_merge(g, &pos), PAXOS_E_INVALID);
	ck_assert_str_eq(paxos_partitions_error(g),
			 "learner-merge: resume the merge before adding the learner");
	ck_assert_uint_eq(paxos_partitions_merge_waiting(g), 0);
	paxos_partitions_free(g);
	ck_assert_int_eq(paxos_config_set(&c, "learner-merge", "no", err, sizeof(err)), PAXOS_OK);
	g = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	ck_assert_int_eq(paxos_partitions_merge_position(g, &pos), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_partitions_resume_merge(g, &pos), PAXOS_E_INVALID);
	ck_assert_str_eq(paxos_partitions_error(g),
			 "learner-merge is off: there is no merged order to resume");
	paxos_partitions_free(g);
	paxos_partitions_free(NULL);
	event_base_free(b);
}
END_TEST

/* What a learner group delivered, as "P IID POS VALUE" lines; a snapshot of its merge
 * position is taken in delivery number snap_at (from 1). */
struct delivered {
	struct paxos_partitions *group;
	char lines[128][48];
	uint32_t n, snap_at;
	struct paxos_merge_position snap;
};

static void record_value(void *arg, uint32_t partition, paxos_iid iid, uint32_t position,
			 const struct paxos_value *v)
{
	struct delivered *d = arg;
	ck_assert_uint_lt(d->n, 128);
	snprintf(d->lines[d->n++], sizeof(d->lines[0]), "%u %llu %u %.*s", partition,
		 (unsigned long long)iid, position, (int)v->len, (const char *)v->data);
	if (d->n == d->snap_at)
		ck_assert_int_eq(paxos_partitions_merge_position(d->group, &d->snap), PAXOS_OK);
}

/* Runs the loop until d delivered want values, for at most 30 s (a failure then). */
static void run_until(struct event_base *b, const struct delivered *d, uint32_t want)
{
	for (int i = 0; i < 300 && d->n < want; i++)
		support_run_for(b, 100);
	ck_assert_uint_eq(d->n, want);
}

/* A merging learner started from a snapshot (its merge position, taken inside a delivery, in
 * the middle of an instance's values) delivers exactly the rest of the merged order another
 * learner delivered: one cluster of two partitions in this process, on multicast. */
START_TEST(test_partitions_resume_from_snapshot)
{
	static const char text[] = "acceptors 1\nproposers 1\npartitions 2\nlearner-merge yes\n"
				   "merge-segment 2\nmerge-skip-ms 5\nvalue-batch-limit 4\n";
	struct paxos_config c;
	char err[256];
	paxos_config_defaults(&c);
	ck_assert_msg(paxos_config_parse(&c, text, sizeof(text) - 1, "merge", err, sizeof(err)) ==
			  PAXOS_OK,
		      "%s", err);
	struct event_base *b = event_base_new();
	struct paxos_partitions *replica = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	ck_assert_msg(replica != NULL, "%s", err);
	for (uint32_t p = 0; p < 2; p++) {
		struct paxos_node *n = paxos_partitions_node(replica, p);
		ck_assert_int_eq(paxos_node_add_acceptor(n, 0, paxos_storage_memory_new()),
				 PAXOS_OK);
		ck_assert_int_eq(paxos_node_add_proposer(n, 0), PAXOS_OK);
	}
	static struct delivered first, second;
	memset(&first, 0, sizeof(first));
	memset(&second, 0, sizeof(second));
	first.group = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	ck_assert_msg(first.group != NULL, "%s", err);
	ck_assert_int_eq(paxos_partitions_add_learner(first.group, record_value, &first), PAXOS_OK);
	support_run_for(b, 300); /* the proposer takes the lead of both partitions */
	/* Bursts, so that instances hold several values: the snapshot falls inside one. */
	char value[16];
	for (uint32_t k = 0; k < 60; k++) {
		int len = snprintf(value, sizeof(value), "v%02u", k);
		ck_assert_int_eq(paxos_partitions_submit(replica, k % 3 == 0, value, (size_t)len),
				 PAXOS_OK);
		if (k % 10 == 9)
			support_run_for(b, 50);
	}
	first.snap_at = 0;
	run_until(b, &first, 60);
	/* The same again, with a snapshot taken inside a delivery whose instance has more. */
	uint32_t at = 0;
	for (uint32_t i = 20; i < 59 && !at; i++) {
		unsigned p0, p1;
		unsigned long long i0, i1;
		sscanf(first.lines[i], "%u %llu", &p0, &i0);
		sscanf(first.lines[i + 1], "%u %llu", &p1, &i1);
		if (p0 == p1 && i0 == i1)
			at = i + 1; /* delivery number i + 1 is not its instance's last */
	}
	ck_assert_msg(at != 0, "no instance with several values");
	struct delivered *again = &second;
	again->group = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	again->snap_at = at;
	ck_assert_int_eq(paxos_partitions_add_learner(again->group, record_value, again), PAXOS_OK);
	run_until(b, again, 60);
	ck_assert_uint_gt(again->snap.values, 0);
	for (uint32_t i = 0; i < 60; i++)
		ck_assert_str_eq(again->lines[i], first.lines[i]);
	/* A third learner starts from that snapshot: it delivers the rest, nothing more. */
	static struct delivered resumed;
	memset(&resumed, 0, sizeof(resumed));
	resumed.group = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	ck_assert_int_eq(paxos_partitions_resume_merge(resumed.group, &again->snap), PAXOS_OK);
	ck_assert_int_eq(paxos_partitions_add_learner(resumed.group, record_value, &resumed),
			 PAXOS_OK);
	run_until(b, &resumed, 60 - at);
	support_run_for(b, 200); /* and nothing more comes */
	ck_assert_uint_eq(resumed.n, 60 - at);
	for (uint32_t i = 0; i < resumed.n; i++)
		ck_assert_str_eq(resumed.lines[i], first.lines[at + i]);
	paxos_partitions_free(resumed.group);
	paxos_partitions_free(again->group);
	paxos_partitions_free(first.group);
	paxos_partitions_free(replica);
	event_base_free(b);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("node_partitions");
	TCase *tc = tcase_create("partitions");
	tcase_set_timeout(tc, 60); /* a cluster runs in test_partitions_resume_from_snapshot */
	tcase_add_test(tc, test_partitions_group_bad_input);
	tcase_add_test(tc, test_partitions_resume_from_snapshot);
	suite_add_tcase(s, tc);
	return s;
}
