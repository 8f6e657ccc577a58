/* SPDX-License-Identifier: BSD-3-Clause */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fail(int fd, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s", what, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

int kv_net_sender(struct in_addr interface, unsigned ttl, char *err, size_t errlen)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	unsigned char t = (unsigned char)ttl, loop = 1;
	if (fd < 0)
		return fail(fd, "socket", err, errlen);
	if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &interface, sizeof(interface)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &t, sizeof(t)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof(loop)) < 0)
		return fail(fd, "reply sender options", err, errlen);
	return fd;
}

int kv_net_receiver(const struct sockaddr_in *group, struct in_addr interface, char *err,
		    size_t errlen)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int on = 1;
	if (fd < 0)
		return fail(fd, "socket", err, errlen);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) < 0)
		return fail(fd, "SO_REUSEADDR", err, errlen);
	/* Bound to the group address: this socket sees that group's traffic only. */
	if (bind(fd, (const struct sockaddr *)group, sizeof(*group)) < 0) {
		char what[64];
		snprintf(what, sizeof(what), "bind %s:%u", inet_ntoa(group->sin_addr),
			 (unsigned)ntohs(group->sin_port));
		return fail(fd, what, err, errlen);
	}
	struct ip_mreq mreq = {.imr_multiaddr = group->sin_addr, .imr_interface = interface};
	if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq)) < 0)
		return fail(fd, "IP_ADD_MEMBERSHIP", err, errlen);
	return fd;
}
