/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Event counters (thesis 3.5.3): what each role saw, to calibrate timeouts and windows.
 *
 * A node keeps one struct paxos_counters per hosted role and one for its transport
 * (paxos_node_counters(), paxos_node_transport_counters()); the library owns them and updates
 * them on the node's event loop thread, so read them from that thread. The functions here only
 * read the struct they are given and may be called from any thread on a struct no one updates.
 */
#ifndef PAXOS_COUNTERS_H
#define PAXOS_COUNTERS_H

#include <paxos/types.h>

/** X(name, description): every counter, in report order. Expand it with a macro of your own
 * to list the counters' names and descriptions, e.g. for a table; the names are those of
 * struct paxos_counters' fields and of paxos_counter_name(). */
#define PAXOS_COUNTER_LIST(X)                                                                      \
	X(datagrams_received, "datagrams received")                                                \
	X(datagrams_sent, "datagrams sent")                                                        \
	X(messages_received, "messages received")                                                  \
	X(messages_sent, "messages sent")                                                          \
	X(bytes_received, "bytes of datagrams received, tags included")                            \
	X(bytes_sent, "bytes of datagrams sent, once per copy the network took (multicast: one)")  \
	X(malformed_datagrams, "malformed datagrams dropped")                                      \
	X(auth_failures, "datagrams dropped: no valid tag (auth-key-file), forged or other key")   \
	X(implausible_ballots, "messages dropped: a ballot beyond PAXOS_PLAUSIBLE_EPOCHS")         \
	X(forged_senders, "messages dropped: they name an acceptor that did not send them")        \
	X(stale_orders, "leader orders dropped: sent too long ago, in the future, or superseded")  \
	X(send_errors, "datagrams the socket refused")                                             \
	X(phase1_timeouts, "phase 1 timeouts (TO1)")                                               \
	X(phase2_timeouts, "phase 2 timeouts (TO2)")                                               \
	X(phase1_timeout_us, "phase 1 timeout now, microseconds (a level, not a count)")           \
	X(phase2_timeout_us, "phase 2 timeout now, microseconds (a level, not a count)")           \
	X(pending_dropped, "client values dropped: pending list full")                             \
	X(refusals_sent, "refusals sent: the leader told submitters it dropped values (full)")     \
	X(refusals_heard, "refusals heard from a full leader: submits held back a while")          \
	X(submits_refused, "values paxos_node_submit refused: the leader said it was full")        \
	X(phase2_waited_phase1, "values that waited for phase 1 to complete")                      \
	X(values_proposed, "client values sent in phase 2")                                        \
	X(instances_proposed, "instances sent in phase 2 with client values (batches)")            \
	X(skips_proposed, "skips proposed: idle leader closing an instance (learner-merge)")       \
	X(chosen_said, "chosen messages: an idle leader said what its last accepts left unsaid")   \
	X(flow_control_holds, "new instances held back: values in flight or learner backlog")      \
	X(congestion_cuts, "phase 2 window halved: an accept timed out (congestion)")              \
	X(phase2_window, "instances phase 2 may hold at once now (a level, not a count)")          \
	X(values_requeued, "client values pushed back to the pending list")                        \
	X(values_settled, "queued client values dropped: delivered already (proposed elsewhere)")  \
	X(leader_changes, "leadership changes seen by this proposer")                              \
	X(quorum_losses, "times this proposer heard no acceptor quorum and stood out of election") \
	X(rejects_received, "rejects received")                                                    \
	X(rejects_sent, "rejects sent: a higher ballot was promised")                              \
	X(promises_sent, "promises sent")                                                          \
	X(accepteds_sent, "accepted messages sent")                                                \
	X(storage_commits, "storage transactions committed with changes (group commits)")          \
	X(storage_flushes, "storage flushes: each made every commit before it durable")            \
	X(storage_flush_records, "records written by those flushes (per flush: divide)")           \
	X(storage_flush_us, "microseconds spent in storage flushes")                               \
	X(repeats_requested, "instances asked for again (learner)")                                \
	X(repairs_requested, "repair requests sent: stalled on instances no repeat closed")        \
	X(instances_repaired, "decided instances run again by the leader for a stalled learner")   \
	X(votes_withheld, "prepares and accepts not answered: acceptor recovering lost state")     \
	X(recoveries, "times this acceptor recovered from lost state and voted again")             \
	X(fence_rejects, "rejects sent after a recovery: ballots at or below its fence")           \
	X(new_logs_begun, "new logs this acceptor began: every acceptor had lost the log")         \
	X(duplicate_acceptors, "hellos from another acceptor with this id (a newer one stops)")    \
	X(repeats_answered, "instances sent again (acceptor)")                                     \
	X(instances_trimmed, "trim requests applied")                                              \
	X(trims_clamped, "trim requests cut down to the instances known decided")                  \
	X(trims_refused, "trim requests dropped: no key and no quorum of acceptor nodes asked")    \
	X(repeats_capped, "repeat requests cut down to learner-repeat-batch instances")            \
	X(repeats_deferred, "repeat instances left unanswered: the tick's repeat budget is spent") \
	X(epochs_raised, "proposer epoch raised to beat a later incarnation's ballot")             \
	X(epoch_drops, "proposer datagrams dropped: their epoch was not durable yet")              \
	X(instances_delivered, "instances delivered: batches of client values, skips, commands")   \
	X(bytes_delivered, "instance value bytes delivered, framing included")                     \
	X(values_delivered, "client values delivered to the application")                          \
	X(skips_delivered, "instances delivered that held a skip, no client value")                \
	X(malformed_batches, "delivered instances whose value is no valid batch (skipped)")        \
	X(instances_out_of_window, "messages for instances beyond the window")                     \
	X(instances_skipped_trimmed, "instances skipped: trimmed before they were learned")        \
	X(instances_skipped_known, "instances skipped: chosen elsewhere, taken over past them")    \
	X(snapshots_sent, "snapshots sent to a lagging learner, to the last chunk")                \
	X(snapshots_installed, "snapshots fetched from a peer and installed by the application")   \
	X(snapshots_refused, "snapshots refused: too big, damaged, or refused by the application") \
	X(new_logs, "times this learner moved to a new log (generation) and restarted at 1")       \
	X(own_accepts_learned, "accepts a leader's learner took in process, not from the network") \
	X(instances_closed_by_leader, "instances closed on the leader's word, not the votes")      \
	X(trim_reports_clamped, "acceptor trim reports cut down to the instances heard of")        \
	X(membership_changes, "acceptor or proposer set changes chosen (membership-alpha)")        \
	X(membership_configuration, "the newest acceptor configuration chosen (1: paxos.conf's)")  \
	X(membership_members, "its acceptors, one bit per id")                                     \
	X(membership_proposers, "its proposers, one bit per id")                                   \
	X(spare_rests, "times this spare acceptor began reading the leader once a millisecond")    \
	X(spare_returns, "times the leader ended its rest: an acceptor of the quorum fell behind")

/** One uint64_t per counter of PAXOS_COUNTER_LIST, in that order, each named as the list
 * names it (datagrams_received, ...). Its layout grows from release to release: read it by
 * name or index (paxos_counter_get(), paxos_counter_value()) to stay independent of it. */
struct paxos_counters {
/** Declares one counter's field (expanded inside struct paxos_counters only). */
#define PAXOS_COUNTER_FIELD(name, text) uint64_t name;
	PAXOS_COUNTER_LIST(PAXOS_COUNTER_FIELD)
#undef PAXOS_COUNTER_FIELD
};

/** Writes "name=value name=value ..." into @p buf (@p cap bytes, NUL-terminated when @p cap
 * is not 0): only the counters that are not zero. Returns the length the whole text takes, like
 * snprintf: at least @p cap means it was truncated to @p cap - 1 bytes. */
PAXOS_API size_t paxos_counters_format(const struct paxos_counters *c, char *buf, size_t cap);

/**
 * How many counters this library has. Read counters without depending on the struct's layout,
 * which grows from release to release (counters are added where they belong in the list): by
 * name, or by index from 0 to paxos_counter_count() - 1. A program built against an older
 * header keeps working with a newer library this way; reading the fields directly ties it to
 * one release.
 */
PAXOS_API size_t paxos_counter_count(void);
/** The name of counter @p i ("datagrams_received", ...), in static storage; NULL past the
 * last. */
PAXOS_API const char *paxos_counter_name(size_t i);
/** The value of counter @p i in @p c, 0 past the last. */
PAXOS_API uint64_t paxos_counter_value(const struct paxos_counters *c, size_t i);
/** Stores the value of the counter called @p name in *@p value and returns PAXOS_OK, or
 * returns PAXOS_E_INVALID (and leaves *@p value alone) for a name this library does not have. */
PAXOS_API int paxos_counter_get(const struct paxos_counters *c, const char *name, uint64_t *value);

/** Writes {"role":"...","id":N,"name":value,...}, every counter as one JSON line, into
 * @p buf (@p cap bytes); @p role and @p id only label it. Returns the length the whole line
 * takes, like paxos_counters_format(). */
PAXOS_API size_t paxos_counters_json(const struct paxos_counters *c, const char *role, uint32_t id,
				     char *buf, size_t cap);

#endif
