/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The cores' option structs filled from a configuration (lib/config/options.c): the cores
 * themselves take only their own options and know nothing of paxos.conf.
 */
#ifndef PAXOS_OPTIONS_H
#define PAXOS_OPTIONS_H

#include <paxos/acceptor.h>
#include <paxos/config.h>
#include <paxos/election.h>
#include <paxos/learner.h>
#include <paxos/proposer.h>

/** Fills @p o for acceptor @p id from @p cfg (which it only reads). */
PAXOS_API void paxos_acceptor_options_from_config(struct paxos_acceptor_options *o,
						  const struct paxos_config *cfg, uint32_t id);

/** Fills options from a configuration (callbacks left NULL). */
PAXOS_API void paxos_learner_options_from_config(struct paxos_learner_options *o,
						 const struct paxos_config *cfg);

/** Fills @p o for proposer @p id from @p cfg: epoch 0 and raise_epochs false, which the caller
 * sets (paxos/epoch.h, struct paxos_proposer_ready). */
PAXOS_API void paxos_proposer_options_from_config(struct paxos_proposer_options *o,
						  const struct paxos_config *cfg, uint32_t id);

/** Fills options from a configuration (callback left NULL). */
PAXOS_API void paxos_election_options_from_config(struct paxos_election_options *o,
						  const struct paxos_config *cfg, uint32_t id);

#endif
