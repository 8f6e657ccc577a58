/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Authenticated datagrams (paxos.conf auth-key-file): every datagram ends with a tag, a 24-byte
 * nonce and a 16-byte authenticator of an empty message with everything before the tag as
 * additional data, under a 32-byte key the whole cluster shares. A sender's nonces are a random
 * 16-byte prefix drawn when its key is prepared and a count of its datagrams, so no two
 * datagrams under one key share a nonce. A datagram whose tag does not verify is dropped
 * before it is decoded.
 *
 * Two constructions (paxos.conf auth-mac), told apart by the top bit of the count, which the
 * authenticator covers through the nonce:
 * - bit clear: XChaCha20-Poly1305 (IETF) under the cluster key, as libsodium's one-call AEAD;
 * - bit set: AES-256-GCM (a GMAC) under HChaCha20(cluster key, prefix) with a constant of its
 *   own, and the 96-bit nonce 4 zero bytes and the count. Each sender's prefix gives it a key
 *   of its own, under which its count never repeats: the short GCM nonce is never reused.
 *   With AES-NI and PCLMUL it costs about half of Poly1305 per byte and a fifth per datagram.
 */
#ifndef PAXOS_AUTH_H
#define PAXOS_AUTH_H

#include <paxos/config.h>

#include <sodium.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A key file holds exactly this many bytes, nothing else (paxos-keygen writes one). */
#define PAXOS_AUTH_KEY_BYTES 32u

/* The nonce: PAXOS_AUTH_PREFIX_BYTES random bytes per prepared key, then a 64-bit count
 * (little-endian). */
#define PAXOS_AUTH_NONCE_BYTES 24u
#define PAXOS_AUTH_PREFIX_BYTES 16u
/* The Poly1305 authenticator: 128 bits. */
#define PAXOS_AUTH_MAC_BYTES 16u
/* Bytes the tag (nonce, then authenticator) adds to every datagram. */
#define PAXOS_AUTH_TAG_BYTES (PAXOS_AUTH_NONCE_BYTES + PAXOS_AUTH_MAC_BYTES)

/* Receivers remember the HChaCha20 subkey of this many nonce prefixes (two per set): one per
 * sending process, so each sender costs one derivation, not one per datagram. */
#define PAXOS_AUTH_SUBKEY_SETS 32u

/* The subkeys of one nonce prefix: ChaCha20's, and AES-GCM's expanded when first needed. */
struct paxos_auth_subkey {
	crypto_aead_aes256gcm_state gcm;
	uint8_t prefix[PAXOS_AUTH_PREFIX_BYTES];
	uint8_t key[PAXOS_AUTH_KEY_BYTES];
	bool used;
	bool gcm_ready;
};

/* A prepared key and this sender's nonces. Used by one thread at a time; a process that
 * forks must not seal with the same one on both sides (their nonces would repeat). */
struct paxos_auth {
	crypto_aead_aes256gcm_state gcm; /* this sender's AES-GCM key, when it seals with it */
	uint8_t key[PAXOS_AUTH_KEY_BYTES];
	uint8_t prefix[PAXOS_AUTH_PREFIX_BYTES]; /* of this sender's nonces, and its subkey */
	uint8_t subkey[PAXOS_AUTH_KEY_BYTES];
	uint64_t sealed; /* datagrams sealed so far: the next nonce ends with this plus one */
	bool seal_gcm;   /* seals with AES-256-GCM (else XChaCha20-Poly1305) */
	bool gcm_cpu;    /* this CPU can run AES-256-GCM (AES-NI and PCLMUL) */
	struct paxos_auth_subkey seen[PAXOS_AUTH_SUBKEY_SETS][2];
	uint8_t recent[PAXOS_AUTH_SUBKEY_SETS]; /* per set, the way last used */
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

/* Prepares a for key, with a fresh random nonce prefix, sealing with XChaCha20-Poly1305.
 * Returns PAXOS_OK, or PAXOS_E_IO when libsodium cannot start. */
int paxos_auth_init(struct paxos_auth *a, const uint8_t key[PAXOS_AUTH_KEY_BYTES]);

/* Makes a seal with mac (AUTO: AES-256-GCM if this CPU can). Returns PAXOS_OK, or
 * PAXOS_E_CONFIG with the reason in err when this CPU cannot run AES-256-GCM. */
int paxos_auth_use_mac(struct paxos_auth *a, enum paxos_auth_mac mac, char *err, size_t errlen);

/* The construction a seals with: "aes256-gcm" or "chacha20-poly1305". */
const char *paxos_auth_mac_name(const struct paxos_auth *a);

/* Whether buf[0..len) carries an AES-256-GCM tag this CPU cannot verify (no AES-NI): such a
 * datagram fails paxos_auth_verify whatever its key, and the log says why. */
bool paxos_auth_needs_gcm_cpu(const struct paxos_auth *a, const uint8_t *buf, size_t len);

/* path's key (paxos_auth_read_key), prepared in a new allocation; the key leaves no other
 * copy in memory. NULL with err filled on failure. */
struct paxos_auth *paxos_auth_load(const char *path, char *err, size_t errlen);

/* Wipes and frees what paxos_auth_load returned; NULL is fine. */
void paxos_auth_free(struct paxos_auth *a);

/* Writes the tag of buf[0..len), under a nonce never used before, to
 * buf[len..len + PAXOS_AUTH_TAG_BYTES): the caller leaves that room. */
void paxos_auth_seal(struct paxos_auth *a, uint8_t *buf, size_t len);

/* Whether buf[0..len) is a payload followed by its valid tag (compared in constant time);
 * if so *payload_len is the payload's length. Too short to hold a tag is false. */
bool paxos_auth_verify(struct paxos_auth *a, const uint8_t *buf, size_t len, size_t *payload_len);

#endif
