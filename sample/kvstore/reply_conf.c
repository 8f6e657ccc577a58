/* SPDX-License-Identifier: BSD-3-Clause */
#include "reply_conf.h"

#include <arpa/inet.h>
#include <stdlib.h>

struct in_addr kv_multicast_interface(const struct paxos_config *cfg)
{
	char text[INET_ADDRSTRLEN] = "";
	struct in_addr addr = {htonl(INADDR_LOOPBACK)};
	if (paxos_config_get(cfg, "multicast-interface", text, sizeof(text)) == PAXOS_OK)
		inet_pton(AF_INET, text, &addr);
	return addr;
}

unsigned kv_multicast_ttl(const struct paxos_config *cfg)
{
	char text[8] = "0";
	paxos_config_get(cfg, "multicast-ttl", text, sizeof(text));
	return (unsigned)strtoul(text, NULL, 10);
}
