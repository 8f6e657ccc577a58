/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Save before send, in one place. Every datagram the node seals carries what its messages
 * report on (struct node_needs, the highest of the tags the cores gave them): the storage
 * commit of the acceptor's ready write (or the serializer's last commit), and the proposer
 * epoch its ballots were taken in. A datagram whose needs are durable goes out with the
 * round; any other is copied into one ring and leaves, oldest first, once they are: when the
 * storage says its commit is durable (node_durable.c) or the node stored the epoch at the end
 * of the round (node_io.c). Nothing else in the node holds a datagram back.
 */
#include "log_line.h"
#include "parts.h"
#include "paxos_assert.h"

#include <stdlib.h>
#include <string.h>

static bool needs_met(const struct paxos_node *n, struct node_needs w)
{
	return w.commit <= n->commits.durable && w.epoch <= n->proposer.epoch.durable;
}

/* Room for one more held datagram and a buffer for it; false when memory ran out. */
static bool make_room(struct paxos_node *n)
{
	if (n->hold.count == n->hold.cap) {
		size_t cap = n->hold.cap ? n->hold.cap * 2 : 64;
		struct held_datagram *held = malloc(cap * sizeof(*held));
		uint8_t **free_list = malloc(cap * sizeof(*free_list));
		if (!held || !free_list) {
			free(held);
			free(free_list);
			return false;
		}
		for (size_t i = 0; i < n->hold.count; i++) /* unrolled, oldest first */
			held[i] = n->hold.ring[(n->hold.head + i) % n->hold.cap];
		if (n->hold.free_count)
			memcpy(free_list, n->hold.free, n->hold.free_count * sizeof(*free_list));
		free(n->hold.ring);
		free(n->hold.free);
		n->hold.ring = held;
		n->hold.free = free_list;
		n->hold.head = 0;
		n->hold.cap = cap;
	}
	if (n->hold.free_count == 0) {
		uint8_t *buf = malloc(n->cfg.max_datagram);
		if (!buf)
			return false;
		n->hold.free[n->hold.free_count++] =
		    buf; /* buffers never outnumber the ring's cap */
	}
	return true;
}

bool node_hold(struct paxos_node *n, enum paxos_group to, const uint8_t *data, size_t len,
	       uint32_t messages, struct node_needs needs)
{
	if (needs_met(n, needs))
		return false;
	if (!make_room(n)) {
		n->net.counters.send_errors++; /* as if lost: Paxos sends again */
		return true;
	}
	uint8_t *buf = n->hold.free[--n->hold.free_count];
	memcpy(buf, data, len);
	n->hold.ring[(n->hold.head + n->hold.count) % n->hold.cap] =
	    (struct held_datagram){needs, to, buf, len, messages};
	n->hold.count++;
	PAXOS_ASSERT(n->hold.count + n->hold.free_count <= n->hold.cap,
		     "buffers never outnumber the ring's cap");
	return true;
}

void node_hold_release(struct paxos_node *n)
{
	struct paxos_tx_datagram batch[TX_QUEUE];
	uint32_t messages[TX_QUEUE];
	while (n->hold.count > 0 && needs_met(n, n->hold.ring[n->hold.head].needs)) {
		size_t k = 0;
		while (k < TX_QUEUE && n->hold.count > 0 &&
		       needs_met(n, n->hold.ring[n->hold.head].needs)) {
			struct held_datagram *h = &n->hold.ring[n->hold.head];
			PAXOS_ASSERT(needs_met(n, h->needs),
				     "a held datagram leaves only once what it reports is durable");
			batch[k] =
			    (struct paxos_tx_datagram){.to = h->to, .data = h->data, .len = h->len};
			messages[k++] = h->messages;
			n->hold.head = (n->hold.head + 1) % n->hold.cap;
			n->hold.count--;
		}
		node_send(n, batch, messages, k, n->hold.free, &n->hold.free_count);
	}
}

bool node_hold_awaits_epoch(const struct paxos_node *n)
{
	for (size_t i = 0; i < n->hold.count; i++)
		if (n->hold.ring[(n->hold.head + i) % n->hold.cap].needs.epoch >
		    n->proposer.epoch.durable)
			return true;
	return false;
}

/* Drops the held datagrams that wait for an epoch (all with every), keeping the order of
 * the rest. */
static void drop(struct paxos_node *n, bool every)
{
	size_t kept = 0;
	for (size_t i = 0; i < n->hold.count; i++) {
		struct held_datagram h = n->hold.ring[(n->hold.head + i) % n->hold.cap];
		if (every || h.needs.epoch > n->proposer.epoch.durable) {
			if (!every)
				n->role_counters[PAXOS_ROLE_PROPOSER].epoch_drops++;
			n->hold.free[n->hold.free_count++] = h.data;
			continue;
		}
		n->hold.ring[(n->hold.head + kept++) % n->hold.cap] = h;
	}
	n->hold.count = kept;
}

void node_hold_drop_epoch(struct paxos_node *n)
{
	drop(n, false);
}

void node_hold_drop_all(struct paxos_node *n)
{
	drop(n, true);
}

void node_hold_free(struct paxos_node *n)
{
	node_hold_drop_all(n);
	for (size_t i = 0; i < n->hold.free_count; i++)
		free(n->hold.free[i]);
	free(n->hold.free);
	free(n->hold.ring);
}
