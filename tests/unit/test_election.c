/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Leader election (thesis 3.6.3). The election core alone: the lowest live id leads, silence
 * past the timeout kills, a proposer always counts itself alive, the oracle overrides and gives
 * back, heartbeats go out at the interval; and check-quorum. Takeover between two proposer
 * cores is in test_election_takeover.c.
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
#define INTERVAL (20 * MS)
#define TIMEOUT (100 * MS)

/* ---- the election core ---- */

struct change {
	uint32_t leader, previous;
};

static struct change changes[64];
static size_t nchanges;

static void on_change(void *arg, uint32_t leader, uint32_t previous)
{
	(void)arg;
	ck_assert_uint_lt(nchanges, 64);
	changes[nchanges++] = (struct change){leader, previous};
}

static struct paxos_election *election(uint32_t id, uint32_t proposers, paxos_time now)
{
	struct paxos_election_options o = {
	    .id = id,
	    .proposers = proposers,
	    .heartbeat_interval = INTERVAL,
	    .heartbeat_timeout = TIMEOUT,
	    .changed = on_change,
	};
	nchanges = 0;
	struct paxos_election *e = paxos_election_new(&o, now);
	ck_assert_ptr_nonnull(e);
	return e;
}

static void heartbeat(struct paxos_election *e, uint32_t from, paxos_time now)
{
	struct paxos_message m = {.type = PAXOS_MSG_HEARTBEAT};
	m.u.heartbeat.proposer_id = from;
	m.u.heartbeat.next_iid = 1000 + from;
	paxos_election_handle(e, &m, now);
}

static void oracle(struct paxos_election *e, uint32_t leader, paxos_time now)
{
	struct paxos_message m = {.type = PAXOS_MSG_LEADER};
	m.u.leader.leader_id = leader;
	paxos_election_handle(e, &m, now);
}

static void tick(struct paxos_election *e, paxos_time now)
{
	paxos_election_tick(e, now, 7, NULL);
}

START_TEST(test_start_presumes_everyone_alive)
{
	/* Proposer 2 does not lead at start although it has heard nobody yet. */
	struct paxos_election *e = election(2, 3, 5 * MS);
	ck_assert_uint_eq(paxos_election_leader(e), 0);
	ck_assert(!paxos_election_is_leader(e));
	ck_assert(!paxos_election_forced(e));
	for (uint32_t id = 0; id < 3; id++)
		ck_assert(paxos_election_alive(e, id, 5 * MS + TIMEOUT));
	ck_assert_uint_eq(nchanges, 0);
	paxos_election_free(e);

	e = election(0, 3, 0);
	ck_assert(paxos_election_is_leader(e));
	paxos_election_free(e);
}
END_TEST

/* Partitions spread over the live proposers: partition P goes to the (P mod live)-th live one;
 * a dead proposer's partitions move to the others, and come back with it. */
START_TEST(test_partitions_spread_over_live_proposers)
{
	struct paxos_election *e[4];
	for (uint32_t p = 0; p < 4; p++) {
		struct paxos_election_options o = {.id = 0,
						   .proposers = 3,
						   .heartbeat_interval = INTERVAL,
						   .heartbeat_timeout = TIMEOUT,
						   .partition = p};
		e[p] = paxos_election_new(&o, 0);
		ck_assert_ptr_nonnull(e[p]);
	}
	/* All three alive: 0, 1, 2, then 0 again. */
	for (uint32_t p = 0; p < 4; p++)
		ck_assert_uint_eq(paxos_election_leader(e[p]), p % 3);
	/* Proposer 1 goes silent: the live are 0 and 2. */
	paxos_time t = 0;
	for (; t <= TIMEOUT + INTERVAL; t += INTERVAL)
		for (uint32_t p = 0; p < 4; p++) {
			heartbeat(e[p], 2, t);
			tick(e[p], t);
		}
	const uint32_t without_1[4] = {0, 2, 0, 2};
	for (uint32_t p = 0; p < 4; p++)
		ck_assert_uint_eq(paxos_election_leader(e[p]), without_1[p]);
	/* It is back: the partitions return to it by the same rule. */
	for (uint32_t p = 0; p < 4; p++) {
		heartbeat(e[p], 1, t);
		heartbeat(e[p], 2, t);
		tick(e[p], t);
		ck_assert_uint_eq(paxos_election_leader(e[p]), p % 3);
		paxos_election_free(e[p]);
	}
}
END_TEST

/* With a proposer set (membership-alpha): the lowest live member leads, a removed proposer
 * leads nothing even alone, partitions spread over the live members only. */
START_TEST(test_members_only_lead)
{
	struct paxos_election *e = election(0, 3, 0);
	ck_assert(paxos_election_is_leader(e));
	ck_assert_uint_eq(paxos_election_members(e), UINT32_MAX);
	paxos_election_set_members(e, 0x6, 0); /* 0 removed */
	ck_assert_uint_eq(paxos_election_leader(e), 1);
	ck_assert(!paxos_election_is_leader(e));
	ck_assert_uint_eq(nchanges, 1);
	ck_assert_uint_eq(changes[0].leader, 1);
	ck_assert_uint_eq(changes[0].previous, 0);
	/* 1 and 2 go silent: 0 still does not lead, it names the lowest member. */
	tick(e, TIMEOUT + 1);
	ck_assert_uint_eq(paxos_election_leader(e), 1);
	ck_assert(!paxos_election_is_leader(e));
	heartbeat(e, 2, TIMEOUT + 2);
	ck_assert_uint_eq(paxos_election_leader(e), 2); /* the lowest live member */
	/* Added again: it leads at once. */
	paxos_election_set_members(e, 0x7, TIMEOUT + 3);
	ck_assert(paxos_election_is_leader(e));
	paxos_election_free(e);

	/* Created with a set: proposer 2 is not in it, 1 leads from the start. */
	struct paxos_election_options o = {.id = 2,
					   .proposers = 3,
					   .heartbeat_interval = INTERVAL,
					   .heartbeat_timeout = TIMEOUT,
					   .members = 0x6,
					   .partition = 1};
	e = paxos_election_new(&o, 0);
	ck_assert_uint_eq(paxos_election_leader(e), 2); /* partition 1: the second live member */
	paxos_election_set_members(e, 0x3, 0);
	ck_assert_uint_eq(paxos_election_leader(e), 1); /* partition 1 of {0, 1} */
	ck_assert(!paxos_election_is_leader(e));
	paxos_election_free(e);
}
END_TEST

START_TEST(test_lowest_live_id_wins)
{
	struct paxos_election *e = election(3, 4, 0);
	/* 1 and 2 keep beating; 0 is silent. */
	paxos_time t = 0;
	for (; t <= TIMEOUT; t += INTERVAL) {
		heartbeat(e, 1, t);
		heartbeat(e, 2, t);
		tick(e, t);
	}
	ck_assert_uint_eq(paxos_election_leader(e), 0); /* heard within the timeout (at 0) */
	tick(e, TIMEOUT + 1);
	ck_assert_uint_eq(paxos_election_leader(e), 1); /* lowest live, not the next one up */
	ck_assert_uint_eq(nchanges, 1);
	ck_assert_uint_eq(changes[0].leader, 1);
	ck_assert_uint_eq(changes[0].previous, 0);
	ck_assert_uint_eq(paxos_election_next_iid_of(e, 2), 1002);
	ck_assert_uint_eq(paxos_election_next_iid_of(e, 0), 0);

	/* 0 comes back: it leads again at once, without waiting for a tick. */
	heartbeat(e, 0, TIMEOUT + 2);
	ck_assert_uint_eq(paxos_election_leader(e), 0);
	ck_assert_uint_eq(nchanges, 2);
	ck_assert_uint_eq(changes[1].leader, 0);
	ck_assert_uint_eq(changes[1].previous, 1);
	paxos_election_free(e);
}
END_TEST

START_TEST(test_timeout_is_exact)
{
	struct paxos_election *e = election(1, 2, 0);
	heartbeat(e, 0, 50 * MS);
	tick(e, 50 * MS + TIMEOUT);
	ck_assert(paxos_election_alive(e, 0, 50 * MS + TIMEOUT));
	ck_assert_uint_eq(paxos_election_leader(e), 0);
	ck_assert(!paxos_election_alive(e, 0, 50 * MS + TIMEOUT + 1));
	tick(e, 50 * MS + TIMEOUT + 1);
	ck_assert(paxos_election_is_leader(e));
	/* A heartbeat delivered late with an older time does not move the clock back. */
	heartbeat(e, 0, 10 * MS);
	tick(e, 50 * MS + TIMEOUT + 2);
	ck_assert(paxos_election_is_leader(e));
	paxos_election_free(e);
}
END_TEST

START_TEST(test_self_always_alive)
{
	struct paxos_election *e = election(2, 3, 0);
	ck_assert(paxos_election_alive(e, 2, 1000000 * MS));
	tick(e, TIMEOUT + 1); /* nobody else was ever heard */
	ck_assert(paxos_election_is_leader(e));
	ck_assert_uint_eq(nchanges, 1);
	ck_assert_uint_eq(changes[0].leader, 2);
	ck_assert_uint_eq(changes[0].previous, 0);
	/* Its own heartbeat looped back, or one from a proposer outside the configuration,
	 * changes nothing. */
	heartbeat(e, 2, TIMEOUT + 2);
	heartbeat(e, 3, TIMEOUT + 2);
	heartbeat(e, UINT32_MAX, TIMEOUT + 2);
	ck_assert(!paxos_election_alive(e, 3, TIMEOUT + 2));
	ck_assert(paxos_election_is_leader(e));
	ck_assert_uint_eq(nchanges, 1);
	paxos_election_free(e);
}
END_TEST

START_TEST(test_oracle_overrides_and_back_to_auto)
{
	struct paxos_election *e = election(1, 3, 0);
	oracle(e, 2, MS);
	ck_assert(paxos_election_forced(e));
	ck_assert_uint_eq(paxos_election_leader(e), 2);
	ck_assert_uint_eq(changes[0].leader, 2);
	ck_assert_uint_eq(changes[0].previous, 0);
	/* Forced: 0's heartbeats change nothing while 2 is heard. */
	for (paxos_time t = MS; t < 3 * TIMEOUT; t += INTERVAL) {
		heartbeat(e, 0, t);
		heartbeat(e, 2, t);
		tick(e, t);
	}
	ck_assert_uint_eq(paxos_election_leader(e), 2);
	oracle(e, 2, 3 * TIMEOUT); /* a repeated copy of the order */
	ck_assert_uint_eq(nchanges, 1);
	oracle(e, 1, 3 * TIMEOUT);
	ck_assert(paxos_election_is_leader(e));
	oracle(e, 3, 3 * TIMEOUT); /* no such proposer: ignored */
	ck_assert(paxos_election_is_leader(e));
	ck_assert_uint_eq(nchanges, 2);
	/* Forced to 1, and then the set in force removes 1: the order is not followed, the
	 * members elect (0 was heard last, so it leads), and 1's return to the set brings the
	 * order back. */
	heartbeat(e, 0, 3 * TIMEOUT);
	paxos_election_set_members(e, 0x5, 3 * TIMEOUT);
	ck_assert(paxos_election_forced(e));
	ck_assert(!paxos_election_is_leader(e));
	ck_assert_uint_eq(paxos_election_leader(e), 0);
	paxos_election_set_members(e, 0x7, 3 * TIMEOUT);
	ck_assert(paxos_election_is_leader(e));
	/* An order naming a removed proposer leaves the election to the members (0 is the
	 * lowest live one); added again, 2 is followed. */
	paxos_election_set_members(e, 0x3, 3 * TIMEOUT);
	oracle(e, 2, 3 * TIMEOUT);
	ck_assert_uint_eq(paxos_election_leader(e), 0);
	ck_assert_uint_eq(nchanges, 5);
	paxos_election_set_members(e, 0x7, 3 * TIMEOUT);
	ck_assert_uint_eq(paxos_election_leader(e), 2);

	/* Back to election: 0 was heard recently, so it leads. */
	oracle(e, PAXOS_LEADER_AUTO, 3 * TIMEOUT);
	ck_assert(!paxos_election_forced(e));
	ck_assert_uint_eq(paxos_election_leader(e), 0);
	ck_assert_uint_eq(nchanges, 7);
	ck_assert_uint_eq(changes[6].leader, 0);
	ck_assert_uint_eq(changes[6].previous, 2);
	paxos_election_free(e);
}
END_TEST

/* An oracle's order holds only while the proposer it names is heard: one naming a proposer
 * not heard is ignored, and one followed ends when its leader falls silent (crashed: the
 * election resumes rather than following it for good, whoever sent or replayed the order). */
START_TEST(test_order_ends_with_its_leader)
{
	struct paxos_election *e = election(0, 3, 0);
	paxos_time t = MS;
	oracle(e, 1, t);
	ck_assert(paxos_election_forced(e));
	ck_assert_uint_eq(paxos_election_leader(e), 1);
	for (; t < 3 * TIMEOUT; t += INTERVAL) {
		heartbeat(e, 1, t);
		heartbeat(e, 2, t);
		tick(e, t);
	}
	ck_assert_uint_eq(paxos_election_leader(e), 1); /* heard: the order holds */
	paxos_time last = t;
	for (; t <= last + TIMEOUT + INTERVAL; t += INTERVAL) {
		heartbeat(e, 2, t);
		tick(e, t);
	}
	ck_assert(!paxos_election_forced(e));
	ck_assert(paxos_election_is_leader(e)); /* 1 silent: 0 is the lowest live one */
	/* Replayed while 1 is still silent: nobody to follow. */
	oracle(e, 1, t);
	ck_assert(!paxos_election_forced(e));
	ck_assert(paxos_election_is_leader(e));
	/* 1 back: a new order is followed again. */
	heartbeat(e, 1, t);
	oracle(e, 1, t);
	ck_assert(paxos_election_forced(e));
	ck_assert_uint_eq(paxos_election_leader(e), 1);
	paxos_election_free(e);
}
END_TEST

START_TEST(test_manual_mode_starts_forced)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	cfg.proposers = 3;
	cfg.leader = 2;
	cfg.election = PAXOS_ELECTION_MANUAL;
	cfg.heartbeat_interval_ms = 20;
	cfg.heartbeat_timeout_ms = 100;
	cfg.check_quorum = false; /* no acceptors here */
	struct paxos_election_options o;
	paxos_election_options_from_config(&o, &cfg, 1);
	ck_assert_uint_eq(o.heartbeat_interval, INTERVAL);
	ck_assert_uint_eq(o.heartbeat_timeout, TIMEOUT);
	ck_assert_uint_eq(o.quorum_timeout, 0);
	ck_assert(o.manual);
	o.changed = on_change;
	nchanges = 0;
	struct paxos_election *e = paxos_election_new(&o, 0);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(paxos_election_leader(e), 2);
	ck_assert(paxos_election_forced(e));
	tick(e, 10 * TIMEOUT); /* 2 is silent but configured: it stays */
	ck_assert_uint_eq(paxos_election_leader(e), 2);
	oracle(e, PAXOS_LEADER_AUTO, 10 * TIMEOUT);
	ck_assert(paxos_election_is_leader(e)); /* 0 and 2 are silent: 1 is the lowest live */
	ck_assert_uint_eq(nchanges, 1);
	paxos_election_free(e);

	cfg.election = PAXOS_ELECTION_AUTO;
	paxos_election_options_from_config(&o, &cfg, 1);
	ck_assert(!o.manual);
}
END_TEST

START_TEST(test_invalid_options)
{
	struct paxos_election_options o = {
	    .id = 2, .proposers = 2, .heartbeat_interval = 1, .heartbeat_timeout = 2};
	ck_assert_ptr_null(paxos_election_new(&o, 0)); /* id not below proposers */
	o.id = 0;
	o.proposers = PAXOS_MAX_PROPOSERS + 1;
	ck_assert_ptr_null(paxos_election_new(&o, 0));
	o.proposers = 2;
	o.manual = true;
	o.manual_leader = 2;
	ck_assert_ptr_null(paxos_election_new(&o, 0));
	o.manual = false;
	o.heartbeat_timeout = 0;
	ck_assert_ptr_null(paxos_election_new(&o, 0));
	ck_assert_ptr_null(paxos_election_new(NULL, 0));
	paxos_election_free(NULL);
}
END_TEST

START_TEST(test_other_messages_ignored)
{
	struct paxos_election *e = election(1, 2, 0);
	struct paxos_message m = {.type = PAXOS_MSG_PROMISE};
	paxos_election_handle(e, &m, TIMEOUT * 5);
	paxos_election_handle(e, NULL, TIMEOUT * 5);
	ck_assert_uint_eq(nchanges, 0);
	ck_assert_uint_eq(paxos_election_leader(e), 0);
	paxos_election_free(e);
}
END_TEST

/* A promise for a ballot of proposer q shows q alive (it prepared just now): a leader cut off
 * and healed is heard again by its phase 1 traffic, before its next heartbeat. */
START_TEST(test_promise_shows_its_ballot_owner_alive)
{
	struct paxos_election *e = election(1, 3, 0);
	tick(e, TIMEOUT + 1); /* 0 and 2 silent: 1 leads */
	ck_assert_uint_eq(paxos_election_leader(e), 1);
	struct paxos_message m = {.type = PAXOS_MSG_PROMISE};
	const paxos_ballot n = PAXOS_MAX_PROPOSERS;
	m.u.promise = (struct paxos_promise){.iid = 9, .acceptor_id = 2};
	m.u.promise.ballot = 0; /* no proposer's ballot */
	paxos_election_handle(e, &m, TIMEOUT + 2);
	m.u.promise.ballot = 7 * n + 1; /* our own */
	paxos_election_handle(e, &m, TIMEOUT + 2);
	m.u.promise.ballot = 7 * n + 3; /* proposer 3 is not configured */
	paxos_election_handle(e, &m, TIMEOUT + 2);
	ck_assert_uint_eq(paxos_election_leader(e), 1);
	m.u.promise.ballot = 5 * n + 0; /* proposer 0's ballot: it is back */
	paxos_election_handle(e, &m, TIMEOUT + 3);
	ck_assert_uint_eq(paxos_election_leader(e), 0);
	ck_assert_uint_eq(nchanges, 2);
	ck_assert_uint_eq(changes[1].leader, 0);
	ck_assert_uint_eq(changes[1].previous, 1);
	/* Alive as a heartbeat would make it: silent for the timeout, it is dead again. */
	tick(e, 2 * TIMEOUT + 4);
	ck_assert_uint_eq(paxos_election_leader(e), 1);
	paxos_election_free(e);
}
END_TEST

START_TEST(test_heartbeats_at_the_interval)
{
	struct paxos_election *e = election(1, 2, 0);
	struct recorder *r = recorder_new();
	paxos_election_tick(e, 0, 42, &r->emitter); /* the first one at once */
	ck_assert_uint_eq(recorder_count(r, PAXOS_MSG_HEARTBEAT, PAXOS_GROUP_PROPOSERS), 1);
	/* The acceptors hear it too: the address a live proposer talks from is known there. */
	ck_assert_uint_eq(recorder_count(r, PAXOS_MSG_HEARTBEAT, PAXOS_GROUP_ACCEPTORS), 1);
	const struct paxos_message *hb = recorder_find(r, PAXOS_MSG_HEARTBEAT, 0);
	ck_assert_uint_eq(hb->u.heartbeat.proposer_id, 1);
	ck_assert_uint_eq(hb->u.heartbeat.next_iid, 42);

	/* Ticks every 3 ms for one second (the last at 1002 ms): one heartbeat per 20 ms, on
	 * the 20 ms grid, although no tick falls on it. */
	for (paxos_time t = 3 * MS; t <= 1002 * MS; t += 3 * MS)
		paxos_election_tick(e, t, 42, &r->emitter);
	ck_assert_uint_eq(recorder_count(r, PAXOS_MSG_HEARTBEAT, PAXOS_GROUP_PROPOSERS),
			  1000 / 20 + 1);
	ck_assert_uint_eq(recorder_count(r, PAXOS_MSG_HEARTBEAT, -1), r->count);
	ck_assert_uint_eq(r->count, 2 * (1000 / 20 + 1));

	/* After a stall the beats resume at the interval, without a burst. */
	recorder_clear(r);
	paxos_election_tick(e, 5000 * MS, 43, &r->emitter);
	paxos_election_tick(e, 5001 * MS, 43, &r->emitter);
	ck_assert_uint_eq(r->count, 2);
	paxos_election_tick(e, 5020 * MS, 43, &r->emitter);
	ck_assert_uint_eq(r->count, 4);
	recorder_free(r);
	paxos_election_free(e);
}
END_TEST

/* ---- check-quorum ---- */

#define QUORUM_TIMEOUT (300 * MS)

/* Proposer id of proposers, checking for a quorum of acceptors 0, 1 and 2. */
static struct paxos_election *checking(uint32_t id, uint32_t proposers, paxos_time now)
{
	struct paxos_election_options o = {
	    .id = id,
	    .proposers = proposers,
	    .heartbeat_interval = INTERVAL,
	    .heartbeat_timeout = TIMEOUT,
	    .changed = on_change,
	    .quorum_timeout = QUORUM_TIMEOUT,
	    .acceptors = 0x7,
	};
	nchanges = 0;
	struct paxos_election *e = paxos_election_new(&o, now);
	ck_assert_ptr_nonnull(e);
	return e;
}

static void acceptor_state(struct paxos_election *e, uint32_t acceptor, paxos_time now)
{
	paxos_election_heard_acceptor(e, acceptor, now);
}

/* A leader that hears the other proposer but no acceptor quorum steps down after the quorum
 * timeout, not before: it starts eligible (everyone presumed heard), and one acceptor is not
 * a quorum of three. */
START_TEST(test_no_quorum_steps_down)
{
	struct paxos_election *e = checking(0, 2, 0);
	ck_assert(paxos_election_eligible(e));
	ck_assert(paxos_election_is_leader(e));
	for (paxos_time t = 0; t <= 2 * QUORUM_TIMEOUT; t += 5 * MS) {
		heartbeat(e, 1, t);
		acceptor_state(e, 0, t); /* one acceptor only */
		tick(e, t);
		bool in = t <= QUORUM_TIMEOUT;
		ck_assert_msg(paxos_election_eligible(e) == in, "at %llu us",
			      (unsigned long long)t);
		ck_assert_uint_eq(paxos_election_leader(e), in ? 0 : 1);
		ck_assert(paxos_election_alive(e, 0, t) == in);
	}
	ck_assert_uint_eq(nchanges, 1);
	ck_assert_uint_eq(changes[0].leader, 1);
	ck_assert_uint_eq(changes[0].previous, 0);
	paxos_election_free(e);
}
END_TEST

/* Only the tick judges: a heartbeat read before the acceptors' state that came with it (a
 * stalled process reads both at once) does not put a proposer out; quorum_lost says that the
 * next tick would, so that a driver reads first. */
START_TEST(test_only_the_tick_puts_out)
{
	struct paxos_election *e = checking(0, 2, 0);
	paxos_time t = QUORUM_TIMEOUT + 50 * MS;
	ck_assert(!paxos_election_quorum_lost(e, QUORUM_TIMEOUT));
	ck_assert(paxos_election_quorum_lost(e, t));
	heartbeat(e, 1, t);
	ck_assert(paxos_election_eligible(e));
	ck_assert(paxos_election_is_leader(e));
	acceptor_state(e, 0, t);
	acceptor_state(e, 2, t);
	ck_assert(!paxos_election_quorum_lost(e, t));
	tick(e, t);
	ck_assert(paxos_election_eligible(e));
	ck_assert_uint_eq(nchanges, 0);
	ck_assert(paxos_election_quorum_lost(e, t + QUORUM_TIMEOUT + 1));
	tick(e, t + QUORUM_TIMEOUT + 1);
	ck_assert(!paxos_election_eligible(e));
	paxos_election_free(e);

	e = election(0, 2, 0); /* without check-quorum, never */
	ck_assert(!paxos_election_quorum_lost(e, 100 * QUORUM_TIMEOUT));
	paxos_election_free(e);
}
END_TEST

/* Out, a proposer sends no heartbeats; a second acceptor heard makes a quorum again at once,
 * and the first tick after beats at once. */
START_TEST(test_out_sends_no_heartbeats)
{
	struct paxos_election *e = checking(0, 2, 0);
	struct recorder *r = recorder_new();
	paxos_time t = 0;
	for (; t <= QUORUM_TIMEOUT + 20 * MS; t += 5 * MS) {
		heartbeat(e, 1, t);
		paxos_election_tick(e, t, 7, &r->emitter);
	}
	ck_assert(!paxos_election_eligible(e));
	size_t beats = recorder_count(r, PAXOS_MSG_HEARTBEAT, PAXOS_GROUP_PROPOSERS);
	ck_assert_uint_eq(beats, QUORUM_TIMEOUT / INTERVAL + 1);
	recorder_clear(r);
	for (; t <= 10 * QUORUM_TIMEOUT; t += 5 * MS) {
		heartbeat(e, 1, t);
		acceptor_state(e, 2, t);
		paxos_election_tick(e, t, 7, &r->emitter);
	}
	ck_assert_uint_eq(r->count, 0);
	ck_assert_uint_eq(paxos_election_leader(e), 1);
	acceptor_state(e, 1, t); /* the quorum again: 1 and 2 */
	ck_assert(paxos_election_eligible(e));
	ck_assert(paxos_election_is_leader(e));
	ck_assert_uint_eq(nchanges, 2);
	paxos_election_tick(e, t, 7, &r->emitter);
	ck_assert_uint_eq(recorder_count(r, PAXOS_MSG_HEARTBEAT, PAXOS_GROUP_PROPOSERS), 1);
	recorder_free(r);
	paxos_election_free(e);
}
END_TEST

/* A proposer out of the election is nobody's fallback, its own included: the lowest id that
 * hears nobody names another member, and a lone proposer names none. */
START_TEST(test_out_never_leads)
{
	struct paxos_election *e = checking(0, 3, 0);
	tick(e, QUORUM_TIMEOUT + 1); /* nothing heard at all */
	ck_assert(!paxos_election_eligible(e));
	ck_assert_uint_eq(paxos_election_leader(e), 1);
	paxos_election_free(e);

	e = checking(0, 1, 0);
	tick(e, QUORUM_TIMEOUT + 1);
	ck_assert_uint_eq(paxos_election_leader(e), PAXOS_MAX_PROPOSERS);
	ck_assert(!paxos_election_is_leader(e));
	acceptor_state(e, 0, QUORUM_TIMEOUT + 2);
	acceptor_state(e, 1, QUORUM_TIMEOUT + 2);
	ck_assert(paxos_election_is_leader(e));
	paxos_election_free(e);

	/* An oracle's order naming a proposer that went out ends with it, as with its crash:
	 * the others stop hearing its heartbeats and elect among themselves. */
	e = checking(1, 2, 0);
	oracle(e, 1, 0);
	ck_assert(paxos_election_is_leader(e));
	tick(e, QUORUM_TIMEOUT + 1);
	ck_assert(!paxos_election_eligible(e));
	ck_assert(!paxos_election_is_leader(e));
	ck_assert(!paxos_election_forced(e));
	paxos_election_free(e);
}
END_TEST

/* The quorum is of the acceptor set in force: others heard count for nothing, a newcomer
 * counts as heard when it joins. Without a quorum timeout nothing of this applies. */
START_TEST(test_quorum_of_the_set_in_force)
{
	struct paxos_election *e = checking(0, 2, 0);
	paxos_election_set_acceptors(e, 0x7 << 3, 100 * MS); /* acceptors 3, 4, 5 */
	for (paxos_time t = 100 * MS; t <= 100 * MS + QUORUM_TIMEOUT; t += 10 * MS) {
		for (uint32_t a = 0; a < 3; a++)
			acceptor_state(e, a, t);
		tick(e, t);
		ck_assert(paxos_election_eligible(e)); /* the newcomers' grace */
	}
	tick(e, 100 * MS + QUORUM_TIMEOUT + 1);
	ck_assert(!paxos_election_eligible(e));
	acceptor_state(e, 3, 500 * MS);
	acceptor_state(e, PAXOS_MAX_ACCEPTORS, 500 * MS); /* out of range: ignored */
	ck_assert(!paxos_election_eligible(e));
	acceptor_state(e, 5, 500 * MS);
	ck_assert(paxos_election_eligible(e));
	paxos_election_set_acceptors(e, 0, 500 * MS); /* no acceptors: no quorum */
	ck_assert(!paxos_election_eligible(e));
	paxos_election_free(e);

	e = election(0, 2, 0); /* quorum_timeout 0 */
	tick(e, 100 * QUORUM_TIMEOUT);
	ck_assert(paxos_election_eligible(e));
	ck_assert(paxos_election_is_leader(e));
	paxos_election_free(e);
}
END_TEST

/* paxos.conf check-quorum: on by default, over two acceptor reports and a heartbeat timeout,
 * with every configured acceptor. */
START_TEST(test_quorum_timeout_from_config)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	cfg.acceptors = 5;
	struct paxos_election_options o;
	paxos_election_options_from_config(&o, &cfg, 1);
	ck_assert(cfg.check_quorum);
	ck_assert_uint_eq(o.quorum_timeout,
			  (2 * cfg.acceptor_repeat_ms + cfg.heartbeat_timeout_ms) * MS);
	ck_assert_uint_eq(o.acceptors, 0x1f);
	cfg.acceptors = PAXOS_MAX_ACCEPTORS;
	paxos_election_options_from_config(&o, &cfg, 1);
	ck_assert_uint_eq(o.acceptors, UINT32_MAX);
	cfg.check_quorum = false;
	paxos_election_options_from_config(&o, &cfg, 1);
	ck_assert_uint_eq(o.quorum_timeout, 0);
}
END_TEST

/*
 * A one-way partition: proposer 0 leads and sends, but hears nothing (no acceptor, no
 * heartbeat); proposer 1 hears everything. 0 goes out after the quorum timeout and falls
 * silent, 1 expires it a heartbeat timeout later and leads; from then on exactly one of them
 * believes it leads, and the takeover costs the quorum timeout plus a heartbeat timeout.
 */
START_TEST(test_deaf_leader_is_replaced)
{
	struct paxos_election *deaf = checking(0, 2, 0), *other = checking(1, 2, 0);
	struct recorder *r = recorder_new();
	paxos_time took_over = 0;
	for (paxos_time t = 0; t <= 2 * QUORUM_TIMEOUT + 2 * TIMEOUT; t += 5 * MS) {
		recorder_clear(r);
		paxos_election_tick(deaf, t, 7, &r->emitter);
		for (size_t i = 0; i < r->count; i++)
			if (r->group[i] == PAXOS_GROUP_PROPOSERS)
				paxos_election_handle(other, &r->msg[i], t);
		for (uint32_t a = 0; a < 3; a++)
			acceptor_state(other, a, t);
		tick(other, t);
		if (t > QUORUM_TIMEOUT)
			ck_assert(!paxos_election_is_leader(deaf));
		if (paxos_election_is_leader(other) && !took_over)
			took_over = t;
	}
	ck_assert_uint_gt(took_over, QUORUM_TIMEOUT);
	ck_assert_uint_le(took_over, QUORUM_TIMEOUT + TIMEOUT + INTERVAL + 5 * MS);
	ck_assert(paxos_election_is_leader(other));
	ck_assert(!paxos_election_alive(other, 0, 2 * QUORUM_TIMEOUT + 2 * TIMEOUT));
	recorder_free(r);
	paxos_election_free(deaf);
	paxos_election_free(other);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("election");
	TCase *t = tcase_create("core");
	tcase_add_test(t, test_start_presumes_everyone_alive);
	tcase_add_test(t, test_lowest_live_id_wins);
	tcase_add_test(t, test_members_only_lead);
	tcase_add_test(t, test_partitions_spread_over_live_proposers);
	tcase_add_test(t, test_timeout_is_exact);
	tcase_add_test(t, test_self_always_alive);
	tcase_add_test(t, test_oracle_overrides_and_back_to_auto);
	tcase_add_test(t, test_manual_mode_starts_forced);
	tcase_add_test(t, test_order_ends_with_its_leader);
	tcase_add_test(t, test_invalid_options);
	tcase_add_test(t, test_other_messages_ignored);
	tcase_add_test(t, test_promise_shows_its_ballot_owner_alive);
	tcase_add_test(t, test_heartbeats_at_the_interval);
	suite_add_tcase(s, t);
	t = tcase_create("check_quorum");
	tcase_add_test(t, test_no_quorum_steps_down);
	tcase_add_test(t, test_only_the_tick_puts_out);
	tcase_add_test(t, test_out_sends_no_heartbeats);
	tcase_add_test(t, test_out_never_leads);
	tcase_add_test(t, test_quorum_of_the_set_in_force);
	tcase_add_test(t, test_quorum_timeout_from_config);
	tcase_add_test(t, test_deaf_leader_is_replaced);
	suite_add_tcase(s, t);
	return s;
}
