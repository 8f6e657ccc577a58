/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos_acceptor_handle, paxos_acceptor_handle_batch and paxos_acceptor_tick: a step, the
 * write of its ready and the sending of its replies in one call, for a storage whose commits
 * return durable.
 */
#include "state.h"

/* Takes the ready, writes it, and only then emits what may be sent. */
static int write_and_emit(struct paxos_acceptor *a, const struct paxos_emitter *out)
{
	struct paxos_ready rd;
	paxos_acceptor_ready(a, &rd);
	int rc = a->stopped ? PAXOS_OK : paxos_acceptor_write(a->st, &rd);
	if (rc == PAXOS_OK)
		for (size_t i = 0; i < rd.message_count; i++)
			if (acceptor_sendable(a, &rd.messages[i]))
				paxos_emit(out, rd.messages[i].to, &rd.messages[i].m);
	paxos_acceptor_advance(a, rc);
	return rc == PAXOS_OK ? PAXOS_OK : PAXOS_E_STORAGE;
}

int paxos_acceptor_handle_batch(struct paxos_acceptor *a, const struct paxos_message *msgs,
				size_t n, const struct paxos_emitter *out)
{
	if (!a || (!msgs && n > 0) || !out)
		return PAXOS_E_INVALID;
	int rc = acceptor_step_allowed(a);
	if (rc != PAXOS_OK)
		return rc;
	do {
		size_t chunk = n < PAXOS_ACCEPTOR_MAX_BATCH ? n : PAXOS_ACCEPTOR_MAX_BATCH;
		rc = paxos_acceptor_step(a, msgs, chunk);
		int wrc = write_and_emit(a, out); /* a failed step leaves only its hello */
		if (rc == PAXOS_OK)
			rc = wrc;
		if (rc != PAXOS_OK)
			return rc;
		msgs += chunk;
		n -= chunk;
	} while (n > 0);
	return PAXOS_OK;
}

int paxos_acceptor_handle(struct paxos_acceptor *a, const struct paxos_message *m,
			  const struct paxos_emitter *out)
{
	if (!m)
		return PAXOS_E_INVALID;
	return paxos_acceptor_handle_batch(a, m, 1, out);
}

int paxos_acceptor_tick(struct paxos_acceptor *a, const struct paxos_emitter *out)
{
	if (!a || !out)
		return PAXOS_E_INVALID;
	int rc = paxos_acceptor_step_tick(a);
	if (rc == PAXOS_E_INVALID || (rc != PAXOS_OK && !a->stopped))
		return rc;
	int wrc = write_and_emit(a, out);
	return rc != PAXOS_OK ? rc : wrc;
}
