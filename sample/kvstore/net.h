/* SPDX-License-Identifier: BSD-3-Clause */
/* The reply group: replicas multicast each command's result, clients listen. It uses the
 * multicast interface and TTL of paxos.conf. */
#ifndef KVSTORE_NET_H
#define KVSTORE_NET_H

#include <netinet/in.h>
#include <stddef.h>

/* A socket for sending to groups; -1 with err filled on failure. */
int kv_net_sender(struct in_addr interface, unsigned ttl, char *err, size_t errlen);
/* A socket that receives what is sent to group (several may listen on one host). */
int kv_net_receiver(const struct sockaddr_in *group, struct in_addr interface, char *err,
		    size_t errlen);

#endif
