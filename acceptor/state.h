/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The acceptor's state, shared by its two parts: acceptor.c decides what each message and tick
 * does (the protocol), ready.c keeps the ready those decisions go into (records, replies and
 * the values they point to) and hands it to the driver. Not a public header.
 */
#ifndef PAXOS_ACCEPTOR_STATE_H
#define PAXOS_ACCEPTOR_STATE_H

#include <paxos/acceptor.h>

#include "recovery.h"

/* First size of the arena held reply values are copied into; it doubles when needed. */
#define ARENA_INITIAL 4096u

/* Prepares kept while recovering, answered once recovery ends (answer_withheld): a window's
 * worth of instances of one proposer; beyond it the proposer's timeout retries them. */
#define WITHHELD_MAX 256u

/* Replies one batch may hold: one per message, plus one whole repeat answer (trimmed
 * notice included) on top, so at least the first repeat of a batch is answered in full, plus
 * the answers to the prepares withheld while recovering. */
#define HELD_MAX (PAXOS_ACCEPTOR_MAX_BATCH + PAXOS_ACCEPTOR_MAX_REPEAT + 1u + WITHHELD_MAX)

/* Records one ready may carry: one per message of a step, the answers to the withheld
 * prepares, and final marks (paxos_acceptor_learned) up to a batch's worth; a mark that finds
 * no room is dropped (harmless: see there), a vote that finds none is not given (silence is
 * always safe). */
#define RECORDS_MAX (PAXOS_ACCEPTOR_MAX_BATCH + WITHHELD_MAX + PAXOS_ACCEPTOR_MAX_BATCH)

/* Slots of the open-addressing table that finds a ready's record by instance: a power of two,
 * at least twice RECORDS_MAX. */
#define RECORD_SLOTS 8192u

/* Messages one ready may carry: HELD_MAX for a step, a tick's few on top; a message that finds
 * no room is not sent (staying silent is always safe). */
#define MESSAGES_MAX (HELD_MAX + 8u)

/* Which counter a reply bumps once it is really sent. */
enum reply_kind {
	REPLY_PROMISE,
	REPLY_REJECT,
	REPLY_FENCE_REJECT, /* a reject at or below the recovery fence (fence_rejects) */
	REPLY_ACCEPTED,
	REPLY_REPEATED,
	REPLY_TRIMMED,
	REPLY_STATE, /* reports stored state, counted nowhere (recover info, acceptor state) */
	REPLY_FREE   /* reports nothing stored (hellos, questions): after 0 */
};

/* Where a value lives during a step. */
enum value_home {
	VALUE_STABLE, /* a step's message or none: valid until advance */
	VALUE_ARENA,  /* at arena + off (the arena may move until the ready is taken) */
	VALUE_STORE   /* returned by the store's get: copy it before it is kept */
};

struct value_ref {
	enum value_home home;
	size_t off;
};

/* A message of the ready with what ready() needs to finish it. */
struct reply_meta {
	enum reply_kind kind;
	bool value_in_arena;
	size_t value_off;
};

struct pending_record {
	paxos_iid iid; /* the record's, which the writer may set to 0 (paxos_acceptor_write) */
	struct value_ref v;
};

struct paxos_acceptor {
	uint32_t id;
	uint32_t repeat_batch;  /* most instances per repeat request */
	uint32_t repeat_budget; /* most instances repeated per tick */
	uint32_t repeat_left;   /* of the budget, until the next tick */
	bool decided_known;     /* paxos_acceptor_decided was called: trims stop at decided */
	paxos_iid decided;
	struct paxos_storage *st; /* read only: the driver writes what the ready says */
	struct paxos_counters *counters;
	bool stopped;       /* storage failed: answering anything now could break safety */
	uint64_t retention; /* instances kept below the highest accepted; 0: all */

	/* The ready in progress, since the last advance. */
	bool taken;        /* paxos_acceptor_ready was called, advance was not */
	uint64_t writes;   /* writes handed out so far (paxos_ready.write) */
	paxos_iid trim;    /* the ready's trim, 0: none */
	paxos_iid highest; /* highest instance of the ready's records with a value */
	uint64_t trims_applied;
	struct paxos_record *records;   /* RECORDS_MAX */
	struct pending_record *pending; /* beside records: where each value lives */
	size_t record_count;
	uint32_t *slots;                      /* RECORD_SLOTS: index + 1 into records, 0: free */
	struct paxos_ready_message *messages; /* MESSAGES_MAX */
	struct reply_meta *meta;              /* beside messages */
	size_t message_count;
	struct paxos_ready_message spare; /* where a message that finds no room is built */
	struct reply_meta spare_meta;
	struct paxos_emitter to_ready; /* recovery's messages go into the ready */
	size_t repeat_bytes;           /* values the step's repeat answers copied */
	/* Values read from storage are only valid until the driver's next put or commit, yet
	 * records and replies are written and sent after the step, so they are copied here.
	 * Reused from ready to ready. */
	uint8_t *arena;
	size_t arena_cap;
	size_t arena_used;

	struct recovery recovery;                    /* membership and recovery from lost state */
	struct paxos_prepare withheld[WITHHELD_MAX]; /* while recovering: one per instance */
	size_t withheld_count;
	bool ask_due;          /* a vote was withheld while recovering: ask the proposers at once */
	bool hello_due;        /* recovering, we heard a peer that has not answered us: say hello */
	uint32_t hellos_again; /* the peers a hello was repeated for since the last tick */
};

/* Whether message r of the ready may be sent: its record, if it names one, was stored. */
static inline bool acceptor_sendable(const struct paxos_acceptor *a,
				     const struct paxos_ready_message *r)
{
	return r->record == PAXOS_READY_NO_RECORD || a->records[r->record].iid != 0;
}

/* acceptor.c */
/* Whether a step may start: PAXOS_OK, or the error the step returns. */
int acceptor_step_allowed(const struct paxos_acceptor *a);

/* ready.c: the ready as a step builds it */
/* Stops the acceptor for good after a storage error; returns the error to report. */
int acceptor_fail(struct paxos_acceptor *a, int rc);
/* The record for iid as the ready leaves it, or as stored, or an empty one. */
int acceptor_load(struct paxos_acceptor *a, paxos_iid iid, struct paxos_record *rec,
		  struct value_ref *v);
/* Copies a value the store returned into the arena; false when memory ran out. */
bool acceptor_pin(struct paxos_acceptor *a, const struct paxos_record *rec, struct value_ref *v);
/* Puts rec into the ready; false when the ready has no room for another record. */
bool acceptor_store(struct paxos_acceptor *a, const struct paxos_record *rec,
		    const struct value_ref *v);
/* A message into the ready, to be filled in by the caller. */
struct paxos_ready_message *acceptor_hold(struct paxos_acceptor *a, enum paxos_msg_type type,
					  enum paxos_group to, enum reply_kind kind, paxos_iid iid);
/* Sets a held message's value field to value, which lives where v says. */
void acceptor_hold_value(struct paxos_acceptor *a, struct paxos_ready_message *r,
			 struct paxos_value *field, const struct paxos_value *value,
			 const struct value_ref *v);

#endif
