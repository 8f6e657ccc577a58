/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A proposer's membership commands (paxos_proposer_change): one at a time, checked against
 * the newest configuration, proposed by the leader in an instance of its own, and proposed
 * again until chosen or outdated by another change.
 */
#include <paxos/proposer.h>

#include <string.h>

#include "leader_state.h"

/* Our membership command's instance (or one above it) was delivered: it is done when chosen
 * or outdated by another change, else it goes to another instance. */
static void command_delivered(struct paxos_proposer *p, paxos_iid iid, const struct paxos_value *v)
{
	enum paxos_membership_kind kind;
	uint32_t from, set;
	struct paxos_value ours = {p->command.bytes, p->command.len};
	paxos_membership_decode_of(&ours, &kind, &from, &set);
	bool chosen = iid == p->command.in && v && v->len == ours.len &&
		      memcmp(v->data, ours.data, ours.len) == 0;
	p->command.in = 0;
	p->command.wanted = !chosen && paxos_membership_latest(p->o.membership)->id == from;
}

/* A change wanted while another leader's was chosen (all proposers queue the requests) is
 * dropped, not proposed when we lead one day. */
static void command_outdated(struct paxos_proposer *p)
{
	enum paxos_membership_kind kind;
	uint32_t from, set;
	struct paxos_value ours = {p->command.bytes, p->command.len};
	paxos_membership_decode_of(&ours, &kind, &from, &set);
	if (paxos_membership_latest(p->o.membership)->id != from)
		p->command.wanted = false;
}

bool paxos_proposer_change_pending(const struct paxos_proposer *p)
{
	return p->command.wanted || p->command.in;
}

/* A change of configuration from (which must be the newest) to the acceptors or proposers
 * set. */
static int change_from(struct paxos_proposer *p, enum paxos_membership_kind kind, uint32_t from,
		       uint32_t set, const struct paxos_value *raw)
{
	const struct paxos_membership *m = p->o.membership;
	if (!m || set == 0 || from != paxos_membership_latest(m)->id)
		return PAXOS_E_INVALID;
	const struct paxos_configuration *c = paxos_membership_latest(m);
	/* A move (PAXOS_MEMBERSHIP_ADDRESS) names the acceptors as they are, and comes with
	 * its address. */
	if (kind == PAXOS_MEMBERSHIP_ACCEPTORS
		? set == c->members || (p->o.acceptors < 32 && (set >> p->o.acceptors) != 0)
	    : kind == PAXOS_MEMBERSHIP_PROPOSERS ? set == c->proposers
						 : set != c->members || !raw)
		return PAXOS_E_INVALID;
	if (p->o.max_value < (raw ? raw->len : PAXOS_MEMBERSHIP_COMMAND_LEN))
		return PAXOS_E_TOO_BIG;
	if (paxos_proposer_change_pending(p) || paxos_membership_pending(m))
		return PAXOS_E_FULL;
	/* As asked (a command may carry an acceptor's address), else made here. */
	if (raw) {
		memcpy(p->command.bytes, raw->data, raw->len);
		p->command.len = raw->len;
	} else {
		paxos_membership_command_of(kind, from, set, p->command.bytes);
		p->command.len = PAXOS_MEMBERSHIP_COMMAND_LEN;
	}
	p->command.wanted = true;
	return PAXOS_OK;
}

/* A change as asked (paxos_proposer_change). */
int proposer_change_command(struct paxos_proposer *p, const struct paxos_value *command)
{
	enum paxos_membership_kind kind;
	uint32_t from, set;
	if (!command || paxos_membership_decode_of(command, &kind, &from, &set) != PAXOS_OK)
		return PAXOS_E_INVALID;
	return change_from(p, kind, from, set, command);
}

/* A change of the newest configuration's acceptors or proposers to set. */
int proposer_change_set(struct paxos_proposer *p, enum paxos_membership_kind kind, uint32_t set)
{
	const struct paxos_membership *m = p->o.membership;
	return change_from(p, kind, m ? paxos_membership_latest(m)->id : 0, set, NULL);
}

/* The instance iid was delivered with v. */
void proposer_command_delivered(struct paxos_proposer *p, paxos_iid iid,
				const struct paxos_value *v)
{
	if (p->command.in && p->command.in <= iid)
		command_delivered(p, iid, v);
	else if (p->command.wanted)
		command_outdated(p);
}

/* Leadership lost: a command released with its instance is proposed again when leading. */
void proposer_command_released(struct paxos_proposer *p)
{
	if (p->command.in) {
		p->command.in = 0;
		p->command.wanted = true;
	}
}
