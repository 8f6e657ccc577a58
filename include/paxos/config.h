/* paxos.conf: the deployment every role reads. The shipped file documents each key. */
#ifndef PAXOS_CONFIG_H
#define PAXOS_CONFIG_H

#include <netinet/in.h>
#include <paxos/learner.h>
#include <paxos/types.h>

/* An IPv4 address and port: a multicast group, or a member's unicast address. */
struct paxos_endpoint {
	struct in_addr addr;
	uint16_t port;
};

/* How datagrams travel (paxos.conf "transport"; paxos/transport.h). */
enum paxos_transport_kind {
	PAXOS_TRANSPORT_MULTICAST = 0, /* one IP multicast group per role group */
	PAXOS_TRANSPORT_UNICAST = 1,   /* UDP to each member's address; learners subscribe */
};

/* Who chooses the leader among the proposers (thesis 3.6.3, 4.7). */
enum paxos_election_mode {
	PAXOS_ELECTION_AUTO = 0,   /* the lowest-id live proposer, by heartbeats */
	PAXOS_ELECTION_MANUAL = 1, /* `leader`, until the oracle (paxos-oracle) changes it */
};

/* How hard a durable backend works to keep acceptor state (paxos.conf "durability"). Which
 * modes a backend accepts is checked by the parser; PAXOS_DURABILITY_UNSET never leaves it. */
enum paxos_durability {
	PAXOS_DURABILITY_UNSET = 0,    /* not given: the backend's default is chosen */
	PAXOS_DURABILITY_NONE,         /* memory: nothing survives the process */
	PAXOS_DURABILITY_NOSYNC,       /* lmdb MDB_NOSYNC, bdb DB_TXN_NOSYNC */
	PAXOS_DURABILITY_SYNC,         /* every commit reaches the disk */
	PAXOS_DURABILITY_INMEMORY_LOG, /* bdb DB_LOG_IN_MEMORY */
	PAXOS_DURABILITY_WRITE_NOSYNC, /* bdb DB_TXN_WRITE_NOSYNC */
	PAXOS_DURABILITY_DBSYNC,       /* bdb: DB->sync after every commit */
	PAXOS_DURABILITY_COUNT
};

/* Longest path a key takes (storage-path, auth-key-file), without the terminating NUL. */
#define PAXOS_PATH_MAX 255
#define PAXOS_STORAGE_PATH_MAX PAXOS_PATH_MAX

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
	uint32_t proposers;             /* number of proposers, ids 0..proposers-1 */
	uint32_t leader;                /* manual election: the proposer that leads at start */
	enum paxos_election_mode election;
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
	uint32_t acceptor_repeat_ms;           /* acceptor: repeat highest accepted this often */
	uint32_t counters_interval_ms;         /* 0: never report */
	bool counters_json;                    /* report counters as JSON lines */
	char storage[16];                      /* "memory", "lmdb" or "bdb" */
	char storage_path[PAXOS_PATH_MAX + 1]; /* acceptor i uses DIR/acceptor-i/ */
	enum paxos_durability durability;      /* valid for storage once parsed */
	uint64_t lmdb_map_size;                /* bytes */
	uint32_t memory_retention; /* memory acceptors keep this many instances; 0: all */
	bool storage_fresh;        /* wipe the acceptor's store at start */
	bool learning_acceptors;   /* acceptors also learn and keep decisions final (3.7.5) */
	/* The cluster's key: every datagram carries a tag under it (lib/net/auth.h). Empty: none,
	 * datagrams are not authenticated. Read by paxos_node_new, not by the parser. */
	char auth_key_file[PAXOS_PATH_MAX + 1];
};

/* The defaults the shipped paxos.conf documents. */
PAXOS_API void paxos_config_defaults(struct paxos_config *cfg);

/* Read a file on top of the defaults. On error returns PAXOS_E_CONFIG (or PAXOS_E_IO) and
 * writes "FILE:LINE: what is wrong" into err. */
PAXOS_API int paxos_config_load(struct paxos_config *cfg, const char *path, char *err,
				size_t errlen);

/* Same, from text in memory; name is used in error messages. */
PAXOS_API int paxos_config_parse(struct paxos_config *cfg, const char *text, size_t len,
				 const char *name, char *err, size_t errlen);

/* "sync", "nosync", ... as written in paxos.conf; "unset" for PAXOS_DURABILITY_UNSET. */
PAXOS_API const char *paxos_durability_name(enum paxos_durability mode);

/* Largest value a client may submit under this configuration: an instance value frames it
 * with a 4-byte length (lib/core/batch.h), and a datagram with an auth-key-file ends with a tag. */
PAXOS_API uint32_t paxos_config_max_value(const struct paxos_config *cfg);

/* Largest instance value (a frame of client values) under this configuration. */
PAXOS_API uint32_t paxos_config_max_instance_value(const struct paxos_config *cfg);

/* Most bytes the buffers of one learner, or of one proposer, may take: half this machine's
 * physical memory, so that a node hosting both (every proposer has a learner) fits in it.
 * The parser refuses limits whose buffers need more (UINT64_MAX when unknown). */
PAXOS_API uint64_t paxos_config_memory_ceiling(void);

#endif
