/* SPDX-License-Identifier: BSD-3-Clause */
/* The address that speaks for each member id (origin.h). */
#include "origin.h"

static struct origin *entry(struct origin_table *t, enum paxos_role role, uint32_t id)
{
	if (role == PAXOS_ROLE_ACCEPTOR && id < PAXOS_MAX_ACCEPTORS)
		return &t->acceptors[id];
	if (role == PAXOS_ROLE_PROPOSER && id < PAXOS_MAX_PROPOSERS)
		return &t->proposers[id];
	return 0;
}

enum origin_verdict origin_check(struct origin_table *t, enum paxos_role role, uint32_t id,
				 uint64_t address, paxos_time now, struct origin *was)
{
	struct origin *o = entry(t, role, id);
	*was = (struct origin){0, 0};
	if (!o || address == 0)
		return ORIGIN_SAME;
	*was = *o;
	if (o->address == address) {
		if (now > o->heard)
			o->heard = now;
		return ORIGIN_SAME;
	}
	/* A clock that went back (another thread's reading) is no silence. */
	if (o->address != 0 && (now <= o->heard || now - o->heard < t->silence))
		return ORIGIN_IMPOSTOR;
	o->address = address;
	o->heard = now;
	return ORIGIN_NEW;
}
