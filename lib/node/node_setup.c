/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What adding any role takes, below the roles' own set-up (node.c, node_proposer.c): joining a
 * group, being a member in the encoders and at the transport, a timer on the loop.
 */
#include "parts.h"

static struct timeval ms_to_tv(uint32_t ms)
{
	struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
	return tv;
}

int node_add_timer(struct paxos_node *n, struct event **ev, uint32_t ms, event_callback_fn cb)
{
	if (*ev)
		return PAXOS_OK;
	*ev = event_new(n->base, -1, EV_PERSIST, cb, n);
	struct timeval tv = ms_to_tv(ms);
	if (!*ev || event_add(*ev, &tv) != 0) {
		node_set_error(n, "cannot add a timer to the event loop");
		return PAXOS_E_NOMEM;
	}
	return PAXOS_OK;
}

int node_join(struct paxos_node *n, enum paxos_group g)
{
	if (n->net.joined[g])
		return PAXOS_OK;
	int rc = n->net.transport->ops->join(n->net.transport, g, n->error, sizeof(n->error));
	n->net.joined[g] = rc == PAXOS_OK;
	return rc;
}

void node_host(struct paxos_node *n, enum paxos_role role, uint32_t id)
{
	n->hosted[role] = true;
	n->role_id[role] = id;
	struct role_out *o = &n->net.out[role];
	o->header = (struct paxos_header){.role = role,
					  .sender_id = id,
					  .version = n->net.wire.spoken,
					  .speech = n->net.wire.speech};
	for (int g = 0; g < PAXOS_GROUP_COUNT; g++)
		paxos_encoder_init(&o->enc[g], o->enc[g].buf, n->net.payload_cap, &o->header);
}

/* Tells the transport that this node is member id of role: where it must receive. */
int node_host_member(struct paxos_node *n, enum paxos_role role, uint32_t id)
{
	if (!n->net.transport->ops->host)
		return PAXOS_OK;
	return n->net.transport->ops->host(n->net.transport, role, id, n->error, sizeof(n->error));
}
