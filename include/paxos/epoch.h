/* Proposer epochs kept on disk (lib/storage/epoch.c): the proposer core only asks for them
 * through paxos_proposer_options.epoch and .raise_epoch. */
#ifndef PAXOS_EPOCH_H
#define PAXOS_EPOCH_H

#include <paxos/config.h>
#include <paxos/proposer.h>

/*
 * Durable incarnation numbers (lib/storage/epoch.c), in <storage-path>/proposer-<id>/epoch.
 * next_epoch reads the stored epoch (0 when there is none), stores it plus one (temporary
 * file, fsync, rename, fsync of the directory) and returns that in *epoch: the epoch of the
 * proposer starting now, below PAXOS_PLAUSIBLE_EPOCHS. raise_epoch stores epoch (below
 * PAXOS_PLAUSIBLE_EPOCHS) unless a higher one is stored already.
 * Both return PAXOS_OK, or an error with a message in err (a corrupt file is not overwritten).
 */
PAXOS_API int paxos_proposer_next_epoch(const struct paxos_config *cfg, uint32_t proposer_id,
					uint32_t *epoch, char *err, size_t errlen);
PAXOS_API int paxos_proposer_raise_epoch(const struct paxos_config *cfg, uint32_t proposer_id,
					 uint32_t epoch, char *err, size_t errlen);

#endif
