/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the cores emit: messages packed per (sender role, group) into datagrams, sealed with
 * the key, held until what they report is durable (node_hold.c) or queued, and handed to the
 * transport together once the current round is done (node_flush_all). A leader's own accepts
 * go to its learner here as well.
 */
#include "parts.h"

#include "clock.h"

/* Sends the queued datagrams through the transport, counting what the network took. */
/* Sends the queued datagrams through the transport, counting what the network took. */
static void send_queued(struct paxos_node *n)
{
	struct node_tx *tx = &n->net.tx;
	node_send(n, tx->queue, tx->messages, tx->count, tx->free, &tx->free_count);
	tx->count = 0;
}

/* Queues the datagram o's encoder for g holds, or holds it until what it reports is durable
 * (node_hold.c); the encoder starts a new one. */
void node_seal(struct paxos_node *n, struct role_out *o, enum paxos_group g)
{
	struct paxos_encoder *e = &o->enc[g];
	if (e->count == 0)
		return;
	size_t len = e->len;
	if (n->net.auth) {
		/* The encoder left the room: payload_cap. */
		paxos_auth_seal(n->net.auth, e->buf, len);
		len += PAXOS_AUTH_TAG_BYTES;
	}
	struct node_needs needs = o->needs[g];
	o->needs[g] = (struct node_needs){0, 0};
	/* The serializer (in the acceptor's place) commits before it emits: its last commit. */
	if (n->acceptor.serializer && n->commits.ev && o->role == PAXOS_ROLE_ACCEPTOR)
		needs.commit = n->storage->ops->committed(n->storage);
	if (node_hold(n, g, e->buf, len, e->count, needs)) {
		paxos_encoder_init(e, e->buf, n->net.payload_cap, &o->header);
		return;
	}
	if (n->net.tx.count == TX_QUEUE)
		send_queued(n);
	uint32_t i = n->net.tx.count++;
	n->net.tx.queue[i] = (struct paxos_tx_datagram){.to = g, .data = e->buf, .len = len};
	n->net.tx.messages[i] = e->count;
	/* Free buffers: TX_QUEUE - tx_count before this one was queued, so at least one. */
	paxos_encoder_init(e, n->net.tx.free[--n->net.tx.free_count], n->net.payload_cap,
			   &o->header);
}

/* An own accept the learner could not take (its ready is being run): it takes it after. One
 * that finds no room is left to the learner's repeats, as a lost 2a is. */
static void own_accept_defer(struct paxos_node *n, const struct paxos_accept *a)
{
	struct node_proposer *np = &n->proposer;
	if (np->own_deferred_count < np->own_deferred_cap)
		np->own_deferred[np->own_deferred_count++] =
		    (struct own_accept){.iid = a->iid, .ballot = a->ballot};
}

/* An acceptor's vote, kept for its own learner when that does not hear the votes group. */
static void own_vote(struct paxos_node *n, const struct paxos_message *m)
{
	if (!n->learner.core || n->net.joined[PAXOS_GROUP_VOTES] ||
	    n->acceptor.own_vote_count == RX_MESSAGES)
		return;
	n->acceptor.own_votes[n->acceptor.own_vote_count++] =
	    (struct own_vote){m->u.accepted.iid, m->u.accepted.ballot, m->u.accepted.generation};
}

void node_emit(void *ctx, enum paxos_group to, const struct paxos_message *m)
{
	struct role_out *o = ctx;
	struct paxos_node *n = o->node;
	if (to == PAXOS_GROUP_VOTES) {
		if (o->role == PAXOS_ROLE_ACCEPTOR && m->type == PAXOS_MSG_ACCEPTED)
			own_vote(n, m);
		/* Wire version 5 has no votes group: its learners hear votes on theirs. */
		if (n->net.wire.spoken < PAXOS_WIRE_VERSION)
			to = PAXOS_GROUP_LEARNERS;
	}
	if (paxos_encoder_add(&o->enc[to], m) == PAXOS_E_FULL) {
		node_seal(n, o, to);
		if (paxos_encoder_add(&o->enc[to], m) != PAXOS_OK) {
			/* Cannot happen for values within max_value. */
			n->net.counters.send_errors++;
			return;
		}
	}
	/* An acceptor message reports the commit its ready names; a proposer message depends on
	 * the epoch its core is in as it is emitted. */
	struct node_needs *w = &o->needs[to];
	if (o->role == PAXOS_ROLE_ACCEPTOR && n->commits.emit_needs > w->commit)
		w->commit = n->commits.emit_needs;
	if (o->role == PAXOS_ROLE_PROPOSER) {
		uint32_t epoch = node_epoch_tag(n);
		if (epoch > w->epoch)
			w->epoch = epoch;
	}
	/* A leader's learner hears its own accepts here (node_proposer.c, own_accepts); what they
	 * close is run after the flush, not inside the proposer's step that emits them. */
	if (n->proposer.own_accepts && o->role == PAXOS_ROLE_PROPOSER &&
	    m->type == PAXOS_MSG_ACCEPT) {
		if (paxos_learner_step(n->learner.core, m, paxos_now(),
				       &n->net.out[PAXOS_ROLE_LEARNER].emitter) == PAXOS_OK) {
			n->proposer.own_learned = true;
			n->role_counters[PAXOS_ROLE_LEARNER].own_accepts_learned++;
		} else {
			own_accept_defer(n, &m->u.accept);
		}
	}
	node_schedule_flush(n);
}

void node_speak(struct paxos_node *n, uint32_t version, enum paxos_wire_speech speech)
{
	n->net.wire.spoken = version;
	n->net.wire.speech = speech;
	for (int r = 0; r < PAXOS_ROLE_COUNT; r++) {
		if (!n->hosted[r])
			continue;
		struct role_out *o = &n->net.out[r];
		o->header.version = version;
		o->header.speech = speech;
		for (int g = 0; g < PAXOS_GROUP_COUNT; g++) {
			/* What was packed leaves as it was; the next datagram speaks version. */
			node_seal(n, o, (enum paxos_group)g);
			paxos_encoder_init(&o->enc[g], o->enc[g].buf, n->net.payload_cap,
					   &o->header);
		}
	}
	node_schedule_flush(n);
}

/* The round's end: every encoder sealed, the round's datagrams sent together; the proposer's
 * new epoch stored (never from inside a core's step) when datagrams wait for it, which then
 * leave; while it cannot be stored they are dropped: to the others this proposer has crashed
 * (another takes over), and Paxos sends them again once a later round stores it. */
void node_flush_all(struct paxos_node *n)
{
	n->flush_scheduled = false;
	for (int r = 0; r < PAXOS_ROLE_COUNT; r++)
		for (int g = 0; g < PAXOS_GROUP_COUNT; g++)
			node_seal(n, &n->net.out[r], (enum paxos_group)g);
	send_queued(n);
	if (node_epoch_pending(n) && node_hold_awaits_epoch(n)) {
		if (node_epoch_store(n))
			node_hold_release(n);
		else
			node_hold_drop_epoch(n); /* logged once by the store */
	}
}
