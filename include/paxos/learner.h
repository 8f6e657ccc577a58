/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The learner's protocol logic (thesis 3.3), free of I/O. A node drives it
 * (paxos_node_add_learner()); programs use these functions directly only to embed the core in
 * their own I/O. A step (paxos_learner_step()) returns what it decided as data, a
 * struct paxos_learner_ready: the instances it closed, delivered and skipped as trimmed, in
 * order, for the driver to hand to a proposer, an acceptor and the application (the Ready
 * pattern of etcd/raft; no core calls another). paxos_learner_handle() is that step with the
 * options' callbacks called from its ready. A learner is not thread-safe, and its callbacks
 * run inside paxos_learner_handle(), paxos_learner_skip_to() and paxos_learner_tick(): they
 * must not free the learner.
 */
#ifndef PAXOS_LEARNER_H
#define PAXOS_LEARNER_H

#include <paxos/counters.h>
#include <paxos/membership.h>
#include <paxos/message.h>

struct paxos_learner;

/** Where a learner without a start instance begins (paxos.conf learner-start). */
enum paxos_learner_start {
	PAXOS_START_FROM_FIRST = 0,   /**< fill everything from instance 1 */
	PAXOS_START_FROM_CURRENT = 1, /**< start at the first instance it can close */
};

/** Called in instance order, exactly once per instance; value is valid during the call. */
typedef void (*paxos_instance_delivered_fn)(void *arg, paxos_iid iid,
					    const struct paxos_value *value);

/** Called when an instance becomes closed (a quorum accepted it, or an acceptor said its value
 * is final), possibly before the instances below it are delivered, and again for each accepted
 * message that arrives for it while it waits for those: a proposer that re-runs it (its window
 * reached it after the first call) hears of it that way. The proposer uses it for event C. */
typedef void (*paxos_instance_closed_fn)(void *arg, paxos_iid iid, const struct paxos_value *value);

/**
 * Called once when instances from..to can no longer be learned: a quorum of acceptors
 * reported them trimmed (thesis 3.4.1), and the learner has not delivered them. Reports count
 * only up to the highest instance the learner has heard of. The learner skips them (next becomes to
 * + 1, already during the call); the application should load a snapshot covering at least instance
 * to.
 */
typedef void (*paxos_instances_trimmed_fn)(void *arg, paxos_iid from, paxos_iid to);

/**
 * The answer to paxos_learner_fetch: status PAXOS_OK with the value chosen for iid (valid
 * during the call only), PAXOS_E_TRIMMED when the acceptors trimmed it (no quorum can answer
 * for it any more: load a snapshot), or PAXOS_E_TIMEOUT when no answer came in fetch_timeout;
 * value is NULL unless status is PAXOS_OK.
 */
typedef void (*paxos_instance_fetched_fn)(void *arg, paxos_iid iid, int status,
					  const struct paxos_value *value);

/**
 * Called when the acceptors began a new log (a higher generation, reported by a quorum of
 * them) after this learner delivered from another: every acceptor had lost the old one (a
 * whole memory cluster restarted). The learner drops what it held and delivers the new log
 * from its instance 1, whose numbers the old log used too: what the application built from
 * the old log is not continued by it.
 */
typedef void (*paxos_new_log_fn)(void *arg, uint64_t generation);

/** Repair (PAXOS_MSG_REPAIR): a learner stalled for PAXOS_REPAIR_AFTER hole checks asks the
 * leader to run its first missing instances again (at most PAXOS_REPAIR_SPAN from the next
 * to deliver), and again every PAXOS_REPAIR_EVERY hole checks while it stays stalled. */
#define PAXOS_REPAIR_AFTER 2u
/** Hole checks between two repair requests of a learner that stays stalled. */
#define PAXOS_REPAIR_EVERY 2u
/** Most instances, from the next to deliver, one repair request covers. */
#define PAXOS_REPAIR_SPAN 16u

/** Fetches outstanding at once; each holds a value buffer, allocated with the learner. */
#define PAXOS_LEARNER_MAX_FETCHES 16u

/** What a learner is made with (paxos_learner_options_from_config() fills all but the
 * callbacks, which only paxos_learner_handle() and paxos_learner_skip_to() call: a driver that
 * takes the readies itself leaves them NULL). */
struct paxos_learner_options {
	uint32_t acceptors;       /**< quorum is acceptors / 2 + 1 */
	uint32_t window;          /**< instances tracked from the next to deliver */
	uint32_t max_value;       /**< largest value it must store */
	uint32_t repeat_batch;    /**< most instances in one repeat request */
	paxos_time hole_check;    /**< interval between repeat requests for holes, microseconds */
	paxos_time fetch_timeout; /**< a fetch gives up after this long; 0: 50 hole checks */
	enum paxos_learner_start start; /**< where to begin when start_iid is 0 */
	paxos_iid start_iid; /**< non-zero: deliver from this instance on, whatever start says */
	/** With start_iid above 1 and start_generation_known: the generation of the log the
	 * application's state up to start_iid - 1 came from (paxos_learner_generation() when it
	 * saved that state; 0 for a cluster's first log). A quorum of acceptors serving a higher
	 * generation then began a new log: the learner says so (new_log) and delivers it from
	 * instance 1. Without it the first log heard is taken as the one start_iid belongs to. */
	uint64_t start_generation;
	bool start_generation_known; /**< start_generation says the state's log */
	/** Receives every instance in order from paxos_learner_handle(); may be NULL for a
	 * driver that takes the readies (paxos_learner_step()). */
	paxos_instance_delivered_fn deliver;
	void *deliver_arg;               /**< deliver's first argument, not owned */
	paxos_instance_closed_fn closed; /**< may be NULL */
	void *closed_arg;                /**< closed's first argument, not owned */
	/** Told of instances trimmed before they were learned; may be NULL: the instances are
	 * skipped all the same. */
	paxos_instances_trimmed_fn trimmed;
	void *trimmed_arg;        /**< trimmed's first argument, not owned */
	paxos_new_log_fn new_log; /**< told of a new log; may be NULL: it begins all the same */
	void *new_log_arg;        /**< new_log's first argument, not owned */
	/** false: instances trimmed before they were learned are skipped (TRIMMED, and delivery
	 * goes on after them). true: the learner holds at them instead: one TRIMMED event, then
	 * it delivers nothing and asks for nothing from next on (paxos_learner_held()) until its
	 * driver installs a snapshot covering them and moves it past with
	 * paxos_learner_step_skip_to(). */
	bool hold_trimmed;
	/** NULL: the acceptors are ids 0 .. acceptors - 1, for good. Else the configuration
	 * history (paxos/membership.h), not owned: the learner applies every value it delivers
	 * to it (before the deliver callback), decides each instance with the members and
	 * quorum of that instance's configuration, and keeps the votes of an instance whose
	 * configuration is not known yet until it is. acceptors is then the number of acceptor
	 * ids that may ever be members (ids 0 .. acceptors - 1). */
	struct paxos_membership *membership;
	/** With membership: after delivering a membership command the learner delivers nothing
	 * more until its driver has kept the new history where a restart reads it and says so
	 * with paxos_learner_step_change_kept(); nothing acts on a configuration a restart would
	 * not know, yet the driver's loop need not wait for the disk. */
	bool hold_changes;
};

/** Bytes paxos_learner_new allocates for these options: mostly window x max_value, a value
 * buffer per instance tracked, and room for the events of one ready (two per instance
 * tracked). The configuration check refuses more than the machine can hold. */
PAXOS_API uint64_t paxos_learner_memory(const struct paxos_learner_options *o);

/** A new learner with options @p o (copied), counting into @p counters, which it does not own
 * and which must outlive it. NULL on bad options or no memory. */
PAXOS_API struct paxos_learner *paxos_learner_new(const struct paxos_learner_options *o,
						  struct paxos_counters *counters);
/** Frees the learner, dropping outstanding fetches without calling them; NULL is ignored. */
PAXOS_API void paxos_learner_free(struct paxos_learner *l);

/** What a learner event says (struct paxos_learner_event). */
enum paxos_learner_event_kind {
	/** Instance iid is closed with value: a quorum accepted it, or an acceptor said its
	 * value is final (see paxos_instance_closed_fn: possibly before the instances below it
	 * are delivered, and again for each accepted message that arrives for it while it waits
	 * for them). A proposer takes it as event C (paxos_proposer_closed()); a learning
	 * acceptor keeps it as final (paxos_acceptor_learned()). */
	PAXOS_LEARNER_CLOSED = 0,
	/** Instance iid is delivered with value, in instance order, exactly once (see
	 * paxos_instance_delivered_fn); a membership the learner has applied it already. */
	PAXOS_LEARNER_DELIVERED = 1,
	/** Instances iid..to can no longer be learned and were skipped (see
	 * paxos_instances_trimmed_fn); value is empty. */
	PAXOS_LEARNER_TRIMMED = 2,
	/** The acceptors began a new log, of generation generation (see paxos_new_log_fn):
	 * nothing held from the old one is delivered, and delivery starts at iid (1). */
	PAXOS_LEARNER_NEW_LOG = 3,
};

/** One thing a learner step decided. */
struct paxos_learner_event {
	enum paxos_learner_event_kind kind; /**< what it says */
	paxos_iid iid;                      /**< the instance (TRIMMED: the first one) */
	paxos_iid to;                       /**< TRIMMED: the last instance skipped; else iid */
	/** CLOSED and DELIVERED: the instance's value, pointing into the learner, valid until
	 * paxos_learner_advance(). */
	struct paxos_value value;
	/** CLOSED and DELIVERED: the ballot that value was proposed at, when the learner knows
	 * it (from the accept, or accepted messages, of that ballot); 0 when it does not (a
	 * final value heard from a learning acceptor under another ballot). A proposer that sent
	 * its value at this ballot knows it is its own without comparing bytes
	 * (paxos_proposer_delivered_ballot()). */
	paxos_ballot ballot;
	/** The generation of the log the event belongs to (NEW_LOG: the new one). */
	uint64_t generation;
};

/**
 * What one learner step decided (the Ready pattern): its events in the order it decided them,
 * which is the order to act on them in. The learner writes nothing and calls no other core:
 * its driver hands each event on (a proposer, a learning acceptor, the application), then
 * calls paxos_learner_advance(). Everything points into the learner (allocated with it, no
 * allocation per message) and stays valid until then.
 */
struct paxos_learner_ready {
	const struct paxos_learner_event *events; /**< in the order they happened */
	size_t event_count;                       /**< entries in events */
};

/**
 * One step: handles one message sent to the learners group (accepted, acceptor state,
 * trimmed) or a leader's accept, whose value the (usually valueless) accepted messages name;
 * anything else is ignored. What it closes, delivers and skips goes into the ready
 * (paxos_learner_ready()); fetch answers are called from inside; a learner catching up, or
 * lacking the value a quorum named, may send a repeat request through out. Returns PAXOS_OK,
 * or PAXOS_E_INVALID (nothing done) while the last ready holds events not yet advanced past.
 */
PAXOS_API int paxos_learner_step(struct paxos_learner *l, const struct paxos_message *m,
				 paxos_time now, const struct paxos_emitter *out);

/** paxos_learner_skip_to() as a step: what it delivers goes into the ready. Returns PAXOS_OK,
 * or PAXOS_E_INVALID (nothing done) while a ready waits to be advanced past. */
PAXOS_API int paxos_learner_step_skip_to(struct paxos_learner *l, paxos_iid first);

/** Fills @p rd with the events of the last step; true when there is any. */
PAXOS_API bool paxos_learner_ready(const struct paxos_learner *l, struct paxos_learner_ready *rd);

/** Ends the ready: its values may be reused from now on, and the next step may be taken. */
PAXOS_API void paxos_learner_advance(struct paxos_learner *l);

/** paxos_learner_step(), then the options' callbacks for each event of its ready (closed,
 * deliver, trimmed, in order), then paxos_learner_advance(). Deliveries, the trimmed callback
 * and fetch answers happen inside this call. */
PAXOS_API void paxos_learner_handle(struct paxos_learner *l, const struct paxos_message *m,
				    paxos_time now, const struct paxos_emitter *out);

/**
 * Periodic hole check: asks the acceptors again for instances it is missing. A stalled
 * learner asks every hole_check. One that is behind (a whole repeat_batch from next on known
 * to exist and none of it closed, e.g. restarted on a long-running cluster) asks for a batch
 * at once and for the next one as soon as that is delivered (from paxos_learner_handle), so
 * that it can overtake a busy cluster; one request is outstanding at a time and a lost answer
 * is asked for again after hole_check (paced, thesis 4.6.1). A learner that repeats do not
 * unstall asks the leader for a repair (see PAXOS_REPAIR_AFTER). Also resends and times out
 * fetches. Call it a few times per hole_check.
 */
PAXOS_API void paxos_learner_tick(struct paxos_learner *l, paxos_time now,
				  const struct paxos_emitter *out);

/**
 * Fetch the value of one instance, typically one delivered in the past (thesis 3.3): asks the
 * acceptors again for iid (repeat iid..iid, resent every hole_check), and calls done once,
 * from a later paxos_learner_handle or paxos_learner_tick: with the value when a quorum
 * reports one ballot or an acceptor says it is final, else with an error (see
 * paxos_instance_fetched_fn). Does not affect delivery. Returns PAXOS_OK, PAXOS_E_INVALID (iid 0,
 * done NULL) or PAXOS_E_FULL (PAXOS_LEARNER_MAX_FETCHES outstanding). Outstanding fetches are
 * dropped without a call by paxos_learner_free.
 */
PAXOS_API int paxos_learner_fetch(struct paxos_learner *l, paxos_iid iid, paxos_time now,
				  paxos_instance_fetched_fn done, void *arg,
				  const struct paxos_emitter *out);

/** The lowest instance not yet delivered. */
PAXOS_API paxos_iid paxos_learner_next_iid(const struct paxos_learner *l);

/** Ends the hold after a membership command (paxos_learner_options.hold_changes): what closed
 * meanwhile is delivered into the ready. Returns PAXOS_OK (also when nothing is held), or
 * PAXOS_E_INVALID (nothing done) while a ready waits to be advanced past. */
PAXOS_API int paxos_learner_step_change_kept(struct paxos_learner *l);

/** Whether the learner holds after a membership command it delivered, until
 * paxos_learner_step_change_kept(). */
PAXOS_API bool paxos_learner_change_held(const struct paxos_learner *l);

/** Makes @p first the next instance to deliver, when it is above the next one now (and ends a
 * hold at trimmed instances below @p first, paxos_learner_held()): the
 * instances below it are known chosen elsewhere (a leader's heartbeat said it delivered
 * them) and are neither delivered nor asked for here; counted in instances_skipped_known.
 * For a learner that serves only its proposer (a lean follower taking over, lib/node).
 * Instances closed above it are delivered at once, through the callbacks as
 * paxos_learner_handle() does (paxos_learner_step_skip_to() puts them in a ready instead). */
PAXOS_API void paxos_learner_skip_to(struct paxos_learner *l, paxos_iid first);

/** Whether the learner holds at trimmed instances (paxos_learner_options.hold_trimmed): its
 * next instance is trimmed, and a snapshot covering at least *@p to (set when true; @p to may
 * be NULL) must be installed before it delivers again. A new log ends the hold. */
PAXOS_API bool paxos_learner_held(const struct paxos_learner *l, paxos_iid *to);

/** The generation of the log it delivers: the highest one a quorum of acceptors reported
 * (0 while none did). */
PAXOS_API uint64_t paxos_learner_generation(const struct paxos_learner *l);

/** Highest instance the acceptors report having accepted (accepted messages, and each
 * acceptor's last state, which replaces its earlier reports); 0 if none. */
PAXOS_API paxos_iid paxos_learner_highest_seen(const struct paxos_learner *l);

#endif
