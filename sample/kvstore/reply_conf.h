/* SPDX-License-Identifier: BSD-3-Clause */
/* What the reply group takes from paxos.conf: its multicast interface and TTL. */
#ifndef KVSTORE_REPLY_CONF_H
#define KVSTORE_REPLY_CONF_H

#include <netinet/in.h>
#include <paxos/config.h>

struct in_addr kv_multicast_interface(const struct paxos_config *cfg);
unsigned kv_multicast_ttl(const struct paxos_config *cfg);

#endif
