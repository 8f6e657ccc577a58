/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datagram tags and key files (format in auth.h). A key file is the 32 key bytes alone: no
 * encoding to get wrong, and its size alone tells a key from anything else.
 */
#include "auth.h"

#include "error.h"

#include <paxos/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Permission bits that let anyone but the owner at the key. */
#define NOT_OWNER_BITS (S_IRWXG | S_IRWXO)

static int io_error(const char *path, const char *what, char *err, size_t errlen)
{
	paxos_error_format(err, errlen, "%s: %s%s%s", path, what ? what : "", what ? ": " : "",
			   strerror(errno));
	return PAXOS_E_IO;
}

/* Reads exactly n bytes; false on an error or an early end (errno says which, 0 for the end). */
static bool read_all(int fd, uint8_t *buf, size_t n)
{
	while (n > 0) {
		ssize_t got = read(fd, buf, n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got == 0)
				errno = 0;
			return false;
		}
		buf += got;
		n -= (size_t)got;
	}
	return true;
}

static bool write_all(int fd, const uint8_t *buf, size_t n)
{
	while (n > 0) {
		ssize_t put = write(fd, buf, n);
		if (put < 0 && errno == EINTR)
			continue;
		if (put <= 0)
			return false;
		buf += put;
		n -= (size_t)put;
	}
	return true;
}

int paxos_auth_read_key(const char *path, uint8_t key[PAXOS_AUTH_KEY_BYTES], char *err,
			size_t errlen)
{
	/* Without blocking: a FIFO must not hold the start up (fstat refuses it below). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return io_error(path, NULL, err, errlen);
	/* Checked on the open file, so what is checked is what is read. */
	struct stat st;
	int rc = PAXOS_E_CONFIG;
	if (fstat(fd, &st) != 0) {
		rc = io_error(path, NULL, err, errlen);
	} else if (!S_ISREG(st.st_mode)) {
		paxos_error_format(err, errlen,
				   "%s: is not a regular file (a key file is %u bytes)", path,
				   PAXOS_AUTH_KEY_BYTES);
	} else if (st.st_mode & NOT_OWNER_BITS) {
		paxos_error_format(err, errlen,
				   "%s: mode %04o lets others than its owner at the key; "
				   "refused (chmod 600 %s)",
				   path, (unsigned)(st.st_mode & 07777), path);
	} else if (st.st_size != PAXOS_AUTH_KEY_BYTES) {
		paxos_error_format(err, errlen,
				   "%s: holds %lld bytes, a key is exactly %u (paxos-keygen "
				   "writes one)",
				   path, (long long)st.st_size, PAXOS_AUTH_KEY_BYTES);
	} else if (!read_all(fd, key, PAXOS_AUTH_KEY_BYTES)) {
		if (errno)
			rc = io_error(path, NULL, err, errlen);
		else
			paxos_error_format(err, errlen, "%s: shrank while it was read", path);
	} else {
		rc = PAXOS_OK;
	}
	close(fd);
	if (rc != PAXOS_OK)
		sodium_memzero(key, PAXOS_AUTH_KEY_BYTES);
	return rc;
}

/* Writes key to fd (mode 0600 whatever the umask) and makes it durable. */
static bool write_key_file(int fd, const uint8_t *key)
{
	return fchmod(fd, S_IRUSR | S_IWUSR) == 0 && write_all(fd, key, PAXOS_AUTH_KEY_BYTES) &&
	       fsync(fd) == 0;
}

/* Creates path for key; an existing file, or a symlink planted there, is never touched. */
static int create_key_file(const char *path, const uint8_t *key, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, S_IRUSR | S_IWUSR);
	if (fd < 0 && errno == EEXIST) {
		paxos_error_format(err, errlen, "%s: exists; not overwritten (--force replaces it)",
				   path);
		return PAXOS_E_IO;
	}
	if (fd < 0)
		return io_error(path, NULL, err, errlen);
	int rc = PAXOS_OK;
	if (!write_key_file(fd, key)) {
		rc = io_error(path, "cannot write", err, errlen);
		unlink(path);
	}
	close(fd);
	return rc;
}

/* A new file renamed over path: readers see the old key or the new one, never half of
 * each, and a looser mode the old file had goes with it. */
static int replace_key_file(const char *path, const uint8_t *key, char *err, size_t errlen)
{
	char tmp[4096];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp)) {
		paxos_error_format(err, errlen, "%s: path too long", path);
		return PAXOS_E_IO;
	}
	int fd = mkstemp(tmp);
	if (fd < 0)
		return io_error(tmp, "cannot create", err, errlen);
	bool ok = write_key_file(fd, key);
	close(fd);
	if (!ok || rename(tmp, path) != 0) {
		int rc = io_error(path, "cannot write", err, errlen);
		unlink(tmp);
		return rc;
	}
	return PAXOS_OK;
}

int paxos_auth_write_key(const char *path, bool force, char *err, size_t errlen)
{
	uint8_t key[PAXOS_AUTH_KEY_BYTES];
	if (sodium_init() < 0) {
		paxos_error_format(err, errlen, "%s: libsodium cannot start", path);
		return PAXOS_E_IO;
	}
	randombytes_buf(key, sizeof(key));
	int rc = force ? replace_key_file(path, key, err, errlen)
		       : create_key_file(path, key, err, errlen);
	sodium_memzero(key, sizeof(key));
	return rc;
}

/* HChaCha20's constant for AES-GCM subkeys: another constant than ChaCha20's own, so that a
 * prefix's two subkeys are unrelated and no key serves two constructions. 16 bytes. */
static const uint8_t GCM_SUBKEY_CONSTANT[16] = {'l', 'i', 'b', 'p', 'a', 'x', 'o', 's',
						' ', 'a', 'e', 's', '-', 'g', 'c', 'm'};

/* The count's top bit: set, the datagram is tagged with AES-256-GCM. */
#define GCM_FLAG 0x80u
#define COUNT_TOP (PAXOS_AUTH_NONCE_BYTES - 1)

/* Expands the AES-256-GCM key of prefix into state. */
static void gcm_key(crypto_aead_aes256gcm_state *state, const uint8_t *prefix, const uint8_t *key)
{
	uint8_t subkey[PAXOS_AUTH_KEY_BYTES];
	crypto_core_hchacha20(subkey, prefix, key, GCM_SUBKEY_CONSTANT);
	crypto_aead_aes256gcm_beforenm(state, subkey);
	sodium_memzero(subkey, sizeof(subkey));
}

int paxos_auth_init(struct paxos_auth *a, const uint8_t key[PAXOS_AUTH_KEY_BYTES])
{
	if (sodium_init() < 0)
		return PAXOS_E_IO;
	memset(a, 0, sizeof(*a));
	memcpy(a->key, key, PAXOS_AUTH_KEY_BYTES);
	randombytes_buf(a->prefix, sizeof(a->prefix));
	crypto_core_hchacha20(a->subkey, a->prefix, a->key, NULL);
	a->gcm_cpu = crypto_aead_aes256gcm_is_available() != 0;
	if (a->gcm_cpu)
		gcm_key(&a->gcm, a->prefix, a->key);
	return PAXOS_OK;
}

int paxos_auth_use_mac(struct paxos_auth *a, enum paxos_auth_mac mac, char *err, size_t errlen)
{
	if (mac == PAXOS_AUTH_MAC_AES_GCM && !a->gcm_cpu) {
		paxos_error_format(err, errlen,
				   "auth-mac aes256-gcm: this CPU has no AES-NI and PCLMUL; use "
				   "chacha20-poly1305 (on every node)");
		return PAXOS_E_CONFIG;
	}
	a->seal_gcm = mac == PAXOS_AUTH_MAC_AES_GCM || (mac == PAXOS_AUTH_MAC_AUTO && a->gcm_cpu);
	return PAXOS_OK;
}

const char *paxos_auth_mac_name(const struct paxos_auth *a)
{
	return a->seal_gcm ? "aes256-gcm" : "chacha20-poly1305";
}

bool paxos_auth_needs_gcm_cpu(const struct paxos_auth *a, const uint8_t *buf, size_t len)
{
	return !a->gcm_cpu && len >= PAXOS_AUTH_TAG_BYTES &&
	       (buf[len - PAXOS_AUTH_MAC_BYTES - 1] & GCM_FLAG);
}

struct paxos_auth *paxos_auth_load(const char *path, char *err, size_t errlen)
{
	uint8_t key[PAXOS_AUTH_KEY_BYTES];
	if (paxos_auth_read_key(path, key, err, errlen) != PAXOS_OK)
		return NULL;
	struct paxos_auth *a = malloc(sizeof(*a));
	if (!a) {
		paxos_error_format(err, errlen, "%s: out of memory", path);
	} else if (paxos_auth_init(a, key) != PAXOS_OK) {
		paxos_error_format(err, errlen, "%s: libsodium cannot start", path);
		free(a);
		a = NULL;
	}
	sodium_memzero(key, sizeof(key));
	return a;
}

void paxos_auth_free(struct paxos_auth *a)
{
	if (!a)
		return;
	sodium_memzero(a, sizeof(*a));
	free(a);
}

/* XChaCha20-Poly1305 (IETF) in two steps, as libsodium composes it: the nonce's first 16
 * bytes and the key give an HChaCha20 subkey, its last 8 (behind 4 zero bytes) the IETF
 * ChaCha20-Poly1305 nonce under that subkey. A sender's prefix never changes and a receiver
 * hears few senders, so the subkey is derived once per sender, not once per datagram. */

/* The remembered subkeys of nonce's prefix, or derived now in place of the set's least
 * recently used. Not for this sender's own prefix. */
static struct paxos_auth_subkey *subkeys_of(struct paxos_auth *a, const uint8_t *nonce)
{
	/* The prefix is random (an attacker's too: he chooses only which set he evicts). */
	size_t set = nonce[0] % PAXOS_AUTH_SUBKEY_SETS;
	struct paxos_auth_subkey *ways = a->seen[set];
	for (uint8_t w = 0; w < 2; w++) {
		if (ways[w].used && memcmp(ways[w].prefix, nonce, PAXOS_AUTH_PREFIX_BYTES) == 0) {
			a->recent[set] = w;
			return &ways[w];
		}
	}
	uint8_t w = !ways[0].used ? 0 : !ways[1].used ? 1 : (uint8_t)!a->recent[set];
	memcpy(ways[w].prefix, nonce, PAXOS_AUTH_PREFIX_BYTES);
	crypto_core_hchacha20(ways[w].key, nonce, a->key, NULL);
	ways[w].used = true;
	ways[w].gcm_ready = false;
	a->recent[set] = w;
	return &ways[w];
}

/* Whether nonce is one of this sender's own: multicast loops its datagrams back. */
static bool own_prefix(const struct paxos_auth *a, const uint8_t *nonce)
{
	return memcmp(nonce, a->prefix, PAXOS_AUTH_PREFIX_BYTES) == 0;
}

/* The ChaCha20 subkey of nonce's prefix. */
static const uint8_t *subkey_of(struct paxos_auth *a, const uint8_t *nonce)
{
	return own_prefix(a, nonce) ? a->subkey : subkeys_of(a, nonce)->key;
}

/* The AES-256-GCM key of nonce's prefix, expanded on first use. */
static const crypto_aead_aes256gcm_state *gcm_of(struct paxos_auth *a, const uint8_t *nonce)
{
	if (own_prefix(a, nonce))
		return &a->gcm;
	struct paxos_auth_subkey *k = subkeys_of(a, nonce);
	if (!k->gcm_ready) {
		gcm_key(&k->gcm, k->prefix, a->key);
		k->gcm_ready = true;
	}
	return &k->gcm;
}

/* The IETF nonce of the XChaCha20 nonce: 4 zero bytes, then its last 8. */
static void ietf_nonce(const uint8_t *nonce,
		       uint8_t out[crypto_aead_chacha20poly1305_IETF_NPUBBYTES])
{
	memset(out, 0, 4);
	memcpy(out + 4, nonce + PAXOS_AUTH_PREFIX_BYTES,
	       PAXOS_AUTH_NONCE_BYTES - PAXOS_AUTH_PREFIX_BYTES);
}

void paxos_auth_seal(struct paxos_auth *a, uint8_t *buf, size_t len)
{
	uint8_t *nonce = buf + len, npub[crypto_aead_chacha20poly1305_IETF_NPUBBYTES];
	uint8_t none[1] = {0}; /* the empty message: libsodium takes no NULL for it */
	unsigned long long maclen;
	uint64_t count = ++a->sealed; /* 2^63 datagrams: never reaches the flag */
	memcpy(nonce, a->prefix, PAXOS_AUTH_PREFIX_BYTES);
	for (unsigned i = 0; i < 8; i++)
		nonce[PAXOS_AUTH_PREFIX_BYTES + i] = (uint8_t)(count >> (8 * i));
	if (a->seal_gcm) {
		nonce[COUNT_TOP] |= GCM_FLAG;
		ietf_nonce(nonce, npub);
		crypto_aead_aes256gcm_encrypt_detached_afternm(none, nonce + PAXOS_AUTH_NONCE_BYTES,
							       &maclen, none, 0, buf, len, NULL,
							       npub, &a->gcm);
		return;
	}
	ietf_nonce(nonce, npub);
	crypto_aead_chacha20poly1305_ietf_encrypt_detached(none, nonce + PAXOS_AUTH_NONCE_BYTES,
							   &maclen, none, 0, buf, len, NULL, npub,
							   a->subkey);
}

bool paxos_auth_verify(struct paxos_auth *a, const uint8_t *buf, size_t len, size_t *payload_len)
{
	if (len < PAXOS_AUTH_TAG_BYTES)
		return false;
	size_t n = len - PAXOS_AUTH_TAG_BYTES;
	const uint8_t *nonce = buf + n;
	uint8_t npub[crypto_aead_chacha20poly1305_IETF_NPUBBYTES], none[1] = {0};
	ietf_nonce(nonce, npub);
	/* Both compare the authenticator in constant time. */
	if (nonce[COUNT_TOP] & GCM_FLAG) {
		if (!a->gcm_cpu || crypto_aead_aes256gcm_decrypt_detached_afternm(
				       none, NULL, none, 0, nonce + PAXOS_AUTH_NONCE_BYTES, buf, n,
				       npub, gcm_of(a, nonce)) != 0)
			return false;
	} else if (crypto_aead_chacha20poly1305_ietf_decrypt_detached(
		       none, NULL, none, 0, nonce + PAXOS_AUTH_NONCE_BYTES, buf, n, npub,
		       subkey_of(a, nonce)) != 0) {
		return false;
	}
	*payload_len = n;
	return true;
}
