/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Configuration requests on nodes, through the stub transport: a node asks and adopts what a
 * quorum of members vouch for, a proposer waits for the answers; an acceptor without a learner
 * (learning-acceptors no) takes pushed histories and a proposer pushes them; a member moved to
 * a new address; a node that starts from a saved history.
 */
#include "check_main.h"
#include <arpa/inet.h>
#include <event2/event.h>
#include <paxos/membership.h>
#include <paxos/paxos.h>
#include <stdlib.h>
#include <string.h>

#include "config_fields.h"
#include "membership_file.h"
#include "stub_transport.h"
#include "confquery_fixture.h"
#include "support.h"

/* ---- a node asks and adopts (through the stub transport) ---- */

static void note_ask(void *arg, const struct paxos_header *h, const struct paxos_message *m)
{
	(void)h;
	*(int *)arg += m->type == PAXOS_MSG_CONFIG_ASK;
}

static int asks_sent(const struct stub *s)
{
	int asks = 0;
	stub_each_sent(s, 0, note_ask, &asks);
	return asks;
}

/* Acceptor @p from's datagram with a config_info naming acceptor @p named, carrying @p len
 * bytes of @p history. */
static void answer(struct stub *s, uint32_t from, uint32_t named, const uint8_t *history,
		   size_t len, bool settled)
{
	uint8_t buf[2048];
	struct paxos_header h = {.role = PAXOS_ROLE_ACCEPTOR, .sender_id = from};
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, sizeof(buf), &h);
	struct paxos_message m = {.type = PAXOS_MSG_CONFIG_INFO};
	m.u.config_info = (struct paxos_config_info){.acceptor_id = named,
						     .nonce = 1,
						     .settled = settled,
						     .history = {history, (uint32_t)len}};
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	struct paxos_rx_datagram d = {.data = buf, .len = e.len, .from = NULL};
	s->deliver(s->deliver_arg, PAXOS_GROUP_LEARNERS, &d, 1);
}

static void answer_with(struct stub *s, uint32_t from, const struct paxos_membership *m)
{
	uint8_t buf[PAXOS_MEMBERSHIP_ENCODED_MAX];
	size_t len = paxos_membership_encode(m, buf, sizeof(buf));
	answer(s, from, from, buf, len, true);
}

/* paxos-admin's way: a node with no learner asks, ignores forged and bad answers, and takes the
 * history once a quorum of its newest configuration's members vouch for it. */
START_TEST(test_node_query_adopts)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	cfg.acceptors = 5;
	cfg.initial_members = 3;
	cfg.membership_alpha = ALPHA;
	cfg.proposer_window = ALPHA;
	char err[256];
	struct event_base *base = event_base_new();
	struct stub *s = calloc(1, sizeof(*s));
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert(!paxos_node_membership_settled(n));
	ck_assert_int_eq(paxos_node_query_membership(n), PAXOS_OK);
	paxos_node_report_counters(n); /* flush what is queued */
	event_base_loop(base, EVLOOP_NONBLOCK);
	ck_assert_int_ge(asks_sent(s), 1);
	ck_assert(s->joined[PAXOS_GROUP_LEARNERS]);

	/* {0,1,2} -> {0,1,2,3} -> {0,1,3} -> {0,3,4} */
	struct paxos_membership *h = history(3, 100);
	uint8_t buf[PAXOS_MEMBERSHIP_ENCODED_MAX];
	size_t len = paxos_membership_encode(h, buf, sizeof(buf));
	uint64_t malformed = paxos_node_transport_counters(n)->malformed_datagrams;
	/* Acceptor 1 speaking for 0 and 3: dropped by the screening, not counted as answers. */
	answer(s, 1, 0, buf, len, true);
	answer(s, 1, 3, buf, len, true);
	ck_assert(!paxos_node_membership_settled(n));
	/* Bytes that are no history, a cut one: dropped and counted. */
	uint8_t junk[40];
	memset(junk, 0xab, sizeof(junk));
	answer(s, 0, 0, junk, sizeof(junk), true);
	answer(s, 0, 0, buf, len - 3, true);
	ck_assert_uint_eq(paxos_node_transport_counters(n)->malformed_datagrams, malformed + 2);
	ck_assert(!paxos_node_membership_settled(n));
	/* Another cluster's history (configuration 2 of other members): dropped. */
	struct paxos_membership *other = paxos_membership_create(0x7, 0x3, ALPHA);
	change(other, 10, 0x6);
	answer_with(s, 3, other);
	answer_with(s, 4, other);
	ck_assert(!paxos_node_membership_settled(n));
	/* Two true answers from members of configuration 4 ({0,3,4}): a quorum. */
	answer_with(s, 0, h);
	ck_assert(!paxos_node_membership_settled(n));
	answer_with(s, 3, h);
	ck_assert(paxos_node_membership_settled(n));
	const struct paxos_membership *m = paxos_node_membership(n);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 4);
	ck_assert_uint_eq(paxos_membership_latest(m)->members, 0x19);
	ck_assert_uint_eq(paxos_membership_applied(m), 100);
	/* A later answer that goes further is taken too: a change comes into force. */
	struct paxos_membership *later = history(3, 100);
	change(later, 101, 0x1b);
	paxos_membership_skip_to(later, 101 + ALPHA);
	answer_with(s, 0, later);
	answer_with(s, 4, later);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 4); /* 2 of {0,1,3,4}: no quorum */
	answer_with(s, 3, later);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 5);
	ck_assert(!paxos_membership_pending(m));
	paxos_membership_free(later);
	paxos_membership_free(other);
	paxos_membership_free(h);
	paxos_node_free(n);
	free(s);
	event_base_free(base);
}
END_TEST

/* A proposer started from paxos.conf alone leads nothing until the answers settle its
 * history; then it leads. */
START_TEST(test_node_proposer_waits_for_answers)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	cfg.acceptors = 3;
	cfg.proposers = 1;
	cfg.membership_alpha = ALPHA;
	cfg.proposer_window = ALPHA;
	cfg.check_quorum = false; /* the stub's acceptors answer asks only, never beat */
	char err[256], dir[] = "/tmp/paxos-confquery-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cfg.storage_path, sizeof(cfg.storage_path), "%s", dir);
	struct event_base *base = event_base_new();
	struct stub *s = calloc(1, sizeof(*s));
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_proposer(n, 0), PAXOS_OK);
	ck_assert(!paxos_node_membership_settled(n));
	struct timeval tv = {0, 300000};
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
	ck_assert_uint_ne(paxos_node_leader(n), 0);
	ck_assert_int_ge(asks_sent(s), 1);
	/* Acceptors 0 and 1 answer: configuration 1 (acceptors 0,1,2, proposer 0), nothing
	 * chosen yet. */
	struct paxos_membership *h = paxos_membership_create(0x7, 0x1, ALPHA);
	answer_with(s, 0, h);
	answer_with(s, 1, h);
	ck_assert(paxos_node_membership_settled(n));
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
	ck_assert_uint_eq(paxos_node_leader(n), 0);
	paxos_membership_free(h);
	paxos_node_free(n);
	free(s);
	event_base_free(base);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- an acceptor without a learner (learning-acceptors no) ---- */

/* Proposer @p from's config_push of history @p m to the acceptors group. */
static void push(struct stub *s, uint32_t from, const struct paxos_membership *m, bool settled)
{
	uint8_t history[PAXOS_MEMBERSHIP_ENCODED_MAX], buf[2048];
	size_t len = paxos_membership_encode(m, history, sizeof(history));
	struct paxos_header h = {.role = PAXOS_ROLE_PROPOSER, .sender_id = from};
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, sizeof(buf), &h);
	struct paxos_message msg = {.type = PAXOS_MSG_CONFIG_PUSH};
	msg.u.config_push = (struct paxos_config_push){
	    .proposer_id = from, .settled = settled, .history = {history, (uint32_t)len}};
	ck_assert_int_eq(paxos_encoder_add(&e, &msg), PAXOS_OK);
	struct paxos_rx_datagram d = {.data = buf, .len = e.len, .from = NULL};
	s->deliver(s->deliver_arg, PAXOS_GROUP_ACCEPTORS, &d, 1);
}

/* One message of @p type from @p role @p from to the acceptors group. */
static void to_acceptors(struct stub *s, enum paxos_role role, uint32_t from,
			 const struct paxos_message *m)
{
	stub_deliver(s, PAXOS_GROUP_ACCEPTORS, role, from, m);
}

struct seen_info {
	int infos;
	uint32_t acceptor, config; /* the last one's */
	bool settled;
	int pushes;
	uint32_t pushed_config;
};

static void note_info(void *arg, const struct paxos_header *h, const struct paxos_message *m)
{
	(void)h;
	struct seen_info *seen = arg;
	const struct paxos_value *v = NULL;
	if (m->type == PAXOS_MSG_CONFIG_INFO) {
		seen->infos++;
		seen->acceptor = m->u.config_info.acceptor_id;
		seen->settled = m->u.config_info.settled;
		v = &m->u.config_info.history;
	} else if (m->type == PAXOS_MSG_CONFIG_PUSH) {
		seen->pushes++;
		v = &m->u.config_push.history;
	} else {
		return;
	}
	struct paxos_membership *d = paxos_membership_decode_history(v->data, v->len, ALPHA);
	ck_assert_ptr_nonnull(d);
	if (m->type == PAXOS_MSG_CONFIG_INFO)
		seen->config = paxos_membership_latest(d)->id;
	else
		seen->pushed_config = paxos_membership_latest(d)->id;
	paxos_membership_free(d);
}

/* learning-acceptors no: acceptor 2 hosts no learner, so it applies no log. It takes the
 * configuration the proposers push (never one that disagrees with its own), keeps it beside
 * its store, answers configuration requests with it, says it was removed, and withholds its
 * votes where the configuration in force leaves it out. */
START_TEST(test_node_acceptor_without_learner_takes_pushes)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	cfg.acceptors = 5;
	cfg.initial_members = 3;
	cfg.proposers = 2;
	cfg.membership_alpha = ALPHA;
	cfg.proposer_window = ALPHA;
	cfg.learning_acceptors = false;
	char err[256], dir[] = "/tmp/paxos-confpush-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cfg.storage_path, sizeof(cfg.storage_path), "%s", dir);
	struct event_base *base = event_base_new();
	struct stub *s = calloc(1, sizeof(*s));
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_acceptor(n, 2, paxos_storage_memory_new()), PAXOS_OK);
	ck_assert(!s->joined[PAXOS_GROUP_LEARNERS]); /* no learner */
	const struct paxos_membership *m = paxos_node_membership(n);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 1);
	ck_assert(!paxos_node_membership_settled(n));

	/* An acceptor cannot push: the header must be the proposer's it names. */
	struct paxos_membership *h2 = history(2, 25); /* {0,1,3} from 28 */
	uint8_t bytes[PAXOS_MEMBERSHIP_ENCODED_MAX];
	size_t len = paxos_membership_encode(h2, bytes, sizeof(bytes));
	struct paxos_message forged = {.type = PAXOS_MSG_CONFIG_PUSH};
	forged.u.config_push = (struct paxos_config_push){0, true, {bytes, (uint32_t)len}};
	to_acceptors(s, PAXOS_ROLE_ACCEPTOR, 0, &forged);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 1);

	/* Proposer 1 pushes configuration 3: taken, kept beside the store, settled. */
	push(s, 1, h2, true);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 3);
	ck_assert_uint_eq(paxos_membership_latest(m)->members, 0xb);
	ck_assert_uint_eq(paxos_membership_applied(m), 25);
	ck_assert(paxos_node_membership_settled(n));
	char file[PAXOS_PATH_MAX + 64];
	snprintf(file, sizeof(file), "%s/acceptor-2", dir);
	struct paxos_membership *kept = NULL;
	ck_assert_int_eq(paxos_membership_file_read(file, ALPHA, &kept, err, sizeof(err)),
			 PAXOS_OK);
	ck_assert_ptr_nonnull(kept);
	ck_assert_uint_eq(paxos_membership_latest(kept)->id, 3);
	paxos_membership_free(kept);
	/* Another cluster's history (configuration 2 of other members): dropped, counted. */
	uint64_t malformed = paxos_node_transport_counters(n)->malformed_datagrams;
	struct paxos_membership *other = paxos_membership_create(0x7, 0x3, ALPHA);
	change(other, 10, 0x6);
	change(other, 20, 0x7);
	change(other, 30, 0x3);
	paxos_membership_skip_to(other, 60);
	push(s, 0, other, true);
	ck_assert_uint_eq(paxos_node_transport_counters(n)->malformed_datagrams, malformed + 1);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 3);
	/* An older one changes nothing. */
	struct paxos_membership *h1 = history(1, 12);
	push(s, 0, h1, true);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 3);

	/* It answers a configuration request like an acceptor with a learner. */
	size_t first = s->sent;
	struct paxos_message ask = {.type = PAXOS_MSG_CONFIG_ASK, .u.config_ask = {7}};
	to_acceptors(s, PAXOS_ROLE_CLIENT, 0, &ask);
	paxos_node_report_counters(n);
	event_base_loop(base, EVLOOP_NONBLOCK);
	struct seen_info seen = {0};
	stub_each_sent(s, first, note_info, &seen);
	ck_assert_int_eq(seen.infos, 1);
	ck_assert_uint_eq(seen.acceptor, 2);
	ck_assert_uint_eq(seen.config, 3);
	ck_assert(seen.settled);

	/* Configuration 4 ({0,3,4} from instance 38) removes it: it says so, and withholds its
	 * votes from instance 38 on; below, it still votes (or withholds them while it
	 * recovers, as any acceptor). */
	struct paxos_membership *h3 = history(3, 40);
	push(s, 0, h3, true);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 4);
	const struct paxos_counters *ac = paxos_node_counters(n, PAXOS_ROLE_ACCEPTOR);
	uint64_t handled = ac->votes_withheld + ac->promises_sent;
	struct paxos_message prepare = {
	    .type = PAXOS_MSG_PREPARE,
	    .u.prepare = {.iid = 45, .ballot = 1u * PAXOS_MAX_PROPOSERS}};
	to_acceptors(s, PAXOS_ROLE_PROPOSER, 0, &prepare);
	ck_assert_uint_eq(ac->votes_withheld + ac->promises_sent, handled);
	prepare.u.prepare.iid = 30; /* configuration 3 ({0,1,3}) governs it */
	to_acceptors(s, PAXOS_ROLE_PROPOSER, 0, &prepare);
	ck_assert_uint_eq(ac->votes_withheld + ac->promises_sent, handled);
	prepare.u.prepare.iid = 5; /* configuration 1 ({0,1,2}) */
	to_acceptors(s, PAXOS_ROLE_PROPOSER, 0, &prepare);
	ck_assert_uint_gt(ac->votes_withheld + ac->promises_sent, handled);
	/* Above what is known (applied 40 + 8): it votes, as nothing says it may not. */
	handled = ac->votes_withheld + ac->promises_sent;
	prepare.u.prepare.iid = 49;
	to_acceptors(s, PAXOS_ROLE_PROPOSER, 0, &prepare);
	ck_assert_uint_gt(ac->votes_withheld + ac->promises_sent, handled);

	paxos_membership_free(h3);
	paxos_membership_free(h1);
	paxos_membership_free(h2);
	paxos_membership_free(other);
	paxos_node_free(n);
	free(s);
	event_base_free(base);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* learning-acceptors no: a proposer sends its history to the acceptors once it settled, and
 * every second after. */
START_TEST(test_node_proposer_pushes)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	cfg.acceptors = 3;
	cfg.proposers = 1;
	cfg.membership_alpha = ALPHA;
	cfg.proposer_window = ALPHA;
	cfg.learning_acceptors = false;
	char err[256], dir[] = "/tmp/paxos-confpush-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cfg.storage_path, sizeof(cfg.storage_path), "%s", dir);
	struct event_base *base = event_base_new();
	struct stub *s = calloc(1, sizeof(*s));
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_proposer(n, 0), PAXOS_OK);
	struct paxos_membership *h = paxos_membership_create(0x7, 0x1, ALPHA);
	change(h, 10, 0x3);
	paxos_membership_skip_to(h, 12);
	answer_with(s, 0, h);
	answer_with(s, 1, h);
	ck_assert(paxos_node_membership_settled(n));
	paxos_node_report_counters(n);
	event_base_loop(base, EVLOOP_NONBLOCK);
	struct seen_info seen = {0};
	stub_each_sent(s, 0, note_info, &seen);
	ck_assert_int_ge(seen.pushes, 1);
	ck_assert_uint_eq(seen.pushed_config, 2);
	paxos_membership_free(h);
	paxos_node_free(n);
	free(s);
	event_base_free(base);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- a member moved to a new address ---- */

static void note_move(void *arg, const struct paxos_header *h, const struct paxos_message *m)
{
	(void)h;
	enum paxos_membership_kind kind;
	uint32_t from, set;
	if (m->type == PAXOS_MSG_CHANGE &&
	    paxos_membership_decode_of(&m->u.change.command, &kind, &from, &set) == PAXOS_OK &&
	    kind == PAXOS_MEMBERSHIP_ADDRESS)
		*(int *)arg += 1;
}

static struct paxos_node *moving_node(struct stub *s, struct event_base *base)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	cfg.acceptors = 3;
	cfg.proposers = 1;
	cfg.membership_alpha = ALPHA;
	cfg.proposer_window = ALPHA;
	support_admin_key(&cfg);
	for (uint32_t a = 0; a < 3; a++) {
		inet_pton(AF_INET, "127.0.0.1", &cfg.acceptor_address[a].addr);
		cfg.acceptor_address[a].port = (uint16_t)(7200 + a);
	}
	char err[256];
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_query_membership(n), PAXOS_OK);
	struct paxos_membership *h = paxos_membership_create(0x7, 0x1, ALPHA);
	answer_with(s, 0, h);
	answer_with(s, 1, h);
	ck_assert(paxos_node_membership_settled(n));
	paxos_membership_free(h);
	return n;
}

/* paxos_node_change_acceptor_address: refused with multicast, for a non-member, without a port
 * or to the address it has; else the command goes to the proposers. A history that carries
 * the move gives the transport the new address at once. */
START_TEST(test_node_moves_an_acceptor)
{
	struct event_base *base = event_base_new();
	struct stub *s = calloc(1, sizeof(*s));
	struct paxos_node *n = moving_node(s, base);
	struct paxos_endpoint e = {.port = 7301};
	inet_pton(AF_INET, "127.0.0.2", &e.addr);
	ck_assert_int_eq(paxos_node_change_acceptor_address(n, 1, &e), PAXOS_E_INVALID);
	ck_assert_ptr_nonnull(strstr(paxos_node_error(n), "unicast"));
	paxos_node_free(n);
	free(s);

	s = calloc(1, sizeof(*s));
	s->unicast = true;
	n = moving_node(s, base);
	ck_assert_int_eq(paxos_node_change_acceptor_address(n, 3, &e), PAXOS_E_INVALID);
	ck_assert_ptr_nonnull(strstr(paxos_node_error(n), "no member"));
	struct paxos_endpoint bad = e;
	bad.port = 0;
	ck_assert_int_eq(paxos_node_change_acceptor_address(n, 1, &bad), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_node_change_acceptor_address(n, 1, NULL), PAXOS_E_INVALID);
	struct paxos_endpoint same = {.port = 7201};
	inet_pton(AF_INET, "127.0.0.1", &same.addr);
	ck_assert_int_eq(paxos_node_change_acceptor_address(n, 1, &same), PAXOS_E_INVALID);
	ck_assert_ptr_nonnull(strstr(paxos_node_error(n), "already"));
	size_t first = s->sent;
	ck_assert_int_eq(paxos_node_change_acceptor_address(n, 1, &e), PAXOS_OK);
	paxos_node_report_counters(n);
	event_base_loop(base, EVLOOP_NONBLOCK);
	int moves = 0;
	stub_each_sent(s, first, note_move, &moves);
	ck_assert_int_eq(moves, 1);

	/* The cluster chose it in instance 3: a history that carries it is adopted, and the
	 * transport sends to acceptor 1 at its new address. */
	struct paxos_membership *h = paxos_membership_create(0x7, 0x1, ALPHA);
	uint8_t cmd[PAXOS_MEMBERSHIP_COMMAND_MAX];
	paxos_membership_command_address(1, 0x7, 1, e.addr.s_addr, e.port, cmd);
	struct paxos_value v = {cmd, sizeof(cmd)};
	ck_assert_int_eq(paxos_membership_apply(h, 3, &v), 1);
	paxos_membership_skip_to(h, 20);
	answer_with(s, 0, h);
	answer_with(s, 2, h);
	ck_assert_uint_eq(paxos_membership_latest(paxos_node_membership(n))->id, 2);
	ck_assert_uint_eq(s->acceptor_address[1].port, 7301);
	ck_assert_uint_eq(s->acceptor_address[1].addr.s_addr, e.addr.s_addr);
	/* Moving it again to where it is now: refused. */
	ck_assert_int_eq(paxos_node_change_acceptor_address(n, 1, &e), PAXOS_E_INVALID);
	paxos_membership_free(h);
	paxos_node_free(n);
	free(s);
	event_base_free(base);
}
END_TEST

static void no_delivery(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)arg;
	(void)iid;
	(void)position;
	(void)v;
}

/* A history the application kept with a snapshot (paxos_node_set_membership_history): taken
 * whole, acceptor addresses included, before the roles; refused with another window or after
 * a role was added. */
START_TEST(test_node_takes_a_saved_history)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	cfg.acceptors = 5;
	cfg.initial_members = 3;
	cfg.proposers = 2;
	cfg.membership_alpha = ALPHA;
	cfg.proposer_window = ALPHA;
	char err[256];
	struct event_base *base = event_base_new();
	struct stub *s = calloc(1, sizeof(*s));
	s->unicast = true;
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	struct paxos_membership *h = history(3, 100);
	uint8_t cmd[PAXOS_MEMBERSHIP_COMMAND_MAX];
	paxos_membership_command_address(4, 0x19, 4, 0x0900000a, 7205, cmd);
	struct paxos_value v = {cmd, sizeof(cmd)};
	ck_assert_int_eq(paxos_membership_apply(h, 101, &v), 1);
	struct paxos_membership *other = paxos_membership_create(0x7, 0x3, ALPHA + 1);
	ck_assert_int_eq(paxos_node_set_membership_history(n, other), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_node_set_membership_history(n, NULL), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_node_set_membership_history(n, h), PAXOS_OK);
	ck_assert_int_eq(paxos_node_set_learner_start(n, 90), PAXOS_OK);
	ck_assert_int_eq(paxos_node_add_learner(n, no_delivery, NULL), PAXOS_OK);
	const struct paxos_membership *m = paxos_node_membership(n);
	ck_assert_ptr_ne(m, h); /* a copy */
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 5);
	ck_assert_uint_eq(paxos_membership_applied(m), 101);
	ck_assert(paxos_node_membership_settled(n));
	uint32_t addr;
	uint16_t port;
	ck_assert(paxos_membership_address(m, 4, &addr, &port));
	ck_assert_uint_eq(port, 7205);
	ck_assert_uint_eq(s->acceptor_address[4].port, 7205); /* given to the transport */
	ck_assert_int_eq(paxos_node_set_membership_history(n, h), PAXOS_E_INVALID);
	paxos_membership_free(other);
	paxos_membership_free(h);
	paxos_node_free(n);
	free(s);
	event_base_free(base);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("confquery_node");
	TCase *t = tcase_create("confquery_node");
	tcase_add_test(t, test_node_query_adopts);
	tcase_add_test(t, test_node_proposer_waits_for_answers);
	tcase_add_test(t, test_node_acceptor_without_learner_takes_pushes);
	tcase_add_test(t, test_node_proposer_pushes);
	tcase_add_test(t, test_node_moves_an_acceptor);
	tcase_add_test(t, test_node_takes_a_saved_history);
	suite_add_tcase(s, t);
	return s;
}
