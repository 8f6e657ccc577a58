/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Deliberately broken acceptors. The simulation runs them in place of the real core to show
 * that the checker catches what an unsafe acceptor causes: a checker that passes these would
 * prove nothing about the real one.
 */
#include <paxos/storage_backends.h>
#include "mutant.h"

#include <string.h>

/* Grants every accept, even one below its promise (it keeps the higher promise, so only the
 * end-to-end checks can notice). */
static int accept_low(uint32_t id, struct paxos_storage *st, const struct paxos_accept *acc,
		      const struct paxos_emitter *out)
{
	if (acc->iid == 0 || acc->iid <= st->ops->trim_iid(st))
		return PAXOS_OK;
	struct paxos_record rec;
	int rc = st->ops->begin(st);
	if (rc != PAXOS_OK)
		return rc;
	rc = st->ops->get(st, acc->iid, &rec);
	if (rc < 0)
		return rc;
	if (rc == 0)
		memset(&rec, 0, sizeof(rec));
	rec.iid = acc->iid;
	if (acc->ballot > rec.promised)
		rec.promised = acc->ballot;
	rec.accepted = acc->ballot; /* the bug: no "ballot >= promised" test */
	rec.value = acc->value;
	rc = st->ops->put(st, &rec);
	if (rc == PAXOS_OK)
		rc = st->ops->commit(st);
	if (rc != PAXOS_OK)
		return rc;
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted.iid = acc->iid;
	m.u.accepted.ballot = acc->ballot;
	m.u.accepted.value = acc->value;
	m.u.accepted.acceptor_id = id;
	paxos_emit(out, PAXOS_GROUP_LEARNERS, &m);
	return PAXOS_OK;
}

bool mutant_takes(enum sim_mutant mutant, const struct paxos_message *m)
{
	return mutant == SIM_MUTANT_ACCEPT_LOW && m->type == PAXOS_MSG_ACCEPT;
}

int mutant_handle(enum sim_mutant mutant, uint32_t id, struct paxos_storage *st,
		  const struct paxos_message *m, const struct paxos_emitter *out)
{
	(void)mutant;
	return accept_low(id, st, &m->u.accept, out);
}

struct paxos_storage *mutant_restart_storage(enum sim_mutant mutant, struct paxos_storage *st)
{
	if (mutant != SIM_MUTANT_AMNESIA)
		return st;
	paxos_storage_destroy(st);
	return paxos_storage_memory_new();
}
