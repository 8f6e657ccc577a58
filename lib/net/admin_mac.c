/* SPDX-License-Identifier: BSD-3-Clause */
/* The MAC of a membership change (admin_mac.h). */
#include "admin_mac.h"

#include "auth.h"

#include <sodium.h>

_Static_assert(PAXOS_ADMIN_KEY_BYTES == crypto_auth_KEYBYTES, "a key file holds a crypto_auth key");
_Static_assert(PAXOS_ADMIN_KEY_BYTES == PAXOS_AUTH_KEY_BYTES, "paxos-keygen writes admin keys");
_Static_assert(PAXOS_CHANGE_MAC_BYTES == crypto_auth_BYTES, "the MAC is crypto_auth's");

int paxos_admin_key_read(const char *path, uint8_t key[PAXOS_ADMIN_KEY_BYTES], char *err,
			 size_t errlen)
{
	return paxos_auth_read_key(path, key, err, errlen);
}

void paxos_admin_mac(const uint8_t key[PAXOS_ADMIN_KEY_BYTES], uint32_t partition, uint32_t flags,
		     const struct paxos_value *command, uint8_t mac[PAXOS_CHANGE_MAC_BYTES])
{
	static const char label[] = "libpaxos membership change 1";
	uint8_t words[8];
	for (int i = 0; i < 4; i++) {
		words[i] = (uint8_t)(partition >> (8 * i));
		words[4 + i] = (uint8_t)(flags >> (8 * i));
	}
	crypto_auth_hmacsha512256_state st;
	crypto_auth_hmacsha512256_init(&st, key, PAXOS_ADMIN_KEY_BYTES);
	crypto_auth_hmacsha512256_update(&st, (const uint8_t *)label, sizeof(label) - 1);
	crypto_auth_hmacsha512256_update(&st, words, sizeof(words));
	crypto_auth_hmacsha512256_update(&st, command->data, command->len);
	crypto_auth_hmacsha512256_final(&st, mac);
	sodium_memzero(&st, sizeof(st));
}

bool paxos_admin_mac_valid(const uint8_t key[PAXOS_ADMIN_KEY_BYTES], uint32_t partition,
			   const struct paxos_change *c)
{
	uint8_t want[PAXOS_CHANGE_MAC_BYTES];
	if (c->mac.len != PAXOS_CHANGE_MAC_BYTES || !c->mac.data ||
	    (c->command.len && !c->command.data))
		return false;
	paxos_admin_mac(key, partition, c->flags, &c->command, want);
	return sodium_memcmp(want, c->mac.data, PAXOS_CHANGE_MAC_BYTES) == 0;
}

void paxos_admin_key_wipe(uint8_t key[PAXOS_ADMIN_KEY_BYTES])
{
	sodium_memzero(key, PAXOS_ADMIN_KEY_BYTES);
}
