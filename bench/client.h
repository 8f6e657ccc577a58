/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-client's state (bench/client.c: options, set-up and the report) and its submitting
 * and learning (bench/client_run.c: the slots, deliveries, resubmits, flow control, the
 * timers), which the event loop calls.
 */
#ifndef PAXOS_BENCH_CLIENT_H
#define PAXOS_BENCH_CLIENT_H

#include <paxos/paxos.h>

#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "clock.h"

/* Every value starts with a tag that names its client and sequence number. */
#define TAG_MAGIC 0x4c435850u /* "PXCL" */
#define TAG_SIZE 16u
/* --spread key: the key follows the tag, 8 bytes, when the value has room for it. */
#define KEY_SIZE 8u

struct slot {
	uint64_t seq; /* 0: free */
	paxos_time first_sent, last_sent;
	uint32_t len;
	uint32_t part; /* which of the client's partitions it goes to (index into nodes) */
	bool held;     /* refused by the node (the leader is full): goes at the next held tick */
	uint64_t hash; /* paxos_value_hash of buf, 0 until a refusal needs it */
	uint8_t *buf;
};

struct client;

/* One partition the client submits to and learns from: its node and its deliveries. */
struct part {
	struct client *c;
	struct paxos_node *node;
	uint32_t partition; /* the id in paxos.conf's partitions */
	uint32_t acceptors; /* its acceptor set's size */
	uint64_t submitted, delivered;
};

struct client {
	/* The partitions values go to, round-robin by sequence number (--partitions). */
	struct part parts[PAXOS_MAX_PARTITIONS];
	uint32_t part_count;
	bool spread_key; /* --spread key: by the hash of a key out of `keys`, else round-robin */
	uint64_t keys;
	struct paxos_node *node; /* parts[0].node */
	struct event_base *base;
	uint32_t id;
	uint64_t count, submitted, delivered, duplicates, foreign, resubmits, submit_errors;
	uint64_t new_leader_resubmits; /* of the resubmits, those at a partition's new leader */
	/* Flow control: submits the node refused (its leader said it is full), and the slots
	 * waiting to go again on held_ev, every HELD_RETRY_US while there are any. */
	uint64_t held_back, refused_resends;
	uint32_t held_count, held_budget;
	struct event *held_ev;
	paxos_iid first_iid; /* the first instance delivered (0: none yet) */
	/* Before the first value: how long to wait for the learner to start, and until when. */
	paxos_time learner_wait, learner_wait_until;
	struct event *start_ev;
	uint32_t size_min, size_max, outstanding;
	paxos_time resubmit, started, finished;
	/* --warmup-ms: values first sent (or due) before started + warmup are delivered but
	 * not measured; latency_us holds the measured ones */
	paxos_time warmup;
	uint64_t measured;
	struct slot *slots;
	/* seq -> slot, so that a delivery finds its slot without scanning them all: a hint,
	 * checked against the slot, with a scan when two live values share an entry. */
	uint32_t *slot_of, slot_of_mask;
	/* open loop (--rate): values due so far; free slots as a stack */
	uint64_t rate;
	uint32_t *free_slots, free_count;
	uint32_t *latency_us;
	uint8_t *latency_part; /* the partition (index into parts) of each latency */
	uint64_t rng;
	FILE *log;
	/* Why nothing is delivered, from the acceptors' states (client_on_stall_check). */
	uint32_t heard_ms;
	paxos_time progress; /* the last delivery, or the start */
	char reason[256];    /* the last reason printed */
};

/* How often values the node held back (PAXOS_E_FULL) or the leader dropped are offered again,
 * and how many at a time: a budget that grows by HELD_BUDGET_STEP each time it was all sent
 * and halves at each refusal (down to HELD_BUDGET_STEP), so that a leader that drains slowly
 * is not sent the whole backlog after every hold. */
#define HELD_RETRY_US 1000
#define HELD_BUDGET_STEP 8u

/* The event loop's callbacks (bench/client_run.c); arg is the struct client but for
 * client_on_deliver (a struct part) and the node's callbacks. */
void client_on_deadline(evutil_socket_t fd, short what, void *arg);
void client_on_deliver(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v);
void client_on_drain(evutil_socket_t fd, short what, void *arg);
void client_on_held_retry(evutil_socket_t fd, short what, void *arg);
void client_on_new_leader(void *arg, uint32_t proposer);
void client_on_rate_tick(evutil_socket_t fd, short what, void *arg);
void client_on_refused(void *arg, const uint64_t *hashes, size_t count);
void client_on_resubmit_check(evutil_socket_t fd, short what, void *arg);
void client_on_signal(evutil_socket_t fd, short what, void *arg);
void client_on_stall_check(evutil_socket_t fd, short what, void *arg);
void client_on_start(evutil_socket_t fd, short what, void *arg);

#endif
