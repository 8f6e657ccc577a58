/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The proposer's protocol logic (thesis 3.5), free of I/O: a sliding window of instances,
 * each an explicit state machine with the states and events of thesis Fig. 3.1.
 */
#ifndef PAXOS_PROPOSER_H
#define PAXOS_PROPOSER_H

#include <paxos/counters.h>
#include <paxos/membership.h>
#include <paxos/message.h>

struct paxos_proposer;

/** Ballots have room for this many epochs (incarnation numbers), so that every ballot fits in
 * 64 bits; a proposer uses only the first PAXOS_PLAUSIBLE_EPOCHS of them (paxos/types.h). */
#define PAXOS_PROPOSER_EPOCH_LIMIT (1u << 25)

/** What a proposer is made with (paxos_proposer_options_from_config() fills all but epoch and
 * raise_epochs). */
struct paxos_proposer_options {
	uint32_t id; /**< 0 .. PAXOS_MAX_PROPOSERS-1 */
	/** This incarnation, below PAXOS_PLAUSIBLE_EPOCHS: a restarted proposer must get a
	 * higher one (paxos_epoch_store_ops.next), or it could reuse its earlier ballots. */
	uint32_t epoch;
	/** Whether the proposer may take a later epoch than its own (struct
	 * paxos_proposer_ready): its driver then stores what the readies say. false: it never
	 * uses a ballot beyond its own epoch. */
	bool raise_epochs;
	uint32_t acceptors;    /**< quorum is acceptors / 2 + 1 */
	uint32_t window;       /**< instances with phase 1 pre-executed */
	uint32_t concurrency;  /**< instances in phase 2 at once; 1 = FIFO */
	uint32_t pending_size; /**< bounded pending list of client values */
	/** Largest instance value: a frame of client values (lib/core/batch.h). */
	uint32_t max_value;
	uint32_t batch_limit; /**< client values per instance; 0 or 1 = one (thesis 3.7.4) */
	uint32_t max_backlog; /**< flow control: see paxos.conf proposer-max-backlog; 0 = off */
	paxos_time phase1_timeout;  /**< initial phase 1 timeout, microseconds */
	paxos_time phase2_timeout;  /**< initial phase 2 timeout, microseconds */
	bool adaptive;              /**< timeouts follow measured round trips */
	paxos_time timeout_floor;   /**< adaptive timeouts stay above; 0: none */
	paxos_time timeout_ceiling; /**< no timeout exceeds it; 0: no ceiling */
	/** A proposer in a later epoch than 1 (restarted) answers a recovering acceptor only
	 * once it has run this long (microseconds): its answer covers the accepts of this life
	 * only, and those of its earlier life may still be on their way. 0: at once. */
	paxos_time recovery_grace;
	/** learner-merge (paxos/partitions.h): a leader that proposed nothing for this long
	 * (microseconds) closes its next instance with a skip, so that learners merging several
	 * partitions never wait longer for this one. 0: never. */
	paxos_time skip_idle;
	/** NULL: the acceptors are ids 0 .. acceptors - 1, for good. Else the configuration
	 * history (paxos/membership.h) that the proposer's internal learner applies its
	 * deliveries to, not owned: promises count only from the members of each instance's
	 * configuration, with its quorum, and an instance whose configuration is not known yet
	 * (above the last delivered + alpha) is not opened until it is: none waits when alpha is
	 * at least the window. acceptors is then only an upper bound of the ids. */
	const struct paxos_membership *membership;
};

/** Bytes paxos_proposer_new allocates for these options (0 if they are invalid): mostly the
 * pending list, (pending_size + values in flight) x max_value, and the window's values,
 * window x 2 x max_value. The configuration check refuses more than the machine can hold. */
PAXOS_API uint64_t paxos_proposer_memory(const struct paxos_proposer_options *o);

/** A new proposer with options @p o (copied), counting into @p counters, which it does not own
 * and which must outlive it. NULL on bad options or no memory. Not thread-safe: call a
 * proposer from one thread at a time. */
PAXOS_API struct paxos_proposer *paxos_proposer_new(const struct paxos_proposer_options *o,
						    struct paxos_counters *counters);
/** Frees the proposer and the values it holds; NULL is ignored. */
PAXOS_API void paxos_proposer_free(struct paxos_proposer *p);

/**
 * The storage write a proposer's calls produced, as data (the Ready pattern, as the
 * acceptor's struct paxos_ready). A proposer with raise_epochs takes a later epoch without
 * waiting for storage when it is about to use a ballot in that epoch's range (INCREMENTSKIP
 * past a proposer of a later incarnation, or its rounds used up; rare), and says so here. Each
 * message it emits depends on the epoch paxos_proposer_epoch() returns while it is emitted
 * (its emitter may read it): that message may leave only once that epoch is durable in the
 * proposer's epoch store (paxos/epoch.h), and must be dropped if it cannot be made so; else a
 * restart, starting one epoch above the stored one, could reuse its ballot. The driver, in
 * this order: takes the ready, stores epoch, sends the messages that depend on it (or drops
 * them when the store failed), and calls paxos_proposer_advance() with what it stored.
 */
struct paxos_proposer_ready {
	/** The epoch to make durable before the messages that depend on it leave: the
	 * highest taken and not yet reported stored; 0: nothing to store. */
	uint32_t epoch;
};

/** Fills @p rd with the epoch the proposer took and its driver has not stored yet; true when
 * there is one. The proposer goes on without waiting: its later calls may take more. */
PAXOS_API bool paxos_proposer_ready(const struct paxos_proposer *p,
				    struct paxos_proposer_ready *rd);

/** Says that epoch @p stored is durable (what a ready asked for, stored): the ready holds no
 * epoch at or below it any more. Not called when the store failed: the ready keeps asking. */
PAXOS_API void paxos_proposer_advance(struct paxos_proposer *p, uint32_t stored);

/** Become leader from instance first (the lowest not delivered) and pre-execute phase 1 for
 * the window; or stop leading (leader false), keeping pending values. */
PAXOS_API void paxos_proposer_set_leader(struct paxos_proposer *p, bool leader, paxos_iid first,
					 paxos_time now, const struct paxos_emitter *out);
/** Whether the proposer leads now (paxos_proposer_set_leader()). */
PAXOS_API bool paxos_proposer_is_leader(const struct paxos_proposer *p);

/** A client value arrived (the value is copied). Returns PAXOS_OK, PAXOS_E_FULL when the
 * pending list is full (the value is dropped and counted), PAXOS_E_TOO_BIG. Every proposer,
 * leader or not, queues client values; a value seen delivered (and not proposed by us) leaves
 * the queue (values_settled). A value submitted here names no submission
 * (paxos_proposer_queue_value() takes one that does), so it is queued even when an equal one
 * was delivered before it arrived: that may be another submitter's. */
PAXOS_API int paxos_proposer_submit(struct paxos_proposer *p, const struct paxos_value *v,
				    paxos_time now, const struct paxos_emitter *out);

/** The two halves of paxos_proposer_submit: queue takes a value without giving it to an
 * instance yet (same returns as submit; every value is data, whatever its bytes: a change of
 * the sets comes through paxos_proposer_change()); assign gives queued values to the instances
 * ready for them. A node queues every client value of one read and then assigns once, so values
 * that arrive together share instances (thesis 3.7.4) and none waits for a timer. */
PAXOS_API int paxos_proposer_queue(struct paxos_proposer *p, const struct paxos_value *v);
/** paxos_proposer_queue() for a client value that may name its submission
 * (paxos_client_value.id): its copies are told from other submissions of equal bytes by it.
 * paxos_proposer_handle() takes PAXOS_MSG_CLIENT_VALUE this way. */
PAXOS_API int paxos_proposer_queue_value(struct paxos_proposer *p,
					 const struct paxos_client_value *cv);
/** The second half of paxos_proposer_submit(): gives queued values to the instances ready for
 * them (see paxos_proposer_queue()). */
PAXOS_API void paxos_proposer_assign(struct paxos_proposer *p, paxos_time now,
				     const struct paxos_emitter *out);

/** Handle one message sent to the proposers group (promise, reject) or a client value. */
PAXOS_API void paxos_proposer_handle(struct paxos_proposer *p, const struct paxos_message *m,
				     paxos_time now, const struct paxos_emitter *out);

/** The internal learner closed instance iid (event C). */
PAXOS_API void paxos_proposer_closed(struct paxos_proposer *p, paxos_iid iid,
				     const struct paxos_value *v, paxos_time now,
				     const struct paxos_emitter *out);

/** The internal learner delivered instance iid (events D0..D5); the window slides. */
PAXOS_API void paxos_proposer_delivered(struct paxos_proposer *p, paxos_iid iid,
					const struct paxos_value *v, paxos_time now,
					const struct paxos_emitter *out);

/** paxos_proposer_delivered() with the ballot v was proposed at, as the learner's event says
 * (paxos_learner_event.ballot; 0: not known): a value this proposer sent at that ballot is
 * known to be its own without comparing it byte by byte. */
PAXOS_API void paxos_proposer_delivered_ballot(struct paxos_proposer *p, paxos_iid iid,
					       const struct paxos_value *v, paxos_ballot ballot,
					       paxos_time now, const struct paxos_emitter *out);

/** Timers: phase 1 and phase 2 timeouts (TO1, TO2). */
PAXOS_API void paxos_proposer_tick(struct paxos_proposer *p, paxos_time now,
				   const struct paxos_emitter *out);

/**
 * Proposes to change the acceptor set to @p members (one bit per id) through the log: a
 * membership command made against the newest configuration of the proposer's membership goes
 * to the next instance that may take a value, ahead of client values, while this proposer
 * leads (it waits otherwise), and again if another value wins that instance, until it is
 * chosen or another change is. It takes effect alpha instances after its own. Returns
 * PAXOS_OK; PAXOS_E_INVALID without a membership, for members 0 or the members in force;
 * PAXOS_E_FULL while a change (this proposer's, or one chosen and not in force yet) is
 * pending; PAXOS_E_TOO_BIG when max_value cannot hold a command. Whether the new set has a
 * live quorum is the caller's to check.
 */
PAXOS_API int paxos_proposer_change_membership(struct paxos_proposer *p, uint32_t members,
					       paxos_time now, const struct paxos_emitter *out);

/** As paxos_proposer_change_membership(), for a command made elsewhere (paxos/membership.h's
 * paxos_membership_command_of(), _at(), _address()), which must name the newest configuration:
 * PAXOS_E_INVALID also for bytes that are no command. The caller decides who may ask: a node
 * takes a command only from a PAXOS_MSG_CHANGE with the operators' MAC, checked. */
PAXOS_API int paxos_proposer_change(struct paxos_proposer *p, const struct paxos_value *command,
				    paxos_time now, const struct paxos_emitter *out);

/** As paxos_proposer_change_membership(), for the proposer set: @p proposers (one bit per
 * proposer id) may lead from alpha instances after the command's own on. PAXOS_E_INVALID
 * without a membership, for 0 or the proposers in force; the rest as for the acceptors. */
PAXOS_API int paxos_proposer_change_proposers(struct paxos_proposer *p, uint32_t proposers,
					      paxos_time now, const struct paxos_emitter *out);

/** Whether a membership change asked of this proposer is not chosen yet. */
PAXOS_API bool paxos_proposer_change_pending(const struct paxos_proposer *p);

/** The acceptors began a new log (its learner said so: PAXOS_LEARNER_NEW_LOG), whose instances
 * are numbered from 1 again: the window starts over there, the client values held in it go
 * back to the pending list, and a leader runs phase 1 again from instance 1. */
PAXOS_API void paxos_proposer_new_log(struct paxos_proposer *p, paxos_time now,
				      const struct paxos_emitter *out);

/** A leader that may lack the values clients sent before it led (it followed lean, or just
 * started) makes itself known to the learners: unless values wait in its list, it closes its
 * next instance with a skip as soon as phase 1 allows, so that every learner delivers an
 * instance of its ballot and clients can submit again, at once, what waited on the leader
 * before (paxos_node_on_new_leader()). One instance per call; ignored when not leading. */
PAXOS_API void paxos_proposer_announce(struct paxos_proposer *p, paxos_time now,
				       const struct paxos_emitter *out);

/**
 * The value of the accept this proposer sent for @p iid at @p ballot, while its instance still
 * holds it under that accept (so not after a retry at a higher ballot, a new value or the
 * instance's release). Borrowed: valid until the proposer's next call. Lets a driver hand an
 * accept to a learner later than it was emitted without copying the value.
 * @return true, with @p v set, when the proposer holds it.
 */
PAXOS_API bool paxos_proposer_accept_value(const struct paxos_proposer *p, paxos_iid iid,
					   paxos_ballot ballot, struct paxos_value *v);

/** The 64-bit hash a proposer names a client value by (PAXOS_MSG_REFUSED): of its @p len
 * bytes at @p data. */
PAXOS_API uint64_t paxos_value_hash(const void *data, size_t len);

/** Values waiting in the pending list. */
PAXOS_API uint32_t paxos_proposer_pending(const struct paxos_proposer *p);

/** Drops every value waiting in the pending list (counted in pending_dropped): for a proposer
 * that stops following the clients' values (a lean follower, lib/node), whose list would go
 * stale; the clients submit again what was not chosen. Ignored while leading. */
PAXOS_API void paxos_proposer_drop_pending(struct paxos_proposer *p);

/** The highest epoch the proposer uses ballots of: its own, or one it raised to. */
PAXOS_API uint32_t paxos_proposer_epoch(const struct paxos_proposer *p);

/** The highest ballot the proposer prepared with (0: none yet). */
PAXOS_API paxos_ballot paxos_proposer_ballot(const struct paxos_proposer *p);

/** Whether this leader's phase 2 is at least half as full as its congestion window allows:
 * its learner should then read the votes after every round, not only every millisecond. */
PAXOS_API bool paxos_proposer_votes_wanted(const struct paxos_proposer *p);

/** What the accepts sent from now on say in paxos_accept.spares_rest: true when the acceptors
 * of the lowest ids that make a quorum voted for every instance this leader's learner knows
 * chosen (the node's driver sees the votes; the core does not). Initially false. */
PAXOS_API void paxos_proposer_spares_rest(struct paxos_proposer *p, bool rest);

/** Instances of the window not free for a new client value: holding a value, in phase 2 or
 * closed and waiting for delivery: at most the window (proposer-window). */
PAXOS_API uint32_t paxos_proposer_window_in_use(const struct paxos_proposer *p);

#endif
