/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Snapshot transfer (InstallSnapshot in etcd/raft and canonical/raft). The application offers
 * its state as a snapshot covering instances 1..iid (paxos_node_offer_snapshot); a node whose
 * learner finds its next instance trimmed, and whose application installs snapshots
 * (paxos_node_on_install_snapshot), holds its learner there and fetches one from a peer:
 *
 * 1. It asks on the acceptors group (SNAPSHOT_ASK, server 0) for a snapshot covering at least
 *    the trimmed instances. The acceptors group reaches every node that hosts an acceptor,
 *    and on multicast every learner too; on unicast only the acceptors are reachable from any
 *    learner, so there the nodes that serve are those hosting an acceptor.
 * 2. Each node with such a snapshot answers on the learners group (SNAPSHOT_OFFER: its token,
 *    the snapshot's instance, length and checksum). The first offer wins; later ones are
 *    ignored.
 * 3. The asker asks that server (by its token) for the bytes from an offset; the server sends
 *    up to NODE_SNAPSHOT_WINDOW chunks of a datagram each (SNAPSHOT_CHUNK) to the learners
 *    group. The asker takes the chunks in order and asks for the next window once this one is
 *    in, or again from the first byte it lacks after NODE_SNAPSHOT_RETRY_US without one. A
 *    server silent for NODE_SNAPSHOT_GIVE_UP_US is dropped: the asker starts over at 1.
 * 4. With every byte in and the checksum right, the application installs it; the learner then
 *    goes on at iid + 1 from the log.
 *
 * The receiver takes at most snapshot-max-bytes (paxos.conf) and refuses a larger offer with
 * a line in the log. With auth-key-file every one of these datagrams is authenticated like
 * any other; without a key anyone can offer a snapshot, as anyone can send a value.
 */
#include "log_line.h"
#include "parts.h"
#include "snapshot.h"

#include <paxos/proposer.h>

#include "clock.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

struct node_snapshot {
	/* What this node serves (bytes NULL: none): the copy the application offered, or the
	 * bytes its provider lent at the last ask, and their checksum, taken again only when
	 * the provider names other bytes. */
	uint64_t token;
	paxos_iid iid;
	uint8_t *copy;
	const uint8_t *bytes;
	uint64_t len, checksum;
	paxos_snapshot_request_fn provide;
	void *provide_arg;
	/* The application's installer. */
	paxos_install_snapshot_fn install;
	void *install_arg;
	/* The transfer under way (want 0: none): the instance the snapshot must cover, the
	 * server taken (0: none yet) and its snapshot, the bytes in so far. */
	paxos_iid want;
	uint64_t nonce;
	uint64_t server;
	paxos_iid rx_iid;
	uint64_t total, rx_checksum, have;
	uint8_t *buf;
	uint32_t since_ask; /* chunks taken since the last ask */
	paxos_time asked_at, heard_at, logged_at;
	paxos_time refused_logged_at; /* when a snapshot too large was last said refused */
};

static struct node_snapshot *state(struct paxos_node *n)
{
	if (!n->snapshot)
		n->snapshot = calloc(1, sizeof(*n->snapshot));
	return n->snapshot;
}

static uint64_t random_u64(void)
{
	uint64_t x = 0;
	if (getrandom(&x, sizeof(x), 0) != (ssize_t)sizeof(x))
		x = (uint64_t)paxos_now() * 0x9e3779b97f4a7c15ull;
	return x ? x : 1;
}

/* ---- serving ---- */

int paxos_node_offer_snapshot(struct paxos_node *n, paxos_iid iid, const void *bytes, size_t len)
{
	if (iid == 0 || (!bytes && len)) {
		node_set_error(n, "paxos_node_offer_snapshot: %s",
			       iid == 0 ? "instances start at 1" : "no bytes");
		return PAXOS_E_INVALID;
	}
	if (len > n->cfg.snapshot_max_bytes) {
		node_set_error(n,
			       "paxos_node_offer_snapshot: a snapshot of %zu bytes is larger than "
			       "snapshot-max-bytes (%llu)",
			       len, (unsigned long long)n->cfg.snapshot_max_bytes);
		return PAXOS_E_TOO_BIG;
	}
	struct node_snapshot *s = state(n);
	uint8_t *copy = malloc(len ? len : 1);
	if (!s || !copy) {
		free(copy);
		node_set_error(n, "paxos_node_offer_snapshot: out of memory");
		return PAXOS_E_NOMEM;
	}
	if (len)
		memcpy(copy, bytes, len);
	free(s->copy);
	s->provide = NULL; /* the last of the two calls says how the node serves */
	s->copy = copy;
	s->bytes = copy;
	s->len = len;
	s->iid = iid;
	s->checksum = paxos_value_hash(copy, len);
	if (!s->token)
		s->token = random_u64();
	return PAXOS_OK;
}

int paxos_node_on_snapshot_request(struct paxos_node *n, paxos_snapshot_request_fn provide,
				   void *arg)
{
	struct node_snapshot *s = state(n);
	if (!s) {
		node_set_error(n, "paxos_node_on_snapshot_request: out of memory");
		return PAXOS_E_NOMEM;
	}
	free(s->copy);
	s->copy = NULL;
	s->bytes = NULL;
	s->len = s->iid = 0;
	s->provide = provide;
	s->provide_arg = arg;
	if (!s->token)
		s->token = random_u64();
	return PAXOS_OK;
}

/* The snapshot served now: the provider's newest, else the copy offered; false for none. */
static bool serving(struct paxos_node *n, struct node_snapshot *s)
{
	if (!s->provide)
		return s->bytes != NULL;
	paxos_iid iid = 0;
	const void *bytes = NULL;
	size_t len = 0;
	if (s->provide(s->provide_arg, &iid, &bytes, &len) != PAXOS_OK || iid == 0 ||
	    (!bytes && len))
		return false;
	if (len > n->cfg.snapshot_max_bytes) {
		paxos_logf(PAXOS_LOG_ERROR,
			   "paxos: a snapshot of %zu bytes (instances up to %llu) is larger than "
			   "snapshot-max-bytes (%llu): not served",
			   len, (unsigned long long)iid,
			   (unsigned long long)n->cfg.snapshot_max_bytes);
		return false;
	}
	if (bytes != s->bytes || len != s->len || iid != s->iid) {
		s->bytes = bytes ? bytes : (const uint8_t *)"";
		s->len = len;
		s->iid = iid;
		s->checksum = paxos_value_hash(s->bytes, len);
	}
	return true;
}

static void send_offer(struct paxos_node *n, struct node_snapshot *s, uint64_t nonce)
{
	struct paxos_message m = {.type = PAXOS_MSG_SNAPSHOT_OFFER};
	m.u.snapshot_offer = (struct paxos_snapshot_offer){.server = s->token,
							   .nonce = nonce,
							   .iid = s->iid,
							   .total = s->len,
							   .checksum = s->checksum};
	node_emit(&n->net.out[PAXOS_ROLE_CLIENT], PAXOS_GROUP_LEARNERS, &m);
}

/* Up to NODE_SNAPSHOT_WINDOW chunks from offset, each filling a datagram. */
static void send_chunks(struct paxos_node *n, struct node_snapshot *s, uint64_t nonce,
			uint64_t offset)
{
	uint32_t overhead = PAXOS_WIRE_OVERHEAD + PAXOS_SNAPSHOT_CHUNK_EXTRA;
	uint64_t room = n->net.payload_cap > overhead ? n->net.payload_cap - overhead : 1;
	for (uint32_t i = 0; i < NODE_SNAPSHOT_WINDOW && offset < s->len; i++) {
		uint64_t take = s->len - offset < room ? s->len - offset : room;
		struct paxos_message m = {.type = PAXOS_MSG_SNAPSHOT_CHUNK};
		m.u.snapshot_chunk =
		    (struct paxos_snapshot_chunk){.nonce = nonce,
						  .iid = s->iid,
						  .total = s->len,
						  .checksum = s->checksum,
						  .offset = offset,
						  .bytes = {s->bytes + offset, (uint32_t)take}};
		node_emit(&n->net.out[PAXOS_ROLE_CLIENT], PAXOS_GROUP_LEARNERS, &m);
		offset += take;
		if (offset == s->len)
			n->role_counters[PAXOS_ROLE_LEARNER].snapshots_sent++;
	}
}

void node_snapshot_on_ask(struct paxos_node *n, const struct paxos_message *m)
{
	const struct paxos_snapshot_ask *a = &m->u.snapshot_ask;
	struct node_snapshot *s = n->snapshot;
	if (!s || n->failed || !serving(n, s))
		return;
	if (a->server == 0) {
		if (s->iid >= a->iid && (!s->want || a->nonce != s->nonce))
			send_offer(n, s, a->nonce);
		return;
	}
	if (a->server != s->token)
		return;
	/* Asked for another snapshot than the one offered now: the chunks say which, and the
	 * asker starts over with it. */
	uint64_t offset = a->iid == s->iid && a->offset < s->len ? a->offset : 0;
	if (s->len == 0) {
		/* An empty snapshot is one empty chunk. */
		struct paxos_message c = {.type = PAXOS_MSG_SNAPSHOT_CHUNK};
		c.u.snapshot_chunk = (struct paxos_snapshot_chunk){
		    .nonce = a->nonce, .iid = s->iid, .checksum = s->checksum};
		node_emit(&n->net.out[PAXOS_ROLE_CLIENT], PAXOS_GROUP_LEARNERS, &c);
		n->role_counters[PAXOS_ROLE_LEARNER].snapshots_sent++;
		return;
	}
	send_chunks(n, s, a->nonce, offset);
}

/* ---- fetching ---- */

static void ask(struct paxos_node *n, struct node_snapshot *s, paxos_time now)
{
	struct paxos_message m = {.type = PAXOS_MSG_SNAPSHOT_ASK};
	m.u.snapshot_ask = (struct paxos_snapshot_ask){.nonce = s->nonce,
						       .iid = s->server ? s->rx_iid : s->want,
						       .server = s->server,
						       .offset = s->have};
	node_emit(&n->net.out[PAXOS_ROLE_CLIENT], PAXOS_GROUP_ACCEPTORS, &m);
	s->asked_at = now;
	s->since_ask = 0;
}

/* Drops the server and what came from it; asks anyone again, under a new nonce (what the old
 * server still sends is then ignored). */
static void start_over(struct paxos_node *n, struct node_snapshot *s, paxos_time now)
{
	free(s->buf);
	s->buf = NULL;
	s->server = 0;
	s->have = s->total = 0;
	s->nonce = random_u64();
	s->heard_at = now;
	ask(n, s, now);
}

static void node_snapshot_wanted(struct paxos_node *n, paxos_iid to)
{
	struct node_snapshot *s = state(n);
	if (!s || to <= s->want)
		return;
	if (s->want == 0)
		s->logged_at = paxos_now(); /* the learner's line said it */
	s->want = to;
	if (!s->server || s->rx_iid < to)
		start_over(n, s, paxos_now());
}

void node_snapshot_on_offer(struct paxos_node *n, const struct paxos_message *m, paxos_time now)
{
	const struct paxos_snapshot_offer *o = &m->u.snapshot_offer;
	struct node_snapshot *s = n->snapshot;
	if (!s || !s->want || s->server || o->nonce != s->nonce || o->iid < s->want)
		return;
	if (o->total > n->cfg.snapshot_max_bytes) {
		n->role_counters[PAXOS_ROLE_LEARNER].snapshots_refused++;
		if (s->refused_logged_at && now >= s->refused_logged_at &&
		    now - s->refused_logged_at < NODE_SNAPSHOT_LOG_US)
			return; /* offered again at every ask: said every few seconds */
		s->refused_logged_at = now;
		paxos_logf(PAXOS_LOG_ERROR,
			   "paxos: learner%s: refused a snapshot of %llu bytes (instances up to "
			   "%llu): larger than snapshot-max-bytes (%llu); raise it in paxos.conf",
			   n->partition_label, (unsigned long long)o->total,
			   (unsigned long long)o->iid,
			   (unsigned long long)n->cfg.snapshot_max_bytes);
		return;
	}
	uint8_t *buf = malloc(o->total ? o->total : 1);
	if (!buf) {
		paxos_logf(PAXOS_LOG_ERROR,
			   "paxos: learner%s: no memory for a snapshot of %llu bytes",
			   n->partition_label, (unsigned long long)o->total);
		return;
	}
	free(s->buf);
	s->buf = buf;
	s->server = o->server;
	s->rx_iid = o->iid;
	s->total = o->total;
	s->rx_checksum = o->checksum;
	s->have = 0;
	s->heard_at = now;
	ask(n, s, now);
}

/* Every byte is in: checked, handed to the application, and the learner goes on after it. */
static void install_fetched(struct paxos_node *n, struct node_snapshot *s, paxos_time now)
{
	struct paxos_counters *c = &n->role_counters[PAXOS_ROLE_LEARNER];
	paxos_iid held_to;
	if (!paxos_learner_held(n->learner.core, &held_to) || s->rx_iid < held_to) {
		/* No longer wanted (a new log), or the trim point passed it meanwhile. */
		start_over(n, s, now);
		return;
	}
	if (paxos_value_hash(s->buf, s->total) != s->rx_checksum) {
		c->snapshots_refused++;
		paxos_logf(PAXOS_LOG_WARNING,
			   "paxos: learner%s: a snapshot of instances up to %llu arrived damaged "
			   "(checksum): fetching it again",
			   n->partition_label, (unsigned long long)s->rx_iid);
		start_over(n, s, now);
		return;
	}
	int rc = s->install(s->install_arg, s->rx_iid, s->buf, s->total);
	if (rc != PAXOS_OK) {
		c->snapshots_refused++;
		paxos_logf(PAXOS_LOG_WARNING,
			   "paxos: learner%s: the application refused the snapshot of instances up "
			   "to %llu (%s): asking again",
			   n->partition_label, (unsigned long long)s->rx_iid, paxos_strerror(rc));
		start_over(n, s, now);
		return;
	}
	c->snapshots_installed++;
	paxos_iid iid = s->rx_iid;
	paxos_logf(PAXOS_LOG_INFO,
		   "paxos: learner%s: installed a snapshot of %llu bytes covering instances up to "
		   "%llu; learning from %llu",
		   n->partition_label, (unsigned long long)s->total, (unsigned long long)iid,
		   (unsigned long long)iid + 1);
	if (n->membership)
		paxos_logf(
		    PAXOS_LOG_WARNING,
		    "paxos: learner%s: membership changes chosen up to instance %llu, if any, "
		    "are not known here: configuration %u is taken to govern from instance "
		    "%llu; keep the history in a directory (paxos_node_keep_membership)",
		    n->partition_label, (unsigned long long)iid,
		    paxos_membership_latest(n->membership)->id, (unsigned long long)iid + 1);
	free(s->buf);
	s->buf = NULL;
	s->want = s->server = 0;
	s->have = s->total = 0;
	/* The proposer's window goes past the snapshot too, as past trimmed instances. */
	if (n->proposer.core)
		paxos_proposer_delivered(n->proposer.core, iid, NULL, now,
					 &n->net.out[PAXOS_ROLE_PROPOSER].emitter);
	if (paxos_learner_step_skip_to(n->learner.core, iid + 1) == PAXOS_OK)
		node_learner_run(n);
}

void node_snapshot_on_chunk(struct paxos_node *n, const struct paxos_message *m, paxos_time now)
{
	const struct paxos_snapshot_chunk *k = &m->u.snapshot_chunk;
	struct node_snapshot *s = n->snapshot;
	if (!s || !s->server || k->nonce != s->nonce || !n->learner.core)
		return;
	if (k->iid != s->rx_iid || k->total != s->total || k->checksum != s->rx_checksum) {
		/* The server offers another snapshot now: the first one offered wins again. */
		s->server = 0;
		start_over(n, s, now);
		return;
	}
	if (k->offset != s->have)
		return; /* a duplicate, or one after a lost chunk: asked for again */
	if (k->bytes.len)
		memcpy(s->buf + s->have, k->bytes.data, k->bytes.len);
	s->have += k->bytes.len;
	s->heard_at = now;
	if (s->have == s->total) {
		install_fetched(n, s, now);
		return;
	}
	if (++s->since_ask >= NODE_SNAPSHOT_WINDOW)
		ask(n, s, now);
}

void node_snapshot_tick(struct paxos_node *n, paxos_time now)
{
	struct node_snapshot *s = n->snapshot;
	paxos_iid held_to;
	if (!s || !n->learner.core)
		return;
	if (!s->want) {
		/* The learner's trimmed event said it holds: ask from this tick on. */
		if (paxos_learner_held(n->learner.core, &held_to))
			node_snapshot_wanted(n, held_to);
		return;
	}
	if (!paxos_learner_held(n->learner.core, &held_to)) {
		/* A new log ended the hold: nothing to install. */
		free(s->buf);
		s->buf = NULL;
		s->want = s->server = 0;
		return;
	}
	if (held_to > s->want) {
		node_snapshot_wanted(n, held_to); /* trimmed further meanwhile */
		return;
	}
	if (now < s->asked_at || now < s->heard_at) {
		s->asked_at = s->heard_at = now; /* the clock went back */
		return;
	}
	if (!s->server && now - s->logged_at >= NODE_SNAPSHOT_LOG_US) {
		s->logged_at = now;
		paxos_logf(PAXOS_LOG_WARNING,
			   "paxos: learner%s: still waiting for a snapshot covering instance %llu: "
			   "no node offered one (only nodes whose application called "
			   "paxos_node_offer_snapshot serve them; on unicast, nodes hosting an "
			   "acceptor)",
			   n->partition_label, (unsigned long long)s->want);
	}
	if (s->server && now - s->heard_at >= NODE_SNAPSHOT_GIVE_UP_US) {
		paxos_logf(PAXOS_LOG_WARNING,
			   "paxos: learner%s: the snapshot's server went silent at byte %llu of "
			   "%llu: asking the others",
			   n->partition_label, (unsigned long long)s->have,
			   (unsigned long long)s->total);
		start_over(n, s, now);
		return;
	}
	if (now - s->asked_at >= NODE_SNAPSHOT_RETRY_US)
		ask(n, s, now);
}

void node_snapshot_free(struct paxos_node *n)
{
	if (!n->snapshot)
		return;
	free(n->snapshot->copy);
	free(n->snapshot->buf);
	free(n->snapshot);
	n->snapshot = NULL;
}

int paxos_node_on_install_snapshot(struct paxos_node *n, paxos_install_snapshot_fn install,
				   void *arg)
{
	if (n->learner.core) {
		node_set_error(n,
			       "paxos_node_on_install_snapshot: the learner has started already");
		return PAXOS_E_INVALID;
	}
	struct node_snapshot *s = state(n);
	if (!s) {
		node_set_error(n, "paxos_node_on_install_snapshot: out of memory");
		return PAXOS_E_NOMEM;
	}
	s->install = install;
	s->install_arg = arg;
	n->learner.hold_trimmed = install != NULL;
	return PAXOS_OK;
}
