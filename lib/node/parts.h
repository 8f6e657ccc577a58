/* SPDX-License-Identifier: BSD-3-Clause */
/* The node's parts, shared by the files of lib/node/: node.c (set-up, timers, application
 * interface), node_io.c (datagrams in and out), the roles' node_acceptor.c, node_proposer.c and
 * node_learner.c, and the rest. Not a public header. */
#ifndef PAXOS_NODE_PARTS_H
#define PAXOS_NODE_PARTS_H

#include <paxos/node.h>

#include <paxos/acceptor.h>
#include <paxos/election.h>
#include <paxos/epoch.h>
#include <paxos/proposer.h>
#include <paxos/serializer.h>
#include <paxos/session.h>
#include <paxos/transport.h>

#include "auth_key.h"
#include "codec.h"
#include "leadership.h"
#include "origin.h"

#include <event2/event.h>
#include "config_fields.h"

/* A learner that only serves its learning acceptor or its proposer reads at the end of the
 * rounds the node is woken for anyway, and at least this often (see learner_lazy). */
#define LAZY_LEARN_MS 1

/* Most reads of one lazy drain: bounds a round even under a flood. */
#define LAZY_LEARN_READS 16

/* Datagrams queued for the transport at the end of a round; a full queue is sent at once. */
#define TX_QUEUE 32

/* A flood of forged datagrams must not flood the log: one line at most this often. */
#define AUTH_LOG_INTERVAL_US 1000000u

/* Encoders: one per (role, group), each filling a datagram buffer of its own. */
#define ENCODERS (PAXOS_ROLE_COUNT * PAXOS_GROUP_COUNT)

/* Acceptor datagrams held for durability (node_durable.c) past which the end of an acceptor
 * batch waits for the storage's flushes instead of holding more. */
#define HELD_SOFT_MAX 1024u

/* Most reads of what arrived for the acceptor while a flush ran (node_durable.c). */
#define DURABLE_READS 16

/* Decoded messages held for one acceptor group commit: a full batch plus one datagram. */
#define RX_MESSAGES (PAXOS_ACCEPTOR_MAX_BATCH + PAXOS_MAX_MESSAGES_PER_DATAGRAM)

/* Refusals (node_screen.c) are logged at most NODE_REFUSALS_PER_PERIOD times per
 * NODE_REFUSAL_PERIOD microseconds; the rest are counted and summed up in one line. */
#define NODE_REFUSALS_PER_PERIOD 10u
#define NODE_REFUSAL_PERIOD 1000000u

/* Directories a node keeps its configuration history in: its acceptor's, its proposer's and
 * one the application names (paxos_node_keep_membership). */
#define NODE_MEMBERSHIP_DIRS 3

/* Where one role's messages go: a pending datagram per destination group. */
/* What a datagram reports on, which must be durable before it leaves (node_hold.c): the
 * storage commit of the acceptor's ready write, or the serializer's last; the proposer epoch
 * its ballots were taken in. 0: nothing. */
struct node_needs {
	uint64_t commit;
	uint32_t epoch;
};

struct role_out {
	struct paxos_node *node;
	enum paxos_role role;
	struct paxos_header header;
	struct paxos_emitter emitter;
	struct paxos_encoder enc[PAXOS_GROUP_COUNT];
	/* What each encoder's messages wait for, the highest of their tags (node_emit). */
	struct node_needs needs[PAXOS_GROUP_COUNT];
};

/* A datagram that leaves once what it reports is durable (node_hold.c). */
struct held_datagram {
	struct node_needs needs;
	enum paxos_group to;
	uint8_t *data; /* max_datagram bytes, the node's */
	size_t len;
	uint32_t messages;
};

/* An outstanding paxos_node_fetch: the learner's fetch answers through it. */
struct node_fetch {
	paxos_value_fetched_fn done; /* NULL: free */
	void *arg;
};

/* The proposer's epochs (node_epoch.c): its store, the highest epoch stored there, and the
 * datagram whose handling took a later one (noted: cause holds it). */
struct node_epochs {
	struct paxos_epoch_store *store;
	uint32_t durable;
	struct paxos_header cause;
	bool cause_noted;
	bool failing; /* the last store failed (logged once) */
};

/* Where the learner's results go beside the node's cores (node_learner.c): the
 * application, a partitions group's merge, and the application's fetches. */
struct node_app {
	paxos_value_delivered_fn deliver;
	void *deliver_arg;
	paxos_instances_trimmed_fn trimmed;
	void *trimmed_arg;
	/* Told after each instance the learner delivered, with whether it held a skip: the
	 * merge of a partitions group (partitions.c) counts instances, values or not. */
	void (*instance_done)(void *arg, paxos_iid iid, bool skip);
	void *instance_done_arg;
	/* paxos_node_on_new_leader, and who proposed what the learner delivered */
	paxos_new_leader_fn new_leader;
	void *new_leader_arg;
	paxos_new_log_fn new_log; /* paxos_node_on_new_log */
	void *new_log_arg;
	/* Told of a new log before the application: the merge of a partitions group
	 * (partitions.c) cannot take one. */
	paxos_new_log_fn group_new_log;
	void *group_new_log_arg;
	struct leadership leadership;
	paxos_iid learner_start;     /* 0: as configured */
	uint64_t learner_generation; /* the log below learner_start, if known */
	bool learner_generation_known;
	struct node_fetch fetches[PAXOS_LEARNER_MAX_FETCHES];
};

/* A vote of the node's acceptor, as it left. */
struct own_vote {
	paxos_iid iid;
	paxos_ballot ballot;
	uint64_t generation;
};

/* The node's acceptor (node_acceptor.c): the core, or a serializer in its place (thesis 4.2),
 * and its life on the node: recovery and duplicates (see paxos_acceptor_join), for the log. */
struct node_acceptor {
	struct paxos_acceptor *core;
	struct paxos_serializer *serializer;
	bool recovering;
	bool restoring; /* recovered, not yet restored (paxos_acceptor_restored) */
	uint64_t incarnation;
	uint64_t duplicates_logged;
	uint32_t older_heard_logged; /* an older duplicate heard on so many ticks, logged */
	uint64_t ticks;              /* for the pace of the waiting lines */
	paxos_time started;          /* when it joined: its age in hellos */
	char store_dir[300];      /* a durable acceptor's store: where its recovery fence is kept */
	char generation_dir[300]; /* where its generation is kept, whatever its storage */
	uint64_t generation;      /* the one kept there */
	bool generation_kept;     /* a file holds it (a log was served) */
	bool generation_warned;   /* a failure to write it was said */
	/* Its votes of the read being handled, for its own learner, which does not join the
	 * votes group (node_learn_own_votes); RX_MESSAGES of them. */
	struct own_vote *own_votes;
	uint32_t own_vote_count;
	/* Spare acceptors (node_spares.c): whether this is one, whether the leader's last accept
	 * said it may rest, and whether it rests (reads every SPARE_READ_MS). */
	bool spare, spare_wanted, spare_resting;
	uint32_t spare_idle_reads; /* its reads in a row that found nothing */
	bool spare_busy;           /* it reads too much to rest (SPARE_BUSY_BYTES) */
	paxos_time spare_since;    /* when it measured that last */
	uint64_t spare_bytes;      /* bytes_received then */
};

/* The round's datagrams (node_io.c): buffers of max_datagram bytes, ENCODERS filling, the
 * rest queued or free. Everything a round sends goes out together at its end (one send), so
 * that the datagrams of one batch reach their readers together: one read, one group commit. */
struct node_tx {
	uint8_t *buf;
	uint8_t *free[TX_QUEUE];
	size_t free_count;
	struct paxos_tx_datagram queue[TX_QUEUE];
	uint32_t messages[TX_QUEUE];
	uint32_t count;
};

/* Pipelined commits (paxos/storage.h sync, node_durable.c). */
struct node_commits {
	struct event *ev;         /* the storage's sync_fd is readable: a flush finished */
	uint64_t durable;         /* commits up to this one are durable, as sync last said */
	uint64_t acceptor_commit; /* the storage commit of the acceptor's last write */
	uint64_t emit_needs;      /* the commit the acceptor message being emitted waits for */
	bool lazy;                /* the group it commits is read when a flush returns */
};

/* The datagrams waiting for what they report to be durable (node_hold.c): a ring. */
struct node_held {
	struct held_datagram *ring;
	size_t head, count, cap;
	uint8_t **free; /* buffers of sent datagrams, for the next ones */
	size_t free_count;
};

/* Configuration requests (node_confquery.c): when the node asked and was answered, and the
 * acceptors' answers. */
struct node_confquery {
	paxos_time ask_started, ask_last, answer_last;
	paxos_time push_last; /* a proposer's last config_push (learning-acceptors no) */
	uint64_t ask_nonce;
	struct paxos_membership *answers[PAXOS_MAX_ACCEPTORS];
	bool answer_settled[PAXOS_MAX_ACCEPTORS];
	uint64_t answers_refused; /* answers whose history could not be the log's */
	uint8_t answer_buf[PAXOS_MEMBERSHIP_ENCODED_MAX];
};

/* The membership history on a node (node_membership.c, node_confquery.c). */
struct node_membership_state {
	/* Where the node keeps the history it learned (beside its acceptor's store, with its
	 * proposer's epoch, or where the application said), and the newest configuration kept. */
	char dirs[NODE_MEMBERSHIP_DIRS][PAXOS_PATH_MAX + 32];
	uint32_t dir_count;
	uint32_t kept;
	/* The acceptor addresses the history gave the transport (unicast; port 0: none). */
	uint32_t given_addr[PAXOS_MAX_ACCEPTORS];
	uint16_t given_port[PAXOS_MAX_ACCEPTORS];
	bool ready;              /* made (node_membership_init): roles use it */
	uint32_t refused_config; /* the newest configuration when refused_voters were said */
	uint32_t refused_voters; /* acceptors whose votes were refused, one bit per id */
	/* Configuration requests (node_confquery.c): the history is settled once kept before,
	 * given, or adopted from the acceptors' answers; until then the node asks, and its
	 * proposer leads nothing. */
	bool settled;
	bool querying;              /* paxos_node_query_membership: asks and adopts for good */
	bool gated;                 /* the election was given the set without this proposer */
	struct node_keeper *keeper; /* its writes off the loop (node_keeper.c); NULL: none yet */
};

/* Rate limits of the log lines about datagrams the node drops (node_screen.c, node_io.c). */
struct node_screen_log {
	paxos_time auth_log_due;       /* when the next authentication failure may be logged */
	paxos_time version_log_due;    /* when the next datagram of another version may be */
	uint64_t auth_failures_logged; /* auth_failures counted by the last log line */
	paxos_time refusals_since;     /* node_refused's window */
	uint32_t refusals_logged;
	uint64_t refusals_unlogged;
};

/* The wire version the node speaks (node_version.c): the one before its own while a node of
 * that version was heard within VERSION_HOLD_US (old_until), or a newer one speaking it for
 * such a node (relay_until); who, for the log line. */
struct node_wire {
	uint32_t spoken;               /* the version every encoder speaks */
	enum paxos_wire_speech speech; /* and how its headers write it */
	paxos_time old_until;          /* an older node was heard itself */
	paxos_time relay_until;        /* a node that heard one was heard */
	bool old_peers_told;           /* the acceptor core knows they are live */
	char who[160];                 /* the first node that made it speak down */
};

/* The datagram being read (node_io.c, node_screen.c). */
struct node_rx {
	struct paxos_decoder decoder;
	struct paxos_message *msgs; /* decoded, held for one acceptor group commit */
	/* The header of the datagram whose messages are being handled (see node_epoch_tag). */
	struct paxos_header header;
	/* It came from another address than the one believed for its sender (node_screen.c: all
	 * but its hellos are dropped). */
	bool impostor;
	/* It comes from an acceptor, but not from the address the node has for it
	 * (node_acceptor_home): a moved acceptor's old process, say. Handled, but it does not
	 * count as that acceptor answering. */
	bool away;
	struct paxos_header repeat_from; /* the last repeat request's sender */
};

/* The node's timers: the round's end, the roles' ticks, the counters' report, a lazy learner's
 * reads. */
struct node_timers {
	struct event *flush, *tick, *acceptor, *report, *election, *learn, *spare;
	/* The learner's and proposer's tick (node.c), added with the learner (node_learner.c). */
	event_callback_fn on_tick;
};

/* The node's proposer (node_proposer.c, node_epoch.c, node_io.c): the core, the election that says
 * who leads, its epochs, and its standing. */
struct node_proposer {
	struct paxos_proposer *core;
	/* The highest instance each acceptor voted in, as its votes reached the learner: whether
	 * the spares may rest (node_spares_judge). */
	paxos_iid voted[PAXOS_MAX_ACCEPTORS];
	struct paxos_election *election;
	struct node_epochs epoch;
	uint32_t leader_seen; /* the leader the node last acted on (node_election_run) */
	/* node_election_run, set with the election: what changes its inputs from below the
	 * proposer (a configuration applied, node_membership.c) runs it through this. */
	void (*election_run)(struct paxos_node *n);
	bool out_seen;        /* out for want of an acceptor quorum, as last acted on */
	paxos_time out_since; /* when it went out */
	bool assign_due;      /* client values queued in the proposer during this read */
	uint64_t order_sent;  /* sent_at of the latest oracle order taken (node_order_fresh) */
	/* A lean follower (node_proposer.c, "Lean followers"): a proposer of a partition it does
	 * not lead, reading neither the clients' values nor the log until it takes over. */
	bool lean;
	/* A leader whose learner takes its accepts as they are emitted, not from the acceptors
	 * group, which it leaves unread (node_proposer.c, own_accepts); own_learned: run the
	 * learner's ready after this round's flush, outside the proposer's step. */
	bool own_accepts;
	bool own_learned;
	/* Own accepts emitted while the learner's ready was being run (a closed instance lets
	 * the proposer assign the next one): the learner takes them once it advanced, each
	 * looked up again in the proposer (paxos_proposer_accept_value), so no value is copied. */
	struct own_accept {
		paxos_iid iid;
		paxos_ballot ballot;
	} * own_deferred;
	uint32_t own_deferred_head, own_deferred_count, own_deferred_cap;
	/* When each acceptor was last heard at its address on the proposers group: who answers,
	 * for the checks of a membership change (node_admin.c). */
	paxos_time acceptor_heard[PAXOS_MAX_ACCEPTORS];
};

/* Membership changes (node_admin.c): the operators' key (admin-key-file), read when first
 * needed, and whether this node's changes carry PAXOS_CHANGE_FORCE. */
struct node_admin {
	uint8_t key[32];
	bool key_read;
	bool force;
	paxos_time refusals_since; /* refusals are logged a few a second at most */
	uint32_t refusals_logged;
};

/* The node's learner (node_learner.c): the core, where its results go, and when a lazy one
 * reads. */
struct node_learner {
	struct paxos_learner *core;
	struct node_app app;
	bool learn_due; /* lazy learner: read the learners group after this round's flush */
	/* Multicast, a learner beside no acceptor or proposer: the leader's values (the
	 * acceptors group) are read after the votes that close them, not on wake-ups of their
	 * own (node_drain_values); values_due: after this round's flush. */
	bool values_lazy, values_due;
	bool votes_lazy, learners_lazy; /* read after each round and every LAZY_LEARN_MS */
	paxos_time acceptor_heard[PAXOS_MAX_ACCEPTORS]; /* its last state message, 0: never */
	uint32_t acceptor_withholds; /* per id: its last state said it withholds its votes */
	/* The application installs snapshots (paxos_node_on_install_snapshot): the learner
	 * holds at trimmed instances, and node_snapshot.c fetches one at the next tick. */
	bool hold_trimmed;
	/* It delivered a membership change that is kept now (or needed no keeping): its hold
	 * after the change ends at the next run (paxos_learner_options.hold_changes). */
	bool change_kept_due;
};

/* The node's side of the transport (node_io.c, node_screen.c, node_tx.c): the datagrams it
 * fills, reads and screens, the groups it joined, and their counters. */
struct node_net {
	struct paxos_transport *transport; /* the network seam (paxos/transport.h) */
	/* auth-key-file: a tag is added to each datagram as it is sealed and checked as soon as
	 * one is read, before decoding. NULL: no key, no tags. */
	struct paxos_auth *auth;
	uint32_t payload_cap; /* max_datagram less the tag's room: what encoders fill */
	bool joined[PAXOS_GROUP_COUNT];
	struct role_out out[PAXOS_ROLE_COUNT];
	struct node_tx tx;
	struct node_rx rx;
	/* The address believed for each member id (node_screen.c). */
	struct origin_table origins;
	/* Unicast: the origin (paxos_rx_datagram.origin) of each acceptor's address, the one it
	 * answers from (node_acceptor_home); 0: any (multicast, or an address the node does not
	 * know). */
	uint64_t acceptor_home[PAXOS_MAX_ACCEPTORS];
	/* Where and when each acceptor id was last heard from, at home or not. */
	struct origin acceptor_last[PAXOS_MAX_ACCEPTORS];
	struct node_screen_log screen; /* rate limits of the lines about dropped datagrams */
	struct node_wire wire;         /* the wire version spoken (node_version.c) */
	struct paxos_counters counters;
};

/* The submit path's flow control (node_submit.c): until when paxos_node_submit() holds values
 * back because the leader said it dropped some (PAXOS_MSG_REFUSED), how long the last hold
 * was, and whom to tell which values were dropped. */
struct node_submit {
	paxos_time held_until;
	paxos_time hold;
	paxos_refused_fn refused;
	void *refused_arg;
	uint64_t hashes[PAXOS_REFUSED_HASHES_MAX];
	uint64_t last_id; /* the last submission id given: counts up from a random start */
};

/* Trim requests without a key (node_trim.c): the latest each acceptor's node asked for. */
struct node_trims {
	paxos_iid asked[PAXOS_MAX_ACCEPTORS];
	bool unkeyed_said; /* this node's own trims cannot count: said once */
};

/* Barriers waiting at once on a node (paxos_node_barrier). */
#define NODE_BARRIERS 64

/* A read barrier (node_session.c): its NOOP value was seen chosen once chosen is set; it
 * fires at the end of the instance target. */
struct node_barrier {
	struct paxos_node *node;
	paxos_barrier_fn done; /* NULL: free */
	void *arg;
	paxos_iid target;
	bool chosen;
};

/* Client sessions (node_session.c): the learner's dedupe table, the session value being
 * delivered, the sessions submitting on this node and the read barriers. */
struct node_sessions {
	struct paxos_session_table *table; /* NULL: sessions not enabled */
	bool delivering;
	uint64_t client, seq;
	paxos_instance_end_fn instance_delivered;
	void *instance_delivered_arg;
	struct paxos_session *list;
	struct paxos_session *own; /* the barriers' */
	struct node_barrier barriers[NODE_BARRIERS];
	uint32_t barriers_waiting;
};

struct paxos_node {
	/* The loop and its round */
	struct event_base *base;
	struct node_timers timers;
	bool flush_scheduled;
	/* What it runs with */
	struct paxos_config cfg;
	uint32_t max_value;
	/* " partition P" in the lines about this node's log when there are several, else "". */
	char partition_label[24];
	/* membership-alpha: the configuration history the learner applies (node_membership.c);
	 * NULL while the acceptors are fixed. */
	struct paxos_membership *membership;
	struct node_membership_state mship; /* its history kept and told (node_membership.c) */
	struct node_confquery query;
	/* The transport */
	struct node_net net;
	/* The storage */
	struct paxos_storage *storage;
	struct node_commits commits; /* pipelined commits (node_durable.c) */
	struct node_held hold;       /* what waits for them or for an epoch (node_hold.c) */
	/* The roles it hosts */
	bool hosted[PAXOS_ROLE_COUNT];
	uint32_t role_id[PAXOS_ROLE_COUNT];
	struct paxos_counters role_counters[PAXOS_ROLE_COUNT];
	struct node_acceptor acceptor;
	struct node_proposer proposer;
	struct node_learner learner;
	struct node_submit submit;
	struct node_admin admin;
	struct node_trims trims;
	struct node_sessions sessions;
	struct node_snapshot *snapshot; /* snapshot transfer (node_snapshot.c); NULL: unused */

	int failed;
	/* Room for a storage backend's sentence (up to 1 kB) behind what failed. */
	char error[1280];
};

/* Records the sentence paxos_node_error() returns. */
void node_set_error(struct paxos_node *n, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Hands m to the datagram role o is filling for group to (an emitter's emit). */
void node_emit(void *ctx, enum paxos_group to, const struct paxos_message *m);

/* Sends every datagram filled so far. */
void node_flush_all(struct paxos_node *n);
/* Queues the datagram o's encoder for g holds, or holds it until what it reports is durable
 * (node_hold.c); the encoder starts a new one. */
void node_seal(struct paxos_node *n, struct role_out *o, enum paxos_group g);

/* Stops the node after a fatal error (acceptor storage): breaks its event loop. The message,
 * printed and kept for paxos_node_error(), ends with the storage backend's reason. */
void node_fail(struct paxos_node *n, int status, const char *what);

/* Gives the node's acceptor its membership: incarnation, recovery when st holds nothing of an
 * earlier life, the floor and fence kept beside a durable store. */
int node_join_acceptors(struct paxos_node *n, uint32_t id, struct paxos_storage *st);

/* Writes the generation file of the log the acceptor serves once, if none is kept yet. */
void node_acceptor_keep_served(struct paxos_node *n);
/* After the acceptor handled a batch or a tick with status rc: stops the node on an error
 * (a duplicate acceptor says so), and logs a finished recovery or a duplicate heard. */
void node_acceptor_status(struct paxos_node *n, int rc);
/* The acceptor's path after a step that returned rc: takes its ready, writes its records (one
 * transaction), hands its messages to the encoders, each waiting for the commit its tag names
 * (node_durable.c), advances, then node_acceptor_status. */
void node_acceptor_run(struct paxos_node *n, int rc);
/* Each acceptor tick: while it recovers or is restored, says what it waits for now and then. */
void node_acceptor_waiting(struct paxos_node *n);

/* Set-up shared by the roles. node_setup.c: joins group g (once); makes the node member id of
 * role in its encoders and at the transport; adds a persistent timer (once). node.c: the
 * learner that serves the application and the proposer; whether the learners group is read
 * lazily. */
int node_join(struct paxos_node *n, enum paxos_group g);
void node_host(struct paxos_node *n, enum paxos_role role, uint32_t id);
int node_host_member(struct paxos_node *n, enum paxos_role role, uint32_t id);
int node_add_timer(struct paxos_node *n, struct event **ev, uint32_t ms, event_callback_fn cb);
int node_ensure_learner(struct paxos_node *n);
int node_set_learner_reading(struct paxos_node *n);
void node_drain_values(struct paxos_node *n);

/* The proposer's (node_proposer.c): a leader's learner takes its own accepts (leading) or reads
 * the acceptors group again; a lean follower reads the whole log again (the application needs
 * it). */
void node_own_accepts(struct paxos_node *n, bool leading);
void node_submit_refused(struct paxos_node *n, const struct paxos_refused *r, paxos_time now);
/* Draws where this node's submission ids start. */
void node_submit_init(struct paxos_node *n);
void node_lean_end(struct paxos_node *n);

/* node_version.c: a datagram of an older wire version was decoded (its missing fields made
 * the node's own); the version spoken chosen again, at most once per read and per tick. */
void node_version_heard(struct paxos_node *n, const struct paxos_header *h,
			const struct paxos_rx_datagram *d, struct paxos_message *msgs, size_t count,
			paxos_time now);
void node_version_choose(struct paxos_node *n, paxos_time now);
/* node_io.c: every encoder speaks version (with speech) from the next message on. */
void node_speak(struct paxos_node *n, uint32_t version, enum paxos_wire_speech speech);
/* libevent callbacks: a group's socket is readable; the round's datagrams are due; the lazy
 * learner of a learning acceptor is due. */
void node_deliver(void *arg, enum paxos_group g, struct paxos_rx_datagram *d, size_t count);

/* Calls done(arg, iid, skip) after each instance n's learner delivers (see instance_done);
 * before a learner or proposer is added. */
void node_on_instance_done(struct paxos_node *n, void (*done)(void *, paxos_iid, bool), void *arg);
/* Calls new_log(arg, generation) when n's learner begins a new log, before the application's
 * paxos_node_on_new_log() callback. */
void node_on_group_new_log(struct paxos_node *n, paxos_new_log_fn new_log, void *arg);
void node_on_flush(evutil_socket_t fd, short what, void *arg);
void node_on_learn_tick(evutil_socket_t fd, short what, void *arg);
/* Reads what waits on the learners group for a lazy learner (node_learner.c). */
void node_drain_learners(struct paxos_node *n);

/* Spare acceptors (node_spares.c). */
void node_spare_init(struct paxos_node *n, uint32_t acceptor_id);
void node_acceptor_reading(struct paxos_node *n);
void node_spare_read_done(struct paxos_node *n, paxos_time now);
void node_spare_vote_heard(struct paxos_node *n, const struct paxos_accepted *v);
void node_spares_judge(struct paxos_node *n);

/* Pipelined commits (node_durable.c). init: st's commits are pipelined: from now on the
 * acceptor's datagrams wait for durability. threaded: flushes run on the storage's thread
 * (storage-flush-thread), else on the loop. backlog and after_batch:
 * at the end of an acceptor batch; when too much is held, waits for the flushes; starts a
 * flush or schedules one for the round's end. round_end: before a round's datagrams are sent,
 * flushes on the loop. poll: at a flush's end on the thread (and each acceptor tick, in case a
 * wake-up was missed): sends what became durable, reads what arrived meanwhile. finish: at
 * paxos_node_free, sends what was held once durable (drops it if the node failed). */
int node_durable_init(struct paxos_node *n, struct paxos_storage *st);
bool node_durable_threaded(const struct paxos_node *n);
void node_durable_backlog(struct paxos_node *n);
void node_durable_after_batch(struct paxos_node *n);
void node_durable_round_end(struct paxos_node *n);
void node_durable_poll(struct paxos_node *n);

/* Makes the round's end (node_on_flush) due. */
void node_schedule_flush(struct paxos_node *n);
/* Hands d[0..count) to the transport in one batch, counts each one sent (with its messages and
 * bytes) or refused, and returns their buffers to free[*free_count...]. */
void node_send(struct paxos_node *n, struct paxos_tx_datagram *d, const uint32_t *messages,
	       size_t count, uint8_t **free, size_t *free_count);
void node_durable_finish(struct paxos_node *n);

/* Save before send (node_hold.c). hold: seal's question for a datagram whose messages need
 * needs: unless they are durable, a copy is kept (true). release: sends, oldest first, the
 * held ones whose needs are durable now. awaits_epoch: one waits for an epoch not stored.
 * drop_epoch: those are dropped (counted), drop_all: every one (never sent: the node
 * failed). free: the buffers. */
bool node_hold(struct paxos_node *n, enum paxos_group to, const uint8_t *data, size_t len,
	       uint32_t messages, struct node_needs needs);
void node_hold_release(struct paxos_node *n);
bool node_hold_awaits_epoch(const struct paxos_node *n);
void node_hold_drop_epoch(struct paxos_node *n);
void node_hold_drop_all(struct paxos_node *n);
void node_hold_free(struct paxos_node *n);

/* Logs a refusal of something the datagram from sent, rate-limited (NODE_REFUSALS_...;
 * node_screen.c). */
void node_refused(struct paxos_node *n, const struct paxos_header *from, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "acceptor", "proposer", ...: a header's role. */
static inline const char *node_role_name(enum paxos_role role)
{
	static const char *const names[PAXOS_ROLE_COUNT] = {"acceptor", "proposer", "learner",
							    "client"};
	return (unsigned)role < PAXOS_ROLE_COUNT ? names[role] : "unknown";
}

/* Whether m, from a datagram with header from, may go to the cores: false (counted and
 * logged) for a message naming an acceptor the datagram is not from, or an implausible
 * ballot (paxos_msg_plausible). */
/* Whether datagram d, whose header is from, comes from the address that speaks for its
 * sender (origin.h); sets rx_impostor, and logs an impostor or a member's new address. */
void node_screen_origin(struct paxos_node *n, const struct paxos_header *from,
			const struct paxos_rx_datagram *d, paxos_time now);
bool node_screen(struct paxos_node *n, const struct paxos_header *from,
		 const struct paxos_message *m);

/* Logs repeat requests the acceptor left unanswered (its repeats_deferred counter was before),
 * naming the last sender of one. */
void node_note_deferred_repeats(struct paxos_node *n, uint64_t before);

/* The epoch a proposer message emitted now depends on (struct paxos_proposer_ready): the
 * one its core's ballots are in. The first one above the stored epoch notes the datagram
 * being handled as the cause, for the log. */
uint64_t node_epoch_tag(struct paxos_node *n);

/* Whether the proposer's ready holds an epoch not stored yet: its datagrams must wait. */
bool node_epoch_pending(const struct paxos_node *n);

/* Stores the epoch the proposer's ready asks for (end of a round, outside the cores' steps)
 * and advances it. Returns whether the proposer's datagrams may leave now; false (logged once
 * per failing spell) if the store failed. */
bool node_epoch_store(struct paxos_node *n);

/* The learner's path (node_learner.c): learn is one step of the learner with m, then run;
 * run hands each event of the learner's ready to the proposer, the acceptor and the
 * application, in order, and advances the learner. */
void node_learn(struct paxos_node *n, const struct paxos_message *m, paxos_time now);
void node_learn_own_votes(struct paxos_node *n, paxos_time now);
bool node_learner_reads_now(const struct paxos_node *n);
void node_learner_run(struct paxos_node *n);

/* After each call into the election: acts on a change of leader (the proposer leads or
 * stops, a lean follower takes over or follows). */
void node_election_run(struct paxos_node *n);
/* A message on the proposers group: one from an acceptor shows this proposer still hears it
 * (check-quorum, paxos/election.h). */
void node_election_heard(struct paxos_node *n, const struct paxos_message *m, paxos_time now);
/* A trim that reached the acceptors group (node_trim.c): whether it is taken, and if so cut to
 * what a quorum of the acceptors' nodes asked for when there is no key; refusals said. */
bool node_trim_screen(struct paxos_node *n, const struct paxos_header *from,
		      struct paxos_message *m);
/* Whether an oracle's order is fresh enough to hand to the election (said when not). */
bool node_order_fresh(struct paxos_node *n, const struct paxos_leader *order);

/* membership-alpha: makes the node's configuration history at the first call: the newest one
 * kept in its directories, else paxos.conf's first configuration. PAXOS_OK, or an error the
 * node's error says (a corrupt file, no memory). */
int node_membership_init(struct paxos_node *n);
/* membership-alpha: whether proposer id may start (an error recorded when a change removed
 * it; one never added yet starts, and leads nothing until it is). */
int node_membership_proposer_start(struct paxos_node *n, uint32_t id);
/* The election follows the proposer set in force at instance next (logged when that adds or
 * removes the node's proposer). */
void node_membership_election(struct paxos_node *n, paxos_iid next);
/* The proposer set in force at instance next, one bit per id (0: no membership, every one). */
uint32_t node_membership_proposers(const struct paxos_node *n, paxos_iid next);
/* The set node_membership_proposers() gives, without this node's proposer while the history
 * is not settled (a configuration request is under way): what its election is given. */
uint32_t node_membership_election_set(const struct paxos_node *n, paxos_iid next);
/* Adds dir to those the history is kept in (before the role that owns it starts); writes it
 * there at once when a change was learned already. */
int node_membership_keep_in(struct paxos_node *n, const char *dir);
/* Instance iid held a membership command, just applied: the history is made durable before
 * anything acts on it (a failure to write stops the node), and the acceptor's change said. */
/* What the keeper (node_keeper.c) hands back once the write of configuration id, chosen in
 * instance iid, ended: ok, or not (n->error says why); deferred: the rest of the delivery of
 * (iid, v, ballot) waited for it and is still due (a new log drops it). Set by whoever asked
 * for the keep (node_learner.c), so the keeper, below it, calls nothing above. */
struct node_keep_result {
	uint32_t id;
	paxos_iid iid;
	struct paxos_value value;
	paxos_ballot ballot;
	bool ok, deferred;
};
typedef void (*node_kept_fn)(struct paxos_node *n, const struct node_keep_result *r);
/* The learner delivered the change of instance iid (value v, ballot): true when it is kept
 * (or needs no keeping) and the delivery goes on; false when it is being kept on a thread
 * and the rest of the delivery waits for kept (node_keeper.c). */
bool node_membership_applied(struct paxos_node *n, paxos_iid iid, const struct paxos_value *v,
			     paxos_ballot ballot, node_kept_fn kept);
/* Configuration id is kept: what acts on it runs. */
void node_membership_kept(struct paxos_node *n, uint32_t id);
/* Configuration id, chosen in instance iid, could not be kept (n->error says why): fatal. */
void node_membership_not_kept(struct paxos_node *n, uint32_t id, paxos_iid iid);

/* node_keeper.c: the history written off the loop. start: PAXOS_OK once the write of the
 * latest history to every directory began, the delivery of (iid, v, ballot) deferred until
 * it ends, when kept is called from the loop; else nothing began (the caller keeps it
 * itself). wait: until a running write ended, its result acted on from the loop.
 * drop_deferred: a new log began, the deferred delivery is of the old one. */
int node_keeper_start(struct paxos_node *n, paxos_iid iid, const struct paxos_value *v,
		      paxos_ballot ballot, node_kept_fn kept);
void node_keeper_wait(struct paxos_node *n);
void node_keeper_drop_deferred(struct paxos_node *n);
void node_keeper_free(struct paxos_node *n);
/* Whether vote m of acceptor id may count: false (said once per removed acceptor and change)
 * for a promise or a vote that is not final in an instance whose configuration is known and
 * leaves the acceptor out. A final one passes: it reports a decision, from anyone. */
bool node_membership_counts(struct paxos_node *n, const struct paxos_message *m, uint32_t id);
/* Configuration requests: asks again while unsettled (the learner's tick), answers one
 * (an acceptor with a learner), takes an answer in. */
void node_membership_tick(struct paxos_node *n, paxos_time now);
void node_membership_on_ask(struct paxos_node *n, const struct paxos_message *m, paxos_time now);
void node_membership_on_info(struct paxos_node *n, const struct paxos_message *m, paxos_time now);
void node_membership_free_answers(struct paxos_node *n);
/* The node's history in its wire form, into the buffer the answers and pushes share: false
 * if it does not fit. */
bool node_membership_encode(struct paxos_node *n, struct paxos_value *history);
/* learning-acceptors no: a proposer sends its history to the acceptors (each second, and at
 * once when its learner applies a change); an acceptor without a learner takes a push that
 * goes further than its own (kept, addresses given, its removal said). */
void node_membership_push(struct paxos_node *n, paxos_time now);
void node_membership_on_push(struct paxos_node *n, const struct paxos_message *m);
/* Whether the node's acceptor votes on m: false for a prepare or an accept of an instance
 * whose configuration is known and leaves it out (its vote would count nowhere). */
bool node_membership_votes(const struct paxos_node *n, const struct paxos_message *m);
/* A membership command was delivered in iid: logged, never handed to the application. */
void node_membership_delivered(struct paxos_node *n, paxos_iid iid, const struct paxos_value *v);

/* Membership changes from the operators (node_admin.c). */
/* Acceptor id answers from e from now on (unicast; a no-op for multicast). */
void node_acceptor_home(struct paxos_node *n, uint32_t id, const struct paxos_endpoint *e);
/* The number a UDP transport gives a sender at address e (0: e says nothing). */
uint64_t node_origin_of(const struct paxos_endpoint *e);
/* The acceptors' addresses of paxos.conf as their homes. */
void node_acceptor_homes(struct paxos_node *n);
/* A datagram from header from and origin: sets net.rx.away, notes where the acceptor spoke. */
void node_acceptor_heard_from(struct paxos_node *n, const struct paxos_header *from,
			      uint64_t origin, paxos_time now);
/* A proposer starts: reads the admin key when paxos.conf names one (an error stops it). */
int node_admin_start(struct paxos_node *n);
/* Sends command to the proposers as a PAXOS_MSG_CHANGE under the admin key. */
int node_admin_send(struct paxos_node *n, const uint8_t *command, uint32_t len);
/* A PAXOS_MSG_CHANGE reached the node's proposer: checked, then proposed or refused. */
void node_admin_on_change(struct paxos_node *n, const struct paxos_change *c, paxos_time now);
/* Wipes the admin key (the node is freed). */
void node_admin_wipe(struct paxos_node *n);

/* Shared by node_membership.c (the history) and node_confquery.c (configuration requests). */
/* "0,1,3": the ids of a member set. */
void node_members_text(uint32_t members, char *buf, size_t cap);
/* Proposer ids paxos.conf has, one bit each (membership-alpha allows at most 32). */
uint32_t node_proposer_ids(const struct paxos_node *n);
/* The acceptors' addresses the history carries, given to the transport (unicast). */
void node_membership_give_addresses(struct paxos_node *n);
/* The counters of the latest configuration. */
void node_membership_count_latest(struct paxos_node *n);
/* Logs that the node's acceptor is not a member of the latest configuration, if so. */
void node_membership_say_if_removed(struct paxos_node *n, bool at_start);
/* Writes the history to the node's directories from first_dir on; an error stops the node. */
int node_membership_keep(struct paxos_node *n, uint32_t first_dir);

/* Sessions (node_session.c). enable: makes the table (any time; the public call refuses once
 * a learner runs). value: a delivered value of instance iid; false for a plain value, true
 * for a session value, applied (delivered to the application) or dropped by the table.
 * instance_end: after each delivered instance (the application's callback, barriers).
 * new_leader and refused: the sessions send again now, or once the hold ends. free: every
 * session and the table. submit: paxos_session_submit with flags. */
int node_sessions_enable(struct paxos_node *n, uint32_t max_clients);
bool node_session_value(struct paxos_node *n, paxos_iid iid, uint32_t position,
			const struct paxos_value *v);
void node_sessions_instance_end(struct paxos_node *n, paxos_iid iid);
void node_sessions_new_leader(struct paxos_node *n);
void node_sessions_refused(struct paxos_node *n);
void node_sessions_free(struct paxos_node *n);
int node_session_submit(struct paxos_session *s, const void *value, size_t len, uint8_t flags,
			paxos_session_done_fn done, void *arg, uint64_t *seq);

#endif
