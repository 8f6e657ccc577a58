/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Client sessions: exactly-once, in-order submission with a completion per value.
 *
 * paxos_node_submit() is fire-and-forget and at-least-once: after a leader change or a
 * resubmit a value can be chosen twice. A session (paxos_session_new()) gives each of its
 * values a client id and a sequence number, resubmits what its own learner has not seen
 * chosen (on a timer, at once on a leader change, after a refusal's hold), and completes each
 * submission exactly once through its callback: delivered at an instance, or timed out.
 *
 * The learners that apply the values (paxos_node_enable_sessions()) keep a table of the
 * highest sequence number applied per client and apply a session value only when it is the
 * client's next one: a copy of one applied already is dropped, one that comes early (its
 * predecessor not chosen yet) is dropped too, and the session sends it again. So the
 * application's delivery callback sees each session value once, in the client's order. The
 * table is part of the application's state: it goes into each snapshot
 * (paxos_session_table_export()) and comes back with it (paxos_session_table_import()).
 *
 * On the wire a session value is the application's bytes behind a short header the library
 * adds and strips (paxos_session_header_encode()): the magic bytes 0xF5 0x53, a version, flags,
 * then the client id, the sequence number and the session's lowest unfinished sequence number
 * as varints. Values of paxos_node_submit() are not touched.
 *
 * Threads: as paxos/node.h, everything here runs on the node's event loop thread; the table
 * functions on a table of one's own may run anywhere.
 */
#ifndef PAXOS_SESSION_H
#define PAXOS_SESSION_H

#include <paxos/node.h>
#include <paxos/session_table.h>
#include <paxos/types.h>

/**
 * Makes the node's learner apply session values through a table of @p max_clients clients
 * (0: PAXOS_SESSION_CLIENTS_DEFAULT): each value's header is stripped, and only the values
 * the table says APPLY reach the delivery callback (paxos_node_delivery_session() names their
 * session during the call); NOOP values never do. Plain values are delivered as before (one
 * that starts with the magic bytes but no valid header is taken as plain). Every learner that
 * applies a log with session values must enable them, with the same limit: one that does not
 * delivers their headers as part of the values. Call it before adding the learner (or
 * proposer), then import the table of the snapshot the learner starts after. Not with
 * learner-merge. Returns PAXOS_OK, PAXOS_E_INVALID (a learner hosted already, learner-merge,
 * a limit above PAXOS_SESSION_CLIENTS_MAX) or PAXOS_E_NOMEM.
 */
PAXOS_API int paxos_node_enable_sessions(struct paxos_node *n, uint32_t max_clients);

/** The node's session table (paxos_node_enable_sessions()), NULL without one: export it with
 * each snapshot between deliveries, import it before the learner starts. Owned by the node. */
PAXOS_API struct paxos_session_table *paxos_node_session_table(struct paxos_node *n);

/** During a delivery callback: true, with the client id and sequence number of the value
 * being delivered, when it came through a session; false for a plain value or outside a
 * delivery. @p client and @p seq may be NULL. */
PAXOS_API bool paxos_node_delivery_session(const struct paxos_node *n, uint64_t *client,
					   uint64_t *seq);

/** Called once after all the values of instance @p iid were delivered (also when none reached
 * the application: a skip, duplicates): the point where the application's state, the session
 * table with it, is as of the end of @p iid, so a snapshot taken here covers instances up to
 * it. */
typedef void (*paxos_instance_end_fn)(void *arg, paxos_iid iid);

/** Calls @p done(@p arg, iid) at the end of each delivered instance. Call it before adding the
 * learner or the proposer. */
PAXOS_API void paxos_node_on_instance_end(struct paxos_node *n, paxos_instance_end_fn done,
					  void *arg);

/** A session submitting on a node (paxos_session_new()). */
struct paxos_session;

/**
 * The outcome of one submission, called once on the node's thread: status PAXOS_OK and the
 * instance @p iid the node's learner first saw it chosen in; or PAXOS_E_TIMEOUT (iid 0) when it
 * was not seen chosen within the session's timeout: it may still have been, or be, chosen, but
 * never after a later value of the session. @p seq is its sequence number. It may submit.
 */
typedef void (*paxos_session_done_fn)(void *arg, uint64_t seq, int status, paxos_iid iid);

/** A session's settings (paxos_session_options_default() fills the defaults). */
struct paxos_session_options {
	/** Client id, unique in the cluster for this run; 0: a random one (getrandom). */
	uint64_t client;
	/** Submissions in flight at once (1..1024; default 16); more are refused with
	 * PAXOS_E_FULL until one completes. */
	uint32_t window;
	/** A submission not seen chosen is sent again after this many milliseconds (default
	 * 200). */
	uint32_t resubmit_ms;
	/** A submission not seen chosen after this many milliseconds completes with
	 * PAXOS_E_TIMEOUT (default 10000; 0: never). */
	uint32_t timeout_ms;
};

/** Fills @p o with the defaults. */
PAXOS_API void paxos_session_options_default(struct paxos_session_options *o);

/**
 * A session on node @p n with options @p o (NULL: the defaults). The node needs a learner
 * (added before), whose log it watches for its values; sessions are enabled on the node with
 * the default limit if they were not. The node owns nothing of the caller's; it frees the
 * sessions left in paxos_node_free() without calling their callbacks. NULL on error, with
 * paxos_node_error() saying why (no learner, bad options, no memory).
 */
PAXOS_API struct paxos_session *paxos_session_new(struct paxos_node *n,
						  const struct paxos_session_options *o);

/** Frees @p s; its submissions in flight are dropped without their callbacks. NULL is
 * ignored. Not from inside its own callback. */
PAXOS_API void paxos_session_free(struct paxos_session *s);

/**
 * Submits @p len bytes at @p value through session @p s: copied, sent, and sent again until the
 * node's learner sees it chosen, then @p done(@p arg, seq, status, iid) is called once. The
 * sequence number goes to *@p seq (may be NULL). Returns PAXOS_OK; PAXOS_E_INVALID (a NULL
 * value with a length); PAXOS_E_TOO_BIG (with the header the value exceeds
 * paxos_config_max_value()); PAXOS_E_FULL (the window is full, or the leader said lately that
 * it is: submit again later). On error nothing is sent, @p done is not called and
 * paxos_node_error() says why.
 */
PAXOS_API int paxos_session_submit(struct paxos_session *s, const void *value, size_t len,
				   paxos_session_done_fn done, void *arg, uint64_t *seq);

/** Sends every submission in flight again now, e.g. when the application knows the leader
 * changed before the node's learner does. */
PAXOS_API void paxos_session_resend(struct paxos_session *s);

/** The session's client id. */
PAXOS_API uint64_t paxos_session_client(const struct paxos_session *s);
/** Submissions in flight (not completed). */
PAXOS_API uint32_t paxos_session_in_flight(const struct paxos_session *s);

/** Called once when a barrier (paxos_node_barrier()) is passed: status PAXOS_OK and the
 * instance the learner has delivered up to, or PAXOS_E_TIMEOUT (iid 0). */
typedef void (*paxos_barrier_fn)(void *arg, int status, paxos_iid iid);

/**
 * Read barrier: calls @p done(@p arg, PAXOS_OK, iid) once the node's learner has delivered every
 * value chosen before the call, so that state built from the deliveries may answer reads.
 * How: a NOOP value is submitted through the node's own session (made at the first call) and,
 * once the learner saw it chosen in instance j, the barrier waits until the learner delivered up
 * to the higher of j and the highest instance it has heard of by then. A value chosen before the
 * call is below j under one leader; after a leader change the new leader may place the barrier
 * in a hole below values the old one had chosen, which the learner has heard of unless every
 * message about them to it was lost. It costs one ordered value, no extra round trip.
 * Completes with PAXOS_E_TIMEOUT after the session's default timeout. Returns PAXOS_OK,
 * PAXOS_E_INVALID (no learner, @p done NULL, learner-merge), PAXOS_E_FULL (too many barriers
 * waiting, or the leader is full) or PAXOS_E_NOMEM; paxos_node_error() says why.
 * paxos_node_free() drops the barriers still waiting without calling them. Every learner of
 * the log must enable sessions: the NOOP value is a session value.
 */
PAXOS_API int paxos_node_barrier(struct paxos_node *n, paxos_barrier_fn done, void *arg);

#endif
