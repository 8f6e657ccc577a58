/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Changing the acceptor and proposer sets through the log (paxos/membership.h), as the proposer
 * core sees it: it counts only the members of each instance's configuration, with its quorum,
 * opens nothing while that configuration is not known, takes change requests, tells a client
 * value from a command, and proposes commands that change the proposer set, carry an address
 * or move a member.
 */
#include "check_main.h"
#include <paxos/learner.h>
#include <paxos/membership.h>
#include <paxos/proposer.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "support.h"

/* Proposer `id` of epoch 1 over `acceptors` acceptors and membership m: a window of 4, long
 * timeouts (the tests drive every step). */
static struct paxos_proposer_options options(uint32_t id, uint32_t acceptors,
					     struct paxos_membership *m)
{
	return (struct paxos_proposer_options){.id = id,
					       .epoch = 1,
					       .acceptors = acceptors,
					       .window = 4,
					       .concurrency = 4,
					       .pending_size = 16,
					       .max_value = 256,
					       .phase1_timeout = 100000,
					       .phase2_timeout = 100000,
					       .membership = m};
}

START_TEST(test_proposer_counts_members_and_waits)
{
	struct paxos_membership *m = paxos_membership_new(0x7, 2);
	struct paxos_counters c = {0};
	struct paxos_proposer_options o = options(0, 8, m);
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
	struct paxos_proposer_options o = options(1, 5, m);
	struct paxos_proposer *p = paxos_proposer_new(&o, &c);
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value stale = support_command(4, 0xb, buf);
	ck_assert_int_eq(support_change(p, &stale), PAXOS_E_INVALID);
	struct paxos_value beyond = support_command(1, 0x27, buf); /* id 5: acceptors is 5 */
	ck_assert_int_eq(support_change(p, &beyond), PAXOS_E_INVALID);
	struct paxos_value ok = support_command(1, 0xb, buf);
	ck_assert_int_eq(support_change(p, &ok), PAXOS_OK);
	ck_assert(paxos_proposer_change_pending(p));
	ck_assert_uint_eq(paxos_proposer_pending(p), 0); /* no client value */
	/* Another leader's change is chosen in instance 1: ours is outdated and dropped. */
	uint8_t other_buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value other = support_command(1, 0x1f, other_buf);
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
	struct paxos_proposer_options o = options(0, 5, m);
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
	struct paxos_value beyond = support_command(1, 0x60, buf); /* acceptors 5 and 6 */
	ck_assert_int_eq(paxos_membership_apply(m, 2, &beyond), 0);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 1);
	uint8_t fine_buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value fine = support_command(1, 0x18, fine_buf); /* 3 and 4: in the file */
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
	struct paxos_value grow = support_command(2, 0xf, grow_buf);
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
	struct paxos_proposer_options o = options(1, 5, m);
	struct paxos_proposer *p = paxos_proposer_new(&o, &c);
	struct recorder *rec = recorder_new();
	ck_assert_int_eq(paxos_proposer_change_proposers(p, 0x6, 1, &rec->emitter),
			 PAXOS_E_INVALID); /* in force already */
	ck_assert_int_eq(paxos_proposer_change_proposers(p, 0, 1, &rec->emitter), PAXOS_E_INVALID);
	/* The change of 15 is not in force before 19. */
	ck_assert_int_eq(paxos_proposer_change_proposers(p, 0x2, 1, &rec->emitter), PAXOS_E_FULL);
	paxos_membership_skip_to(m, 18);
	paxos_membership_command_of(PAXOS_MEMBERSHIP_PROPOSERS, 3, 0x2, buf);
	ck_assert_int_eq(support_change(p, &add), PAXOS_E_INVALID); /* stale: 4 is newest */
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
	struct paxos_value s16 = support_command(2, 0x7, small);
	ck_assert_int_eq(paxos_membership_decode_address(&s16, &id, &a, &port), PAXOS_E_MALFORMED);

	/* The proposer core proposes the command as asked, address included. */
	paxos_membership_skip_to(m, 6);
	struct paxos_counters c = {0};
	struct paxos_proposer_options o = options(0, 5, m);
	struct paxos_proposer *p = paxos_proposer_new(&o, &c);
	paxos_membership_command_at(2, 0x1f, 4, addr, 7205, buf);
	ck_assert_int_eq(support_change(p, &v), PAXOS_OK);
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
	struct paxos_proposer_options o = options(0, 5, m);
	struct paxos_proposer *p = paxos_proposer_new(&o, &cnt);
	paxos_membership_command_address(3, 0xf, 2, addr, 7302, buf);
	ck_assert_int_eq(support_change(p, &v), PAXOS_E_INVALID); /* not the members */
	paxos_membership_command_address(2, 0x7, 2, addr, 7302, buf);
	ck_assert_int_eq(support_change(p, &v), PAXOS_E_INVALID); /* outdated */
	paxos_membership_command_address(3, 0x7, 2, addr, 7302, buf);
	ck_assert_int_eq(support_change(p, &v), PAXOS_OK);
	ck_assert(paxos_proposer_change_pending(p));
	paxos_proposer_free(p);
	paxos_membership_free(m);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("membership_proposer");
	TCase *t = tcase_create("proposer");
	tcase_add_test(t, test_proposer_counts_members_and_waits);
	tcase_add_test(t, test_proposer_takes_requests);
	tcase_add_test(t, test_client_value_is_no_command);
	tcase_add_test(t, test_proposer_set_changes);
	tcase_add_test(t, test_command_with_address);
	tcase_add_test(t, test_command_moves_a_member);
	suite_add_tcase(s, t);
	return s;
}
