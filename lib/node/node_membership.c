/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * membership-alpha: the node's configuration history (paxos/membership.h), which its learner
 * applies and its proposer and acceptor read, and the requests to change it. A request is a
 * membership command sent to the proposers like a client value; the leader proposes it (see
 * paxos_proposer_queue), and it has an effect only once chosen.
 */
#include "log_line.h"
#include "node_internal.h"

#include <stdio.h>

#include "clock.h"
#include "config_fields.h"

struct paxos_membership *node_membership(struct paxos_node *n)
{
	if (n->membership || !n->cfg.membership_alpha)
		return n->membership;
	uint32_t first = n->cfg.initial_members ? n->cfg.initial_members : n->cfg.acceptors;
	uint32_t members = first >= 32 ? UINT32_MAX : (1u << first) - 1;
	n->membership = paxos_membership_new(members, n->cfg.membership_alpha);
	if (!n->membership) {
		node_set_error(n, "out of memory");
		return NULL;
	}
	n->role_counters[PAXOS_ROLE_LEARNER].membership_configuration = 1;
	n->role_counters[PAXOS_ROLE_LEARNER].membership_members = members;
	return n->membership;
}

/* "0,1,3" */
static void members_text(uint32_t members, char *buf, size_t cap)
{
	size_t used = 0;
	buf[0] = 0;
	for (uint32_t rest = members; rest && used < cap; rest &= rest - 1)
		used += (size_t)snprintf(buf + used, cap - used, "%s%d", used ? "," : "",
					 __builtin_ctz(rest));
}

void node_membership_delivered(struct paxos_node *n, paxos_iid iid, const struct paxos_value *v)
{
	uint32_t from, members;
	if (paxos_membership_decode(v, &from, &members) != PAXOS_OK)
		return;
	const struct paxos_configuration *c = paxos_membership_latest(n->membership);
	char text[128];
	members_text(c->members, text, sizeof(text));
	struct paxos_counters *counters = &n->role_counters[PAXOS_ROLE_LEARNER];
	counters->membership_configuration = c->id;
	counters->membership_members = c->members;
	if (c->id == from + 1 && c->members == members && c->first == iid + n->cfg.membership_alpha)
		counters->membership_changes++;
	if (c->id == from + 1 && c->members == members && c->first == iid + n->cfg.membership_alpha)
		paxos_logf(PAXOS_LOG_INFO,
			   "paxos: configuration %u chosen in instance %llu: acceptors %s from "
			   "instance %llu",
			   c->id, (unsigned long long)iid, text, (unsigned long long)c->first);
	else
		paxos_logf(PAXOS_LOG_INFO,
			   "paxos: instance %llu: a membership change made against configuration "
			   "%u is outdated (configuration %u is the newest): ignored",
			   (unsigned long long)iid, from, c->id);
}

uint32_t paxos_node_acceptors_heard(const struct paxos_node *n, uint32_t within_ms)
{
	if (!n)
		return 0;
	paxos_time now = paxos_now(), window = (paxos_time)within_ms * 1000;
	uint32_t heard = 0;
	for (uint32_t i = 0; i < PAXOS_MAX_ACCEPTORS; i++)
		if (n->acceptor_heard[i] && now - n->acceptor_heard[i] <= window)
			heard |= 1u << i;
	return heard;
}

const struct paxos_membership *paxos_node_membership(const struct paxos_node *n)
{
	return n ? n->membership : NULL;
}

int paxos_node_change_membership(struct paxos_node *n, uint32_t members)
{
	if (!n)
		return PAXOS_E_INVALID;
	const struct paxos_membership *m = n->membership;
	if (!m || !n->learner) {
		node_set_error(n, "paxos_node_change_membership: needs membership-alpha and a "
				  "learner on this node");
		return PAXOS_E_INVALID;
	}
	const struct paxos_configuration *c = paxos_membership_latest(m);
	uint32_t ids = n->cfg.acceptors >= 32 ? UINT32_MAX : (1u << n->cfg.acceptors) - 1;
	if (members == 0 || (members & ~ids) || members == c->members) {
		node_set_error(n,
			       "paxos_node_change_membership: members 0x%x: none, an id not below "
			       "acceptors (%u), or the members of configuration %u already",
			       members, n->cfg.acceptors, c->id);
		return PAXOS_E_INVALID;
	}
	if (paxos_membership_pending(m)) {
		node_set_error(
		    n,
		    "paxos_node_change_membership: configuration %u is chosen but not in "
		    "force before instance %llu",
		    c->id, (unsigned long long)c->first);
		return PAXOS_E_FULL;
	}
	uint8_t cmd[PAXOS_MEMBERSHIP_COMMAND_LEN];
	paxos_membership_command(c->id, members, cmd);
	return paxos_node_submit(n, cmd, sizeof(cmd));
}
