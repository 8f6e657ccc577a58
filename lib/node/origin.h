/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which address speaks for each acceptor and proposer id. Without a key a datagram's header
 * is only a claim; its source address is harder to fake (it takes raw sockets to spoof, not
 * another socket). The first address heard for an id speaks for it while it keeps talking;
 * another address is believed only once that one has been silent for a while (a restarted
 * member, on a new port). So a forger on the network cannot speak for a member that is alive,
 * and a quorum of forged reports needs a quorum of silent members.
 */
#ifndef PAXOS_ORIGIN_H
#define PAXOS_ORIGIN_H

#include <paxos/types.h>

#include <stdbool.h>
#include <stdint.h>

/* The longest a node waits before it believes a new address for a member. */
#define ORIGIN_SILENCE_MAX_MS 2000u

struct origin {
	uint64_t address; /* the transport's number for the sender's address; 0: none yet */
	paxos_time heard; /* when it was last heard */
};

struct origin_table {
	paxos_time silence; /* an address silent this long may be replaced */
	struct origin acceptors[PAXOS_MAX_ACCEPTORS];
	struct origin proposers[PAXOS_MAX_PROPOSERS];
};

enum origin_verdict {
	ORIGIN_SAME,     /* the address that speaks for the id, or the transport cannot tell */
	ORIGIN_NEW,      /* the first address heard for the id, or one that replaces a silent one */
	ORIGIN_IMPOSTOR, /* another address while the id's own still talks: drop the datagram */
};

/* Datagram from address (0: unknown) claims to come from role id at now. Only acceptors and
 * proposers have ids worth claiming; for others, and ids out of range, ORIGIN_SAME. *was is
 * the address replaced or speaking (0: none). */
enum origin_verdict origin_check(struct origin_table *t, enum paxos_role role, uint32_t id,
				 uint64_t address, paxos_time now, struct origin *was);

#endif
