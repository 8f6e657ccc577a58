/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fields of struct paxos_config, for the library and the tools built with it: programs
 * outside see the configuration only through paxos/config.h (opaque, keys by name). The role
 * cores never include this: they take their own options (paxos/options.h builds them).
 */
#ifndef PAXOS_CONFIG_FIELDS_H
#define PAXOS_CONFIG_FIELDS_H

#include <paxos/config.h>

/* Longest partition-acceptors value. */
#define PAXOS_PARTITION_ACCEPTORS_MAX 200

/* storage-flush-thread: where an acceptor's pipelined commits flush (node_durable.c). */
enum paxos_flush_thread {
	PAXOS_FLUSH_THREAD_AUTO, /* on the storage's thread where the loop serves more roles */
	PAXOS_FLUSH_THREAD_YES,
	PAXOS_FLUSH_THREAD_NO,
};

struct paxos_config {
	enum paxos_transport_kind transport;
	struct paxos_endpoint groups[PAXOS_GROUP_COUNT];
	struct in_addr multicast_interface;
	uint32_t multicast_ttl;
	uint32_t max_datagram;  /* bytes; bounds the value size */
	uint32_t socket_buffer; /* bytes, SO_RCVBUF/SO_SNDBUF */
	/* Unicast: where acceptor i and proposer i receive (port 0: not given). */
	struct paxos_endpoint acceptor_address[PAXOS_MAX_ACCEPTORS];
	struct paxos_endpoint proposer_address[PAXOS_MAX_PROPOSERS];
	uint32_t subscription_lease_ms; /* unicast: a learner's subscription lasts this long */
	uint32_t acceptors;             /* number of acceptors, ids 0..acceptors-1 */
	/* The acceptor set changes through the log, each change in force this many instances
	 * after its own (paxos/membership.h); 0: the acceptors are fixed. */
	uint32_t membership_alpha;
	uint32_t
	    initial_members; /* with membership_alpha: ids 0..initial_members-1 first; 0: all */
	uint32_t proposers;  /* number of proposers, ids 0..proposers-1 */
	uint32_t initial_proposers; /* with membership_alpha: ids 0..initial_proposers-1 may
				     * lead first; 0: all */
	uint32_t partitions;        /* independent logs, 0..partitions-1 (1: one log) */
	uint32_t partition;         /* the one this configuration is for (paxos_config_partition) */
	/* "all" (every acceptor serves every partition), "spread", or one set per partition
	 * ("0-2/3-5"): the acceptors each partition uses (partitions.c). */
	char partition_acceptors[PAXOS_PARTITION_ACCEPTORS_MAX + 1];
	bool learner_merge;     /* learners hosting every partition deliver one merged order */
	uint32_t merge_segment; /* learner-merge: instances a partition adds per round at most */
	uint32_t merge_skip_ms; /* learner-merge: an idle leader proposes a skip this often */
	uint32_t leader;        /* manual election: the proposer that leads at start */
	enum paxos_election_mode election;
	/* A proposer hearing no acceptor quorum steps down (paxos/election.h). */
	bool check_quorum;
	uint32_t heartbeat_interval_ms; /* proposers multicast a heartbeat this often */
	uint32_t heartbeat_timeout_ms;  /* a proposer not heard for this long is dead */
	uint32_t proposer_window;       /* instances with phase 1 pre-executed (3.7.1) */
	uint32_t proposer_concurrency;  /* parallel phase 2 limit (3.7.2); 1 = FIFO */
	uint32_t pending_size;          /* bounded pending list (3.5.1) */
	uint32_t value_batch_limit;     /* client values per instance (3.7.4); 1 = no batching */
	uint32_t proposer_max_backlog;  /* flow control (4.6.1): see paxos.conf; 0 = off */
	uint32_t phase1_timeout_ms;
	uint32_t phase2_timeout_ms;
	bool adaptive_timeouts;      /* timeouts follow measured round trips */
	uint32_t timeout_floor_ms;   /* adaptive timeouts never go below */
	uint32_t timeout_ceiling_ms; /* no timeout, adaptive or backed off, goes above */
	uint32_t learner_window;     /* instances a learner tracks beyond the next to deliver */
	uint32_t hole_check_ms;      /* learner: how often to ask for missing instances */
	uint32_t repeat_batch;       /* learner: most instances asked for in one repeat */
	enum paxos_learner_start learner_start;
	uint32_t acceptor_repeat_ms;   /* acceptor: repeat highest accepted this often */
	uint32_t counters_interval_ms; /* 0: never report */
	bool counters_json;            /* report counters as JSON lines */
	/* Where a role process serves /metrics and /health over HTTP (paxos/metrics.h); port 0:
	 * no server. The runner's --metrics-listen overrides it per process. */
	struct paxos_endpoint metrics_listen;
	char storage[16];                      /* "memory", "lmdb" or "bdb" */
	char storage_path[PAXOS_PATH_MAX + 1]; /* acceptor i uses DIR/acceptor-i/ */
	enum paxos_durability durability;      /* valid for storage once parsed */
	uint64_t lmdb_map_size;                /* bytes */
	uint32_t memory_retention;   /* memory acceptors keep this many instances; 0: all */
	uint64_t snapshot_max_bytes; /* the largest snapshot a learner fetches or offers */
	bool storage_fresh;          /* wipe the acceptor's store at start */
	enum paxos_flush_thread storage_flush_thread; /* where pipelined commits flush */
	bool learning_acceptors; /* acceptors also learn and keep decisions final (3.7.5) */
	bool spare_acceptors;    /* acceptors beyond a quorum read late while the rest vote */
	/* The cluster's key: every datagram carries a tag under it (lib/net/auth.h). Empty: none,
	 * datagrams are not authenticated. Read by paxos_node_new, not by the parser. */
	char auth_key_file[PAXOS_PATH_MAX + 1];
	enum paxos_auth_mac auth_mac; /* how this node tags its datagrams */
	/* membership-alpha: the key a membership change is authenticated with (paxos-admin and
	 * the proposers hold it, lib/net/admin_mac.h). Empty: no change is accepted. Read when
	 * a proposer starts or a change is sent, not by the parser. */
	char admin_key_file[PAXOS_PATH_MAX + 1];
};

#endif
