/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UDP unicast transport (paxos/transport.h), for networks that do not route multicast.
 * Every acceptor and proposer receives on its address from paxos.conf. Learners, whose number
 * is not fixed, receive on a port of their own and subscribe to every acceptor (the only role
 * that sends to the learners group) with a lease they renew while they run; an acceptor sends
 * learner traffic to each live subscriber. A learner hosted without an acceptor subscribes to
 * every proposer too, which sends its acceptors group (the accepts carry the values) to its
 * subscribers as well. Sending to a group is one datagram per member.
 *
 * One byte in front of each datagram says what it is: a role group (a proposer's socket gets
 * both the proposers and the submit group) or a subscription. The node's payload, tag
 * included, follows untouched; subscriptions carry a tag of their own when the cluster has a
 * key, so that no one without it can make acceptors send to an address of his choosing.
 *
 * A subscription is bound to its sender's address by a cookie, as TCP's SYN cookies are: a
 * member answers a subscription without a valid cookie with a challenge to the address it
 * came from, holding the cookie (a keyed hash of that address and the time, under a secret
 * of the member's), and takes a subscription only with a cookie made for its source address
 * in the last two periods. A subscription replayed from another port, or sent with someone
 * else's source address, thus takes no slot and brings no learner traffic: the challenge goes
 * to that address, one datagram no larger than the request. Confirmations carry a fresh
 * cookie, so renewals need no further round trip. One source address holds at most
 * MAX_PER_SOURCE of the MAX_SUBSCRIBERS slots.
 */
#include "unicast_state.h"

/* The votes go to the subscribed learners that count them, as the learners group: they arrive
 * as its. */
static const uint8_t group_frame[PAXOS_GROUP_COUNT] = {PAXOS_GROUP_ACCEPTORS, PAXOS_GROUP_PROPOSERS,
						       PAXOS_GROUP_LEARNERS, PAXOS_GROUP_SUBMIT,
						       PAXOS_GROUP_LEARNERS};

static struct unicast *of(const struct paxos_transport *t)
{
	return (struct unicast *)t;
}

static void to_sockaddr(const struct paxos_endpoint *e, struct sockaddr_in *out)
{
	memset(out, 0, sizeof(*out));
	out->sin_family = AF_INET;
	out->sin_addr = e->addr;
	out->sin_port = htons(e->port);
}

/* ---- receiving ---- */

/* Hands d[0..n) of group g to the node, unless this node does not receive g. */
static void deliver_run(struct unicast *u, enum paxos_group g, struct paxos_rx_datagram *d,
			size_t n)
{
	if (n && u->joined[g])
		u->deliver(u->arg, g, d, n);
}

static size_t read_socket(struct unicast *u, enum socket_kind k)
{
	if (u->fd[k] < 0)
		return 0;
	size_t got = udp_rx_read(&u->in, u->fd[k]);
	/* Runs of datagrams for one group go to the node together (an acceptor's group commit);
	 * control datagrams are answered here. An unknown first byte makes an empty datagram the
	 * node counts as malformed. */
	size_t run = 0;
	enum paxos_group run_group = k == SOCKET_ACCEPTOR   ? PAXOS_GROUP_ACCEPTORS
				     : k == SOCKET_PROPOSER ? PAXOS_GROUP_PROPOSERS
							    : PAXOS_GROUP_LEARNERS;
	for (size_t i = 0; i < got; i++) {
		struct paxos_rx_datagram d = udp_rx_datagram(&u->in, i);
		uint8_t frame = d.len ? d.data[0] : 0xff;
		if (frame >= FRAME_SUBSCRIBE && frame <= FRAME_CHALLENGE) {
			if (!d.truncated)
				unicast_control(u, k, d.data, d.len, &u->in.from[i]);
			continue;
		}
		enum paxos_group g =
		    frame < PAXOS_GROUP_COUNT ? (enum paxos_group)frame : run_group;
		if (g != run_group) {
			deliver_run(u, run_group, u->rx, run);
			run = 0;
			run_group = g;
		}
		bool framed = frame < PAXOS_GROUP_COUNT;
		d.data += framed ? 1 : 0;
		d.len = framed ? d.len - 1 : 0;
		u->rx[run++] = d;
	}
	deliver_run(u, run_group, u->rx, run);
	return got;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct unicast *u = arg;
	for (int k = 0; k < SOCKET_COUNT; k++)
		if (u->fd[k] == fd) {
			read_socket(u, (enum socket_kind)k);
			return;
		}
}

/* ---- sockets ---- */

static int open_socket(struct unicast *u, enum socket_kind k, const struct sockaddr_in *at,
		       const char *who, char *err, size_t errlen)
{
	int fd = paxos_transport_unicast_socket(&u->cfg, at, err, errlen);
	if (fd < 0) {
		char what[256];
		snprintf(what, sizeof(what), "%s: %s", who, err);
		snprintf(err, errlen, "%s", what);
		return PAXOS_E_IO;
	}
	u->fd[k] = fd;
	u->ev[k] = event_new(u->base, fd, EV_READ | EV_PERSIST, on_readable, u);
	bool lazy = k == SOCKET_LEARNER && u->lazy_learners;
	if (!u->ev[k] || (!lazy && event_add(u->ev[k], NULL) != 0)) {
		snprintf(err, errlen, "cannot add a socket to the event loop");
		return PAXOS_E_NOMEM;
	}
	return PAXOS_OK;
}

static int uc_host(struct paxos_transport *t, enum paxos_role role, uint32_t id, char *err,
		   size_t errlen)
{
	struct unicast *u = of(t);
	char who[64];
	if (role == PAXOS_ROLE_ACCEPTOR && id < u->cfg.acceptors && u->acceptors[id].sin_port) {
		if (u->fd[SOCKET_ACCEPTOR] >= 0)
			return PAXOS_OK;
		u->acceptor_id = id;
		u->alone_since_us = now_us();
		snprintf(who, sizeof(who), "acceptor %u", id);
		return open_socket(u, SOCKET_ACCEPTOR, &u->acceptors[id], who, err, errlen);
	}
	if (role == PAXOS_ROLE_PROPOSER && id < u->cfg.proposers) {
		if (u->fd[SOCKET_PROPOSER] >= 0)
			return PAXOS_OK;
		u->proposer_id = id;
		snprintf(who, sizeof(who), "proposer %u", id);
		return open_socket(u, SOCKET_PROPOSER, &u->proposers[id], who, err, errlen);
	}
	snprintf(err, errlen, "unicast: no address for %s %u in the configuration",
		 role == PAXOS_ROLE_ACCEPTOR ? "acceptor" : "proposer", id);
	return PAXOS_E_CONFIG;
}

static int uc_join(struct paxos_transport *t, enum paxos_group g, char *err, size_t errlen)
{
	struct unicast *u = of(t);
	if (u->joined[g])
		return PAXOS_OK;
	if (g == PAXOS_GROUP_ACCEPTORS && u->fd[SOCKET_ACCEPTOR] < 0 &&
	    u->fd[SOCKET_LEARNER] >= 0) {
		/* A learner's: the proposers send their acceptors group to it as well. */
		u->listen_accepts = true;
		unicast_subscribe_accepts(u);
		u->joined[g] = true;
		return PAXOS_OK;
	}
	if ((g == PAXOS_GROUP_ACCEPTORS && u->fd[SOCKET_ACCEPTOR] < 0) ||
	    ((g == PAXOS_GROUP_PROPOSERS || g == PAXOS_GROUP_SUBMIT) &&
	     u->fd[SOCKET_PROPOSER] < 0)) {
		snprintf(err, errlen,
			 "unicast: only a hosted %s (or a learner) receives the %s group",
			 g == PAXOS_GROUP_ACCEPTORS ? "acceptor" : "proposer",
			 g == PAXOS_GROUP_ACCEPTORS ? "acceptors"
			 : g == PAXOS_GROUP_SUBMIT  ? "submit"
						    : "proposers");
		return PAXOS_E_INVALID;
	}
	if (g == PAXOS_GROUP_VOTES) {
		/* The votes come framed as the learners group, to the subscribers that count
		 * them: say so to the acceptors at once. */
		u->joined[g] = true;
		unicast_subscribe_votes(u);
		return PAXOS_OK;
	}
	if (g == PAXOS_GROUP_LEARNERS) {
		/* Any local port: acceptors answer to where the subscription came from. */
		struct sockaddr_in any = {.sin_family = AF_INET};
		int rc = open_socket(u, SOCKET_LEARNER, &any, "learner", err, errlen);
		if (rc != PAXOS_OK)
			return rc;
		rc = unicast_subscribe(u, err, errlen);
		if (rc != PAXOS_OK)
			return rc;
	}
	u->joined[g] = true;
	return PAXOS_OK;
}

static int uc_set_lazy(struct paxos_transport *t, enum paxos_group g, bool lazy)
{
	struct unicast *u = of(t);
	if (g != PAXOS_GROUP_LEARNERS || u->lazy_learners == lazy)
		return PAXOS_OK;
	u->lazy_learners = lazy;
	struct event *ev = u->ev[SOCKET_LEARNER];
	if (!ev)
		return PAXOS_OK;
	if (lazy)
		return event_del(ev) == 0 ? PAXOS_OK : PAXOS_E_IO;
	return event_add(ev, NULL) == 0 ? PAXOS_OK : PAXOS_E_NOMEM;
}

static size_t uc_read(struct paxos_transport *t, enum paxos_group g)
{
	struct unicast *u = of(t);
	return read_socket(u, g == PAXOS_GROUP_ACCEPTORS ? SOCKET_ACCEPTOR
			      : g == PAXOS_GROUP_LEARNERS || g == PAXOS_GROUP_VOTES
				  ? SOCKET_LEARNER
				  : SOCKET_PROPOSER);
}

static size_t uc_batch(const struct paxos_transport *t)
{
	(void)t;
	return UDP_READ_BATCH;
}

/* ---- sending ---- */

/* Where group g goes: its members' addresses, or for the learners the live subscribers. */
static size_t destinations(struct unicast *u, enum paxos_group g, const struct sockaddr_in **list,
			   size_t *stride)
{
	*stride = sizeof(struct sockaddr_in);
	switch (g) {
	case PAXOS_GROUP_ACCEPTORS:
		*list = u->acceptors;
		return u->cfg.acceptors;
	case PAXOS_GROUP_PROPOSERS:
	case PAXOS_GROUP_SUBMIT:
		*list = u->proposers;
		return u->cfg.proposers;
	case PAXOS_GROUP_LEARNERS:
	default:
		*list = &u->subscribers[0].addr;
		*stride = sizeof(struct subscriber);
		return u->subscriber_count;
	}
}

/* An acceptor that sends learner traffic to no one for a lease says so, once. */
static void note_alone(struct unicast *u)
{
	uint64_t now = now_us();
	if (u->subscriber_count || u->alone_logged || !u->alone_since_us ||
	    now - u->alone_since_us < (uint64_t)u->cfg.subscription_lease_ms * 1000u)
		return;
	paxos_logf(PAXOS_LOG_WARNING,
		   "paxos: unicast: no learner has subscribed to acceptor %u for %u ms: what it "
		   "accepts reaches no learner (learners subscribe to the addresses in their "
		   "configuration: do they list %u acceptors with the same addresses?)",
		   u->acceptor_id, u->cfg.subscription_lease_ms, u->cfg.acceptors);
	u->alone_logged = true;
}

static int sending_socket(struct unicast *u)
{
	for (int k = 0; k < SOCKET_COUNT; k++)
		if (u->fd[k] >= 0)
			return u->fd[k];
	if (u->send_fd < 0) {
		char err[128];
		struct sockaddr_in any = {.sin_family = AF_INET};
		u->send_fd = paxos_transport_unicast_socket(&u->cfg, &any, err, sizeof(err));
	}
	return u->send_fd;
}

/* Sends entries [0, count) of the tx arrays, marking the caller's datagrams that any entry
 * failed for; a refused datagram is skipped (UDP may lose it anyway: Paxos retries). */
static void flush_entries(struct unicast *u, int fd, struct paxos_tx_datagram *d, size_t count)
{
	size_t done = 0;
	while (done < count) {
		int sent = sendmmsg(fd, u->tx_hdr + done, (unsigned)(count - done), 0);
		if (sent <= 0) {
			d[u->tx_owner[done]].sent = false;
			done++;
			continue;
		}
		for (int i = 0; i < sent; i++)
			d[u->tx_owner[done + (size_t)i]].copies++;
		done += (size_t)sent;
	}
}

/* Adds an entry sending datagram i of d to each of members addresses at list (stride apart),
 * flushing whenever the batch fills. */
static void add_entries(struct unicast *u, int fd, struct paxos_tx_datagram *d, size_t i,
			const struct sockaddr_in *list, size_t stride, size_t members,
			size_t *count)
{
	struct paxos_tx_datagram *x = &d[i];
	for (size_t j = 0; fd >= 0 && j < members; j++) {
		const struct sockaddr_in *to = (const void *)((const char *)list + j * stride);
		if (to->sin_port == 0)
			continue; /* an acceptor whose address the log has not given yet */
		size_t c = *count;
		u->tx_iov[c][0] = (struct iovec){(void *)&group_frame[x->to], 1};
		u->tx_iov[c][1] = (struct iovec){(void *)x->data, x->len};
		u->tx_hdr[c].msg_hdr = (struct msghdr){.msg_name = (void *)to,
						       .msg_namelen = sizeof(*to),
						       .msg_iov = u->tx_iov[c],
						       .msg_iovlen = 2};
		u->tx_owner[c] = i;
		if (++*count == SEND_BATCH) {
			flush_entries(u, fd, d, *count);
			*count = 0;
		}
	}
}

static void uc_send(struct paxos_transport *t, struct paxos_tx_datagram *d, size_t n)
{
	struct unicast *u = of(t);
	int fd = sending_socket(u);
	size_t count = 0;
	if (u->subscriber_count)
		unicast_expire_subscribers(u, now_us());
	for (size_t i = 0; i < n; i++) {
		struct paxos_tx_datagram *x = &d[i];
		x->sent = fd >= 0;
		x->copies = 0;
		const struct sockaddr_in *list;
		size_t stride;
		size_t members = destinations(u, x->to, &list, &stride);
		if ((x->to == PAXOS_GROUP_LEARNERS || x->to == PAXOS_GROUP_VOTES) && members == 0)
			note_alone(u);
		if (x->to == PAXOS_GROUP_VOTES) {
			for (size_t j = 0; j < members; j++)
				if (u->subscribers[j].votes)
					add_entries(u, fd, d, i, &u->subscribers[j].addr, stride, 1,
						    &count);
		} else {
			add_entries(u, fd, d, i, list, stride, members, &count);
		}
		/* A proposer's acceptors group reaches the learners subscribed to it too. */
		if (x->to == PAXOS_GROUP_ACCEPTORS && u->fd[SOCKET_PROPOSER] >= 0)
			add_entries(u, fd, d, i, &u->subscribers[0].addr, sizeof(struct subscriber),
				    u->subscriber_count, &count);
	}
	if (count)
		flush_entries(u, fd, d, count);
}

static void uc_sender_name(const struct paxos_transport *t, const void *from, char *buf, size_t cap)
{
	(void)t;
	address_text(from, buf, cap);
}

static void uc_destroy(struct paxos_transport *t)
{
	struct unicast *u = of(t);
	if (!u)
		return;
	unicast_unsubscribe(u);
	if (u->lease_ev)
		event_free(u->lease_ev);
	if (u->retry_ev)
		event_free(u->retry_ev);
	for (int k = 0; k < SOCKET_COUNT; k++) {
		if (u->ev[k])
			event_free(u->ev[k]);
		if (u->fd[k] >= 0)
			close(u->fd[k]);
	}
	if (u->send_fd >= 0)
		close(u->send_fd);
	paxos_auth_free(u->auth);
	udp_rx_free(&u->in);
	free(u);
}

/* An acceptor's address from the log (membership-alpha): sent to, subscribed to and heard
 * from its address from now on. */
static int uc_set_address(struct paxos_transport *t, enum paxos_role role, uint32_t id,
			  const struct paxos_endpoint *e)
{
	struct unicast *u = of(t);
	if (role != PAXOS_ROLE_ACCEPTOR || id >= u->cfg.acceptors || !e || !e->port)
		return PAXOS_E_INVALID;
	struct sockaddr_in to;
	to_sockaddr(e, &to);
	if (same_address(&to, &u->acceptors[id]))
		return PAXOS_OK;
	u->acceptors[id] = to;
	u->cfg.acceptor_address[id] = *e;
	unicast_resubscribe(u, id);
	return PAXOS_OK;
}

static const struct paxos_transport_ops unicast_ops = {
    .name = "unicast",
    .host = uc_host,
    .join = uc_join,
    .set_lazy = uc_set_lazy,
    .read = uc_read,
    .batch = uc_batch,
    .send = uc_send,
    .sender_name = uc_sender_name,
    .destroy = uc_destroy,
    .set_address = uc_set_address,
};

struct paxos_transport *paxos_transport_unicast_new(struct event_base *base,
						    const struct paxos_config *cfg,
						    paxos_transport_deliver_fn deliver, void *arg,
						    char *err, size_t errlen)
{
	if (!base || !cfg || !deliver) {
		snprintf(err, errlen, "paxos_transport_unicast_new: invalid arguments");
		return NULL;
	}
	struct unicast *u = calloc(1, sizeof(*u));
	if (!u) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	u->t.ops = &unicast_ops;
	u->base = base;
	u->cfg = *cfg;
	u->deliver = deliver;
	u->arg = arg;
	u->send_fd = -1;
	for (int k = 0; k < SOCKET_COUNT; k++)
		u->fd[k] = -1;
	if (sodium_init() < 0) {
		snprintf(err, errlen, "unicast: libsodium cannot start (no entropy source?)");
		free(u);
		return NULL;
	}
	randombytes_buf(u->cookie_key, sizeof(u->cookie_key));
	for (uint32_t i = 0; i < cfg->acceptors && i < PAXOS_MAX_ACCEPTORS; i++)
		to_sockaddr(&cfg->acceptor_address[i], &u->acceptors[i]);
	for (uint32_t i = 0; i < cfg->proposers && i < PAXOS_MAX_PROPOSERS; i++)
		to_sockaddr(&cfg->proposer_address[i], &u->proposers[i]);
	if (cfg->auth_key_file[0] && !(u->auth = paxos_auth_load_partition(cfg, err, errlen))) {
		uc_destroy(&u->t);
		return NULL;
	}
	if (udp_rx_init(&u->in, (size_t)cfg->max_datagram + 1) != PAXOS_OK) {
		snprintf(err, errlen, "out of memory");
		uc_destroy(&u->t);
		return NULL;
	}
	return &u->t;
}
