/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * membership-alpha: the node's configuration history (paxos/membership.h), which its learner
 * applies and its proposer and acceptor read, and the requests to change it. A request is a
 * membership command sent to the proposers with the operators' MAC (node_admin.c); the leader
 * proposes it once checked, and it has an effect only once chosen.
 */
#include "log_line.h"
#include "parts.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "config_fields.h"
#include "membership_file.h"

/* "0,1,3" */
void node_members_text(uint32_t members, char *buf, size_t cap)
{
	size_t used = 0;
	buf[0] = 0;
	for (uint32_t rest = members; rest && used < cap; rest &= rest - 1)
		used += (size_t)snprintf(buf + used, cap - used, "%s%d", used ? "," : "",
					 __builtin_ctz(rest));
}

/* "10.0.0.9" of an IPv4 address in network byte order (the node knows no socket API). */
static void dotted(uint32_t addr, char *buf, size_t cap)
{
	const uint8_t *b = (const uint8_t *)&addr;
	snprintf(buf, cap, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
}

/* Proposer ids paxos.conf has, one bit each (membership-alpha allows at most 32). */
uint32_t node_proposer_ids(const struct paxos_node *n)
{
	return n->cfg.proposers >= 32 ? UINT32_MAX : (1u << n->cfg.proposers) - 1;
}

/* Whether history a is newer than b (NULL): a later configuration, or more applied. */
static bool newer(const struct paxos_membership *a, const struct paxos_membership *b)
{
	if (!b)
		return true;
	uint32_t ia = paxos_membership_latest(a)->id, ib = paxos_membership_latest(b)->id;
	return ia > ib || (ia == ib && paxos_membership_applied(a) > paxos_membership_applied(b));
}

/* The newest history kept in the node's directories (the highest configuration id, then the
 * most applied), or NULL; which directory in *from. */
static int read_kept(struct paxos_node *n, struct paxos_membership **best, const char **from)
{
	*best = NULL;
	for (uint32_t k = 0; k < n->mship.dir_count; k++) {
		struct paxos_membership *m;
		char err[PAXOS_PATH_MAX + 256];
		if (paxos_membership_file_read(n->mship.dirs[k], n->cfg.membership_alpha, &m, err,
					       sizeof(err)) != PAXOS_OK) {
			paxos_membership_free(*best);
			node_set_error(n, "%s", err);
			return PAXOS_E_STORAGE;
		}
		if (!m)
			continue;
		if (newer(m, *best)) {
			paxos_membership_free(*best);
			*best = m;
			*from = n->mship.dirs[k];
		} else {
			paxos_membership_free(m);
		}
	}
	return PAXOS_OK;
}

/* The number a UDP transport gives a sender at this address (lib/net/udp.h,
 * paxos_udp_origin): the address in host order, then the port. 0 for an address that says
 * nothing (0.0.0.0, a socket bound to any address, or port 0). */
uint64_t node_origin_of(const struct paxos_endpoint *e)
{
	const uint8_t *b = (const uint8_t *)&e->addr.s_addr;
	uint64_t host = (uint64_t)b[0] << 24 | (uint64_t)b[1] << 16 | (uint64_t)b[2] << 8 | b[3];
	return host && e->port ? host << 16 | e->port : 0;
}

void node_acceptor_home(struct paxos_node *n, uint32_t id, const struct paxos_endpoint *e)
{
	if (id >= PAXOS_MAX_ACCEPTORS || !n->net.transport->ops->set_address)
		return;
	uint64_t home = node_origin_of(e);
	if (home == n->net.acceptor_home[id])
		return;
	n->net.acceptor_home[id] = home;
	/* What was heard from its old address says nothing about the new one. */
	n->learner.acceptor_heard[id] = 0;
	n->proposer.acceptor_heard[id] = 0;
}

/* The acceptors' addresses the log carried, given to the transport (unicast): kept ones at
 * the start, new ones as their commands are applied. A member the log moved is believed at
 * its new address at once (the log says it speaks from there), not after its old one's
 * silence (origin.h). */
void node_membership_give_addresses(struct paxos_node *n)
{
	if (!n->net.transport->ops->set_address)
		return;
	for (uint32_t id = 0; id < n->cfg.acceptors && id < PAXOS_MAX_ACCEPTORS; id++) {
		uint32_t addr;
		uint16_t port;
		if (!paxos_membership_address(n->membership, id, &addr, &port) ||
		    (n->mship.given_port[id] == port && n->mship.given_addr[id] == addr))
			continue;
		struct paxos_endpoint e = {.addr = {.s_addr = addr}, .port = port};
		if (n->net.transport->ops->set_address(n->net.transport, PAXOS_ROLE_ACCEPTOR, id,
						       &e) != PAXOS_OK)
			continue;
		n->mship.given_addr[id] = addr;
		n->mship.given_port[id] = port;
		node_acceptor_home(n, id, &e);
		n->net.origins.acceptors[id] = (struct origin){0, 0};
	}
}

void node_membership_count_latest(struct paxos_node *n)
{
	const struct paxos_configuration *c = paxos_membership_latest(n->membership);
	n->role_counters[PAXOS_ROLE_LEARNER].membership_configuration = c->id;
	n->role_counters[PAXOS_ROLE_LEARNER].membership_members = c->members;
	n->role_counters[PAXOS_ROLE_LEARNER].membership_proposers =
	    c->proposers & node_proposer_ids(n);
}

/* Whether the node's proposer was a member of some configuration the history keeps. */
static bool proposer_was_member(const struct paxos_node *n, uint32_t id)
{
	uint32_t count;
	const struct paxos_configuration *h = paxos_membership_history(n->membership, &count);
	for (uint32_t k = 0; k < count; k++)
		if (h[k].proposers & (1u << id))
			return true;
	return false;
}

int node_membership_proposer_start(struct paxos_node *n, uint32_t id)
{
	if (!n->membership || id >= 32)
		return PAXOS_OK;
	const struct paxos_configuration *c = paxos_membership_latest(n->membership);
	if (c->proposers & (1u << id))
		return PAXOS_OK;
	char text[128];
	node_members_text(c->proposers & node_proposer_ids(n), text, sizeof(text));
	if (proposer_was_member(n, id)) {
		node_set_error(n,
			       "proposer %u%s: refused: configuration %u (proposers %s, from "
			       "instance %llu) does not include it, so it may lead no more; add it "
			       "again (paxos-admin add-proposer %u) before starting it",
			       id, n->partition_label, c->id, text, (unsigned long long)c->first,
			       id);
		return PAXOS_E_INVALID;
	}
	paxos_logf(PAXOS_LOG_WARNING,
		   "paxos: proposer %u%s: configuration %u (proposers %s) does not include it "
		   "yet: it leads nothing until it is added (paxos-admin add-proposer %u)",
		   id, n->partition_label, c->id, text, id);
	return PAXOS_OK;
}

uint32_t node_membership_proposers(const struct paxos_node *n, paxos_iid next)
{
	return n->membership
		   ? paxos_membership_proposers(n->membership, next) & node_proposer_ids(n)
		   : 0;
}

uint32_t node_membership_election_set(const struct paxos_node *n, paxos_iid next)
{
	if (!n->membership)
		return 0;
	uint32_t set = paxos_membership_proposers(n->membership, next) & node_proposer_ids(n);
	uint32_t id = n->role_id[PAXOS_ROLE_PROPOSER];
	if (n->mship.settled || !n->hosted[PAXOS_ROLE_PROPOSER] || id >= 32)
		return set;
	/* Not settled: this proposer leads nothing yet (0 would mean every proposer). */
	set &= ~(1u << id);
	return set ? set : id == 31 ? 1u << 30 : 1u << 31;
}

void node_membership_election(struct paxos_node *n, paxos_iid next)
{
	if (!n->membership || !n->proposer.election)
		return;
	/* Check-quorum asks for a quorum of the acceptors in force. */
	paxos_election_set_acceptors(n->proposer.election,
				     paxos_membership_members(n->membership, next), paxos_now());
	n->proposer.election_run(n);
	uint32_t set = paxos_membership_proposers(n->membership, next) & node_proposer_ids(n);
	uint32_t before = paxos_election_members(n->proposer.election) & node_proposer_ids(n);
	uint32_t given = node_membership_election_set(n, next);
	if (given == paxos_election_members(n->proposer.election))
		return;
	paxos_election_set_members(n->proposer.election, given, paxos_now());
	n->proposer.election_run(n);
	bool was_gated = n->mship.gated;
	n->mship.gated = given != set;
	if (n->mship.gated || was_gated)
		return; /* not a change of the set: the history was not settled */
	uint32_t id = n->role_id[PAXOS_ROLE_PROPOSER], bit = id < 32 ? 1u << id : 0;
	if ((before & bit) == (set & bit))
		return;
	const struct paxos_configuration *c = paxos_membership_at(n->membership, next);
	char text[128];
	node_members_text(set, text, sizeof(text));
	if (set & bit)
		paxos_logf(PAXOS_LOG_INFO,
			   "paxos: proposer %u%s: added: configuration %u (proposers %s) is in "
			   "force from instance %llu",
			   id, n->partition_label, c->id, text, (unsigned long long)c->first);
	else
		paxos_logf(PAXOS_LOG_WARNING,
			   "paxos: proposer %u%s: removed: configuration %u (proposers %s, from "
			   "instance %llu) does not include it, so it leads no more; add it again "
			   "(paxos-admin add-proposer %u) or stop it",
			   id, n->partition_label, c->id, text, (unsigned long long)c->first, id);
}

/* An acceptor the newest configuration leaves out votes in no quorum: said at its start and
 * when a change removes it, so its operator knows why it serves nothing. */
void node_membership_say_if_removed(struct paxos_node *n, bool at_start)
{
	if (!n->acceptor.core && !n->hosted[PAXOS_ROLE_ACCEPTOR])
		return;
	uint32_t id = n->role_id[PAXOS_ROLE_ACCEPTOR];
	const struct paxos_configuration *c = paxos_membership_latest(n->membership);
	if (id >= 32 || (c->members & (1u << id)))
		return;
	char text[128];
	node_members_text(c->members, text, sizeof(text));
	paxos_logf(PAXOS_LOG_WARNING,
		   "paxos: acceptor %u%s: %s: configuration %u (acceptors %s, from instance %llu) "
		   "does not include it, so its votes count in no quorum from then on; add it "
		   "again (paxos-admin add-acceptor %u) or stop it",
		   id, n->partition_label, at_start ? "refused" : "removed", c->id, text,
		   (unsigned long long)c->first, id);
}

int node_membership_init(struct paxos_node *n)
{
	if (n->mship.ready || !n->cfg.membership_alpha)
		return PAXOS_OK;
	struct paxos_membership *kept;
	const char *from = "the application (paxos_node_set_membership)";
	int rc = read_kept(n, &kept, &from);
	if (rc != PAXOS_OK)
		return rc;
	bool given = n->membership != NULL; /* by paxos_node_set_membership */
	if (kept && newer(kept, n->membership)) {
		paxos_membership_free(n->membership);
		n->membership = kept;
		given = false;
	} else {
		paxos_membership_free(kept);
		kept = NULL;
		from = "the application (paxos_node_set_membership)";
	}
	if (n->membership) {
		const struct paxos_configuration *c = paxos_membership_latest(n->membership);
		uint32_t ids = n->cfg.acceptors >= 32 ? UINT32_MAX : (1u << n->cfg.acceptors) - 1;
		char text[128];
		node_members_text(c->members, text, sizeof(text));
		if (c->members & ~ids) {
			node_set_error(n,
				       "%s: configuration %u has acceptors %s, but paxos.conf has "
				       "only %u acceptor ids: add their addresses",
				       from, c->id, text, n->cfg.acceptors);
			return PAXOS_E_INVALID;
		}
		/* UINT32_MAX: every proposer (a history of before proposer sets). */
		if (c->proposers != UINT32_MAX && (c->proposers & ~node_proposer_ids(n))) {
			node_members_text(c->proposers, text, sizeof(text));
			node_set_error(n,
				       "%s: configuration %u has proposers %s, but paxos.conf has "
				       "only %u proposer ids: add their addresses",
				       from, c->id, text, n->cfg.proposers);
			return PAXOS_E_INVALID;
		}
		paxos_logf(PAXOS_LOG_INFO,
			   "paxos: configuration %u (acceptors %s from instance %llu), as learned "
			   "before (%s%s), not paxos.conf's first one",
			   c->id, text, (unsigned long long)c->first, from,
			   given ? "" : "/membership");
		/* One the application gave is kept in the node's directories too. */
		n->mship.kept = given ? 0 : c->id;
		if (given && (rc = node_membership_keep(n, 0)) != PAXOS_OK)
			return rc;
		n->mship.kept = c->id;
		n->mship.settled = true;
	} else {
		uint32_t first = n->cfg.initial_members ? n->cfg.initial_members : n->cfg.acceptors;
		uint32_t members = first >= 32 ? UINT32_MAX : (1u << first) - 1;
		uint32_t lead = n->cfg.initial_proposers;
		uint32_t proposers = lead == 0    ? node_proposer_ids(n)
				     : lead >= 32 ? UINT32_MAX
						  : (1u << lead) - 1;
		n->membership =
		    paxos_membership_create(members, proposers, n->cfg.membership_alpha);
		n->mship.kept = 1;
		if (!n->membership) {
			node_set_error(n, "out of memory");
			return PAXOS_E_NOMEM;
		}
	}
	/* A command naming ids this file lacks changes nothing here (nor anywhere: the files
	 * name the same ids), so no configuration a restart would refuse is ever made. */
	paxos_membership_limit_ids(
	    n->membership, n->cfg.acceptors >= 32 ? UINT32_MAX : (1u << n->cfg.acceptors) - 1,
	    node_proposer_ids(n));
	n->mship.ready = true;
	node_membership_give_addresses(n);
	node_membership_count_latest(n);
	node_membership_say_if_removed(n, true);
	return PAXOS_OK;
}

/* Whether fn may set the node's history now (given one, before any role, with
 * membership-alpha); if not, the error is recorded. */
static bool may_set_membership(struct paxos_node *n, const char *fn, bool given)
{
	if (given && n->cfg.membership_alpha && !n->mship.ready)
		return true;
	node_set_error(n, "%s: %s", fn,
		       !given           ? "no history"
		       : n->mship.ready ? "call it before adding roles"
					: "needs membership-alpha");
	return false;
}

/* Takes m as the node's history; NULL: what fn was given is not a history. */
static int install_membership(struct paxos_node *n, const char *fn, struct paxos_membership *m)
{
	if (!m) {
		node_set_error(n, "%s: not a history of changes with membership-alpha %u", fn,
			       n->cfg.membership_alpha);
		return PAXOS_E_INVALID;
	}
	paxos_membership_free(n->membership);
	n->membership = m;
	return PAXOS_OK;
}

int paxos_node_set_membership(struct paxos_node *n, const struct paxos_configuration *c,
			      uint32_t count, paxos_iid applied)
{
	static const char fn[] = "paxos_node_set_membership";
	if (!n)
		return PAXOS_E_INVALID;
	if (!may_set_membership(n, fn, true))
		return PAXOS_E_INVALID;
	return install_membership(
	    n, fn, paxos_membership_restore(c, count, applied, n->cfg.membership_alpha));
}

int paxos_node_set_membership_history(struct paxos_node *n, const struct paxos_membership *m)
{
	static const char fn[] = "paxos_node_set_membership_history";
	if (!n)
		return PAXOS_E_INVALID;
	if (!may_set_membership(n, fn, m != NULL))
		return PAXOS_E_INVALID;
	/* A copy through the wire form: checked as an answer is, addresses included. */
	uint8_t buf[PAXOS_MEMBERSHIP_ENCODED_MAX];
	size_t len = paxos_membership_encode(m, buf, sizeof(buf));
	return install_membership(
	    n, fn, len ? paxos_membership_decode_history(buf, len, n->cfg.membership_alpha) : NULL);
}

/* Writes the history to every directory: PAXOS_OK, or the error recorded. */
int node_membership_keep(struct paxos_node *n, uint32_t first_dir)
{
	node_keeper_wait(n); /* one writer of the files at a time */
	for (uint32_t k = first_dir; k < n->mship.dir_count; k++) {
		char err[PAXOS_PATH_MAX + 256];
		if (paxos_membership_file_write(n->mship.dirs[k], n->membership, err,
						sizeof(err)) != PAXOS_OK) {
			node_set_error(n, "%s", err);
			return PAXOS_E_IO;
		}
	}
	return PAXOS_OK;
}

int node_membership_keep_in(struct paxos_node *n, const char *dir)
{
	if (!n->cfg.membership_alpha)
		return PAXOS_OK;
	for (uint32_t k = 0; k < n->mship.dir_count; k++)
		if (strcmp(n->mship.dirs[k], dir) == 0)
			return PAXOS_OK;
	if (n->mship.dir_count == NODE_MEMBERSHIP_DIRS || strlen(dir) >= sizeof(n->mship.dirs[0])) {
		node_set_error(n, "membership directory %s: too long, or too many", dir);
		return PAXOS_E_INVALID;
	}
	snprintf(n->mship.dirs[n->mship.dir_count++], sizeof(n->mship.dirs[0]), "%s", dir);
	/* Made before this directory was known: from now on it is kept there too. */
	if (n->mship.ready && paxos_membership_latest(n->membership)->id > 1)
		return node_membership_keep(n, n->mship.dir_count - 1);
	return PAXOS_OK;
}

void node_membership_not_kept(struct paxos_node *n, uint32_t id, paxos_iid iid)
{
	/* Acting on a configuration a restart would not know could count a quorum the restarted
	 * process does not: stop instead. */
	n->failed = PAXOS_E_IO;
	paxos_logf(PAXOS_LOG_ERROR,
		   "paxos: fatal: configuration %u chosen in instance %llu cannot be kept: %s; "
		   "stopping",
		   id, (unsigned long long)iid, n->error);
	event_base_loopbreak(n->base);
}

void node_membership_kept(struct paxos_node *n, uint32_t id)
{
	const struct paxos_configuration *c = paxos_membership_latest(n->membership);
	n->mship.kept = id;
	node_membership_give_addresses(n);
	node_membership_count_latest(n);
	n->role_counters[PAXOS_ROLE_LEARNER].membership_changes++;
	uint32_t acceptor = n->role_id[PAXOS_ROLE_ACCEPTOR];
	if (n->acceptor.core && acceptor < 32 && !(c->members & (1u << acceptor)))
		node_membership_say_if_removed(n, false);
	node_membership_push(n, paxos_now()); /* acceptors without a learner: at once */
}

bool node_membership_applied(struct paxos_node *n, paxos_iid iid, const struct paxos_value *v,
			     paxos_ballot ballot, node_kept_fn kept)
{
	const struct paxos_configuration *c = paxos_membership_latest(n->membership);
	if (c->id == n->mship.kept || n->failed)
		return true;
	if (n->mship.dir_count && node_keeper_start(n, iid, v, ballot, kept) == PAXOS_OK)
		return false; /* kept goes on once it is kept */
	if (node_membership_keep(n, 0) != PAXOS_OK) {
		node_membership_not_kept(n, c->id, iid);
		return true;
	}
	node_membership_kept(n, c->id);
	return true;
}

void node_membership_delivered(struct paxos_node *n, paxos_iid iid, const struct paxos_value *v)
{
	enum paxos_membership_kind kind;
	uint32_t from, set;
	if (paxos_membership_decode_of(v, &kind, &from, &set) != PAXOS_OK)
		return;
	/* The configuration this command made, if it made one: also when it is delivered again
	 * after a restart that kept the history. */
	uint32_t count;
	const struct paxos_configuration *h = paxos_membership_history(n->membership, &count);
	const struct paxos_configuration *made = NULL;
	for (uint32_t k = 0; k < count && !made; k++)
		if (h[k].id == from + 1 &&
		    (kind == PAXOS_MEMBERSHIP_PROPOSERS ? h[k].proposers : h[k].members) == set &&
		    h[k].first == iid + n->cfg.membership_alpha)
			made = &h[k];
	const struct paxos_configuration *c = made ? made : paxos_membership_latest(n->membership);
	char text[128], lead[128];
	node_members_text(c->members, text, sizeof(text));
	node_members_text(c->proposers & node_proposer_ids(n), lead, sizeof(lead));
	uint32_t id, addr;
	uint16_t port;
	if (made && kind == PAXOS_MEMBERSHIP_ADDRESS &&
	    paxos_membership_decode_address(v, &id, &addr, &port) == PAXOS_OK) {
		char where[16];
		dotted(addr, where, sizeof(where));
		paxos_logf(PAXOS_LOG_INFO,
			   "paxos: configuration %u chosen in instance %llu: acceptor %u moves to "
			   "%s:%u (acceptors %s, proposers %s from instance %llu)",
			   c->id, (unsigned long long)iid, id, where, port, text, lead,
			   (unsigned long long)c->first);
		if (n->acceptor.core && id == n->role_id[PAXOS_ROLE_ACCEPTOR])
			paxos_logf(PAXOS_LOG_WARNING,
				   "paxos: acceptor %u%s: moved to %s:%u by configuration %u: the "
				   "others send to it there from now on; stop this process and run "
				   "acceptor %u at that address",
				   id, n->partition_label, where, port, c->id, id);
	} else if (made)
		paxos_logf(PAXOS_LOG_INFO,
			   "paxos: configuration %u chosen in instance %llu: acceptors %s, "
			   "proposers %s from instance %llu",
			   c->id, (unsigned long long)iid, text, lead,
			   (unsigned long long)c->first);
	else if (!paxos_membership_names_known_ids(n->membership, v)) {
		node_members_text(set, text, sizeof(text));
		paxos_logf(PAXOS_LOG_WARNING,
			   "paxos: refused: instance %llu: a membership change naming %s %s, ids "
			   "paxos.conf does not have (%u acceptors, %u proposers): ignored, "
			   "configuration %u stays the newest",
			   (unsigned long long)iid,
			   kind == PAXOS_MEMBERSHIP_PROPOSERS ? "proposers" : "acceptors", text,
			   n->cfg.acceptors, n->cfg.proposers, c->id);
	} else
		paxos_logf(PAXOS_LOG_INFO,
			   "paxos: instance %llu: a membership change made against configuration "
			   "%u is outdated (configuration %u is the newest): ignored",
			   (unsigned long long)iid, from, c->id);
}

bool node_membership_counts(struct paxos_node *n, const struct paxos_message *m, uint32_t id)
{
	paxos_iid iid;
	if (m->type == PAXOS_MSG_PROMISE)
		iid = m->u.promise.iid;
	else if (m->type == PAXOS_MSG_ACCEPTED && !m->u.accepted.final)
		iid = m->u.accepted.iid;
	else
		return true;
	const struct paxos_membership *h = n->membership;
	if (id >= 32 || !paxos_membership_known(h, iid))
		return true;
	const struct paxos_configuration *c = paxos_membership_at(h, iid);
	if (c->members & (1u << id))
		return true;
	/* Said once per acceptor until the next change: only for one an earlier configuration
	 * had (a spare that was never added is started first on purpose). */
	uint32_t count, latest = paxos_membership_latest(h)->id;
	const struct paxos_configuration *all = paxos_membership_history(h, &count);
	bool removed = false;
	for (uint32_t k = 0; k < count; k++)
		removed |= (all[k].members & (1u << id)) != 0;
	if (n->mship.refused_config != latest) {
		n->mship.refused_config = latest;
		n->mship.refused_voters = 0;
	}
	if (removed && !(n->mship.refused_voters & (1u << id))) {
		n->mship.refused_voters |= 1u << id;
		char text[128];
		node_members_text(c->members, text, sizeof(text));
		paxos_logf(PAXOS_LOG_WARNING,
			   "paxos: refused: votes of acceptor %u%s in instance %llu and on: "
			   "configuration %u (acceptors %s) does not include it, so they count in "
			   "no quorum",
			   id, n->partition_label, (unsigned long long)iid, c->id, text);
	}
	return false;
}

uint32_t paxos_node_acceptors_heard(const struct paxos_node *n, uint32_t within_ms)
{
	if (!n)
		return 0;
	paxos_time now = paxos_now(), window = (paxos_time)within_ms * 1000;
	uint32_t heard = 0;
	for (uint32_t i = 0; i < PAXOS_MAX_ACCEPTORS; i++)
		if (n->learner.acceptor_heard[i] && now - n->learner.acceptor_heard[i] <= window)
			heard |= 1u << i;
	return heard;
}

uint32_t paxos_node_acceptors_withholding(const struct paxos_node *n, uint32_t within_ms)
{
	return n ? paxos_node_acceptors_heard(n, within_ms) & n->learner.acceptor_withholds : 0;
}

const struct paxos_membership *paxos_node_membership(const struct paxos_node *n)
{
	return n ? n->membership : NULL;
}

bool node_membership_encode(struct paxos_node *n, struct paxos_value *history)
{
	/* The encoder copies the bytes at once: one buffer serves the answers and the pushes. */
	size_t len = paxos_membership_encode(n->membership, n->query.answer_buf,
					     sizeof(n->query.answer_buf));
	*history = (struct paxos_value){n->query.answer_buf, (uint32_t)len};
	return len != 0;
}

void node_membership_push(struct paxos_node *n, paxos_time now)
{
	/* Only with learning-acceptors no: an acceptor with a learner applies the log itself. */
	if (!n->membership || !n->proposer.core || !n->learner.core || n->cfg.learning_acceptors ||
	    n->failed)
		return;
	struct paxos_value history;
	if (!node_membership_encode(n, &history))
		return;
	n->query.push_last = now;
	struct paxos_message m = {.type = PAXOS_MSG_CONFIG_PUSH};
	m.u.config_push = (struct paxos_config_push){.proposer_id = n->role_id[PAXOS_ROLE_PROPOSER],
						     .settled = n->mship.settled,
						     .history = history};
	node_emit(&n->net.out[PAXOS_ROLE_PROPOSER], PAXOS_GROUP_ACCEPTORS, &m);
}
