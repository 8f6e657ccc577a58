/* SPDX-License-Identifier: BSD-3-Clause */
/* Authenticated datagrams (lib/net/auth.h): tags that verify only untouched under the same key,
 * key files that are refused unless private and exactly one key long. */
#include "check_main.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <paxos/types.h>

#include "auth.h"
#include "auth_key.h"
#include "codec.h"

static char dir[] = "/tmp/test_auth.XXXXXX";
static char err[512];

static void setup(void)
{
	strcpy(dir, "/tmp/test_auth.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* dir/name into out. */
static void in_dir(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", dir, name);
}

/* Writes n bytes of fill to path with exactly mode (whatever the umask). */
static void write_file(const char *path, size_t n, uint8_t fill, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	uint8_t buf[256];
	memset(buf, fill, sizeof(buf));
	ck_assert_uint_le(n, sizeof(buf));
	ck_assert_int_eq(write(fd, buf, n), (ssize_t)n);
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

static void key_of(uint8_t key[PAXOS_AUTH_KEY_BYTES], uint8_t fill)
{
	memset(key, fill, PAXOS_AUTH_KEY_BYTES);
	key[0] = 0x42; /* not all one byte: a key of any shape works */
}

/* A real datagram (header and two messages) in buf, room left for the tag; its length. */
static size_t make_datagram(uint8_t *buf, size_t cap)
{
	struct paxos_encoder e;
	struct paxos_header h = {.role = PAXOS_ROLE_PROPOSER, .sender_id = 1};
	paxos_encoder_init(&e, buf, cap - PAXOS_AUTH_TAG_BYTES, &h);
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPT};
	m.u.accept.iid = 7;
	m.u.accept.ballot = 101;
	m.u.accept.value = (struct paxos_value){(const uint8_t *)"value", 5};
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	m = (struct paxos_message){.type = PAXOS_MSG_PREPARE};
	m.u.prepare.iid = 8;
	m.u.prepare.ballot = 101;
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	return e.len;
}

START_TEST(test_seal_verify_round_trip)
{
	struct paxos_auth a;
	uint8_t key[PAXOS_AUTH_KEY_BYTES], buf[256];
	key_of(key, 1);
	ck_assert_int_eq(paxos_auth_init(&a, key), PAXOS_OK);
	size_t len = make_datagram(buf, sizeof(buf)), payload = 0;
	paxos_auth_seal(&a, buf, len);
	ck_assert(paxos_auth_verify(&a, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
	ck_assert_uint_eq(payload, len);

	/* What verifies decodes as it was sent. */
	struct paxos_decoder d;
	struct paxos_header h;
	struct paxos_message msgs[4];
	size_t n;
	paxos_decoder_init(&d);
	ck_assert_int_eq(paxos_decode(&d, buf, payload, &h, msgs, 4, &n), PAXOS_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(msgs[0].u.accept.iid, 7);
	/* The decoder alone takes the tag for trailing garbage: it must be stripped first. */
	ck_assert_int_eq(paxos_decode(&d, buf, len + PAXOS_AUTH_TAG_BYTES, &h, msgs, 4, &n),
			 PAXOS_E_MALFORMED);
	paxos_decoder_destroy(&d);

	/* Sealed again, the same bytes get another nonce, hence another authenticator; both
	 * verify. The nonce is this sender's prefix and a count of its datagrams. */
	uint8_t again[256];
	memcpy(again, buf, len);
	paxos_auth_seal(&a, again, len);
	ck_assert_mem_eq(again, buf, len);
	ck_assert_mem_eq(again + len, buf + len, PAXOS_AUTH_PREFIX_BYTES);
	ck_assert_uint_eq(buf[len + PAXOS_AUTH_PREFIX_BYTES], 1);
	ck_assert_uint_eq(again[len + PAXOS_AUTH_PREFIX_BYTES], 2);
	ck_assert_mem_ne(again + len + PAXOS_AUTH_NONCE_BYTES, buf + len + PAXOS_AUTH_NONCE_BYTES,
			 PAXOS_AUTH_MAC_BYTES);
	ck_assert(paxos_auth_verify(&a, again, len + PAXOS_AUTH_TAG_BYTES, &payload));
	ck_assert(paxos_auth_verify(&a, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
	/* An empty payload has a tag too. */
	paxos_auth_seal(&a, again, 0);
	ck_assert(paxos_auth_verify(&a, again, PAXOS_AUTH_TAG_BYTES, &payload));
	ck_assert_uint_eq(payload, 0);
}
END_TEST

/* The tag is standard XChaCha20-Poly1305 (IETF): libsodium's one-call AEAD, with an empty
 * message and the payload as additional data, gives the same authenticator for its nonce,
 * and verifies it; the subkeys auth.c keeps change nothing. */
START_TEST(test_tag_is_xchacha20poly1305)
{
	struct paxos_auth a, b;
	uint8_t key[PAXOS_AUTH_KEY_BYTES], buf[256], mac[PAXOS_AUTH_MAC_BYTES], none[1] = {0};
	unsigned long long maclen;
	key_of(key, 5);
	ck_assert_int_eq(paxos_auth_init(&a, key), PAXOS_OK);
	ck_assert_int_eq(paxos_auth_init(&b, key), PAXOS_OK);
	size_t len = make_datagram(buf, sizeof(buf)), payload;
	for (int i = 0; i < 3; i++) {
		paxos_auth_seal(&a, buf, len);
		const uint8_t *nonce = buf + len;
		ck_assert_int_eq(crypto_aead_xchacha20poly1305_ietf_encrypt_detached(
				     none, mac, &maclen, none, 0, buf, len, NULL, nonce, key),
				 0);
		ck_assert_uint_eq(maclen, PAXOS_AUTH_MAC_BYTES);
		ck_assert_mem_eq(mac, nonce + PAXOS_AUTH_NONCE_BYTES, PAXOS_AUTH_MAC_BYTES);
		/* b hears a for the first time, then from its remembered subkey. */
		ck_assert(paxos_auth_verify(&b, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
	}
	/* And what libsodium's AEAD makes under a nonce of anyone's choice verifies, the count's
	 * top bit clear (set, it says AES-256-GCM). */
	randombytes_buf(buf + len, PAXOS_AUTH_NONCE_BYTES);
	buf[len + PAXOS_AUTH_NONCE_BYTES - 1] &= 0x7f;
	crypto_aead_xchacha20poly1305_ietf_encrypt_detached(
	    none, buf + len + PAXOS_AUTH_NONCE_BYTES, &maclen, none, 0, buf, len, NULL, buf + len,
	    key);
	ck_assert(paxos_auth_verify(&a, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
}
END_TEST

/* Two preparations of one key (two processes) never share a nonce prefix. */
START_TEST(test_senders_draw_their_own_prefix)
{
	struct paxos_auth a, b;
	uint8_t key[PAXOS_AUTH_KEY_BYTES], x[64], y[64];
	key_of(key, 6);
	ck_assert_int_eq(paxos_auth_init(&a, key), PAXOS_OK);
	ck_assert_int_eq(paxos_auth_init(&b, key), PAXOS_OK);
	memset(x, 7, sizeof(x));
	memset(y, 7, sizeof(y));
	paxos_auth_seal(&a, x, 8);
	paxos_auth_seal(&b, y, 8);
	ck_assert_mem_eq(x, y, 8);
	ck_assert_mem_ne(x + 8, y + 8, PAXOS_AUTH_PREFIX_BYTES);
	ck_assert_mem_ne(x + 8 + PAXOS_AUTH_NONCE_BYTES, y + 8 + PAXOS_AUTH_NONCE_BYTES,
			 PAXOS_AUTH_MAC_BYTES);
}
END_TEST

/* One byte changed in the payload, the nonce's prefix, its count or the authenticator: the
 * datagram is refused, by a receiver that heard the sender before (its subkey remembered)
 * and by one that did not. */
START_TEST(test_tampered_byte_fails)
{
	struct paxos_auth a, heard, fresh;
	uint8_t key[PAXOS_AUTH_KEY_BYTES], buf[256];
	key_of(key, 7);
	ck_assert_int_eq(paxos_auth_init(&a, key), PAXOS_OK);
	ck_assert_int_eq(paxos_auth_init(&heard, key), PAXOS_OK);
	size_t len = make_datagram(buf, sizeof(buf)), payload = 99;
	paxos_auth_seal(&a, buf, len);
	size_t total = len + PAXOS_AUTH_TAG_BYTES;
	ck_assert(paxos_auth_verify(&heard, buf, total, &payload));
	const size_t at[] = {0,
			     len / 2,
			     len - 1, /* payload */
			     len,
			     len + PAXOS_AUTH_PREFIX_BYTES - 1, /* nonce prefix */
			     len + PAXOS_AUTH_PREFIX_BYTES,
			     len + PAXOS_AUTH_NONCE_BYTES - 1, /* count */
			     len + PAXOS_AUTH_NONCE_BYTES,
			     total - 1 /* authenticator */};
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		buf[at[i]] ^= 0x5a;
		ck_assert_int_eq(paxos_auth_init(&fresh, key), PAXOS_OK);
		payload = 99;
		ck_assert_msg(!paxos_auth_verify(&heard, buf, total, &payload), "byte %zu", at[i]);
		ck_assert_msg(!paxos_auth_verify(&fresh, buf, total, &payload), "byte %zu", at[i]);
		ck_assert_msg(!paxos_auth_verify(&a, buf, total, &payload), "byte %zu", at[i]);
		ck_assert_uint_eq(payload, 99);
		buf[at[i]] ^= 0x5a;
	}
	ck_assert(paxos_auth_verify(&heard, buf, total, &payload));
	ck_assert(paxos_auth_verify(&fresh, buf, total, &payload));
}
END_TEST

/* More senders than a receiver remembers subkeys for, interleaved: every datagram verifies
 * whether its sender's subkey was remembered, evicted or never known, and a forgery under a
 * remembered prefix still fails. */
START_TEST(test_many_senders)
{
	enum { SENDERS = 3 * PAXOS_AUTH_SUBKEY_SETS };
	static struct paxos_auth senders[SENDERS];
	struct paxos_auth rx;
	uint8_t key[PAXOS_AUTH_KEY_BYTES], buf[128];
	key_of(key, 8);
	ck_assert_int_eq(paxos_auth_init(&rx, key), PAXOS_OK);
	for (size_t s = 0; s < SENDERS; s++)
		ck_assert_int_eq(paxos_auth_init(&senders[s], key), PAXOS_OK);
	size_t payload;
	for (int round = 0; round < 4; round++) {
		for (size_t s = 0; s < SENDERS; s++) {
			size_t i = (s * 7 + (size_t)round) % SENDERS; /* another order each round */
			memset(buf, (int)i, 40);
			paxos_auth_seal(&senders[i], buf, 40);
			ck_assert_msg(
			    paxos_auth_verify(&rx, buf, 40 + PAXOS_AUTH_TAG_BYTES, &payload),
			    "sender %zu round %d", i, round);
			buf[3] ^= 1;
			ck_assert(
			    !paxos_auth_verify(&rx, buf, 40 + PAXOS_AUTH_TAG_BYTES, &payload));
		}
	}
}
END_TEST

START_TEST(test_every_flipped_bit_fails)
{
	struct paxos_auth a;
	uint8_t key[PAXOS_AUTH_KEY_BYTES], buf[256];
	key_of(key, 2);
	ck_assert_int_eq(paxos_auth_init(&a, key), PAXOS_OK);
	size_t len = make_datagram(buf, sizeof(buf)) + PAXOS_AUTH_TAG_BYTES, payload = 12345;
	paxos_auth_seal(&a, buf, len - PAXOS_AUTH_TAG_BYTES);
	/* Payload and tag alike. */
	for (size_t bit = 0; bit < len * 8; bit++) {
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ck_assert_msg(!paxos_auth_verify(&a, buf, len, &payload), "bit %zu", bit);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	ck_assert_uint_eq(payload, 12345); /* untouched by a failure */
	ck_assert(paxos_auth_verify(&a, buf, len, &payload));
}
END_TEST

START_TEST(test_truncated_or_extended_fails)
{
	struct paxos_auth a;
	uint8_t key[PAXOS_AUTH_KEY_BYTES], buf[256];
	key_of(key, 3);
	ck_assert_int_eq(paxos_auth_init(&a, key), PAXOS_OK);
	size_t len = make_datagram(buf, sizeof(buf)) + PAXOS_AUTH_TAG_BYTES, payload;
	paxos_auth_seal(&a, buf, len - PAXOS_AUTH_TAG_BYTES);
	for (size_t cut = 0; cut < len; cut++)
		ck_assert_msg(!paxos_auth_verify(&a, buf, cut, &payload), "cut to %zu", cut);
	buf[len] = 0;
	ck_assert(!paxos_auth_verify(&a, buf, len + 1, &payload));
	/* No tag at all (a datagram of an unkeyed node) fails too. */
	len = make_datagram(buf, sizeof(buf));
	ck_assert(!paxos_auth_verify(&a, buf, len, &payload));
}
END_TEST

START_TEST(test_wrong_key_fails)
{
	struct paxos_auth a, b;
	uint8_t key[PAXOS_AUTH_KEY_BYTES], buf[256];
	key_of(key, 4);
	ck_assert_int_eq(paxos_auth_init(&a, key), PAXOS_OK);
	key[PAXOS_AUTH_KEY_BYTES - 1] ^= 1; /* one bit apart */
	ck_assert_int_eq(paxos_auth_init(&b, key), PAXOS_OK);
	size_t len = make_datagram(buf, sizeof(buf)), payload;
	paxos_auth_seal(&a, buf, len);
	ck_assert(!paxos_auth_verify(&b, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
	paxos_auth_seal(&b, buf, len);
	ck_assert(!paxos_auth_verify(&a, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
	ck_assert(paxos_auth_verify(&b, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
}
END_TEST

/* Each partition tags under a key of its own (auth_key.h): a datagram of partition 0 fails
 * in partition 1 like a forgery, so a replay into another partition's groups counts nowhere.
 * Partition 0 keeps the cluster key: a cluster of one partition tags as before. */
START_TEST(test_partitions_tag_under_their_own_keys)
{
	struct paxos_auth p0, p1, p2, p1b;
	uint8_t key[PAXOS_AUTH_KEY_BYTES], k[3][PAXOS_AUTH_KEY_BYTES], buf[256];
	key_of(key, 9);
	for (uint32_t p = 0; p < 3; p++)
		paxos_auth_partition_key(key, p, k[p]);
	ck_assert(memcmp(k[0], key, sizeof(key)) == 0);
	ck_assert(memcmp(k[1], key, sizeof(key)) != 0 && memcmp(k[1], k[2], sizeof(key)) != 0);
	ck_assert_int_eq(paxos_auth_init(&p0, k[0]), PAXOS_OK);
	ck_assert_int_eq(paxos_auth_init(&p1, k[1]), PAXOS_OK);
	ck_assert_int_eq(paxos_auth_init(&p2, k[2]), PAXOS_OK);
	ck_assert_int_eq(paxos_auth_init(&p1b, k[1]), PAXOS_OK); /* another process of 1 */
	size_t len = make_datagram(buf, sizeof(buf)), payload;
	paxos_auth_seal(&p0, buf, len);
	ck_assert(paxos_auth_verify(&p0, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
	ck_assert(!paxos_auth_verify(&p1, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
	ck_assert(!paxos_auth_verify(&p2, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
	paxos_auth_seal(&p1, buf, len);
	ck_assert(paxos_auth_verify(&p1b, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
	ck_assert(!paxos_auth_verify(&p0, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
}
END_TEST

START_TEST(test_keygen_writes_private_random_keys)
{
	char path[300], other[300];
	in_dir(path, sizeof(path), "key");
	in_dir(other, sizeof(other), "other");
	mode_t old = umask(0); /* the file's mode must not depend on the umask */
	ck_assert_int_eq(paxos_auth_write_key(path, false, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(paxos_auth_write_key(other, false, err, sizeof(err)), PAXOS_OK);
	umask(old);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(st.st_size, PAXOS_AUTH_KEY_BYTES);

	uint8_t a[PAXOS_AUTH_KEY_BYTES], b[PAXOS_AUTH_KEY_BYTES];
	ck_assert_int_eq(paxos_auth_read_key(path, a, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(paxos_auth_read_key(other, b, err, sizeof(err)), PAXOS_OK);
	ck_assert(memcmp(a, b, sizeof(a)) != 0);

	/* An existing file is kept unless forced; forced, it is replaced with mode 0600. */
	ck_assert_int_eq(paxos_auth_write_key(path, false, err, sizeof(err)), PAXOS_E_IO);
	char want[600];
	snprintf(want, sizeof(want), "%s: exists; not overwritten (--force replaces it)", path);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(paxos_auth_read_key(path, b, err, sizeof(err)), PAXOS_OK);
	ck_assert_mem_eq(a, b, sizeof(a));
	ck_assert_int_eq(chmod(path, 0644), 0);
	ck_assert_int_eq(paxos_auth_write_key(path, true, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(paxos_auth_read_key(path, b, err, sizeof(err)), PAXOS_OK);
	ck_assert(memcmp(a, b, sizeof(a)) != 0);

	/* Nowhere to write: the reason, naming the file. */
	in_dir(path, sizeof(path), "missing-dir/key");
	ck_assert_int_eq(paxos_auth_write_key(path, false, err, sizeof(err)), PAXOS_E_IO);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	ck_assert_str_eq(err, want);
}
END_TEST

START_TEST(test_loose_key_file_refused)
{
	char path[300], want[900];
	uint8_t key[PAXOS_AUTH_KEY_BYTES];
	in_dir(path, sizeof(path), "key");
	write_file(path, PAXOS_AUTH_KEY_BYTES, 7, 0644);
	ck_assert_int_eq(paxos_auth_read_key(path, key, err, sizeof(err)), PAXOS_E_CONFIG);
	snprintf(want, sizeof(want),
		 "%s: mode 0644 lets others than its owner at the key; refused (chmod 600 %s)",
		 path, path);
	ck_assert_str_eq(err, want);
	ck_assert_ptr_null(paxos_auth_load(path, err, sizeof(err)));
	ck_assert_str_eq(err, want);
	/* Any bit for the group or others is too many; the owner's own bits are its business. */
	static const mode_t refused[] = {0640, 0604, 0620, 0602, 0610, 0601, 0660, 0666};
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
		ck_assert_int_eq(chmod(path, refused[i]), 0);
		ck_assert_int_eq(paxos_auth_read_key(path, key, err, sizeof(err)), PAXOS_E_CONFIG);
		ck_assert_ptr_nonnull(strstr(err, "lets others than its owner"));
	}
	static const mode_t accepted[] = {0600, 0400, 0700};
	for (size_t i = 0; i < sizeof(accepted) / sizeof(*accepted); i++) {
		ck_assert_int_eq(chmod(path, accepted[i]), 0);
		ck_assert_msg(paxos_auth_read_key(path, key, err, sizeof(err)) == PAXOS_OK, "%s",
			      err);
	}
}
END_TEST

START_TEST(test_wrong_size_refused)
{
	char path[300], want[600];
	uint8_t key[PAXOS_AUTH_KEY_BYTES];
	in_dir(path, sizeof(path), "key");
	static const size_t sizes[] = {0,  1, PAXOS_AUTH_KEY_BYTES - 1, PAXOS_AUTH_KEY_BYTES + 1,
				       64, 65};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		write_file(path, sizes[i], 9, 0600);
		ck_assert_int_eq(paxos_auth_read_key(path, key, err, sizeof(err)), PAXOS_E_CONFIG);
		snprintf(want, sizeof(want),
			 "%s: holds %zu bytes, a key is exactly 32 (paxos-keygen writes one)", path,
			 sizes[i]);
		ck_assert_str_eq(err, want);
	}
}
END_TEST

START_TEST(test_unreadable_key_file_refused)
{
	char path[300], want[600];
	uint8_t key[PAXOS_AUTH_KEY_BYTES];
	in_dir(path, sizeof(path), "none");
	ck_assert_int_eq(paxos_auth_read_key(path, key, err, sizeof(err)), PAXOS_E_IO);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(chmod(dir, 0700), 0);
	ck_assert_int_eq(paxos_auth_read_key(dir, key, err, sizeof(err)), PAXOS_E_CONFIG);
	snprintf(want, sizeof(want), "%s: is not a regular file (a key file is 32 bytes)", dir);
	ck_assert_str_eq(err, want);
}
END_TEST

/* A FIFO as key file is refused at once: opening it must not wait for a writer. */
START_TEST(test_fifo_key_file_refused_without_blocking)
{
	char path[300], want[600];
	uint8_t key[PAXOS_AUTH_KEY_BYTES];
	in_dir(path, sizeof(path), "fifo");
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(paxos_auth_read_key(path, key, err, sizeof(err)), PAXOS_E_CONFIG);
	snprintf(want, sizeof(want), "%s: is not a regular file (a key file is 32 bytes)", path);
	ck_assert_str_eq(err, want);
}
END_TEST

START_TEST(test_loaded_key_tags_like_its_bytes)
{
	char path[300];
	in_dir(path, sizeof(path), "key");
	write_file(path, PAXOS_AUTH_KEY_BYTES, 5, 0600);
	struct paxos_auth *loaded = paxos_auth_load(path, err, sizeof(err));
	ck_assert_msg(loaded != NULL, "%s", err);
	ck_assert_uint_eq((uintptr_t)loaded % _Alignof(struct paxos_auth), 0);
	struct paxos_auth direct;
	uint8_t key[PAXOS_AUTH_KEY_BYTES], buf[256];
	memset(key, 5, sizeof(key));
	ck_assert_int_eq(paxos_auth_init(&direct, key), PAXOS_OK);
	size_t len = make_datagram(buf, sizeof(buf)), payload;
	paxos_auth_seal(loaded, buf, len);
	ck_assert(paxos_auth_verify(&direct, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
	paxos_auth_free(loaded);
	paxos_auth_free(NULL);
}
END_TEST

/* With auth-mac aes256-gcm the tag is standard AES-256-GCM under HChaCha20(key, prefix) with
 * the constant "libpaxos aes-gcm", the nonce 4 zero bytes and the count with its top bit set.
 * Any receiver verifies it, whichever construction it seals with itself; a flipped bit of the
 * payload or of the flag fails. */
START_TEST(test_tag_is_aes256gcm)
{
	struct paxos_auth a, b;
	uint8_t key[PAXOS_AUTH_KEY_BYTES], buf[256], mac[PAXOS_AUTH_MAC_BYTES], none[1] = {0};
	key_of(key, 9);
	ck_assert_int_eq(paxos_auth_init(&a, key), PAXOS_OK);
	ck_assert_int_eq(paxos_auth_init(&b, key), PAXOS_OK);
	ck_assert_str_eq(paxos_auth_mac_name(&a), "chacha20-poly1305");
	if (!crypto_aead_aes256gcm_is_available()) {
		/* Refused with the reason, and the tag of another node not checkable here. */
		ck_assert_int_eq(paxos_auth_use_mac(&a, PAXOS_AUTH_MAC_AES_GCM, err, sizeof(err)),
				 PAXOS_E_CONFIG);
		ck_assert_ptr_nonnull(strstr(err, "AES-NI"));
		ck_assert_int_eq(paxos_auth_use_mac(&a, PAXOS_AUTH_MAC_AUTO, err, sizeof(err)),
				 PAXOS_OK);
		ck_assert_str_eq(paxos_auth_mac_name(&a), "chacha20-poly1305");
		return;
	}
	ck_assert_int_eq(paxos_auth_use_mac(&a, PAXOS_AUTH_MAC_AUTO, err, sizeof(err)), PAXOS_OK);
	ck_assert_str_eq(paxos_auth_mac_name(&a), "aes256-gcm");
	ck_assert_int_eq(paxos_auth_use_mac(&a, PAXOS_AUTH_MAC_AES_GCM, err, sizeof(err)),
			 PAXOS_OK);
	size_t len = make_datagram(buf, sizeof(buf)), payload;
	for (int i = 1; i <= 3; i++) {
		paxos_auth_seal(&a, buf, len);
		const uint8_t *nonce = buf + len;
		ck_assert_uint_eq(nonce[PAXOS_AUTH_PREFIX_BYTES], i);
		ck_assert_uint_eq(nonce[PAXOS_AUTH_NONCE_BYTES - 1], 0x80);
		static const uint8_t constant[16] = "libpaxos aes-gcm";
		uint8_t subkey[PAXOS_AUTH_KEY_BYTES], npub[12] = {0};
		crypto_core_hchacha20(subkey, nonce, key, constant);
		memcpy(npub + 4, nonce + PAXOS_AUTH_PREFIX_BYTES, 8);
		unsigned long long maclen;
		ck_assert_int_eq(crypto_aead_aes256gcm_encrypt_detached(
				     none, mac, &maclen, none, 0, buf, len, NULL, npub, subkey),
				 0);
		ck_assert_mem_eq(mac, nonce + PAXOS_AUTH_NONCE_BYTES, PAXOS_AUTH_MAC_BYTES);
		/* b seals with ChaCha20 and still checks it; a checks its own looped back. */
		ck_assert(paxos_auth_verify(&b, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
		ck_assert_uint_eq(payload, len);
		ck_assert(paxos_auth_verify(&a, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
		ck_assert(!paxos_auth_needs_gcm_cpu(&b, buf, len + PAXOS_AUTH_TAG_BYTES));
	}
	/* The flag is covered: cleared, the datagram is checked as ChaCha20 and fails. */
	buf[len + PAXOS_AUTH_NONCE_BYTES - 1] ^= 0x80;
	ck_assert(!paxos_auth_verify(&b, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
	buf[len + PAXOS_AUTH_NONCE_BYTES - 1] ^= 0x80;
	buf[3] ^= 0x10;
	ck_assert(!paxos_auth_verify(&b, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
	buf[3] ^= 0x10;
	ck_assert(paxos_auth_verify(&b, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
	/* Another key fails, whoever's prefix it claims. */
	struct paxos_auth other;
	uint8_t key2[PAXOS_AUTH_KEY_BYTES];
	key_of(key2, 10);
	ck_assert_int_eq(paxos_auth_init(&other, key2), PAXOS_OK);
	ck_assert(!paxos_auth_verify(&other, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
	/* A ChaCha20 tag of b's still checks at a, which seals with AES-GCM. */
	paxos_auth_seal(&b, buf, len);
	ck_assert_uint_eq(buf[len + PAXOS_AUTH_NONCE_BYTES - 1], 0);
	ck_assert(paxos_auth_verify(&a, buf, len + PAXOS_AUTH_TAG_BYTES, &payload));
}
END_TEST

/* Every bit of an AES-GCM-tagged datagram is covered, the tag's included. */
START_TEST(test_every_flipped_bit_fails_gcm)
{
	if (!crypto_aead_aes256gcm_is_available())
		return;
	struct paxos_auth tx, rx;
	uint8_t key[PAXOS_AUTH_KEY_BYTES], buf[256];
	key_of(key, 11);
	ck_assert_int_eq(paxos_auth_init(&tx, key), PAXOS_OK);
	ck_assert_int_eq(paxos_auth_init(&rx, key), PAXOS_OK);
	ck_assert_int_eq(paxos_auth_use_mac(&tx, PAXOS_AUTH_MAC_AES_GCM, err, sizeof(err)),
			 PAXOS_OK);
	size_t len = make_datagram(buf, sizeof(buf)), payload, total = len + PAXOS_AUTH_TAG_BYTES;
	paxos_auth_seal(&tx, buf, len);
	for (size_t bit = 0; bit < total * 8; bit++) {
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ck_assert(!paxos_auth_verify(&rx, buf, total, &payload));
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	ck_assert(paxos_auth_verify(&rx, buf, total, &payload));
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("auth");
	TCase *tags = tcase_create("tags");
	tcase_add_test(tags, test_seal_verify_round_trip);
	tcase_add_test(tags, test_every_flipped_bit_fails);
	tcase_add_test(tags, test_truncated_or_extended_fails);
	tcase_add_test(tags, test_wrong_key_fails);
	tcase_add_test(tags, test_partitions_tag_under_their_own_keys);
	tcase_add_test(tags, test_tag_is_xchacha20poly1305);
	tcase_add_test(tags, test_senders_draw_their_own_prefix);
	tcase_add_test(tags, test_tampered_byte_fails);
	tcase_add_test(tags, test_many_senders);
	tcase_add_test(tags, test_tag_is_aes256gcm);
	tcase_add_test(tags, test_every_flipped_bit_fails_gcm);
	suite_add_tcase(s, tags);
	TCase *files = tcase_create("key files");
	tcase_add_checked_fixture(files, setup, teardown);
	tcase_add_test(files, test_keygen_writes_private_random_keys);
	tcase_add_test(files, test_loose_key_file_refused);
	tcase_add_test(files, test_wrong_size_refused);
	tcase_add_test(files, test_unreadable_key_file_refused);
	tcase_add_test(files, test_fifo_key_file_refused_without_blocking);
	tcase_add_test(files, test_loaded_key_tags_like_its_bytes);
	suite_add_tcase(s, files);
	return s;
}
