/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every sender of the node shares: the end-of-round flush is scheduled once per round,
 * and datagrams are handed to the transport in one batch, each counted, sent or refused, its
 * buffer returned for the next. Here, below both the
 * datagram path (node_io.c) and the datagrams held until durable (node_durable.c).
 */
#include "parts.h"

void node_schedule_flush(struct paxos_node *n)
{
	if (!n->flush_scheduled) {
		n->flush_scheduled = true;
		event_active(n->timers.flush, EV_TIMEOUT, 0);
	}
}

void node_send(struct paxos_node *n, struct paxos_tx_datagram *d, const uint32_t *messages,
	       size_t count, uint8_t **free, size_t *free_count)
{
	n->net.transport->ops->send(n->net.transport, d, count);
	for (size_t i = 0; i < count; i++) {
		if (d[i].sent) {
			n->net.counters.datagrams_sent++;
			n->net.counters.messages_sent += messages[i];
			n->net.counters.bytes_sent += d[i].len * d[i].copies;
		} else {
			n->net.counters.send_errors++; /* UDP may lose it anyway; Paxos retries */
		}
		free[(*free_count)++] = (uint8_t *)d[i].data;
	}
}
