/* SPDX-License-Identifier: BSD-3-Clause */
/* Fixed-width integers at any place of a byte buffer, in the byte order a format states:
 * paxos_put_le32(p, x), paxos_get_le32(p), and so for le64, be32 and be64. */
#ifndef PAXOS_CORE_BYTES_H
#define PAXOS_CORE_BYTES_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#define PAXOS_BYTES(order, bits)                                                                   \
	static inline void paxos_put_##order##bits(uint8_t *p, uint##bits##_t x)                   \
	{                                                                                          \
		x = hto##order##bits(x);                                                           \
		memcpy(p, &x, sizeof(x));                                                          \
	}                                                                                          \
	static inline uint##bits##_t paxos_get_##order##bits(const uint8_t *p)                     \
	{                                                                                          \
		uint##bits##_t x;                                                                  \
		memcpy(&x, p, sizeof(x));                                                          \
		return order##bits##toh(x);                                                        \
	}

PAXOS_BYTES(le, 32)
PAXOS_BYTES(le, 64)
PAXOS_BYTES(be, 32)
PAXOS_BYTES(be, 64)

#undef PAXOS_BYTES

#endif
