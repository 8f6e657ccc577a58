/* SPDX-License-Identifier: BSD-3-Clause */
#include "shard.h"

uint32_t kv_key_partition(const uint8_t *key, size_t len, uint32_t partitions)
{
	if (partitions <= 1)
		return 0;
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ key[i]) * 1099511628211ull;
	/* FNV's low bits follow the keys' last bytes (with 2 partitions, the parity of the bytes'
	 * low bits): MurmurHash3's finaliser spreads every bit over all of them. */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)(h % partitions);
}

int kv_command_partition(const struct kv_command *c, uint32_t partitions, uint32_t *other)
{
	int keys = kv_op_keys(c->op);
	if (keys == 0)
		return -1;
	uint32_t p = kv_key_partition(c->arg[0].data, c->arg[0].len, partitions);
	for (int i = 1; i < keys; i++) {
		uint32_t q = kv_key_partition(c->arg[i].data, c->arg[i].len, partitions);
		if (q != p) {
			if (other)
				*other = q;
			return -1;
		}
	}
	return (int)p;
}
