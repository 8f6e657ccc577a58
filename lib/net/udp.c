/* SPDX-License-Identifier: BSD-3-Clause */
#include "udp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "config_fields.h"

void paxos_transport_address(const struct paxos_config *cfg, enum paxos_group group,
			     struct sockaddr_in *out)
{
	memset(out, 0, sizeof(*out));
	out->sin_family = AF_INET;
	out->sin_addr = cfg->groups[group].addr;
	out->sin_port = htons(cfg->groups[group].port);
}

static int fail(int fd, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s", what, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

/* A socket buffer of bytes (the kernel's minimum for less): the FORCE option first, which
 * passes net.core.[rw]mem_max where the process may (CAP_NET_ADMIN). */
static void set_buffer(int fd, int force, int plain, uint32_t bytes)
{
	int size = bytes > INT32_MAX ? INT32_MAX : (int)bytes;
	if (setsockopt(fd, SOL_SOCKET, force, &size, sizeof(size)) != 0)
		setsockopt(fd, SOL_SOCKET, plain, &size, sizeof(size));
}

void paxos_transport_receive_buffer(int fd, uint32_t bytes)
{
	set_buffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, bytes);
}

/* Buffers sized from the config; the kernel clamps them to net.core.[rw]mem_max unless the
 * process may exceed that (CAP_NET_ADMIN: the FORCE options), which only costs throughput. A
 * receive buffer that overruns while its process waits for a CPU loses accepts and accepted
 * messages, and each loss holds the values outstanding for a timeout or a repeat. */
static int open_socket(const struct paxos_config *cfg, char *err, size_t errlen)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(fd, "socket", err, errlen);
	paxos_transport_receive_buffer(fd, cfg->socket_buffer);
	set_buffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, cfg->socket_buffer);
	return fd;
}

int paxos_transport_sender(const struct paxos_config *cfg, char *err, size_t errlen)
{
	int fd = open_socket(cfg, err, errlen);
	if (fd < 0)
		return -1;
	unsigned char ttl = (unsigned char)cfg->multicast_ttl, loop = 1;
	if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &cfg->multicast_interface,
		       sizeof(cfg->multicast_interface)) < 0)
		return fail(fd, "IP_MULTICAST_IF", err, errlen);
	if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl)) < 0)
		return fail(fd, "IP_MULTICAST_TTL", err, errlen);
	if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof(loop)) < 0)
		return fail(fd, "IP_MULTICAST_LOOP", err, errlen);
	return fd;
}

int paxos_transport_receiver(const struct paxos_config *cfg, enum paxos_group group, char *err,
			     size_t errlen)
{
	int fd = open_socket(cfg, err, errlen);
	if (fd < 0)
		return -1;
	int on = 1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) < 0)
		return fail(fd, "SO_REUSEADDR", err, errlen);
	/* Bound to the group address, so this socket only sees that group's traffic. */
	struct sockaddr_in addr;
	paxos_transport_address(cfg, group, &addr);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		char what[64];
		snprintf(what, sizeof(what), "bind %s:%u", inet_ntoa(addr.sin_addr),
			 (unsigned)ntohs(addr.sin_port));
		return fail(fd, what, err, errlen);
	}
	/* Only what this socket joined: by default Linux hands a socket every group any socket
	 * of the host joined on its port, so one that leaves its group (paxos_transport_member)
	 * would go on receiving, and dropping, while another process is a member. */
	int all = 0;
	(void)setsockopt(fd, IPPROTO_IP, IP_MULTICAST_ALL, &all, sizeof(all));
	if (paxos_transport_member(fd, cfg, group, true) != 0)
		return fail(fd, "IP_ADD_MEMBERSHIP", err, errlen);
	return fd;
}

int paxos_transport_member(int fd, const struct paxos_config *cfg, enum paxos_group group,
			   bool member)
{
	struct sockaddr_in addr;
	paxos_transport_address(cfg, group, &addr);
	struct ip_mreq mreq = {.imr_multiaddr = addr.sin_addr,
			       .imr_interface = cfg->multicast_interface};
	return setsockopt(fd, IPPROTO_IP, member ? IP_ADD_MEMBERSHIP : IP_DROP_MEMBERSHIP, &mreq,
			  sizeof(mreq));
}

int paxos_transport_unicast_socket(const struct paxos_config *cfg, const struct sockaddr_in *at,
				   char *err, size_t errlen)
{
	int fd = open_socket(cfg, err, errlen);
	if (fd < 0)
		return -1;
	if (bind(fd, (const struct sockaddr *)at, sizeof(*at)) < 0) {
		char what[64], addr[INET_ADDRSTRLEN] = "?";
		inet_ntop(AF_INET, &at->sin_addr, addr, sizeof(addr));
		snprintf(what, sizeof(what), "bind %s:%u", addr, (unsigned)ntohs(at->sin_port));
		return fail(fd, what, err, errlen);
	}
	return fd;
}

int udp_rx_init(struct udp_rx *r, size_t cap)
{
	r->cap = cap;
	r->buf = malloc(cap * UDP_READ_BATCH);
	if (!r->buf)
		return PAXOS_E_NOMEM;
	for (size_t i = 0; i < UDP_READ_BATCH; i++) {
		r->iov[i] = (struct iovec){r->buf + cap * i, cap};
		r->hdr[i].msg_hdr = (struct msghdr){.msg_name = &r->from[i],
						    .msg_namelen = sizeof(r->from[i]),
						    .msg_iov = &r->iov[i],
						    .msg_iovlen = 1};
	}
	return PAXOS_OK;
}

void udp_rx_free(struct udp_rx *r)
{
	free(r->buf);
	r->buf = NULL;
}

size_t udp_rx_read(struct udp_rx *r, int fd)
{
	for (size_t i = 0; i < UDP_READ_BATCH; i++) {
		r->hdr[i].msg_hdr.msg_flags = 0;
		r->hdr[i].msg_hdr.msg_namelen = sizeof(r->from[i]);
	}
	int got = recvmmsg(fd, r->hdr, UDP_READ_BATCH, MSG_DONTWAIT, NULL);
	return got > 0 ? (size_t)got : 0;
}
