/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Spare acceptors (spare-acceptors). A quorum of acceptors decides; with three of them every
 * accept still wakes all three, and each wake-up costs the leader's send about what a whole
 * datagram costs (the kernel wakes the receivers of a local datagram in the sender's time) and
 * the woken acceptor about what the serializer pays per value. So the acceptors of the lowest
 * ids that make a quorum read the leader's messages at once, and the others, the spares, read
 * them once every SPARE_READ_MS while the leader says they may (paxos_accept.spares_rest).
 *
 * The leader says so while each of the quorum's acceptors voted for every instance its learner
 * knows chosen, the last one included. When one falls behind (it crashed, it is slow, its
 * vote was lost), an instance gets chosen without its vote: with a spare's, read late, or not
 * at all yet. The leader sees that at its next read of the votes and says so in its next
 * accept, which the spares read within SPARE_READ_MS and then read at once again. A spare
 * also reads at once while idle (SPARE_IDLE_READS) and while busy (SPARE_BUSY_BYTES). Nothing
 * here touches what is chosen: a spare votes as any acceptor does, only later.
 */
#include "parts.h"

#include <event2/event.h>

/* A resting spare reads the acceptors group this often (ms). */
#define SPARE_READ_MS 1
/* Reads of one batch each per SPARE_READ_MS at most: what a millisecond of the leader's
 * accepts at full speed fills, with room to spare; the socket buffer holds the rest. */
#define SPARE_READS 64
/* Reads in a row that find nothing before a resting spare reads at once again (idle). */
#define SPARE_IDLE_READS 10
/* Bytes a millisecond above which a spare does not rest. Each of its reads would then store
 * and learn a burst of values while holding a CPU, and the quorum's two acceptors would have no
 * third to make up for the one that waits for a CPU; and at that rate an acceptor that reads at
 * once reads several datagrams per wake-up anyway, so resting saves little. It is calm again
 * below SPARE_CALM_BYTES: between the two it stays as it was, and each measure spans
 * SPARE_MEASURE_MS, so that a short lull in a busy stream does not make it rest. */
#define SPARE_BUSY_BYTES (128u * 1024u)
#define SPARE_CALM_BYTES (64u * 1024u)
#define SPARE_MEASURE_MS 10u

/* The acceptors that make a quorum of a fixed set of n, ids 0..n-1. */
static uint32_t quorum_of(uint32_t n)
{
	return n / 2 + 1;
}

/* Whether this configuration has spares at all: multicast (one datagram reaches all the
 * acceptors; unicast sends each its own), one partition, a fixed acceptor set whose ids are
 * 0..acceptors-1 (membership changes move the quorum), and an acceptor beyond the quorum. */
static bool spares_configured(const struct paxos_config *cfg)
{
	return cfg->spare_acceptors && cfg->transport == PAXOS_TRANSPORT_MULTICAST &&
	       cfg->partitions == 1 && cfg->membership_alpha == 0 && cfg->acceptors >= 3;
}

void node_spare_init(struct paxos_node *n, uint32_t acceptor_id)
{
	n->acceptor.spare =
	    spares_configured(&n->cfg) && acceptor_id >= quorum_of(n->cfg.acceptors);
}

/* Reads the group the acceptor takes its messages from lazily while a pipelined commit waits
 * (node_durable.c) or while it rests as a spare, else at every wake-up. The transport does
 * nothing when the group is read that way already. */
void node_acceptor_reading(struct paxos_node *n)
{
	enum paxos_group g = n->acceptor.serializer ? PAXOS_GROUP_SUBMIT : PAXOS_GROUP_ACCEPTORS;
	n->net.transport->ops->set_lazy(n->net.transport, g,
					n->commits.lazy || n->acceptor.spare_resting);
}

static void on_spare_read(evutil_socket_t fd, short what, void *arg);

/* Starts or ends resting: the timer's reads, or the loop's at every wake-up. */
static bool spare_rest(struct paxos_node *n, bool rest)
{
	if (!n->timers.spare &&
	    !(n->timers.spare = event_new(n->base, -1, EV_PERSIST, on_spare_read, n)))
		return false; /* reads at once, as before */
	/* Deleted, not freed: this may run inside the timer's own read. */
	struct timeval tv = {0, SPARE_READ_MS * 1000};
	if (rest ? event_add(n->timers.spare, &tv) != 0 : event_del(n->timers.spare) != 0)
		return false;
	n->acceptor.spare_resting = rest;
	n->acceptor.spare_idle_reads = 0;
	node_acceptor_reading(n);
	return true;
}

/* A resting spare's read. SPARE_IDLE_READS of them in a row that find nothing end its rest:
 * an idle cluster should not wake it every millisecond. The next datagram wakes it, and the
 * leader's word it carries lets it rest again. */
static void on_spare_read(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct paxos_node *n = arg;
	size_t batch = n->net.transport->ops->batch(n->net.transport), got = 0;
	for (int i = 0; i < SPARE_READS && !n->failed && n->acceptor.spare_resting; i++) {
		size_t read = n->net.transport->ops->read(n->net.transport, PAXOS_GROUP_ACCEPTORS);
		got += read;
		if (read < batch)
			break;
	}
	if (!n->acceptor.spare_resting || n->failed)
		return;
	if (got > 0)
		n->acceptor.spare_idle_reads = 0;
	else if (++n->acceptor.spare_idle_reads >= SPARE_IDLE_READS)
		spare_rest(n, false);
}

/* Whether the spare is busy (SPARE_BUSY_BYTES), measured over the milliseconds since it last
 * looked, at least SPARE_MEASURE_MS. */
static void spare_measure(struct node_acceptor *a, uint64_t received, paxos_time now)
{
	paxos_time elapsed = now - a->spare_since;
	if (elapsed < SPARE_MEASURE_MS * 1000u)
		return;
	uint64_t per_ms = (received - a->spare_bytes) * 1000u / elapsed;
	if (per_ms > SPARE_BUSY_BYTES)
		a->spare_busy = true;
	else if (per_ms < SPARE_CALM_BYTES)
		a->spare_busy = false;
	a->spare_since = now;
	a->spare_bytes = received;
}

void node_spare_read_done(struct paxos_node *n, paxos_time now)
{
	struct node_acceptor *a = &n->acceptor;
	if (!a->spare || n->failed)
		return;
	spare_measure(a, n->net.counters.bytes_received, now);
	/* Not beside a proposer or an application: they would hear the values late too. */
	bool rest =
	    a->spare_wanted && !a->spare_busy && !n->proposer.core && !n->learner.app.deliver;
	if (rest == a->spare_resting || !spare_rest(n, rest))
		return;
	if (rest)
		n->role_counters[PAXOS_ROLE_ACCEPTOR].spare_rests++;
	else if (!a->spare_wanted) /* the leader's word, not the spare's own load */
		n->role_counters[PAXOS_ROLE_ACCEPTOR].spare_returns++;
}

void node_spare_vote_heard(struct paxos_node *n, const struct paxos_accepted *v)
{
	if (v->acceptor_id < PAXOS_MAX_ACCEPTORS && v->iid > n->proposer.voted[v->acceptor_id])
		n->proposer.voted[v->acceptor_id] = v->iid;
}

void node_spares_judge(struct paxos_node *n)
{
	if (!n->proposer.core || !n->learner.core || !spares_configured(&n->cfg))
		return;
	paxos_iid closed = paxos_learner_next_iid(n->learner.core) - 1;
	/* A busy phase 2 wants the fastest quorum of all the acceptors, not a fixed one. */
	bool rest = closed > 0 && !paxos_proposer_votes_wanted(n->proposer.core);
	for (uint32_t a = 0; a < quorum_of(n->cfg.acceptors); a++) {
		/* A vote beyond the learner's window is no acceptor's (a forged one would let the
		 * spares rest for good): forgotten, until the acceptor votes again. */
		paxos_iid *voted = &n->proposer.voted[a];
		if (*voted > closed && *voted - closed > n->cfg.learner_window)
			*voted = 0;
		rest = rest && *voted >= closed;
	}
	paxos_proposer_spares_rest(n->proposer.core, rest);
}
