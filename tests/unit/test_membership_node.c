/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Membership changes kept durable, on nodes through the stub transport: an acceptor starts from
 * the history it kept, a learner keeps each change before it goes on, removed acceptors' votes
 * and removed proposers are refused, a proposer checks a change before it proposes it, and a
 * node takes its history from a snapshot.
 */
#include "check_main.h"
#include <event2/event.h>
#include <ftw.h>
#include <paxos/acceptor.h>
#include <paxos/membership.h>
#include <paxos/paxos.h>
#include <paxos/storage_backends.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin_mac.h"
#include "codec.h"
#include "config_fields.h"
#include "membership_file.h"
#include "stub_transport.h"
#include "membership_fixture.h"
#include "support.h"

static char lines[16][320];
static unsigned nlines;

static void keep_line(void *arg, enum paxos_log_level level, const char *line)
{
	(void)arg;
	(void)level;
	if (nlines < 16)
		snprintf(lines[nlines++], sizeof(lines[0]), "%s", line);
}

static bool logged(const char *what)
{
	for (unsigned i = 0; i < nlines; i++)
		if (strstr(lines[i], what))
			return true;
	return false;
}

static void config_for(struct paxos_config *cfg)
{
	paxos_config_defaults(cfg);
	cfg->acceptors = 5;
	cfg->initial_members = 3;
	cfg->membership_alpha = ALPHA;
	cfg->proposers = 1;
	cfg->phase1_timeout_ms = cfg->phase2_timeout_ms = cfg->hole_check_ms = 60000;
	snprintf(cfg->storage_path, sizeof(cfg->storage_path), "%s", base_dir);
}

/* A memory acceptor restarted with paxos.conf's first configuration, beside a kept history:
 * it starts from the history, and its recovery waits for the members of the one in force. */
START_TEST(test_acceptor_starts_from_kept)
{
	make_base();
	struct paxos_config cfg;
	config_for(&cfg);
	char dir[128], err[512];
	snprintf(dir, sizeof(dir), "%s/acceptor-2", base_dir);
	struct paxos_membership *h = replaced_history();
	ck_assert_int_eq(paxos_membership_file_write(dir, h, err, sizeof(err)), PAXOS_OK);
	paxos_membership_free(h);

	nlines = 0;
	paxos_set_log(keep_line, NULL);
	struct event_base *base = event_base_new();
	struct stub *s = calloc(1, sizeof(*s));
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_acceptor(n, 2, paxos_storage_memory_new()), PAXOS_OK);
	const struct paxos_membership *m = paxos_node_membership(n);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(paxos_membership_latest(m)->id, 3);
	ck_assert_uint_eq(paxos_membership_latest(m)->members, 0x1c);
	ck_assert_msg(logged("configuration 3 (acceptors 2,3,4 from instance 21), as learned "
			     "before"),
		      "%s", lines[0]);
	ck_assert(paxos_node_recovering(n));
	const struct paxos_counters *c = paxos_node_counters(n, PAXOS_ROLE_LEARNER);
	ck_assert_uint_eq(c->membership_configuration, 3);
	paxos_node_free(n);
	free(s);

	/* Acceptor 0, removed in configuration 3, is told so at its start. */
	snprintf(dir, sizeof(dir), "%s/acceptor-0", base_dir);
	h = replaced_history();
	ck_assert_int_eq(paxos_membership_file_write(dir, h, err, sizeof(err)), PAXOS_OK);
	paxos_membership_free(h);
	nlines = 0;
	s = calloc(1, sizeof(*s));
	n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_acceptor(n, 0, paxos_storage_memory_new()), PAXOS_OK);
	ck_assert(logged("acceptor 0: refused: configuration 3 (acceptors 2,3,4, from instance "
			 "21) does not include it"));
	paxos_node_free(n);
	free(s);

	/* A paxos.conf with fewer acceptor ids than the history names: a clear error. */
	cfg.acceptors = 4;
	s = calloc(1, sizeof(*s));
	n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_int_ne(paxos_node_add_acceptor(n, 2, paxos_storage_memory_new()), PAXOS_OK);
	ck_assert_msg(strstr(paxos_node_error(n), "configuration 3 has acceptors 2,3,4, but "
						  "paxos.conf has only 4 acceptor ids"),
		      "%s", paxos_node_error(n));
	paxos_node_free(n);
	free(s);
	paxos_set_log(NULL, NULL);
	event_base_free(base);
	remove_base();
}
END_TEST

/* Acceptor a accepted value v in iid at the first ballot of proposer 0. */
static void vote(struct stub *s, uint32_t a, paxos_iid iid, const struct paxos_value *v, bool final)
{
	uint8_t buf[256];
	struct paxos_header from = {.role = PAXOS_ROLE_ACCEPTOR, .sender_id = a};
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, sizeof(buf), &from);
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted = (struct paxos_accepted){.iid = iid,
					       .ballot = PAXOS_MAX_PROPOSERS,
					       .acceptor_id = a,
					       .value = *v,
					       .final = final};
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	struct paxos_rx_datagram d = {.data = buf, .len = e.len, .from = NULL};
	s->deliver(s->deliver_arg, PAXOS_GROUP_LEARNERS, &d, 1);
}

/* Acceptors 0 and 1 accepted value v in iid: a quorum of {0,1,2}. */
static void chosen(struct stub *s, paxos_iid iid, const struct paxos_value *v)
{
	vote(s, 0, iid, v, false);
	vote(s, 1, iid, v, false);
}

static void on_value(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)arg;
	(void)iid;
	(void)position;
	(void)v;
}

/* Runs the loop until a line with text is logged (a change is acted on once the node's
 * keeper thread wrote it), for at most 10 s. */
static void run_until_logged(struct event_base *base, const char *text)
{
	for (int i = 0; i < 10000 && !logged(text); i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		if (!logged(text))
			usleep(1000);
	}
}

/* A learner's node keeps a chosen change in its directory as it delivers it, and acts on it
 * once it is kept; started again there, it goes on from it and takes the command delivered
 * again for the one it made. */
START_TEST(test_learner_keeps_change)
{
	make_base();
	struct paxos_config cfg;
	config_for(&cfg);
	char dir[128], err[512];
	snprintf(dir, sizeof(dir), "%s/learner", base_dir);
	uint8_t b[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value grow = support_command(1, 0xf, b);
	struct event_base *base = event_base_new();
	nlines = 0;
	paxos_set_log(keep_line, NULL);
	for (int life = 0; life < 2; life++) {
		struct stub *s = calloc(1, sizeof(*s));
		struct paxos_node *n =
		    paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
		ck_assert_msg(n != NULL, "%s", err);
		ck_assert_int_eq(paxos_node_keep_membership(n, dir), PAXOS_OK);
		ck_assert_int_eq(paxos_node_add_learner(n, on_value, NULL), PAXOS_OK);
		ck_assert_int_eq(paxos_node_keep_membership(n, dir), PAXOS_E_INVALID);
		const struct paxos_membership *m = paxos_node_membership(n);
		ck_assert_uint_eq(paxos_membership_latest(m)->id, life ? 2 : 1);
		chosen(s, 1, &grow);
		run_until_logged(base, "configuration 2 chosen in instance 1");
		ck_assert_uint_eq(paxos_node_next_iid(n), 2);
		ck_assert_uint_eq(paxos_membership_latest(m)->id, 2);
		ck_assert_uint_eq(paxos_membership_members(m, 1 + ALPHA), 0xf);
		struct paxos_membership *kept;
		ck_assert_int_eq(paxos_membership_file_read(dir, ALPHA, &kept, err, sizeof(err)),
				 PAXOS_OK);
		ck_assert_ptr_nonnull(kept);
		ck_assert_uint_eq(paxos_membership_latest(kept)->id, 2);
		ck_assert_uint_eq(paxos_membership_latest(kept)->first, 1 + ALPHA);
		paxos_membership_free(kept);
		ck_assert(logged(
		    "configuration 2 chosen in instance 1: acceptors 0,1,2,3, proposers 0 from "
		    "instance 11"));
		ck_assert(!logged("outdated"));
		nlines = 0;
		paxos_node_free(n);
		free(s);
	}
	paxos_set_log(NULL, NULL);
	event_base_free(base);
	remove_base();
}
END_TEST

/* A learner that knows configuration 3 refuses the votes of acceptor 0, which it leaves
 * out, and says so once; a final answer of 0 still passes, and votes where 0 was a member
 * count. */
START_TEST(test_removed_votes_refused)
{
	make_base();
	struct paxos_config cfg;
	config_for(&cfg);
	char dir[128], err[512];
	snprintf(dir, sizeof(dir), "%s/learner", base_dir);
	struct paxos_membership *h = replaced_history();
	ck_assert_int_eq(paxos_membership_file_write(dir, h, err, sizeof(err)), PAXOS_OK);
	paxos_membership_free(h);
	struct event_base *base = event_base_new();
	nlines = 0;
	paxos_set_log(keep_line, NULL);
	struct stub *s = calloc(1, sizeof(*s));
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_keep_membership(n, dir), PAXOS_OK);
	ck_assert_int_eq(paxos_node_add_learner(n, on_value, NULL), PAXOS_OK);
	uint8_t b[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value v = support_command(9, 0x3, b); /* outdated: any value will do */
	nlines = 0;
	vote(s, 0, 21, &v, false);
	vote(s, 0, 22, &v, false);
	ck_assert_uint_eq(nlines, 1);
	ck_assert_msg(strstr(lines[0], "refused: votes of acceptor 0 in instance 21 and on: "
				       "configuration 3 (acceptors 2,3,4) does not include it"),
		      "%s", lines[0]);
	vote(s, 0, 23, &v, true);
	vote(s, 1, 5, &v, false); /* configuration 1: a member */
	ck_assert_uint_eq(nlines, 1);
	paxos_node_free(n);
	free(s);
	paxos_set_log(NULL, NULL);
	event_base_free(base);
	remove_base();
}
END_TEST

/* A history the application kept with its snapshot: the node starts from it, keeps it in its
 * directory, and a newer one kept there wins over an older one given. */
/* A PAXOS_MSG_CHANGE of command @p cmd with @p flags, its MAC under @p key, to the submit
 * group. */
static void change_to(struct stub *s, const uint8_t *key, uint32_t flags, const uint8_t *cmd,
		      uint32_t len)
{
	uint8_t mac[PAXOS_CHANGE_MAC_BYTES], buf[2048];
	struct paxos_message m = {.type = PAXOS_MSG_CHANGE};
	m.u.change.command = (struct paxos_value){cmd, len};
	m.u.change.flags = flags;
	paxos_admin_mac(key, 0, flags, &m.u.change.command, mac);
	m.u.change.mac = (struct paxos_value){mac, sizeof(mac)};
	struct paxos_header h = {.role = PAXOS_ROLE_CLIENT, .sender_id = 0};
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, sizeof(buf), &h);
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	struct paxos_rx_datagram d = {.data = buf, .len = e.len, .from = NULL};
	s->deliver(s->deliver_arg, PAXOS_GROUP_SUBMIT, &d, 1);
}

/* Acceptor @p id's state message to the proposers group: it answers. */
static void state_of(struct stub *s, uint32_t id)
{
	uint8_t buf[256];
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_STATE};
	m.u.acceptor_state.acceptor_id = id;
	struct paxos_header h = {.role = PAXOS_ROLE_ACCEPTOR, .sender_id = id};
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, sizeof(buf), &h);
	ck_assert_int_eq(paxos_encoder_add(&e, &m), PAXOS_OK);
	struct paxos_rx_datagram d = {.data = buf, .len = e.len, .from = NULL};
	s->deliver(s->deliver_arg, PAXOS_GROUP_PROPOSERS, &d, 1);
}

/* A proposer takes a change only as a PAXOS_MSG_CHANGE with the operators' MAC, and checks it
 * before it proposes it: ids paxos.conf has (even forced), and unless forced a new acceptor
 * set with a quorum of members that answer, a proposer set with a live member. A client value
 * with a command's bytes is data. */
START_TEST(test_proposer_checks_changes)
{
	make_base();
	struct paxos_config cfg;
	config_for(&cfg);
	cfg.proposers = 2;
	cfg.heartbeat_timeout_ms = 1; /* proposer 1, never heard, is not alive after 1 ms */
	support_admin_key(&cfg);
	uint8_t key[PAXOS_ADMIN_KEY_BYTES], wrong[PAXOS_ADMIN_KEY_BYTES] = {0};
	char err[512];
	ck_assert_int_eq(paxos_admin_key_read(cfg.admin_key_file, key, err, sizeof(err)), PAXOS_OK);
	struct event_base *base = event_base_new();
	paxos_set_log(keep_line, NULL);
	struct stub *s = calloc(1, sizeof(*s));
	struct paxos_node *n = paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_proposer(n, 0), PAXOS_OK);
	uint8_t cmd[PAXOS_MEMBERSHIP_COMMAND_LEN];

	nlines = 0;
	paxos_membership_command_of(PAXOS_MEMBERSHIP_ACCEPTORS, 1, 0x3, cmd);
	change_to(s, wrong, 0, cmd, sizeof(cmd));
	ck_assert(logged("proposer 0: refused a membership change: its MAC is not the operators'"));
	paxos_membership_command_of(PAXOS_MEMBERSHIP_ACCEPTORS, 1, 0x18, cmd); /* 3 and 4 */
	change_to(s, key, 0, cmd, sizeof(cmd));
	ck_assert(logged("refused a membership change: acceptor 3 does not answer here"));
	paxos_membership_command_of(PAXOS_MEMBERSHIP_ACCEPTORS, 1, 0x3, cmd); /* 2 removed */
	change_to(s, key, 0, cmd, sizeof(cmd));
	ck_assert(logged("refused a membership change: acceptors 0,1 would have no live quorum: 0 "
			 "of them answer here (none), it needs 2"));
	paxos_membership_command_of(PAXOS_MEMBERSHIP_PROPOSERS, 1, 1u << 31, cmd);
	change_to(s, key, PAXOS_CHANGE_FORCE, cmd, sizeof(cmd));
	ck_assert(logged("refused a membership change: it names proposers 31, but paxos.conf has "
			 "only 2 proposer ids"));
	paxos_membership_command_of(PAXOS_MEMBERSHIP_PROPOSERS, 1, 0x2, cmd);
	usleep(5000);
	change_to(s, key, 0, cmd, sizeof(cmd));
	ck_assert(logged("refused a membership change: proposers 1: none of them is heard alive "
			 "here"));

	/* Acceptors 0 and 1 answer: the set {0,1} has its quorum, and is taken. */
	nlines = 0;
	state_of(s, 0);
	state_of(s, 1);
	paxos_membership_command_of(PAXOS_MEMBERSHIP_ACCEPTORS, 1, 0x3, cmd);
	change_to(s, key, 0, cmd, sizeof(cmd));
	ck_assert_msg(!logged("refused"), "%s", lines[0]);
	paxos_node_free(n);
	free(s);
	paxos_set_log(NULL, NULL);
	event_base_free(base);
	remove_base();
}
END_TEST

/* A proposer a change removed refuses to start, saying why; one never added yet starts and
 * leads nothing; a member leads. The history is the one kept with the epoch. */
START_TEST(test_removed_proposer_refused)
{
	make_base();
	struct paxos_config cfg;
	config_for(&cfg);
	cfg.proposers = 3;
	cfg.initial_proposers = 2;
	support_admin_key(&cfg);
	char dir[128], err[512];
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value remove1 = {buf, sizeof(buf)};
	struct paxos_membership *h = paxos_membership_create(0x7, 0x3, ALPHA);
	paxos_membership_command_of(PAXOS_MEMBERSHIP_PROPOSERS, 1, 0x1, buf);
	ck_assert_int_eq(paxos_membership_apply(h, 2, &remove1), 1);
	paxos_membership_skip_to(h, 2 + ALPHA);
	for (uint32_t id = 0; id < 3; id++) {
		snprintf(dir, sizeof(dir), "%s/proposer-%u", base_dir, id);
		ck_assert_int_eq(paxos_membership_file_write(dir, h, err, sizeof(err)), PAXOS_OK);
	}
	paxos_membership_free(h);
	struct event_base *base = event_base_new();
	paxos_set_log(keep_line, NULL);
	for (uint32_t id = 0; id < 3; id++) {
		nlines = 0;
		struct stub *s = calloc(1, sizeof(*s));
		struct paxos_node *n =
		    paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
		ck_assert_msg(n != NULL, "%s", err);
		int rc = paxos_node_add_proposer(n, id);
		if (id == 1) {
			ck_assert_int_eq(rc, PAXOS_E_INVALID);
			ck_assert_msg(strstr(paxos_node_error(n),
					     "proposer 1: refused: configuration 2 (proposers 0, "
					     "from instance 12) does not include it"),
				      "%s", paxos_node_error(n));
		} else {
			ck_assert_int_eq(rc, PAXOS_OK);
			ck_assert_uint_eq(paxos_node_leader(n), 0);
			const struct paxos_counters *c = paxos_node_counters(n, PAXOS_ROLE_LEARNER);
			ck_assert_uint_eq(c->membership_proposers, 0x1);
		}
		if (id == 2)
			ck_assert(
			    logged("proposer 2: configuration 2 (proposers 0) does not include "
				   "it yet"));
		if (id == 0) {
			/* The requests the C API refuses, and one it sends. */
			ck_assert_int_eq(paxos_node_change_proposers(n, 0), PAXOS_E_INVALID);
			ck_assert_int_eq(paxos_node_change_proposers(n, 0x8), PAXOS_E_INVALID);
			ck_assert_int_eq(paxos_node_change_proposers(n, 0x1), PAXOS_E_INVALID);
			ck_assert_msg(strstr(paxos_node_error(n),
					     "an id not below proposers (3), or the proposers of "
					     "configuration 2 already"),
				      "%s", paxos_node_error(n));
			ck_assert_int_eq(paxos_node_change_proposers(n, 0x5), PAXOS_OK);
		}
		paxos_node_free(n);
		free(s);
	}
	paxos_set_log(NULL, NULL);
	event_base_free(base);
	remove_base();
}
END_TEST

START_TEST(test_history_from_snapshot)
{
	make_base();
	struct paxos_config cfg;
	config_for(&cfg);
	char dir[128], err[512];
	snprintf(dir, sizeof(dir), "%s/learner", base_dir);
	struct paxos_membership *h = replaced_history();
	uint32_t count;
	const struct paxos_configuration *c = paxos_membership_history(h, &count);
	struct event_base *base = event_base_new();
	paxos_set_log(keep_line, NULL);
	for (int life = 0; life < 2; life++) {
		struct stub *s = calloc(1, sizeof(*s));
		struct paxos_node *n =
		    paxos_node_new_on(base, &cfg, stub_open, s, err, sizeof(err));
		ck_assert_msg(n != NULL, "%s", err);
		ck_assert_int_eq(paxos_node_set_membership(n, c, count, 5), PAXOS_E_INVALID);
		ck_assert_msg(strstr(paxos_node_error(n), "not a history of changes"), "%s",
			      paxos_node_error(n));
		/* The second life is given only configurations 1 and 2: the kept 3 wins. */
		ck_assert_int_eq(
		    paxos_node_set_membership(n, c, life ? 2 : count, paxos_membership_applied(h)),
		    PAXOS_OK);
		ck_assert_int_eq(paxos_node_keep_membership(n, dir), PAXOS_OK);
		ck_assert_int_eq(paxos_node_set_learner_start(n, 31), PAXOS_OK);
		ck_assert_int_eq(paxos_node_add_learner(n, on_value, NULL), PAXOS_OK);
		ck_assert_int_eq(paxos_node_set_membership(n, c, count, 30), PAXOS_E_INVALID);
		const struct paxos_membership *m = paxos_node_membership(n);
		ck_assert_uint_eq(paxos_membership_latest(m)->id, 3);
		ck_assert_uint_eq(paxos_membership_members(m, 31), 0x1c);
		ck_assert_uint_eq(paxos_membership_applied(m), 30); /* below the learner's start */
		struct paxos_membership *kept;
		ck_assert_int_eq(paxos_membership_file_read(dir, ALPHA, &kept, err, sizeof(err)),
				 PAXOS_OK);
		ck_assert_ptr_nonnull(kept);
		ck_assert_uint_eq(paxos_membership_latest(kept)->id, 3);
		paxos_membership_free(kept);
		paxos_node_free(n);
		free(s);
	}
	paxos_membership_free(h);
	paxos_set_log(NULL, NULL);
	event_base_free(base);
	remove_base();
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("membership_node");
	TCase *t = tcase_create("node");
	tcase_add_test(t, test_acceptor_starts_from_kept);
	tcase_add_test(t, test_learner_keeps_change);
	tcase_add_test(t, test_removed_votes_refused);
	tcase_add_test(t, test_proposer_checks_changes);
	tcase_add_test(t, test_removed_proposer_refused);
	tcase_add_test(t, test_history_from_snapshot);
	suite_add_tcase(s, t);
	return s;
}
