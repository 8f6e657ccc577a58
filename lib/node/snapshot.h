/* SPDX-License-Identifier: BSD-3-Clause */
/* Snapshot transfer (node_snapshot.c): what the node serves of the application's offer, and
 * the transfer a learner holding at trimmed instances runs. Not a public header. */
#ifndef PAXOS_NODE_SNAPSHOT_H
#define PAXOS_NODE_SNAPSHOT_H

#include <paxos/message.h>

#include <stdbool.h>
#include <stdint.h>

struct paxos_node;

/* Chunks a server sends for one ask; the asker asks for the next ones once they are in. Each
 * fills a datagram: 16 of max-datagram 8192 stay well within one socket buffer. */
#define NODE_SNAPSHOT_WINDOW 16u
/* An asker that got nothing for this long asks again, from the first byte it lacks. */
#define NODE_SNAPSHOT_RETRY_US 100000u
/* One that got nothing from its server for this long starts over, with whoever offers first. */
#define NODE_SNAPSHOT_GIVE_UP_US 2000000u
/* A learner waiting for an offer says so in the log at most this often. */
#define NODE_SNAPSHOT_LOG_US 5000000u

/* The messages: an ask on the acceptors group, an offer or a chunk on the learners group. */
void node_snapshot_on_ask(struct paxos_node *n, const struct paxos_message *m);
void node_snapshot_on_offer(struct paxos_node *n, const struct paxos_message *m, paxos_time now);
void node_snapshot_on_chunk(struct paxos_node *n, const struct paxos_message *m, paxos_time now);
/* The learner's tick: asks again, or starts over, when the transfer stalls. */
void node_snapshot_tick(struct paxos_node *n, paxos_time now);
/* Frees the offer and the transfer (paxos_node_free). */
void node_snapshot_free(struct paxos_node *n);

#endif
