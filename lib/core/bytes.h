/* SPDX-License-Identifier: BSD-3-Clause */
/* Fixed-width integers at any place of a byte buffer, in the byte order a format states. */
#ifndef PAXOS_CORE_BYTES_H
#define PAXOS_CORE_BYTES_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline void paxos_put_le32(uint8_t *p, uint32_t x)
{
	x = htole32(x);
	memcpy(p, &x, sizeof(x));
}

static inline uint32_t paxos_get_le32(const uint8_t *p)
{
	uint32_t x;
	memcpy(&x, p, sizeof(x));
	return le32toh(x);
}

static inline void paxos_put_le64(uint8_t *p, uint64_t x)
{
	x = htole64(x);
	memcpy(p, &x, sizeof(x));
}

static inline uint64_t paxos_get_le64(const uint8_t *p)
{
	uint64_t x;
	memcpy(&x, p, sizeof(x));
	return le64toh(x);
}

static inline void paxos_put_be32(uint8_t *p, uint32_t x)
{
	x = htobe32(x);
	memcpy(p, &x, sizeof(x));
}

static inline uint32_t paxos_get_be32(const uint8_t *p)
{
	uint32_t x;
	memcpy(&x, p, sizeof(x));
	return be32toh(x);
}

static inline void paxos_put_be64(uint8_t *p, uint64_t x)
{
	x = htobe64(x);
	memcpy(p, &x, sizeof(x));
}

static inline uint64_t paxos_get_be64(const uint8_t *p)
{
	uint64_t x;
	memcpy(&x, p, sizeof(x));
	return be64toh(x);
}

#endif
