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

int paxos_auth_init(struct paxos_auth *a, const uint8_t key[PAXOS_AUTH_KEY_BYTES])
{
	if (sodium_init() < 0)
		return PAXOS_E_IO;
	crypto_generichash_init(&a->keyed, key, PAXOS_AUTH_KEY_BYTES, PAXOS_AUTH_TAG_BYTES);
	return PAXOS_OK;
}

struct paxos_auth *paxos_auth_load(const char *path, char *err, size_t errlen)
{
	uint8_t key[PAXOS_AUTH_KEY_BYTES];
	if (paxos_auth_read_key(path, key, err, errlen) != PAXOS_OK)
		return NULL;
	/* malloc's alignment is 16 bytes, the state's 64; its size is a multiple of that. */
	struct paxos_auth *a = aligned_alloc(_Alignof(struct paxos_auth), sizeof(*a));
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

/* The tag of buf[0..len) into tag. */
static void compute_tag(const struct paxos_auth *a, const uint8_t *buf, size_t len,
			uint8_t tag[PAXOS_AUTH_TAG_BYTES])
{
	crypto_generichash_state st = a->keyed; /* plain data: a copy is a keyed state */
	crypto_generichash_update(&st, buf, len);
	crypto_generichash_final(&st, tag, PAXOS_AUTH_TAG_BYTES);
}

void paxos_auth_seal(const struct paxos_auth *a, uint8_t *buf, size_t len)
{
	compute_tag(a, buf, len, buf + len);
}

bool paxos_auth_verify(const struct paxos_auth *a, const uint8_t *buf, size_t len,
		       size_t *payload_len)
{
	uint8_t tag[PAXOS_AUTH_TAG_BYTES];
	if (len < PAXOS_AUTH_TAG_BYTES)
		return false;
	size_t n = len - PAXOS_AUTH_TAG_BYTES;
	compute_tag(a, buf, n, tag);
	if (sodium_memcmp(tag, buf + n, PAXOS_AUTH_TAG_BYTES) != 0)
		return false;
	*payload_len = n;
	return true;
}
