/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Membership changes come from the operators alone (membership-alpha): a change travels as a
 * PAXOS_MSG_CHANGE, never as a client value, with a MAC under the operators' key
 * (admin-key-file, lib/net/admin_mac.h) that paxos-admin and the proposers hold and clients do
 * not. A proposer proposes one only when the MAC is right and the change names ids paxos.conf
 * has and, unless it carries PAXOS_CHANGE_FORCE, leaves the cluster able to go on as far as
 * this proposer can tell: a new acceptor set with a quorum of members that answer here (at
 * their addresses), a move that leaves a quorum of the others, a proposer set with a live
 * member. Which acceptors answer is also what paxos-admin shows (node_acceptor_home).
 */
#include "log_line.h"
#include "parts.h"

#include <paxos/membership.h>

#include <stdio.h>
#include <string.h>

#include "admin_mac.h"
#include "clock.h"
#include "config_fields.h"

_Static_assert(sizeof(((struct node_admin *)0)->key) == PAXOS_ADMIN_KEY_BYTES, "admin key");

void node_acceptor_homes(struct paxos_node *n)
{
	for (uint32_t id = 0; id < n->cfg.acceptors && id < PAXOS_MAX_ACCEPTORS; id++)
		node_acceptor_home(n, id, &n->cfg.acceptor_address[id]);
}

void node_acceptor_heard_from(struct paxos_node *n, const struct paxos_header *from,
			      uint64_t origin, paxos_time now)
{
	n->net.rx.away = false;
	if (from->role != PAXOS_ROLE_ACCEPTOR || from->sender_id >= PAXOS_MAX_ACCEPTORS)
		return;
	uint64_t home = n->net.acceptor_home[from->sender_id];
	n->net.rx.away = home && origin && origin != home;
	n->net.acceptor_last[from->sender_id] = (struct origin){origin, now};
}

/* Acceptors heard at their addresses on the proposers group within the last few acceptor
 * ticks (as paxos-admin counts them). */
static uint32_t answering(const struct paxos_node *n, paxos_time now)
{
	paxos_time window = ((paxos_time)3 * n->cfg.acceptor_repeat_ms + 100) * 1000;
	uint32_t up = 0;
	for (uint32_t id = 0; id < PAXOS_MAX_ACCEPTORS; id++) {
		paxos_time t = n->proposer.acceptor_heard[id];
		if (t && (now <= t || now - t <= window))
			up |= 1u << id;
	}
	return up;
}

/* Whether acceptor id was heard lately from address e (an acceptor added with its address,
 * which is not its home here yet). */
static bool heard_at(const struct paxos_node *n, uint32_t id, const struct paxos_endpoint *e,
		     paxos_time now)
{
	paxos_time window = ((paxos_time)3 * n->cfg.acceptor_repeat_ms + 100) * 1000;
	const struct origin *o = &n->net.acceptor_last[id];
	return o->heard && o->address == node_origin_of(e) &&
	       (now <= o->heard || now - o->heard <= window);
}

static uint32_t acceptor_ids(const struct paxos_node *n)
{
	return n->cfg.acceptors >= 32 ? UINT32_MAX : (1u << n->cfg.acceptors) - 1;
}

static int read_key(struct paxos_node *n)
{
	if (n->admin.key_read)
		return PAXOS_OK;
	if (!n->cfg.admin_key_file[0]) {
		node_set_error(n, "membership changes need admin-key-file in paxos.conf (the "
				  "operators' key, which the proposers hold too): none is set");
		return PAXOS_E_CONFIG;
	}
	char why[2 * PAXOS_PATH_MAX + 128];
	if (paxos_admin_key_read(n->cfg.admin_key_file, n->admin.key, why, sizeof(why)) !=
	    PAXOS_OK) {
		node_set_error(n, "admin-key-file %s", why);
		return PAXOS_E_CONFIG;
	}
	n->admin.key_read = true;
	return PAXOS_OK;
}

int node_admin_start(struct paxos_node *n)
{
	if (!n->cfg.membership_alpha)
		return PAXOS_OK;
	if (!n->cfg.admin_key_file[0]) {
		paxos_logf(
		    PAXOS_LOG_WARNING,
		    "paxos: proposer %u%s: no admin-key-file: membership changes (paxos-admin) "
		    "are refused here",
		    n->role_id[PAXOS_ROLE_PROPOSER], n->partition_label);
		return PAXOS_OK;
	}
	return read_key(n);
}

void node_admin_wipe(struct paxos_node *n)
{
	paxos_admin_key_wipe(n->admin.key);
}

int node_admin_send(struct paxos_node *n, const uint8_t *command, uint32_t len)
{
	int rc = read_key(n);
	if (rc != PAXOS_OK)
		return rc;
	uint8_t mac[PAXOS_CHANGE_MAC_BYTES];
	struct paxos_message m = {.type = PAXOS_MSG_CHANGE};
	m.u.change.command = (struct paxos_value){command, len};
	m.u.change.flags = n->admin.force ? PAXOS_CHANGE_FORCE : 0;
	paxos_admin_mac(n->admin.key, n->cfg.partition, m.u.change.flags, &m.u.change.command, mac);
	m.u.change.mac = (struct paxos_value){mac, sizeof(mac)};
	node_emit(&n->net.out[PAXOS_ROLE_CLIENT], PAXOS_GROUP_SUBMIT, &m);
	return PAXOS_OK;
}

int paxos_node_force_changes(struct paxos_node *n, bool force)
{
	if (!n)
		return PAXOS_E_INVALID;
	n->admin.force = force;
	return PAXOS_OK;
}

/* Why the node's proposer does not propose command (ids paxos.conf lacks always; unless
 * forced, a change that would leave the cluster without a live quorum or proposer), in why;
 * false when it may. */
static bool refuse(struct paxos_node *n, const struct paxos_value *command, bool force,
		   paxos_time now, char *why, size_t cap)
{
	enum paxos_membership_kind kind;
	uint32_t from, set, id, addr;
	uint16_t port;
	if (paxos_membership_decode_of(command, &kind, &from, &set) != PAXOS_OK) {
		snprintf(why, cap, "not a membership command");
		return true;
	}
	bool has_address = paxos_membership_decode_address(command, &id, &addr, &port) == PAXOS_OK;
	const struct paxos_configuration *c = paxos_membership_latest(n->membership);
	char text[128], have[128];
	node_members_text(set, text, sizeof(text));
	if (kind == PAXOS_MEMBERSHIP_PROPOSERS ? (set & ~node_proposer_ids(n)) != 0
					       : (set & ~acceptor_ids(n)) != 0) {
		snprintf(why, cap, "it names %s %s, but paxos.conf has only %u %s ids",
			 kind == PAXOS_MEMBERSHIP_PROPOSERS ? "proposers" : "acceptors", text,
			 kind == PAXOS_MEMBERSHIP_PROPOSERS ? n->cfg.proposers : n->cfg.acceptors,
			 kind == PAXOS_MEMBERSHIP_PROPOSERS ? "proposer" : "acceptor");
		return true;
	}
	if (force)
		return false;
	uint32_t up = answering(n, now);
	if (kind == PAXOS_MEMBERSHIP_PROPOSERS) {
		uint32_t alive = 0, self = n->role_id[PAXOS_ROLE_PROPOSER];
		for (uint32_t rest = set; rest; rest &= rest - 1) {
			uint32_t p = (uint32_t)__builtin_ctz(rest);
			if (p == self || (n->proposer.election &&
					  paxos_election_alive(n->proposer.election, p, now)))
				alive |= 1u << p;
		}
		if (!alive) {
			snprintf(why, cap,
				 "proposers %s: none of them is heard alive here, so none would "
				 "lead",
				 text);
			return true;
		}
		return false;
	}
	node_members_text(up, have, sizeof(have));
	if (kind == PAXOS_MEMBERSHIP_ADDRESS) {
		uint32_t others = (uint32_t)__builtin_popcount(c->members & ~(1u << id) & up);
		uint32_t quorum = paxos_membership_quorum_of(c->members);
		if (others < quorum) {
			snprintf(why, cap,
				 "moving acceptor %u would leave no live quorum while it moves: %u "
				 "of the others answer here (%s), configuration %u needs %u",
				 id, others, up ? have : "none", c->id, quorum);
			return true;
		}
		return false;
	}
	if (has_address) {
		struct paxos_endpoint e = {.addr = {.s_addr = addr}, .port = port};
		if (heard_at(n, id, &e, now))
			up |= 1u << id;
	}
	uint32_t added = set & ~c->members;
	if (added & ~up) {
		snprintf(why, cap, "acceptor %d does not answer here", __builtin_ctz(added & ~up));
		return true;
	}
	uint32_t live = (uint32_t)__builtin_popcount(set & up);
	uint32_t quorum = paxos_membership_quorum_of(set);
	if (live < quorum) {
		snprintf(why, cap,
			 "acceptors %s would have no live quorum: %u of them answer here (%s), it "
			 "needs %u",
			 text, live, up ? have : "none", quorum);
		return true;
	}
	return false;
}

/* A few lines a second at most: a forger must not flood the log. */
#define REFUSALS_LOGGED_PER_SECOND 8u

static void say_refused(struct paxos_node *n, paxos_time now, const char *what)
{
	if (now < n->admin.refusals_since || now - n->admin.refusals_since >= 1000000) {
		n->admin.refusals_since = now;
		n->admin.refusals_logged = 0;
	}
	if (n->admin.refusals_logged++ >= REFUSALS_LOGGED_PER_SECOND)
		return;
	paxos_logf(PAXOS_LOG_WARNING, "paxos: proposer %u%s: refused a membership change: %s",
		   n->role_id[PAXOS_ROLE_PROPOSER], n->partition_label, what);
}

void node_admin_on_change(struct paxos_node *n, const struct paxos_change *c, paxos_time now)
{
	if (!n->proposer.core || !n->membership)
		return;
	char why[512];
	if (!n->admin.key_read) {
		say_refused(n, now, "no admin-key-file here, so no change is accepted");
		return;
	}
	if (!paxos_admin_mac_valid(n->admin.key, n->cfg.partition, c)) {
		say_refused(n, now, "its MAC is not the operators' (admin-key-file)");
		return;
	}
	bool force = (c->flags & PAXOS_CHANGE_FORCE) != 0;
	if (refuse(n, &c->command, force, now, why, sizeof(why))) {
		say_refused(n, now, why);
		return;
	}
	/* Outdated, a repeat of the change this proposer holds, or one while another is in
	 * progress: the core says so, and paxos-admin asks again. */
	paxos_proposer_change(n->proposer.core, &c->command, now,
			      &n->net.out[PAXOS_ROLE_PROPOSER].emitter);
}

/* The checks every change of a set (the acceptors, or proposers) passes: a history to change,
 * a set of configured ids other than the latest configuration's, and no change chosen but not
 * in force yet. PAXOS_OK with that configuration in *latest, or the refusal's status with
 * the error recorded in fn's name. */
static int check_change(struct paxos_node *n, const char *fn, bool proposers, uint32_t set,
			const struct paxos_configuration **latest)
{
	const struct paxos_membership *m = n->membership;
	if (!m) {
		node_set_error(
		    n, "%s: needs membership-alpha and a learner or a query on this node", fn);
		return PAXOS_E_INVALID;
	}
	const struct paxos_configuration *c = paxos_membership_latest(m);
	uint32_t ids = proposers ? node_proposer_ids(n) : acceptor_ids(n);
	if (set == 0 || (set & ~ids) || set == (proposers ? c->proposers & ids : c->members)) {
		const char *what = proposers ? "proposers" : "members";
		node_set_error(n,
			       "%s: %s 0x%x: none, an id not below %s (%u), or the %s of "
			       "configuration %u already",
			       fn, what, set, proposers ? "proposers" : "acceptors",
			       proposers ? n->cfg.proposers : n->cfg.acceptors, what, c->id);
		return PAXOS_E_INVALID;
	}
	if (paxos_membership_pending(m)) {
		node_set_error(
		    n, "%s: configuration %u is chosen but not in force before instance %llu", fn,
		    c->id, (unsigned long long)c->first);
		return PAXOS_E_FULL;
	}
	*latest = c;
	return PAXOS_OK;
}

/* Proposes the acceptor or proposer set set, once check_change passes it. */
static int change_set(struct paxos_node *n, const char *fn, enum paxos_membership_kind kind,
		      uint32_t set)
{
	const struct paxos_configuration *c;
	int rc = check_change(n, fn, kind == PAXOS_MEMBERSHIP_PROPOSERS, set, &c);
	if (rc != PAXOS_OK)
		return rc;
	uint8_t cmd[PAXOS_MEMBERSHIP_COMMAND_LEN];
	paxos_membership_command_of(kind, c->id, set, cmd);
	return node_admin_send(n, cmd, sizeof(cmd));
}

int paxos_node_change_membership(struct paxos_node *n, uint32_t members)
{
	return n ? change_set(n, "paxos_node_change_membership", PAXOS_MEMBERSHIP_ACCEPTORS,
			      members)
		 : PAXOS_E_INVALID;
}

int paxos_node_change_proposers(struct paxos_node *n, uint32_t proposers)
{
	return n ? change_set(n, "paxos_node_change_proposers", PAXOS_MEMBERSHIP_PROPOSERS,
			      proposers)
		 : PAXOS_E_INVALID;
}

int paxos_node_set_acceptor_address(struct paxos_node *n, uint32_t id,
				    const struct paxos_endpoint *e)
{
	if (!n)
		return PAXOS_E_INVALID;
	if (!e || !e->port || id >= n->cfg.acceptors || !n->net.transport->ops->set_address) {
		node_set_error(n, "paxos_node_set_acceptor_address: needs the unicast transport, "
				  "an acceptor id below acceptors and a port");
		return PAXOS_E_INVALID;
	}
	int rc = n->net.transport->ops->set_address(n->net.transport, PAXOS_ROLE_ACCEPTOR, id, e);
	if (rc == PAXOS_OK)
		node_acceptor_home(n, id, e);
	return rc;
}

int paxos_node_change_membership_at(struct paxos_node *n, uint32_t members, uint32_t id,
				    const struct paxos_endpoint *e)
{
	if (!n)
		return PAXOS_E_INVALID;
	if (!e || !e->port || id >= n->cfg.acceptors || !(members & (1u << id))) {
		node_set_error(n,
			       "paxos_node_change_membership_at: acceptor %u must be one of the "
			       "members, below acceptors, with a port",
			       id);
		return PAXOS_E_INVALID;
	}
	/* The same checks as paxos_node_change_membership, then the command with the address. */
	const struct paxos_configuration *c;
	int rc = check_change(n, "paxos_node_change_membership_at", false, members, &c);
	if (rc != PAXOS_OK)
		return rc;
	uint8_t cmd[PAXOS_MEMBERSHIP_COMMAND_MAX];
	paxos_membership_command_at(c->id, members, id, e->addr.s_addr, e->port, cmd);
	return node_admin_send(n, cmd, sizeof(cmd));
}

int paxos_node_change_acceptor_address(struct paxos_node *n, uint32_t id,
				       const struct paxos_endpoint *e)
{
	if (!n)
		return PAXOS_E_INVALID;
	if (!n->net.transport->ops->set_address) {
		node_set_error(n, "paxos_node_change_acceptor_address: needs the unicast transport "
				  "(multicast hears an acceptor wherever it runs)");
		return PAXOS_E_INVALID;
	}
	const struct paxos_membership *m = n->membership;
	if (!m) {
		node_set_error(n, "paxos_node_change_acceptor_address: needs membership-alpha and "
				  "a learner or a query on this node");
		return PAXOS_E_INVALID;
	}
	const struct paxos_configuration *c = paxos_membership_latest(m);
	char text[128];
	node_members_text(c->members, text, sizeof(text));
	if (id >= n->cfg.acceptors || id >= 32 || !(c->members & (1u << id))) {
		node_set_error(n,
			       "paxos_node_change_acceptor_address: acceptor %u is no member: "
			       "configuration %u has acceptors %s",
			       id, c->id, text);
		return PAXOS_E_INVALID;
	}
	if (!e || !e->port || e->addr.s_addr == 0 || e->addr.s_addr == UINT32_MAX) {
		node_set_error(n,
			       "paxos_node_change_acceptor_address: acceptor %u: an address "
			       "needs a host and a port",
			       id);
		return PAXOS_E_INVALID;
	}
	uint32_t addr;
	uint16_t port;
	bool known = paxos_membership_address(m, id, &addr, &port);
	if (!known) {
		addr = n->cfg.acceptor_address[id].addr.s_addr;
		port = n->cfg.acceptor_address[id].port;
	}
	if (addr == e->addr.s_addr && port == e->port) {
		node_set_error(n,
			       "paxos_node_change_acceptor_address: acceptor %u is at that address "
			       "already",
			       id);
		return PAXOS_E_INVALID;
	}
	if (paxos_membership_pending(m)) {
		node_set_error(n,
			       "paxos_node_change_acceptor_address: configuration %u is chosen but "
			       "not in force before instance %llu",
			       c->id, (unsigned long long)c->first);
		return PAXOS_E_FULL;
	}
	uint8_t cmd[PAXOS_MEMBERSHIP_COMMAND_MAX];
	paxos_membership_command_address(c->id, c->members, id, e->addr.s_addr, e->port, cmd);
	return node_admin_send(n, cmd, sizeof(cmd));
}
