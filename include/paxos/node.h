/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * A node hosts any mix of roles (acceptor, proposer, learner) on one libevent loop and
 * connects them to the UDP multicast groups (or unicast members) of a configuration. It is the
 * thin adapter around the I/O-free cores; applications link it to broadcast and deliver values.
 *
 * Threads: the library is single-threaded. A node belongs to the thread that runs its
 * event_base (its event loop thread): every function here, but paxos_node_new() and
 * paxos_node_new_on() before the loop runs, must be called from that thread, either before the
 * loop is dispatched or from a callback the loop runs (a delivery, a libevent timer). Callbacks
 * (deliveries, trimmed, fetched) are called on that thread too. Several nodes may run on one
 * loop, or on loops of different threads.
 *
 * Errors: functions returning @c int return an enum paxos_status code; after a failure
 * paxos_node_error() says what went wrong in words.
 */
#ifndef PAXOS_NODE_H
#define PAXOS_NODE_H

#include <paxos/config.h>
#include <paxos/transport.h>
#include <paxos/counters.h>
#include <paxos/epoch.h>
#include <paxos/learner.h>
#include <paxos/membership.h>
#include <paxos/storage.h>

struct event_base;
struct paxos_node;

/** A node on @p base with the transport @p cfg names (paxos.conf "transport": multicast or
 * unicast), hosting no role yet. @p cfg is copied: the caller keeps and may free its own.
 * @p base is not owned: it must outlive the node. Returns the node, which the caller frees with
 * paxos_node_free(), or NULL on error (bad configuration, socket errors, no memory) with the
 * reason in @p err (@p errlen bytes, NUL-terminated). */
PAXOS_API struct paxos_node *paxos_node_new(struct event_base *base, const struct paxos_config *cfg,
					    char *err, size_t errlen);

/** A node on another transport (paxos/transport.h): @p open(@p open_arg, ...) gives it one,
 * which the node owns from then on (it destroys it in paxos_node_free()). paxos_node_new() is
 * this with paxos_transport_open(). Same ownership and errors as paxos_node_new(). */
PAXOS_API struct paxos_node *paxos_node_new_on(struct event_base *base,
					       const struct paxos_config *cfg,
					       paxos_transport_open_fn open, void *open_arg,
					       char *err, size_t errlen);
/** Stops the node and frees it with everything it owns: its roles, their stores (each made
 * durable first), its transport and its pending fetches (their callbacks are not called).
 * NULL is ignored. Call it from the event loop thread, before freeing the event_base, and not
 * from inside one of the node's own callbacks. */
PAXOS_API void paxos_node_free(struct paxos_node *n);

/** Host an acceptor with this @p id; the node takes ownership of @p st (also when this
 * fails: it then destroys it), which usually comes from paxos_storage_open(). Returns PAXOS_OK,
 * PAXOS_E_INVALID (bad id, an acceptor or the serializer hosted already), PAXOS_E_IO
 * (the transport cannot receive for it) or PAXOS_E_NOMEM. A memory store keeps only
 * the last memory-retention instances (paxos.conf); older ones are trimmed as they age. */
PAXOS_API int paxos_node_add_acceptor(struct paxos_node *n, uint32_t id, struct paxos_storage *st);

/** Host the serializer (thesis 4.2, include/paxos/serializer.h) in place of the acceptors and
 * proposers: it takes the clients' values, stores them in st (owned by the node from now on)
 * and sends them to the learners as final, speaking as acceptor 0. Not on a node that hosts
 * an acceptor or a proposer. */
PAXOS_API int paxos_node_add_serializer(struct paxos_node *n, struct paxos_storage *st);

/** Host a proposer with this @p id. It brings an internal learner, shared with
 * paxos_node_add_learner(), and takes part in leader election (paxos.conf `election`): it
 * leads while it is the lowest-id live proposer, or while the oracle says so. Returns PAXOS_OK,
 * PAXOS_E_INVALID (bad id, a proposer or the serializer hosted already), or the status of
 * the step that failed: opening or advancing its epoch store in storage-path, joining the
 * transport's groups, allocating (PAXOS_E_NOMEM). */
PAXOS_API int paxos_node_add_proposer(struct paxos_node *n, uint32_t id);

/** paxos_node_add_proposer() with the proposer's epochs in @p es (paxos/epoch.h), which the
 * node owns from now on (also when this fails); paxos_node_add_proposer() opens the file store in
 * storage-path/proposer-ID (paxos_epoch_store_dir()). */
PAXOS_API int paxos_node_add_proposer_with(struct paxos_node *n, uint32_t id,
					   struct paxos_epoch_store *es);

/** Called for every value delivered, in instance order, on the node's event loop thread:
 * @p iid is its instance, @p position its place among the values batched into that instance (0
 * for the first). @p value is valid during the call only: copy what you keep. @p arg is what
 * paxos_node_add_learner() was given. It may submit values, but must not free the node. */
typedef void (*paxos_value_delivered_fn)(void *arg, paxos_iid iid, uint32_t position,
					 const struct paxos_value *value);

/** Host a learner that delivers every value, in order, to @p deliver(@p arg, ...); @p arg is
 * not owned and must stay valid while the node lives. A node hosts at most one learner (a
 * proposer's counts). Returns PAXOS_OK, PAXOS_E_INVALID (@p deliver NULL, a learner hosted
 * already), PAXOS_E_IO or PAXOS_E_NOMEM. */
PAXOS_API int paxos_node_add_learner(struct paxos_node *n, paxos_value_delivered_fn deliver,
				     void *arg);

/** Start learning at instance @p first rather than where paxos.conf says (learner-start), e.g.
 * after loading a snapshot that covers everything below first. Call it before adding a
 * learner or a proposer. */
PAXOS_API int paxos_node_set_learner_start(struct paxos_node *n, paxos_iid first);

/** With paxos_node_set_learner_start(): the state below the start instance came from the log
 * of generation @p generation (paxos_node_generation() when the application saved it; 0 for
 * the cluster's first log). If the acceptors serve a higher one, every acceptor lost that log
 * since (a whole memory cluster restarted): the node says "new log" (paxos_node_on_new_log())
 * and delivers the new log from instance 1, where the application starts over. Without this
 * call the first log heard is taken as the one the start instance belongs to. Call it before
 * adding a learner or a proposer: PAXOS_E_INVALID after. */
PAXOS_API int paxos_node_set_learner_generation(struct paxos_node *n, uint64_t generation);

/** Calls @p trimmed(@p arg, from, to) when instances from..to can no longer be learned
 * because the acceptors trimmed them (thesis 3.4.1): the application should load a snapshot.
 * The learner then goes on from to + 1. Call it before adding a learner or a proposer. */
PAXOS_API void paxos_node_on_trimmed(struct paxos_node *n, paxos_instances_trimmed_fn trimmed,
				     void *arg);

/** Calls @p new_log(@p arg, generation) when the node's learner, having delivered from one
 * log, hears a quorum of acceptors serve a new one (paxos_new_log_fn): every acceptor had lost
 * the old log, as when a whole memory cluster restarts, and began a new log, whose instances
 * are numbered from 1 again. Delivery goes on from the new log's instance 1 after the call;
 * the application drops or keeps apart what it built from the old log. The node also logs it
 * and counts it (new_logs). */
PAXOS_API void paxos_node_on_new_log(struct paxos_node *n, paxos_new_log_fn new_log, void *arg);

/** Called with the proposer's id when a leader's first instance is delivered. */
typedef void (*paxos_new_leader_fn)(void *arg, uint32_t proposer);

/** Calls @p new_leader(@p arg, proposer) when the node's learner delivers an instance that
 * another leadership proposed than the instances it delivered before (another proposer, or
 * the same one restarted, as the instance's ballot says): values this node submitted and has not
 * seen delivered may have waited on a leader that is gone, and with several partitions the new one
 * has no copy of them (docs/operating.md, "Lean followers"; it announces itself with a skip,
 * paxos_proposer_announce()), so submit them again now, with the same bytes. It may say so
 * more than once at one failover (a value chosen under the old leader can be delivered
 * after one of the new), and a value submitted again may be delivered twice. Needs a
 * learner on the node; not for the first instance it delivers, nor while the learner catches
 * up (more than proposer-window instances behind the highest it heard of): the leader
 * changes of the past it replays then took none of the values waiting now. */
PAXOS_API void paxos_node_on_new_leader(struct paxos_node *n, paxos_new_leader_fn new_leader,
					void *arg);

/** Called with the paxos_value_hash() of client values the leader dropped (its pending list
 * was full, PAXOS_MSG_REFUSED): @p count of them, borrowed for the call. */
typedef void (*paxos_refused_fn)(void *arg, const uint64_t *hashes, size_t count);

/** Calls @p refused(@p arg, hashes, count) when the leader says it dropped values (flow
 * control): this node's among them should be submitted again, with the same bytes, once
 * paxos_node_submit() stops returning PAXOS_E_FULL; the others are other submitters'. Values
 * the leader dropped but could not name (more than it names at once) are not reported: a
 * resubmit timeout still covers them. Needs a node that hears the learners group (one with a
 * learner). */
PAXOS_API void paxos_node_on_refused(struct paxos_node *n, paxos_refused_fn refused, void *arg);

/**
 * Called on a node whose learner found its next instance trimmed, with a snapshot a peer
 * offered (paxos_node_offer_snapshot()): @p len bytes at @p bytes, valid during the call
 * only, the peer application's state after instances 1..@p iid. Return PAXOS_OK once this
 * application's state is the snapshot's: delivery goes on at @p iid + 1, from the log. Any
 * other status refuses it (logged, counted in snapshots_refused): the node fetches one again.
 * @p arg is what paxos_node_on_install_snapshot() was given. It runs on the event loop thread
 * and must not free the node.
 */
typedef int (*paxos_install_snapshot_fn)(void *arg, paxos_iid iid, const void *bytes, size_t len);

/**
 * Snapshot transfer (InstallSnapshot in etcd/raft): when the node's learner finds its next
 * instance trimmed by a quorum of acceptors (a new replica, or one stopped for long), it does
 * not skip the instances (paxos_node_on_trimmed() is not called for them) but holds there and
 * fetches a snapshot that covers them from a peer whose application offered one
 * (paxos_node_offer_snapshot()), in chunks of a datagram each, then calls @p install(@p arg,
 * ...) with it and goes on after it. It delivers nothing until a snapshot is installed; a
 * silent peer is replaced by another after two seconds, and while no peer offers a snapshot
 * it asks again every 100 ms and says so in the log every 5 s. A snapshot larger than
 * paxos.conf's snapshot-max-bytes is refused with a line in the log. On multicast any node
 * with a learner serves the snapshot it offered; on unicast, where a learner reaches only the
 * acceptors, the nodes that host an acceptor do. With auth-key-file every datagram of it is
 * authenticated. Counted in snapshots_installed and snapshots_refused. Call it before adding
 * a learner or a proposer: PAXOS_E_INVALID after, PAXOS_E_NOMEM.
 */
PAXOS_API int paxos_node_on_install_snapshot(struct paxos_node *n,
					     paxos_install_snapshot_fn install, void *arg);

/**
 * Offers the application's state after instances 1..@p iid, @p len bytes at @p bytes, to
 * learners that fetch one (paxos_node_on_install_snapshot()). The node keeps a copy, which
 * replaces the one offered before (and a provider, paxos_node_on_snapshot_request()) and is
 * freed with the node; the bytes are the
 * application's own format, opaque to the node (paxos_node_on_snapshot_request() lends them
 * instead of copying). Offer each snapshot the application takes,
 * before it trims the log past it (paxos_node_trim()): a learner asks for one covering the
 * instances trimmed. Counted in snapshots_sent. Returns PAXOS_OK, PAXOS_E_INVALID (@p iid 0,
 * NULL bytes with a length), PAXOS_E_TOO_BIG (over snapshot-max-bytes) or PAXOS_E_NOMEM;
 * paxos_node_error() says why.
 */
PAXOS_API int paxos_node_offer_snapshot(struct paxos_node *n, paxos_iid iid, const void *bytes,
					size_t len);

/**
 * Called when a learner asks this node for a snapshot, and again for each window of chunks it
 * fetches: set *@p iid, *@p bytes and *@p len to the application's newest snapshot (its
 * state after instances 1..iid) and return PAXOS_OK, or return anything else when there is
 * none. The bytes are lent, not copied: they must stay valid and unchanged until the next
 * call or until the node is freed (the node keeps their checksum while the same pointer,
 * length and instance come back). @p arg is what paxos_node_on_snapshot_request() was given.
 */
typedef int (*paxos_snapshot_request_fn)(void *arg, paxos_iid *iid, const void **bytes,
					 size_t *len);

/**
 * Serves snapshots from @p provide(@p arg, ...) rather than from a copy
 * (paxos_node_offer_snapshot()), for states too large to copy at each snapshot: the node asks
 * the application for its newest snapshot whenever a peer fetches one
 * (paxos_node_on_install_snapshot()). It drops the copy offered before, and a later
 * paxos_node_offer_snapshot() ends it; NULL @p provide serves nothing. A snapshot over
 * snapshot-max-bytes is not served (a line in the log). Returns PAXOS_OK or PAXOS_E_NOMEM.
 */
PAXOS_API int paxos_node_on_snapshot_request(struct paxos_node *n,
					     paxos_snapshot_request_fn provide, void *arg);

/** snapshot(i), thesis 3.4.1: tell the acceptors they may drop every instance up to @p iid.
 * Unreliable like paxos_node_submit(); repeat it now and then. Returns PAXOS_OK or
 * PAXOS_E_INVALID (@p iid 0). */
PAXOS_API int paxos_node_trim(struct paxos_node *n, paxos_iid iid);

/**
 * Atomic broadcast, thesis 3.2.2: sends @p len bytes at @p value to the proposers without
 * blocking and without any guarantee; learn the value to know it was delivered. The bytes are
 * copied before it returns. Any node may submit, also one that hosts no role. Returns PAXOS_OK,
 * PAXOS_E_INVALID for a NULL value with a non-zero length, PAXOS_E_TOO_BIG when len exceeds
 * paxos_config_max_value(), or PAXOS_E_FULL for a few milliseconds after the leader said its
 * pending list was full (flow control, PAXOS_MSG_REFUSED; heard by a node with a learner):
 * submit the value again later rather than send more into a full pipe. On error nothing is sent
 * and paxos_node_error() says why.
 */
PAXOS_API int paxos_node_submit(struct paxos_node *n, const void *value, size_t len);

/**
 * With membership-alpha: keeps the configuration history this node learns in @p dir (as
 * dir/membership, made with its parents when missing, replaced atomically and flushed before
 * the node acts on a new configuration), and starts from the one kept there when it is newer
 * than paxos.conf's. An acceptor's is kept beside its store (storage-path/acceptor-ID) and a
 * proposer's with its epoch (storage-path/proposer-ID) without this call; a learner of its
 * own needs it only to know the configuration before it delivers the log again. Call it
 * before adding roles. PAXOS_E_INVALID without membership-alpha, after a role was added or
 * for a directory name too long.
 */
PAXOS_API int paxos_node_keep_membership(struct paxos_node *n, const char *dir);

/**
 * With membership-alpha: starts from the configuration history @p c (@p count
 * configurations, oldest first, and the instance @p applied, as paxos_membership_history()
 * and paxos_membership_applied() gave them) unless one kept in the node's directories is
 * newer. An application that trims the log keeps the history with each snapshot and gives it
 * back here with paxos_node_set_learner_start(): the membership commands among trimmed
 * instances cannot be learned from the log any more. Call it before adding roles.
 * PAXOS_E_INVALID without membership-alpha, after a role was added, or for a history
 * paxos_membership_restore() refuses.
 */
PAXOS_API int paxos_node_set_membership(struct paxos_node *n, const struct paxos_configuration *c,
					uint32_t count, paxos_iid applied);

/**
 * As paxos_node_set_membership(), with a whole history: its configurations, the instance
 * applied and the acceptor addresses the log carried (unicast), as paxos_node_membership()
 * was when the application saved it, e.g. as paxos_membership_encode() bytes with a snapshot,
 * read back with paxos_membership_decode_history(). The node keeps a copy. PAXOS_E_INVALID
 * without membership-alpha, after a role was added, for NULL or a history of another
 * membership-alpha.
 */
PAXOS_API int paxos_node_set_membership_history(struct paxos_node *n,
						const struct paxos_membership *m);

/** With membership-alpha: the acceptor configurations this node's learner has learned (see
 * paxos/membership.h: the newest with paxos_membership_latest(), whether it is in force with
 * paxos_membership_pending()); NULL when the acceptors are fixed or the node has no learner
 * nor acceptor. Valid until the node is freed. */
PAXOS_API const struct paxos_membership *paxos_node_membership(const struct paxos_node *n);

/**
 * Asks the acceptors for the configuration history in force (membership-alpha), now and at
 * each further call (at most every 50 ms): a PAXOS_MSG_CONFIG_ASK they answer with the history
 * their learners applied. The node takes the newest answer a quorum of the acceptors of its
 * newest configuration vouch for (paxos_membership_vouched()) into the history
 * paxos_node_membership() returns, and goes on taking newer ones: a tool that needs the
 * configuration in force without delivering the log (paxos-admin). Needs no learner; the node
 * joins the learners group to hear the answers. A node started without a history kept before
 * asks by itself, and its proposer leads nothing until the answers settle it.
 */
PAXOS_API int paxos_node_query_membership(struct paxos_node *n);

/** Whether the node's configuration history is settled: kept before (its membership file),
 * given by the application, or taken from a quorum's answers (paxos_node_query_membership());
 * false while it asks. */
PAXOS_API bool paxos_node_membership_settled(const struct paxos_node *n);

/**
 * With membership-alpha: asks the cluster to make @p members (one bit per acceptor id) the
 * acceptor set, as a membership command made against the newest configuration this node
 * learned, sent to the proposers as a PAXOS_MSG_CHANGE with a MAC under paxos.conf's
 * admin-key-file, never as a client value (unreliable: watch paxos_node_membership() and ask
 * again). Every proposer checks the MAC and that the change leaves a quorum of members that
 * answer (unless paxos_node_force_changes()); the leader proposes it; it is in force
 * membership-alpha instances after the instance it is chosen in. Returns PAXOS_OK;
 * PAXOS_E_INVALID without membership-alpha or a learner (or a query) here, for no members, an id
 * not below acceptors or the members in force; PAXOS_E_FULL while a change is chosen and not in
 * force; PAXOS_E_CONFIG without a readable admin-key-file.
 */
PAXOS_API int paxos_node_change_membership(struct paxos_node *n, uint32_t members);

/** The changes this node asks for from now on (paxos_node_change_membership() and the others)
 * carry @p force: the proposers propose them without checking that they leave a quorum of
 * acceptors that answer and a live proposer (paxos-admin --force). They still refuse ids
 * paxos.conf does not have. Returns PAXOS_OK, or PAXOS_E_INVALID for a NULL node. */
PAXOS_API int paxos_node_force_changes(struct paxos_node *n, bool force);

/**
 * With membership-alpha: as paxos_node_change_membership(), for the proposers that may lead:
 * asks the cluster to make @p proposers (one bit per proposer id) the proposer set. Once in
 * force, the lowest-id live proposer of the set leads (partitions: the live ones share them),
 * a proposer outside it stops leading, and one a change removed refuses to start. Returns
 * PAXOS_OK; PAXOS_E_INVALID without membership-alpha or a learner (or a query) here, for no
 * proposers, an id not below proposers or the set in force; PAXOS_E_FULL while a change is chosen
 * and not in force.
 */
PAXOS_API int paxos_node_change_proposers(struct paxos_node *n, uint32_t proposers);

/**
 * With membership-alpha and the unicast transport: as paxos_node_change_membership(), with
 * acceptor @p id (one of @p members) at address @p e, carried in the command: every process
 * that applies it sends to, subscribes to and hears that acceptor there from then on (and
 * keeps the address with its history), so paxos.conf need not list it (an acceptor that is no
 * member at the start, id at least initial-members, may have no address line). Returns as
 * paxos_node_change_membership(); PAXOS_E_INVALID also when id is no member of @p members or
 * @p e has no port.
 */
PAXOS_API int paxos_node_change_membership_at(struct paxos_node *n, uint32_t members, uint32_t id,
					      const struct paxos_endpoint *e);

/**
 * With membership-alpha and the unicast transport: asks the cluster to move acceptor @p id, a
 * member of the newest configuration, to address @p e (a new host, or a new port), by a
 * command like paxos_node_change_membership_at()'s that keeps the acceptor and proposer sets:
 * applied, it makes a new configuration, and every process that applies it sends to,
 * subscribes to and hears acceptor @p id at @p e from then on and keeps the address with its
 * history. The acceptor keeps its id and votes: run it there with its store, or without (it
 * recovers, as any acceptor that lost its state). Returns as paxos_node_change_membership();
 * PAXOS_E_INVALID also for another transport (multicast hears an acceptor wherever it runs),
 * an id that is no member, no port, or the address the acceptor has already.
 */
PAXOS_API int paxos_node_change_acceptor_address(struct paxos_node *n, uint32_t id,
						 const struct paxos_endpoint *e);

/** Unicast: this node sends to and hears acceptor @p id at @p e from now on (paxos-admin does
 * so for an acceptor it is to add before the command carries its address). PAXOS_E_INVALID
 * for another transport, an id not below acceptors or no port. */
PAXOS_API int paxos_node_set_acceptor_address(struct paxos_node *n, uint32_t id,
					      const struct paxos_endpoint *e);

/** The acceptors whose state messages (sent every acceptor-repeat-ms to the learners group)
 * this node, when it has a learner, heard in the last @p within_ms milliseconds: one bit per
 * id. Unicast: only from the address the node has for the acceptor (paxos.conf's, or the
 * one the log or paxos_node_set_acceptor_address() gave), so a moved acceptor's old process
 * does not count. Unauthenticated clusters: anyone can send one. */
PAXOS_API uint32_t paxos_node_acceptors_heard(const struct paxos_node *n, uint32_t within_ms);

/** Of paxos_node_acceptors_heard(@p within_ms), the acceptors whose last state message said
 * they withhold their votes: they recover lost state (paxos_acceptor_recovery_wait; their logs
 * say what they wait for). While a quorum of them does, no value is chosen. */
PAXOS_API uint32_t paxos_node_acceptors_withholding(const struct paxos_node *n, uint32_t within_ms);

/** Learner: the generation of the log it delivers (0 while it has heard none). */
PAXOS_API uint64_t paxos_node_generation(const struct paxos_node *n);

/** The last error this node reported, as a sentence ("" when none); owned by the node and
 * valid until its next call that fails, or until it is freed. */
PAXOS_API const char *paxos_node_error(const struct paxos_node *n);

/** Counters of a hosted @p role (NULL if the role is not hosted), owned by the node and updated
 * by its event loop while it lives; the transport's counters (datagrams, messages, malformed
 * input) are paxos_node_transport_counters(). */
PAXOS_API const struct paxos_counters *paxos_node_counters(const struct paxos_node *n,
							   enum paxos_role role);
/** Counters of the node's transport (datagrams, bytes, malformed input), owned by the node. */
PAXOS_API const struct paxos_counters *paxos_node_transport_counters(const struct paxos_node *n);

/** PAXOS_OK and in *@p id the id this node hosts @p role with (a learner's is 0; the serializer is
 * acceptor 0), or PAXOS_E_INVALID when it does not host role. */
PAXOS_API int paxos_node_role_id(const struct paxos_node *n, enum paxos_role role, uint32_t *id);

/**
 * Proposer: the proposer it takes for the leader; PAXOS_MAX_PROPOSERS when the node hosts no
 * proposer. This and the levels below are read on demand beside the counters
 * (paxos/metrics.h serves them); each is 0 (false) when the node does not host the role.
 */
PAXOS_API uint32_t paxos_node_leader(const struct paxos_node *n);
/** Proposer: the highest ballot it prepared with. */
PAXOS_API paxos_ballot paxos_node_ballot(const struct paxos_node *n);
/** Whether this node's proposer hears a quorum of the acceptors, as check-quorum asks
 * (paxos.conf): one that does not leads nothing and sends no heartbeats. Always true with
 * check-quorum no; false when the node hosts no proposer. */
PAXOS_API bool paxos_node_quorum_heard(const struct paxos_node *n);
/** Proposer: the client values in its pending list. */
PAXOS_API uint32_t paxos_node_pending(const struct paxos_node *n);
/** Proposer: the instances of its window in use (paxos_proposer_window_in_use()). */
PAXOS_API uint32_t paxos_node_window_in_use(const struct paxos_node *n);
/** Learner: the highest instance it heard of (it delivered up to paxos_node_next_iid() - 1). */
PAXOS_API paxos_iid paxos_node_highest_seen(const struct paxos_node *n);
/** Acceptor (or serializer): its store's highest accepted instance. */
PAXOS_API paxos_iid paxos_node_highest_accepted(const struct paxos_node *n);
/** Acceptor (or serializer): its store's trim point (0: nothing trimmed). */
PAXOS_API paxos_iid paxos_node_trimmed(const struct paxos_node *n);
/** Acceptor: whether it is recovering lost state (votes withheld, see paxos_acceptor_join()). */
PAXOS_API bool paxos_node_recovering(const struct paxos_node *n);
/** PAXOS_OK and in *@p used and *@p limit the bytes the hosted acceptor's store takes and may
 * take (0: no limit), or PAXOS_E_INVALID when
 * there is no store or its backend cannot tell cheaply (paxos_storage_space). */
PAXOS_API int paxos_node_storage_space(const struct paxos_node *n, uint64_t *used, uint64_t *limit);

/** Write every hosted role's counters as one line each to the log (paxos_set_log(); also done
 * every counters-interval-ms). */
PAXOS_API void paxos_node_report_counters(const struct paxos_node *n);

/** Non-zero once the node stopped because of a fatal error (e.g. acceptor storage failed);
 * the node has then broken its event loop, and paxos_node_error() says what failed and why,
 * in the storage backend's words ("acceptor storage: storage error: lmdb ...: MDB_MAP_FULL"). */
PAXOS_API int paxos_node_failed(const struct paxos_node *n);

/** Lowest instance this node's learner has not delivered yet (0 without a learner). */
PAXOS_API paxos_iid paxos_node_next_iid(const struct paxos_node *n);

/** The partition whose log this node serves (the configuration it was made from:
 * paxos_config_partition), and in @p count how many partitions that configuration has
 * (1: one log); @p count may be NULL. */
PAXOS_API uint32_t paxos_node_partition(const struct paxos_node *n, uint32_t *count);

/**
 * The answer to paxos_node_fetch. On success it is called once per value the instance holds
 * (several when values were batched), in order: status PAXOS_OK, position 0..count-1, value
 * valid during the call. An instance that holds a skip (learner-merge, paxos/partitions.h) has
 * no value: one call with status PAXOS_OK, count 0 and value NULL. Otherwise it is called once
 * with count 0 and value NULL: status
 * PAXOS_E_TRIMMED (the acceptors trimmed the instance: load a snapshot), PAXOS_E_TIMEOUT (no
 * answer within 50 learner-hole-checks) or PAXOS_E_MALFORMED (the instance's value is not a
 * valid batch).
 */
typedef void (*paxos_value_fetched_fn)(void *arg, paxos_iid iid, int status, uint32_t position,
				       uint32_t count, const struct paxos_value *value);

/**
 * Fetch the values chosen for one instance closed in the past (thesis 3.3), e.g. for a
 * replica that lost them: the node's learner asks the acceptors again (repeat iid..iid, every
 * learner-hole-check) and answers through done, from the event loop. Needs a learner
 * (paxos_node_add_learner or paxos_node_add_proposer); delivery goes on undisturbed. Returns
 * PAXOS_OK, PAXOS_E_INVALID (no learner, iid 0, done NULL) or PAXOS_E_FULL
 * (PAXOS_LEARNER_MAX_FETCHES outstanding); on error paxos_node_error() says why.
 * paxos_node_free drops outstanding fetches without calling done.
 */
PAXOS_API int paxos_node_fetch(struct paxos_node *n, paxos_iid iid, paxos_value_fetched_fn done,
			       void *arg);

#endif
