/* SPDX-License-Identifier: BSD-3-Clause */
#include "batch.h"
#include "bytes.h"

#include <string.h>

uint8_t *paxos_batch_reserve(uint8_t *buf, uint32_t cap, uint32_t *used, uint32_t len)
{
	if (*used > cap || paxos_batch_size(len) > cap - *used)
		return NULL;
	paxos_put_le32(buf + *used, len);
	uint8_t *dst = buf + *used + PAXOS_BATCH_HEADER;
	*used += PAXOS_BATCH_HEADER + len;
	return dst;
}

uint8_t *paxos_batch_reserve_id(uint8_t *buf, uint32_t cap, uint32_t *used, uint32_t len,
				uint64_t id)
{
	if (id == 0 || *used > cap || paxos_batch_size(len) + PAXOS_BATCH_ID_BYTES > cap - *used)
		return paxos_batch_reserve(buf, cap, used, len);
	paxos_put_le32(buf + *used, len | PAXOS_BATCH_ID_FLAG);
	paxos_put_le64(buf + *used + PAXOS_BATCH_HEADER, id);
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
	uint32_t n = paxos_get_le32(it->data + it->off), skip = PAXOS_BATCH_HEADER;
	it->id = 0;
	if (n & PAXOS_BATCH_ID_FLAG) {
		n &= ~PAXOS_BATCH_ID_FLAG;
		skip += PAXOS_BATCH_ID_BYTES;
		if (left < skip)
			return PAXOS_E_MALFORMED;
		it->id = paxos_get_le64(it->data + it->off + PAXOS_BATCH_HEADER);
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
