/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MAC of a membership change (PAXOS_MSG_CHANGE, paxos.conf admin-key-file): HMAC-SHA-512-256
 * (libsodium's crypto_auth) under the operators' key of a label, the partition, the flags and
 * the command. The cluster key (auth-key-file) proves a datagram comes from some member or
 * client; this one that a change comes from an operator. The partition and the flags are
 * covered, so a change cannot be taken to another partition or have --force added.
 */
#ifndef PAXOS_ADMIN_MAC_H
#define PAXOS_ADMIN_MAC_H

#include <paxos/message.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of the key file (paxos-keygen writes one). */
#define PAXOS_ADMIN_KEY_BYTES 32u

/* Reads the key in path, with auth-key-file's rules (paxos_auth_read_key). PAXOS_OK, or an
 * error with "PATH: what is wrong" in err. */
int paxos_admin_key_read(const char *path, uint8_t key[PAXOS_ADMIN_KEY_BYTES], char *err,
			 size_t errlen);

/* Writes the MAC of (partition, flags, command) under key into mac. */
void paxos_admin_mac(const uint8_t key[PAXOS_ADMIN_KEY_BYTES], uint32_t partition, uint32_t flags,
		     const struct paxos_value *command, uint8_t mac[PAXOS_CHANGE_MAC_BYTES]);

/* Whether change c carries the MAC of its command and flags for partition under key (in
 * constant time). */
bool paxos_admin_mac_valid(const uint8_t key[PAXOS_ADMIN_KEY_BYTES], uint32_t partition,
			   const struct paxos_change *c);

/* Wipes a key from memory. */
void paxos_admin_key_wipe(uint8_t key[PAXOS_ADMIN_KEY_BYTES]);

#endif
