/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Value batching. Thesis 3.7.4: "To digest client values faster, the leader can use a single
 * instance to broadcast different values." and "the learners unpack the batch and deliver the
 * originally submitted values." An instance value is a frame of one or more client values,
 * each as [u32 little-endian length][bytes], or, for a value that names its submission,
 * [u32 length | PAXOS_BATCH_ID_FLAG][u64 little-endian submission id][bytes]: the id tells
 * two submissions of equal bytes apart (proposer/submissions.c). The leader packs pending
 * values into one frame; learners unpack it and deliver each value with its position. With
 * batching off the frame holds one value, so learners always unframe. Reading is
 * bounds-checked: a malformed frame is reported, never read beyond its end.
 */
#ifndef PAXOS_BATCH_H
#define PAXOS_BATCH_H

#include <paxos/types.h>

/* Bytes in front of each value in a frame. */
#define PAXOS_BATCH_HEADER 4u

/* The length word's flag for a value that carries its submission id, and the id's size. */
#define PAXOS_BATCH_ID_FLAG 0x80000000u
#define PAXOS_BATCH_ID_BYTES 8u

/* Room in the frame buf (cap bytes, *used filled) for a value of len bytes: writes its
 * header, advances *used past header and value, and returns where the len bytes go; NULL
 * (nothing written) when it does not fit. */
uint8_t *paxos_batch_reserve(uint8_t *buf, uint32_t cap, uint32_t *used, uint32_t len);

/* The same for a value with submission id (0: none, as paxos_batch_reserve): the id goes in
 * front of it when it fits with it, else the value goes without. */
uint8_t *paxos_batch_reserve_id(uint8_t *buf, uint32_t cap, uint32_t *used, uint32_t len,
				uint64_t id);

/* Appends a copy of v: PAXOS_OK, or PAXOS_E_FULL when it does not fit (nothing written). */
int paxos_batch_append(uint8_t *buf, uint32_t cap, uint32_t *used, const struct paxos_value *v);

/* Walks a frame, one value per call. */
struct paxos_batch_iter {
	const uint8_t *data;
	uint32_t len;
	uint32_t off;
	uint64_t id; /* the submission id of the value paxos_batch_next returned last; 0: none */
};

void paxos_batch_iter_init(struct paxos_batch_iter *it, const struct paxos_value *frame);

/* 1: *v is the next value (borrowed from the frame); 0: the frame ended; PAXOS_E_MALFORMED:
 * a length runs past the end (the walk stays there). */
int paxos_batch_next(struct paxos_batch_iter *it, struct paxos_value *v);

/* Checks the whole frame: PAXOS_OK with the number of values (at least one) in *count, or
 * PAXOS_E_MALFORMED (empty, or a length that runs past the end). */
int paxos_batch_count(const struct paxos_value *frame, uint32_t *count);

/*
 * A skip (learner-merge, see paxos/partitions.h): an instance value that holds no client value
 * and ends the instance's merge segment. A leader of an idle partition proposes one so that
 * merged learners need not wait for it. It is PAXOS_BATCH_SKIP_LEN bytes 0xff: a length no
 * frame can start with (a value is at most a datagram), so no client value is ever read as
 * one.
 */
#define PAXOS_BATCH_SKIP_LEN 4u

/* Writes the skip frame to buf (PAXOS_BATCH_SKIP_LEN bytes). */
void paxos_batch_write_skip(uint8_t *buf);

/* Whether v is the skip frame. */
bool paxos_batch_is_skip(const struct paxos_value *v);

/* Frame size of a value of len bytes alone. */
static inline uint64_t paxos_batch_size(uint32_t len)
{
	return (uint64_t)PAXOS_BATCH_HEADER + len;
}

#endif
