/* SPDX-License-Identifier: BSD-3-Clause */
/* The unicast transport's state, shared by its socket I/O (unicast.c) and its subscription
 * protocol (unicast_subscriptions.c, which unicast.c calls and which calls nothing back). */
#ifndef PAXOS_NET_UNICAST_STATE_H
#define PAXOS_NET_UNICAST_STATE_H

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
/* A subscription's lease word with this bit asks for the learners group without the votes: a
 * learning acceptor's learner, which learns from the leader's word and its own acceptor's
 * votes. A member that does not know the bit takes it as a long lease, cut to its own. */
#define SUBSCRIBE_NO_VOTES 0x80000000u

/* The sockets a node may have: its acceptor's, its proposer's, its learner's. */
enum socket_kind { SOCKET_ACCEPTOR, SOCKET_PROPOSER, SOCKET_LEARNER, SOCKET_COUNT };

struct subscriber {
	struct sockaddr_in addr;
	uint64_t expires_us;
	bool votes; /* it counts votes: the votes group reaches it (SUBSCRIBE_NO_VOTES) */
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
	/* Which proposers confirmed this learner's subscription to their accepts. */
	bool proposer_confirmed[PAXOS_MAX_PROPOSERS];
	/* The cookies the members gave this learner (0: none yet). */
	uint64_t acceptor_cookie[PAXOS_MAX_ACCEPTORS];
	uint64_t proposer_cookie[PAXOS_MAX_PROPOSERS];
	/* Receiving: datagrams of one frame byte plus max-datagram bytes. */
	struct udp_rx in;
	struct paxos_rx_datagram rx[UDP_READ_BATCH];
	struct mmsghdr tx_hdr[SEND_BATCH];
	struct iovec tx_iov[SEND_BATCH][2];
	size_t tx_owner[SEND_BATCH]; /* which of the caller's datagrams each entry sends */
};

static inline uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline void address_text(const struct sockaddr_in *a, char *buf, size_t cap)
{
	char addr[INET_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET, &a->sin_addr, addr, sizeof(addr));
	snprintf(buf, cap, "%s:%u", addr, (unsigned)ntohs(a->sin_port));
}

static inline bool same_address(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
	return a->sin_addr.s_addr == b->sin_addr.s_addr && a->sin_port == b->sin_port;
}

/* A control datagram (a SUBSCRIBE .. CHALLENGE frame) that socket k received from from. */
void unicast_control(struct unicast *u, enum socket_kind k, const uint8_t *buf, size_t len,
		     const struct sockaddr_in *from);
/* A learner's subscriptions: to every acceptor (and, listening to accepts, every proposer),
 * renewed every quarter lease and asked again sooner until each confirmed. */
int unicast_subscribe(struct unicast *u, char *err, size_t errlen);
/* A learner hosted without an acceptor: the proposers send it their acceptors group. */
void unicast_subscribe_accepts(struct unicast *u);
/* A learner that joined the votes group: subscribes to every acceptor again, now with them. */
void unicast_subscribe_votes(struct unicast *u);
/* A learner's subscription to acceptor id, whose address changed: anew, without a cookie. */
void unicast_resubscribe(struct unicast *u, uint32_t id);
/* A learner going away says so; a crashed one is dropped when its lease ends. */
void unicast_unsubscribe(struct unicast *u);
/* An acceptor's or proposer's side: drops the subscribers whose lease ended. */
void unicast_expire_subscribers(struct unicast *u, uint64_t now);

#endif
