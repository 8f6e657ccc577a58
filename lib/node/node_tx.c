/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every sender of the node shares: the end-of-round flush is scheduled once per round,
 * and each datagram handed to the transport is counted, sent or refused. Here, below both the
 * datagram path (node_io.c) and the datagrams held until durable (node_durable.c).
 */
#include "node_internal.h"

void node_schedule_flush(struct paxos_node *n)
{
	if (!n->flush_scheduled) {
		n->flush_scheduled = true;
		event_active(n->timers.flush, EV_TIMEOUT, 0);
	}
}

void node_count_sent(struct paxos_node *n, const struct paxos_tx_datagram *d, uint32_t messages)
{
	if (d->sent) {
		n->net.counters.datagrams_sent++;
		n->net.counters.messages_sent += messages;
		n->net.counters.bytes_sent += d->len * d->copies;
	} else {
		n->net.counters.send_errors++; /* UDP may lose it anyway; Paxos retries */
	}
}
