/* SPDX-License-Identifier: BSD-3-Clause */
#include "batch.h"

#include <string.h>

static void put_u32le(uint8_t *p, uint32_t x)
{
	p[0] = (uint8_t)x;
	p[1] = (uint8_t)(x >> 8);
	p[2] = (uint8_t)(x >> 16);
	p[3] = (uint8_t)(x >> 24);
}

static uint32_t get_u32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint8_t *paxos_batch_reserve(uint8_t *buf, uint32_t cap, uint32_t *used, uint32_t len)
{
	if (*used > cap || paxos_batch_size(len) > cap - *used)
		return NULL;
	put_u32le(buf + *used, len);
	uint8_t *dst = buf + *used + PAXOS_BATCH_HEADER;
	*used += PAXOS_BATCH_HEADER + len;
	return dst;
}

uint8_t *paxos_batch_reserve_id(uint8_t *buf, uint32_t cap, uint32_t *used, uint32_t len,
				uint64_t id)
{
	if (id == 0 || *used > cap || paxos_batch_size(len) + PAXOS_BATCH_ID_BYTES > cap - *used)
		return paxos_batch_reserve(buf, cap, used, len);
	put_u32le(buf + *used, len | PAXOS_BATCH_ID_FLAG);
	for (uint32_t k = 0; k < PAXOS_BATCH_ID_BYTES; k++)
		buf[*used + PAXOS_BATCH_HEADER + k] = (uint8_t)(id >> (8 * k));
	uint8_t *dst = buf + *used + PAXOS_BATCH_HEADER + PAXOS_BATCH_ID_BYTES;
	*used += PAXOS_BATCH_HEADER + PAXOS_BATCH_ID_BYTES + len;
	return dst;
}

int paxos_batch_append(uint8_t *buf, uint32_t cap, uint32_t *used, const struct paxos_value *v)
{
	uint8_t *dst = paxos_batch_reserve(buf, cap, used, v->len);
	if (!dst)
		return PAXOS_E_FULL;
	if (v->len)
		memcpy(dst, v->data, v->len);
	return PAXOS_OK;
}

void paxos_batch_iter_init(struct paxos_batch_iter *it, const struct paxos_value *frame)
{
	it->data = frame && frame->len ? frame->data : NULL;
	it->len = it->data ? frame->len : 0;
	it->off = 0;
	it->id = 0;
}

int paxos_batch_next(struct paxos_batch_iter *it, struct paxos_value *v)
{
	if (it->off == it->len)
		return 0;
	uint32_t left = it->len - it->off;
	if (left < PAXOS_BATCH_HEADER)
		return PAXOS_E_MALFORMED;
	uint32_t n = get_u32le(it->data + it->off), skip = PAXOS_BATCH_HEADER;
	it->id = 0;
	if (n & PAXOS_BATCH_ID_FLAG) {
		n &= ~PAXOS_BATCH_ID_FLAG;
		skip += PAXOS_BATCH_ID_BYTES;
		if (left < skip)
			return PAXOS_E_MALFORMED;
		for (uint32_t k = PAXOS_BATCH_ID_BYTES; k-- > 0;)
			it->id = it->id << 8 | it->data[it->off + PAXOS_BATCH_HEADER + k];
	}
	if (n > left - skip)
		return PAXOS_E_MALFORMED;
	v->data = it->data + it->off + skip;
	v->len = n;
	it->off += skip + n;
	return 1;
}

int paxos_batch_count(const struct paxos_value *frame, uint32_t *count)
{
	struct paxos_batch_iter it;
	struct paxos_value v;
	uint32_t n = 0;
	int rc;
	paxos_batch_iter_init(&it, frame);
	while ((rc = paxos_batch_next(&it, &v)) == 1)
		n++;
	if (rc != 0 || n == 0)
		return PAXOS_E_MALFORMED;
	*count = n;
	return PAXOS_OK;
}

void paxos_batch_write_skip(uint8_t *buf)
{
	memset(buf, 0xff, PAXOS_BATCH_SKIP_LEN);
}

bool paxos_batch_is_skip(const struct paxos_value *v)
{
	static const uint8_t skip[PAXOS_BATCH_SKIP_LEN] = {0xff, 0xff, 0xff, 0xff};
	return v && v->len == PAXOS_BATCH_SKIP_LEN && v->data &&
	       memcmp(v->data, skip, PAXOS_BATCH_SKIP_LEN) == 0;
}
