/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * membership-alpha: configuration requests. A node started without a kept history asks the
 * acceptors (CONFIG_ASK) and takes the newest history a quorum of its newest configuration's
 * members vouches for (CONFIG_INFO); acceptors with a learner answer; proposers push their
 * history to acceptors without one. The history itself is node_membership.c's.
 */
#include "log_line.h"
#include "parts.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "config_fields.h"

/* How often an unsettled node asks, and how long it waits for an answer of a settled member
 * before it takes the unsettled ones (a cluster at its first start: nobody learned anything
 * yet, so a quorum of paxos.conf's first configuration saying so is the answer). */
#define ASK_EVERY_US 200000u
#define UNSETTLED_AFTER_US 1000000u
/* An acceptor answers at most this often: asks are cheap to send, answers are larger. */
#define ANSWER_EVERY_US 20000u
/* How often a proposer sends its history to acceptors without a learner (and at once when a
 * change is applied): an acceptor started or cut off meanwhile is this far behind at most. */
#define PUSH_EVERY_US 1000000u

void node_membership_free_answers(struct paxos_node *n)
{
	for (uint32_t a = 0; a < PAXOS_MAX_ACCEPTORS; a++) {
		paxos_membership_free(n->query.answers[a]);
		n->query.answers[a] = NULL;
	}
}

static void ask(struct paxos_node *n, paxos_time now)
{
	if (!n->query.ask_started)
		n->query.ask_started = now;
	n->query.ask_last = now;
	if (!n->query.ask_nonce)
		n->query.ask_nonce = (uint64_t)now | 1; /* echoed only */
	struct paxos_message m = {.type = PAXOS_MSG_CONFIG_ASK,
				  .u.config_ask = {n->query.ask_nonce}};
	node_emit(&n->net.out[PAXOS_ROLE_CLIENT], PAXOS_GROUP_ACCEPTORS, &m);
}

void node_membership_tick(struct paxos_node *n, paxos_time now)
{
	if (n->membership && (!n->query.push_last || now - n->query.push_last >= PUSH_EVERY_US))
		node_membership_push(n, now);
	if (!n->membership || (n->mship.settled && !n->mship.querying))
		return;
	if (!n->query.ask_last || now - n->query.ask_last >= ASK_EVERY_US)
		ask(n, now);
}

void node_membership_on_ask(struct paxos_node *n, const struct paxos_message *m, paxos_time now)
{
	/* An acceptor's history: the one its learner applies, or for one without a learner
	 * the one the proposers' pushes gave it (a prefix of the log's all the same). */
	if (!n->acceptor.core || !n->membership || n->failed)
		return;
	if (n->query.answer_last && now - n->query.answer_last < ANSWER_EVERY_US)
		return;
	struct paxos_value history;
	if (!node_membership_encode(n, &history))
		return;
	n->query.answer_last = now;
	struct paxos_message a = {.type = PAXOS_MSG_CONFIG_INFO};
	a.u.config_info = (struct paxos_config_info){.acceptor_id = n->role_id[PAXOS_ROLE_ACCEPTOR],
						     .nonce = m->u.config_ask.nonce,
						     .settled = n->mship.settled,
						     .history = history};
	node_emit(&n->net.out[PAXOS_ROLE_ACCEPTOR], PAXOS_GROUP_LEARNERS, &a);
}

void node_membership_on_push(struct paxos_node *n, const struct paxos_message *m)
{
	const struct paxos_config_push *c = &m->u.config_push;
	/* An acceptor without a learner only: a learner applies the log itself. */
	if (!n->acceptor.core || n->learner.core || !n->membership || n->failed)
		return;
	struct paxos_membership *h = paxos_membership_decode_history(
	    c->history.data, c->history.len, n->cfg.membership_alpha);
	if (!h || !paxos_membership_agrees(h, n->membership)) {
		if (n->query.answers_refused++ == 0)
			paxos_logf(PAXOS_LOG_WARNING,
				   "paxos: proposer %u sent a configuration history %s: ignored "
				   "(check its paxos.conf: membership-alpha, initial-members)",
				   c->proposer_id,
				   h ? "that disagrees with this node's" : "that cannot be one");
		n->net.counters.malformed_datagrams++;
		paxos_membership_free(h);
		return;
	}
	uint32_t id = n->role_id[PAXOS_ROLE_ACCEPTOR], bit = id < 32 ? 1u << id : 0;
	const struct paxos_configuration *c0 = paxos_membership_latest(n->membership);
	uint32_t before = c0->id;
	bool was_member = (c0->members & bit) != 0;
	int rc = paxos_membership_adopt(n->membership, h);
	paxos_membership_free(h);
	if (c->settled)
		n->mship.settled = true;
	const struct paxos_configuration *latest = paxos_membership_latest(n->membership);
	if (rc != 1 || latest->id == before)
		return;
	/* Kept before it is acted on, as a learner keeps what it applies. */
	if (node_membership_keep(n, 0) != PAXOS_OK) {
		node_fail(n, PAXOS_E_IO, "membership");
		return;
	}
	n->mship.kept = latest->id;
	node_membership_give_addresses(n);
	node_membership_count_latest(n);
	n->role_counters[PAXOS_ROLE_LEARNER].membership_changes += latest->id - before;
	char text[128], lead[128];
	node_members_text(latest->members, text, sizeof(text));
	node_members_text(latest->proposers & node_proposer_ids(n), lead, sizeof(lead));
	paxos_logf(PAXOS_LOG_INFO,
		   "paxos: acceptor %u%s: configuration %u (acceptors %s, proposers %s from "
		   "instance %llu), as proposer %u's learner applied it",
		   id, n->partition_label, latest->id, text, lead,
		   (unsigned long long)latest->first, c->proposer_id);
	if (was_member && !(latest->members & bit))
		node_membership_say_if_removed(n, false);
}

bool node_membership_votes(const struct paxos_node *n, const struct paxos_message *m)
{
	paxos_iid iid;
	if (m->type == PAXOS_MSG_PREPARE)
		iid = m->u.prepare.iid;
	else if (m->type == PAXOS_MSG_ACCEPT)
		iid = m->u.accept.iid;
	else
		return true;
	uint32_t id = n->role_id[PAXOS_ROLE_ACCEPTOR];
	if (id >= 32 || !paxos_membership_known(n->membership, iid))
		return true;
	return (paxos_membership_members(n->membership, iid) & (1u << id)) != 0;
}

/* Unicast: members an answer gives an address for that neither paxos.conf nor our history
 * has (an acceptor added with its address in the change) are asked too, or a quorum of a
 * configuration that includes them could never answer. Only unknown ones: an answer not
 * vouched for yet redirects no known member, and an address it names only gets asks. */
static void ask_the_unknown(struct paxos_node *n, const struct paxos_membership *h)
{
	if (!n->net.transport->ops->set_address)
		return;
	for (uint32_t id = 0; id < n->cfg.acceptors && id < PAXOS_MAX_ACCEPTORS; id++) {
		uint32_t addr, known_addr;
		uint16_t port, known_port;
		if (n->cfg.acceptor_address[id].port ||
		    paxos_membership_address(n->membership, id, &known_addr, &known_port) ||
		    !paxos_membership_address(h, id, &addr, &port))
			continue;
		struct paxos_endpoint e = {.addr = {.s_addr = addr}, .port = port};
		n->net.transport->ops->set_address(n->net.transport, PAXOS_ROLE_ACCEPTOR, id, &e);
	}
}

/* Takes the answer the adoption rule (paxos_membership_vouched) points at, if any: answers of
 * settled members only, and after UNSETTLED_AFTER_US every answer. */
/*
 * Where the learner of an acceptor that joined by a change starts: an acceptor no
 * configuration named before the one that added it never voted below that one's first
 * instance, and needs no copy of what was chosen there (docs/operating.md, "Changing the
 * cluster"); one not a member yet needs nothing the history it adopted already reflects. Fetching
 * the whole log from the others instead loads them for as long as it takes. Its recovery (a memory
 * store recovers at every start) changes nothing: it holds no decision of an earlier life to
 * restore. 0: from where it is (a member from the first configuration kept, or a node that
 * delivers to an application).
 */
static paxos_iid new_member_start(const struct paxos_node *n)
{
	uint32_t own = n->role_id[PAXOS_ROLE_ACCEPTOR];
	if (!n->acceptor.core || !n->learner.core || n->proposer.core || n->learner.app.deliver ||
	    n->learner.app.instance_done || own >= 32)
		return 0;
	uint32_t count;
	const struct paxos_configuration *c = paxos_membership_history(n->membership, &count);
	if (!c || count == 0)
		return 0;
	uint32_t k = count;
	while (k > 0 && (c[k - 1].members & (1u << own)))
		k--;
	for (uint32_t j = 0; j < k; j++)
		if (c[j].members & (1u << own))
			return 0; /* a member before: its learner goes on from where it is */
	if (k == 0)
		return 0; /* a member from the first configuration kept */
	if (k < count)
		return c[k].first; /* a member from the configuration that added it */
	return paxos_membership_applied(n->membership) + 1;
}

static void start_new_member(struct paxos_node *n)
{
	paxos_iid start = new_member_start(n);
	if (!start || start <= paxos_learner_next_iid(n->learner.core) ||
	    paxos_learner_step_skip_to(n->learner.core, start) != PAXOS_OK)
		return;
	paxos_logf(PAXOS_LOG_INFO,
		   "paxos: acceptor %u: its learner starts at instance %llu: a new member "
		   "needs no copy of the log below",
		   n->role_id[PAXOS_ROLE_ACCEPTOR], (unsigned long long)start);
	paxos_acceptor_decided(n->acceptor.core, start - 1);
	node_learner_run(n);
}

static void settle(struct paxos_node *n, paxos_time now)
{
	const struct paxos_membership *table[PAXOS_MAX_ACCEPTORS];
	bool all = now - n->query.ask_started >= UNSETTLED_AFTER_US;
	for (uint32_t a = 0; a < PAXOS_MAX_ACCEPTORS; a++)
		table[a] = n->query.answers[a] && (all || n->query.answer_settled[a])
			       ? n->query.answers[a]
			       : NULL;
	/* A node's own acceptor answers for itself (its history is the node's). */
	uint32_t own = n->role_id[PAXOS_ROLE_ACCEPTOR];
	if (n->acceptor.core && own < PAXOS_MAX_ACCEPTORS && (all || n->mship.settled))
		table[own] = n->membership;
	uint32_t id;
	int k = paxos_membership_vouched(table, PAXOS_MAX_ACCEPTORS, n->membership, &id);
	if (k < 0)
		return;
	uint32_t before = paxos_membership_latest(n->membership)->id;
	if (table[k] != n->membership && paxos_membership_adopt(n->membership, table[k]) == 1 &&
	    paxos_membership_latest(n->membership)->id != before) {
		if (node_membership_keep(n, 0) != PAXOS_OK) {
			node_fail(n, PAXOS_E_IO, "membership");
			return;
		}
		n->mship.kept = paxos_membership_latest(n->membership)->id;
		node_membership_give_addresses(n);
		node_membership_count_latest(n);
		const struct paxos_configuration *c = paxos_membership_latest(n->membership);
		char text[128], lead[128];
		node_members_text(c->members, text, sizeof(text));
		node_members_text(c->proposers & node_proposer_ids(n), lead, sizeof(lead));
		paxos_logf(
		    PAXOS_LOG_INFO,
		    "paxos: configuration %u (acceptors %s, proposers %s from instance %llu), "
		    "as a quorum of its acceptors answered: configuration %u was outdated",
		    c->id, text, lead, (unsigned long long)c->first, before);
		node_membership_say_if_removed(n, true);
	}
	if (!n->mship.settled) {
		n->mship.settled = true;
		start_new_member(n);
		node_membership_push(n, now);
		paxos_logf(
		    PAXOS_LOG_INFO,
		    "paxos: configuration %u is in force as far as a quorum of its acceptors "
		    "knows%s",
		    id, all ? " (answers of members that started from paxos.conf counted)" : "");
		if (!n->mship.querying)
			node_membership_free_answers(n);
	}
}

void node_membership_on_info(struct paxos_node *n, const struct paxos_message *m, paxos_time now)
{
	const struct paxos_config_info *c = &m->u.config_info;
	if (!n->membership || (n->mship.settled && !n->mship.querying) ||
	    c->acceptor_id >= PAXOS_MAX_ACCEPTORS || c->acceptor_id >= n->cfg.acceptors)
		return;
	struct paxos_membership *h = paxos_membership_decode_history(
	    c->history.data, c->history.len, n->cfg.membership_alpha);
	if (!h || !paxos_membership_agrees(h, n->membership)) {
		/* Not the log's history: a corrupt or forged answer, or a member of another
		 * cluster (another membership-alpha or first configuration). */
		if (n->query.answers_refused++ == 0)
			paxos_logf(
			    PAXOS_LOG_WARNING,
			    "paxos: acceptor %u answered with a configuration history %s: "
			    "ignored (check its paxos.conf: membership-alpha, initial-members)",
			    c->acceptor_id,
			    h ? "that disagrees with this node's" : "that cannot be one");
		n->net.counters.malformed_datagrams++;
		paxos_membership_free(h);
		return;
	}
	paxos_membership_free(n->query.answers[c->acceptor_id]);
	n->query.answers[c->acceptor_id] = h;
	n->query.answer_settled[c->acceptor_id] = c->settled;
	ask_the_unknown(n, h);
	settle(n, now);
}

int paxos_node_query_membership(struct paxos_node *n)
{
	if (!n)
		return PAXOS_E_INVALID;
	if (!n->cfg.membership_alpha) {
		node_set_error(n, "paxos_node_query_membership: needs membership-alpha");
		return PAXOS_E_INVALID;
	}
	int rc = node_membership_init(n);
	if (rc != PAXOS_OK)
		return rc;
	if (!n->net.joined[PAXOS_GROUP_LEARNERS]) {
		rc = n->net.transport->ops->join(n->net.transport, PAXOS_GROUP_LEARNERS, n->error,
						 sizeof(n->error));
		if (rc != PAXOS_OK)
			return rc;
		n->net.joined[PAXOS_GROUP_LEARNERS] = true;
	}
	paxos_time now = paxos_now();
	if (!n->mship.querying) {
		/* From now on: what the acceptors answer, not what this node had. */
		n->mship.querying = true;
		n->mship.settled = false;
		n->query.ask_started = 0;
	}
	if (!n->query.ask_last || now - n->query.ask_last >= ASK_EVERY_US / 4)
		ask(n, now);
	return PAXOS_OK;
}

bool paxos_node_membership_settled(const struct paxos_node *n)
{
	return n && n->mship.settled;
}
