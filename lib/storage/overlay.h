/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Records changed in memory and not yet written to a store: what a backend with pipelined
 * commits (LMDB sync) committed but has not flushed. Entries are appended, so that a mark taken
 * at a commit splits what was committed from the batch still open; a later entry for an iid
 * hides the earlier ones. Internal to libpaxos.
 */
#ifndef PAXOS_STORAGE_OVERLAY_H
#define PAXOS_STORAGE_OVERLAY_H

#include <paxos/storage.h>

#include <stddef.h>

struct overlay_entry {
	paxos_iid iid;
	paxos_ballot promised;
	paxos_ballot accepted;
	bool final;
	uint32_t len;
	size_t off; /* of the value in bytes */
};

struct overlay {
	struct overlay_entry *entries;
	size_t count, cap;
	uint32_t *slots; /* open addressing: entry index + 1 of an iid's latest entry, 0: free */
	size_t slot_cap; /* a power of two, at least twice count */
	uint8_t *bytes;  /* the values */
	size_t used, bytes_cap;
	paxos_iid trim;         /* drop every instance <= trim first (0: no trim) */
	paxos_iid trim_highest; /* the highest accepted instance when it was trimmed */
};

/* Where an overlay stood at a commit. */
struct overlay_mark {
	size_t count;
	paxos_iid trim, trim_highest;
};

/* Copies rec (value bytes included; they may lie in this overlay). PAXOS_OK or PAXOS_E_NOMEM. */
int overlay_put(struct overlay *o, const struct paxos_record *rec);

/* Whether iid has an entry; fills rec, whose value points into the overlay until the next
 * put or clear. */
bool overlay_get(const struct overlay *o, paxos_iid iid, struct paxos_record *rec);

/* Entry i as a record, its value pointing into the overlay. */
void overlay_entry_record(const struct overlay *o, size_t i, struct paxos_record *rec);

void overlay_trim(struct overlay *o, paxos_iid iid, paxos_iid highest_accepted);

struct overlay_mark overlay_mark(const struct overlay *o);

/* Moves what o gained after mark (the open batch) to the empty overlay rest, or drops it if
 * rest is NULL; o keeps what it held at mark. PAXOS_OK or PAXOS_E_NOMEM (o is unchanged). */
int overlay_split(struct overlay *o, struct overlay_mark mark, struct overlay *rest);

/* Empties o, keeping its memory for the next use. */
void overlay_clear(struct overlay *o);

void overlay_free(struct overlay *o);

#endif
