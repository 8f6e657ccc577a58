/* SPDX-License-Identifier: BSD-3-Clause */
#include "auth_key.h"

#include <stdlib.h>
#include <string.h>

#include "config_fields.h"
#include "error.h"

void paxos_auth_partition_key(const uint8_t key[PAXOS_AUTH_KEY_BYTES], uint32_t partition,
			      uint8_t out[PAXOS_AUTH_KEY_BYTES])
{
	if (partition == 0) {
		memcpy(out, key, PAXOS_AUTH_KEY_BYTES);
		return;
	}
	static const char label[] = "libpaxos partition";
	uint8_t input[sizeof(label) - 1 + 4];
	memcpy(input, label, sizeof(label) - 1);
	for (int i = 0; i < 4; i++)
		input[sizeof(label) - 1 + i] = (uint8_t)(partition >> (8 * i));
	crypto_generichash(out, PAXOS_AUTH_KEY_BYTES, input, sizeof(input), key,
			   PAXOS_AUTH_KEY_BYTES);
}

struct paxos_auth *paxos_auth_load_partition(const struct paxos_config *cfg, char *err,
					     size_t errlen)
{
	uint8_t key[PAXOS_AUTH_KEY_BYTES], own[PAXOS_AUTH_KEY_BYTES];
	char why[160];
	const char *path = cfg->auth_key_file;
	if (paxos_auth_read_key(path, key, err, errlen) != PAXOS_OK)
		return NULL;
	paxos_auth_partition_key(key, cfg->partition, own);
	sodium_memzero(key, sizeof(key));
	/* sizeof is a multiple of the alignment, as aligned_alloc needs */
	struct paxos_auth *a = aligned_alloc(_Alignof(struct paxos_auth), sizeof(*a));
	if (!a) {
		paxos_error_format(err, errlen, "%s: out of memory", path);
	} else if (paxos_auth_init(a, own) != PAXOS_OK) {
		paxos_error_format(err, errlen, "%s: libsodium cannot start", path);
		free(a);
		a = NULL;
	} else if (paxos_auth_use_mac(a, cfg->auth_mac, why, sizeof(why)) != PAXOS_OK) {
		paxos_error_format(err, errlen, "%s: %s", path, why);
		paxos_auth_free(a);
		a = NULL;
	}
	sodium_memzero(own, sizeof(own));
	return a;
}
