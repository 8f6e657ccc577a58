/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The acceptor's protocol logic (thesis 2.2.2, 3.4), free of I/O. A node drives it
 * (paxos_node_add_acceptor()); programs use these functions directly only to embed the core in
 * their own I/O. An acceptor is not thread-safe: call it from one thread at a time.
 */
#ifndef PAXOS_ACCEPTOR_H
#define PAXOS_ACCEPTOR_H

#include <paxos/counters.h>
#include <paxos/message.h>
#include <paxos/storage.h>

struct paxos_acceptor;

/** Most instances one repeat request is ever answered for; the rest must be asked again. */
#define PAXOS_ACCEPTOR_MAX_REPEAT 512u

/** The default repeat budget: this many full repeat requests between two ticks. */
#define PAXOS_ACCEPTOR_REPEAT_BURST 4u

/** What an acceptor is made with (paxos_acceptor_options_from_config() fills it). */
struct paxos_acceptor_options {
	uint32_t id; /**< this acceptor, below PAXOS_MAX_ACCEPTORS */
	/** Most instances one repeat request is answered for (learner-repeat-batch: what an
	 * honest learner asks for at most); 0 or above PAXOS_ACCEPTOR_MAX_REPEAT: that. */
	uint32_t repeat_batch;
	/** Most instances answered again between two ticks, over all requests: a flood of
	 * requests costs the acceptor, and the network, no more than this per tick. Requests
	 * beyond it are dropped (counted as repeats_deferred); learners ask again. 0:
	 * PAXOS_ACCEPTOR_REPEAT_BURST * repeat_batch. */
	uint32_t repeat_budget;
};

/** A new acceptor with options @p o (copied) on store @p st, counting into @p counters. The
 * acceptor does not own st or counters; both must outlive it. NULL when out of memory. */
PAXOS_API struct paxos_acceptor *paxos_acceptor_new(const struct paxos_acceptor_options *o,
						    struct paxos_storage *st,
						    struct paxos_counters *counters);
/** Frees the acceptor (not its store nor its counters); NULL is ignored. Final marks
 * (paxos_acceptor_learned()) not yet written with a ready are dropped: harmless. */
PAXOS_API void paxos_acceptor_free(struct paxos_acceptor *a);

/** Most messages one group commit covers: one datagram's worth (PAXOS_MAX_MESSAGES_PER_DATAGRAM).
 * paxos_acceptor_step() takes at most this many; paxos_acceptor_handle_batch() handles a
 * longer batch in chunks of this size, each with its own commit. */
#define PAXOS_ACCEPTOR_MAX_BATCH 1024u

/** paxos_ready_message.record of a message that reports no record of its ready. */
#define PAXOS_READY_NO_RECORD UINT32_MAX

/** One message a step produced, for @p to, and what must be durable before it leaves. */
struct paxos_ready_message {
	struct paxos_message m; /**< values point into the acceptor or the step's input */
	enum paxos_group to;    /**< the group it is for */
	/** The write (paxos_ready.write) whose durability the message reports on: send it only
	 * once that write, and every earlier one, is durable. 0: it reports no stored state
	 * (hellos, recovery questions) and may leave at once. */
	uint64_t after;
	/** The record of this ready it reports, or PAXOS_READY_NO_RECORD: when the writer could
	 * not store that record (paxos_acceptor_write() sets its iid to 0), the message must not
	 * be sent. */
	uint32_t record;
};

/**
 * What the acceptor's steps produced since the last paxos_acceptor_advance() (the Ready
 * pattern of etcd/raft): the acceptor reads its storage but never writes it; the driver does,
 * in this order:
 *
 * 1. write: trim every instance <= trim (when not 0), then put every record with an iid above
 *    it, in one transaction (paxos_acceptor_write() does exactly that);
 * 2. send each message whose write (after) is durable, in order: at once for a storage whose
 *    commit returns durable; for pipelined commits (paxos/storage.h) once sync says the commit
 *    is durable; a message naming a record the write could not store is dropped;
 * 3. paxos_acceptor_advance() with the write's status.
 *
 * A crash anywhere in between is safe: a message never leaves ahead of the state it reports,
 * and state written but never reported is what Paxos allows an acceptor to hold. Everything
 * here points into the acceptor (a per-step arena, no allocation per message) or into the
 * messages the step was given, and stays valid until paxos_acceptor_advance().
 */
struct paxos_ready {
	paxos_iid trim; /**< trim every instance <= trim first; 0: no trim */
	/** The records to put (at most one per instance), the values' bytes copied by the store.
	 * Records at or below trim are not written. */
	struct paxos_record *records;
	size_t record_count;                        /**< entries in records */
	const struct paxos_ready_message *messages; /**< in the order they were produced */
	size_t message_count;                       /**< entries in messages */
	/** This write's number, counting the acceptor's writes from 1 (0: trim and records are
	 * empty, nothing to write); messages name it, or an earlier one, in after. */
	uint64_t write;
};

/**
 * One step: handles msgs[0..n), n at most PAXOS_ACCEPTOR_MAX_BATCH, sent to the acceptors
 * group (prepare, accept, repeat, trim, hello, recovery answers; anything else is ignored),
 * adding to the ready what they change and answer (a repeat that asks for trimmed instances
 * is answered with PAXOS_MSG_TRIMMED first). Values in msgs must stay valid until
 * paxos_acceptor_advance(). Several steps may be taken before one ready; each sees what the
 * earlier ones changed. Returns PAXOS_OK, PAXOS_E_INVALID (n too large, or a ready taken and
 * not advanced), PAXOS_E_DUPLICATE (an older acceptor with this id runs: stop, after sending
 * the ready's hello) or a storage error from a read: the acceptor then stops and the ready
 * holds nothing to send but that hello.
 */
PAXOS_API int paxos_acceptor_step(struct paxos_acceptor *a, const struct paxos_message *msgs,
				  size_t n);

/** The periodic step (see paxos_acceptor_tick()), into the ready. */
PAXOS_API int paxos_acceptor_step_tick(struct paxos_acceptor *a);

/** Fills @p rd with what the steps since the last advance produced; true when there is
 * anything to write or send. Until paxos_acceptor_advance() the acceptor takes no step. */
PAXOS_API bool paxos_acceptor_ready(struct paxos_acceptor *a, struct paxos_ready *rd);

/** Writes @p rd's trim and records to @p st in one transaction (see paxos_ready). A record the
 * store cannot hold that far out (PAXOS_E_FULL) is skipped, its iid set to 0: the messages
 * naming it must not be sent. Returns PAXOS_OK or the store's error. */
PAXOS_API int paxos_acceptor_write(struct paxos_storage *st, struct paxos_ready *rd);

/** Ends the ready: @p write_status is what writing it gave (PAXOS_OK, or the store's error:
 * the acceptor then stops for good, as nothing it said may be trusted to be stored). Counts
 * what was sent and written. */
PAXOS_API void paxos_acceptor_advance(struct paxos_acceptor *a, int write_status);

/**
 * Group commit (thesis 3.4), for a storage whose commits return durable: steps through
 * msgs[0..n) in chunks of PAXOS_ACCEPTOR_MAX_BATCH, writes each chunk's ready
 * (paxos_acceptor_write()), and only then emits its messages, in order. Values in msgs must
 * stay valid during the call; out must not call back into the acceptor. Returns PAXOS_OK, or
 * a storage error: then nothing of the chunk is emitted and the acceptor must not answer
 * anything again. With pipelined commits (paxos/storage.h) the commit returns before it is
 * durable: drive the acceptor through paxos_acceptor_ready() instead and hold each message
 * until its write is durable (the node does, lib/node/node_hold.c).
 */
PAXOS_API int paxos_acceptor_handle_batch(struct paxos_acceptor *a,
					  const struct paxos_message *msgs, size_t n,
					  const struct paxos_emitter *out);

/** A batch of one. */
PAXOS_API int paxos_acceptor_handle(struct paxos_acceptor *a, const struct paxos_message *m,
				    const struct paxos_emitter *out);

/**
 * Learning acceptors (thesis 3.7.5): v was chosen for iid (the node's learner closed it).
 * Marks the record final with v; from then on the record never changes: accepts for iid, at
 * any ballot, are answered with v flagged final, prepares with a promise carrying v, and
 * repeats and ticks say final, so a learner delivers on one answer. The mark (v copied) goes
 * into the next ready, written with the next step's changes, not at once (losing it in a
 * crash is harmless, and so it is dropped when too many wait). Trimmed instances are ignored.
 * Only a decision of the log the acceptor votes in (paxos_acceptor_generation()) may be
 * given: the caller checks the learner's generation, for an acceptor in another log would
 * answer with the value as final under its own log's name.
 * Not between paxos_acceptor_ready() and paxos_acceptor_advance() (nor from the emitter of a
 * batch): PAXOS_E_INVALID. Returns PAXOS_OK or a storage error from the read (the acceptor is
 * then stopped, as after a failed batch).
 */
PAXOS_API int paxos_acceptor_learned(struct paxos_acceptor *a, paxos_iid iid,
				     const struct paxos_value *v);

/*
 * Membership and recovery from lost state. An acceptor that starts without its earlier state
 * (volatile storage, a fresh or new store) must not vote again in any instance or ballot it
 * may have promised or accepted before (thesis 3.7.6): a restarted memory acceptor would
 * otherwise let two values be chosen. Such an acceptor (amnesiac) first recovers: until then
 * it answers only with values it learned as final. It asks the other acceptors (every tick,
 * with its hello) for the highest instance they hold any state for, and the proposers for the
 * highest ballot they used. Only acceptors that hold their state answer: one that recovers
 * itself knows nothing of its earlier life, so its word would let a floor be set too low when
 * several lost their state together. With answers from acceptors - quorum + 1 other acceptors
 * (any quorum that promised or accepted with it before shares one with them) and from every
 * proposer (or, for proposers that never answer, after recovery_ticks ticks: their datagrams
 * are assumed gone by then), it votes again: promises only in instances above the highest
 * reported (floor), and nothing at or below every ballot reported (fence); lower ballots are
 * rejected with the fence, so proposers skip past it. Accepts above the fence are taken below
 * the floor too (safe: see acceptor/recovery.c), so instances there still close. When too many
 * acceptors lost their state at once no quorum of answers can come: the acceptor keeps its
 * votes withheld and says what it waits for (paxos_acceptor_recovery_wait).
 *
 * Every acceptor sends a hello with its incarnation (a random number drawn at each start),
 * its age (paxos_acceptor_set_age) and the incarnation of another acceptor with its id it heard
 * last. One that hears its own id from a hello that echoes its own incarnation (so it comes from a
 * process running now, not a late or replayed datagram) and is older stops (PAXOS_E_DUPLICATE from
 * paxos_acceptor_handle_batch, after its hello once more so that the other logs it); every
 * one counts them (duplicate_acceptors).
 */
/** How long a recovering acceptor waits for a proposer that does not answer, and a restarted
 * proposer waits before it answers (paxos_proposer_options.recovery_grace): by then no
 * datagram of an earlier life is on its way any more. */
#define PAXOS_RECOVERY_WAIT_MS 2000u

/** Most configurations an acceptor's recovery covers (paxos_acceptor_membership). */
#define PAXOS_ACCEPTOR_CONFIGURATIONS 4u

/**
 * Membership and recovery from lost state (paxos_acceptor_join()). An acceptor that starts
 * without its earlier state (volatile storage, a fresh or new store) must not vote again in
 * any instance or ballot it may have promised or accepted before (thesis 3.7.6): it recovers
 * first, asking the other acceptors for the highest instance they hold state for and the
 * proposers for the highest ballot they used, and votes again only above what they report.
 * Every acceptor also sends hellos with its incarnation, so that two acceptors with one id
 * are found: the older one stops (PAXOS_E_DUPLICATE).
 */
struct paxos_acceptor_membership {
	uint32_t acceptors;      /**< in the configuration: quorum is acceptors / 2 + 1 */
	uint32_t proposers;      /**< in the configuration: each is asked for its ballots */
	uint64_t incarnation;    /**< drawn at random at every start, not 0 */
	bool amnesiac;           /**< started without earlier state: recover first */
	uint32_t recovery_ticks; /**< 0: wait for every proposer for ever */
	/** What an earlier recovery of this store set (kept beside it; 0 when it never
	 * recovered): a restart on the same store keeps voting only above them. */
	paxos_iid floor;
	paxos_ballot fence; /**< see floor: the ballot fence set then */
	/** With a changing acceptor set (paxos/membership.h): the member sets, one bit per id,
	 * of the configurations whose instances this acceptor may have voted in and that may
	 * not be decided everywhere yet, newest first; a 0 ends the list. Recovery then needs,
	 * in each of them, answers from as many other members as leave no quorum of it
	 * unheard, and acceptors bounds nothing (ids below PAXOS_MAX_ACCEPTORS). All 0: the
	 * one configuration of acceptors 0 .. acceptors - 1. */
	uint32_t configurations[PAXOS_ACCEPTOR_CONFIGURATIONS];
	/** The last instance each of configurations governs, 0 for none (the newest). Once
	 * every proposer answered and the answers reach that instance (every instance of the
	 * configuration lies below the floor, every ballot below the fence), the configuration
	 * needs no answers of its own, unless another of its members says it recovers too: its
	 * members may be retired for good. */
	paxos_iid configuration_ends[PAXOS_ACCEPTOR_CONFIGURATIONS];
	/** With a changing proposer set: the proposers of the configuration in force, one bit per
	 * id below proposers, each asked for its ballots instead of all of 0 .. proposers - 1
	 * (answers from others are not counted). 0: all of them. */
	uint32_t proposer_set;
	/** The generation of the log this store serves, or, amnesiac, the highest one an
	 * earlier life voted in, as kept beside the store (0: none). The driver keeps
	 * paxos_acceptor_generation() there before any vote of a new one leaves: when every
	 * acceptor lost the log, the new one is named above all those kept (acceptor/recovery.c).
	 */
	uint64_t generation;
	/** An earlier life served a log (its generation is kept beside the store, even 0): a
	 * start its proposers call their first, which would otherwise keep that generation,
	 * begins a new log above it once every other acceptor recovers too. */
	bool served_before;
	/** Ticks on which an older duplicate's hellos (echoing this incarnation) must be heard,
	 * within twice as many ticks from the first, before this acceptor stops; 0 or 1: the
	 * first such hello stops it. Without datagram authentication anyone can send a hello, so
	 * one datagram must not stop a healthy member: the node asks for
	 * PAXOS_DUPLICATE_TICKS_UNAUTHENTICATED then. */
	uint32_t duplicate_ticks;
};

/** paxos_acceptor_membership.duplicate_ticks without an auth-key-file: a duplicate that runs
 * says hello every tick, a single forged datagram does not. */
#define PAXOS_DUPLICATE_TICKS_UNAUTHENTICATED 3u

/** Starts hellos (and recovery, when amnesiac). Without it an acceptor votes from the start
 * and sends no hellos, as the unit tests want. Returns PAXOS_E_INVALID for bad numbers. */
PAXOS_API int paxos_acceptor_join(struct paxos_acceptor *a,
				  const struct paxos_acceptor_membership *m);

/** Whether the acceptor still recovers (votes withheld). */
PAXOS_API bool paxos_acceptor_recovering(const struct paxos_acceptor *a);
/** Once it recovered: the highest instance reported; it promises only above it. */
PAXOS_API paxos_iid paxos_acceptor_floor(const struct paxos_acceptor *a);
/** The generation of the log it votes in (while recovering: the one it was joined with). */
PAXOS_API uint64_t paxos_acceptor_generation(const struct paxos_acceptor *a);
/** How an acceptor's recovery came to the log it votes in. */
enum paxos_acceptor_log {
	PAXOS_ACCEPTOR_LOG_JOINED = 0, /**< it serves the log the others answered for */
	PAXOS_ACCEPTOR_LOG_FIRST = 1,  /**< a first start: nothing was accepted anywhere */
	PAXOS_ACCEPTOR_LOG_LOST = 2,   /**< every acceptor had lost the log: a new one began */
};
/** How its recovery came to its log (a first start, or a new one after every acceptor lost
 * the old one, or joined). */
PAXOS_API enum paxos_acceptor_log paxos_acceptor_began_log(const struct paxos_acceptor *a);
/** Whether nodes of an older wire version are live (the node says so as it hears them): while
 * they are, no new log begins (PAXOS_ACCEPTOR_LOG_LOST), as their messages carry no
 * generation; a recovering acceptor whose peers all lost the log waits. */
PAXOS_API void paxos_acceptor_set_old_peers(struct paxos_acceptor *a, bool live);
/** Once it recovered: the highest ballot reported; it votes for nothing at or below it. */
PAXOS_API paxos_ballot paxos_acceptor_fence(const struct paxos_acceptor *a);

/** The incarnation of the last other acceptor with this id heard (0: none). */
PAXOS_API uint64_t paxos_acceptor_duplicate(const struct paxos_acceptor *a);

/** How long this acceptor has run, in microseconds of a monotonic clock, for its hellos: which
 * of two with one id started later is told by their ages, never by wall clocks. Say it before
 * each tick and batch (the node does); an acceptor never told counts its ticks instead, which
 * cannot tell apart two starts less than a tick apart. */
PAXOS_API void paxos_acceptor_set_age(struct paxos_acceptor *a, uint64_t age_us);

/** Whether that acceptor runs now (it answered our hello) and started after this one: it stops
 * by itself. */
PAXOS_API bool paxos_acceptor_duplicate_newer(const struct paxos_acceptor *a);

/** How many ticks an older duplicate was heard on so far, while that is fewer than
 * paxos_acceptor_membership.duplicate_ticks (0: none heard, or it stops us already). */
PAXOS_API uint32_t paxos_acceptor_duplicate_older_heard(const struct paxos_acceptor *a);

/** What a recovering acceptor still waits for; all zero once it recovered. */
struct paxos_acceptor_recovery_wait {
	uint32_t ticks;              /**< ticks spent recovering */
	uint32_t acceptors_needed;   /**< answers from other acceptors it needs */
	uint32_t acceptors_answered; /**< answers it has */
	uint32_t acceptors_silent;   /**< other acceptors that have not answered, one bit per id */
	uint32_t acceptors_recovering; /**< of those, the ones whose hellos say they recover too */
	uint32_t proposers_silent;     /**< proposers that have not answered */
};

/** Fills @p w with what a recovering acceptor still waits for. */
PAXOS_API void paxos_acceptor_recovery_wait(const struct paxos_acceptor *a,
					    struct paxos_acceptor_recovery_wait *w);

/**
 * Whether the acceptor holds its state again: it never lost it, or it recovered and its
 * node's learner has since delivered every instance up to its floor (paxos_acceptor_decided),
 * which learning acceptors keep as final. Until then another acceptor that loses its state
 * (the next of a rolling restart) may leave instances below both floors that no quorum can
 * close: restart the next acceptor only once this is true (the node logs "restored").
 */
PAXOS_API bool paxos_acceptor_restored(const struct paxos_acceptor *a);

/**
 * Keep at most about this many instances below the highest accepted one: each tick trims the
 * rest, as a trim request would (repeats for them are answered with PAXOS_MSG_TRIMMED). For a
 * store that lives in memory, which would otherwise grow with every instance. 0 (the
 * default): keep everything until trimmed by request.
 */
PAXOS_API void paxos_acceptor_set_retention(struct paxos_acceptor *a, uint64_t instances);

/**
 * Trims (PAXOS_MSG_TRIM) drop instances for good, so the acceptor applies them only as far as
 * instances are known decided: a trim beyond is cut down to that point (counted as
 * trims_clamped). decided tells it that every instance up to iid is decided (its node's
 * learner delivered them, or skipped them as trimmed by a quorum). An acceptor never told so
 * (no learner beside it: learning-acceptors no) cannot know what is decided; it trims at most
 * up to the highest instance it accepted, which stops trims far ahead of the cluster but not
 * one that reaches in-flight instances.
 */
PAXOS_API void paxos_acceptor_decided(struct paxos_acceptor *a, paxos_iid iid);

/** The highest instance a trim may reach now (see paxos_acceptor_decided). */
PAXOS_API paxos_iid paxos_acceptor_trim_limit(const struct paxos_acceptor *a);

/** Periodic: apply the retention bound, then resend the highest accepted instance and the
 * acceptor state to the learners, so they find their holes when traffic is low; the repeat
 * budget starts afresh. paxos_acceptor_step_tick(), its ready written and emitted as
 * paxos_acceptor_handle_batch() does. */
PAXOS_API int paxos_acceptor_tick(struct paxos_acceptor *a, const struct paxos_emitter *out);

#endif
