/* SPDX-License-Identifier: BSD-3-Clause */
/* The node's application interface: argument checks that must fail before anything is sent,
 * and the fatal stop of an acceptor whose storage fails; client sessions and the read barrier
 * on a small cluster; the unicast transport's subscriptions. Joins multicast groups and binds
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

static void run_for_ms(struct event_base *b, long ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	event_base_loopexit(b, &tv);
	event_base_dispatch(b);
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
	/* A fresh storage-path: the proposer's first epoch, so the acceptors start at once. */
	char dir[] = "/tmp/test_node.XXXXXX", text[256], err[256];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	int tlen = snprintf(text, sizeof(text), "acceptors 3\nproposers 1\nstorage-path %s\n%s",
			    dir, options);
	struct paxos_config c;
	paxos_config_defaults(&c);
	ck_assert_msg(paxos_config_parse(&c, text, (size_t)tlen, "own", err, sizeof(err)) ==
			  PAXOS_OK,
		      "%s", err);
	struct event_base *b = event_base_new();
	struct paxos_node *acc[3], *leader, *other;
	for (uint32_t i = 0; i < 3; i++) {
		acc[i] = paxos_node_new(b, &c, err, sizeof(err));
		ck_assert_msg(acc[i] != NULL, "%s", err);
		ck_assert_int_eq(paxos_node_add_acceptor(acc[i], i, paxos_storage_memory_new()),
				 PAXOS_OK);
	}
	static struct in_order mine, theirs;
	mine = (struct in_order){0, true};
	theirs = (struct in_order){0, true};
	leader = paxos_node_new(b, &c, err, sizeof(err));
	other = paxos_node_new(b, &c, err, sizeof(err));
	ck_assert_ptr_nonnull(leader);
	ck_assert_ptr_nonnull(other);
	ck_assert_int_eq(paxos_node_add_learner(leader, check_order, &mine), PAXOS_OK);
	ck_assert_int_eq(paxos_node_add_proposer(leader, 0), PAXOS_OK);
	ck_assert_int_eq(paxos_node_add_learner(other, check_order, &theirs), PAXOS_OK);
	run_for_ms(b, 300); /* the acceptors recover (a first start) */
	char value[16];
	for (uint32_t k = 0; k < 200; k++) {
		int len = snprintf(value, sizeof(value), "v%04u", k);
		ck_assert_int_eq(paxos_node_submit(leader, value, (size_t)len), PAXOS_OK);
		if (k % burst == burst - 1)
			run_for_ms(b, 20);
	}
	for (int i = 0; i < 100 && (mine.n < 200 || theirs.n < 200); i++)
		run_for_ms(b, 50);
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
	for (uint32_t i = 0; i < 3; i++)
		paxos_node_free(acc[i]);
	event_base_free(b);
	char rm[64];
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	ck_assert_int_eq(system(rm), 0);
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
	run_for_ms(b, 50); /* its first subscription found no one */
	struct paxos_transport *acceptor =
	    paxos_transport_unicast_new(b, &c, count_learner_datagrams, &ignored, err, sizeof(err));
	ck_assert_msg(acceptor != NULL, "%s", err);
	ck_assert_int_eq(acceptor->ops->host(acceptor, PAXOS_ROLE_ACCEPTOR, 0, err, sizeof(err)),
			 PAXOS_OK);
	ck_assert_int_eq(acceptor->ops->join(acceptor, PAXOS_GROUP_ACCEPTORS, err, sizeof(err)),
			 PAXOS_OK);
	static const uint8_t payload[] = {1, 2, 3};
	for (int tries = 0; tries < 50 && got == 0; tries++) {
		run_for_ms(b, 100);
		struct paxos_tx_datagram d = {
		    .to = PAXOS_GROUP_LEARNERS, .data = payload, .len = 3};
		acceptor->ops->send(acceptor, &d, 1);
		run_for_ms(b, 1);
	}
	ck_assert_uint_ge(got, 1);
	acceptor->ops->destroy(acceptor);
	learner->ops->destroy(learner);
	event_base_free(b);
}
END_TEST

static void ignore_value(void *arg, uint32_t partition, paxos_iid iid, uint32_t position,
			 const struct paxos_value *v)
{
	(void)arg;
	(void)partition;
	(void)iid;
	(void)position;
	(void)v;
}

/* Partitions groups refuse, with the reason: unknown and unhosted partitions, a merging
 * learner without every partition or with a log that starts past instance 1. */
START_TEST(test_partitions_group_bad_input)
{
	char err[256];
	struct paxos_config c;
	paxos_config_defaults(&c);
	ck_assert_int_eq(paxos_config_set(&c, "partitions", "2", err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(paxos_config_set(&c, "learner-merge", "yes", err, sizeof(err)), PAXOS_OK);
	struct event_base *b = event_base_new();
	ck_assert_ptr_null(paxos_partitions_new(b, &c, 1u << 2, err, sizeof(err)));
	ck_assert_str_eq(err, "partitions: hosted partitions must be some of 0..1 (paxos.conf "
			      "partitions 2)");
	struct paxos_partitions *g = paxos_partitions_new(b, &c, 1u << 1, err, sizeof(err));
	ck_assert_msg(g != NULL, "%s", err);
	ck_assert_uint_eq(paxos_partitions_count(g), 2);
	ck_assert_ptr_null(paxos_partitions_node(g, 0));
	ck_assert_ptr_nonnull(paxos_partitions_node(g, 1));
	ck_assert_int_eq(paxos_partitions_submit(g, 2, "x", 1), PAXOS_E_INVALID);
	ck_assert_str_eq(paxos_partitions_error(g),
			 "partition 2 does not exist: paxos.conf has partitions 2 (0..1)");
	ck_assert_int_eq(paxos_partitions_submit(g, 0, "x", 1), PAXOS_E_INVALID);
	ck_assert_str_eq(paxos_partitions_error(g), "partition 0 is not hosted by this group");
	ck_assert_int_eq(paxos_partitions_submit(g, 1, "x", 1), PAXOS_OK);
	ck_assert_int_eq(paxos_partitions_add_learner(g, ignore_value, NULL), PAXOS_E_INVALID);
	ck_assert_str_eq(paxos_partitions_error(g),
			 "learner-merge: partition 0 is not hosted here, and the merged order "
			 "needs every partition (host all 2, or set learner-merge no)");
	paxos_partitions_free(g);
	g = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	ck_assert_msg(g != NULL, "%s", err);
	ck_assert_int_eq(paxos_node_set_learner_start(paxos_partitions_node(g, 1), 5), PAXOS_OK);
	ck_assert_int_eq(paxos_partitions_add_learner(g, ignore_value, NULL), PAXOS_E_INVALID);
	ck_assert_str_eq(paxos_partitions_error(g),
			 "learner-merge: partition 1's learner starts at instance 5, but the "
			 "merged order takes that log from instance 1 (start where a merge "
			 "position says: paxos_partitions_resume_merge())");
	ck_assert_int_eq(paxos_partitions_add_learner(g, NULL, NULL), PAXOS_E_INVALID);
	paxos_partitions_free(g);
	/* A merge position from a snapshot: checked against paxos.conf, then the learners start
	 * where it says. */
	g = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	struct paxos_merge_position pos;
	ck_assert_int_eq(paxos_partitions_merge_position(g, &pos), PAXOS_OK);
	ck_assert_uint_eq(pos.partitions, 2);
	ck_assert_uint_eq(pos.next[0], 1);
	ck_assert_uint_eq(pos.next[1], 1);
	pos.partitions = 3;
	ck_assert_int_eq(paxos_partitions_resume_merge(g, &pos), PAXOS_E_INVALID);
	ck_assert_str_eq(paxos_partitions_error(g),
			 "learner-merge: the merge position was taken with partitions 3 and "
			 "merge-segment 64, but paxos.conf has partitions 2 and merge-segment 64");
	pos.partitions = 2;
	pos.turn = 2;
	ck_assert_int_eq(paxos_partitions_resume_merge(g, &pos), PAXOS_E_INVALID);
	pos.turn = 1;
	pos.next[0] = 8;
	pos.next[1] = 0;
	ck_assert_int_eq(paxos_partitions_resume_merge(g, &pos), PAXOS_E_INVALID);
	pos.next[1] = 5;
	pos.values = 2;
	ck_assert_int_eq(paxos_partitions_resume_merge(g, &pos), PAXOS_OK);
	ck_assert_int_eq(paxos_partitions_resume_merge(g, &pos), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_partitions_add_learner(g, ignore_value, NULL), PAXOS_OK);
	struct paxos_merge_position now;
	ck_assert_int_eq(paxos_partitions_merge_position(g, &now), PAXOS_OK);
	ck_assert_mem_eq(&now, &pos, sizeof(now));
	paxos_partitions_free(g);
	g = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	ck_assert_int_eq(paxos_partitions_add_learner(g, ignore_value, NULL), PAXOS_OK);
	ck_assert_int_eq(paxos_partitions_add_learner(g, ignore_value, NULL), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_partitions_resume_merge(g, &pos), PAXOS_E_INVALID);
	ck_assert_str_eq(paxos_partitions_error(g),
			 "learner-merge: resume the merge before adding the learner");
	ck_assert_uint_eq(paxos_partitions_merge_waiting(g), 0);
	paxos_partitions_free(g);
	ck_assert_int_eq(paxos_config_set(&c, "learner-merge", "no", err, sizeof(err)), PAXOS_OK);
	g = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	ck_assert_int_eq(paxos_partitions_merge_position(g, &pos), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_partitions_resume_merge(g, &pos), PAXOS_E_INVALID);
	ck_assert_str_eq(paxos_partitions_error(g),
			 "learner-merge is off: there is no merged order to resume");
	paxos_partitions_free(g);
	paxos_partitions_free(NULL);
	event_base_free(b);
}
END_TEST

/* What a learner group delivered, as "P IID POS VALUE" lines; a snapshot of its merge
 * position is taken in delivery number snap_at (from 1). */
struct delivered {
	struct paxos_partitions *group;
	char lines[128][48];
	uint32_t n, snap_at;
	struct paxos_merge_position snap;
};

static void record_value(void *arg, uint32_t partition, paxos_iid iid, uint32_t position,
			 const struct paxos_value *v)
{
	struct delivered *d = arg;
	ck_assert_uint_lt(d->n, 128);
	snprintf(d->lines[d->n++], sizeof(d->lines[0]), "%u %llu %u %.*s", partition,
		 (unsigned long long)iid, position, (int)v->len, (const char *)v->data);
	if (d->n == d->snap_at)
		ck_assert_int_eq(paxos_partitions_merge_position(d->group, &d->snap), PAXOS_OK);
}

/* Runs the loop until d delivered want values, for at most 30 s (a failure then). */
static void run_until(struct event_base *b, const struct delivered *d, uint32_t want)
{
	for (int i = 0; i < 300 && d->n < want; i++)
		run_for_ms(b, 100);
	ck_assert_uint_eq(d->n, want);
}

/* A merging learner started from a snapshot (its merge position, taken inside a delivery, in
 * the middle of an instance's values) delivers exactly the rest of the merged order another
 * learner delivered: one cluster of two partitions in this process, on multicast. */
START_TEST(test_partitions_resume_from_snapshot)
{
	static const char text[] = "acceptors 1\nproposers 1\npartitions 2\nlearner-merge yes\n"
				   "merge-segment 2\nmerge-skip-ms 5\nvalue-batch-limit 4\n";
	struct paxos_config c;
	char err[256];
	paxos_config_defaults(&c);
	ck_assert_msg(paxos_config_parse(&c, text, sizeof(text) - 1, "merge", err, sizeof(err)) ==
			  PAXOS_OK,
		      "%s", err);
	struct event_base *b = event_base_new();
	struct paxos_partitions *replica = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	ck_assert_msg(replica != NULL, "%s", err);
	for (uint32_t p = 0; p < 2; p++) {
		struct paxos_node *n = paxos_partitions_node(replica, p);
		ck_assert_int_eq(paxos_node_add_acceptor(n, 0, paxos_storage_memory_new()),
				 PAXOS_OK);
		ck_assert_int_eq(paxos_node_add_proposer(n, 0), PAXOS_OK);
	}
	static struct delivered first, second;
	memset(&first, 0, sizeof(first));
	memset(&second, 0, sizeof(second));
	first.group = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	ck_assert_msg(first.group != NULL, "%s", err);
	ck_assert_int_eq(paxos_partitions_add_learner(first.group, record_value, &first), PAXOS_OK);
	run_for_ms(b, 300); /* the proposer takes the lead of both partitions */
	/* Bursts, so that instances hold several values: the snapshot falls inside one. */
	char value[16];
	for (uint32_t k = 0; k < 60; k++) {
		int len = snprintf(value, sizeof(value), "v%02u", k);
		ck_assert_int_eq(paxos_partitions_submit(replica, k % 3 == 0, value, (size_t)len),
				 PAXOS_OK);
		if (k % 10 == 9)
			run_for_ms(b, 50);
	}
	first.snap_at = 0;
	run_until(b, &first, 60);
	/* The same again, with a snapshot taken inside a delivery whose instance has more. */
	uint32_t at = 0;
	for (uint32_t i = 20; i < 59 && !at; i++) {
		unsigned p0, p1;
		unsigned long long i0, i1;
		sscanf(first.lines[i], "%u %llu", &p0, &i0);
		sscanf(first.lines[i + 1], "%u %llu", &p1, &i1);
		if (p0 == p1 && i0 == i1)
			at = i + 1; /* delivery number i + 1 is not its instance's last */
	}
	ck_assert_msg(at != 0, "no instance with several values");
	struct delivered *again = &second;
	again->group = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	again->snap_at = at;
	ck_assert_int_eq(paxos_partitions_add_learner(again->group, record_value, again), PAXOS_OK);
	run_until(b, again, 60);
	ck_assert_uint_gt(again->snap.values, 0);
	for (uint32_t i = 0; i < 60; i++)
		ck_assert_str_eq(again->lines[i], first.lines[i]);
	/* A third learner starts from that snapshot: it delivers the rest, nothing more. */
	static struct delivered resumed;
	memset(&resumed, 0, sizeof(resumed));
	resumed.group = paxos_partitions_new(b, &c, 3, err, sizeof(err));
	ck_assert_int_eq(paxos_partitions_resume_merge(resumed.group, &again->snap), PAXOS_OK);
	ck_assert_int_eq(paxos_partitions_add_learner(resumed.group, record_value, &resumed),
			 PAXOS_OK);
	run_until(b, &resumed, 60 - at);
	run_for_ms(b, 200); /* and nothing more comes */
	ck_assert_uint_eq(resumed.n, 60 - at);
	for (uint32_t i = 0; i < resumed.n; i++)
		ck_assert_str_eq(resumed.lines[i], first.lines[at + i]);
	paxos_partitions_free(resumed.group);
	paxos_partitions_free(again->group);
	paxos_partitions_free(first.group);
	paxos_partitions_free(replica);
	event_base_free(b);
}
END_TEST

/* Client sessions on real nodes (paxos/session.h): every value of a session sent twice
 * (paxos_session_resend) reaches the application of a learner with sessions once, in order,
 * header stripped, and completes once; a plain value passes untouched; a read barrier fires
 * once everything chosen before it was delivered. */
struct session_seen {
	struct paxos_node *node;
	uint32_t n, plain;
	bool ordered, named;
	paxos_iid last_iid;
};

static void session_deliver(void *arg, paxos_iid iid, uint32_t position,
			    const struct paxos_value *v)
{
	(void)position;
	struct session_seen *o = arg;
	uint64_t client, seq;
	if (!paxos_node_delivery_session(o->node, &client, &seq)) {
		o->plain += v->len == 5 && memcmp(v->data, "plain", 5) == 0;
		return;
	}
	char want[16];
	int len = snprintf(want, sizeof(want), "v%04u", o->n++);
	o->ordered &= v->len == (uint32_t)len && memcmp(v->data, want, v->len) == 0;
	o->named &= seq == o->n;
	o->last_iid = iid;
}

struct completions {
	uint32_t ok, other, out_of_order;
	uint64_t last;
};

static void session_done(void *arg, uint64_t seq, int status, paxos_iid iid)
{
	struct completions *c = arg;
	if (status == PAXOS_OK && iid > 0)
		c->ok++;
	else
		c->other++;
	c->out_of_order += seq != c->last + 1;
	c->last = seq;
}

static void barrier_done(void *arg, int status, paxos_iid iid)
{
	paxos_iid *at = arg;
	*at = status == PAXOS_OK ? iid : (paxos_iid)-1;
}

START_TEST(test_sessions_apply_once_and_complete)
{
	char dir[] = "/tmp/test_node.XXXXXX", text[256], err[256];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	int tlen = snprintf(text, sizeof(text), "acceptors 3\nproposers 1\nstorage-path %s\n", dir);
	struct paxos_config c;
	paxos_config_defaults(&c);
	ck_assert_int_eq(paxos_config_parse(&c, text, (size_t)tlen, "s", err, sizeof(err)),
			 PAXOS_OK);
	struct event_base *b = event_base_new();
	struct paxos_node *acc[3], *leader, *other, *client;
	for (uint32_t i = 0; i < 3; i++) {
		acc[i] = paxos_node_new(b, &c, err, sizeof(err));
		ck_assert_int_eq(paxos_node_add_acceptor(acc[i], i, paxos_storage_memory_new()),
				 PAXOS_OK);
	}
	static struct session_seen seen;
	static struct completions done;
	leader = paxos_node_new(b, &c, err, sizeof(err));
	other = paxos_node_new(b, &c, err, sizeof(err));
	client = paxos_node_new(b, &c, err, sizeof(err));
	seen = (struct session_seen){.node = other, .ordered = true, .named = true};
	done = (struct completions){0};
	ck_assert_int_eq(paxos_node_add_proposer(leader, 0), PAXOS_OK);
	ck_assert_int_eq(paxos_node_enable_sessions(other, 16), PAXOS_OK);
	ck_assert_int_eq(paxos_node_add_learner(other, session_deliver, &seen), PAXOS_OK);
	ck_assert_int_eq(paxos_node_enable_sessions(other, 16), PAXOS_E_INVALID);
	/* A session needs a learner on its node; so does a barrier. */
	ck_assert_ptr_null(paxos_session_new(client, NULL));
	ck_assert_int_eq(paxos_node_barrier(client, barrier_done, NULL), PAXOS_E_INVALID);
	static struct session_seen client_seen;
	client_seen = (struct session_seen){.node = client};
	ck_assert_int_eq(paxos_node_add_learner(client, session_deliver, &client_seen), PAXOS_OK);
	struct paxos_session_options o;
	paxos_session_options_default(&o);
	o.window = 4;
	struct paxos_session *s = paxos_session_new(client, &o);
	ck_assert_ptr_nonnull(s);
	run_for_ms(b, 300); /* the acceptors recover (a first start) */
	char value[16];
	for (uint32_t k = 0; k < 100;) {
		int len = snprintf(value, sizeof(value), "v%04u", k);
		uint64_t seq = 0;
		int rc = paxos_session_submit(s, value, (size_t)len, session_done, &done, &seq);
		if (rc == PAXOS_E_FULL) { /* the window: wait for completions */
			run_for_ms(b, 5);
			continue;
		}
		ck_assert_int_eq(rc, PAXOS_OK);
		ck_assert_uint_eq(seq, ++k);
		paxos_session_resend(s); /* a copy of each in the log */
	}
	ck_assert_int_eq(paxos_node_submit(client, "plain", 5), PAXOS_OK);
	for (int i = 0; i < 200 && (done.ok + done.other < 100 || seen.plain == 0); i++)
		run_for_ms(b, 20);
	ck_assert_msg(seen.n == 100 && seen.ordered && seen.named, "delivered %u", seen.n);
	ck_assert_uint_eq(seen.plain, 1);
	ck_assert_msg(done.ok == 100 && done.other == 0 && done.out_of_order == 0,
		      "completions: %u ok, %u other, %u out of order", done.ok, done.other,
		      done.out_of_order);
	ck_assert_uint_eq(paxos_session_in_flight(s), 0);
	uint64_t applied, dups;
	paxos_session_table_stats(paxos_node_session_table(other), &applied, &dups, NULL);
	ck_assert_uint_eq(applied, 100);
	ck_assert_uint_ge(dups, 1);
	/* A barrier on the other learner fires at or after the last value delivered. */
	paxos_iid at = 0;
	ck_assert_int_eq(paxos_node_barrier(other, barrier_done, &at), PAXOS_OK);
	for (int i = 0; i < 200 && at == 0; i++)
		run_for_ms(b, 10);
	ck_assert_uint_ge(at, seen.last_iid);
	ck_assert(at != (paxos_iid)-1);
	ck_assert_uint_eq(seen.n, 100); /* the barrier's no-op reached no application */
	paxos_node_free(client);        /* and its session */
	paxos_node_free(other);
	paxos_node_free(leader);
	for (uint32_t i = 0; i < 3; i++)
		paxos_node_free(acc[i]);
	event_base_free(b);
	char rm[64];
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	ck_assert_int_eq(system(rm), 0);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("node");
	TCase *tc = tcase_create("api");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60); /* a cluster runs in test_partitions_resume_from_snapshot */
	tcase_add_test(tc, test_submit_too_big_is_refused_with_a_reason);
	tcase_add_test(tc, test_submit_null_value_is_invalid);
	tcase_add_test(tc, test_bad_role_arguments);
	tcase_add_test(tc, test_levels_follow_hosted_roles);
	tcase_add_test(tc, test_log_goes_to_the_function_set);
	tcase_add_test(tc, test_report_names_recovery_apart);
	tcase_add_test(tc, test_storage_failure_says_why);
	tcase_add_test(tc, test_partitions_group_bad_input);
	tcase_add_test(tc, test_partitions_resume_from_snapshot);
	tcase_add_test(tc, test_leader_learns_its_own_accepts);
	tcase_add_test(tc, test_leader_learns_accepts_sent_while_it_learns);
	tcase_add_test(tc, test_ignored_group_keeps_next_to_nothing);
	tcase_add_test(tc, test_sessions_apply_once_and_complete);
	suite_add_tcase(s, tc);
	TCase *auth = tcase_create("auth");
	tcase_add_test(auth, test_auth_key_checked_at_start);
	suite_add_tcase(s, auth);
	TCase *unicast = tcase_create("unicast");
	tcase_add_test(unicast, test_unicast_learner_reaches_a_late_acceptor);
	suite_add_tcase(s, unicast);
	return s;
}
