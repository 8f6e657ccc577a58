/* SPDX-License-Identifier: BSD-3-Clause */
/* An in-process transport for node tests (paxos/transport.h): it keeps what the node sends
 * and hands the node whatever a test delivers, with no socket anywhere. */
#ifndef PAXOS_TEST_STUB_TRANSPORT_H
#define PAXOS_TEST_STUB_TRANSPORT_H

#include "codec.h"
#include <paxos/transport.h>

#define STUB_MAX 64
#define STUB_DATAGRAM 2048

struct stub {
	struct paxos_transport t;
	paxos_transport_deliver_fn deliver;
	void *deliver_arg;
	bool joined[PAXOS_GROUP_COUNT];
	bool lazy[PAXOS_GROUP_COUNT];
	size_t sent; /* datagrams kept: up to STUB_MAX of up to STUB_DATAGRAM bytes */
	enum paxos_group sent_to[STUB_MAX];
	uint8_t sent_data[STUB_MAX][STUB_DATAGRAM];
	size_t sent_len[STUB_MAX];
	bool destroyed;
	/* Set before stub_open: the node may give acceptor addresses, as over unicast. */
	bool unicast;
	/* Set by the test: the datagram the next read of group g brings (NULL: none), and how
	 * many reads the node asked of each group. */
	uint8_t *waiting[PAXOS_GROUP_COUNT];
	size_t waiting_len[PAXOS_GROUP_COUNT];
	unsigned reads[PAXOS_GROUP_COUNT];
	struct paxos_endpoint acceptor_address[PAXOS_MAX_ACCEPTORS];
	int addresses_set;
};

/* A paxos_transport_open_fn: arg is a zeroed struct stub, which the test owns. */
struct paxos_transport *stub_open(void *arg, struct event_base *base,
				  const struct paxos_config *cfg,
				  paxos_transport_deliver_fn deliver, void *deliver_arg, char *err,
				  size_t errlen);

/* Calls each(arg, header, message) for every message of the datagrams the node sent from
 * datagram first on, in order; a datagram that does not decode fails the test. */
typedef void (*stub_message_fn)(void *arg, const struct paxos_header *h,
				const struct paxos_message *m);
void stub_each_sent(const struct stub *s, size_t first, stub_message_fn each, void *arg);

/* m from role/id in wire version `version` (0: the newest), encoded into buf (cap bytes); its
 * length. */
size_t stub_encode(uint8_t *buf, size_t cap, enum paxos_role role, uint32_t id, uint32_t version,
		   const struct paxos_message *m);
/* m from role/id, in a datagram of its own, handed to the node as read on group g. */
void stub_deliver(struct stub *s, enum paxos_group g, enum paxos_role role, uint32_t id,
		  const struct paxos_message *m);

/* An epoch store in memory for a node's proposer: stored counts the epochs taken. */
#include <paxos/epoch.h>
struct memory_epochs {
	struct paxos_epoch_store es;
	uint32_t stored;
};
extern const struct paxos_epoch_store_ops memory_epoch_ops;

#endif
