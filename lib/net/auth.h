/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Authenticated datagrams (paxos.conf auth-key-file): every datagram ends with a tag, keyed
 * BLAKE2b (libsodium crypto_generichash) of everything before it under a 32-byte key the
 * whole cluster shares. A datagram whose tag does not verify is dropped before it is decoded.
 */
#ifndef PAXOS_AUTH_H
#define PAXOS_AUTH_H

#include <sodium.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A key file holds exactly this many bytes, nothing else (paxos-keygen writes one). */
#define PAXOS_AUTH_KEY_BYTES 32u

/* Bytes the tag adds to every datagram: 128 bits, libsodium's shortest BLAKE2b output. */
#define PAXOS_AUTH_TAG_BYTES 16u

/* A key, absorbed once: each datagram's tag starts from a copy of this state. The state
 * must be 64-byte aligned: allocate one with paxos_auth_load, or declare it. */
struct paxos_auth {
	crypto_generichash_state keyed;
};

/* Reads the key in path. The file must be a regular file no one but its owner may read or
 * write (mode 0600 or stricter) and hold exactly PAXOS_AUTH_KEY_BYTES bytes. Returns PAXOS_OK,
 * or PAXOS_E_IO / PAXOS_E_CONFIG with "PATH: what is wrong" in err. */
int paxos_auth_read_key(const char *path, uint8_t key[PAXOS_AUTH_KEY_BYTES], char *err,
			size_t errlen);

/* Writes a fresh random key to path with mode 0600. An existing file is refused unless
 * force is set (it is then replaced whole, never rewritten in place). Returns PAXOS_OK, or
 * PAXOS_E_IO with "PATH: what is wrong" in err. */
int paxos_auth_write_key(const char *path, bool force, char *err, size_t errlen);

/* Prepares a for key. Returns PAXOS_OK, or PAXOS_E_IO when libsodium cannot start. */
int paxos_auth_init(struct paxos_auth *a, const uint8_t key[PAXOS_AUTH_KEY_BYTES]);

/* path's key (paxos_auth_read_key), prepared in a new allocation; the key leaves no other
 * copy in memory. NULL with err filled on failure. */
struct paxos_auth *paxos_auth_load(const char *path, char *err, size_t errlen);

/* Wipes and frees what paxos_auth_load returned; NULL is fine. */
void paxos_auth_free(struct paxos_auth *a);

/* Writes the tag of buf[0..len) to buf[len..len + PAXOS_AUTH_TAG_BYTES): the caller leaves
 * that room. */
void paxos_auth_seal(const struct paxos_auth *a, uint8_t *buf, size_t len);

/* Whether buf[0..len) is a payload followed by its valid tag (compared in constant time);
 * if so *payload_len is the payload's length. Too short to hold a tag is false. */
bool paxos_auth_verify(const struct paxos_auth *a, const uint8_t *buf, size_t len,
		       size_t *payload_len);

#endif
