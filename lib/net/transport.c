/* SPDX-License-Identifier: BSD-3-Clause */
/* The transport paxos.conf names ("transport multicast" or "unicast"), opened for a node. */
#include <paxos/transport.h>

#include "config_fields.h"

struct paxos_transport *paxos_transport_open(void *arg, struct event_base *base,
					     const struct paxos_config *cfg,
					     paxos_transport_deliver_fn deliver, void *deliver_arg,
					     char *err, size_t errlen)
{
	(void)arg;
	if (cfg && cfg->transport == PAXOS_TRANSPORT_UNICAST)
		return paxos_transport_unicast_new(base, cfg, deliver, deliver_arg, err, errlen);
	return paxos_transport_multicast_new(base, cfg, deliver, deliver_arg, err, errlen);
}
