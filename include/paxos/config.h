/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * paxos.conf: the deployment every role reads. The shipped file documents each key
 * (paxos.conf(5)).
 *
 * A struct paxos_config is opaque and owned by whoever created it with paxos_config_new();
 * the library only copies or reads it (paxos_node_new() copies it). The functions here touch
 * only the configuration they are given: different configurations may be used on different
 * threads, one configuration from one thread at a time.
 */
#ifndef PAXOS_CONFIG_H
#define PAXOS_CONFIG_H

#include <netinet/in.h>
#include <stddef.h>
#include <paxos/learner.h>
#include <paxos/types.h>

/** An IPv4 address and port: a multicast group, or a member's unicast address. */
struct paxos_endpoint {
	struct in_addr addr; /**< IPv4 address, network byte order */
	uint16_t port;       /**< port, host byte order */
};

/** How datagrams travel (paxos.conf "transport"; paxos/transport.h). */
enum paxos_transport_kind {
	PAXOS_TRANSPORT_MULTICAST = 0, /**< one IP multicast group per role group */
	PAXOS_TRANSPORT_UNICAST = 1,   /**< UDP to each member's address; learners subscribe */
};

/** Who chooses the leader among the proposers (thesis 3.6.3, 4.7). */
enum paxos_election_mode {
	PAXOS_ELECTION_AUTO = 0,   /**< the lowest-id live proposer, by heartbeats */
	PAXOS_ELECTION_MANUAL = 1, /**< `leader`, until the oracle (paxos-oracle) changes it */
};

/** How datagrams are tagged with an auth-key-file (paxos.conf "auth-mac"; lib/net/auth.h).
 * Receivers verify either, whichever the sender chose; the choice is the sender's. */
enum paxos_auth_mac {
	PAXOS_AUTH_MAC_AUTO = 0,     /**< AES-256-GCM where this CPU has AES-NI, else ChaCha20 */
	PAXOS_AUTH_MAC_AES_GCM = 1,  /**< AES-256-GCM (GMAC); refused at start without AES-NI */
	PAXOS_AUTH_MAC_CHACHA20 = 2, /**< XChaCha20-Poly1305: any CPU, slower per byte */
};

/** How hard a durable backend works to keep acceptor state (paxos.conf "durability"). Which
 * modes a backend accepts is checked by the parser; PAXOS_DURABILITY_UNSET never leaves it. */
enum paxos_durability {
	PAXOS_DURABILITY_UNSET = 0,    /**< not given: the backend's default is chosen */
	PAXOS_DURABILITY_NONE,         /**< memory: nothing survives the process */
	PAXOS_DURABILITY_NOSYNC,       /**< lmdb MDB_NOSYNC, bdb DB_TXN_NOSYNC */
	PAXOS_DURABILITY_SYNC,         /**< every commit reaches the disk */
	PAXOS_DURABILITY_INMEMORY_LOG, /**< bdb DB_LOG_IN_MEMORY */
	PAXOS_DURABILITY_WRITE_NOSYNC, /**< bdb DB_TXN_WRITE_NOSYNC */
	PAXOS_DURABILITY_DBSYNC,       /**< bdb: DB->sync after every commit */
	PAXOS_DURABILITY_COUNT         /**< number of modes, not a mode */
};

/** Longest path a key takes (storage-path, auth-key-file), without the terminating NUL. */
#define PAXOS_PATH_MAX 255
/** Longest storage-path: PAXOS_PATH_MAX, the name it had first. */
#define PAXOS_STORAGE_PATH_MAX PAXOS_PATH_MAX

/**
 * The configuration is opaque: programs get one from paxos_config_new and read or change keys
 * by name, so that a key added in a later release changes neither the API nor the ABI.
 */
struct paxos_config;

/** A configuration with the defaults the shipped paxos.conf documents; NULL if out of memory.
 * The caller owns it: free it with paxos_config_free(). */
PAXOS_API struct paxos_config *paxos_config_new(void);

/** Frees a configuration from paxos_config_new(); NULL is ignored. Nodes, stores and servers
 * made from it keep their own copy or read it only while being made, so it may be freed while
 * they run. */
PAXOS_API void paxos_config_free(struct paxos_config *cfg);

/** Sets @p key (as written in paxos.conf) to @p value, as a line "key value" of the file would,
 * and checks the whole configuration again. Returns PAXOS_OK, or PAXOS_E_CONFIG (unknown key,
 * bad value, or a configuration that no longer holds together): then @p cfg is unchanged and
 * @p err (@p errlen bytes, NUL-terminated) says why. Member addresses: key "acceptor" or
 * "proposer", value "ID HOST:PORT". Setting "storage" gives "durability" that backend's
 * default. Set the members' addresses before "transport unicast". */
PAXOS_API int paxos_config_set(struct paxos_config *cfg, const char *key, const char *value,
			       char *err, size_t errlen);

/** Writes @p key's value into @p buf (@p cap bytes, NUL-terminated) as paxos.conf would give
 * it ("239.255.11.1:7101", "yes", "lmdb"; "acceptor 2" gives that member's address, "" when it
 * has none). Returns PAXOS_OK, PAXOS_E_INVALID for an unknown key, or PAXOS_E_FULL when
 * @p cap is too small. */
PAXOS_API int paxos_config_get(const struct paxos_config *cfg, const char *key, char *buf,
			       size_t cap);

/** Resets cfg to the defaults the shipped paxos.conf documents. */
PAXOS_API void paxos_config_defaults(struct paxos_config *cfg);

/** Reads the file at @p path on top of what @p cfg holds (usually the defaults). Returns
 * PAXOS_OK; on error PAXOS_E_CONFIG (or PAXOS_E_IO when the file cannot be read), with
 * "FILE:LINE: what is wrong" in @p err (@p errlen bytes). */
PAXOS_API int paxos_config_load(struct paxos_config *cfg, const char *path, char *err,
				size_t errlen);

/** paxos_config_load() from @p len bytes of @p text in memory; @p name stands for the file
 * in error messages. */
PAXOS_API int paxos_config_parse(struct paxos_config *cfg, const char *text, size_t len,
				 const char *name, char *err, size_t errlen);

/** How many partitions (independent Paxos logs) the configuration describes: "partitions". */
PAXOS_API uint32_t paxos_config_partitions(const struct paxos_config *cfg);

/** Writes into @p out the configuration of partition @p p of @p cfg: every group's and unicast
 * member's port plus p * PAXOS_PARTITION_PORT_STEP, storage under storage-path/partition-P for p >=
 * 1 (partition 0 keeps storage-path itself), and metrics-listen only for partition 0. When
 * "partition-acceptors" gives p a set of its own, out has only those acceptors, numbered 0..
 * in the order of their ids (paxos_config_partition_acceptor). out must come
 * from paxos_config_new. PAXOS_E_INVALID if p is not below paxos_config_partitions. */
PAXOS_API int paxos_config_partition(const struct paxos_config *cfg, uint32_t p,
				     struct paxos_config *out);

/** Whether acceptor @p id of @p cfg serves partition @p p ("partition-acceptors"), and if so
 * its id within that partition's configuration (paxos_config_partition) in @p local (may be
 * NULL). Returns PAXOS_OK, or PAXOS_E_INVALID when it does not serve p or an argument is out
 * of range. */
PAXOS_API int paxos_config_partition_acceptor(const struct paxos_config *cfg, uint32_t p,
					      uint32_t id, uint32_t *local);

/** "sync", "nosync", ... as written in paxos.conf; "unset" for PAXOS_DURABILITY_UNSET (static
 * storage). */
PAXOS_API const char *paxos_durability_name(enum paxos_durability mode);

/** Largest value a client may submit under this configuration: an instance value frames it
 * with a 4-byte length (lib/core/batch.h), and a datagram with an auth-key-file ends with a tag. */
PAXOS_API uint32_t paxos_config_max_value(const struct paxos_config *cfg);

/** Largest instance value (a frame of client values) under this configuration. */
PAXOS_API uint32_t paxos_config_max_instance_value(const struct paxos_config *cfg);

/** Most bytes the buffers of one learner, or of one proposer, may take: half this machine's
 * physical memory, so that a node hosting both (every proposer has a learner) fits in it.
 * The parser refuses limits whose buffers need more (UINT64_MAX when unknown). */
PAXOS_API uint64_t paxos_config_memory_ceiling(void);

#endif
