/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The unicast transport's subscriptions: learners ask every acceptor (and, hosted without an
 * acceptor, every proposer) for the learners group with a lease they renew, and members
 * answer with cookies that bind a subscription to its source address (see unicast.c).
 */
#include "bytes.h"
#include "unicast_state.h"

static size_t control_encode(const struct unicast *u, uint8_t *buf, enum frame f, uint32_t word,
			     uint64_t cookie)
{
	buf[0] = (uint8_t)f;
	buf[1] = CONTROL_VERSION;
	paxos_put_be32(buf + 2, word);
	paxos_put_be64(buf + 6, cookie);
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
	*word = paxos_get_be32(buf + 2);
	*cookie = paxos_get_be64(buf + 6);
	return true;
}

static void control_send(const struct unicast *u, int fd, const struct sockaddr_in *to,
			 enum frame f, uint32_t word, uint64_t cookie)
{
	uint8_t buf[CONTROL_BYTES + PAXOS_AUTH_TAG_BYTES];
	size_t len = control_encode(u, buf, f, word, cookie);
	(void)sendto(fd, buf, len, 0, (const struct sockaddr *)to, sizeof(*to));
}

/* A learner's subscription to acceptor `to`: its lease, and whether it counts votes (it joined
 * the votes group). */
static void subscribe_to(const struct unicast *u, const struct sockaddr_in *to, uint64_t cookie)
{
	uint32_t word = u->cfg.subscription_lease_ms;
	if (!u->joined[PAXOS_GROUP_VOTES])
		word |= SUBSCRIBE_NO_VOTES;
	control_send(u, u->fd[SOCKET_LEARNER], to, FRAME_SUBSCRIBE, word, cookie);
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

void unicast_expire_subscribers(struct unicast *u, uint64_t now)
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
static void on_subscription(struct unicast *u, int fd, enum frame f, uint32_t word, uint64_t cookie,
			    const struct sockaddr_in *from, uint32_t member)
{
	uint64_t now = now_us();
	uint32_t lease_ms = word & ~SUBSCRIBE_NO_VOTES;
	if (!cookie_valid(u, from, cookie, now)) {
		if (f == FRAME_SUBSCRIBE)
			control_send(u, fd, from, FRAME_CHALLENGE, member,
				     cookie_of(u, from, cookie_period(now)));
		return;
	}
	unicast_expire_subscribers(u, now);
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
	u->subscribers[i].votes = !(word & SUBSCRIBE_NO_VOTES);
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
	if (!note_cookie(u, member, cookie, from))
		return;
	if (member & MEMBER_PROPOSER) {
		u->proposer_confirmed[member & ~MEMBER_PROPOSER] = true;
		return;
	}
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
	if (!note_cookie(u, member, cookie, from))
		return;
	if (member & MEMBER_PROPOSER)
		control_send(u, u->fd[SOCKET_LEARNER], from, FRAME_SUBSCRIBE,
			     u->cfg.subscription_lease_ms, cookie);
	else
		subscribe_to(u, from, cookie);
}

/* A listening learner subscribes to every proposer too (their accepts carry the values), or
 * (unconfirmed) to those that have not confirmed yet; true if it sent any. */
static bool subscribe_proposers(struct unicast *u, enum frame f, bool unconfirmed)
{
	bool sent = false;
	for (uint32_t i = 0; u->listen_accepts && i < u->cfg.proposers; i++) {
		if (unconfirmed && u->proposer_confirmed[i])
			continue;
		control_send(u, u->fd[SOCKET_LEARNER], &u->proposers[i], f,
			     f == FRAME_SUBSCRIBE ? u->cfg.subscription_lease_ms : 0,
			     u->proposer_cookie[i]);
		sent = true;
	}
	return sent;
}

/* Subscribes to every acceptor again, and says which have not confirmed for a lease. */
static void renew(struct unicast *u)
{
	uint64_t now = now_us(), lease = (uint64_t)u->cfg.subscription_lease_ms * 1000u;
	subscribe_proposers(u, FRAME_SUBSCRIBE, false);
	for (uint32_t i = 0; i < u->cfg.acceptors; i++) {
		if (u->acceptors[i].sin_port == 0)
			continue; /* no address yet (added through the log later) */
		subscribe_to(u, &u->acceptors[i], u->acceptor_cookie[i]);
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
 * lease). So for the proposers a listening learner subscribes to: without the leader's
 * accepts it knows no value its votes name. The wait doubles up to that quarter, after which
 * renewals alone go on. */
static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct unicast *u = arg;
	bool waiting = false;
	for (uint32_t i = 0; i < u->cfg.acceptors; i++) {
		if (u->confirmed_us[i] || u->acceptors[i].sin_port == 0)
			continue;
		subscribe_to(u, &u->acceptors[i], u->acceptor_cookie[i]);
		waiting = true;
	}
	if (subscribe_proposers(u, FRAME_SUBSCRIBE, true))
		waiting = true;
	u->retry_ms *= 2;
	if (!waiting || u->retry_ms >= u->cfg.subscription_lease_ms / 4)
		return;
	struct timeval tv = {u->retry_ms / 1000, (long)(u->retry_ms % 1000) * 1000};
	event_add(u->retry_ev, &tv);
}

void unicast_control(struct unicast *u, enum socket_kind k, const uint8_t *buf, size_t len,
		     const struct sockaddr_in *from)
{
	uint32_t word;
	uint64_t cookie;
	if (!control_decode(u, buf, len, &word, &cookie))
		return;
	enum frame f = (enum frame)buf[0];
	bool member_side = f == FRAME_SUBSCRIBE || f == FRAME_UNSUBSCRIBE;
	if (member_side && k != SOCKET_LEARNER)
		on_subscription(u, u->fd[k], f, word, cookie, from,
				k == SOCKET_ACCEPTOR ? u->acceptor_id
						     : MEMBER_PROPOSER | u->proposer_id);
	else if (f == FRAME_SUBSCRIBED && k == SOCKET_LEARNER)
		on_subscribed(u, word, cookie, from);
	else if (f == FRAME_CHALLENGE && k == SOCKET_LEARNER)
		on_challenge(u, word, cookie, from);
}

int unicast_subscribe(struct unicast *u, char *err, size_t errlen)
{
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
	return PAXOS_OK;
}

void unicast_subscribe_accepts(struct unicast *u)
{
	subscribe_proposers(u, FRAME_SUBSCRIBE, false);
	/* Asked again until each confirms (on_retry), from the first wait on. */
	if (u->retry_ev && !evtimer_pending(u->retry_ev, NULL)) {
		u->retry_ms = RETRY_FIRST_MS;
		struct timeval first = {0, RETRY_FIRST_MS * 1000};
		event_add(u->retry_ev, &first);
	}
}

void unicast_unsubscribe(struct unicast *u)
{
	if (u->fd[SOCKET_LEARNER] < 0)
		return;
	for (uint32_t i = 0; i < u->cfg.acceptors; i++)
		control_send(u, u->fd[SOCKET_LEARNER], &u->acceptors[i], FRAME_UNSUBSCRIBE, 0,
			     u->acceptor_cookie[i]);
	subscribe_proposers(u, FRAME_UNSUBSCRIBE, false);
}

void unicast_resubscribe(struct unicast *u, uint32_t id)
{
	u->confirmed_us[id] = 0;
	u->silence_logged[id] = false;
	u->acceptor_cookie[id] = 0;
	if (u->fd[SOCKET_LEARNER] >= 0 && u->joined[PAXOS_GROUP_LEARNERS])
		subscribe_to(u, &u->acceptors[id], 0);
}

void unicast_subscribe_votes(struct unicast *u)
{
	for (uint32_t i = 0; u->fd[SOCKET_LEARNER] >= 0 && i < u->cfg.acceptors; i++)
		if (u->acceptors[i].sin_port != 0)
			subscribe_to(u, &u->acceptors[i], u->acceptor_cookie[i]);
}
