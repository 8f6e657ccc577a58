/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the unit tests. */
#ifndef PAXOS_TEST_SUPPORT_H
#define PAXOS_TEST_SUPPORT_H

#include <paxos/message.h>

#include "config_fields.h"

#define RECORDER_MAX 4096
#define RECORDER_ARENA (4u << 20)

/* An emitter that keeps deep copies of everything emitted, in order. */
struct recorder {
	struct paxos_emitter emitter;
	size_t count;
	enum paxos_group group[RECORDER_MAX];
	struct paxos_message msg[RECORDER_MAX];
	uint8_t *arena;
	size_t arena_used;
};

struct event_base;
/* Runs base's loop for ms milliseconds. */
void support_run_for(struct event_base *base, long ms);

/* Three acceptors (memory storage) in one event loop, for node tests on real sockets:
 * acceptors 3, proposers 1, a fresh storage-path (the proposer's first epoch, so the acceptors
 * start at once) and the lines of `options`. */
struct support_cluster {
	char dir[64];
	struct paxos_config cfg;
	struct event_base *base;
	struct paxos_node *acc[3]; /* NULL once a test freed one */
};
void support_cluster_start(struct support_cluster *c, const char *options);
/* A new node of the cluster's configuration on its loop, hosting nothing yet. */
struct paxos_node *support_cluster_node(struct support_cluster *c);
/* Frees the acceptors left, the loop and the storage-path. */
void support_cluster_free(struct support_cluster *c);

/* The membership command that makes members (a bit per acceptor id) the acceptor set from
 * instance `from` on, written into buf (PAXOS_MEMBERSHIP_COMMAND_LEN bytes). */
struct paxos_value support_command(uint32_t from, uint32_t members, uint8_t *buf);
struct paxos_proposer;
/* A change asked of proposer p (what a node does with a PAXOS_MSG_CHANGE it checked). */
int support_change(struct paxos_proposer *p, const struct paxos_value *v);

struct paxos_config;
/* Sets cfg's admin-key-file to a key written for this test process (removed at exit): what
 * a node needs to ask for membership changes. */
void support_admin_key(struct paxos_config *cfg);

struct recorder *recorder_new(void);
void recorder_free(struct recorder *r);
void recorder_clear(struct recorder *r);
/* How many recorded messages have this type (and group, unless group < 0). */
size_t recorder_count(const struct recorder *r, enum paxos_msg_type type, int group);
/* The n-th recorded message of this type, or NULL. */
const struct paxos_message *recorder_find(const struct recorder *r, enum paxos_msg_type type,
					  size_t n);

/* A value over a C string (without the terminating NUL). */
struct paxos_value value_of(const char *s);
/* Whether a value holds exactly the bytes of s. */
int value_is(const struct paxos_value *v, const char *s);

struct paxos_storage;
/* A store whose every transaction and read fails (PAXOS_E_STORAGE), as a full disk would, that
 * says it holds instance 1 (so a tick reads it), and whose error says error (kept, not copied).
 * Freed by its destroy, like any store. */
struct paxos_storage *failing_storage_new(const char *error);

#endif
