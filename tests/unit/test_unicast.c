/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The unicast transport (lib/net/unicast.c) on loopback sockets, inside a private network
 * namespace: members receive on their configured addresses, a learner gets the learners group
 * only once it subscribed, a subscription ends with its lease or when the learner goes away,
 * and a member's address that this host does not have is a clear error.
 */
#include "check_main.h"
#include <arpa/inet.h>
#include <event2/event.h>
#include <paxos/paxos.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "config_fields.h"

static char logged[4096];

static void keep_log(void *arg, enum paxos_log_level level, const char *line)
{
	(void)arg;
	(void)level;
	size_t len = strlen(logged);
	snprintf(logged + len, sizeof(logged) - len, "%s\n", line);
}

struct inbox {
	size_t count[PAXOS_GROUP_COUNT];
	uint8_t last[64];
	size_t last_len;
};

static void to_inbox(void *arg, enum paxos_group g, struct paxos_rx_datagram *d, size_t n)
{
	struct inbox *in = arg;
	for (size_t i = 0; i < n; i++) {
		in->count[g]++;
		in->last_len = d[i].len < sizeof(in->last) ? d[i].len : sizeof(in->last);
		memcpy(in->last, d[i].data, in->last_len);
	}
}

static struct paxos_config unicast_config(void)
{
	struct paxos_config cfg;
	char err[256];
	const char *text = "transport unicast\nacceptors 2\nproposers 1\n"
			   "acceptor 0 127.0.0.1:7401\nacceptor 1 127.0.0.1:7402\n"
			   "proposer 0 127.0.0.1:7501\nsubscription-lease-ms 200\n";
	ck_assert_msg(paxos_config_parse(&cfg, text, strlen(text), "test", err, sizeof(err)) ==
			  PAXOS_OK,
		      "%s", err);
	return cfg;
}

static struct paxos_transport *open_unicast(struct event_base *base, const struct paxos_config *cfg,
					    struct inbox *in)
{
	char err[256];
	struct paxos_transport *t =
	    paxos_transport_open(NULL, base, cfg, to_inbox, in, err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	ck_assert_str_eq(t->ops->name, "unicast");
	return t;
}

static void run_ms(struct event_base *base, int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

/* Runs the loop until every one of fds has a datagram to read (at most 10 s): a loaded machine
 * may need far more than one short round to answer hundreds of datagrams. */
static void run_until_readable(struct event_base *base, const int *fds, int n)
{
	for (int round = 0; round < 1000; round++) {
		run_ms(base, 10);
		int ready = 0;
		for (int i = 0; i < n; i++) {
			struct pollfd p = {.fd = fds[i], .events = POLLIN};
			ready += poll(&p, 1, 0) == 1;
		}
		if (ready == n)
			return;
	}
}

static void send_to(struct paxos_transport *t, enum paxos_group g, const char *text)
{
	struct paxos_tx_datagram d = {.to = g, .data = (const uint8_t *)text, .len = strlen(text)};
	t->ops->send(t, &d, 1);
	ck_assert(d.sent);
	uint32_t members = g == PAXOS_GROUP_ACCEPTORS  ? 2
			   : g == PAXOS_GROUP_LEARNERS ? d.copies
						       : 1;
	ck_assert_uint_eq(d.copies, members);
}

/* Datagrams to the acceptors group reach both acceptors; to the proposers and submit groups
 * the proposer, each delivered as the group it was sent to. */
START_TEST(test_members_receive_their_groups)
{
	struct event_base *base = event_base_new();
	struct paxos_config cfg = unicast_config();
	struct inbox a0 = {0}, a1 = {0}, p0 = {0}, client = {0};
	char err[256];
	struct paxos_transport *ta0 = open_unicast(base, &cfg, &a0);
	struct paxos_transport *ta1 = open_unicast(base, &cfg, &a1);
	struct paxos_transport *tp0 = open_unicast(base, &cfg, &p0);
	struct paxos_transport *tc = open_unicast(base, &cfg, &client);
	ck_assert_int_eq(ta0->ops->host(ta0, PAXOS_ROLE_ACCEPTOR, 0, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(ta1->ops->host(ta1, PAXOS_ROLE_ACCEPTOR, 1, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(tp0->ops->host(tp0, PAXOS_ROLE_PROPOSER, 0, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(ta0->ops->join(ta0, PAXOS_GROUP_ACCEPTORS, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(ta1->ops->join(ta1, PAXOS_GROUP_ACCEPTORS, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(tp0->ops->join(tp0, PAXOS_GROUP_PROPOSERS, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(tp0->ops->join(tp0, PAXOS_GROUP_SUBMIT, err, sizeof(err)), PAXOS_OK);

	send_to(tc, PAXOS_GROUP_ACCEPTORS, "prepare");
	send_to(tc, PAXOS_GROUP_SUBMIT, "value");
	send_to(ta0, PAXOS_GROUP_PROPOSERS, "promise");
	run_ms(base, 100);
	ck_assert_uint_eq(a0.count[PAXOS_GROUP_ACCEPTORS], 1);
	ck_assert_uint_eq(a1.count[PAXOS_GROUP_ACCEPTORS], 1);
	ck_assert_uint_eq(p0.count[PAXOS_GROUP_SUBMIT], 1);
	ck_assert_uint_eq(p0.count[PAXOS_GROUP_PROPOSERS], 1);
	ck_assert_uint_eq(p0.last_len, strlen("promise"));
	ck_assert(memcmp(p0.last, "promise", p0.last_len) == 0);
	ck_assert_uint_eq(client.count[PAXOS_GROUP_ACCEPTORS] + client.count[PAXOS_GROUP_SUBMIT],
			  0);

	/* Only a hosted member receives its group; an address this host lacks is named. */
	ck_assert_int_eq(tc->ops->join(tc, PAXOS_GROUP_ACCEPTORS, err, sizeof(err)),
			 PAXOS_E_INVALID);
	ck_assert_str_eq(
	    err, "unicast: only a hosted acceptor (or a learner) receives the acceptors group");
	ck_assert_int_eq(tc->ops->host(tc, PAXOS_ROLE_ACCEPTOR, 0, err, sizeof(err)), PAXOS_E_IO);
	ck_assert_msg(strstr(err, "acceptor 0: bind 127.0.0.1:7401: Address already in use"), "%s",
		      err);
	ck_assert_int_eq(tc->ops->host(tc, PAXOS_ROLE_ACCEPTOR, 2, err, sizeof(err)),
			 PAXOS_E_CONFIG);
	ck_assert_str_eq(err, "unicast: no address for acceptor 2 in the configuration");

	struct paxos_config far = cfg;
	inet_pton(AF_INET, "10.1.2.3", &far.acceptor_address[0].addr);
	struct inbox none = {0};
	struct paxos_transport *tf = open_unicast(base, &far, &none);
	ck_assert_int_eq(tf->ops->host(tf, PAXOS_ROLE_ACCEPTOR, 0, err, sizeof(err)), PAXOS_E_IO);
	ck_assert_str_eq(err, "acceptor 0: bind 10.1.2.3:7401: Cannot assign requested address");

	struct paxos_transport *all[] = {ta0, ta1, tp0, tc, tf};
	for (size_t i = 0; i < sizeof(all) / sizeof(*all); i++)
		all[i]->ops->destroy(all[i]);
	event_base_free(base);
}
END_TEST

/* Learner traffic goes to subscribers only, and stops when the learner goes away. */
START_TEST(test_learners_subscribe)
{
	struct event_base *base = event_base_new();
	struct paxos_config cfg = unicast_config();
	struct inbox a0 = {0}, a1 = {0}, l = {0};
	char err[256];
	struct paxos_transport *ta0 = open_unicast(base, &cfg, &a0);
	struct paxos_transport *ta1 = open_unicast(base, &cfg, &a1);
	ck_assert_int_eq(ta0->ops->host(ta0, PAXOS_ROLE_ACCEPTOR, 0, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(ta1->ops->host(ta1, PAXOS_ROLE_ACCEPTOR, 1, err, sizeof(err)), PAXOS_OK);
	send_to(ta0, PAXOS_GROUP_LEARNERS, "accepted"); /* no subscriber: sent to no one */

	struct paxos_transport *tl = open_unicast(base, &cfg, &l);
	ck_assert_int_eq(tl->ops->join(tl, PAXOS_GROUP_LEARNERS, err, sizeof(err)), PAXOS_OK);
	run_ms(base, 50); /* the subscriptions arrive */
	ck_assert_uint_eq(l.count[PAXOS_GROUP_LEARNERS], 0);
	send_to(ta0, PAXOS_GROUP_LEARNERS, "accepted 0");
	send_to(ta1, PAXOS_GROUP_LEARNERS, "accepted 1");
	run_ms(base, 50);
	ck_assert_uint_eq(l.count[PAXOS_GROUP_LEARNERS], 2);
	/* Renewed every 50 ms: still subscribed after several leases. */
	run_ms(base, 600);
	send_to(ta0, PAXOS_GROUP_LEARNERS, "accepted 2");
	run_ms(base, 50);
	ck_assert_uint_eq(l.count[PAXOS_GROUP_LEARNERS], 3);

	/* An acceptor that never confirms is named once its silence lasts a lease. */
	ta1->ops->destroy(ta1);
	logged[0] = '\0';
	paxos_set_log(keep_log, NULL);
	run_ms(base, 400);
	paxos_set_log(NULL, NULL);
	ck_assert_msg(strstr(logged, "paxos: unicast: acceptor 1 (127.0.0.1:7402) has not renewed "
				     "this learner's subscription for "),
		      "%s", logged);
	tl->ops->destroy(tl);
	ta0->ops->destroy(ta0);
	event_base_free(base);
}
END_TEST

/* Sends text to group g from t; returns how many copies the network took. */
static uint32_t send_copies(struct paxos_transport *t, enum paxos_group g, const char *text)
{
	struct paxos_tx_datagram d = {.to = g, .data = (const uint8_t *)text, .len = strlen(text)};
	t->ops->send(t, &d, 1);
	ck_assert(d.sent);
	return d.copies;
}

/* A learner that joins the acceptors group subscribes to the proposers too: a proposer's
 * acceptors group (its accepts carry the values) reaches it, an acceptor's does not. */
START_TEST(test_learners_hear_the_proposers_accepts)
{
	struct event_base *base = event_base_new();
	struct paxos_config cfg = unicast_config();
	struct inbox a0 = {0}, a1 = {0}, p0 = {0}, l = {0}, plain = {0};
	char err[256];
	struct paxos_transport *ta0 = open_unicast(base, &cfg, &a0);
	struct paxos_transport *ta1 = open_unicast(base, &cfg, &a1);
	struct paxos_transport *tp0 = open_unicast(base, &cfg, &p0);
	ck_assert_int_eq(ta0->ops->host(ta0, PAXOS_ROLE_ACCEPTOR, 0, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(ta1->ops->host(ta1, PAXOS_ROLE_ACCEPTOR, 1, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(tp0->ops->host(tp0, PAXOS_ROLE_PROPOSER, 0, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(ta0->ops->join(ta0, PAXOS_GROUP_ACCEPTORS, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(ta1->ops->join(ta1, PAXOS_GROUP_ACCEPTORS, err, sizeof(err)), PAXOS_OK);

	struct paxos_transport *tl = open_unicast(base, &cfg, &l);
	ck_assert_int_eq(tl->ops->join(tl, PAXOS_GROUP_LEARNERS, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(tl->ops->join(tl, PAXOS_GROUP_ACCEPTORS, err, sizeof(err)), PAXOS_OK);
	struct paxos_transport *tplain = open_unicast(base, &cfg, &plain); /* learners only */
	ck_assert_int_eq(tplain->ops->join(tplain, PAXOS_GROUP_LEARNERS, err, sizeof(err)),
			 PAXOS_OK);
	run_ms(base, 50); /* the subscriptions arrive */

	ck_assert_uint_eq(send_copies(tp0, PAXOS_GROUP_ACCEPTORS, "accept"), 3); /* a0, a1, l */
	ck_assert_uint_eq(send_copies(ta0, PAXOS_GROUP_ACCEPTORS, "hello"), 2);
	run_ms(base, 50);
	ck_assert_uint_eq(a0.count[PAXOS_GROUP_ACCEPTORS], 2);
	ck_assert_uint_eq(a1.count[PAXOS_GROUP_ACCEPTORS], 2);
	ck_assert_uint_eq(l.count[PAXOS_GROUP_ACCEPTORS], 1);
	ck_assert_uint_eq(l.last_len, strlen("accept"));
	ck_assert(memcmp(l.last, "accept", l.last_len) == 0);
	/* A learner that did not join the acceptors group does not subscribe to the proposers. */
	ck_assert_uint_eq(plain.count[PAXOS_GROUP_ACCEPTORS], 0);

	/* Gone: the proposer stops sending to it at once. */
	tl->ops->destroy(tl);
	run_ms(base, 30);
	ck_assert_uint_eq(send_copies(tp0, PAXOS_GROUP_ACCEPTORS, "accept 2"), 2);
	tplain->ops->destroy(tplain);
	tp0->ops->destroy(tp0);
	ta1->ops->destroy(ta1);
	ta0->ops->destroy(ta0);
	event_base_free(base);
}
END_TEST

/* The votes reach the subscribers that count them: a learner that joined the votes group (an
 * application's or a proposer's), not one that did not (a learning acceptor's), which still gets
 * the rest of the learners group. A subscriber that says nothing of votes (an older learner)
 * gets them. */
START_TEST(test_votes_reach_the_learners_that_count_them)
{
	struct event_base *base = event_base_new();
	struct paxos_config cfg = unicast_config();
	struct inbox a0 = {0}, counting = {0}, learning = {0};
	char err[256];
	struct paxos_transport *ta0 = open_unicast(base, &cfg, &a0);
	ck_assert_int_eq(ta0->ops->host(ta0, PAXOS_ROLE_ACCEPTOR, 0, err, sizeof(err)), PAXOS_OK);
	struct paxos_transport *tc = open_unicast(base, &cfg, &counting);
	ck_assert_int_eq(tc->ops->join(tc, PAXOS_GROUP_LEARNERS, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(tc->ops->join(tc, PAXOS_GROUP_VOTES, err, sizeof(err)), PAXOS_OK);
	struct paxos_transport *tl = open_unicast(base, &cfg, &learning);
	ck_assert_int_eq(tl->ops->join(tl, PAXOS_GROUP_LEARNERS, err, sizeof(err)), PAXOS_OK);
	run_ms(base, 50); /* the subscriptions arrive */

	ck_assert_uint_eq(send_copies(ta0, PAXOS_GROUP_VOTES, "vote"), 1);
	ck_assert_uint_eq(send_copies(ta0, PAXOS_GROUP_LEARNERS, "state"), 2);
	run_ms(base, 50);
	ck_assert_uint_eq(counting.count[PAXOS_GROUP_LEARNERS], 2); /* votes come as learners' */
	ck_assert_uint_eq(learning.count[PAXOS_GROUP_LEARNERS], 1);
	ck_assert_uint_eq(learning.last_len, strlen("state"));

	/* Joining the votes group later says so to the acceptors at once. */
	ck_assert_int_eq(tl->ops->join(tl, PAXOS_GROUP_VOTES, err, sizeof(err)), PAXOS_OK);
	run_ms(base, 50);
	ck_assert_uint_eq(send_copies(ta0, PAXOS_GROUP_VOTES, "vote 2"), 2);
	run_ms(base, 50);
	ck_assert_uint_eq(learning.count[PAXOS_GROUP_LEARNERS], 2);
	tl->ops->destroy(tl);
	tc->ops->destroy(tc);
	ta0->ops->destroy(ta0);
	event_base_free(base);
}
END_TEST

/* A learner that subscribed to a proposer before it was up is asked again until it confirms,
 * well before the next renewal (a quarter lease, 15 s here): without the leader's accepts it
 * knows no value the votes name. */
START_TEST(test_learners_ask_a_late_proposer_again)
{
	struct event_base *base = event_base_new();
	struct paxos_config cfg = unicast_config();
	cfg.subscription_lease_ms = 60000;
	struct inbox a0 = {0}, a1 = {0}, p0 = {0}, l = {0};
	char err[256];
	struct paxos_transport *ta0 = open_unicast(base, &cfg, &a0);
	struct paxos_transport *ta1 = open_unicast(base, &cfg, &a1);
	ck_assert_int_eq(ta0->ops->host(ta0, PAXOS_ROLE_ACCEPTOR, 0, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(ta1->ops->host(ta1, PAXOS_ROLE_ACCEPTOR, 1, err, sizeof(err)), PAXOS_OK);
	struct paxos_transport *tl = open_unicast(base, &cfg, &l);
	ck_assert_int_eq(tl->ops->join(tl, PAXOS_GROUP_LEARNERS, err, sizeof(err)), PAXOS_OK);
	run_ms(base, 50); /* the acceptors confirm: no retry is due for them */
	ck_assert_int_eq(tl->ops->join(tl, PAXOS_GROUP_ACCEPTORS, err, sizeof(err)), PAXOS_OK);
	run_ms(base, 30); /* its subscription to proposer 0 is lost: no one listens there yet */
	struct paxos_transport *tp0 = open_unicast(base, &cfg, &p0);
	ck_assert_int_eq(tp0->ops->host(tp0, PAXOS_ROLE_PROPOSER, 0, err, sizeof(err)), PAXOS_OK);
	uint32_t copies = 0;
	for (int i = 0; i < 100 && copies < 3; i++) {
		run_ms(base, 20);
		copies = send_copies(tp0, PAXOS_GROUP_ACCEPTORS, "accept");
	}
	ck_assert_uint_eq(copies, 3); /* a0, a1 and the learner, within 2 s */
	tp0->ops->destroy(tp0);
	tl->ops->destroy(tl);
	ta1->ops->destroy(ta1);
	ta0->ops->destroy(ta0);
	event_base_free(base);
}
END_TEST

static int subscriber_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in any = {.sin_family = AF_INET};
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&any, sizeof(any)), 0);
	return fd;
}

/* Control datagrams as a learner's transport writes them (no key): frame (0x40 subscribe,
 * 0x42 unsubscribe), version 2, the lease in ms and the cookie, big-endian. */
static void control(int fd, uint8_t frame, uint16_t lease_ms, uint64_t cookie)
{
	struct sockaddr_in acceptor = {.sin_family = AF_INET, .sin_port = htons(7401)};
	inet_pton(AF_INET, "127.0.0.1", &acceptor.sin_addr);
	uint8_t msg[14] = {frame, 2, 0, 0, (uint8_t)(lease_ms >> 8), (uint8_t)lease_ms};
	for (int i = 0; i < 8; i++)
		msg[6 + i] = (uint8_t)(cookie >> (56 - 8 * i));
	ck_assert_int_eq(
	    sendto(fd, msg, sizeof(msg), 0, (struct sockaddr *)&acceptor, sizeof(acceptor)),
	    (ssize_t)sizeof(msg));
}

/* The cookie of an answer buf (frame, version, member, cookie) of 14 bytes. */
static uint64_t cookie_in(const uint8_t *buf)
{
	uint64_t c = 0;
	for (int i = 0; i < 8; i++)
		c = c << 8 | buf[6 + i];
	return c;
}

/* Subscribes from fd as a learner does: challenged first, then confirmed; the cookie. */
static uint64_t subscribe(struct event_base *base, int fd, uint16_t lease_ms)
{
	uint8_t buf[64];
	control(fd, 0x40, lease_ms, 0);
	run_ms(base, 30);
	ck_assert_int_eq(recv(fd, buf, sizeof(buf), 0), 14);
	ck_assert_uint_eq(buf[0], 0x43); /* a challenge, naming acceptor 0 */
	ck_assert_uint_eq(buf[5], 0);
	control(fd, 0x40, lease_ms, cookie_in(buf));
	run_ms(base, 30);
	ck_assert_int_eq(recv(fd, buf, sizeof(buf), 0), 14);
	ck_assert_uint_eq(buf[0], 0x41); /* the confirmation names acceptor 0 */
	ck_assert_uint_eq(buf[5], 0);
	return cookie_in(buf);
}

/* A subscriber that goes silent (crashed: no unsubscription) is dropped when its lease ends. */
START_TEST(test_lease_expires)
{
	struct event_base *base = event_base_new();
	struct paxos_config cfg = unicast_config();
	cfg.subscription_lease_ms = 5000;
	struct inbox a0 = {0};
	char err[256];
	struct paxos_transport *ta0 = open_unicast(base, &cfg, &a0);
	ck_assert_int_eq(ta0->ops->host(ta0, PAXOS_ROLE_ACCEPTOR, 0, err, sizeof(err)), PAXOS_OK);

	int fd = subscriber_socket();
	subscribe(base, fd, 1000);
	uint8_t buf[64];
	send_to(ta0, PAXOS_GROUP_LEARNERS, "x");
	ck_assert_int_eq(recv(fd, buf, sizeof(buf), 0), 2); /* group byte, then the datagram */
	ck_assert_uint_eq(buf[0], PAXOS_GROUP_LEARNERS);
	ck_assert_uint_eq(buf[1], 'x');
	run_ms(base, 1100);
	send_to(ta0, PAXOS_GROUP_LEARNERS, "y");
	ck_assert_int_lt(recv(fd, buf, sizeof(buf), 0), 0);
	close(fd);

	/* A learner that stops says so, and gets nothing more. */
	fd = subscriber_socket();
	uint64_t cookie = subscribe(base, fd, 60000); /* more than this acceptor grants: 5000 */
	send_to(ta0, PAXOS_GROUP_LEARNERS, "z");
	ck_assert_int_eq(recv(fd, buf, sizeof(buf), 0), 2);
	control(fd, 0x42, 0, cookie);
	run_ms(base, 30);
	send_to(ta0, PAXOS_GROUP_LEARNERS, "w");
	ck_assert_int_lt(recv(fd, buf, sizeof(buf), 0), 0);
	close(fd);
	ta0->ops->destroy(ta0);
	event_base_free(base);
}
END_TEST

/*
 * A subscription is bound to its source: the same bytes (cookie included) sent again from 300
 * other ports take no slot and bring no learner traffic, only a challenge to each port (which
 * a spoofed source never answers). An unsubscription without the cookie removes no one. One
 * address holds at most 32 slots; the learner that subscribed keeps getting its traffic.
 */
START_TEST(test_replayed_subscription_takes_no_slot)
{
	struct event_base *base = event_base_new();
	struct paxos_config cfg = unicast_config();
	cfg.subscription_lease_ms = 5000;
	struct inbox a0 = {0};
	char err[256];
	struct paxos_transport *ta0 = open_unicast(base, &cfg, &a0);
	ck_assert_int_eq(ta0->ops->host(ta0, PAXOS_ROLE_ACCEPTOR, 0, err, sizeof(err)), PAXOS_OK);
	int learner = subscriber_socket();
	uint64_t cookie = subscribe(base, learner, 5000);
	ck_assert_uint_eq(send_copies(ta0, PAXOS_GROUP_LEARNERS, "a"), 1);
	/* Its subscription says nothing of votes: it gets them. */
	ck_assert_uint_eq(send_copies(ta0, PAXOS_GROUP_VOTES, "v"), 1);

	uint8_t buf[64];
	int replay[300];
	for (int i = 0; i < 300; i++) {
		replay[i] = subscriber_socket();
		control(replay[i], 0x40, 5000, cookie);
		control(replay[i], 0x42, 0, 0); /* and drop the learner, were it by address only */
	}
	run_until_readable(base, replay, 300);
	ck_assert_uint_eq(send_copies(ta0, PAXOS_GROUP_LEARNERS, "b"), 1);
	for (int i = 0; i < 300; i++) {
		ck_assert_int_eq(recv(replay[i], buf, sizeof(buf), 0), 14);
		ck_assert_uint_eq(buf[0], 0x43); /* challenged, not confirmed */
		ck_assert_int_lt(recv(replay[i], buf, sizeof(buf), 0), 0);
	}
	while (recv(learner, buf, sizeof(buf), 0) > 0)
		;
	control(learner, 0x42, 0, 0); /* the learner's own address, without its cookie */
	run_ms(base, 30);
	ck_assert_uint_eq(send_copies(ta0, PAXOS_GROUP_LEARNERS, "c"), 1);

	/* Those that answer their challenge are subscribers, up to 32 from one address. */
	for (int i = 0; i < 300; i++)
		control(replay[i], 0x40, 5000, 0);
	run_ms(base, 50);
	for (int i = 0; i < 300; i++) {
		ck_assert_int_eq(recv(replay[i], buf, sizeof(buf), 0), 14);
		control(replay[i], 0x40, 5000, cookie_in(buf));
	}
	logged[0] = '\0';
	paxos_set_log(keep_log, NULL);
	run_ms(base, 100);
	paxos_set_log(NULL, NULL);
	ck_assert_uint_eq(send_copies(ta0, PAXOS_GROUP_LEARNERS, "d"), 32);
	ck_assert_msg(strstr(logged, "its address has 32 subscriptions already"), "%s", logged);
	for (int i = 0; i < 300; i++)
		close(replay[i]);
	close(learner);
	ta0->ops->destroy(ta0);
	event_base_free(base);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("unicast");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_members_receive_their_groups);
	tcase_add_test(tc, test_learners_subscribe);
	tcase_add_test(tc, test_learners_hear_the_proposers_accepts);
	tcase_add_test(tc, test_votes_reach_the_learners_that_count_them);
	tcase_add_test(tc, test_learners_ask_a_late_proposer_again);
	tcase_add_test(tc, test_lease_expires);
	tcase_add_test(tc, test_replayed_subscription_takes_no_slot);
	suite_add_tcase(s, tc);
	return s;
}
