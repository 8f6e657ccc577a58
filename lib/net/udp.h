/* SPDX-License-Identifier: BSD-3-Clause */
/* UDP sockets: the multicast sender and group receivers, and the unicast transport's bound sockets.
 */
#ifndef PAXOS_UDP_H
#define PAXOS_UDP_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <paxos/config.h>
#include <paxos/transport.h>

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

/* Datagrams one recvmmsg reads. */
#define UDP_READ_BATCH 64

/* What the transports read into: UDP_READ_BATCH datagrams of up to cap bytes, read with one
 * recvmmsg. */
struct udp_rx {
	uint8_t *buf;
	size_t cap;
	struct mmsghdr hdr[UDP_READ_BATCH];
	struct iovec iov[UDP_READ_BATCH];
	struct sockaddr_in from[UDP_READ_BATCH];
};

/* Allocates r's buffers for datagrams of up to cap bytes: PAXOS_OK or PAXOS_E_NOMEM. */
int udp_rx_init(struct udp_rx *r, size_t cap);
void udp_rx_free(struct udp_rx *r);

/* Reads what fd holds without waiting, up to UDP_READ_BATCH datagrams: how many (0 when
 * none, or on an error). */
size_t udp_rx_read(struct udp_rx *r, int fd);

/* Datagram i of the last read; truncated when it was longer than cap. */
static inline struct paxos_rx_datagram udp_rx_datagram(struct udp_rx *r, size_t i)
{
	return (struct paxos_rx_datagram){
	    .data = r->iov[i].iov_base,
	    .len = r->hdr[i].msg_len,
	    .truncated = (r->hdr[i].msg_hdr.msg_flags & MSG_TRUNC) != 0,
	    .from = &r->from[i],
	    .origin = paxos_udp_origin(&r->from[i]),
	};
}

#endif
