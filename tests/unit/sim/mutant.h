/* SPDX-License-Identifier: BSD-3-Clause */
/* Broken acceptor variants for the checker's mutation test (see mutant.c). */
#ifndef PAXOS_SIM_MUTANT_H
#define PAXOS_SIM_MUTANT_H

#include "sim.h"

#include <paxos/acceptor.h>

/* Handles m as acceptor `id` would under the mutant (the real core for SIM_MUTANT_NONE and
 * for whatever the mutant does not change). */
int mutant_handle(enum sim_mutant mutant, struct paxos_acceptor *core, uint32_t id,
		  struct paxos_storage *st, const struct paxos_message *m,
		  const struct paxos_emitter *out);

/* The storage a restarted acceptor finds: the same one, or under SIM_MUTANT_AMNESIA a fresh,
 * empty one (st is destroyed), as with volatile storage. */
struct paxos_storage *mutant_restart_storage(enum sim_mutant mutant, struct paxos_storage *st);

#endif
