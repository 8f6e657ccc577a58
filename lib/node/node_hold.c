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
#include "node_internal.h"

#include <stdlib.h>
#include <string.h>

static bool needs_met(const struct paxos_node *n, struct node_needs w)
{
	return w.commit <= n->durable && w.epoch <= n->epoch.durable;
}

/* Room for one more held datagram and a buffer for it; false when memory ran out. */
static bool make_room(struct paxos_node *n)
{
	if (n->held_count == n->held_cap) {
		size_t cap = n->held_cap ? n->held_cap * 2 : 64;
		struct held_datagram *held = malloc(cap * sizeof(*held));
		uint8_t **free_list = malloc(cap * sizeof(*free_list));
		if (!held || !free_list) {
			free(held);
			free(free_list);
			return false;
		}
		for (size_t i = 0; i < n->held_count; i++) /* unrolled, oldest first */
			held[i] = n->held[(n->held_head + i) % n->held_cap];
		if (n->held_free_count)
			memcpy(free_list, n->held_free, n->held_free_count * sizeof(*free_list));
		free(n->held);
		free(n->held_free);
		n->held = held;
		n->held_free = free_list;
		n->held_head = 0;
		n->held_cap = cap;
	}
	if (n->held_free_count == 0) {
		uint8_t *buf = malloc(n->cfg.max_datagram);
		if (!buf)
			return false;
		n->held_free[n->held_free_count++] = buf; /* buffers never outnumber held_cap */
	}
	return true;
}

bool node_hold(struct paxos_node *n, enum paxos_group to, const uint8_t *data, size_t len,
	       uint32_t messages, struct node_needs needs)
{
	if (needs_met(n, needs))
		return false;
	if (!make_room(n)) {
		n->transport.send_errors++; /* as if lost: Paxos sends again */
		return true;
	}
	uint8_t *buf = n->held_free[--n->held_free_count];
	memcpy(buf, data, len);
	n->held[(n->held_head + n->held_count) % n->held_cap] =
	    (struct held_datagram){needs, to, buf, len, messages};
	n->held_count++;
	return true;
}

void node_hold_release(struct paxos_node *n)
{
	struct paxos_tx_datagram batch[TX_QUEUE];
	uint32_t messages[TX_QUEUE];
	while (n->held_count > 0 && needs_met(n, n->held[n->held_head].needs)) {
		size_t k = 0;
		while (k < TX_QUEUE && n->held_count > 0 &&
		       needs_met(n, n->held[n->held_head].needs)) {
			struct held_datagram *h = &n->held[n->held_head];
			batch[k] =
			    (struct paxos_tx_datagram){.to = h->to, .data = h->data, .len = h->len};
			messages[k++] = h->messages;
			n->held_head = (n->held_head + 1) % n->held_cap;
			n->held_count--;
		}
		n->net->ops->send(n->net, batch, k);
		for (size_t i = 0; i < k; i++) {
			node_count_sent(n, &batch[i], messages[i]);
			n->held_free[n->held_free_count++] = (uint8_t *)batch[i].data;
		}
	}
}

bool node_hold_awaits_epoch(const struct paxos_node *n)
{
	for (size_t i = 0; i < n->held_count; i++)
		if (n->held[(n->held_head + i) % n->held_cap].needs.epoch > n->epoch.durable)
			return true;
	return false;
}

/* Drops the held datagrams that wait for an epoch (all with every), keeping the order of
 * the rest. */
static void drop(struct paxos_node *n, bool every)
{
	size_t kept = 0;
	for (size_t i = 0; i < n->held_count; i++) {
		struct held_datagram h = n->held[(n->held_head + i) % n->held_cap];
		if (every || h.needs.epoch > n->epoch.durable) {
			if (!every)
				n->role_counters[PAXOS_ROLE_PROPOSER].epoch_drops++;
			n->held_free[n->held_free_count++] = h.data;
			continue;
		}
		n->held[(n->held_head + kept++) % n->held_cap] = h;
	}
	n->held_count = kept;
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
	for (size_t i = 0; i < n->held_free_count; i++)
		free(n->held_free[i]);
	free(n->held_free);
	free(n->held);
}
