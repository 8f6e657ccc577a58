/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kvstore-replica's parts: the process (replica.c: options, the shard threads, signals) and
 * each partition's shard (replica_shard.c: its node, store, snapshots and local reads).
 */
#ifndef KV_REPLICA_SHARD_H
#define KV_REPLICA_SHARD_H

#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>
#include <paxos/paxos.h>

#include "command.h"
#include "kvconf.h"
#include "store.h"

struct replica;
struct shard;

/* Local reads waiting for their barrier: at most as many as the node's barriers. */
#define READS_WAITING 64

/* A get to answer from the local table once the barrier passed. */
struct local_read {
	struct shard *s;
	bool used;
	struct sockaddr_in from;
	uint64_t client, seq;
	uint16_t key_len;
	uint8_t key[KV_MAX_FIELD];
};

/* One partition of the store: everything here belongs to its thread. */
struct shard {
	struct replica *r;
	uint32_t partition;
	char name[64];             /* "kvstore-replica ID", with " partition P" when partitioned */
	char dir[PATH_MAX];        /* DIR for partition 0, DIR/partition-P for the others */
	struct paxos_config *pcfg; /* this partition's configuration */
	struct event_base *base;
	struct paxos_node *node;
	struct kv_store *store;
	struct event *timer, *control_ev, *read_ev;
	int reply_fd, read_fd;
	int control[2]; /* the main thread writes 'd' (dump) or 's' (stop) */
	pthread_t thread;
	bool started;            /* thread is running (or ran): join it */
	paxos_iid last_iid;      /* instance of the last value applied */
	paxos_iid snapshot_iid;  /* the newest snapshot covers instances up to here */
	paxos_iid trim_iid;      /* the highest trim this shard asked for */
	uint64_t since_snapshot; /* commands applied since */
	uint64_t ignored;        /* delivered values that are not kvstore commands */
	uint64_t plain_commands; /* client commands not sent through a session: ignored */
	uint64_t reads;          /* local reads answered */
	uint64_t new_logs; /* times the acceptors began a new log and the store started over */
	uint64_t burned;   /* kv_burn results, so the work is not optimised away */
	/* The configuration history the loaded snapshot carried (paxos_membership_encode), given
	 * to the node before its roles; NULL: none. */
	uint8_t *membership;
	size_t membership_len;
	/* The session table the loaded snapshot carried (paxos_session_table_export). */
	uint8_t *sessions;
	size_t sessions_len;
	struct local_read *reads_waiting; /* READS_WAITING of them */
	int exit_code;
	uint8_t buf[KV_REPLY_HEADER + KV_MAX_FIELD];
};

/* The process: read-only once the shard threads run, but for done[]. */
struct replica {
	uint32_t id;
	const char *dir;
	struct paxos_config *pcfg;
	struct kv_config kcfg;
	bool acceptor, proposer;
	double burn_us;
	uint32_t burn_rounds; /* per applied command (--burn-us, --burn-rounds) */
	uint32_t partitions;
	struct shard *shards;
	int done[2]; /* a shard thread writes its partition here when it ends */
};

/* A shard's thread: opens its node and store, runs its loop until told to stop or it fails,
 * snapshots, and writes its partition to r->done. arg: the struct shard. */
void *run_shard(void *arg);

#endif
