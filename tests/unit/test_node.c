/* SPDX-License-Identifier: BSD-3-Clause */
/* The node's application interface: argument checks that must fail before anything is sent,
 * and the fatal stop of an acceptor whose storage fails; a leader's learner taking its own
 * accepts; the unicast transport's subscriptions (partition groups: test_node_partitions.c,
 * sessions: test_node_sessions.c). Joins multicast groups and binds
 * 127.0.0.1 ports: ctest runs it in a private network namespace (tests/netns-run.sh). */
#include "check_main.h"
#include <event2/event.h>
#include <fcntl.h>
#include <paxos/storage_backends.h>
#include <paxos/paxos.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config_fields.h"
#include "support.h"

static struct event_base *base;
static struct paxos_node *node;
static struct paxos_config cfg;

static void setup(void)
{
	char err[256];
	paxos_config_defaults(&cfg);
	base = event_base_new();
	node = paxos_node_new(base, &cfg, err, sizeof(err));
	ck_assert_msg(node != NULL, "%s", err);
}

static void teardown(void)
{
	paxos_node_free(node);
	event_base_free(base);
}

START_TEST(test_submit_too_big_is_refused_with_a_reason)
{
	size_t max = paxos_config_max_value(&cfg);
	char *big = calloc(1, max + 1);
	ck_assert_int_eq(paxos_node_submit(node, big, max + 1), PAXOS_E_TOO_BIG);
	ck_assert_ptr_nonnull(strstr(paxos_node_error(node), "exceeds the maximum"));
	ck_assert_str_eq(paxos_strerror(PAXOS_E_TOO_BIG),
			 "value larger than the configured maximum");
	ck_assert_uint_eq(paxos_node_transport_counters(node)->messages_sent, 0);
	free(big);
}
END_TEST

START_TEST(test_submit_null_value_is_invalid)
{
	ck_assert_int_eq(paxos_node_submit(node, NULL, 5), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_node_submit(NULL, "x", 1), PAXOS_E_INVALID);
}
END_TEST

START_TEST(test_bad_role_arguments)
{
	ck_assert_int_eq(paxos_node_add_acceptor(node, cfg.acceptors, paxos_storage_memory_new()),
			 PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_node_add_acceptor(node, 0, NULL), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_node_add_proposer(node, cfg.proposers), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_node_add_learner(node, NULL, NULL), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_node_set_learner_start(node, 0), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_node_trim(node, 0), PAXOS_E_INVALID);
	ck_assert_ptr_null(paxos_node_counters(node, PAXOS_ROLE_ACCEPTOR));
}
END_TEST

/* The levels read for monitoring say "none" for roles the node does not host. */
START_TEST(test_levels_follow_hosted_roles)
{
	uint32_t id = 99;
	uint64_t used, limit;
	ck_assert_int_eq(paxos_node_role_id(node, PAXOS_ROLE_ACCEPTOR, &id), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_node_role_id(node, PAXOS_ROLE_COUNT, &id), PAXOS_E_INVALID);
	ck_assert_uint_eq(paxos_node_leader(node), PAXOS_MAX_PROPOSERS);
	ck_assert_uint_eq(paxos_node_ballot(node), 0);
	ck_assert_uint_eq(paxos_node_pending(node), 0);
	ck_assert_uint_eq(paxos_node_window_in_use(node), 0);
	ck_assert_uint_eq(paxos_node_highest_seen(node), 0);
	ck_assert_uint_eq(paxos_node_highest_accepted(node), 0);
	ck_assert_uint_eq(paxos_node_trimmed(node), 0);
	ck_assert(!paxos_node_recovering(node));
	ck_assert_int_eq(paxos_node_storage_space(node, &used, &limit), PAXOS_E_INVALID);

	/* A memory acceptor starts without earlier state: it recovers before it votes (and
	 * learns, as learning-acceptors says, through a learner of id 0). */
	ck_assert_int_eq(paxos_node_add_acceptor(node, 2, paxos_storage_memory_new()), PAXOS_OK);
	ck_assert_int_eq(paxos_node_role_id(node, PAXOS_ROLE_ACCEPTOR, &id), PAXOS_OK);
	ck_assert_uint_eq(id, 2);
	ck_assert_int_eq(paxos_node_role_id(node, PAXOS_ROLE_LEARNER, &id), PAXOS_OK);
	ck_assert_uint_eq(id, 0);
	ck_assert_int_eq(paxos_node_role_id(node, PAXOS_ROLE_PROPOSER, &id), PAXOS_E_INVALID);
	ck_assert(paxos_node_recovering(node));
	ck_assert_int_eq(paxos_node_storage_space(node, &used, &limit), PAXOS_E_INVALID);
}
END_TEST

static void on_give_up(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/* The acceptor's first tick reads its store, which fails: the node stops and says why,
 * in the backend's words. */
START_TEST(test_storage_failure_says_why)
{
	cfg.acceptor_repeat_ms = 1;
	char err[256];
	struct event_base *b = event_base_new();
	struct paxos_node *n = paxos_node_new(b, &cfg, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	struct paxos_storage *st =
	    failing_storage_new("test store: writing instance 7: No space left on device");
	ck_assert_int_eq(paxos_node_add_acceptor(n, 0, st), PAXOS_OK);
	struct timeval limit = {5, 0};
	struct event *give_up = evtimer_new(b, on_give_up, b);
	evtimer_add(give_up, &limit);
	event_base_dispatch(b);
	ck_assert_int_eq(paxos_node_failed(n), PAXOS_E_STORAGE);
	ck_assert_str_eq(paxos_node_error(n), "acceptor storage: storage error: test store: "
					      "writing instance 7: No space left on device");
	event_free(give_up);
	paxos_node_free(n);
	event_base_free(b);
}
END_TEST

/* A key file the node cannot use stops it in paxos_node_new, before it has a socket. */
START_TEST(test_auth_key_checked_at_start)
{
	char dir[] = "/tmp/test_node.XXXXXX", path[64], err[512], want[600];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/key", dir);
	struct paxos_config c;
	paxos_config_defaults(&c);
	snprintf(c.auth_key_file, sizeof(c.auth_key_file), "%s", path);
	struct event_base *b = event_base_new();

	ck_assert_ptr_null(paxos_node_new(b, &c, err, sizeof(err)));
	snprintf(want, sizeof(want), "auth-key-file %s: No such file or directory", path);
	ck_assert_str_eq(err, want);

	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "0123456789abcdef0123456789abcdef", 32), 32);
	ck_assert_int_eq(fchmod(fd, 0644), 0);
	close(fd);
	ck_assert_ptr_null(paxos_node_new(b, &c, err, sizeof(err)));
	snprintf(want, sizeof(want),
		 "auth-key-file %s: mode 0644 lets others than its owner at the key; refused "
		 "(chmod 600 %s)",
		 path, path);
	ck_assert_str_eq(err, want);

	/* Private: the node starts, and a value that would leave no room for the tag is
	 * refused before anything is sent. */
	ck_assert_int_eq(chmod(path, 0600), 0);
	struct paxos_node *keyed = paxos_node_new(b, &c, err, sizeof(err));
	ck_assert_msg(keyed != NULL, "%s", err);
	size_t max = paxos_config_max_value(&c);
	ck_assert_uint_eq(max, c.max_datagram - 108);
	char *big = calloc(1, max + 1);
	ck_assert_int_eq(paxos_node_submit(keyed, big, max + 1), PAXOS_E_TOO_BIG);
	ck_assert_uint_eq(paxos_node_transport_counters(keyed)->auth_failures, 0);
	free(big);
	paxos_node_free(keyed);
	event_base_free(b);
	unlink(path);
	rmdir(dir);
}
END_TEST

static unsigned log_lines;
static char last_line[512];

static void count_line(void *arg, enum paxos_log_level level, const char *line)
{
	(void)arg;
	ck_assert_int_le(level, PAXOS_LOG_INFO);
	ck_assert_ptr_null(strchr(line, '\n'));
	snprintf(last_line, sizeof(last_line), "%s", line);
	log_lines++;
}

/* The library logs only through the function the application sets, one line per call. */
START_TEST(test_log_goes_to_the_function_set)
{
	char dir[] = "/tmp/test_node_log.XXXXXX", err[256];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	struct paxos_config c;
	paxos_config_defaults(&c);
	snprintf(c.storage_path, sizeof(c.storage_path), "%s", dir);
	struct event_base *b = event_base_new();
	paxos_set_log(count_line, NULL);
	struct paxos_node *n = paxos_node_new(b, &c, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_proposer(n, 0), PAXOS_OK);
	ck_assert_uint_ge(log_lines, 1);
	ck_assert_msg(strstr(last_line, "paxos: proposer 0: leader is 0 at start"), "%s",
		      last_line);
	paxos_node_report_counters(n);
	unsigned seen = log_lines;
	ck_assert_uint_gt(seen, 1);
	paxos_set_log(NULL, NULL); /* the default: nothing is written anywhere */
	paxos_node_report_counters(n);
	ck_assert_uint_eq(log_lines, seen);
	paxos_node_free(n);
	event_base_free(b);
	char path[300];
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

static char acceptor_line[1024];

static void keep_acceptor_line(void *arg, enum paxos_log_level level, const char *line)
{
	(void)arg;
	(void)level;
	if (strncmp(line, "paxos: counters acceptor", 24) == 0)
		snprintf(acceptor_line, sizeof(acceptor_line), "%s", line);
}

/* The counters of recovering lost state (a start without it withholds votes, then rejects
 * below its fence) are reported apart from the others, named for what they are. */
START_TEST(test_report_names_recovery_apart)
{
	char dir[] = "/tmp/test_node_report.XXXXXX", err[256];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	struct paxos_config c;
	paxos_config_defaults(&c);
	snprintf(c.storage_path, sizeof(c.storage_path), "%s", dir);
	struct event_base *b = event_base_new();
	struct paxos_node *n = paxos_node_new(b, &c, err, sizeof(err));
	ck_assert_msg(n != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_add_acceptor(n, 0, paxos_storage_memory_new()), PAXOS_OK);
	/* The library owns the counters; the test sets what a first round would leave. */
	struct paxos_counters *ac =
	    (struct paxos_counters *)paxos_node_counters(n, PAXOS_ROLE_ACCEPTOR);
	memset(ac, 0, sizeof(*ac));
	ac->promises_sent = 5;
	ac->votes_withheld = 128;
	ac->recoveries = 1;
	ac->fence_rejects = 128;
	paxos_set_log(keep_acceptor_line, NULL);
	paxos_node_report_counters(n);
	ck_assert_str_eq(acceptor_line,
			 "paxos: counters acceptor 0: promises_sent=5; recovery of lost "
			 "state (expected after a start without it, no fault): "
			 "votes_withheld=128 recoveries=1 fence_rejects=128");
	/* Without a recovery, nothing is added. */
	ac->votes_withheld = ac->recoveries = ac->fence_rejects = 0;
	ac->rejects_sent = 2;
	paxos_node_report_counters(n);
	ck_assert_str_eq(acceptor_line,
			 "paxos: counters acceptor 0: rejects_sent=2 promises_sent=5");
	paxos_set_log(NULL, NULL);
	paxos_node_free(n);
	event_base_free(b);
	char path[300];
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	ck_assert_int_eq(system(path), 0);
}
END_TEST

/* Unicast: a learner that subscribed before its acceptor was up gets that acceptor's learner
 * traffic soon after the acceptor starts, not only at the next renewal (a quarter lease: here
 * 150 s, so that the 5 s the test allows is a margin for a slow machine, not a race). */
static void count_learner_datagrams(void *arg, enum paxos_group g, struct paxos_rx_datagram *d,
				    size_t n)
{
	(void)d;
	if (g == PAXOS_GROUP_LEARNERS)
		*(size_t *)arg += n;
}

struct in_order {
	uint32_t n;
	bool ordered;
};

static void check_order(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)iid;
	(void)position;
	struct in_order *o = arg;
	char want[16];
	int len = snprintf(want, sizeof(want), "v%04u", o->n++);
	o->ordered &= v->len == (uint32_t)len && memcmp(v->data, want, v->len) == 0;
}

/* Multicast: the leader's learner takes its own accepts as they are emitted and leaves the
 * acceptors group unread (lib/node/node.c, own_accepts); it still delivers every value in
 * order, and so does a learner that reads the group (after the votes). `options` are added to the
 * configuration; values are submitted `burst` at a time. */
static void own_accepts_run(const char *options, uint32_t burst)
{
	struct support_cluster c;
	support_cluster_start(&c, options);
	struct event_base *b = c.base;
	static struct in_order mine, theirs;
	mine = (struct in_order){0, true};
	theirs = (struct in_order){0, true};
	struct paxos_node *leader = support_cluster_node(&c), *other = support_cluster_node(&c);
	ck_assert_int_eq(paxos_node_add_learner(leader, check_order, &mine), PAXOS_OK);
	ck_assert_int_eq(paxos_node_add_proposer(leader, 0), PAXOS_OK);
	ck_assert_int_eq(paxos_node_add_learner(other, check_order, &theirs), PAXOS_OK);
	support_run_for(b, 300); /* the acceptors recover (a first start) */
	char value[16];
	for (uint32_t k = 0; k < 200; k++) {
		int len = snprintf(value, sizeof(value), "v%04u", k);
		ck_assert_int_eq(paxos_node_submit(leader, value, (size_t)len), PAXOS_OK);
		if (k % burst == burst - 1)
			support_run_for(b, 20);
	}
	for (int i = 0; i < 100 && (mine.n < 200 || theirs.n < 200); i++)
		support_run_for(b, 50);
	ck_assert_msg(mine.n == 200 && theirs.n == 200, "delivered %u and %u of 200", mine.n,
		      theirs.n);
	ck_assert(mine.ordered && theirs.ordered);
	const struct paxos_counters *lc = paxos_node_counters(leader, PAXOS_ROLE_LEARNER);
	ck_assert_uint_ge(lc->own_accepts_learned, lc->instances_delivered);
	ck_assert_uint_eq(lc->repeats_requested, 0);
	/* values_delivered counts what the application got, instances_delivered the instances
	 * (batches) the values came in. */
	uint64_t values = 0, instances = 0;
	ck_assert_int_eq(paxos_counter_get(lc, "values_delivered", &values), PAXOS_OK);
	ck_assert_int_eq(paxos_counter_get(lc, "instances_delivered", &instances), PAXOS_OK);
	ck_assert_uint_eq(values, 200);
	ck_assert_uint_ge(instances, 1);
	ck_assert_uint_le(instances, 200);
	ck_assert_uint_eq(paxos_node_counters(other, PAXOS_ROLE_LEARNER)->values_delivered, 200);
	if (!strstr(options, "value-batch-limit")) /* bursts submitted between loop runs batch */
		ck_assert_uint_lt(instances, values);
	ck_assert_uint_eq(paxos_node_counters(other, PAXOS_ROLE_LEARNER)->own_accepts_learned, 0);
	/* The other learner reads the leader's values only after the votes that close them
	 * (node_drain_values), and finds each there: it asks for none again. */
	ck_assert_uint_eq(paxos_node_counters(other, PAXOS_ROLE_LEARNER)->repeats_requested, 0);
	paxos_node_free(other);
	paxos_node_free(leader);
	support_cluster_free(&c);
}

START_TEST(test_leader_learns_its_own_accepts)
{
	own_accepts_run("", 20);
}
END_TEST

/* More values wait than phase 2 may hold: each closed instance lets the proposer assign the
 * next while the learner's ready is being run. The learner still takes every accept (later,
 * node_own_accept_replay) and asks the acceptors for none. */
START_TEST(test_leader_learns_accepts_sent_while_it_learns)
{
	own_accepts_run("proposer-concurrency 2\nvalue-batch-limit 1\n", 200);
}
END_TEST

/* The acceptors' learners learn what was chosen from the leader's word (learning acceptors):
 * the last values before a pause too, from the chosen message an idle leader sends. Neither a
 * hole check nor the acceptors' resent last votes find them here: both periods are a minute. */
START_TEST(test_acceptors_learn_the_last_values_before_a_pause)
{
	struct support_cluster c;
	support_cluster_start(&c, "learner-hole-check-ms 60000\nacceptor-repeat-ms 60000\n");
	struct event_base *b = c.base;
	static struct in_order mine;
	mine = (struct in_order){0, true};
	struct paxos_node *leader = support_cluster_node(&c);
	ck_assert_int_eq(paxos_node_add_learner(leader, check_order, &mine), PAXOS_OK);
	ck_assert_int_eq(paxos_node_add_proposer(leader, 0), PAXOS_OK);
	char value[16];
	for (uint32_t k = 0; k < 20; k++) {
		int len = snprintf(value, sizeof(value), "v%04u", k);
		ck_assert_int_eq(paxos_node_submit(leader, value, (size_t)len), PAXOS_OK);
		for (int i = 0; i < 1000 && mine.n <= k; i++)
			support_run_for(b, 5);
	}
	ck_assert_msg(mine.n == 20 && mine.ordered, "delivered %u of 20", mine.n);
	uint64_t want = paxos_node_counters(leader, PAXOS_ROLE_LEARNER)->instances_delivered;
	bool all = false;
	for (int i = 0; i < 1000 && !all; i++) {
		support_run_for(b, 10);
		all = true;
		for (uint32_t a = 0; a < 3; a++)
			all &= paxos_node_counters(c.acc[a], PAXOS_ROLE_LEARNER)
				   ->instances_delivered == want;
	}
	for (uint32_t a = 0; a < 3; a++) {
		const struct paxos_counters *lc = paxos_node_counters(c.acc[a], PAXOS_ROLE_LEARNER);
		ck_assert_msg(lc->instances_delivered == want,
			      "acceptor %u's learner delivered %llu of %llu instances", a,
			      (unsigned long long)lc->instances_delivered,
			      (unsigned long long)want);
		ck_assert_uint_eq(lc->repeats_requested, 0);
	}
	ck_assert_uint_ge(paxos_node_counters(leader, PAXOS_ROLE_PROPOSER)->chosen_said, 1);
	paxos_node_free(leader);
	support_cluster_free(&c);
}
END_TEST

static size_t datagrams_read;

static void count_datagrams(void *arg, enum paxos_group g, struct paxos_rx_datagram *d, size_t n)
{
	(void)arg;
	(void)g;
	(void)d;
	datagrams_read += n;
}

/* Sends count datagrams of 200 bytes to the learners group, then reads all that waits. */
static size_t burst_then_read(struct paxos_transport *t, size_t count)
{
	static uint8_t bytes[200];
	struct paxos_tx_datagram d[50];
	for (size_t sent = 0; sent < count; sent += 50) {
		for (size_t i = 0; i < 50; i++)
			d[i] = (struct paxos_tx_datagram){
			    .to = PAXOS_GROUP_LEARNERS, .data = bytes, .len = sizeof(bytes)};
		t->ops->send(t, d, 50);
		for (size_t i = 0; i < 50; i++)
			ck_assert(d[i].sent);
	}
	datagrams_read = 0;
	while (t->ops->read(t, PAXOS_GROUP_LEARNERS) > 0)
		;
	return datagrams_read;
}

/* A lean follower (and a leader, its acceptors group) leaves groups unread: ignored, a group
 * is left, so its socket gets nothing where a socket buffer's worth would wait and the rest be
 * dropped (and counted by the host as receive errors); taken back, it holds a whole burst
 * again. */
START_TEST(test_ignored_group_keeps_next_to_nothing)
{
	struct paxos_config c;
	paxos_config_defaults(&c);
	char err[256];
	struct event_base *b = event_base_new();
	struct paxos_transport *t =
	    paxos_transport_multicast_new(b, &c, count_datagrams, NULL, err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	ck_assert_int_eq(t->ops->join(t, PAXOS_GROUP_LEARNERS, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(t->ops->set_lazy(t, PAXOS_GROUP_LEARNERS, true), PAXOS_OK);
	ck_assert_uint_eq(burst_then_read(t, 500), 500); /* lazy alone keeps everything */
	ck_assert_int_eq(t->ops->set_ignored(t, PAXOS_GROUP_LEARNERS, true), PAXOS_OK);
	size_t kept = burst_then_read(t, 500);
	ck_assert_msg(kept == 0, "an ignored group kept %zu of 500 datagrams", kept);
	ck_assert_int_eq(t->ops->set_ignored(t, PAXOS_GROUP_LEARNERS, false), PAXOS_OK);
	ck_assert_uint_eq(burst_then_read(t, 500), 500);
	t->ops->destroy(t);
	event_base_free(b);
}
END_TEST

START_TEST(test_unicast_learner_reaches_a_late_acceptor)
{
	static const char text[] = "transport unicast\nacceptors 1\nproposers 1\n"
				   "acceptor 0 127.0.0.1:7201\nproposer 0 127.0.0.1:7301\n"
				   "subscription-lease-ms 600000\n";
	struct paxos_config c;
	char err[256];
	paxos_config_defaults(&c);
	ck_assert_msg(paxos_config_parse(&c, text, sizeof(text) - 1, "unicast", err, sizeof(err)) ==
			  PAXOS_OK,
		      "%s", err);
	struct event_base *b = event_base_new();
	size_t got = 0, ignored = 0;
	struct paxos_transport *learner =
	    paxos_transport_unicast_new(b, &c, count_learner_datagrams, &got, err, sizeof(err));
	ck_assert_msg(learner != NULL, "%s", err);
	ck_assert_int_eq(learner->ops->join(learner, PAXOS_GROUP_LEARNERS, err, sizeof(err)),
			 PAXOS_OK);
	support_run_for(b, 50); /* its first subscription found no one */
	struct paxos_transport *acceptor =
	    paxos_transport_unicast_new(b, &c, count_learner_datagrams, &ignored, err, sizeof(err));
	ck_assert_msg(acceptor != NULL, "%s", err);
	ck_assert_int_eq(acceptor->ops->host(acceptor, PAXOS_ROLE_ACCEPTOR, 0, err, sizeof(err)),
			 PAXOS_OK);
	ck_assert_int_eq(acceptor->ops->join(acceptor, PAXOS_GROUP_ACCEPTORS, err, sizeof(err)),
			 PAXOS_OK);
	static const uint8_t payload[] = {1, 2, 3};
	for (int tries = 0; tries < 50 && got == 0; tries++) {
		support_run_for(b, 100);
		struct paxos_tx_datagram d = {
		    .to = PAXOS_GROUP_LEARNERS, .data = payload, .len = 3};
		acceptor->ops->send(acceptor, &d, 1);
		support_run_for(b, 1);
	}
	ck_assert_uint_ge(got, 1);
	acceptor->ops->destroy(acceptor);
	learner->ops->destroy(learner);
	event_base_free(b);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("node");
	TCase *tc = tcase_create("api");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60); /* clusters run in the own accepts tests */
	tcase_add_test(tc, test_submit_too_big_is_refused_with_a_reason);
	tcase_add_test(tc, test_submit_null_value_is_invalid);
	tcase_add_test(tc, test_bad_role_arguments);
	tcase_add_test(tc, test_levels_follow_hosted_roles);
	tcase_add_test(tc, test_log_goes_to_the_function_set);
	tcase_add_test(tc, test_report_names_recovery_apart);
	tcase_add_test(tc, test_storage_failure_says_why);
	tcase_add_test(tc, test_leader_learns_its_own_accepts);
	tcase_add_test(tc, test_leader_learns_accepts_sent_while_it_learns);
	tcase_add_test(tc, test_acceptors_learn_the_last_values_before_a_pause);
	tcase_add_test(tc, test_ignored_group_keeps_next_to_nothing);
	suite_add_tcase(s, tc);
	TCase *auth = tcase_create("auth");
	tcase_add_test(auth, test_auth_key_checked_at_start);
	suite_add_tcase(s, auth);
	TCase *unicast = tcase_create("unicast");
	tcase_add_test(unicast, test_unicast_learner_reaches_a_late_acceptor);
	suite_add_tcase(s, unicast);
	return s;
}
