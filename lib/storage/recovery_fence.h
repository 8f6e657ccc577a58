/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The floor and fence of an acceptor that recovered from lost state (see
 * paxos_acceptor_join), kept beside its durable store as DIR/recovery: a restart on that store
 * must go on voting only above them, or it could vote where its lost earlier life did.
 */
#ifndef PAXOS_RECOVERY_FENCE_H
#define PAXOS_RECOVERY_FENCE_H

#include <paxos/types.h>

/* 0 and 0 when there is no file (the store never recovered). */
int paxos_recovery_fence_read(const char *dir, paxos_iid *floor, paxos_ballot *fence, char *err,
			      size_t errlen);

/* Write to a temporary file, fsync, rename, fsync of the directory. */
int paxos_recovery_fence_write(const char *dir, paxos_iid floor, paxos_ballot fence, char *err,
			       size_t errlen);

/* DIR/generation: the generation of the log an acceptor votes in (acceptor/recovery.c), kept
 * whatever its storage so that a new log is named above every one voted in before. 0 when
 * there is no file; kept says whether there is one. --fresh keeps it: it is the highest log any
 * life voted in, not a vote. */
#define GENERATION_FILE "generation"
int paxos_generation_read(const char *dir, uint64_t *generation, bool *kept, char *err,
			  size_t errlen);
/* Makes DIR when missing; then as paxos_recovery_fence_write. */
int paxos_generation_write(const char *dir, uint64_t generation, char *err, size_t errlen);

#endif
