/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulator's membership changes (--reconfig): acceptors added, removed, replaced, grown
 * or shrunk by two, and proposer set changes, asked of the leader one at a time; removed
 * acceptors retired once the change is in force, within the budget of what may be lost.
 */
#include "cluster.h"

#include <paxos/storage_backends.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- membership changes (--reconfig) ---- */

/* A removed acceptor stops for good once the change is in force and the budget allows. */
static void retire_removed(struct sim *s)
{
	if (paxos_membership_pending(s->truth) || s->issued)
		return;
	uint32_t members = paxos_membership_latest(s->truth)->members;
	for (uint32_t i = 0; i < s->ids; i++) {
		if (!s->acc[i].present || (members & (1u << i)) || !budget_ok(s, 1u << i))
			continue;
		trace(s, 1, "acceptor %u, removed, stops for good", i);
		if (s->acc[i].up)
			acceptor_crash(s, i);
		s->acc[i].present = false;
		s->acc[i].lose_state = false;
		s->retired_mask |= 1u << i;
	}
}

/* A new acceptor id: it starts empty (it never voted), before the change that adds it. */
static uint32_t add_acceptor(struct sim *s)
{
	uint32_t i = s->ids++;
	struct sim_acceptor *a = &s->acc[i];
	endpoint_init(s, &a->ep, EP_ACCEPTOR, i);
	a->st = paxos_storage_memory_new();
	if (!a->st || !acceptor_start(s, i, false))
		return UINT32_MAX;
	trace(s, 1, "acceptor %u starts, to be added", i);
	schedule(s, s->now + rng_range(&s->rng, 0, ACCEPTOR_REPEAT - 1), SE_ACCEPTOR_TICK, i, 0);
	return i;
}

/* Asks the leader to propose the change asked for (again after a leader change). */
static void issue(struct sim *s)
{
	uint32_t l = pick_proposer(s, 1);
	if (l == UINT32_MAX || paxos_proposer_change_pending(s->prop[l].core))
		return;
	if (s->issued_kind_proposers) {
		int rc = paxos_proposer_change_proposers(s->prop[l].core, s->issued_proposers,
							 s->now, &s->prop[l].ep.emitter);
		trace(s, 1, "proposer %u proposes proposers 0x%x: %s", l, s->issued_proposers,
		      paxos_strerror(rc));
		return;
	}
	int rc = paxos_proposer_change_membership(s->prop[l].core, s->issued_members, s->now,
						  &s->prop[l].ep.emitter);
	trace(s, 1, "proposer %u proposes members 0x%x: %s", l, s->issued_members,
	      paxos_strerror(rc));
}

/* A random member of members, one bit. */
static uint32_t pick_member(struct sim *s, uint32_t members)
{
	uint32_t n = (uint32_t)__builtin_popcount(members);
	uint32_t k = (uint32_t)rng_range(&s->rng, 0, n - 1);
	while (k--)
		members &= members - 1;
	return members & -members;
}

enum reconfig_op {
	OP_ADD,
	OP_REMOVE,
	OP_REPLACE,
	OP_GROW,
	OP_SHRINK,
	OP_ADD_PROPOSER,
	OP_REMOVE_PROPOSER,
	OP_COUNT
};

/* A change of the proposer set: add one that is not a member, or remove one of two or more
 * (never the last). Returns whether one was asked for. */
static bool reconfigure_proposers(struct sim *s, enum reconfig_op op)
{
	const struct paxos_configuration *c = paxos_membership_latest(s->truth);
	uint32_t all = (1u << s->o.proposers) - 1, have = c->proposers & all, next;
	if (op == OP_ADD_PROPOSER) {
		if (have == all)
			return false;
		next = have | pick_member(s, all & ~have);
	} else {
		if (__builtin_popcount(have) < 2)
			return false;
		next = have & ~pick_member(s, have);
	}
	s->issued = true;
	s->issued_kind_proposers = true;
	s->issued_members = c->members;
	s->issued_proposers = next;
	s->issued_from = c->id;
	trace(s, 1, "change asked: proposers 0x%x to 0x%x", have, next);
	issue(s);
	return true;
}

/* The next step: retire what was removed, keep the change asked for going, or ask for a new
 * one: add, remove or replace (a new id) one acceptor, grow or shrink by two. */
void reconfigure(struct sim *s)
{
	truth_advance(s);
	retire_removed(s);
	if (s->issued) {
		issue(s);
		return;
	}
	if (paxos_membership_pending(s->truth) || s->config_count >= MAX_CONFIGS - 1)
		return;
	uint32_t members = paxos_membership_latest(s->truth)->members;
	uint32_t n = (uint32_t)__builtin_popcount(members);
	uint32_t least = s->o.acceptors < 3 ? s->o.acceptors : 3;
	uint32_t fresh = SIM_MAX_ACCEPTORS - s->ids;
	enum reconfig_op op = (enum reconfig_op)rng_range(&s->rng, 0, OP_COUNT - 1);
	uint32_t next = members;
	s->issued_kind_proposers = false;
	switch (op) {
	case OP_ADD_PROPOSER:
	case OP_REMOVE_PROPOSER:
		reconfigure_proposers(s, op);
		return;
	case OP_ADD:
	case OP_REPLACE:
	case OP_GROW: {
		uint32_t adds = op == OP_GROW ? 2 : 1;
		if (fresh < adds || n + adds - (op == OP_REPLACE) > SIM_MAX_ACCEPTORS)
			return;
		if (op == OP_REPLACE) {
			next &= ~pick_member(s, next);
			if (!next)
				return;
		}
		for (uint32_t k = 0; k < adds; k++) {
			uint32_t i = add_acceptor(s);
			if (i == UINT32_MAX)
				return;
			next |= 1u << i;
		}
		break;
	}
	case OP_REMOVE:
	case OP_SHRINK: {
		uint32_t removes = op == OP_SHRINK ? 2 : 1;
		if (n < least + removes)
			return;
		for (uint32_t k = 0; k < removes; k++)
			next &= ~pick_member(s, next);
		break;
	}
	default:
		return;
	}
	s->issued = true;
	s->issued_members = next;
	if (!budget_ok(s, 0)) {
		s->issued = false; /* the new configuration would have no quorum of sound ones */
		return;
	}
	s->issued_from = paxos_membership_latest(s->truth)->id;
	s->issued_members = next;
	trace(s, 1, "change asked: members 0x%x to 0x%x", members, next);
	issue(s);
}
