/* UDP multicast sockets: one sender per node, one receiver per group the node listens to. */
#ifndef PAXOS_UDP_H
#define PAXOS_UDP_H

#include <netinet/in.h>
#include <paxos/config.h>

/* Opens a non-blocking sender on the configured interface and TTL, with loopback on so
 * roles on the same host hear each other. Returns the socket or -1 with err filled. */
int paxos_transport_sender(const struct paxos_config *cfg, char *err, size_t errlen);

/* Opens a non-blocking socket bound to group's port and joined to its address on the
 * configured interface. Several processes on a host may join the same group. */
int paxos_transport_receiver(const struct paxos_config *cfg, enum paxos_group group, char *err,
			     size_t errlen);

/* The destination address of a group. */
void paxos_transport_address(const struct paxos_config *cfg, enum paxos_group group,
			     struct sockaddr_in *out);

#endif
