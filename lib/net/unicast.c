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
#include <paxos/log.h>
#include <paxos/transport.h>

#include <arpa/inet.h>
#include <event2/event.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "auth_key.h"
#include "log_line.h"
#include "udp.h"
#include "config_fields.h"

#define READ_BATCH 64
#define SEND_BATCH 32
/* Most learners one acceptor sends to; further subscriptions are refused (logged). */
#define MAX_SUBSCRIBERS 256
/* Most of them one source address may hold. */
#define MAX_PER_SOURCE 32
/* A cookie is valid in the period it was made and the next (seconds). */
#define COOKIE_PERIOD_S 30
/* First wait before a learner asks an acceptor that has not confirmed again. */
#define RETRY_FIRST_MS 10

/* The first byte of a datagram: a role group (enum paxos_group), or one of these. */
enum frame {
	FRAME_SUBSCRIBE = 0x40,   /* learner -> acceptor: send me the learners group */
	FRAME_SUBSCRIBED = 0x41,  /* acceptor -> learner: done, until the lease ends */
	FRAME_UNSUBSCRIBE = 0x42, /* learner -> acceptor: it stops */
	FRAME_CHALLENGE = 0x43,   /* acceptor -> learner: ask again with this cookie */
};
#define CONTROL_VERSION 2
/* frame, version, a word: the member (SUBSCRIBED, CHALLENGE) or the lease in ms (SUBSCRIBE),
 * then the cookie; big-endian */
#define CONTROL_BYTES 14
/* Proposers name themselves with this bit and their id: learners count acceptors only. */
#define MEMBER_PROPOSER 0x80000000u

/* The sockets a node may have: its acceptor's, its proposer's, its learner's. */
enum socket_kind { SOCKET_ACCEPTOR, SOCKET_PROPOSER, SOCKET_LEARNER, SOCKET_COUNT };

struct subscriber {
	struct sockaddr_in addr;
	uint64_t expires_us;
};

struct unicast {
	struct paxos_transport t;
	struct event_base *base;
	struct paxos_config cfg;
	paxos_transport_deliver_fn deliver;
	void *arg;
	struct paxos_auth *auth;
	int fd[SOCKET_COUNT];
	struct event *ev[SOCKET_COUNT];
	bool lazy_learners;
	/* A learner hosted without an acceptor hears the proposers' acceptors group too (the
	 * leader's accepts carry the values): it subscribes to them as to the acceptors. */
	bool listen_accepts;
	bool joined[PAXOS_GROUP_COUNT];
	int send_fd; /* for a node hosting no member: an unbound socket */
	uint32_t acceptor_id, proposer_id;
	struct sockaddr_in acceptors[PAXOS_MAX_ACCEPTORS];
	struct sockaddr_in proposers[PAXOS_MAX_PROPOSERS];
	/* A member's learners, and the secret of its cookies. */
	uint8_t cookie_key[crypto_shorthash_KEYBYTES];
	struct subscriber subscribers[MAX_SUBSCRIBERS];
	size_t subscriber_count;
	uint64_t full_logged_us, alone_since_us;
	bool alone_logged;
	/* A learner's subscriptions: when each acceptor last confirmed, and whether its silence
	 * was logged. */
	struct event *lease_ev;
	/* Until every acceptor confirmed: subscriptions sent again after retry_ms, doubling. */
	struct event *retry_ev;
	uint32_t retry_ms;
	uint64_t subscribed_us;
	uint64_t confirmed_us[PAXOS_MAX_ACCEPTORS];
	bool silence_logged[PAXOS_MAX_ACCEPTORS];
	/* The cookies the members gave this learner (0: none yet). */
	uint64_t acceptor_cookie[PAXOS_MAX_ACCEPTORS];
	uint64_t proposer_cookie[PAXOS_MAX_PROPOSERS];
	/* Receiving: READ_BATCH datagrams of one frame byte plus max-datagram bytes. */
	uint8_t *rx_buf;
	size_t rx_cap;
	struct mmsghdr rx_hdr[READ_BATCH];
	struct iovec rx_iov[READ_BATCH];
	struct sockaddr_in rx_from[READ_BATCH];
	struct paxos_rx_datagram rx[READ_BATCH];
	struct mmsghdr tx_hdr[SEND_BATCH];
	struct iovec tx_iov[SEND_BATCH][2];
	size_t tx_owner[SEND_BATCH]; /* which of the caller's datagrams each entry sends */
};

static const uint8_t group_frame[PAXOS_GROUP_COUNT] = {PAXOS_GROUP_ACCEPTORS, PAXOS_GROUP_PROPOSERS,
						       PAXOS_GROUP_LEARNERS, PAXOS_GROUP_SUBMIT};

static struct unicast *of(const struct paxos_transport *t)
{
	return (struct unicast *)t;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void address_text(const struct sockaddr_in *a, char *buf, size_t cap)
{
	char addr[INET_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET, &a->sin_addr, addr, sizeof(addr));
	snprintf(buf, cap, "%s:%u", addr, (unsigned)ntohs(a->sin_port));
}

static void to_sockaddr(const struct paxos_endpoint *e, struct sockaddr_in *out)
{
	memset(out, 0, sizeof(*out));
	out->sin_family = AF_INET;
	out->sin_addr = e->addr;
	out->sin_port = htons(e->port);
}

/* ---- control datagrams ---- */

static size_t control_encode(const struct unicast *u, uint8_t *buf, enum frame f, uint32_t word,
			     uint64_t cookie)
{
	buf[0] = (uint8_t)f;
	buf[1] = CONTROL_VERSION;
	for (int i = 0; i < 4; i++)
		buf[2 + i] = (uint8_t)(word >> (24 - 8 * i));
	for (int i = 0; i < 8; i++)
		buf[6 + i] = (uint8_t)(cookie >> (56 - 8 * i));
	if (!u->auth)
		return CONTROL_BYTES;
	paxos_auth_seal(u->auth, buf, CONTROL_BYTES);
	return CONTROL_BYTES + PAXOS_AUTH_TAG_BYTES;
}

/* The word and cookie of a valid control datagram; false for anything else (counted by no
 * one: a stray or forged subscription changes nothing). */
static bool control_decode(const struct unicast *u, const uint8_t *buf, size_t len, uint32_t *word,
			   uint64_t *cookie)
{
	size_t payload = len;
	if (u->auth && !paxos_auth_verify(u->auth, buf, len, &payload))
		return false;
	if (payload != CONTROL_BYTES || buf[1] != CONTROL_VERSION)
		return false;
	*word = (uint32_t)buf[2] << 24 | (uint32_t)buf[3] << 16 | (uint32_t)buf[4] << 8 | buf[5];
	*cookie = 0;
	for (int i = 0; i < 8; i++)
		*cookie = *cookie << 8 | buf[6 + i];
	return true;
}

static void control_send(const struct unicast *u, int fd, const struct sockaddr_in *to,
			 enum frame f, uint32_t word, uint64_t cookie)
{
	uint8_t buf[CONTROL_BYTES + PAXOS_AUTH_TAG_BYTES];
	size_t len = control_encode(u, buf, f, word, cookie);
	(void)sendto(fd, buf, len, 0, (const struct sockaddr *)to, sizeof(*to));
}

/* The cookie of address a in period (never 0, the learner's "none"). */
static uint64_t cookie_of(const struct unicast *u, const struct sockaddr_in *a, uint64_t period)
{
	uint8_t in[14], out[crypto_shorthash_BYTES];
	memcpy(in, &a->sin_addr.s_addr, 4);
	memcpy(in + 4, &a->sin_port, 2);
	for (int i = 0; i < 8; i++)
		in[6 + i] = (uint8_t)(period >> (8 * i));
	crypto_shorthash(out, in, sizeof(in), u->cookie_key);
	uint64_t c = 0;
	for (int i = 0; i < 8; i++)
		c = c << 8 | out[i];
	return c ? c : 1;
}

static uint64_t cookie_period(uint64_t now)
{
	return now / 1000000u / COOKIE_PERIOD_S;
}

static bool cookie_valid(const struct unicast *u, const struct sockaddr_in *a, uint64_t cookie,
			 uint64_t now)
{
	uint64_t p = cookie_period(now);
	return cookie != 0 &&
	       (cookie == cookie_of(u, a, p) || (p > 0 && cookie == cookie_of(u, a, p - 1)));
}

static bool same_address(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
	return a->sin_addr.s_addr == b->sin_addr.s_addr && a->sin_port == b->sin_port;
}

/* Drops the subscribers whose lease ended. */
static void expire_subscribers(struct unicast *u, uint64_t now)
{
	size_t kept = 0;
	for (size_t i = 0; i < u->subscriber_count; i++)
		if (u->subscribers[i].expires_us > now)
			u->subscribers[kept++] = u->subscribers[i];
	if (u->subscriber_count && !kept) {
		u->alone_since_us = now;
		u->alone_logged = false;
	}
	u->subscriber_count = kept;
}

/* Subscribers from the same address as a (any port). */
static size_t from_source(const struct unicast *u, const struct sockaddr_in *a)
{
	size_t n = 0;
	for (size_t i = 0; i < u->subscriber_count; i++)
		n += u->subscribers[i].addr.sin_addr.s_addr == a->sin_addr.s_addr;
	return n;
}

static void log_refused(struct unicast *u, const struct sockaddr_in *from, uint64_t now,
			uint32_t member, const char *why)
{
	if (now - u->full_logged_us < 1000000u)
		return;
	char who[64];
	address_text(from, who, sizeof(who));
	paxos_logf(PAXOS_LOG_WARNING, "paxos: unicast: %s %u refuses the subscription of %s: %s",
		   member & MEMBER_PROPOSER ? "proposer" : "acceptor", member & ~MEMBER_PROPOSER,
		   who, why);
	u->full_logged_us = now;
}

/* An acceptor's or proposer's side of a subscription: with a valid cookie for its source,
 * add or renew it and confirm (as member), or drop it; without, challenge that source. */
static void on_subscription(struct unicast *u, int fd, enum frame f, uint32_t lease_ms,
			    uint64_t cookie, const struct sockaddr_in *from, uint32_t member)
{
	uint64_t now = now_us();
	if (!cookie_valid(u, from, cookie, now)) {
		if (f == FRAME_SUBSCRIBE)
			control_send(u, fd, from, FRAME_CHALLENGE, member,
				     cookie_of(u, from, cookie_period(now)));
		return;
	}
	expire_subscribers(u, now);
	size_t i = 0;
	while (i < u->subscriber_count && !same_address(&u->subscribers[i].addr, from))
		i++;
	if (f == FRAME_UNSUBSCRIBE) {
		if (i < u->subscriber_count)
			u->subscribers[i] = u->subscribers[--u->subscriber_count];
		return;
	}
	/* The lease is the subscriber's, within what this file allows. */
	if (lease_ms == 0 || lease_ms > u->cfg.subscription_lease_ms)
		lease_ms = u->cfg.subscription_lease_ms;
	if (i == u->subscriber_count) {
		char why[96];
		if (u->subscriber_count == MAX_SUBSCRIBERS) {
			snprintf(why, sizeof(why), "%d learners are subscribed already",
				 MAX_SUBSCRIBERS);
			log_refused(u, from, now, member, why);
			return;
		}
		if (from_source(u, from) >= MAX_PER_SOURCE) {
			snprintf(why, sizeof(why), "its address has %d subscriptions already",
				 MAX_PER_SOURCE);
			log_refused(u, from, now, member, why);
			return;
		}
		u->subscribers[u->subscriber_count++].addr = *from;
		u->alone_since_us = 0;
		u->alone_logged = false;
	}
	u->subscribers[i].expires_us = now + (uint64_t)lease_ms * 1000u;
	control_send(u, fd, from, FRAME_SUBSCRIBED, member, cookie_of(u, from, cookie_period(now)));
}

/* A learner's side: the cookie a member gave, kept for what it sends that member next;
 * false for a word that names no member or a datagram not from that member's address. */
static bool note_cookie(struct unicast *u, uint32_t member, uint64_t cookie,
			const struct sockaddr_in *from)
{
	uint32_t id = member & ~MEMBER_PROPOSER;
	if (member & MEMBER_PROPOSER) {
		if (id >= u->cfg.proposers || !same_address(from, &u->proposers[id]))
			return false;
		u->proposer_cookie[id] = cookie;
	} else {
		if (id >= u->cfg.acceptors || !same_address(from, &u->acceptors[id]))
			return false;
		u->acceptor_cookie[id] = cookie;
	}
	return true;
}

/* A learner's side: member confirmed its subscription. */
static void on_subscribed(struct unicast *u, uint32_t member, uint64_t cookie,
			  const struct sockaddr_in *from)
{
	if (!note_cookie(u, member, cookie, from) || (member & MEMBER_PROPOSER))
		return;
	uint32_t id = member;
	u->confirmed_us[id] = now_us();
	if (u->silence_logged[id]) {
		u->silence_logged[id] = false;
		paxos_logf(PAXOS_LOG_INFO,
			   "paxos: unicast: acceptor %u confirms this learner's "
			   "subscription again",
			   id);
	}
}

/* A learner's side: a member challenged its subscription; it asks again at once. */
static void on_challenge(struct unicast *u, uint32_t member, uint64_t cookie,
			 const struct sockaddr_in *from)
{
	if (note_cookie(u, member, cookie, from))
		control_send(u, u->fd[SOCKET_LEARNER], from, FRAME_SUBSCRIBE,
			     u->cfg.subscription_lease_ms, cookie);
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
	for (int i = 0; i < READ_BATCH; i++) {
		u->rx_hdr[i].msg_hdr.msg_flags = 0;
		u->rx_hdr[i].msg_hdr.msg_namelen = sizeof(u->rx_from[i]);
	}
	int got = recvmmsg(u->fd[k], u->rx_hdr, READ_BATCH, MSG_DONTWAIT, NULL);
	if (got <= 0)
		return 0;
	/* Runs of datagrams for one group go to the node together (an acceptor's group commit);
	 * control datagrams are answered here. An unknown first byte makes an empty datagram the
	 * node counts as malformed. */
	size_t run = 0;
	enum paxos_group run_group = k == SOCKET_ACCEPTOR   ? PAXOS_GROUP_ACCEPTORS
				     : k == SOCKET_PROPOSER ? PAXOS_GROUP_PROPOSERS
							    : PAXOS_GROUP_LEARNERS;
	for (int i = 0; i < got; i++) {
		const uint8_t *buf = u->rx_iov[i].iov_base;
		size_t len = u->rx_hdr[i].msg_len;
		bool truncated = (u->rx_hdr[i].msg_hdr.msg_flags & MSG_TRUNC) != 0;
		uint32_t word;
		uint64_t cookie;
		uint8_t frame = len ? buf[0] : 0xff;
		if (frame == FRAME_SUBSCRIBE || frame == FRAME_UNSUBSCRIBE) {
			if (k != SOCKET_LEARNER && !truncated &&
			    control_decode(u, buf, len, &word, &cookie))
				on_subscription(
				    u, u->fd[k], (enum frame)frame, word, cookie, &u->rx_from[i],
				    k == SOCKET_ACCEPTOR ? u->acceptor_id
							 : MEMBER_PROPOSER | u->proposer_id);
			continue;
		}
		if (frame == FRAME_SUBSCRIBED || frame == FRAME_CHALLENGE) {
			if (k == SOCKET_LEARNER && !truncated &&
			    control_decode(u, buf, len, &word, &cookie)) {
				if (frame == FRAME_SUBSCRIBED)
					on_subscribed(u, word, cookie, &u->rx_from[i]);
				else
					on_challenge(u, word, cookie, &u->rx_from[i]);
			}
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
		u->rx[run++] = (struct paxos_rx_datagram){
		    .data = (uint8_t *)buf + (framed ? 1 : 0),
		    .len = framed ? len - 1 : 0,
		    .truncated = truncated,
		    .from = &u->rx_from[i],
		    .origin = paxos_udp_origin(&u->rx_from[i]),
		};
	}
	deliver_run(u, run_group, u->rx, run);
	return (size_t)got;
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

/* A listening learner subscribes to every proposer too (their accepts carry the values). */
static void subscribe_proposers(struct unicast *u, enum frame f)
{
	for (uint32_t i = 0; u->listen_accepts && i < u->cfg.proposers; i++)
		control_send(u, u->fd[SOCKET_LEARNER], &u->proposers[i], f,
			     f == FRAME_SUBSCRIBE ? u->cfg.subscription_lease_ms : 0,
			     u->proposer_cookie[i]);
}

/* Subscribes to every acceptor again, and says which have not confirmed for a lease. */
static void renew(struct unicast *u)
{
	uint64_t now = now_us(), lease = (uint64_t)u->cfg.subscription_lease_ms * 1000u;
	subscribe_proposers(u, FRAME_SUBSCRIBE);
	for (uint32_t i = 0; i < u->cfg.acceptors; i++) {
		if (u->acceptors[i].sin_port == 0)
			continue; /* no address yet (added through the log later) */
		control_send(u, u->fd[SOCKET_LEARNER], &u->acceptors[i], FRAME_SUBSCRIBE,
			     u->cfg.subscription_lease_ms, u->acceptor_cookie[i]);
		uint64_t since = u->confirmed_us[i] ? u->confirmed_us[i] : u->subscribed_us;
		if (now - since < lease || u->silence_logged[i])
			continue;
		char addr[64];
		address_text(&u->acceptors[i], addr, sizeof(addr));
		paxos_logf(PAXOS_LOG_WARNING,
			   "paxos: unicast: acceptor %u (%s) has %s this learner's subscription "
			   "for %llu ms: it gets nothing from that acceptor (is it running, and "
			   "is that its address?)",
			   i, addr, u->confirmed_us[i] ? "not renewed" : "not confirmed",
			   (unsigned long long)((now - since) / 1000u));
		u->silence_logged[i] = true;
	}
}

static void on_lease_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	renew(arg);
}

/* A subscription sent before its acceptor was up is lost: ask the acceptors that have not
 * confirmed yet again, sooner than the next renewal (members starting together would
 * otherwise miss each other's learner traffic, acceptor state included, for a quarter
 * lease). The wait doubles up to that quarter, after which renewals alone go on. */
static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct unicast *u = arg;
	bool waiting = false;
	for (uint32_t i = 0; i < u->cfg.acceptors; i++) {
		if (u->confirmed_us[i] || u->acceptors[i].sin_port == 0)
			continue;
		control_send(u, u->fd[SOCKET_LEARNER], &u->acceptors[i], FRAME_SUBSCRIBE,
			     u->cfg.subscription_lease_ms, u->acceptor_cookie[i]);
		waiting = true;
	}
	if (waiting)
		subscribe_proposers(u, FRAME_SUBSCRIBE);
	u->retry_ms *= 2;
	if (!waiting || u->retry_ms >= u->cfg.subscription_lease_ms / 4)
		return;
	struct timeval tv = {u->retry_ms / 1000, (long)(u->retry_ms % 1000) * 1000};
	event_add(u->retry_ev, &tv);
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
		subscribe_proposers(u, FRAME_SUBSCRIBE);
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
	if (g == PAXOS_GROUP_LEARNERS) {
		/* Any local port: acceptors answer to where the subscription came from. */
		struct sockaddr_in any = {.sin_family = AF_INET};
		int rc = open_socket(u, SOCKET_LEARNER, &any, "learner", err, errlen);
		if (rc != PAXOS_OK)
			return rc;
		uint32_t every = u->cfg.subscription_lease_ms / 4;
		struct timeval tv = {every / 1000, (long)(every % 1000) * 1000};
		u->lease_ev = event_new(u->base, -1, EV_PERSIST, on_lease_tick, u);
		if (!u->lease_ev || event_add(u->lease_ev, &tv) != 0) {
			snprintf(err, errlen, "cannot add a timer to the event loop");
			return PAXOS_E_NOMEM;
		}
		u->subscribed_us = now_us();
		renew(u);
		u->retry_ms = RETRY_FIRST_MS;
		struct timeval first = {0, RETRY_FIRST_MS * 1000};
		u->retry_ev = event_new(u->base, -1, 0, on_retry, u);
		if (!u->retry_ev || event_add(u->retry_ev, &first) != 0) {
			snprintf(err, errlen, "cannot add a timer to the event loop");
			return PAXOS_E_NOMEM;
		}
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
	return read_socket(u, g == PAXOS_GROUP_ACCEPTORS  ? SOCKET_ACCEPTOR
			      : g == PAXOS_GROUP_LEARNERS ? SOCKET_LEARNER
							  : SOCKET_PROPOSER);
}

static size_t uc_batch(const struct paxos_transport *t)
{
	(void)t;
	return READ_BATCH;
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
		expire_subscribers(u, now_us());
	for (size_t i = 0; i < n; i++) {
		struct paxos_tx_datagram *x = &d[i];
		x->sent = fd >= 0;
		x->copies = 0;
		const struct sockaddr_in *list;
		size_t stride;
		size_t members = destinations(u, x->to, &list, &stride);
		if (x->to == PAXOS_GROUP_LEARNERS && members == 0)
			note_alone(u);
		add_entries(u, fd, d, i, list, stride, members, &count);
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
	/* A learner going away says so; a crashed one is dropped when its lease ends. */
	if (u->fd[SOCKET_LEARNER] >= 0)
		for (uint32_t i = 0; i < u->cfg.acceptors; i++)
			control_send(u, u->fd[SOCKET_LEARNER], &u->acceptors[i], FRAME_UNSUBSCRIBE,
				     0, u->acceptor_cookie[i]);
	if (u->fd[SOCKET_LEARNER] >= 0)
		subscribe_proposers(u, FRAME_UNSUBSCRIBE);
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
	free(u->rx_buf);
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
	u->confirmed_us[id] = 0;
	u->silence_logged[id] = false;
	u->acceptor_cookie[id] = 0;
	if (u->fd[SOCKET_LEARNER] >= 0 && u->joined[PAXOS_GROUP_LEARNERS])
		control_send(u, u->fd[SOCKET_LEARNER], &u->acceptors[id], FRAME_SUBSCRIBE,
			     u->cfg.subscription_lease_ms, 0);
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
	u->rx_cap = (size_t)cfg->max_datagram + 1;
	u->rx_buf = malloc(u->rx_cap * READ_BATCH);
	if (!u->rx_buf) {
		snprintf(err, errlen, "out of memory");
		uc_destroy(&u->t);
		return NULL;
	}
	for (int i = 0; i < READ_BATCH; i++) {
		u->rx_iov[i] = (struct iovec){u->rx_buf + u->rx_cap * (size_t)i, u->rx_cap};
		u->rx_hdr[i].msg_hdr = (struct msghdr){.msg_name = &u->rx_from[i],
						       .msg_namelen = sizeof(u->rx_from[i]),
						       .msg_iov = &u->rx_iov[i],
						       .msg_iovlen = 1};
	}
	return &u->t;
}
