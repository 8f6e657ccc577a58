/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-admin: the acceptor and proposer sets of a running cluster (membership-alpha). It
 * asks the acceptors for the configuration history their learners applied
 * (paxos_node_query_membership: the newest a quorum of its own members vouch for), without
 * delivering the log, and hears which acceptors run from their state messages. "status" prints
 * them; a change is checked (known id, no change in progress, a live quorum of the new
 * acceptor set, a proposer left), sent to the proposers with a MAC under admin-key-file (they
 * check it again before they propose it), and waited for until it is chosen and in force.
 * An acceptor answers when its state messages come from the address the configuration gives
 * it: a moved acceptor's old process does not.
 */
#include <paxos/config.h>
#include <paxos/log.h>
#include <paxos/membership.h>
#include <paxos/node.h>

#include "cli.h"
#include "runner.h"

#include <arpa/inet.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "config_fields.h"

static const char *const program = "paxos-admin";

static void usage(void *arg, FILE *out)
{
	(void)arg;
	fprintf(
	    out,
	    "Usage: paxos-admin -c FILE [options] COMMAND\n"
	    "Shows or changes the acceptor and proposer sets of a running cluster\n"
	    "(membership-alpha).\n"
	    "Commands:\n"
	    "  status                    the configuration in force, from which instance, its\n"
	    "                            members, the acceptors that answer, a change in progress\n"
	    "  add-acceptor ID [HOST:PORT]  make acceptor ID (running, not a member) a member;\n"
	    "                            unicast: at HOST:PORT, carried in the change, when\n"
	    "                            paxos.conf has no address for it\n"
	    "  remove-acceptor ID        stop counting acceptor ID's votes\n"
	    "  replace-acceptor OLD NEW  both in one change\n"
	    "  set-address ID HOST:PORT  unicast: acceptor ID (a member) is at HOST:PORT from\n"
	    "                            now on; run it there (with its store, or it recovers)\n"
	    "  add-proposer ID           let proposer ID lead (start it once the change is in "
	    "force)\n"
	    "  remove-proposer ID        proposer ID leads no more and may not start again\n"
	    "Options:\n"
	    "  -c, --config FILE   cluster configuration (paxos.conf)\n"
	    "  -p, --partition P   the partition (default 0)\n"
	    "  -t, --timeout-ms T  give up after T ms (default 30000)\n"
	    "  -f, --force         make the change even when it leaves no live quorum of\n"
	    "                      acceptors that answer, or no live proposer\n"
	    "  -h, --help          this text\n"
	    "      --version       the library's version and wire version\n"
	    "A change needs admin-key-file in paxos.conf (the proposers hold the same key).\n"
	    "A change exits 0 once it is in force and prints the instance it is in force from;\n"
	    "1 with the reason when it cannot be made; 2 for bad arguments.\n");
}

struct admin {
	struct paxos_config cfg;
	struct paxos_node *node;
	struct event_base *base;
	struct event *timer;
	paxos_time started, last_ask;
	paxos_time timeout;
	int op;                          /* 0 status, 1 change */
	enum paxos_membership_kind kind; /* of the change */
	bool has_address;                /* add-acceptor ID HOST:PORT */
	uint32_t address_id;
	struct paxos_endpoint address;
	uint32_t from_id, members, members_before;
	bool asked;
	bool force;         /* --force: no check of who answers */
	bool told_withheld; /* said why the cluster does not answer */
	int status;         /* exit status once done, -1 until then */
};

static paxos_time now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (paxos_time)ts.tv_sec * 1000000 + (paxos_time)ts.tv_nsec / 1000;
}

static void members_text(uint32_t members, char *buf, size_t cap)
{
	size_t used = 0;
	buf[0] = 0;
	for (uint32_t rest = members; rest && used < cap; rest &= rest - 1)
		used += (size_t)snprintf(buf + used, cap - used, "%s%d", used ? "," : "",
					 __builtin_ctz(rest));
	if (!members)
		snprintf(buf, cap, "none");
}

/* The library's warnings and errors only: its info lines (counters) are not the answer. */
static void log_warnings(void *arg, enum paxos_log_level level, const char *line)
{
	(void)arg;
	if (level <= PAXOS_LOG_WARNING)
		fprintf(stderr, "%s\n", line);
}

static uint32_t live(const struct admin *a)
{
	return paxos_node_acceptors_heard(a->node, 3 * a->cfg.acceptor_repeat_ms + 100);
}

/* Acceptors whose state messages say they withhold their votes (recovering lost state). */
static uint32_t withholding(const struct admin *a)
{
	return paxos_node_acceptors_withholding(a->node, 3 * a->cfg.acceptor_repeat_ms + 100);
}

/* Why no value is chosen, when acceptors say they withhold their votes; nothing else. */
static void print_withheld(const struct admin *a, FILE *out)
{
	uint32_t w = withholding(a);
	if (!w)
		return;
	char ids[128];
	members_text(w, ids, sizeof(ids));
	fprintf(out,
		"acceptors withholding their votes: %s (recovering lost state: their logs say "
		"what they wait for; no value is chosen while a quorum of them withholds)\n",
		ids);
	if (a->cfg.membership_alpha)
		fprintf(out,
			"with membership-alpha no new log begins by itself when every acceptor "
			"lost its state: the configuration files speak of the old log "
			"(docs/operating.md, \"Changing the cluster\")\n");
}

/* Whether a quorum of configuration c's members withholds its votes. */
static bool quorum_withholds(const struct admin *a, const struct paxos_configuration *c)
{
	uint32_t voting = c->members & ~withholding(a);
	return (uint32_t)__builtin_popcount(voting) < paxos_membership_quorum_of(c->members);
}

static void finish(struct admin *a, int status)
{
	a->status = status;
	event_base_loopbreak(a->base);
}

/* The proposers of c among the ids paxos.conf has. */
static uint32_t proposers_of(const struct admin *a, const struct paxos_configuration *c)
{
	uint32_t ids = a->cfg.proposers >= 32 ? UINT32_MAX : (1u << a->cfg.proposers) - 1;
	return c->proposers & ids;
}

/* A change of the proposer set: what change_allowed() checks for it. */
static bool proposers_change_allowed(struct admin *a, const struct paxos_configuration *c)
{
	uint32_t have = proposers_of(a, c);
	uint32_t added = a->members & ~a->members_before;
	uint32_t removed = a->members_before & ~a->members;
	char text[128];
	members_text(have, text, sizeof(text));
	if ((added & have) || (removed & ~have)) {
		fprintf(stderr, "%s: %s: configuration %u has proposers %s\n", program,
			(added & have) ? "the proposer to add is a member already"
				       : "the proposer to remove is no member",
			c->id, text);
		return false;
	}
	uint32_t target = (have | added) & ~removed;
	if (!target) {
		fprintf(stderr,
			"%s: that would leave no proposer: configuration %u has proposers %s\n",
			program, c->id, text);
		return false;
	}
	a->from_id = c->id;
	a->members = target;
	return true;
}

static void print_status(const struct admin *a)
{
	const struct paxos_membership *m = paxos_node_membership(a->node);
	paxos_iid next = paxos_membership_applied(m) + 1;
	const struct paxos_configuration *now = paxos_membership_at(m, next);
	const struct paxos_configuration *latest = paxos_membership_latest(m);
	char members[128], heard[128];
	members_text(now->members, members, sizeof(members));
	members_text(live(a), heard, sizeof(heard));
	printf("configuration %u in force from instance %llu: acceptors %s (quorum %u)\n", now->id,
	       (unsigned long long)now->first, members, paxos_membership_quorum_of(now->members));
	printf("acceptors answering: %s; delivered up to instance %llu\n", heard,
	       (unsigned long long)(next - 1));
	members_text(proposers_of(a, now), members, sizeof(members));
	printf("proposers %s\n", members);
	print_withheld(a, stdout);
	/* Addresses the log carried (unicast: add-acceptor ID HOST:PORT, set-address). */
	for (uint32_t id = 0; id < a->cfg.acceptors && id < PAXOS_MAX_ACCEPTORS; id++) {
		uint32_t addr;
		uint16_t port;
		char where[INET_ADDRSTRLEN] = "?";
		if (!paxos_membership_address(m, id, &addr, &port))
			continue;
		inet_ntop(AF_INET, &addr, where, sizeof(where));
		printf("acceptor %u at %s:%u (from the log, not paxos.conf)\n", id, where, port);
	}
	if (latest != now) {
		members_text(latest->members, members, sizeof(members));
		members_text(proposers_of(a, latest), heard, sizeof(heard));
		printf("change in progress: configuration %u (acceptors %s, proposers %s) in force "
		       "from instance %llu\n",
		       latest->id, members, heard, (unsigned long long)latest->first);
	}
	fflush(stdout);
}

/* How long an acceptor to add may take to answer before it counts as not running: its first
 * state message can come later than the others' (over unicast, one tick after our subscription
 * reached it; later on a busy machine). */
#define ADMIN_ANSWER_WAIT_US 3000000u

/* The cluster answered: a quorum of the acceptors of the newest configuration vouched for
 * the history (paxos_node_membership_settled), their state messages had time to arrive, and
 * the acceptor to add answered or had its time to. No replay of the log: the history comes
 * from the acceptors' learners, which deliver it at the head. */
static bool caught_up(struct admin *a, paxos_time now)
{
	if (now - a->started < (paxos_time)3 * a->cfg.acceptor_repeat_ms * 1000 || !live(a) ||
	    !paxos_node_membership_settled(a->node))
		return false;
	if (a->op == 1 && a->kind == PAXOS_MEMBERSHIP_ACCEPTORS &&
	    (a->members & ~a->members_before & ~live(a)) && now - a->started < ADMIN_ANSWER_WAIT_US)
		return false;
	return true;
}

/* A move of acceptor address_id: a member, and the others a live quorum while it moves (it
 * is heard nowhere from the change on until it runs at its new address). */
static bool move_allowed(struct admin *a, const struct paxos_configuration *c)
{
	uint32_t bit = 1u << a->address_id;
	char have[128];
	members_text(c->members, have, sizeof(have));
	if (!(c->members & bit)) {
		fprintf(stderr, "%s: acceptor %u is no member: configuration %u has acceptors %s\n",
			program, a->address_id, c->id, have);
		return false;
	}
	uint32_t quorum = paxos_membership_quorum_of(c->members);
	uint32_t answering = (uint32_t)__builtin_popcount(c->members & ~bit & live(a));
	if (answering < quorum && !a->force) {
		fprintf(stderr,
			"%s: moving acceptor %u would leave no live quorum while it moves: %u of "
			"the other acceptors answer, configuration %u needs %u\n",
			program, a->address_id, answering, c->id, quorum);
		return false;
	}
	a->from_id = c->id;
	a->members = c->members;
	return true;
}

/* Checks the change against what the cluster says now; prints why not and returns false. */
static bool change_allowed(struct admin *a)
{
	const struct paxos_membership *m = paxos_node_membership(a->node);
	const struct paxos_configuration *c = paxos_membership_latest(m);
	if (paxos_membership_pending(m)) {
		fprintf(stderr,
			"%s: a change is in progress: configuration %u is in force from instance "
			"%llu only; try again then\n",
			program, c->id, (unsigned long long)c->first);
		return false;
	}
	if (a->kind == PAXOS_MEMBERSHIP_PROPOSERS)
		return proposers_change_allowed(a, c);
	if (a->kind == PAXOS_MEMBERSHIP_ADDRESS)
		return move_allowed(a, c);
	uint32_t added = a->members & ~a->members_before;
	uint32_t removed = a->members_before & ~a->members;
	if ((added & c->members) || (removed & ~c->members)) {
		char have[128];
		members_text(c->members, have, sizeof(have));
		fprintf(stderr, "%s: %s: configuration %u has acceptors %s\n", program,
			(added & c->members) ? "the acceptor to add is a member already"
					     : "the acceptor to remove is no member",
			c->id, have);
		return false;
	}
	uint32_t target = (c->members | added) & ~removed;
	if (!target) {
		fprintf(stderr, "%s: that would leave no acceptor\n", program);
		return false;
	}
	uint32_t up = live(a);
	if ((added & ~up) && !a->force) {
		fprintf(stderr, "%s: acceptor %d does not answer: start it first\n", program,
			__builtin_ctz(added & ~up));
		return false;
	}
	uint32_t quorum = paxos_membership_quorum_of(target);
	uint32_t answering = (uint32_t)__builtin_popcount(target & up);
	if (answering < quorum && !a->force) {
		fprintf(stderr,
			"%s: the new acceptor set would have no live quorum: %u of its members "
			"answer, it needs %u\n",
			program, answering, quorum);
		return false;
	}
	a->from_id = c->id;
	a->members = target;
	return true;
}

/* How long status waits for the acceptors to say why before it answers that they do not. */
#define ADMIN_REASON_US 1000000u

/*
 * Status of a cluster whose acceptors are fixed (membership-alpha 0): who answers, who
 * withholds its votes, and the log's generation, from the acceptors' state messages. Within
 * ADMIN_REASON_US: a cluster that refuses to vote says so in its state messages.
 */
static void fixed_status(struct admin *a, paxos_time now)
{
	uint32_t heard = live(a),
		 all = a->cfg.acceptors >= 32 ? UINT32_MAX : (1u << a->cfg.acceptors) - 1;
	bool settle = now - a->started >= (paxos_time)3 * a->cfg.acceptor_repeat_ms * 1000 + 100000;
	if (!settle || (heard != all && now - a->started < ADMIN_REASON_US))
		return;
	if (!heard) {
		fprintf(stderr,
			"%s: no acceptor answered within %u ms: none runs, or none is heard here\n",
			program, ADMIN_REASON_US / 1000);
		finish(a, 1);
		return;
	}
	char ids[128];
	members_text(all, ids, sizeof(ids));
	printf("acceptors %s (quorum %u), fixed (membership-alpha 0)\n", ids,
	       a->cfg.acceptors / 2 + 1);
	members_text(heard, ids, sizeof(ids));
	printf("acceptors answering: %s; log generation %llu\n", ids,
	       (unsigned long long)paxos_node_generation(a->node));
	print_withheld(a, stdout);
	fflush(stdout);
	uint32_t voting = heard & ~withholding(a);
	finish(a, (uint32_t)__builtin_popcount(voting) > a->cfg.acceptors / 2 ? 0 : 1);
}

/* Before the change is asked for: true once the cluster answered and allows it; status is
 * answered here. */
static bool ready_to_ask(struct admin *a, paxos_time now)
{
	/* A cluster that refuses to vote may never settle the answer: say why at once. */
	if (!a->told_withheld && now - a->started >= ADMIN_REASON_US && withholding(a)) {
		a->told_withheld = true;
		print_withheld(a, stderr);
	}
	if (!caught_up(a, now))
		return false;
	if (a->op == 0) {
		/* The acceptors' states, which say who withholds its votes, within a few
		 * repeats. */
		if (now - a->started < (paxos_time)3 * a->cfg.acceptor_repeat_ms * 1000 + 100000)
			return false;
		print_status(a);
		const struct paxos_membership *m = paxos_node_membership(a->node);
		finish(a,
		       quorum_withholds(a, paxos_membership_at(m, paxos_membership_applied(m) + 1))
			   ? 1
			   : 0);
		return false;
	}
	if (!change_allowed(a)) {
		finish(a, 1);
		return false;
	}
	a->asked = true;
	return true;
}

/* What configuration c made of what the change is about: the members of its kind, or 0 when
 * it does not put acceptor address_id at the address asked (*addr, *port: where it does). */
static uint32_t made_members(const struct admin *a, const struct paxos_membership *m,
			     const struct paxos_configuration *c, uint32_t *addr, uint16_t *port)
{
	*addr = 0;
	*port = 0;
	if (a->kind == PAXOS_MEMBERSHIP_PROPOSERS)
		return proposers_of(a, c);
	if (a->kind == PAXOS_MEMBERSHIP_ADDRESS &&
	    (!paxos_membership_address(m, a->address_id, addr, port) ||
	     *addr != a->address.addr.s_addr || *port != a->address.port))
		return 0; /* another change made the configuration */
	return c->members;
}

/* A configuration newer than the one the change was checked against: ours (then done once
 * in force) or another change's (then the change failed). */
static void on_new_configuration(struct admin *a, const struct paxos_membership *m,
				 const struct paxos_configuration *c)
{
	uint32_t addr, made;
	uint16_t port;
	made = made_members(a, m, c, &addr, &port);
	if (c->id != a->from_id + 1 || made != a->members) {
		fprintf(stderr, "%s: another change was chosen first (configuration %u)\n", program,
			c->id);
		finish(a, 1);
		return;
	}
	if (paxos_membership_pending(m))
		return;
	if (a->kind == PAXOS_MEMBERSHIP_ADDRESS) {
		char where[INET_ADDRSTRLEN] = "?";
		inet_ntop(AF_INET, &addr, where, sizeof(where));
		printf("configuration %u in force from instance %llu: acceptor %u at %s:%u\n",
		       c->id, (unsigned long long)c->first, a->address_id, where, port);
	} else {
		char text[128];
		members_text(made, text, sizeof(text));
		printf("configuration %u in force from instance %llu: %s %s\n", c->id,
		       (unsigned long long)c->first,
		       a->kind == PAXOS_MEMBERSHIP_PROPOSERS ? "proposers" : "acceptors", text);
	}
	fflush(stdout);
	finish(a, 0);
}

/* Asked through the proposers like a client value: repeated until chosen. */
static void ask_change(struct admin *a, paxos_time now)
{
	if (a->last_ask && now - a->last_ask <= 500000)
		return;
	a->last_ask = now;
	int rc =
	    a->kind == PAXOS_MEMBERSHIP_PROPOSERS ? paxos_node_change_proposers(a->node, a->members)
	    : a->kind == PAXOS_MEMBERSHIP_ADDRESS
		? paxos_node_change_acceptor_address(a->node, a->address_id, &a->address)
	    : a->has_address
		? paxos_node_change_membership_at(a->node, a->members, a->address_id, &a->address)
		: paxos_node_change_membership(a->node, a->members);
	if (rc != PAXOS_OK) {
		fprintf(stderr, "%s: %s\n", program, paxos_node_error(a->node));
		finish(a, 1);
	}
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct admin *a = arg;
	paxos_time now = now_us();
	if (a->cfg.membership_alpha == 0) {
		fixed_status(a, now);
		return;
	}
	/* Asked again as long as it runs: the answers also say when a change is in force. */
	if (paxos_node_query_membership(a->node) != PAXOS_OK || paxos_node_failed(a->node)) {
		fprintf(stderr, "%s: %s\n", program, paxos_node_error(a->node));
		finish(a, 1);
		return;
	}
	if (now - a->started > a->timeout) {
		fprintf(stderr, "%s: %s after %llu ms\n", program,
			!a->asked
			    ? "the cluster did not answer (no acceptor state heard, or no "
			      "quorum of the acceptors answered with the configuration)"
			    : "the change was not chosen and in force (a proposer that refused "
			      "it says why in its log)",
			(unsigned long long)(a->timeout / 1000));
		finish(a, 1);
		return;
	}
	if (!a->asked && !ready_to_ask(a, now))
		return;
	const struct paxos_membership *m = paxos_node_membership(a->node);
	const struct paxos_configuration *c = paxos_membership_latest(m);
	if (c->id > a->from_id)
		on_new_configuration(a, m, c);
	else
		ask_change(a, now);
}

/* "10.0.0.5:7205": 0, or -1 after saying why. */
static int parse_address(const char *text, struct paxos_endpoint *e)
{
	char host[INET_ADDRSTRLEN];
	const char *colon = strrchr(text, ':');
	char *end;
	unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
	size_t n = colon ? (size_t)(colon - text) : 0;
	if (!colon || n == 0 || n >= sizeof(host) || !colon[1] || *end || port == 0 ||
	    port > 65535) {
		fprintf(stderr, "%s: '%s' is not HOST:PORT\n", program, text);
		return -1;
	}
	memcpy(host, text, n);
	host[n] = 0;
	if (inet_pton(AF_INET, host, &e->addr) != 1) {
		fprintf(stderr, "%s: '%s' is not an IPv4 address\n", program, host);
		return -1;
	}
	e->port = (uint16_t)port;
	return 0;
}

static void ignore_value(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)arg;
	(void)iid;
	(void)position;
	(void)v;
}

/* add-proposer ID, remove-proposer ID: 0, or -1 when the command is none of them. */
static int parse_proposer_command(struct admin *a, int argc, char **argv)
{
	uint32_t x = 0;
	bool add = strcmp(argv[0], "add-proposer") == 0;
	if ((!add && strcmp(argv[0], "remove-proposer") != 0) || argc != 2 ||
	    paxos_runner_id(program, "proposer", argv[1], a->cfg.proposers, &x))
		return -1;
	a->kind = PAXOS_MEMBERSHIP_PROPOSERS;
	if (add)
		a->members = 1u << x;
	else
		a->members_before = 1u << x;
	return 0;
}

/* add-acceptor ID [HOST:PORT], set-address ID HOST:PORT: 0, or -1 when the command is none of
 * them or its address is bad. */
static int parse_address_command(struct admin *a, int argc, char **argv)
{
	uint32_t x = 0;
	bool add = strcmp(argv[0], "add-acceptor") == 0;
	bool move = strcmp(argv[0], "set-address") == 0;
	if (!(add && (argc == 2 || argc == 3)) && !(move && argc == 3))
		return -1;
	if (paxos_runner_id(program, "acceptor", argv[1], a->cfg.acceptors, &x))
		return -1;
	if (argc == 3 && parse_address(argv[2], &a->address) != 0)
		return -1;
	if (add)
		a->members = 1u << x;
	else
		a->kind = PAXOS_MEMBERSHIP_ADDRESS;
	a->has_address = add && argc == 3;
	a->address_id = x;
	return 0;
}

/* remove-acceptor ID, replace-acceptor OLD NEW: 0, or -1 when the command is none of them. */
static int parse_removal_command(struct admin *a, int argc, char **argv)
{
	uint32_t x = 0, y = 0;
	if (strcmp(argv[0], "remove-acceptor") == 0 && argc == 2 &&
	    !paxos_runner_id(program, "acceptor", argv[1], a->cfg.acceptors, &x)) {
		a->members_before = 1u << x;
		return 0;
	}
	if (strcmp(argv[0], "replace-acceptor") == 0 && argc == 3 &&
	    !paxos_runner_id(program, "acceptor", argv[1], a->cfg.acceptors, &x) &&
	    !paxos_runner_id(program, "acceptor", argv[2], a->cfg.acceptors, &y) && x != y) {
		a->members_before = 1u << x;
		a->members = 1u << y;
		return 0;
	}
	return -1;
}

static int parse_command(struct admin *a, int argc, char **argv)
{
	if (argc < 1)
		return -1;
	if (strcmp(argv[0], "status") == 0 && argc == 1) {
		a->op = 0;
		return 0;
	}
	a->op = 1;
	a->kind = PAXOS_MEMBERSHIP_ACCEPTORS;
	if (parse_proposer_command(a, argc, argv) == 0 ||
	    parse_address_command(a, argc, argv) == 0 || parse_removal_command(a, argc, argv) == 0)
		return 0;
	return -1;
}

/* A command this cluster cannot take: 0, or 1 after saying why. */
static int refuse_command(const struct admin *a, const char *config)
{
	if (a->cfg.membership_alpha == 0 && a->op != 0) {
		fprintf(stderr,
			"%s: %s: membership-alpha is 0: the acceptors and proposers are fixed "
			"(docs/operating.md, \"Changing the cluster\")\n",
			program, config);
		return 1;
	}
	if (a->op == 1 && !a->cfg.admin_key_file[0]) {
		fprintf(stderr,
			"%s: %s: a change needs admin-key-file, the operators' key, which the "
			"proposers hold too (docs/operating.md, \"Changing the cluster\")\n",
			program, config);
		return 1;
	}
	if (a->op == 1 && a->kind == PAXOS_MEMBERSHIP_ADDRESS &&
	    a->cfg.transport != PAXOS_TRANSPORT_UNICAST) {
		fprintf(stderr,
			"%s: %s: set-address needs transport unicast: with multicast an acceptor "
			"is heard wherever it runs (restart it there, nothing to change)\n",
			program, config);
		return 1;
	}
	return 0;
}

/* The node that asks the acceptors (or, fixed acceptors, hears them): 0, or 1 after saying
 * why. */
static int start_node(struct admin *a)
{
	char err[512] = "cannot create an event loop";
	a->base = event_base_new();
	a->node = a->base ? paxos_node_new(a->base, &a->cfg, err, sizeof(err)) : NULL;
	if (a->node && a->force)
		paxos_node_force_changes(a->node, true);
	if (!a->node || (a->cfg.membership_alpha
			     ? paxos_node_query_membership(a->node)
			     : paxos_node_add_learner(a->node, ignore_value, NULL)) != PAXOS_OK) {
		fprintf(stderr, "%s: %s\n", program, a->node ? paxos_node_error(a->node) : err);
		return 1;
	}
	/* The acceptor to add is heard at the address given (its state messages tell it runs). */
	if (a->has_address &&
	    paxos_node_set_acceptor_address(a->node, a->address_id, &a->address) != PAXOS_OK) {
		fprintf(stderr, "%s: %s\n", program, paxos_node_error(a->node));
		return 1;
	}
	return 0;
}

static int take_option(void *arg, int opt, const char *value)
{
	struct admin *a = arg;
	uint32_t timeout_ms;
	if (opt == 'f')
		a->force = true;
	else if (opt != 't')
		return -1;
	else if (paxos_runner_id(program, "--timeout-ms", value, 86400001, &timeout_ms))
		return 2;
	else
		a->timeout = (paxos_time)timeout_ms * 1000;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {{"timeout-ms", required_argument, NULL, 't'},
						{"force", no_argument, NULL, 'f'},
						{NULL}};
	const struct paxos_cli_spec spec = {
	    program, PAXOS_CLI_CONFIG | PAXOS_CLI_PARTITION, "+t:f", options, take_option, usage};
	static struct admin a = {.timeout = (paxos_time)30000 * 1000};
	struct paxos_cli cli;
	int status = paxos_cli_parse(&spec, &a, argc, argv, &cli);
	if (status != PAXOS_CLI_RUN)
		return status;
	if (!cli.config) {
		usage(NULL, stderr);
		return 2;
	}
	if (paxos_cli_partition_config(&cli, &a.cfg) != 0)
		return 2;
	if (parse_command(&a, argc - cli.operands, argv + cli.operands) != 0) {
		usage(NULL, stderr);
		return 2;
	}
	if (refuse_command(&a, cli.config) != 0)
		return 1;
	/* Fixed acceptors: their state messages, heard by a learner that follows the head. */
	if (a.cfg.membership_alpha == 0)
		a.cfg.learner_start = PAXOS_START_FROM_CURRENT;
	paxos_set_log(log_warnings, NULL);
	a.status = -1;
	if (start_node(&a) != 0)
		return 1;
	a.timer = event_new(a.base, -1, EV_PERSIST, on_timer, &a);
	struct timeval every = {0, 20000};
	event_add(a.timer, &every);
	a.started = now_us();
	event_base_dispatch(a.base);
	event_free(a.timer);
	paxos_node_free(a.node);
	event_base_free(a.base);
	return a.status < 0 ? 1 : a.status;
}
