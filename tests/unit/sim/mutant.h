/* SPDX-License-Identifier: BSD-3-Clause */
/* Broken acceptor variants for the checker's mutation test (see mutant.c). */
#ifndef PAXOS_SIM_MUTANT_H
#define PAXOS_SIM_MUTANT_H

#include "sim.h"

#include <paxos/acceptor.h>

/* Whether the mutant handles m itself (mutant_handle); the real core takes the rest. */
bool mutant_takes(enum sim_mutant mutant, const struct paxos_message *m);

/* Handles m, which the mutant takes, as acceptor `id` would under it: on st, at once. */
int mutant_handle(enum sim_mutant mutant, uint32_t id, struct paxos_storage *st,
		  const struct paxos_message *m, const struct paxos_emitter *out);

/* The storage a restarted acceptor finds: the same one, or under SIM_MUTANT_AMNESIA a fresh,
 * empty one (st is destroyed), as with volatile storage. */
struct paxos_storage *mutant_restart_storage(enum sim_mutant mutant, struct paxos_storage *st);

#endif
