/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-bench-mac: what tagging one datagram costs with each candidate construction for
 * auth-key-file, by datagram size, in nanoseconds per datagram (the best of several passes,
 * so that another process taking the core shows as little as possible). The candidates:
 *   blake2b      keyed BLAKE2b, 16-byte output (crypto_generichash; wire version 4)
 *   xchacha-aead XChaCha20-Poly1305 (IETF), empty message, the datagram as additional data
 *   xchacha-ota  crypto_stream_xchacha20 for a one-time key, then crypto_onetimeauth
 *   hmac256      HMAC-SHA-512/256 (crypto_auth), for scale
 *   aes-gcm      AES-256-GCM, empty message, the datagram as additional data (if the CPU has
 *                AES-NI; its 96-bit nonce is too short to draw at random, for scale only)
 *   chacha-subkey xchacha-aead with its HChaCha20 subkey derived once; hchacha20 that step
 *   paxos-seal, paxos-verify  lib/net/auth.c (wire version 5): xchacha-aead as chacha-subkey
 *   paxos-seal-gcm, paxos-verify-gcm  lib/net/auth.c with auth-mac aes256-gcm (AES-NI only)
 * and what a fresh random nonce costs: randombytes_buf(24) against a counter.
 * Usage: paxos-bench-mac [PASSES]
 */
#include <paxos/types.h>

#include "auth.h"

#include <sodium.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SIZE 8192

/* empty: the message of the AEAD candidates, which take no NULL pointers */
static uint8_t key[32], nonce[24], tag[32], buf[MAX_SIZE], empty[1];
static crypto_generichash_state keyed;
static crypto_aead_aes256gcm_state gcm;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void blake2b(size_t len)
{
	crypto_generichash_state st = keyed;
	crypto_generichash_update(&st, buf, len);
	crypto_generichash_final(&st, tag, 16);
}

static void xchacha_aead(size_t len)
{
	unsigned long long taglen;
	crypto_aead_xchacha20poly1305_ietf_encrypt_detached(empty, tag, &taglen, empty, 0, buf, len,
							    NULL, nonce, key);
}

static void xchacha_ota(size_t len)
{
	uint8_t otk[crypto_onetimeauth_KEYBYTES];
	crypto_stream_xchacha20(otk, sizeof(otk), nonce, key);
	crypto_onetimeauth(tag, buf, len, otk);
}

/* xchacha-aead with its HChaCha20 subkey computed once: what a sender that keeps the first 16
 * nonce bytes, and a receiver that remembers that sender's subkey, pay per datagram. */
static uint8_t subkey[32];

static void chacha_subkey(size_t len)
{
	unsigned long long taglen;
	uint8_t npub[12] = {0};
	memcpy(npub + 4, nonce + 16, 8);
	crypto_aead_chacha20poly1305_ietf_encrypt_detached(empty, tag, &taglen, empty, 0, buf, len,
							   NULL, npub, subkey);
}

static void hchacha20(size_t len)
{
	(void)len;
	crypto_core_hchacha20(subkey, nonce, key, NULL);
}

static struct paxos_auth sender, receiver;
static uint8_t sealed[MAX_SIZE + PAXOS_AUTH_TAG_BYTES];

static void paxos_seal(size_t len)
{
	memcpy(sealed, buf, 1); /* as the loop changes buf[0] */
	paxos_auth_seal(&sender, sealed, len);
}

/* Verifies one datagram of len sealed before the loop (its tag checks every time). */
static void paxos_verify(size_t len)
{
	size_t payload;
	if (!paxos_auth_verify(&receiver, sealed, len + PAXOS_AUTH_TAG_BYTES, &payload))
		abort();
}

static struct paxos_auth sender_gcm;

static void paxos_seal_gcm(size_t len)
{
	memcpy(sealed, buf, 1);
	paxos_auth_seal(&sender_gcm, sealed, len);
}

static void paxos_verify_gcm(size_t len)
{
	paxos_verify(len); /* of a datagram sealed by sender_gcm before the loop */
}

static void hmac256(size_t len)
{
	crypto_auth(tag, buf, len, key);
}

static void aes_gcm(size_t len)
{
	unsigned long long taglen;
	crypto_aead_aes256gcm_encrypt_detached_afternm(empty, tag, &taglen, empty, 0, buf, len,
						       NULL, nonce, &gcm);
}

static void nonce_random(size_t len)
{
	(void)len;
	randombytes_buf(nonce, sizeof(nonce));
}

static void nonce_counter(size_t len)
{
	static uint64_t counter;
	(void)len;
	counter++;
	memcpy(nonce + 16, &counter, sizeof(counter));
}

struct candidate {
	const char *name;
	void (*tag)(size_t len);
};

/* ns per call of c at len: the best of passes runs of enough calls to take ~2 ms. */
static double measure(const struct candidate *c, size_t len, int passes)
{
	int calls = (int)(2e6 / (50.0 + (double)len)) + 16;
	double best = 1e18;
	for (int p = 0; p < passes; p++) {
		double t0 = now_ns();
		for (int i = 0; i < calls; i++) {
			buf[0] = (uint8_t)i; /* no call is the same as the one before */
			c->tag(len);
		}
		double per = (now_ns() - t0) / calls;
		if (per < best)
			best = per;
	}
	return best;
}

/* The usage on OUT; returns the exit status: 0 for --help (stdout), 2 for a wrong command line. */
static int usage(FILE *out)
{
	fprintf(out, "Usage: paxos-bench-mac [PASSES]\n"
		     "What tagging one datagram costs with each candidate construction for\n"
		     "auth-key-file, by datagram size: the best of PASSES passes (default 20).\n"
		     "  -h, --help   this text\n");
	return out == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))
		return usage(stdout);
	char *end = NULL;
	long given = argc > 1 ? strtol(argv[1], &end, 10) : 20;
	if ((end && *end) || given < 1 || given > 1000000 || argc > 2)
		return usage(stderr);
	int passes = (int)given;
	if (sodium_init() < 0) {
		fprintf(stderr, "paxos-bench-mac: libsodium does not start\n");
		return 1;
	}
	randombytes_buf(key, sizeof(key));
	randombytes_buf(nonce, sizeof(nonce));
	randombytes_buf(buf, sizeof(buf));
	crypto_generichash_init(&keyed, key, sizeof(key), 16);
	crypto_core_hchacha20(subkey, nonce, key, NULL);
	if (paxos_auth_init(&sender, key) != PAXOS_OK ||
	    paxos_auth_init(&receiver, key) != PAXOS_OK)
		return 2;
	bool has_gcm = crypto_aead_aes256gcm_is_available();
	char why[160];
	if (has_gcm) {
		crypto_aead_aes256gcm_beforenm(&gcm, key);
		if (paxos_auth_init(&sender_gcm, key) != PAXOS_OK ||
		    paxos_auth_use_mac(&sender_gcm, PAXOS_AUTH_MAC_AES_GCM, why, sizeof(why)) !=
			PAXOS_OK)
			return 2;
	}
	const struct candidate all[] = {
	    {"blake2b", blake2b},
	    {"xchacha-aead", xchacha_aead},
	    {"xchacha-ota", xchacha_ota},
	    {"chacha-subkey", chacha_subkey},
	    {"hchacha20", hchacha20},
	    {"paxos-seal", paxos_seal},
	    {"paxos-verify", paxos_verify},
	    {"paxos-seal-gcm", paxos_seal_gcm},
	    {"paxos-verify-gcm", paxos_verify_gcm},
	    {"hmac256", hmac256},
	    {"aes-gcm", aes_gcm},
	    {"nonce-random", nonce_random},
	    {"nonce-counter", nonce_counter},
	};
	const size_t sizes[] = {64, 200, 512, 1100, 2200, 4400, 8192};
	printf("ns per datagram, best of %d passes\n%-17s", passes, "size");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		printf(" %8zu", sizes[s]);
	printf("\n");
	for (size_t c = 0; c < sizeof(all) / sizeof(all[0]); c++) {
		bool is_gcm = all[c].tag == aes_gcm || all[c].tag == paxos_seal_gcm ||
			      all[c].tag == paxos_verify_gcm;
		if (is_gcm && !has_gcm)
			continue;
		printf("%-17s", all[c].name);
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			if (all[c].tag == paxos_verify || all[c].tag == paxos_verify_gcm) {
				memcpy(sealed, buf, sizes[s]);
				paxos_auth_seal(all[c].tag == paxos_verify ? &sender : &sender_gcm,
						sealed, sizes[s]);
			}
			printf(" %8.0f", measure(&all[c], sizes[s], passes));
		}
		printf("\n");
	}
	return 0;
}
