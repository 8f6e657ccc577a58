/* SPDX-License-Identifier: BSD-3-Clause */
/* UDP sockets: the multicast sender and group receivers, and the unicast transport's bound sockets.
 */
#ifndef PAXOS_UDP_H
#define PAXOS_UDP_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <paxos/config.h>

/* Opens a non-blocking sender on the configured interface and TTL, with loopback on so
 * roles on the same host hear each other. Returns the socket or -1 with err filled. */
int paxos_transport_sender(const struct paxos_config *cfg, char *err, size_t errlen);

/* Opens a non-blocking socket bound to group's port and joined to its address on the
 * configured interface. Several processes on a host may join the same group. */
int paxos_transport_receiver(const struct paxos_config *cfg, enum paxos_group group, char *err,
			     size_t errlen);

/* Opens a non-blocking socket bound to at (port 0: any), for the unicast transport. Returns the
 * socket or -1 with err filled ("bind 10.0.0.1:7201: Cannot assign requested address"). */
int paxos_transport_unicast_socket(const struct paxos_config *cfg, const struct sockaddr_in *at,
				   char *err, size_t errlen);

/* Sets fd's receive buffer to bytes (the kernel's minimum for less): past net.core.rmem_max
 * where the process may (CAP_NET_ADMIN). */
void paxos_transport_receive_buffer(int fd, uint32_t bytes);

/* Joins (member) or leaves the multicast group a receiver socket is bound to; 0 or -1 (errno). */
int paxos_transport_member(int fd, const struct paxos_config *cfg, enum paxos_group group,
			   bool member);

/* A sender's address as one number (address and port), never 0 for a real sender: the
 * transports' paxos_rx_datagram.origin. */
static inline uint64_t paxos_udp_origin(const struct sockaddr_in *a)
{
	return (uint64_t)ntohl(a->sin_addr.s_addr) << 16 | ntohs(a->sin_port);
}

/* The destination address of a group. */
void paxos_transport_address(const struct paxos_config *cfg, enum paxos_group group,
			     struct sockaddr_in *out);

#endif
