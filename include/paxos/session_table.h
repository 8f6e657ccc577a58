/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The I/O-free parts of client sessions (paxos/session.h): the header a session puts in front
 * of each of its values, and the learners' dedupe table that applies each (client, sequence
 * number) once and in order.
 */
#ifndef PAXOS_SESSION_TABLE_H
#define PAXOS_SESSION_TABLE_H

#include <paxos/types.h>

#include <stddef.h>
#include <stdint.h>

/** First byte of a session header. */
#define PAXOS_SESSION_MAGIC0 0xF5u
/** Second byte of a session header. */
#define PAXOS_SESSION_MAGIC1 0x53u
/** The header version this library writes and reads. */
#define PAXOS_SESSION_VERSION 1u
/** Most bytes a session header takes: magic (2), version, flags, three varints of 10. */
#define PAXOS_SESSION_HEADER_MAX 34u
/** Flag: the value carries nothing for the application (a barrier, paxos_node_barrier()). It
 * takes its place in the client's order and is never delivered. */
#define PAXOS_SESSION_NOOP 0x01u

/** What a session header says. */
struct paxos_session_header {
	uint64_t client; /**< the session's client id (never 0) */
	uint64_t seq;    /**< this value's sequence number, from 1 */
	/** The session's lowest sequence number not finished yet when this copy was sent (at most
	 * seq): every number below it was seen chosen or given up, so a learner that does not know
	 * the client may apply seq == base at once. */
	uint64_t base;
	uint8_t flags; /**< PAXOS_SESSION_NOOP or 0 */
};

/** Writes the header @p h to @p buf (@p cap bytes): returns its length, or 0 when it does not
 * fit or @p h is invalid (client 0, seq 0, base 0 or above seq). */
PAXOS_API size_t paxos_session_header_encode(const struct paxos_session_header *h, uint8_t *buf,
					     size_t cap);

/** Reads a session header at the start of @p value (@p len bytes): 1 with *@p h filled and the
 * header's length in *@p header_len, 0 when the value does not start with the magic bytes (a
 * plain value), PAXOS_E_MALFORMED when it does but the rest is not a header this library reads
 * (another version, a truncated or overlong varint, a zero or inconsistent number). */
PAXOS_API int paxos_session_header_decode(const void *value, size_t len,
					  struct paxos_session_header *h, size_t *header_len);

/** Clients a table keeps by default (paxos_node_enable_sessions() with 0). */
#define PAXOS_SESSION_CLIENTS_DEFAULT 4096u
/** Most clients a table may keep. */
#define PAXOS_SESSION_CLIENTS_MAX (1u << 24)

/**
 * The learners' dedupe table: per client the highest sequence number applied and the instance
 * it was applied in. It keeps at most the number of clients it was made with; a new client
 * beyond that evicts the one that applied nothing for longest (LRU). Every learner that applies
 * the same log from the same table makes the same decisions and evictions, so replicas stay
 * equal. The limit must exceed the clients that submit at once: a session evicted while one of
 * its values is still in flight is known again only by that value's base, so a late copy of an
 * evicted client's last value may be applied twice.
 */
struct paxos_session_table;

/** What paxos_session_table_apply() decided. */
enum paxos_session_verdict {
	PAXOS_SESSION_APPLY = 0,     /**< the client's next value: apply it (recorded) */
	PAXOS_SESSION_DUPLICATE = 1, /**< applied before: drop it */
	PAXOS_SESSION_GAP = 2,       /**< an earlier value of the client is missing: drop it */
};

/** A table for at most @p max_clients clients (0: PAXOS_SESSION_CLIENTS_DEFAULT); NULL when
 * @p max_clients exceeds PAXOS_SESSION_CLIENTS_MAX or memory is short. */
PAXOS_API struct paxos_session_table *paxos_session_table_new(uint32_t max_clients);
/** Frees @p t; NULL is ignored. */
PAXOS_API void paxos_session_table_free(struct paxos_session_table *t);

/** Decides on the value of header @p h chosen in instance @p iid: APPLY when seq is the
 * client's next (last + 1) or the client has nothing below the value's base left (seq == base
 * above last), recording it; DUPLICATE when seq is at most the last applied; GAP otherwise. */
PAXOS_API enum paxos_session_verdict paxos_session_table_apply(struct paxos_session_table *t,
							       const struct paxos_session_header *h,
							       paxos_iid iid);

/** The last sequence number applied for @p client and its instance: true when the table
 * knows the client. @p seq and @p iid may be NULL. */
PAXOS_API bool paxos_session_table_last(const struct paxos_session_table *t, uint64_t client,
					uint64_t *seq, paxos_iid *iid);

/** Clients the table knows. */
PAXOS_API uint32_t paxos_session_table_count(const struct paxos_session_table *t);
/** The most clients it keeps. */
PAXOS_API uint32_t paxos_session_table_limit(const struct paxos_session_table *t);

/** Values applied, duplicates and gaps dropped since the table was made (imports carry them
 * over): the same on every learner of the same log. Any pointer may be NULL. */
PAXOS_API void paxos_session_table_stats(const struct paxos_session_table *t, uint64_t *applied,
					 uint64_t *duplicates, uint64_t *gaps);

/** Bytes paxos_session_table_export() writes for @p t as it is now. */
PAXOS_API size_t paxos_session_table_export_size(const struct paxos_session_table *t);

/** Writes @p t to @p buf (@p cap bytes) in a portable form that keeps the eviction order, for
 * the application's snapshot: PAXOS_OK with the length in *@p len, or PAXOS_E_FULL when cap is
 * short of paxos_session_table_export_size(). */
PAXOS_API int paxos_session_table_export(const struct paxos_session_table *t, uint8_t *buf,
					 size_t cap, size_t *len);

/** Replaces the contents of @p t with what paxos_session_table_export() wrote: PAXOS_OK;
 * PAXOS_E_MALFORMED (not such bytes, or damaged: the table is left empty); PAXOS_E_FULL when it
 * holds more clients than @p t may keep (left empty: make the table with a higher limit). */
PAXOS_API int paxos_session_table_import(struct paxos_session_table *t, const uint8_t *buf,
					 size_t len);

#endif
