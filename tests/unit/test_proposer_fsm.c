/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proposer instance state machine, table-driven (thesis 3.5, Fig. 3.1).
 *
 * Each row of `table` is one <state, event> pair: every state of Fig. 3.1 crossed with
 * every event (S, TO1, P, R0, R1, NV, A, E, C, TO2, D standing for D0..D5, and REJECT from
 * 3.5.2), then a few extra rows for records that carry a value. The arrows of the figure
 * are the rows whose next state or actions are not "unchanged":
 *   empty      --S-->   p1_pending (prepare, first ballot)
 *   p1_pending --TO1--> p1_pending (prepare, b++)
 *   p1_pending --P-->   quorum: R0 --A--> E / R1 --E-->  p2_pending (accept)
 *   p1_ready   --A-->   E --> p2_pending (a pending value is popped)   [NV: stays]
 *   p2_pending --TO2--> p1_pending (prepare, b++)
 *   any        --C-->   closed
 *   any        --D-->   empty (D0..D5; client value pushed back if another value won)
 *   p1/p2_pending --REJECT--> p1_pending (prepare, INCREMENTSKIP)
 * Every other row is an event the state ignores: the record must not change at all.
 *
 * The standard records (build()): proposer 2 of 3 acceptors, instance 7; p1_pending has one
 * promise (acceptor 0) for ballot 102, so one more reaches the quorum of 2; p1_ready has no
 * value (NV); p2_pending and closed hold the client value "mine". The pending list holds
 * "next1", "next2". Event inputs: P = promise from acceptor 1 for ballot 102 without a value;
 * REJECT = ballot 507; C = "mine"; D = the row's delivered value ("mine" unless stated).
 *
 * Instance values are frames of client values (lib/core/batch.h): "mine", "found", the accept
 * values and D's value below are frames of that one value; the pending list holds the
 * client values themselves. The table runs with batch_limit 1 (one value per instance);
 * the batch_* cases (test_proposer_fsm_cases.c) pack several.
 */
#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "ballot.h"
#include "leadership.h"
#include "proposer_fsm_fixture.h"

enum msg_action { NO_MSG, PREPARE, ACCEPT };
/* POP_ALL: both pending values went into one instance; PUSH_FRONT_BATCH: "mine", "more"
 * went back to the head, in that order. */
enum pending_action { KEEP, POP, PUSH_FRONT, POP_ALL, PUSH_FRONT_BATCH };
enum ballot_action { SAME, FIRST, INCREMENT, SKIP, RESET };

struct row {
	enum instance_state state;
	enum variant variant;
	enum instance_event event;
	const char *delivered; /* D's value; NULL means "mine" */
	enum instance_state next;
	enum msg_action msg;
	const char *accept_value;
	enum pending_action pending;
	enum ballot_action ballot;
};

#define E_ INSTANCE_EMPTY
#define P1 INSTANCE_P1_PENDING
#define RD INSTANCE_P1_READY
#define P2 INSTANCE_P2_PENDING
#define CL INSTANCE_CLOSED

static const struct row table[] = {
    /* empty */
    {E_, PLAIN, EV_S, NULL, P1, PREPARE, NULL, KEEP, FIRST},
    {E_, PLAIN, EV_TO1, NULL, E_, NO_MSG, NULL, KEEP, SAME},
    {E_, PLAIN, EV_P, NULL, E_, NO_MSG, NULL, KEEP, SAME},
    {E_, PLAIN, EV_R0, NULL, E_, NO_MSG, NULL, KEEP, SAME},
    {E_, FOUND_V1, EV_R1, NULL, E_, NO_MSG, NULL, KEEP, SAME},
    {E_, PLAIN, EV_NV, NULL, E_, NO_MSG, NULL, KEEP, SAME},
    {E_, PLAIN, EV_A, NULL, E_, NO_MSG, NULL, KEEP, SAME},
    {E_, PLAIN, EV_E, NULL, E_, NO_MSG, NULL, KEEP, SAME},
    {E_, PLAIN, EV_C, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    {E_, PLAIN, EV_TO2, NULL, E_, NO_MSG, NULL, KEEP, SAME},
    {E_, PLAIN, EV_D, NULL, E_, NO_MSG, NULL, KEEP, RESET},
    {E_, PLAIN, EV_REJECT, NULL, E_, NO_MSG, NULL, KEEP, SAME},
    {E_, PLAIN, EV_REPAIR, NULL, E_, NO_MSG, NULL, KEEP, SAME},
    /* p1_pending */
    {P1, PLAIN, EV_S, NULL, P1, NO_MSG, NULL, KEEP, SAME},
    {P1, PLAIN, EV_TO1, NULL, P1, PREPARE, NULL, KEEP, INCREMENT},
    {P1, PLAIN, EV_P, NULL, P2, ACCEPT, "next1", POP, SAME},
    {P1, PLAIN, EV_R0, NULL, P2, ACCEPT, "next1", POP, SAME},
    {P1, FOUND_V1, EV_R1, NULL, P2, ACCEPT, "found", KEEP, SAME},
    {P1, PLAIN, EV_NV, NULL, P1, NO_MSG, NULL, KEEP, SAME},
    {P1, PLAIN, EV_A, NULL, P1, NO_MSG, NULL, KEEP, SAME},
    {P1, PLAIN, EV_E, NULL, P1, NO_MSG, NULL, KEEP, SAME},
    {P1, PLAIN, EV_C, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    {P1, PLAIN, EV_TO2, NULL, P1, NO_MSG, NULL, KEEP, SAME},
    {P1, PLAIN, EV_D, NULL, E_, NO_MSG, NULL, KEEP, RESET},
    {P1, PLAIN, EV_REJECT, NULL, P1, PREPARE, NULL, KEEP, SKIP},
    {P1, PLAIN, EV_REPAIR, NULL, P1, NO_MSG, NULL, KEEP, SAME},
    /* p1_ready, no value yet */
    {RD, PLAIN, EV_S, NULL, RD, NO_MSG, NULL, KEEP, SAME},
    {RD, PLAIN, EV_TO1, NULL, RD, NO_MSG, NULL, KEEP, SAME},
    {RD, PLAIN, EV_P, NULL, RD, NO_MSG, NULL, KEEP, SAME},
    {RD, PLAIN, EV_R0, NULL, RD, NO_MSG, NULL, KEEP, SAME},
    {RD, FOUND_V1, EV_R1, NULL, RD, NO_MSG, NULL, KEEP, SAME},
    {RD, PLAIN, EV_NV, NULL, RD, NO_MSG, NULL, KEEP, SAME},
    {RD, PLAIN, EV_A, NULL, P2, ACCEPT, "next1", POP, SAME},
    {RD, PLAIN, EV_E, NULL, RD, NO_MSG, NULL, KEEP, SAME},
    {RD, PLAIN, EV_C, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    {RD, PLAIN, EV_TO2, NULL, RD, NO_MSG, NULL, KEEP, SAME},
    {RD, PLAIN, EV_D, NULL, E_, NO_MSG, NULL, KEEP, RESET},
    {RD, PLAIN, EV_REJECT, NULL, RD, NO_MSG, NULL, KEEP, SAME},
    {RD, PLAIN, EV_REPAIR, NULL, P1, PREPARE, NULL, KEEP, INCREMENT},
    /* p2_pending with the client value "mine" */
    {P2, PLAIN, EV_S, NULL, P2, NO_MSG, NULL, KEEP, SAME},
    {P2, PLAIN, EV_TO1, NULL, P2, NO_MSG, NULL, KEEP, SAME},
    {P2, PLAIN, EV_P, NULL, P2, NO_MSG, NULL, KEEP, SAME},
    {P2, PLAIN, EV_R0, NULL, P2, NO_MSG, NULL, KEEP, SAME},
    {P2, FOUND_V1, EV_R1, NULL, P2, NO_MSG, NULL, KEEP, SAME},
    {P2, PLAIN, EV_NV, NULL, P2, NO_MSG, NULL, KEEP, SAME},
    {P2, PLAIN, EV_A, NULL, P2, NO_MSG, NULL, KEEP, SAME},
    {P2, PLAIN, EV_E, NULL, P2, NO_MSG, NULL, KEEP, SAME},
    {P2, PLAIN, EV_C, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    {P2, PLAIN, EV_TO2, NULL, P1, PREPARE, NULL, KEEP, INCREMENT},
    {P2, PLAIN, EV_D, NULL, E_, NO_MSG, NULL, KEEP, RESET},
    {P2, PLAIN, EV_REJECT, NULL, P1, PREPARE, NULL, KEEP, SKIP},
    {P2, PLAIN, EV_REPAIR, NULL, P2, NO_MSG, NULL, KEEP, SAME},
    /* closed with the client value "mine" */
    {CL, PLAIN, EV_S, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    {CL, PLAIN, EV_TO1, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    {CL, PLAIN, EV_P, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    {CL, PLAIN, EV_R0, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    {CL, FOUND_V1, EV_R1, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    {CL, PLAIN, EV_NV, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    {CL, PLAIN, EV_A, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    {CL, PLAIN, EV_E, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    {CL, PLAIN, EV_C, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    {CL, PLAIN, EV_TO2, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    {CL, PLAIN, EV_D, NULL, E_, NO_MSG, NULL, KEEP, RESET},
    {CL, PLAIN, EV_REJECT, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    {CL, PLAIN, EV_REPAIR, NULL, CL, NO_MSG, NULL, KEEP, SAME},
    /* records that carry a value */
    {RD, CLIENT_V2, EV_A, NULL, P2, ACCEPT, "mine", KEEP, SAME},
    {RD, CLIENT_V2, EV_E, NULL, P2, ACCEPT, "mine", KEEP, SAME},
    {RD, CLIENT_V2, EV_REPAIR, NULL, RD, NO_MSG, NULL, KEEP, SAME},
    {P1, CLIENT_V2, EV_R0, NULL, P2, ACCEPT, "mine", KEEP, SAME},
    {P1, CLIENT_V2, EV_TO1, NULL, P1, PREPARE, NULL, KEEP, INCREMENT},
    {P2, PLAIN, EV_D, "other", E_, NO_MSG, NULL, PUSH_FRONT, RESET},
    {CL, PLAIN, EV_D, "other", E_, NO_MSG, NULL, PUSH_FRONT, RESET},
    /* value batching (thesis 3.7.4): A packs every waiting value, up to the limit */
    {RD, BATCHING, EV_A, NULL, P2, ACCEPT, "next1,next2", POP_ALL, SAME},
    {P1, BATCHING, EV_R0, NULL, P2, ACCEPT, "next1,next2", POP_ALL, SAME},
    {P1, BATCHING, EV_P, NULL, P2, ACCEPT, "next1,next2", POP_ALL, SAME},
    /* a batch is kept, proposed, or given back whole */
    {RD, CLIENT_BATCH, EV_A, NULL, P2, ACCEPT, "mine,more", KEEP, SAME},
    {P2, CLIENT_BATCH, EV_TO2, NULL, P1, PREPARE, NULL, KEEP, INCREMENT},
    {P2, CLIENT_BATCH, EV_REJECT, NULL, P1, PREPARE, NULL, KEEP, SKIP},
    {P2, CLIENT_BATCH, EV_D, "mine,more", E_, NO_MSG, NULL, KEEP, RESET},
    {P2, CLIENT_BATCH, EV_D, "other", E_, NO_MSG, NULL, PUSH_FRONT_BATCH, RESET},
    {P2, CLIENT_BATCH, EV_D, "mine", E_, NO_MSG, NULL, PUSH_FRONT_BATCH, RESET},
    {CL, CLIENT_BATCH, EV_D, "other", E_, NO_MSG, NULL, PUSH_FRONT_BATCH, RESET},
};

#define TABLE_ROWS (sizeof(table) / sizeof(table[0]))

static paxos_ballot expected_ballot(enum ballot_action a, paxos_ballot before)
{
	switch (a) {
	case FIRST:
		return B_FIRST;
	case INCREMENT:
		return before + PAXOS_MAX_PROPOSERS;
	case SKIP:
		return 602; /* INCREMENTSKIP(102, 507) for p = 2 */
	case RESET:
		return 0;
	default:
		return before;
	}
}

static bool same_record(const struct instance *a, const struct instance *b)
{
	return a->iid == b->iid && a->state == b->state && a->ballot == b->ballot &&
	       a->pset == b->pset && a->vb == b->vb && a->v1_len == b->v1_len &&
	       memcmp(a->v1, b->v1, a->v1_len) == 0 && a->has_v2 == b->has_v2 && a->cv == b->cv &&
	       a->v2_len == b->v2_len && memcmp(a->v2, b->v2, a->v2_len) == 0 &&
	       a->deadline == b->deadline;
}

START_TEST(test_table)
{
	const struct row *r = &table[_i];
	push("next1");
	push("next2");
	build(r->state, r->variant);
	/* A copy with its own value buffers, to see whether anything changed. */
	static uint8_t before_v1[MAXV], before_v2[MAXV];
	struct instance before = inst;
	before.v1 = memcpy(before_v1, inst.v1, MAXV);
	before.v2 = memcpy(before_v2, inst.v2, MAXV);

	enum instance_state got = fire(r->event, r->delivered);

	const char *what = instance_event_name(r->event);
	ck_assert_msg(got == r->next && inst.state == r->next, "%s --%s--> %s, expected %s",
		      instance_state_name(r->state), what, instance_state_name(got),
		      instance_state_name(r->next));
	ck_assert_uint_eq(inst.ballot, expected_ballot(r->ballot, before.ballot));

	ck_assert_uint_eq(rec->count, (r->msg == NO_MSG ? 0u : 1u));
	if (r->msg != NO_MSG) {
		const struct paxos_message *m = &rec->msg[0];
		ck_assert_int_eq(rec->group[0], PAXOS_GROUP_ACCEPTORS);
		if (r->msg == PREPARE) {
			ck_assert_int_eq(m->type, PAXOS_MSG_PREPARE);
			ck_assert_uint_eq(m->u.prepare.iid, IID);
			ck_assert_uint_eq(m->u.prepare.ballot, inst.ballot);
			ck_assert_uint_eq(inst.deadline, 1000 + instance_timeout(&ctx, &inst, 1));
			ck_assert_uint_eq(inst.pset, 0);
			ck_assert_uint_eq(inst.vb, 0);
		} else {
			ck_assert_int_eq(m->type, PAXOS_MSG_ACCEPT);
			ck_assert_uint_eq(m->u.accept.iid, IID);
			ck_assert_uint_eq(m->u.accept.ballot, inst.ballot);
			ck_assert(frame_is(&m->u.accept.value, r->accept_value));
			ck_assert_uint_eq(inst.deadline, 1000 + instance_timeout(&ctx, &inst, 2));
		}
	}

	switch (r->pending) {
	case KEEP:
		ck_assert_uint_eq(pending_count(&q), 2);
		break;
	case POP: {
		ck_assert_uint_eq(pending_count(&q), 1);
		struct paxos_value front = pending_at(&q, 0);
		ck_assert(value_is(&front, "next2"));
		struct paxos_value v2 = v2_of(&inst);
		ck_assert(inst.has_v2 && inst.cv && frame_is(&v2, "next1"));
		break;
	}
	case PUSH_FRONT: {
		ck_assert_uint_eq(pending_count(&q), 3);
		struct paxos_value front = pending_at(&q, 0);
		ck_assert(value_is(&front, "mine"));
		ck_assert_uint_eq(counters.values_requeued, 1);
		break;
	}
	case POP_ALL: {
		ck_assert_uint_eq(pending_count(&q), 0);
		struct paxos_value v2 = v2_of(&inst);
		ck_assert(inst.has_v2 && inst.cv && frame_is(&v2, "next1,next2"));
		ck_assert_uint_eq(inst.values, 2);
		ck_assert_uint_eq(counters.values_proposed, 2);
		ck_assert_uint_eq(counters.instances_proposed, 1);
		break;
	}
	case PUSH_FRONT_BATCH: {
		ck_assert_uint_eq(pending_count(&q), 4);
		const char *order[] = {"mine", "more", "next1", "next2"};
		for (uint32_t k = 0; k < 4; k++) {
			struct paxos_value v = pending_at(&q, k);
			ck_assert(value_is(&v, order[k]));
		}
		ck_assert_uint_eq(counters.values_requeued, 2);
		break;
	}
	}

	/* An ignored event leaves the record exactly as it was. */
	if (r->next == r->state && r->msg == NO_MSG && r->ballot == SAME)
		ck_assert(same_record(&before, &inst));
	/* A client value survives everything except D and its replacement in R1. */
	if (before.has_v2 && before.cv && r->event != EV_D)
		ck_assert(inst.has_v2 && inst.cv);
}
END_TEST

START_TEST(test_table_covers_every_pair)
{
	bool seen[INSTANCE_STATE_COUNT][INSTANCE_EVENT_COUNT] = {{false}};
	for (size_t i = 0; i < TABLE_ROWS; i++)
		seen[table[i].state][table[i].event] = true;
	for (int s = 0; s < INSTANCE_STATE_COUNT; s++)
		for (int e = 0; e < INSTANCE_EVENT_COUNT; e++)
			ck_assert_msg(seen[s][e], "no row for %s/%s",
				      instance_state_name((enum instance_state)s),
				      instance_event_name((enum instance_event)e));
}
END_TEST

/* R1 sub-cases: a promise quorum with v1 = "found" (vb 101). */
Suite *test_suite(void)
{
	Suite *s = suite_create("proposer_fsm");
	TCase *t = tcase_create("table");
	tcase_add_checked_fixture(t, fsm_setup, fsm_teardown);
	tcase_add_loop_test(t, test_table, 0, (int)TABLE_ROWS);
	tcase_add_test(t, test_table_covers_every_pair);
	suite_add_tcase(s, t);
	return s;
}
