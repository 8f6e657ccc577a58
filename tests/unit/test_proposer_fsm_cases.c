/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proposer instance state machine beyond its table (test_proposer_fsm.c): R1 and D with
 * each kind of value, ballots (INCREMENTSKIP, epochs, refused ballots, leadership changes),
 * promises, rejects and timeouts, assignment refused or without values, batches and the
 * pending list. Records and inputs are the table's (proposer_fsm_fixture.h).
 */
#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "ballot.h"
#include "leadership.h"
#include "proposer_fsm_fixture.h"

static void r1_with(const char *v2, bool cv)
{
	push("next1");
	build(INSTANCE_P1_PENDING, FOUND_V1);
	if (v2)
		set_v2(v2, cv);
	fire(EV_R1, NULL);
	ck_assert_int_eq(inst.state, INSTANCE_P2_PENDING);
	ck_assert_uint_eq(recorder_count(rec, PAXOS_MSG_ACCEPT, PAXOS_GROUP_ACCEPTORS), 1);
	ck_assert_uint_eq(inst.vb, 0);
}

START_TEST(test_r1_v2_null)
{
	r1_with(NULL, false);
	ck_assert(frame_is(&rec->msg[0].u.accept.value, "found"));
	ck_assert(inst.has_v2 && !inst.cv);
	ck_assert_uint_eq(pending_count(&q), 1); /* no client value taken */
}
END_TEST

START_TEST(test_r1_v1_equals_v2)
{
	r1_with("found", true);
	ck_assert(frame_is(&rec->msg[0].u.accept.value, "found"));
	ck_assert(inst.has_v2 && inst.cv); /* still our client's value */
	ck_assert_uint_eq(pending_count(&q), 1);
	ck_assert_uint_eq(counters.values_requeued, 0);
	ck_assert_uint_eq(counters.values_proposed, 1);
}
END_TEST

START_TEST(test_r1_other_value_client)
{
	r1_with("mine", true);
	ck_assert(frame_is(&rec->msg[0].u.accept.value, "found"));
	ck_assert(inst.has_v2 && !inst.cv);
	ck_assert_uint_eq(pending_count(&q), 2);
	struct paxos_value front = pending_at(&q, 0);
	ck_assert(value_is(&front, "mine")); /* head of the list, ahead of next1 */
	ck_assert_uint_eq(counters.values_requeued, 1);
	ck_assert_uint_eq(counters.values_proposed, 0);
}
END_TEST

START_TEST(test_r1_other_value_not_client)
{
	r1_with("stale", false);
	ck_assert(frame_is(&rec->msg[0].u.accept.value, "found"));
	ck_assert(inst.has_v2 && !inst.cv);
	ck_assert_uint_eq(pending_count(&q), 1); /* the old non-client value is discarded */
	ck_assert_uint_eq(counters.values_requeued, 0);
}
END_TEST

/* D sub-cases: a p2_pending record holding v2. */
static void d_with(const char *v2, bool cv, const char *delivered)
{
	build(INSTANCE_P2_PENDING, PLAIN);
	set_v2(v2, cv);
	fire(EV_D, delivered);
	ck_assert_int_eq(inst.state, INSTANCE_EMPTY);
	ck_assert(!inst.has_v2 && !inst.cv);
	ck_assert_uint_eq(inst.iid, IID);
	ck_assert_uint_eq(rec->count, 0);
}

START_TEST(test_d_client_value_delivered)
{
	d_with("mine", true, "mine");
	ck_assert_uint_eq(pending_count(&q), 0);
	ck_assert_uint_eq(counters.values_requeued, 0);
}
END_TEST

START_TEST(test_d_other_value_delivered)
{
	push("next1");
	d_with("mine", true, "other");
	ck_assert_uint_eq(pending_count(&q), 2);
	struct paxos_value front = pending_at(&q, 0);
	ck_assert(value_is(&front, "mine"));
	ck_assert_uint_eq(counters.values_requeued, 1);
}
END_TEST

START_TEST(test_d_not_client_value)
{
	d_with("found", false, "other");
	ck_assert_uint_eq(pending_count(&q), 0);
	ck_assert_uint_eq(counters.values_requeued, 0);
}
END_TEST

START_TEST(test_d_unknown_value_requeues_client_value)
{
	build(INSTANCE_P2_PENDING, PLAIN);
	struct instance_arg none = {0};
	instance_step(&ctx, &inst, EV_D, &none, 0, &rec->emitter);
	ck_assert_uint_eq(pending_count(&q), 1);
	ck_assert_uint_eq(counters.values_requeued, 1);
}
END_TEST

START_TEST(test_increment_skip)
{
	/* p = 3, n = 100, by hand with Algorithm 1 (one sequence step = n):
	 * INCREMENTSKIP(103, 507): my_seq = 100, b'_owner = 7, b'_seq = 500,
	 *   use_seq = max(100, 500) + 100 = 600, result 603. */
	ck_assert_uint_eq(ballot_increment_skip(103, 507, 3), 603);
	/* INCREMENTSKIP(103, 150): my_seq = 100, b'_seq = 100, use 200 -> 203. */
	ck_assert_uint_eq(ballot_increment_skip(103, 150, 3), 203);
	/* INCREMENTSKIP(303, 207): my_seq = 300 > b'_seq = 200, use 400 -> 403. */
	ck_assert_uint_eq(ballot_increment_skip(303, 207, 3), 403);
	/* INCREMENTSKIP(103, 199): b'_seq = 100 (owner 99), use 200 -> 203 > 199. */
	ck_assert_uint_eq(ballot_increment_skip(103, 199, 3), 203);
	/* A ballot of our own: INCREMENTSKIP(103, 303) = 403. */
	ck_assert_uint_eq(ballot_increment_skip(103, 303, 3), 403);
	ck_assert_uint_eq(ballot_first(3, 0), 103);
	ck_assert_uint_eq(ballot_increment(103), 203);
	ck_assert_uint_eq(ballot_increment(203), 303);
	/* Ballots are 64-bit: no limit at 2^32 any more. */
	ck_assert_uint_eq(ballot_increment_skip(103, UINT32_MAX, 3), 4294967303ull);
	ck_assert_uint_eq(ballot_increment(UINT32_MAX - 5), UINT32_MAX - 5 + 100ull);
	/* No wrap-around into small ballots at the end of the ballot space. */
	ck_assert_uint_eq(ballot_increment_skip(103, UINT64_MAX, 3), 103);
	paxos_ballot last = (BALLOT_SEQ_LIMIT - 1) * PAXOS_MAX_PROPOSERS + 3;
	ck_assert_uint_eq(ballot_increment(last), last);
	ck_assert_uint_eq(ballot_increment(last - PAXOS_MAX_PROPOSERS), last);
	ck_assert_uint_eq(ballot_increment_skip(103, last - PAXOS_MAX_PROPOSERS, 3), last);
	ck_assert_uint_eq(ballot_increment_skip(103, last, 3), 103);
}
END_TEST

/* seq = epoch * 2^32 + round, ballot = seq * n + p (thesis 3.5.2 with incarnations). */
START_TEST(test_epoch_ballots)
{
	const uint64_t n = PAXOS_MAX_PROPOSERS, round = 1ull << 32;
	/* Every incarnation starts at round 1 of its epoch, above every round before it. */
	ck_assert_uint_eq(ballot_first(3, 1), (round + 1) * n + 3);
	ck_assert_uint_eq(ballot_first(3, 7), (7 * round + 1) * n + 3);
	ck_assert_uint_gt(ballot_first(0, 1), ballot_first(99, 0) + 1000000 * n);
	uint32_t last_epoch = PAXOS_PROPOSER_EPOCH_LIMIT - 1;
	ck_assert_uint_eq(ballot_first(99, last_epoch),
			  ((uint64_t)last_epoch * round + 1) * n + 99);
	ck_assert_uint_eq(ballot_epoch(ballot_first(99, last_epoch)), last_epoch);
	/* The owner is still ballot mod n, and b++ is b + n. */
	paxos_ballot b = ballot_first(42, 5);
	ck_assert_uint_eq(b % n, 42);
	ck_assert_uint_eq(ballot_epoch(b), 5);
	ck_assert_uint_eq(ballot_increment(b), b + n);
	ck_assert_uint_eq(ballot_epoch(ballot_increment(b)), 5);
	/* The last round of an epoch steps into the next epoch's range. */
	paxos_ballot end = (5 * round + round - 1) * n + 42;
	ck_assert_uint_eq(ballot_epoch(end), 5);
	ck_assert_uint_eq(ballot_epoch(ballot_increment(end)), 6);
	/* INCREMENTSKIP on seq, across epochs: proposer 3 in epoch 0 beating proposer 7's ballot
	 * of epoch 2, round 9 lands in epoch 2, round 10 (the proposer core must then take epoch
	 * 2, which the node makes durable before the ballot leaves). */
	paxos_ballot beat = (2 * round + 9) * n + 7;
	paxos_ballot skip = ballot_increment_skip(ballot_first(3, 0), beat, 3);
	ck_assert_uint_eq(skip, (2 * round + 10) * n + 3);
	ck_assert_uint_eq(ballot_epoch(skip), 2);
	/* And a later incarnation beating its own lower ballots goes on from its own. */
	ck_assert_uint_eq(ballot_increment_skip(ballot_first(3, 4), beat, 3),
			  ballot_first(3, 4) + n);
}
END_TEST

START_TEST(test_first_ballot_of_epoch)
{
	ctx.epoch = 9;
	build(INSTANCE_EMPTY, PLAIN);
	fire(EV_S, NULL);
	ck_assert_uint_eq(inst.ballot, ballot_first(PROPOSER, 9));
	ck_assert_uint_eq(rec->msg[0].u.prepare.ballot, ballot_first(PROPOSER, 9));
	ck_assert_uint_eq(inst.ballot % PAXOS_MAX_PROPOSERS, PROPOSER);
}
END_TEST

/* leadership.h (paxos_node_on_new_leader): a new leadership is another proposer, or the same
 * one in a higher epoch (restarted); not its later rounds, not a switch back to a lower epoch
 * range (a leader that skipped past an older one's ballots uses both), not ballot 0. */
START_TEST(test_leadership_changes)
{
	struct leadership l = {0};
	paxos_ballot b = ballot_first(3, 2);
	ck_assert(!leadership_changed(&l, 0));
	ck_assert(!leadership_changed(&l, b)); /* the first one known */
	ck_assert(!leadership_changed(&l, ballot_increment(ballot_increment(b))));
	ck_assert(!leadership_changed(&l, 0));
	/* Proposer 4 (epoch 1) takes over: past 3's ballots first, in 3's epoch range, then
	 * instances 3 never prepared in its own range, then in 3's range again (taken). */
	ck_assert(leadership_changed(&l, ballot_increment_skip(ballot_first(4, 1), b, 4)));
	ck_assert_uint_eq(l.proposer, 4);
	ck_assert_uint_eq(l.epoch, 2);
	ck_assert(!leadership_changed(&l, ballot_first(4, 1)));
	ck_assert(!leadership_changed(&l, ballot_first(4, 2)));
	ck_assert(leadership_changed(&l, ballot_first(4, 3))); /* restarted */
	ck_assert(leadership_changed(&l, ballot_first(3, 2))); /* back to proposer 3 */
	ck_assert(leadership_changed(&l, ballot_first(0, 0)));
	ck_assert_uint_eq(l.proposer, 0);
}
END_TEST

static paxos_ballot refused;

static bool refuse_ballot(void *arg, paxos_ballot b)
{
	(void)arg;
	refused = b;
	return false;
}

/* A ballot the proposer may not use (an epoch it cannot take) is not used: no
 * prepare, the ballot stays, and a timeout only re-arms the deadline. */
START_TEST(test_refused_ballot_not_used)
{
	ctx.may_use_ballot = refuse_ballot;
	build(INSTANCE_P1_PENDING, PLAIN);
	fire(EV_REJECT, NULL);
	ck_assert_uint_eq(refused, 602);
	ck_assert_int_eq(inst.state, INSTANCE_P1_PENDING);
	ck_assert_uint_eq(inst.ballot, B_FIRST);
	ck_assert_uint_eq(rec->count, 0);
	fire(EV_TO1, NULL);
	ck_assert_uint_eq(refused, B_FIRST + PAXOS_MAX_PROPOSERS);
	ck_assert_int_eq(inst.state, INSTANCE_P1_PENDING);
	ck_assert_uint_eq(inst.ballot, B_FIRST);
	ck_assert_uint_eq(inst.deadline, 1000 + 2 * 1000); /* one timeout: twice the wait */
	ck_assert_uint_eq(rec->count, 0);

	build(INSTANCE_P2_PENDING, PLAIN);
	fire(EV_TO2, NULL);
	ck_assert_int_eq(inst.state, INSTANCE_P2_PENDING);
	ck_assert_uint_eq(inst.ballot, B_FIRST);
	ck_assert(inst.has_v2 && inst.cv);
	ck_assert_uint_eq(inst.deadline, 1000 + 2 * 2000);
	ck_assert_uint_eq(rec->count, 0);

	/* The end of the ballot space: no new ballot, and the same one is not prepared again
	 * (after an accept it could be paired with a second value). */
	ctx.may_use_ballot = NULL;
	build(INSTANCE_P2_PENDING, PLAIN);
	inst.ballot = (BALLOT_SEQ_LIMIT - 1) * PAXOS_MAX_PROPOSERS + PROPOSER;
	paxos_ballot at_end = inst.ballot;
	fire(EV_TO2, NULL);
	ck_assert_int_eq(inst.state, INSTANCE_P2_PENDING);
	ck_assert_uint_eq(inst.ballot, at_end);
	ck_assert_uint_eq(rec->count, 0);
}
END_TEST

/* Each timeout of an instance doubles its next wait, up to the ceiling: a retry faster than
 * the round trip would otherwise outdate its own promises forever. */
START_TEST(test_timeout_backoff)
{
	ctx.timeout_ceiling = 5000;
	build(INSTANCE_P1_PENDING, PLAIN);
	const paxos_time want[] = {2000, 4000, 5000, 5000};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		fire(EV_TO1, NULL);
		ck_assert_uint_eq(inst.deadline, 1000 + want[i]);
	}
	ck_assert_uint_eq(inst.timeouts, 4);
	/* A reject is no timeout: it jumps the ballot without waiting longer. */
	paxos_time before = instance_timeout(&ctx, &inst, 1);
	struct paxos_reject r = {.iid = IID, .ballot = inst.ballot + 500, .acceptor_id = 1};
	struct instance_arg arg = {.reject = &r};
	instance_step(&ctx, &inst, EV_REJECT, &arg, 1000, &rec->emitter);
	ck_assert_uint_eq(instance_timeout(&ctx, &inst, 1), before);
}
END_TEST

/* Adaptive timeouts: a first-try quorum is a round-trip sample; the timeout becomes
 * srtt + 4 * rttvar, within the floor. Retried instances give no sample (Karn). */
START_TEST(test_adaptive_timeout)
{
	struct rtt_estimate rtt[2] = {{0}};
	static const struct instance fresh;
	ctx.rtt = rtt;
	ctx.timeout_floor = 100;
	ctx.timeout_ceiling = 100000;
	ck_assert_uint_eq(instance_timeout(&ctx, &fresh, 1), ctx.phase1_timeout);
	build(INSTANCE_P1_PENDING, PLAIN);
	inst.sent_at = 500;
	struct paxos_promise p = {.iid = IID, .ballot = B_FIRST, .acceptor_id = 1};
	struct instance_arg arg = {.promise = &p};
	instance_step(&ctx, &inst, EV_P, &arg, 800, &rec->emitter); /* 300 us round trip */
	ck_assert(rtt[0].valid);
	ck_assert_uint_eq(instance_timeout(&ctx, &fresh, 1), 300 + 4 * 150);
	/* A retried instance's quorum is not sampled. */
	build(INSTANCE_P1_PENDING, PLAIN);
	inst.sent_at = 500;
	inst.timeouts = 1;
	instance_step(&ctx, &inst, EV_P, &arg, 90000, &rec->emitter);
	ck_assert_uint_eq(instance_timeout(&ctx, &fresh, 1), 300 + 4 * 150);
	/* Fast round trips: never below the floor. */
	for (int i = 0; i < 50; i++) {
		build(INSTANCE_P1_PENDING, PLAIN);
		inst.sent_at = 500;
		instance_step(&ctx, &inst, EV_P, &arg, 501, &rec->emitter);
	}
	ck_assert_uint_eq(instance_timeout(&ctx, &fresh, 1), 100);
	/* Phase 2 is sampled when the instance closes. */
	build(INSTANCE_P2_PENDING, PLAIN);
	inst.sent_at = 1000;
	struct paxos_value v = frame("mine");
	struct instance_arg closed = {.value = &v};
	instance_step(&ctx, &inst, EV_C, &closed, 1400, &rec->emitter);
	ck_assert_uint_eq(instance_timeout(&ctx, &fresh, 2), 400 + 4 * 200);
}
END_TEST

static void promise(uint32_t acceptor, paxos_ballot b, paxos_ballot vb, const char *v)
{
	struct paxos_promise p = {
	    .iid = IID, .ballot = b, .value_ballot = vb, .acceptor_id = acceptor};
	if (v)
		p.value = frame(v);
	struct instance_arg arg = {.promise = &p};
	instance_step(&ctx, &inst, EV_P, &arg, 0, &rec->emitter);
}

START_TEST(test_promises)
{
	push("next1");
	build(INSTANCE_P1_PENDING, PLAIN);
	inst.pset = 0;
	promise(0, B_FIRST, 0, NULL);
	promise(0, B_FIRST, 0, NULL); /* duplicate: not a quorum */
	ck_assert_int_eq(inst.state, INSTANCE_P1_PENDING);
	promise(1, B_FIRST + 100, 0, NULL); /* other ballot: dropped */
	promise(3, B_FIRST, 0, NULL);       /* no acceptor 3 of 3 */
	promise(40, B_FIRST, 0, NULL);
	ck_assert_int_eq(inst.state, INSTANCE_P1_PENDING);
	ck_assert_uint_eq(inst.pset, 1);
	promise(2, B_FIRST, 0, NULL);
	ck_assert_int_eq(inst.state, INSTANCE_P2_PENDING);
	ck_assert(frame_is(&rec->msg[0].u.accept.value, "next1"));
	promise(1, B_FIRST, 0, NULL); /* late: ignored */
	ck_assert_uint_eq(rec->count, 1);
}
END_TEST

START_TEST(test_promise_highest_value_ballot_wins)
{
	ctx.acceptors = 5; /* quorum 3 */
	build(INSTANCE_P1_PENDING, PLAIN);
	inst.pset = 0;
	inst.ballot = 402;
	promise(0, 402, 201, "middle");
	promise(1, 402, 301, "newest");
	struct paxos_value v1 = {inst.v1, inst.v1_len};
	ck_assert(inst.vb == 301 && frame_is(&v1, "newest"));
	promise(2, 402, 101, "oldest");
	ck_assert_int_eq(inst.state, INSTANCE_P2_PENDING);
	ck_assert(frame_is(&rec->msg[0].u.accept.value, "newest"));
	ck_assert(!inst.cv);
}
END_TEST

START_TEST(test_promise_value_too_big_dropped)
{
	char big[MAXV + 2];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	build(INSTANCE_P1_PENDING, PLAIN);
	promise(1, B_FIRST, 101, big);
	ck_assert_int_eq(inst.state, INSTANCE_P1_PENDING);
	ck_assert_uint_eq(inst.pset, 1);
}
END_TEST

START_TEST(test_stale_reject_ignored)
{
	build(INSTANCE_P2_PENDING, PLAIN);
	fire(EV_REJECT, NULL); /* 507 -> 602 */
	ck_assert_uint_eq(inst.ballot, 602);
	fire(EV_REJECT, NULL); /* another acceptor's reject for the old request */
	fire(EV_REJECT, NULL);
	ck_assert_uint_eq(inst.ballot, 602);
	ck_assert_uint_eq(rec->count, 1);
	ck_assert_uint_eq(counters.rejects_received, 1);
	ck_assert(inst.has_v2 && inst.cv); /* v2/cv kept for the retry */
	struct paxos_reject own = {.iid = IID, .ballot = 602};
	struct instance_arg own_arg = {.reject = &own};
	instance_step(&ctx, &inst, EV_REJECT, &own_arg, 0, &rec->emitter);
	ck_assert_uint_eq(inst.ballot, 602); /* the acceptor has promised us already */
	struct paxos_reject other = {.iid = IID + 1, .ballot = 900};
	struct instance_arg arg = {.reject = &other};
	instance_step(&ctx, &inst, EV_REJECT, &arg, 0, &rec->emitter);
	ck_assert_uint_eq(inst.ballot, 602); /* another instance's reject */
}
END_TEST

START_TEST(test_timeouts_count)
{
	build(INSTANCE_P1_PENDING, FOUND_V1);
	fire(EV_TO1, NULL);
	ck_assert_uint_eq(counters.phase1_timeouts, 1);
	ck_assert_uint_eq(inst.vb, 0); /* v1/vb cleared */
	build(INSTANCE_P2_PENDING, PLAIN);
	fire(EV_TO2, NULL);
	ck_assert_uint_eq(counters.phase2_timeouts, 1);
	ck_assert(inst.has_v2 && inst.cv);
	struct paxos_value v2 = v2_of(&inst);
	ck_assert(frame_is(&v2, "mine"));
}
END_TEST

static uint32_t refuse(void *arg, const struct instance *i)
{
	(void)arg;
	(void)i;
	return 0;
}

START_TEST(test_nv_when_assignment_not_allowed)
{
	push("next1");
	ctx.may_assign = refuse;
	build(INSTANCE_P1_PENDING, PLAIN);
	fire(EV_R0, NULL);
	ck_assert_int_eq(inst.state, INSTANCE_P1_READY);
	ck_assert(!inst.has_v2);
	ck_assert_uint_eq(pending_count(&q), 1);
	ck_assert_uint_eq(rec->count, 0);
	ctx.may_assign = NULL;
	fire(EV_A, NULL);
	ck_assert_int_eq(inst.state, INSTANCE_P2_PENDING);
}
END_TEST

START_TEST(test_nv_when_pending_empty)
{
	build(INSTANCE_P1_PENDING, PLAIN);
	fire(EV_P, NULL);
	ck_assert_int_eq(inst.state, INSTANCE_P1_READY);
	ck_assert_uint_eq(rec->count, 0);
	push("late");
	fire(EV_A, NULL);
	ck_assert(frame_is(&rec->msg[0].u.accept.value, "late"));
	ck_assert_uint_eq(counters.values_proposed, 1);
}
END_TEST

START_TEST(test_release)
{
	push("next1");
	build(INSTANCE_P2_PENDING, PLAIN);
	instance_release(&ctx, &inst);
	ck_assert_int_eq(inst.state, INSTANCE_EMPTY);
	struct paxos_value front = pending_at(&q, 0);
	ck_assert(value_is(&front, "mine"));
	ck_assert_uint_eq(inst.ballot, B_FIRST); /* kept: the next S must not reuse it */
	fire(EV_S, NULL);
	ck_assert_uint_eq(inst.ballot, B_FIRST + PAXOS_MAX_PROPOSERS);
	ck_assert_uint_eq(rec->msg[0].u.prepare.ballot, B_FIRST + PAXOS_MAX_PROPOSERS);
	build(INSTANCE_CLOSED, PLAIN);
	instance_release(&ctx, &inst);
	ck_assert_int_eq(inst.state, INSTANCE_CLOSED); /* D settles closed instances */
}
END_TEST

static uint32_t allow_two(void *arg, const struct instance *i)
{
	(void)arg;
	(void)i;
	return 2;
}

static void expect_pending(const char *const *want, uint32_t n)
{
	ck_assert_uint_eq(pending_count(&q), n);
	for (uint32_t k = 0; k < n; k++) {
		struct paxos_value v = pending_at(&q, k);
		ck_assert(value_is(&v, want[k]));
	}
}

/* A batch takes at most batch_limit values, what the proposer allows, and what fits. */
START_TEST(test_batch_bounds)
{
	const char *const abcd[] = {"a", "b", "c", "d"};
	for (int k = 0; k < 4; k++)
		push(abcd[k]);
	build(INSTANCE_P1_READY, PLAIN);
	ctx.batch_limit = 3;
	fire(EV_A, NULL);
	ck_assert(frame_is(&rec->msg[0].u.accept.value, "a,b,c"));
	ck_assert_uint_eq(inst.values, 3);
	expect_pending(abcd + 3, 1);

	recorder_clear(rec);
	push("e");
	push("f");
	build(INSTANCE_P1_READY, PLAIN);
	ctx.batch_limit = 3;
	ctx.may_assign = allow_two;
	fire(EV_A, NULL);
	ck_assert(frame_is(&rec->msg[0].u.accept.value, "d,e"));
	ctx.may_assign = NULL;

	/* 28-byte values take 32 bytes framed: two fill MAXV = 64, the third waits. */
	recorder_clear(rec);
	while (pending_count(&q))
		pending_remove(&q, pending_at(&q, 0).data, pending_at(&q, 0).len);
	const char *big[] = {"1111111111111111111111111111", "2222222222222222222222222222",
			     "3333333333333333333333333333"};
	for (int k = 0; k < 3; k++)
		push(big[k]);
	build(INSTANCE_P1_READY, PLAIN);
	ctx.batch_limit = 4;
	fire(EV_A, NULL);
	ck_assert_uint_eq(rec->msg[0].u.accept.value.len, MAXV);
	ck_assert_uint_eq(inst.values, 2);
	expect_pending(big + 2, 1);
}
END_TEST

/* Leadership lost: the batch goes back whole, in order, ahead of what waited. */
START_TEST(test_batch_release)
{
	push("next1");
	build(INSTANCE_P2_PENDING, PLAIN);
	ctx.batch_limit = 4;
	set_v2("x,y,z", true);
	instance_release(&ctx, &inst);
	const char *const want[] = {"x", "y", "z", "next1"};
	expect_pending(want, 4);
	ck_assert_uint_eq(counters.values_requeued, 3);
	ck_assert(!inst.has_v2 && !inst.cv && inst.values == 0);
}
END_TEST

START_TEST(test_names)
{
	for (int s = 0; s < INSTANCE_STATE_COUNT; s++)
		ck_assert_str_ne(instance_state_name((enum instance_state)s), "unknown");
	for (int e = 0; e < INSTANCE_EVENT_COUNT; e++)
		ck_assert_str_ne(instance_event_name((enum instance_event)e), "unknown");
	ck_assert_str_eq(instance_state_name(INSTANCE_P1_READY), "p1_ready");
	ck_assert_str_eq(instance_event_name(EV_TO2), "TO2");
	ck_assert_str_eq(instance_state_name((enum instance_state)99), "unknown");
}
END_TEST

START_TEST(test_pending_deque)
{
	struct pending d;
	uint8_t out[MAXV];
	uint32_t len;
	ck_assert_int_eq(pending_init(&d, 2, 3, 4), PAXOS_OK);
	ck_assert_int_eq(pending_push_back(&d, (const uint8_t *)"abcde", 5), PAXOS_E_TOO_BIG);
	ck_assert_int_eq(pending_push_back(&d, (const uint8_t *)"a", 1), PAXOS_OK);
	ck_assert_int_eq(pending_push_back(&d, (const uint8_t *)"b", 1), PAXOS_OK);
	ck_assert_int_eq(pending_push_back(&d, (const uint8_t *)"c", 1), PAXOS_E_FULL);
	ck_assert_int_eq(pending_push_front(&d, (const uint8_t *)"z", 1), PAXOS_OK);
	ck_assert_int_eq(pending_push_front(&d, (const uint8_t *)"y", 1), PAXOS_E_FULL);
	const char *expect[] = {"z", "a", "b"};
	for (int i = 0; i < 3; i++) {
		ck_assert(pending_pop_front(&d, out, &len));
		ck_assert(len == 1 && out[0] == expect[i][0]);
	}
	ck_assert(!pending_pop_front(&d, out, &len));
	ck_assert_int_eq(pending_push_back(&d, (const uint8_t *)"", 0), PAXOS_OK);
	ck_assert(pending_pop_front(&d, out, &len) && len == 0);
	pending_destroy(&d);
	ck_assert_int_eq(pending_init(&d, 3, 2, 4), PAXOS_E_INVALID);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("proposer_fsm_cases");
	TCase *t = tcase_create("cases");
	tcase_add_checked_fixture(t, fsm_setup, fsm_teardown);
	tcase_add_test(t, test_r1_v2_null);
	tcase_add_test(t, test_r1_v1_equals_v2);
	tcase_add_test(t, test_r1_other_value_client);
	tcase_add_test(t, test_r1_other_value_not_client);
	tcase_add_test(t, test_d_client_value_delivered);
	tcase_add_test(t, test_d_other_value_delivered);
	tcase_add_test(t, test_d_not_client_value);
	tcase_add_test(t, test_d_unknown_value_requeues_client_value);
	tcase_add_test(t, test_increment_skip);
	tcase_add_test(t, test_epoch_ballots);
	tcase_add_test(t, test_first_ballot_of_epoch);
	tcase_add_test(t, test_leadership_changes);
	tcase_add_test(t, test_refused_ballot_not_used);
	tcase_add_test(t, test_promises);
	tcase_add_test(t, test_promise_highest_value_ballot_wins);
	tcase_add_test(t, test_promise_value_too_big_dropped);
	tcase_add_test(t, test_stale_reject_ignored);
	tcase_add_test(t, test_timeouts_count);
	tcase_add_test(t, test_nv_when_assignment_not_allowed);
	tcase_add_test(t, test_nv_when_pending_empty);
	tcase_add_test(t, test_release);
	tcase_add_test(t, test_batch_bounds);
	tcase_add_test(t, test_batch_release);
	tcase_add_test(t, test_names);
	tcase_add_test(t, test_pending_deque);
	tcase_add_test(t, test_timeout_backoff);
	tcase_add_test(t, test_adaptive_timeout);
	suite_add_tcase(s, t);
	return s;
}
