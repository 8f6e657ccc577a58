/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node's datagrams in: what the transport delivers is decoded, screened and handed to the
 * cores, one storage transaction per read for an acceptor; the round's end (node_on_flush)
 * sends what they emitted (node_out.c) and runs what waits for it.
 */
#include "log_line.h"
#include "parts.h"
#include "snapshot.h"

#include "clock.h"

#include <stdio.h>
#include <string.h>

/* ---- sending ---- */

void node_on_flush(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct paxos_node *n = arg;
	if (n->learner.values_due) /* first: what they close is sent below */
		node_drain_values(n);
	node_durable_round_end(n); /* a lone acceptor's flush: its replies go out below */
	node_flush_all(n);
	if (n->proposer.own_learned) {
		n->proposer.own_learned = false;
		node_learner_run(n);
	}
	if (n->learner.learn_due) {
		/* After the acceptor's replies are out: learning is not on their path. */
		n->learner.learn_due = false;
		node_drain_learners(n);
	}
}

/* ---- receiving ---- */

/* What reaches the proposer's own group counts, not what its learner hears elsewhere: a
 * proposer whose promises and rejects cannot reach it leads no better for that. The
 * acceptors' periodic state comes here for this alone. */
static void proposers_heard(struct paxos_node *n, const struct paxos_message *m, paxos_time now)
{
	uint32_t acceptor;
	node_election_heard(n, m, now);
	if (!n->net.rx.away && paxos_msg_acceptor(m, &acceptor))
		n->proposer.acceptor_heard[acceptor] = now;
}

/* The messages the acceptors group has for others than the acceptor itself (and, with a
 * core that has not failed, the one-at-a-time path to it). */
static void to_acceptors(struct paxos_node *n, const struct paxos_message *m, paxos_time now)
{
	if (m->type == PAXOS_MSG_CONFIG_ASK)
		node_membership_on_ask(n, m, now);
	else if (m->type == PAXOS_MSG_SNAPSHOT_ASK)
		node_snapshot_on_ask(n, m);
	else if (m->type == PAXOS_MSG_CONFIG_PUSH)
		node_membership_on_push(n, m);
	else if (n->acceptor.core && !n->failed)
		node_acceptor_run(n, paxos_acceptor_step(n->acceptor.core, m, 1));
}

/* The election's share of the proposers group: true when m was for it alone. */
static bool to_election(struct paxos_node *n, const struct paxos_message *m, paxos_time now)
{
	if (!n->proposer.election)
		return false;
	if (m->type == PAXOS_MSG_HEARTBEAT || m->type == PAXOS_MSG_LEADER) {
		if (m->type == PAXOS_MSG_LEADER && !node_order_fresh(n, &m->u.leader))
			return true;
		paxos_election_handle(n->proposer.election, m, now);
		node_election_run(n);
		return true;
	}
	if (m->type == PAXOS_MSG_PROMISE) {
		/* A sign of life, then ours. */
		paxos_election_handle(n->proposer.election, m, now);
		node_election_run(n);
	}
	return false;
}

static void to_proposer(struct paxos_node *n, const struct paxos_message *m, paxos_time now)
{
	if (m->type == PAXOS_MSG_CHANGE) {
		node_admin_on_change(n, &m->u.change, now);
	} else if (n->proposer.core && m->type == PAXOS_MSG_CLIENT_VALUE) {
		/* Assigned once the whole read is in (node_on_readable): value batching. */
		paxos_proposer_queue_value(n->proposer.core, &m->u.client_value);
		n->proposer.assign_due = true;
	} else if (n->proposer.core) {
		paxos_proposer_handle(n->proposer.core, m, now,
				      &n->net.out[PAXOS_ROLE_PROPOSER].emitter);
	}
}

/* Who answers: at the address the node has for it, not a moved acceptor's old process
 * (paxos_node_acceptors_heard). */
static void acceptor_state_heard(struct paxos_node *n, const struct paxos_message *m,
				 paxos_time now)
{
	if (n->net.rx.away || m->u.acceptor_state.acceptor_id >= PAXOS_MAX_ACCEPTORS)
		return;
	uint32_t bit = 1u << m->u.acceptor_state.acceptor_id;
	n->learner.acceptor_heard[m->u.acceptor_state.acceptor_id] = now;
	n->learner.acceptor_withholds = m->u.acceptor_state.recovering
					    ? n->learner.acceptor_withholds | bit
					    : n->learner.acceptor_withholds & ~bit;
}

static void to_learners(struct paxos_node *n, const struct paxos_message *m, paxos_time now)
{
	switch (m->type) {
	case PAXOS_MSG_CONFIG_INFO:
		node_membership_on_info(n, m, now);
		return;
	case PAXOS_MSG_REFUSED:
		node_submit_refused(n, &m->u.refused, now);
		return;
	case PAXOS_MSG_SNAPSHOT_OFFER:
		node_snapshot_on_offer(n, m, now);
		return;
	case PAXOS_MSG_SNAPSHOT_CHUNK:
		node_snapshot_on_chunk(n, m, now);
		return;
	case PAXOS_MSG_ACCEPTOR_STATE:
		acceptor_state_heard(n, m, now);
		break;
	default:
		break;
	}
	if (n->learner.core)
		node_learn(n, m, now);
}

static void dispatch(struct paxos_node *n, enum paxos_group g, const struct paxos_message *m,
		     paxos_time now)
{
	if (g == PAXOS_GROUP_PROPOSERS)
		proposers_heard(n, m, now);
	/* The votes group carries the learners group's votes (accepted messages) alone. */
	if (g == PAXOS_GROUP_VOTES) {
		if (m->type != PAXOS_MSG_ACCEPTED)
			return;
		g = PAXOS_GROUP_LEARNERS;
	}
	if (paxos_msg_group(m->type) != g)
		return;
	if (m->type == PAXOS_MSG_ACCEPTED && n->proposer.core)
		node_spare_vote_heard(n, &m->u.accepted);
	switch (g) {
	case PAXOS_GROUP_ACCEPTORS:
		to_acceptors(n, m, now);
		break;
	case PAXOS_GROUP_PROPOSERS:
		if (!to_election(n, m, now))
			to_proposer(n, m, now);
		break;
	case PAXOS_GROUP_SUBMIT:
		to_proposer(n, m, now);
		break;
	case PAXOS_GROUP_LEARNERS:
		to_learners(n, m, now);
		break;
	default:
		break;
	}
}

/* The learner of a learning acceptor takes the batch's accepts (their values) once the
 * acceptor has stored them: an instance it closes then finds its value in the store, where
 * learning it first would store the value once more, fresh, and turn the acceptor's vote into
 * a reply carrying the whole value (accepted_final). */
static void learn_batch(struct paxos_node *n, size_t batched, paxos_time now)
{
	for (size_t i = 0; i < batched && !n->failed; i++)
		if (n->net.rx.msgs[i].type == PAXOS_MSG_ACCEPT)
			node_learn(n, &n->net.rx.msgs[i], now);
	node_learn_own_votes(n, now);
}

/* Everything the acceptor (or the serializer in its place) got in one read is one storage
 * transaction (group commit): one step, one ready, one write (per PAXOS_ACCEPTOR_MAX_BATCH
 * messages). When pipelined commits flush on the storage's thread, its replies are sealed
 * right away, so that they wait for this commit only, not the next read's. */
static void acceptor_batch(struct paxos_node *n, size_t *batched, paxos_time now)
{
	const struct paxos_emitter *out = &n->net.out[PAXOS_ROLE_ACCEPTOR].emitter;
	if (*batched && n->acceptor.core && !n->failed) {
		uint64_t deferred = n->role_counters[PAXOS_ROLE_ACCEPTOR].repeats_deferred;
		paxos_acceptor_set_age(n->acceptor.core, paxos_now() - n->acceptor.started);
		for (size_t done = 0; done < *batched && !n->failed;) {
			size_t k = *batched - done;
			if (k > PAXOS_ACCEPTOR_MAX_BATCH)
				k = PAXOS_ACCEPTOR_MAX_BATCH;
			node_acceptor_run(
			    n, paxos_acceptor_step(n->acceptor.core, n->net.rx.msgs + done, k));
			done += k;
		}
		node_note_deferred_repeats(n, deferred);
	} else if (*batched && n->acceptor.serializer && !n->failed) {
		int rc = paxos_serializer_handle_batch(n->acceptor.serializer, n->net.rx.msgs,
						       *batched, out);
		if (rc != PAXOS_OK)
			node_fail(n, rc, "serializer storage");
	}
	if (*batched && node_durable_threaded(n)) {
		for (int g = 0; g < PAXOS_GROUP_COUNT; g++)
			node_seal(n, &n->net.out[PAXOS_ROLE_ACCEPTOR], (enum paxos_group)g);
		node_durable_backlog(n);
	}
	if (*batched)
		node_durable_after_batch(n);
	if (n->acceptor.core && n->learner.core)
		learn_batch(n, *batched, now);
	*batched = 0;
}

static const char *const group_names[PAXOS_GROUP_COUNT] = {"acceptors", "proposers", "learners",
							   "submit", "votes"};

/* Counts a datagram that failed authentication and logs it, at most one line every
 * AUTH_LOG_INTERVAL_US saying how many failed since the line before. */
static void auth_failed(struct paxos_node *n, enum paxos_group g, const struct paxos_rx_datagram *d,
			paxos_time now)
{
	n->net.counters.auth_failures++;
	if (now < n->net.screen.auth_log_due)
		return;
	char from[64];
	n->net.transport->ops->sender_name(n->net.transport, d->from, from, sizeof(from));
	paxos_logf(PAXOS_LOG_WARNING,
		   "paxos: dropped %llu datagram(s) without a valid tag (forged, or another key), "
		   "the latest from %s to the %s group%s",
		   (unsigned long long)(n->net.counters.auth_failures -
					n->net.screen.auth_failures_logged),
		   from, group_names[g],
		   paxos_auth_needs_gcm_cpu(n->net.auth, d->data, d->len)
		       ? ": it is tagged with AES-256-GCM, which this CPU cannot check (no "
			 "AES-NI); set auth-mac chacha20-poly1305 on every node"
		       : "");
	n->net.screen.auth_failures_logged = n->net.counters.auth_failures;
	n->net.screen.auth_log_due = now + AUTH_LOG_INTERVAL_US;
}

/* A datagram of a wire version this node does not read: a node of a libpaxos release further
 * from this one than the one before. Counted as malformed, and said plainly, at most one line
 * every AUTH_LOG_INTERVAL_US: the two cannot work together. One of the versions it reads was
 * malformed, not foreign. */
static void other_version(struct paxos_node *n, const struct paxos_rx_datagram *d, size_t len,
			  paxos_time now)
{
	uint32_t version;
	if (!paxos_wire_version(d->data, len, &version) ||
	    (version >= PAXOS_WIRE_VERSION_MIN && version <= PAXOS_WIRE_VERSION) ||
	    now < n->net.screen.version_log_due)
		return;
	char from[64];
	n->net.transport->ops->sender_name(n->net.transport, d->from, from, sizeof(from));
	paxos_logf(PAXOS_LOG_WARNING,
		   "paxos: dropped a datagram of wire version %u from %s: this node speaks version "
		   "%u and the release before's %u; releases further apart cannot work together",
		   version, from, PAXOS_WIRE_VERSION, PAXOS_WIRE_VERSION_MIN);
	n->net.screen.version_log_due = now + AUTH_LOG_INTERVAL_US;
}

/* The payload of datagram d: its length without the tag, or false if it is to be dropped
 * (counted): cut short, or, with a key, without a valid tag. */
static bool datagram_payload(struct paxos_node *n, enum paxos_group g,
			     const struct paxos_rx_datagram *d, paxos_time now, size_t *len)
{
	*len = d->len;
	/* With a key, anything not proven to come from a key holder is an authentication
	 * failure; a cut datagram cannot be checked. */
	if (n->net.auth &&
	    (d->truncated || !paxos_auth_verify(n->net.auth, d->data, d->len, len))) {
		auth_failed(n, g, d, now);
		return false;
	}
	if (d->truncated) {
		n->net.counters.malformed_datagrams++;
		return false;
	}
	return true;
}

/* Datagram d of group g decoded into msgs (count of them, header h), its sender noted; false
 * if it is dropped (counted). */
static bool datagram_decode(struct paxos_node *n, enum paxos_group g, struct paxos_rx_datagram *d,
			    struct paxos_header *h, struct paxos_message *msgs, size_t *count,
			    paxos_time now)
{
	size_t len;
	n->net.counters.datagrams_received++;
	n->net.counters.bytes_received += d->len;
	if (!datagram_payload(n, g, d, now, &len))
		return false;
	if (paxos_decode(&n->net.rx.decoder, d->data, len, h, msgs, PAXOS_MAX_MESSAGES_PER_DATAGRAM,
			 count) != PAXOS_OK) {
		n->net.counters.malformed_datagrams++;
		other_version(n, d, len, now);
		return false;
	}
	n->net.counters.messages_received += *count;
	if (h->version != PAXOS_WIRE_VERSION)
		node_version_heard(n, h, d, msgs, *count, now);
	n->net.rx.header = *h;
	node_screen_origin(n, h, d, now);
	node_acceptor_heard_from(n, h, d->origin, now);
	return true;
}

/* The messages of the acceptors group answered beside the acceptor's batch: true if m was
 * one. */
static bool acceptors_aside(struct paxos_node *n, const struct paxos_message *m, paxos_time now)
{
	switch (m->type) {
	case PAXOS_MSG_CONFIG_ASK:
		node_membership_on_ask(n, m, now);
		return true;
	case PAXOS_MSG_CONFIG_PUSH:
		node_membership_on_push(n, m);
		return true;
	case PAXOS_MSG_SNAPSHOT_ASK:
		node_snapshot_on_ask(n, m);
		return true;
	default:
		return false;
	}
}

/* Keeps of one datagram's count messages at msgs only those for group g in the acceptor's
 * batch (rx.msgs, batched long); the datagrams stay valid until the next read, so the batch
 * may point into all of them. Returns the batch's new length. */
static size_t acceptor_take(struct paxos_node *n, enum paxos_group g, const struct paxos_header *h,
			    struct paxos_message *msgs, size_t count, size_t batched,
			    paxos_time now)
{
	for (size_t k = 0; k < count; k++) {
		if (paxos_msg_group(msgs[k].type) != g || !node_screen(n, h, &msgs[k]) ||
		    !node_trim_screen(n, h, &msgs[k]) || acceptors_aside(n, &msgs[k], now))
			continue;
		/* The leader's word on what was chosen is for the learner alone. */
		if (msgs[k].type == PAXOS_MSG_CHOSEN) {
			if (n->learner.core)
				node_learn(n, &msgs[k], now);
			continue;
		}
		/* A removed acceptor votes no more where its votes count nowhere; its learner
		 * still takes the value. */
		bool votes =
		    !n->acceptor.core || !n->membership || node_membership_votes(n, &msgs[k]);
		if (msgs[k].type == PAXOS_MSG_ACCEPT && n->learner.core &&
		    (!n->acceptor.core || !votes))
			node_learn(n, &msgs[k], now);
		if (!votes)
			continue;
		if (n->acceptor.spare && msgs[k].type == PAXOS_MSG_ACCEPT)
			n->acceptor.spare_wanted = msgs[k].u.accept.spares_rest; /* node_spares.c */
		if (n->acceptor.core || n->acceptor.serializer)
			n->net.rx.msgs[batched++] = msgs[k];
	}
	return batched;
}

/* A read is done: timers run next, the proposer assigns what it queued, a lazy learner
 * reads. */
static void read_done(struct paxos_node *n, enum paxos_group g, paxos_time now)
{
	n->net.rx.header.role = PAXOS_ROLE_COUNT; /* timers run next, not this datagram */
	n->net.rx.impostor = false;
	n->net.rx.away = false;
	node_version_choose(n, now);
	if (n->proposer.assign_due) {
		n->proposer.assign_due = false;
		paxos_proposer_assign(n->proposer.core, now,
				      &n->net.out[PAXOS_ROLE_PROPOSER].emitter);
	}
	bool learners = g == PAXOS_GROUP_LEARNERS || g == PAXOS_GROUP_VOTES;
	if (g == PAXOS_GROUP_ACCEPTORS)
		node_spare_read_done(n, now);
	if (learners && n->proposer.core)
		node_spares_judge(n);
	/* A learner reads the values its votes close (node_drain_values). */
	if (n->learner.values_lazy && learners) {
		n->learner.values_due = true;
		node_schedule_flush(n);
	}
	/* A lazy learner reads after the rounds the acceptor is woken for (see below), a leader's
	 * while its phase 2 is busy (node_learner_reads_now). */
	if (n->timers.learn && !learners && node_learner_reads_now(n)) {
		n->learner.learn_due = true;
		node_schedule_flush(n);
	}
}

/* What one read of group g brought (the transport's deliver): every message handled, one
 * storage transaction per read for an acceptor. */
void node_deliver(void *arg, enum paxos_group g, struct paxos_rx_datagram *d, size_t got)
{
	struct paxos_node *n = arg;
	if (n->proposer.lean && g != PAXOS_GROUP_PROPOSERS) {
		/* A lean follower (node_proposer.c) reads the proposers group only: anything else
		 * is stale or not its business, dropped undecoded. */
		n->net.counters.datagrams_received += got;
		return;
	}
	/* A serializer takes client values in batches too: one transaction per read. A learner
	 * takes the leader's accepts from the acceptors group (their values). */
	bool to_acceptor =
	    g == PAXOS_GROUP_ACCEPTORS || (g == PAXOS_GROUP_SUBMIT && n->acceptor.serializer);
	size_t batched = 0;
	paxos_time now = paxos_now();
	for (size_t i = 0; i < got && !n->failed; i++) {
		size_t count = 0;
		struct paxos_header h;
		struct paxos_message *msgs = n->net.rx.msgs + batched;
		if (!datagram_decode(n, g, &d[i], &h, msgs, &count, now))
			continue;
		if (!to_acceptor) {
			for (size_t k = 0; k < count; k++)
				if (node_screen(n, &h, &msgs[k]))
					dispatch(n, g, &msgs[k], now);
			continue;
		}
		batched = acceptor_take(n, g, &h, msgs, count, batched, now);
		if (batched >= PAXOS_ACCEPTOR_MAX_BATCH)
			acceptor_batch(n, &batched, now);
	}
	acceptor_batch(n, &batched, now);
	read_done(n, g, now);
}
