/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The key a configuration's datagrams are tagged with. Partition 0 (and a cluster of one
 * partition) uses the cluster key of auth-key-file itself; partition P > 0 a key derived from
 * it and P (keyed BLAKE2b of "libpaxos partition" and P), so that a datagram of one partition,
 * replayed into another's groups, fails the check there like a forgery: without it, a tag
 * valid in partition 0 would pass in partition 1, and the message would count in the wrong log.
 */
#ifndef PAXOS_AUTH_KEY_H
#define PAXOS_AUTH_KEY_H

#include <paxos/config.h>

#include "auth.h"

/* The partition's key from cfg's auth-key-file (cfg->partition), prepared as
 * paxos_auth_load does; NULL with "PATH: what is wrong" in err. */
struct paxos_auth *paxos_auth_load_partition(const struct paxos_config *cfg, char *err,
					     size_t errlen);

/* Derives partition's key from the cluster key (key itself for partition 0). */
void paxos_auth_partition_key(const uint8_t key[PAXOS_AUTH_KEY_BYTES], uint32_t partition,
			      uint8_t out[PAXOS_AUTH_KEY_BYTES]);

#endif
