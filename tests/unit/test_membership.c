/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Changing the acceptor set through the log (paxos/membership.h): the history's rules (a
 * command made against the newest configuration takes effect alpha instances after its own,
 * any other is ignored), and how the learner and proposer cores count votes with it: only the
 * members of each instance's configuration, with its quorum, and nothing decided or opened
 * while that configuration is not known.
 */
#include "check_main.h"
#include <paxos/acceptor.h>
#include <paxos/learner.h>
#include <paxos/membership.h>
#include <paxos/proposer.h>
#include <paxos/storage_backends.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "support.h"

static struct paxos_value command(uint32_t from, uint32_t members, uint8_t *buf)
{
	paxos_membership_command(from, members, buf);
	return (struct paxos_value){buf, PAXOS_MEMBERSHIP_COMMAND_LEN};
}

/* A change asked of proposer p (what a node does with a PAXOS_MSG_CHANGE it checked). */
static int change(struct paxos_proposer *p, const struct paxos_value *v)
{
	struct recorder *r = recorder_new();
	int rc = paxos_proposer_change(p, v, 1, &r->emitter);
	recorder_free(r);
	return rc;
}

START_TEST(test_history)
{
	ck_assert_ptr_null(paxos_membership_new(0, 4));
	ck_assert_ptr_null(paxos_membership_new(7, 0));
	struct paxos_membership *m = paxos_membership_new(0x7, 4);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(paxos_membership_members(m, 1), 0x7);
	ck_assert_uint_eq(paxos_membership_quorum(m, 1), 2);
	ck_assert(paxos_membership_known(m, 4));
	ck_assert(!paxos_membership_known(m, 5));
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value plain = value_of("hello");
	ck_assert_int_eq(paxos_membership_apply(m, 1, &plain), 0);
	ck_assert_uint_eq(paxos_membership_applied(m), 1);
	ck_assert(paxos_membership_known(m, 5));
	/* Grow to 5 in instance 2: from 6 on. */
	struct paxos_value grow = command(1, 0x1f, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 2, &grow), 1);
	ck_assert(paxos_membership_pending(m));
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 2);
	ck_assert_uint_eq(paxos_membership_latest(m)->first, 6);
	ck_assert_uint_eq(paxos_membership_members(m, 5), 0x7);
	ck_assert_uint_eq(paxos_membership_members(m, 6), 0x1f);
	ck_assert_uint_eq(paxos_membership_quorum(m, 6), 3);
	/* Again (a retry chosen twice), or made against configuration 1 (two at once): ignored. */
	ck_assert_int_eq(paxos_membership_apply(m, 3, &grow), 0);
	struct paxos_value other = command(1, 0xb, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 4, &other), 0);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 2);
	/* Instances at or below applied change nothing. */
	struct paxos_value shrink = command(2, 0x7, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 4, &shrink), 0);
	ck_assert(paxos_membership_pending(m));
	ck_assert_int_eq(paxos_membership_apply(m, 5, &plain), 0);
	ck_assert(!paxos_membership_pending(m));
	/* A gap counts as skipped; then shrink in 9, from 13 on. */
	ck_assert_int_eq(paxos_membership_apply(m, 9, &shrink), 1);
	ck_assert_uint_eq(paxos_membership_applied(m), 9);
	ck_assert_uint_eq(paxos_membership_members(m, 12), 0x1f);
	ck_assert_uint_eq(paxos_membership_members(m, 13), 0x7);
	ck_assert_uint_eq(paxos_membership_at(m, 13)->id, 3);
	ck_assert_uint_eq(paxos_membership_members(m, 2), 0x7); /* configuration 1 still there */
	paxos_membership_skip_to(m, 20);
	ck_assert_uint_eq(paxos_membership_applied(m), 20);
	ck_assert(paxos_membership_known(m, 24) && !paxos_membership_known(m, 25));
	paxos_membership_free(m);
}
END_TEST

START_TEST(test_no_change_and_overflow)
{
	struct paxos_membership *m = paxos_membership_new(0x7, 1);
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value same = command(1, 0x7, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 1, &same), 0);
	struct paxos_value none = command(1, 0, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 2, &none), 0);
	/* More changes than the history holds: the oldest go, the newest stay right. */
	paxos_iid iid = 3;
	for (uint32_t k = 1; k <= 2 * PAXOS_MEMBERSHIP_HISTORY; k++, iid++) {
		struct paxos_value c = command(k, k % 2 ? 0xf : 0x7, buf);
		ck_assert_int_eq(paxos_membership_apply(m, iid, &c), 1);
		ck_assert_uint_eq(paxos_membership_members(m, iid + 1), k % 2 ? 0xf : 0x7);
	}
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 2 * PAXOS_MEMBERSHIP_HISTORY + 1);
	paxos_membership_free(m);
}
END_TEST

/* Ordinary values are never taken for commands: one length check, then the marker. */
START_TEST(test_command_format)
{
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value c = command(41, 0x19, buf);
	uint32_t from = 0, members = 0;
	ck_assert(paxos_membership_is_command(&c));
	ck_assert_int_eq(paxos_membership_decode(&c, &from, &members), PAXOS_OK);
	ck_assert_uint_eq(from, 41);
	ck_assert_uint_eq(members, 0x19);
	uint8_t frame[64];
	uint32_t used = 0;
	struct paxos_value twelve = value_of("twelve bytes");
	ck_assert_int_eq(paxos_batch_append(frame, sizeof(frame), &used, &twelve), PAXOS_OK);
	struct paxos_value f = {frame, used}; /* a frame of 16 bytes */
	ck_assert_uint_eq(f.len, PAXOS_MEMBERSHIP_COMMAND_LEN);
	ck_assert(!paxos_membership_is_command(&f));
	ck_assert_int_eq(paxos_membership_decode(&f, &from, &members), PAXOS_E_MALFORMED);
	uint8_t skip[PAXOS_BATCH_SKIP_LEN];
	paxos_batch_write_skip(skip);
	struct paxos_value s = {skip, sizeof(skip)};
	ck_assert(!paxos_membership_is_command(&s));
	ck_assert(!paxos_batch_is_skip(&c));
	ck_assert(!paxos_membership_is_command(NULL));
}
END_TEST

/* ---- the learner ---- */

static paxos_iid delivered[64];
static uint32_t delivered_n;

static void on_deliver(void *arg, paxos_iid iid, const struct paxos_value *v)
{
	(void)arg;
	(void)v;
	delivered[delivered_n++] = iid;
}

static struct paxos_learner *learner_with(struct paxos_membership *m, struct paxos_counters *c)
{
	struct paxos_learner_options o = {.acceptors = 8,
					  .window = 32,
					  .max_value = 64,
					  .repeat_batch = 8,
					  .hole_check = 1000,
					  .deliver = on_deliver,
					  .membership = m};
	delivered_n = 0;
	return paxos_learner_new(&o, c);
}

static void accepted(struct paxos_learner *l, paxos_iid iid, uint32_t acceptor, paxos_ballot b,
		     const struct paxos_value *v)
{
	struct paxos_message msg = {.type = PAXOS_MSG_ACCEPTED};
	msg.u.accepted =
	    (struct paxos_accepted){.iid = iid, .ballot = b, .acceptor_id = acceptor, .value = *v};
	paxos_learner_handle(l, &msg, 1, NULL);
}

/* Votes count only from the members of the instance's configuration, with its quorum. */
START_TEST(test_learner_counts_members)
{
	struct paxos_counters c = {0};
	struct paxos_membership *m = paxos_membership_new(0x7, 2); /* 0, 1, 2 */
	struct paxos_learner *l = learner_with(m, &c);
	struct paxos_value v = value_of("v");
	accepted(l, 1, 5, 100, &v); /* not a member */
	accepted(l, 1, 6, 100, &v);
	ck_assert_uint_eq(delivered_n, 0);
	accepted(l, 1, 0, 100, &v);
	ck_assert_uint_eq(delivered_n, 0);
	accepted(l, 1, 2, 100, &v);
	ck_assert_uint_eq(delivered_n, 1);
	/* Instance 2 replaces acceptor 2 by 3, from instance 4 on. */
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value cmd = command(1, 0xb, buf);
	accepted(l, 2, 0, 100, &cmd);
	accepted(l, 2, 1, 100, &cmd);
	ck_assert_uint_eq(delivered_n, 2);
	ck_assert_uint_eq(paxos_membership_members(m, 4), 0xb);
	accepted(l, 3, 2, 100, &v); /* instance 3: still 0, 1, 2 */
	accepted(l, 3, 3, 100, &v);
	ck_assert_uint_eq(delivered_n, 2);
	accepted(l, 3, 1, 100, &v);
	ck_assert_uint_eq(delivered_n, 3);
	accepted(l, 4, 2, 100, &v); /* instance 4: 0, 1, 3; 2 no longer counts */
	accepted(l, 4, 0, 100, &v);
	ck_assert_uint_eq(delivered_n, 3);
	accepted(l, 4, 3, 100, &v);
	ck_assert_uint_eq(delivered_n, 4);
	paxos_learner_free(l);
	paxos_membership_free(m);
}
END_TEST

/* An instance whose configuration is not known keeps its votes and is decided once it is. */
START_TEST(test_learner_waits_for_configuration)
{
	struct paxos_counters c = {0};
	struct paxos_membership *m = paxos_membership_new(0x7, 2);
	struct paxos_learner *l = learner_with(m, &c);
	struct paxos_value v = value_of("v");
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value grow = command(1, 0x1f, buf); /* in 1: 0..4 from 3 on */
	/* Instance 3, voted by 0, 1 and 3 before 1 is known: a quorum of 3 only with 3. */
	accepted(l, 3, 0, 100, &v);
	accepted(l, 3, 1, 100, &v);
	accepted(l, 3, 3, 100, &v);
	ck_assert_uint_eq(delivered_n, 0);
	accepted(l, 1, 0, 100, &grow);
	accepted(l, 1, 1, 100, &grow);
	ck_assert_uint_eq(delivered_n, 1);
	/* Instance 2: the old configuration, two votes are a quorum. */
	accepted(l, 2, 0, 100, &v);
	accepted(l, 2, 2, 100, &v);
	ck_assert_uint_eq(delivered_n, 3);
	ck_assert_uint_eq(delivered[2], 3);
	/* Without acceptor 3's vote instance 3 would have needed a third member. */
	paxos_learner_free(l);
	paxos_membership_free(m);
}
END_TEST

/* hold_changes: after delivering a change the learner delivers nothing more, though later
 * instances close, until its driver kept the change; then they follow, in order. */
START_TEST(test_learner_holds_after_change)
{
	struct paxos_counters c = {0};
	struct paxos_membership *m = paxos_membership_new(0x7, 2);
	struct paxos_learner_options o = {.acceptors = 8,
					  .window = 32,
					  .max_value = 64,
					  .repeat_batch = 8,
					  .hole_check = 1000,
					  .deliver = on_deliver,
					  .membership = m,
					  .hold_changes = true};
	delivered_n = 0;
	struct paxos_learner *l = paxos_learner_new(&o, &c);
	struct paxos_value v = value_of("v");
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value grow = command(1, 0xf, buf); /* in 2: 0..3 from 4 on */
	for (paxos_iid i = 3; i <= 4; i++) {
		accepted(l, i, 0, 100, &v);
		accepted(l, i, 1, 100, &v);
	}
	accepted(l, 1, 0, 100, &v);
	accepted(l, 1, 1, 100, &v);
	ck_assert(!paxos_learner_change_held(l));
	accepted(l, 2, 0, 100, &grow);
	accepted(l, 2, 1, 100, &grow);
	/* 1 and the change are delivered, 3 waits although it is closed. */
	ck_assert_uint_eq(delivered_n, 2);
	ck_assert(paxos_learner_change_held(l));
	ck_assert_uint_eq(paxos_learner_next_iid(l), 3);
	/* Instance 4 is of configuration 2: with 0 and 1 of its four members it is not closed. */
	ck_assert_int_eq(paxos_learner_step_change_kept(l), PAXOS_OK);
	ck_assert(!paxos_learner_change_held(l));
	struct paxos_learner_ready rd;
	ck_assert(paxos_learner_ready(l, &rd));
	uint32_t delivered_events = 0;
	for (size_t i = 0; i < rd.event_count; i++)
		if (rd.events[i].kind == PAXOS_LEARNER_DELIVERED) {
			ck_assert_uint_eq(rd.events[i].iid, 3);
			delivered_events++;
		}
	ck_assert_uint_eq(delivered_events, 1);
	ck_assert_int_eq(paxos_learner_step_change_kept(l), PAXOS_E_INVALID); /* not advanced */
	paxos_learner_advance(l);
	accepted(l, 4, 2, 100, &v);
	ck_assert_uint_eq(paxos_learner_next_iid(l), 5);
	paxos_learner_free(l);
	paxos_membership_free(m);
}
END_TEST

/* A learner that starts at instance 10 takes everything below for applied: 10 and 11 are
 * decided with configuration 1, 12 waits for 10's delivery. */
START_TEST(test_learner_starts_later)
{
	struct paxos_counters c = {0};
	struct paxos_membership *m = paxos_membership_new(0x7, 2);
	struct paxos_learner_options o = {.acceptors = 8,
					  .window = 32,
					  .max_value = 64,
					  .repeat_batch = 8,
					  .hole_check = 1000,
					  .start_iid = 10,
					  .deliver = on_deliver,
					  .membership = m};
	delivered_n = 0;
	struct paxos_learner *l = paxos_learner_new(&o, &c);
	ck_assert_uint_eq(paxos_membership_applied(m), 9);
	struct paxos_value v = value_of("v");
	accepted(l, 12, 0, 100, &v);
	accepted(l, 12, 1, 100, &v);
	accepted(l, 11, 0, 100, &v);
	accepted(l, 11, 1, 100, &v);
	ck_assert_uint_eq(delivered_n, 0);
	accepted(l, 10, 1, 100, &v);
	accepted(l, 10, 2, 100, &v);
	ck_assert_uint_eq(delivered_n, 3);
	paxos_learner_free(l);
	paxos_membership_free(m);
}
END_TEST

/* ---- the proposer ---- */

START_TEST(test_proposer_counts_members_and_waits)
{
	struct paxos_membership *m = paxos_membership_new(0x7, 2);
	struct paxos_counters c = {0};
	struct paxos_proposer_options o = {.id = 0,
					   .epoch = 1,
					   .acceptors = 8,
					   .window = 4,
					   .concurrency = 4,
					   .pending_size = 16,
					   .max_value = 256,
					   .phase1_timeout = 100000,
					   .phase2_timeout = 100000,
					   .membership = m};
	struct paxos_proposer *p = paxos_proposer_new(&o, &c);
	ck_assert_ptr_nonnull(p);
	struct recorder *r = recorder_new();
	paxos_proposer_set_leader(p, true, 1, 1, &r->emitter);
	/* alpha 2, nothing delivered: instances 1 and 2 open, 3 and 4 wait. */
	ck_assert_uint_eq(recorder_count(r, PAXOS_MSG_PREPARE, -1), 2);
	paxos_ballot b = recorder_find(r, PAXOS_MSG_PREPARE, 0)->u.prepare.ballot;
	recorder_clear(r);
	struct paxos_message pr = {.type = PAXOS_MSG_PROMISE};
	pr.u.promise = (struct paxos_promise){.iid = 1, .ballot = b, .acceptor_id = 5};
	paxos_proposer_handle(p, &pr, 2, &r->emitter);
	pr.u.promise.acceptor_id = 6;
	paxos_proposer_handle(p, &pr, 2, &r->emitter);
	pr.u.promise.acceptor_id = 0;
	paxos_proposer_handle(p, &pr, 2, &r->emitter);
	/* Instance 2 finishes phase 1 too: a new leader proposes only then. */
	pr.u.promise.iid = 2;
	for (uint32_t a = 0; a < 2; a++) {
		pr.u.promise.acceptor_id = a;
		paxos_proposer_handle(p, &pr, 2, &r->emitter);
	}
	pr.u.promise.iid = 1;
	ck_assert_int_eq(paxos_proposer_change_membership(p, 0xb, 2, &r->emitter), PAXOS_OK);
	ck_assert_int_eq(paxos_proposer_change_membership(p, 0x1f, 2, &r->emitter), PAXOS_E_FULL);
	ck_assert_uint_eq(recorder_count(r, PAXOS_MSG_ACCEPT, -1), 0); /* non-members: no quorum */
	pr.u.promise.acceptor_id = 1;
	paxos_proposer_handle(p, &pr, 2, &r->emitter);
	ck_assert_uint_eq(recorder_count(r, PAXOS_MSG_ACCEPT, -1), 1);
	const struct paxos_message *acc = recorder_find(r, PAXOS_MSG_ACCEPT, 0);
	ck_assert(paxos_membership_is_command(&acc->u.accept.value));
	/* Delivering instance 1 (as the internal learner does: apply, then tell) opens 3. */
	recorder_clear(r);
	paxos_membership_apply(m, 1, &acc->u.accept.value);
	struct paxos_value chosen = acc->u.accept.value;
	uint8_t copy[PAXOS_MEMBERSHIP_COMMAND_LEN];
	memcpy(copy, chosen.data, sizeof(copy));
	chosen.data = copy;
	paxos_proposer_delivered(p, 1, &chosen, 3, &r->emitter);
	ck_assert(!paxos_proposer_change_pending(p));
	ck_assert_uint_eq(recorder_count(r, PAXOS_MSG_PREPARE, -1), 1);
	ck_assert_uint_eq(recorder_find(r, PAXOS_MSG_PREPARE, 0)->u.prepare.iid, 3);
	/* Instance 3 is configuration 2's (0, 1, 3): acceptor 2's promise does not count. */
	b = recorder_find(r, PAXOS_MSG_PREPARE, 0)->u.prepare.ballot;
	recorder_clear(r);
	/* "x" goes to instance 2 (phase 1 done, configuration 1), "y" waits for 3. */
	ck_assert_int_eq(paxos_proposer_submit(p, &(struct paxos_value){(const uint8_t *)"x", 1}, 4,
					       &r->emitter),
			 PAXOS_OK);
	ck_assert_uint_eq(recorder_count(r, PAXOS_MSG_ACCEPT, -1), 1);
	ck_assert_uint_eq(recorder_find(r, PAXOS_MSG_ACCEPT, 0)->u.accept.iid, 2);
	recorder_clear(r);
	ck_assert_int_eq(paxos_proposer_submit(p, &(struct paxos_value){(const uint8_t *)"y", 1}, 4,
					       &r->emitter),
			 PAXOS_OK);
	pr.u.promise = (struct paxos_promise){.iid = 3, .ballot = b, .acceptor_id = 2};
	paxos_proposer_handle(p, &pr, 4, &r->emitter);
	pr.u.promise.acceptor_id = 0;
	paxos_proposer_handle(p, &pr, 4, &r->emitter);
	ck_assert_uint_eq(recorder_count(r, PAXOS_MSG_ACCEPT, -1), 0);
	pr.u.promise.acceptor_id = 3;
	paxos_proposer_handle(p, &pr, 4, &r->emitter);
	ck_assert_uint_eq(recorder_count(r, PAXOS_MSG_ACCEPT, -1), 1);
	ck_assert_uint_eq(recorder_find(r, PAXOS_MSG_ACCEPT, 0)->u.accept.iid, 3);
	paxos_proposer_free(p);
	recorder_free(r);
	paxos_membership_free(m);
}
END_TEST

/* A request queued like a client value (paxos-admin's): taken when made against the newest
 * configuration, dropped once another change is chosen (every proposer queued it). */
START_TEST(test_proposer_takes_requests)
{
	struct paxos_membership *m = paxos_membership_new(0x7, 8);
	struct paxos_counters c = {0};
	struct paxos_proposer_options o = {.id = 1,
					   .epoch = 1,
					   .acceptors = 5,
					   .window = 4,
					   .concurrency = 4,
					   .pending_size = 16,
					   .max_value = 256,
					   .phase1_timeout = 100000,
					   .phase2_timeout = 100000,
					   .membership = m};
	struct paxos_proposer *p = paxos_proposer_new(&o, &c);
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value stale = command(4, 0xb, buf);
	ck_assert_int_eq(change(p, &stale), PAXOS_E_INVALID);
	struct paxos_value beyond = command(1, 0x27, buf); /* id 5: acceptors is 5 */
	ck_assert_int_eq(change(p, &beyond), PAXOS_E_INVALID);
	struct paxos_value ok = command(1, 0xb, buf);
	ck_assert_int_eq(change(p, &ok), PAXOS_OK);
	ck_assert(paxos_proposer_change_pending(p));
	ck_assert_uint_eq(paxos_proposer_pending(p), 0); /* no client value */
	/* Another leader's change is chosen in instance 1: ours is outdated and dropped. */
	uint8_t other_buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value other = command(1, 0x1f, other_buf);
	paxos_membership_apply(m, 1, &other);
	struct recorder *r = recorder_new();
	paxos_proposer_delivered(p, 1, &other, 1, &r->emitter);
	ck_assert(!paxos_proposer_change_pending(p));
	recorder_free(r);
	paxos_proposer_free(p);
	paxos_membership_free(m);
}
END_TEST

/* A client value is data whatever its bytes: one that looks like a membership command is
 * queued as a value (framed in its instance, so no learner reads it as a command) and asks
 * for no change. */
START_TEST(test_client_value_is_no_command)
{
	struct paxos_membership *m = paxos_membership_new(0x7, 8);
	struct paxos_counters c = {0};
	struct paxos_proposer_options o = {.id = 0,
					   .epoch = 1,
					   .acceptors = 5,
					   .window = 4,
					   .concurrency = 4,
					   .pending_size = 16,
					   .max_value = 256,
					   .phase1_timeout = 100000,
					   .phase2_timeout = 100000,
					   .membership = m};
	struct paxos_proposer *p = paxos_proposer_new(&o, &c);
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	paxos_membership_command_of(PAXOS_MEMBERSHIP_PROPOSERS, 1, 1u << 31, buf);
	struct paxos_value forged = {buf, sizeof(buf)};
	ck_assert_int_eq(paxos_proposer_queue(p, &forged), PAXOS_OK);
	ck_assert(!paxos_proposer_change_pending(p));
	ck_assert_uint_eq(paxos_proposer_pending(p), 1);
	paxos_proposer_free(p);
	/* A command chosen anyway that names ids paxos.conf lacks changes nothing. */
	paxos_membership_limit_ids(m, 0x1f, 0x3);
	ck_assert(!paxos_membership_names_known_ids(m, &forged));
	ck_assert_int_eq(paxos_membership_apply(m, 1, &forged), 0);
	struct paxos_value beyond = command(1, 0x60, buf); /* acceptors 5 and 6 */
	ck_assert_int_eq(paxos_membership_apply(m, 2, &beyond), 0);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 1);
	uint8_t fine_buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value fine = command(1, 0x18, fine_buf); /* 3 and 4: in the file */
	ck_assert(paxos_membership_names_known_ids(m, &fine));
	/* The limits stay when another history (the acceptors' answer) is adopted. */
	struct paxos_membership *other = paxos_membership_new(0x7, 8);
	ck_assert_int_eq(paxos_membership_apply(other, 3, &fine), 1);
	ck_assert_int_eq(paxos_membership_adopt(m, other), 1);
	paxos_membership_free(other);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 2);
	paxos_membership_command_of(PAXOS_MEMBERSHIP_PROPOSERS, 2, 1u << 31, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 4, &forged), 0);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 2);
	/* Nor is a history that made such a configuration adopted (a push, an answer). */
	other = paxos_membership_new(0x7, 8);
	ck_assert_int_eq(paxos_membership_apply(other, 3, &fine), 1);
	ck_assert_int_eq(paxos_membership_apply(other, 5, &forged), 1);
	ck_assert_int_eq(paxos_membership_adopt(m, other), PAXOS_E_INVALID);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 2);
	paxos_membership_free(other);
	paxos_membership_free(m);
}
END_TEST

/* The proposer set changes by commands of its own kind, in the same history: the acceptors
 * stay as they are, each change names the newest configuration, and a proposer takes requests
 * for it as for the acceptors. */
START_TEST(test_proposer_set_changes)
{
	ck_assert_ptr_null(paxos_membership_create(0x7, 0, 4));
	struct paxos_membership *m = paxos_membership_create(0x7, 0x3, 4);
	ck_assert_uint_eq(paxos_membership_proposers(m, 1), 0x3);
	struct paxos_membership *all = paxos_membership_new(0x7, 4);
	ck_assert_uint_eq(paxos_membership_proposers(all, 1), UINT32_MAX);
	paxos_membership_free(all);
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value add = {buf, sizeof(buf)};
	paxos_membership_command_of(PAXOS_MEMBERSHIP_PROPOSERS, 1, 0x7, buf);
	ck_assert(paxos_membership_is_command(&add));
	enum paxos_membership_kind kind;
	uint32_t from, set;
	ck_assert_int_eq(paxos_membership_decode_of(&add, &kind, &from, &set), PAXOS_OK);
	ck_assert_int_eq(kind, PAXOS_MEMBERSHIP_PROPOSERS);
	ck_assert_uint_eq(from, 1);
	ck_assert_uint_eq(set, 0x7);
	/* Not an acceptor set: the acceptors' decoder refuses it. */
	ck_assert_int_eq(paxos_membership_decode(&add, &from, &set), PAXOS_E_MALFORMED);
	ck_assert_int_eq(paxos_membership_apply(m, 2, &add), 1);
	ck_assert_uint_eq(paxos_membership_proposers(m, 5), 0x3);
	ck_assert_uint_eq(paxos_membership_proposers(m, 6), 0x7);
	ck_assert_uint_eq(paxos_membership_members(m, 6), 0x7); /* acceptors as before */
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 2);
	/* Then the acceptors change: the proposers stay. */
	uint8_t grow_buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value grow = command(2, 0xf, grow_buf);
	ck_assert_int_eq(paxos_membership_apply(m, 7, &grow), 1);
	ck_assert_uint_eq(paxos_membership_members(m, 11), 0xf);
	ck_assert_uint_eq(paxos_membership_proposers(m, 11), 0x7);
	/* Removing to none, an unknown kind: ignored (the set in force is not: see
	 * paxos_membership_apply). */
	paxos_membership_command_of(PAXOS_MEMBERSHIP_PROPOSERS, 3, 0, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 12, &add), 0);
	paxos_membership_command_of(PAXOS_MEMBERSHIP_PROPOSERS, 2, 0x3, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 13, &add), 0); /* outdated */
	paxos_membership_command_of((enum paxos_membership_kind)3, 3, 0x1, buf);
	ck_assert(paxos_membership_is_command(&add));
	ck_assert_int_eq(paxos_membership_decode_of(&add, &kind, &from, &set), PAXOS_E_MALFORMED);
	ck_assert_int_eq(paxos_membership_apply(m, 14, &add), 0);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 3);
	/* Remove proposer 0 in 15: from 19 on. */
	paxos_membership_command_of(PAXOS_MEMBERSHIP_PROPOSERS, 3, 0x6, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 15, &add), 1);
	ck_assert_uint_eq(paxos_membership_proposers(m, 19), 0x6);
	/* A history restored keeps both sets; one with no proposers is none apply made. */
	uint32_t count;
	const struct paxos_configuration *h = paxos_membership_history(m, &count);
	struct paxos_configuration copy[PAXOS_MEMBERSHIP_HISTORY];
	memcpy(copy, h, count * sizeof(*h));
	struct paxos_membership *r =
	    paxos_membership_restore(copy, count, paxos_membership_applied(m), 4);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(paxos_membership_proposers(r, 19), 0x6);
	ck_assert_uint_eq(paxos_membership_members(r, 19), 0xf);
	paxos_membership_free(r);
	copy[1].proposers = 0;
	ck_assert_ptr_null(paxos_membership_restore(copy, count, paxos_membership_applied(m), 4));

	/* The proposer core: a request for the proposer set, refused when stale or the same. */
	struct paxos_counters c = {0};
	struct paxos_proposer_options o = {.id = 1,
					   .epoch = 1,
					   .acceptors = 5,
					   .window = 4,
					   .concurrency = 4,
					   .pending_size = 16,
					   .max_value = 256,
					   .phase1_timeout = 100000,
					   .phase2_timeout = 100000,
					   .membership = m};
	struct paxos_proposer *p = paxos_proposer_new(&o, &c);
	struct recorder *rec = recorder_new();
	ck_assert_int_eq(paxos_proposer_change_proposers(p, 0x6, 1, &rec->emitter),
			 PAXOS_E_INVALID); /* in force already */
	ck_assert_int_eq(paxos_proposer_change_proposers(p, 0, 1, &rec->emitter), PAXOS_E_INVALID);
	/* The change of 15 is not in force before 19. */
	ck_assert_int_eq(paxos_proposer_change_proposers(p, 0x2, 1, &rec->emitter), PAXOS_E_FULL);
	paxos_membership_skip_to(m, 18);
	paxos_membership_command_of(PAXOS_MEMBERSHIP_PROPOSERS, 3, 0x2, buf);
	ck_assert_int_eq(change(p, &add), PAXOS_E_INVALID); /* stale: 4 is newest */
	ck_assert_int_eq(paxos_proposer_change_proposers(p, 0x2, 1, &rec->emitter), PAXOS_OK);
	ck_assert(paxos_proposer_change_pending(p));
	ck_assert_int_eq(paxos_proposer_change_membership(p, 0x7, 1, &rec->emitter),
			 PAXOS_E_FULL); /* one change at once */
	recorder_free(rec);
	paxos_proposer_free(p);
	paxos_membership_free(m);
}
END_TEST

/* An acceptor set command that carries a new member's unicast address: applied like any
 * acceptor change, and the address is recorded; a proposer proposes it as it was asked. */
START_TEST(test_command_with_address)
{
	struct paxos_membership *m = paxos_membership_new(0x7, 4);
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_MAX];
	struct paxos_value v = {buf, sizeof(buf)};
	uint32_t addr = 0x0500000a; /* 10.0.0.5 in network byte order on little-endian */
	paxos_membership_command_at(1, 0xf, 3, addr, 7204, buf);
	ck_assert(paxos_membership_is_command(&v));
	enum paxos_membership_kind kind;
	uint32_t from, set, id, a;
	uint16_t port;
	ck_assert_int_eq(paxos_membership_decode_of(&v, &kind, &from, &set), PAXOS_OK);
	ck_assert_int_eq(kind, PAXOS_MEMBERSHIP_ACCEPTORS);
	ck_assert_uint_eq(set, 0xf);
	ck_assert_int_eq(paxos_membership_decode(&v, &from, &set), PAXOS_OK);
	ck_assert_int_eq(paxos_membership_decode_address(&v, &id, &a, &port), PAXOS_OK);
	ck_assert_uint_eq(id, 3);
	ck_assert_uint_eq(a, addr);
	ck_assert_uint_eq(port, 7204);
	ck_assert(!paxos_membership_address(m, 3, &a, &port));
	ck_assert_int_eq(paxos_membership_apply(m, 2, &v), 1);
	ck_assert_uint_eq(paxos_membership_members(m, 6), 0xf);
	ck_assert(paxos_membership_address(m, 3, &a, &port));
	ck_assert_uint_eq(a, addr);
	ck_assert_uint_eq(port, 7204);
	/* Malformed: an id above the ids, port 0, a 24-byte value of another kind. */
	buf[22] = 40;
	ck_assert_int_eq(paxos_membership_decode_of(&v, &kind, &from, &set), PAXOS_E_MALFORMED);
	paxos_membership_command_at(2, 0x7, 0, addr, 0, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 3, &v), 0);
	paxos_membership_command_at(2, 0x7, 0, addr, 1, buf);
	buf[4] = 1;
	ck_assert_int_eq(paxos_membership_decode_of(&v, &kind, &from, &set), PAXOS_E_MALFORMED);
	/* A 16-byte command is no address. */
	uint8_t small[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value s16 = command(2, 0x7, small);
	ck_assert_int_eq(paxos_membership_decode_address(&s16, &id, &a, &port), PAXOS_E_MALFORMED);

	/* The proposer core proposes the command as asked, address included. */
	paxos_membership_skip_to(m, 6);
	struct paxos_counters c = {0};
	struct paxos_proposer_options o = {.id = 0,
					   .epoch = 1,
					   .acceptors = 5,
					   .window = 4,
					   .concurrency = 4,
					   .pending_size = 16,
					   .max_value = 256,
					   .phase1_timeout = 100000,
					   .phase2_timeout = 100000,
					   .membership = m};
	struct paxos_proposer *p = paxos_proposer_new(&o, &c);
	paxos_membership_command_at(2, 0x1f, 4, addr, 7205, buf);
	ck_assert_int_eq(change(p, &v), PAXOS_OK);
	struct recorder *r = recorder_new();
	paxos_proposer_set_leader(p, true, 7, 1, &r->emitter);
	/* A new leader proposes once phase 1 finished for every instance it started. */
	size_t prepares = recorder_count(r, PAXOS_MSG_PREPARE, -1);
	ck_assert_uint_ge(prepares, 1);
	ck_assert_uint_le(prepares, 4);
	struct paxos_prepare started[4];
	for (size_t k = 0; k < prepares; k++)
		started[k] = recorder_find(r, PAXOS_MSG_PREPARE, k)->u.prepare;
	recorder_clear(r);
	struct paxos_message pr = {.type = PAXOS_MSG_PROMISE};
	for (size_t k = 0; k < prepares; k++)
		for (uint32_t acc = 0; acc < 4; acc++) {
			pr.u.promise = (struct paxos_promise){
			    .iid = started[k].iid, .ballot = started[k].ballot, .acceptor_id = acc};
			paxos_proposer_handle(p, &pr, 2, &r->emitter);
		}
	const struct paxos_message *acc = recorder_find(r, PAXOS_MSG_ACCEPT, 0);
	ck_assert_ptr_nonnull(acc);
	bool sent = acc->u.accept.value.len == PAXOS_MEMBERSHIP_COMMAND_MAX &&
		    memcmp(acc->u.accept.value.data, buf, sizeof(buf)) == 0;
	ck_assert(sent);
	recorder_free(r);
	paxos_proposer_free(p);
	paxos_membership_free(m);
}
END_TEST

/* A member moved to a new address (paxos_membership_command_address): a new configuration
 * with the same sets, the address recorded; refused for a non-member, another member set or
 * an outdated configuration; the proposer core takes it only as it was asked (with its
 * address) and for the members in force. */
START_TEST(test_command_moves_a_member)
{
	struct paxos_membership *m = paxos_membership_create(0x7, 0x3, 4);
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_MAX];
	struct paxos_value v = {buf, sizeof(buf)};
	uint32_t addr = 0x0900000a, a, id, from, set;
	uint16_t port;
	enum paxos_membership_kind kind;
	paxos_membership_command_address(1, 0x7, 2, addr, 7300, buf);
	ck_assert(paxos_membership_is_command(&v));
	ck_assert_int_eq(paxos_membership_decode_of(&v, &kind, &from, &set), PAXOS_OK);
	ck_assert_int_eq(kind, PAXOS_MEMBERSHIP_ADDRESS);
	ck_assert_uint_eq(from, 1);
	ck_assert_uint_eq(set, 0x7);
	/* Not an acceptor set command: a reader of those alone does not take it for one. */
	ck_assert_int_eq(paxos_membership_decode(&v, &from, &set), PAXOS_E_MALFORMED);
	ck_assert_int_eq(paxos_membership_decode_address(&v, &id, &a, &port), PAXOS_OK);
	ck_assert_uint_eq(id, 2);
	ck_assert_uint_eq(a, addr);
	ck_assert_uint_eq(port, 7300);

	/* Another member set than the newest, or a non-member moved: ignored. */
	paxos_membership_command_address(1, 0xf, 2, addr, 7300, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 2, &v), 0);
	paxos_membership_command_address(1, 0x7, 3, addr, 7300, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 3, &v), 0);
	ck_assert(!paxos_membership_address(m, 3, &a, &port));
	/* Port 0, or an id beyond the ids: malformed. */
	paxos_membership_command_address(1, 0x7, 2, addr, 0, buf);
	ck_assert_int_eq(paxos_membership_decode_of(&v, &kind, &from, &set), PAXOS_E_MALFORMED);
	ck_assert_int_eq(paxos_membership_apply(m, 4, &v), 0);
	paxos_membership_command_address(1, 0x7, 2, addr, 7300, buf);
	buf[22] = 40;
	ck_assert_int_eq(paxos_membership_decode_of(&v, &kind, &from, &set), PAXOS_E_MALFORMED);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 1);

	/* Applied in instance 5: configuration 2 from 9, the same sets, acceptor 2 moved. */
	paxos_membership_command_address(1, 0x7, 2, addr, 7300, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 5, &v), 1);
	const struct paxos_configuration *c = paxos_membership_latest(m);
	ck_assert_uint_eq(c->id, 2);
	ck_assert_uint_eq(c->first, 9);
	ck_assert_uint_eq(c->members, 0x7);
	ck_assert_uint_eq(c->proposers, 0x3);
	ck_assert(paxos_membership_address(m, 2, &a, &port));
	ck_assert_uint_eq(a, addr);
	ck_assert_uint_eq(port, 7300);
	/* Chosen again (a retry): made against configuration 1, ignored. */
	ck_assert_int_eq(paxos_membership_apply(m, 6, &v), 0);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 2);
	/* The address travels with the history (config_info, the membership file). */
	uint8_t enc[PAXOS_MEMBERSHIP_ENCODED_MAX];
	size_t len = paxos_membership_encode(m, enc, sizeof(enc));
	struct paxos_membership *d = paxos_membership_decode_history(enc, len, 4);
	ck_assert_ptr_nonnull(d);
	ck_assert(paxos_membership_address(d, 2, &a, &port));
	ck_assert_uint_eq(port, 7300);
	paxos_membership_free(d);
	/* Moved again: the newest address. */
	paxos_membership_skip_to(m, 9);
	paxos_membership_command_address(2, 0x7, 2, addr, 7301, buf);
	ck_assert_int_eq(paxos_membership_apply(m, 10, &v), 1);
	ck_assert(paxos_membership_address(m, 2, &a, &port));
	ck_assert_uint_eq(port, 7301);

	/* The proposer core: a move takes the members in force and its bytes as asked. */
	paxos_membership_skip_to(m, 14);
	struct paxos_counters cnt = {0};
	struct paxos_proposer_options o = {.id = 0,
					   .epoch = 1,
					   .acceptors = 5,
					   .window = 4,
					   .concurrency = 4,
					   .pending_size = 16,
					   .max_value = 256,
					   .phase1_timeout = 100000,
					   .phase2_timeout = 100000,
					   .membership = m};
	struct paxos_proposer *p = paxos_proposer_new(&o, &cnt);
	paxos_membership_command_address(3, 0xf, 2, addr, 7302, buf);
	ck_assert_int_eq(change(p, &v), PAXOS_E_INVALID); /* not the members */
	paxos_membership_command_address(2, 0x7, 2, addr, 7302, buf);
	ck_assert_int_eq(change(p, &v), PAXOS_E_INVALID); /* outdated */
	paxos_membership_command_address(3, 0x7, 2, addr, 7302, buf);
	ck_assert_int_eq(change(p, &v), PAXOS_OK);
	ck_assert(paxos_proposer_change_pending(p));
	paxos_proposer_free(p);
	paxos_membership_free(m);
}
END_TEST

/* ---- acceptor recovery over several configurations ---- */

static void answer(struct paxos_acceptor *a, uint32_t from, uint64_t incarnation)
{
	struct paxos_message m = {.type = PAXOS_MSG_RECOVER_INFO};
	m.u.recover_info = (struct paxos_recover_info){.role = PAXOS_ROLE_ACCEPTOR,
						       .sender_id = from,
						       .acceptor_id = 0,
						       .incarnation = incarnation,
						       .highest_iid = 10,
						       .highest_ballot = 1000};
	struct recorder *r = recorder_new();
	paxos_acceptor_handle(a, &m, &r->emitter);
	recorder_free(r);
}

/* Acceptor 0 recovers with configurations {0,1,3} and {0,1,2}: answers from 1 and 3 cover
 * the newest, not the older one (2's quorum {0,2} is unheard), so it waits for 2 too. */
START_TEST(test_recovery_covers_every_configuration)
{
	struct paxos_counters c = {0};
	struct paxos_storage *st = paxos_storage_memory_new();
	struct paxos_acceptor *a =
	    paxos_acceptor_new(&(struct paxos_acceptor_options){.id = 0}, st, &c);
	struct paxos_acceptor_membership m = {
	    .proposers = 0, .incarnation = 9, .amnesiac = true, .configurations = {0xb, 0x7}};
	ck_assert_int_eq(paxos_acceptor_join(a, &m), PAXOS_OK);
	ck_assert(paxos_acceptor_recovering(a));
	answer(a, 3, 9);
	answer(a, 5, 9); /* in no configuration: counts for none */
	ck_assert(paxos_acceptor_recovering(a));
	answer(a, 1, 9);
	ck_assert(paxos_acceptor_recovering(a));
	answer(a, 2, 9);
	ck_assert(!paxos_acceptor_recovering(a));
	ck_assert_uint_eq(paxos_acceptor_floor(a), 10);
	paxos_acceptor_free(a);
	paxos_storage_destroy(st);
}
END_TEST

static void proposer_answer(struct paxos_acceptor *a, uint32_t from)
{
	struct paxos_message m = {.type = PAXOS_MSG_RECOVER_INFO};
	m.u.recover_info = (struct paxos_recover_info){.role = PAXOS_ROLE_PROPOSER,
						       .sender_id = from,
						       .acceptor_id = 0,
						       .incarnation = 9,
						       .highest_iid = 10,
						       .highest_ballot = 1000 + from};
	struct recorder *r = recorder_new();
	paxos_acceptor_handle(a, &m, &r->emitter);
	recorder_free(r);
}

/* With a proposer set, recovery waits for its members only: proposer 0 was removed (set
 * {1,2} of 4 proposers), so 1 and 2 answering is enough, and 3's answer counts for nothing. */
START_TEST(test_recovery_asks_the_proposer_set)
{
	struct paxos_counters c = {0};
	struct paxos_storage *st = paxos_storage_memory_new();
	struct paxos_acceptor *a =
	    paxos_acceptor_new(&(struct paxos_acceptor_options){.id = 0}, st, &c);
	struct paxos_acceptor_membership m = {.acceptors = 3,
					      .proposers = 4,
					      .incarnation = 9,
					      .amnesiac = true,
					      .proposer_set = 0x6};
	ck_assert_int_eq(paxos_acceptor_join(a, &m), PAXOS_OK);
	answer(a, 1, 9);
	answer(a, 2, 9);
	ck_assert(paxos_acceptor_recovering(a));
	struct paxos_acceptor_recovery_wait w;
	paxos_acceptor_recovery_wait(a, &w);
	ck_assert_uint_eq(w.proposers_silent, 2);
	proposer_answer(a, 3); /* not in the set: not waited for, its ballot counts */
	proposer_answer(a, 1);
	ck_assert(paxos_acceptor_recovering(a));
	paxos_acceptor_recovery_wait(a, &w);
	ck_assert_uint_eq(w.proposers_silent, 1);
	proposer_answer(a, 2);
	ck_assert(!paxos_acceptor_recovering(a));
	ck_assert_uint_eq(paxos_acceptor_fence(a), 1003);
	paxos_acceptor_free(a);
	paxos_storage_destroy(st);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("membership");
	TCase *t = tcase_create("membership");
	tcase_add_test(t, test_history);
	tcase_add_test(t, test_no_change_and_overflow);
	tcase_add_test(t, test_command_format);
	tcase_add_test(t, test_learner_counts_members);
	tcase_add_test(t, test_learner_waits_for_configuration);
	tcase_add_test(t, test_learner_starts_later);
	tcase_add_test(t, test_learner_holds_after_change);
	tcase_add_test(t, test_proposer_counts_members_and_waits);
	tcase_add_test(t, test_proposer_takes_requests);
	tcase_add_test(t, test_client_value_is_no_command);
	tcase_add_test(t, test_recovery_covers_every_configuration);
	tcase_add_test(t, test_proposer_set_changes);
	tcase_add_test(t, test_command_with_address);
	tcase_add_test(t, test_command_moves_a_member);
	tcase_add_test(t, test_recovery_asks_the_proposer_set);
	suite_add_tcase(s, t);
	return s;
}
