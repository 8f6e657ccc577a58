/* SPDX-License-Identifier: BSD-3-Clause */
/* The paxos.conf parser: defaults, the shipped file, every key, every kind of error. */
#include "check_main.h"
#include <sys/stat.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <paxos/options.h>
#include <paxos/config.h>
#include <paxos/learner.h>
#include <paxos/proposer.h>

#include "auth.h"
#include "codec.h"
#include "config_fields.h"

static char err[512];

static int parse(struct paxos_config *cfg, const char *text)
{
	return paxos_config_parse(cfg, text, strlen(text), "test.conf", err, sizeof(err));
}

static bool endpoint_equal(const struct paxos_endpoint *a, const struct paxos_endpoint *b)
{
	return a->addr.s_addr == b->addr.s_addr && a->port == b->port;
}

/* Field by field: struct copies need not preserve padding, so memcmp would lie. */
static bool config_equal(const struct paxos_config *a, const struct paxos_config *b)
{
	for (int g = 0; g < PAXOS_GROUP_COUNT; g++)
		if (!endpoint_equal(&a->groups[g], &b->groups[g]))
			return false;
	for (unsigned i = 0; i < PAXOS_MAX_ACCEPTORS; i++)
		if (!endpoint_equal(&a->acceptor_address[i], &b->acceptor_address[i]))
			return false;
	for (unsigned i = 0; i < PAXOS_MAX_PROPOSERS; i++)
		if (!endpoint_equal(&a->proposer_address[i], &b->proposer_address[i]))
			return false;
	return a->transport == b->transport &&
	       a->subscription_lease_ms == b->subscription_lease_ms &&
	       a->multicast_interface.s_addr == b->multicast_interface.s_addr &&
	       a->multicast_ttl == b->multicast_ttl && a->max_datagram == b->max_datagram &&
	       a->socket_buffer == b->socket_buffer && a->acceptors == b->acceptors &&
	       a->proposers == b->proposers && a->leader == b->leader &&
	       a->proposer_window == b->proposer_window &&
	       a->proposer_concurrency == b->proposer_concurrency &&
	       a->pending_size == b->pending_size && a->phase1_timeout_ms == b->phase1_timeout_ms &&
	       a->phase2_timeout_ms == b->phase2_timeout_ms &&
	       a->adaptive_timeouts == b->adaptive_timeouts &&
	       a->timeout_floor_ms == b->timeout_floor_ms &&
	       a->timeout_ceiling_ms == b->timeout_ceiling_ms &&
	       a->learner_window == b->learner_window && a->hole_check_ms == b->hole_check_ms &&
	       a->repeat_batch == b->repeat_batch && a->learner_start == b->learner_start &&
	       a->acceptor_repeat_ms == b->acceptor_repeat_ms &&
	       a->counters_interval_ms == b->counters_interval_ms &&
	       a->counters_json == b->counters_json && strcmp(a->storage, b->storage) == 0 &&
	       strcmp(a->storage_path, b->storage_path) == 0 && a->durability == b->durability &&
	       a->lmdb_map_size == b->lmdb_map_size && a->storage_fresh == b->storage_fresh &&
	       a->storage_flush_thread == b->storage_flush_thread &&
	       a->learning_acceptors == b->learning_acceptors &&
	       a->memory_retention == b->memory_retention &&
	       a->value_batch_limit == b->value_batch_limit &&
	       a->proposer_max_backlog == b->proposer_max_backlog &&
	       strcmp(a->auth_key_file, b->auth_key_file) == 0 &&
	       endpoint_equal(&a->metrics_listen, &b->metrics_listen);
}

static void expect_endpoint(const struct paxos_endpoint *e, const char *addr, uint16_t port)
{
	char text[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &e->addr, text, sizeof(text));
	ck_assert_str_eq(text, addr);
	ck_assert_uint_eq(e->port, port);
}

/* Parses text, expects PAXOS_E_CONFIG and exactly the error message want. */
static void expect_error(const char *text, const char *want)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	ck_assert_int_eq(parse(&cfg, text), PAXOS_E_CONFIG);
	ck_assert_str_eq(err, want);
}

/* Parses text, expects PAXOS_E_CONFIG with an error that starts with prefix. */
static void expect_error_prefix(const char *text, const char *prefix)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	ck_assert_int_eq(parse(&cfg, text), PAXOS_E_CONFIG);
	ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "'%s' does not start with '%s'",
		      err, prefix);
}

START_TEST(test_defaults)
{
	struct paxos_config cfg;
	memset(&cfg, 0xa5, sizeof(cfg));
	paxos_config_defaults(&cfg);
	expect_endpoint(&cfg.groups[PAXOS_GROUP_ACCEPTORS], "239.255.11.1", 7101);
	expect_endpoint(&cfg.groups[PAXOS_GROUP_PROPOSERS], "239.255.11.2", 7102);
	expect_endpoint(&cfg.groups[PAXOS_GROUP_LEARNERS], "239.255.11.3", 7103);
	expect_endpoint(&cfg.groups[PAXOS_GROUP_SUBMIT], "239.255.11.4", 7104);
	ck_assert_uint_eq(ntohl(cfg.multicast_interface.s_addr), 0x7f000001u);
	ck_assert_uint_eq(cfg.multicast_ttl, 0);
	ck_assert_uint_eq(cfg.max_datagram, 8192);
	ck_assert_uint_eq(cfg.socket_buffer, 4194304);
	ck_assert_uint_eq(cfg.acceptors, 3);
	ck_assert_uint_eq(cfg.proposers, 2);
	ck_assert_uint_eq(cfg.leader, 0);
	ck_assert_uint_eq(cfg.proposer_window, 128);
	ck_assert_uint_eq(cfg.proposer_concurrency, 64);
	ck_assert_uint_eq(cfg.pending_size, 4096);
	ck_assert_uint_eq(cfg.phase1_timeout_ms, 20);
	ck_assert_uint_eq(cfg.phase2_timeout_ms, 20);
	ck_assert_uint_eq(cfg.learner_window, 4096);
	ck_assert_uint_eq(cfg.hole_check_ms, 20);
	ck_assert_uint_eq(cfg.repeat_batch, 256);
	ck_assert_int_eq(cfg.learner_start, PAXOS_START_FROM_FIRST);
	ck_assert_uint_eq(cfg.acceptor_repeat_ms, 100);
	ck_assert_uint_eq(cfg.counters_interval_ms, 1000);
	ck_assert_str_eq(cfg.storage, "memory");
	ck_assert_str_eq(cfg.storage_path, "/var/tmp/paxos");
	ck_assert_int_eq(cfg.durability, PAXOS_DURABILITY_NONE);
	ck_assert_uint_eq(cfg.lmdb_map_size, 1ull << 30);
	ck_assert(!cfg.storage_fresh);
	ck_assert_uint_eq(cfg.memory_retention, 1000000);
	ck_assert(cfg.learning_acceptors);
	ck_assert_uint_eq(cfg.value_batch_limit, 64);
	ck_assert_uint_eq(cfg.proposer_max_backlog, 32);
	ck_assert_str_eq(cfg.auth_key_file, ""); /* no key: datagrams are not authenticated */
	/* A client value is framed in an instance value with a 4-byte length (lib/core/batch.h). */
	ck_assert_uint_eq(paxos_config_max_instance_value(&cfg), 8192 - PAXOS_WIRE_OVERHEAD);
	ck_assert_uint_eq(paxos_config_max_value(&cfg), 8192 - PAXOS_WIRE_OVERHEAD - 4);
}
END_TEST

START_TEST(test_empty_text_gives_defaults)
{
	struct paxos_config cfg, defaults;
	paxos_config_defaults(&defaults);
	memset(&cfg, 0, sizeof(cfg));
	ck_assert_int_eq(paxos_config_parse(&cfg, NULL, 0, "empty", err, sizeof(err)), PAXOS_OK);
	ck_assert(config_equal(&cfg, &defaults));
	ck_assert_int_eq(parse(&cfg, "\n\n   \n# only a comment\n"), PAXOS_OK);
	ck_assert(config_equal(&cfg, &defaults));
}
END_TEST

/* The repository root: $PAXOS_SOURCE_DIR, else three levels up from this file. */
static void source_path(char *out, size_t cap, const char *relative)
{
	const char *env = getenv("PAXOS_SOURCE_DIR");
	if (env && *env) {
		snprintf(out, cap, "%s/%s", env, relative);
		return;
	}
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s", __FILE__);
	for (int up = 0; up < 3; up++) {
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		else
			snprintf(dir, sizeof(dir), "..");
	}
	snprintf(out, cap, "%s/%s", dir, relative);
}

START_TEST(test_shipped_file_equals_defaults)
{
	char path[1200];
	struct paxos_config cfg, defaults;
	source_path(path, sizeof(path), "paxos.conf");
	paxos_config_defaults(&defaults);
	memset(&cfg, 0, sizeof(cfg));
	ck_assert_msg(paxos_config_load(&cfg, path, err, sizeof(err)) == PAXOS_OK, "%s", err);
	ck_assert(config_equal(&cfg, &defaults));
}
END_TEST

/* Every key must appear in the shipped file, so each one is documented there. */
START_TEST(test_shipped_file_sets_every_key)
{
	static const char *const keys[] = {
	    "transport",
	    "subscription-lease-ms",
	    "acceptors-group",
	    "proposers-group",
	    "learners-group",
	    "submit-group",
	    "multicast-interface",
	    "multicast-ttl",
	    "max-datagram",
	    "socket-buffer",
	    "acceptors",
	    "proposers",
	    "membership-alpha",
	    "initial-members",
	    "initial-proposers",
	    "leader",
	    "check-quorum",
	    "proposer-window",
	    "proposer-concurrency",
	    "pending-list-size",
	    "phase1-timeout-ms",
	    "phase2-timeout-ms",
	    "adaptive-timeouts",
	    "timeout-floor-ms",
	    "timeout-ceiling-ms",
	    "learner-window",
	    "learner-hole-check-ms",
	    "learner-repeat-batch",
	    "learner-start",
	    "acceptor-repeat-ms",
	    "counters-interval-ms",
	    "counters-json",
	    "storage",
	    "storage-path",
	    "lmdb-map-size",
	    "storage-fresh",
	    "storage-flush-thread",
	    "memory-retention",
	    "learning-acceptors",
	};
	char path[1200], line[2048];
	source_path(path, sizeof(path), "paxos.conf");
	for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++) {
		FILE *f = fopen(path, "r");
		ck_assert_ptr_nonnull(f);
		bool found = false;
		while (fgets(line, sizeof(line), f)) {
			size_t n = strlen(keys[k]);
			if (strncmp(line, keys[k], n) == 0 && (line[n] == ' ' || line[n] == '\t')) {
				ck_assert_msg(strstr(line, "# ") && strstr(line, "(default "),
					      "%s is not documented", keys[k]);
				found = true;
			}
		}
		fclose(f);
		ck_assert_msg(found, "%s missing from paxos.conf", keys[k]);
	}
	/* Keys without a single default, or off unless given, are shown commented out:
	 * durability (per backend), auth-key-file (no authentication), metrics-listen (no
	 * server). */
	static const char *const commented[] = {"#durability ", "#auth-key-file ",
						"#metrics-listen ", "#admin-key-file "};
	for (size_t k = 0; k < sizeof(commented) / sizeof(*commented); k++) {
		FILE *f = fopen(path, "r");
		ck_assert_ptr_nonnull(f);
		bool shown = false;
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, commented[k], strlen(commented[k])) == 0 &&
			    strstr(line, "(default"))
				shown = true;
		fclose(f);
		ck_assert_msg(shown, "%s is not documented in paxos.conf", commented[k] + 1);
	}
}
END_TEST

/* One valid setting per numeric key and where it must land. */
struct u32_case {
	const char *text;
	size_t offset;
	uint32_t want;
};

#define U32_CASE(text, field, want)                                                                \
	{                                                                                          \
		text, offsetof(struct paxos_config, field), want                                   \
	}

static const struct u32_case u32_cases[] = {
    U32_CASE("multicast-ttl 255", multicast_ttl, 255),
    U32_CASE("max-datagram 65507", max_datagram, 65507),
    U32_CASE("max-datagram 512", max_datagram, 512),
    U32_CASE("socket-buffer 65536", socket_buffer, 65536),
    U32_CASE("socket-buffer 268435456", socket_buffer, 268435456),
    U32_CASE("acceptors 32", acceptors, 32),
    U32_CASE("acceptors 1", acceptors, 1),
    U32_CASE("proposers 100", proposers, 100),
    U32_CASE("proposers 7\nleader 6", leader, 6),
    U32_CASE("proposer-window 65536", proposer_window, 65536),
    U32_CASE("proposer-concurrency 1", proposer_concurrency, 1),
    U32_CASE("proposer-concurrency 128", proposer_concurrency, 128),
    /* Small values: a million of the largest would not fit in every machine (check_memory). */
    U32_CASE("pending-list-size 1048576\nmax-datagram 512", pending_size, 1048576),
    U32_CASE("phase1-timeout-ms 600000", phase1_timeout_ms, 600000),
    U32_CASE("phase2-timeout-ms 1", phase2_timeout_ms, 1),
    U32_CASE("learner-window 16", learner_window, 16),
    U32_CASE("learner-hole-check-ms 5", hole_check_ms, 5),
    U32_CASE("learner-repeat-batch 512", repeat_batch, 512),
    U32_CASE("acceptor-repeat-ms 250", acceptor_repeat_ms, 250),
    U32_CASE("counters-interval-ms 0", counters_interval_ms, 0),
    U32_CASE("counters-interval-ms 3600000", counters_interval_ms, 3600000),
    U32_CASE("max-datagram 0001024", max_datagram, 1024),
    U32_CASE("memory-retention 0", memory_retention, 0),
    U32_CASE("memory-retention 8388608", memory_retention, 8388608),
};

START_TEST(test_u32_key_applied)
{
	const struct u32_case *c = &u32_cases[_i];
	struct paxos_config cfg;
	uint32_t got;
	ck_assert_msg(parse(&cfg, c->text) == PAXOS_OK, "%s: %s", c->text, err);
	memcpy(&got, (const char *)&cfg + c->offset, sizeof(got));
	ck_assert_uint_eq(got, c->want);
}
END_TEST

START_TEST(test_other_keys_applied)
{
	struct paxos_config cfg;
	ck_assert_int_eq(parse(&cfg, "acceptors-group 224.0.0.250:1\n"
				     "proposers-group 239.1.2.3:65535\n"
				     "learners-group 230.0.0.1:9000\n"
				     "submit-group 239.255.255.255:9001\n"
				     "multicast-interface 10.1.2.3\n"
				     "learner-start current\n"
				     "storage memory\n"),
			 PAXOS_OK);
	expect_endpoint(&cfg.groups[PAXOS_GROUP_ACCEPTORS], "224.0.0.250", 1);
	expect_endpoint(&cfg.groups[PAXOS_GROUP_PROPOSERS], "239.1.2.3", 65535);
	expect_endpoint(&cfg.groups[PAXOS_GROUP_LEARNERS], "230.0.0.1", 9000);
	expect_endpoint(&cfg.groups[PAXOS_GROUP_SUBMIT], "239.255.255.255", 9001);
	ck_assert_uint_eq(ntohl(cfg.multicast_interface.s_addr), 0x0a010203u);
	ck_assert_int_eq(cfg.learner_start, PAXOS_START_FROM_CURRENT);
	ck_assert_str_eq(cfg.storage, "memory");
	ck_assert_int_eq(parse(&cfg, "learner-start first"), PAXOS_OK);
	ck_assert_int_eq(cfg.learner_start, PAXOS_START_FROM_FIRST);
}
END_TEST

START_TEST(test_max_value_follows_datagram)
{
	struct paxos_config cfg;
	ck_assert_int_eq(parse(&cfg, "max-datagram 512"), PAXOS_OK);
	ck_assert_uint_eq(paxos_config_max_value(&cfg), 512 - 64 - 4);
	ck_assert_uint_eq(paxos_config_max_instance_value(&cfg), 512 - 64);
	ck_assert_int_eq(parse(&cfg, "max-datagram 65507"), PAXOS_OK);
	ck_assert_uint_eq(paxos_config_max_value(&cfg), 65507 - 64 - 4);
	ck_assert_uint_eq(paxos_config_max_instance_value(&cfg), 65507 - 64);
	ck_assert_int_eq(parse(&cfg, "value-batch-limit 1\nproposer-max-backlog 0"), PAXOS_OK);
	ck_assert_uint_eq(cfg.value_batch_limit, 1);
	ck_assert_uint_eq(cfg.proposer_max_backlog, 0);
	ck_assert_int_eq(parse(&cfg, "value-batch-limit 0"), PAXOS_E_CONFIG);
}
END_TEST

/* Bad values for each key: NULL where a key has no such case. */
struct bad_case {
	const char *key;
	const char *good;
	const char *junk;
	const char *below;
	const char *above;
};

static const struct bad_case bad_cases[] = {
    {"acceptors-group", "239.255.11.1:7101", "239.255.11.1", "239.255.11.1:0",
     "239.255.11.1:65536"},
    {"proposers-group", "239.255.11.2:7102", "nowhere:7000", "239.255.11.2:0",
     "239.255.11.2:99999999999999999999"},
    {"learners-group", "239.255.11.3:7103", "239.255.11.3:x", "239.255.11.3:-1",
     "239.255.11.3:70000"},
    {"submit-group", "239.255.11.4:7104", "239.255.11:7104", NULL, "239.255.11.4:65536"},
    {"multicast-interface", "127.0.0.1", "127.0.0.256", NULL, NULL},
    {"multicast-ttl", "0", "ten", NULL, "256"},
    {"max-datagram", "8192", "8k", "511", "65508"},
    {"socket-buffer", "4194304", "0x10000", "65535", "268435457"},
    {"acceptors", "3", "+3", "0", "33"},
    {"proposers", "2", "-2", "0", "101"},
    {"membership-alpha", "0", "-1", NULL, "1048577"},
    {"initial-members", "0", "two", NULL, "33"},
    {"initial-proposers", "0", "two", NULL, "101"},
    {"leader", "0", "zero", NULL, "100"},
    {"proposer-window", "128", "1.5", "0", "65537"},
    {"proposer-concurrency", "64", "1e3", "0", "65537"},
    {"pending-list-size", "4096", "4096x", "0", "1048577"},
    {"phase1-timeout-ms", "20", "20ms", "0", "600001"},
    {"phase2-timeout-ms", "20", " 20,", "0", "18446744073709551616"},
    {"adaptive-timeouts", "no", "adaptive", NULL, NULL},
    {"check-quorum", "yes", "maybe", NULL, NULL},
    {"timeout-floor-ms", "10", "one", "0", "600001"},
    {"timeout-ceiling-ms", "2000", "2s", "0", "600001"},
    {"learner-window", "4096", "many", "15", "1048577"},
    {"learner-hole-check-ms", "20", "-0", "0", "600001"},
    {"learner-repeat-batch", "256", "all", "0", "513"},
    {"learner-start", "first", "last", NULL, NULL},
    {"acceptor-repeat-ms", "100", "0.1", "0", "600001"},
    {"counters-interval-ms", "1000", "never", NULL, "3600001"},
    {"counters-json", "no", "true", NULL, NULL},
    {"storage", "memory", "sqlite", NULL, NULL},
    {"durability", "none", "fast", NULL, NULL},
    {"lmdb-map-size", "1073741824", "1G", "1048575", "1099511627777"},
    {"storage-fresh", "no", "maybe", NULL, NULL},
    {"storage-flush-thread", "no", "sometimes", NULL, NULL},
    {"memory-retention", "1000000", "1M", NULL, "8388609"},
    {"learning-acceptors", "yes", "on", NULL, NULL},
};

static void expect_bad(const char *key, const char *value)
{
	char text[256], prefix[128];
	snprintf(text, sizeof(text), "# header\n%s %s\n", key, value);
	snprintf(prefix, sizeof(prefix), "test.conf:2: %s: ", key);
	expect_error_prefix(text, prefix);
}

START_TEST(test_bad_values_rejected)
{
	const struct bad_case *c = &bad_cases[_i];
	char text[256], prefix[128];

	/* missing value, with and without trailing blanks or a comment */
	snprintf(prefix, sizeof(prefix), "test.conf:1: %s: missing value (expected ", c->key);
	expect_error_prefix(c->key, prefix);
	snprintf(text, sizeof(text), "%s   # nothing here\n", c->key);
	expect_error_prefix(text, prefix);

	expect_bad(c->key, c->junk);
	if (c->below)
		expect_bad(c->key, c->below);
	if (c->above)
		expect_bad(c->key, c->above);

	/* an extra token after a good value */
	snprintf(text, sizeof(text), "%s %s extra\n", c->key, c->good);
	snprintf(prefix, sizeof(prefix), "test.conf:1: %s: unexpected 'extra' after the value",
		 c->key);
	expect_error(text, prefix);
	/* the same line without the extra token is fine */
	struct paxos_config cfg;
	snprintf(text, sizeof(text), "%s %s\n", c->key, c->good);
	ck_assert_msg(parse(&cfg, text) == PAXOS_OK, "%s: %s", text, err);
}
END_TEST

START_TEST(test_error_messages_exact)
{
	expect_error("\n\n# c\n\n\n\n\n\n\n\n\nmax-datagram 70000\n",
		     "test.conf:12: max-datagram: 70000 is out of range 512..65507");
	expect_error(
	    "max-datagram 99999999999999999999999",
	    "test.conf:1: max-datagram: 99999999999999999999999 is out of range 512..65507");
	expect_error("acceptors 3x", "test.conf:1: acceptors: '3x' is not a decimal number");
	expect_error("acceptors",
		     "test.conf:1: acceptors: missing value (expected a number in 1..32)");
	expect_error("bogus-key 1", "test.conf:1: unknown key 'bogus-key'");
	expect_error("acceptors 3\n\nacceptors 3\n",
		     "test.conf:3: acceptors: already set on line 1");
	expect_error("learner-start last",
		     "test.conf:1: learner-start: 'last' is not first or current");
	expect_error("partitions 2\nlearner-merge yes\nlearner-start current\n",
		     "test.conf:3: learner-merge: needs learner-start first: a learner that starts "
		     "at the current instance would merge the partitions in another order than "
		     "the others");
	expect_error("storage rocksdb", "test.conf:1: storage: unknown backend 'rocksdb' "
					"(available: memory, lmdb, bdb)");
	expect_error("multicast-interface localhost",
		     "test.conf:1: multicast-interface: 'localhost' is not an IPv4 address");
	expect_error("acceptors-group 10.0.0.1:7101",
		     "test.conf:1: acceptors-group: 10.0.0.1 is not an IPv4 multicast address "
		     "(224.0.0.0/4)");
	expect_error("submit-group 239.1.1.1:0",
		     "test.conf:1: submit-group: port 0 is out of range 1..65535");
	expect_error("submit-group 239.1.1.1",
		     "test.conf:1: submit-group: '239.1.1.1' is not ADDRESS:PORT");
}
END_TEST

/* transport unicast and the members' addresses: the shipped file, both line forms, and every
 * mistake named. */
/* Partitions: each one's ports are the configured ones plus 10 per partition, its storage
 * a directory of its own; overlapping ports and long paths are refused at load. */
START_TEST(test_partitions)
{
	struct paxos_config cfg, part;
	paxos_config_defaults(&cfg);
	ck_assert_uint_eq(paxos_config_partitions(&cfg), 1);
	ck_assert_msg(parse(&cfg, "partitions 3\nstorage-path /var/tmp/px\n"
				  "metrics-listen 127.0.0.1:9100\n") == PAXOS_OK,
		      "%s", err);
	ck_assert_uint_eq(paxos_config_partitions(&cfg), 3);
	ck_assert_int_eq(paxos_config_partition(&cfg, 0, &part), PAXOS_OK);
	ck_assert(config_equal(&cfg, &part));
	ck_assert_int_eq(paxos_config_partition(&cfg, 2, &part), PAXOS_OK);
	expect_endpoint(&part.groups[PAXOS_GROUP_ACCEPTORS], "239.255.11.1", 7121);
	expect_endpoint(&part.groups[PAXOS_GROUP_SUBMIT], "239.255.11.4", 7124);
	ck_assert_str_eq(part.storage_path, "/var/tmp/px/partition-2");
	ck_assert_uint_eq(part.metrics_listen.port, 0);
	ck_assert_uint_eq(part.partition, 2);
	ck_assert_int_eq(paxos_config_partition(&cfg, 3, &part), PAXOS_E_INVALID);

	/* Unicast members move by the same step. */
	ck_assert_msg(parse(&cfg, "acceptor 0 127.0.0.1:8800\nacceptor 1 127.0.0.1:8801\n"
				  "acceptor 2 127.0.0.1:8802\nproposer 0 127.0.0.1:8900\n"
				  "proposer 1 127.0.0.1:8901\ntransport unicast\npartitions 2\n") ==
			  PAXOS_OK,
		      "%s", err);
	ck_assert_int_eq(paxos_config_partition(&cfg, 1, &part), PAXOS_OK);
	expect_endpoint(&part.acceptor_address[2], "127.0.0.1", 8812);
	expect_endpoint(&part.proposer_address[0], "127.0.0.1", 8910);

	expect_error("partitions 2\nsubmit-group 239.255.11.1:7111\n",
		     "test.conf:1: partitions: partition 1 would use 239.255.11.1:7111, which "
		     "partition 0 uses already (each partition adds 10 to every port)");
	expect_error("partitions 64\nsubmit-group 239.255.11.4:65000\n",
		     "test.conf:1: partitions: 64 partitions need port 65000 plus 630, above "
		     "65535");
	expect_error_prefix("partitions 65\n", "test.conf:1: partitions:");
	expect_error_prefix("partitions 0\n", "test.conf:1: partitions:");
	char text[400];
	snprintf(text, sizeof(text), "storage-path /%0250d\npartitions 2\n", 0);
	expect_error_prefix(text, "test.conf:2: partitions: storage-path is too long");
}
END_TEST

/* partition-acceptors: each partition's own acceptors, numbered 0.. in its configuration;
 * "spread" gives disjoint sets when there are enough; every mistake named. */
START_TEST(test_partition_acceptors)
{
	struct paxos_config cfg, part;
	uint32_t local = 99;
	ck_assert_msg(parse(&cfg, "acceptors 6\npartitions 2\npartition-acceptors spread\n") ==
			  PAXOS_OK,
		      "%s", err);
	ck_assert_int_eq(paxos_config_partition(&cfg, 1, &part), PAXOS_OK);
	ck_assert_uint_eq(part.acceptors, 3);
	ck_assert_int_eq(paxos_config_partition_acceptor(&cfg, 1, 4, &local), PAXOS_OK);
	ck_assert_uint_eq(local, 1);
	ck_assert_int_eq(paxos_config_partition_acceptor(&cfg, 0, 4, &local), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_config_partition_acceptor(&cfg, 0, 2, &local), PAXOS_OK);
	ck_assert_uint_eq(local, 2);
	char buf[64];
	ck_assert_int_eq(paxos_config_get(&cfg, "partition-acceptors", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "spread");

	/* Too few acceptors for disjoint sets of 3: sets of 3 that overlap. */
	ck_assert_msg(parse(&cfg, "acceptors 5\npartitions 2\npartition-acceptors spread\n") ==
			  PAXOS_OK,
		      "%s", err);
	ck_assert_int_eq(paxos_config_partition_acceptor(&cfg, 1, 0, &local), PAXOS_OK);
	ck_assert_uint_eq(local, 0);
	ck_assert_int_eq(paxos_config_partition_acceptor(&cfg, 1, 2, NULL), PAXOS_E_INVALID);

	/* Explicit sets; unicast members follow their acceptor into its partition's numbering. */
	ck_assert_msg(parse(&cfg, "acceptor 0 127.0.0.1:8800\nacceptor 1 127.0.0.1:8801\n"
				  "acceptor 2 127.0.0.1:8802\nacceptor 3 127.0.0.1:8803\n"
				  "proposer 0 127.0.0.1:8900\nproposer 1 127.0.0.1:8901\n"
				  "transport unicast\nacceptors 4\npartitions 2\n"
				  "partition-acceptors 0,1,3/1-3\n") == PAXOS_OK,
		      "%s", err);
	ck_assert_int_eq(paxos_config_partition(&cfg, 0, &part), PAXOS_OK);
	ck_assert_uint_eq(part.acceptors, 3);
	expect_endpoint(&part.acceptor_address[2], "127.0.0.1", 8803);
	ck_assert_uint_eq(part.acceptor_address[3].port, 0);
	ck_assert_int_eq(paxos_config_partition(&cfg, 1, &part), PAXOS_OK);
	expect_endpoint(&part.acceptor_address[0], "127.0.0.1", 8811);
	expect_endpoint(&part.acceptor_address[2], "127.0.0.1", 8813);
	/* Applied again (in place), a partition's configuration stays what it is. */
	ck_assert_int_eq(paxos_config_partition(&part, 0, &part), PAXOS_OK);
	ck_assert_uint_eq(part.acceptors, 3);
	expect_endpoint(&part.acceptor_address[0], "127.0.0.1", 8811);

	/* The default: every acceptor serves every partition, as before. */
	ck_assert_msg(parse(&cfg, "partitions 2\n") == PAXOS_OK, "%s", err);
	ck_assert_int_eq(paxos_config_partition(&cfg, 1, &part), PAXOS_OK);
	ck_assert_uint_eq(part.acceptors, 3);
	ck_assert_int_eq(paxos_config_partition_acceptor(&cfg, 1, 2, &local), PAXOS_OK);
	ck_assert_uint_eq(local, 2);

	expect_error("partitions 2\npartition-acceptors 0-2/3\n",
		     "test.conf:2: partition-acceptors: unknown acceptor id 3: ids are below "
		     "acceptors (3)");
	expect_error("partitions 2\npartition-acceptors 0-2\n",
		     "test.conf:2: partition-acceptors: '0-2' names 1 set, but there are 2 "
		     "partitions: one set per partition, separated by '/' (or all, or spread)");
	expect_error("partitions 2\npartition-acceptors 0/1/2\n",
		     "test.conf:2: partition-acceptors: '0/1/2' names more sets than partitions "
		     "(2): one set per partition, separated by '/'");
	expect_error("partitions 2\npartition-acceptors 0-2//\n",
		     "test.conf:2: partition-acceptors: '' is not a set of acceptor ids (such as "
		     "0-2 or 0,2,4): every partition needs at least one acceptor");
	expect_error("partitions 2\npartition-acceptors 2-1/0\n",
		     "test.conf:2: partition-acceptors: 2-1 is not a range (the first id is "
		     "higher)");
	expect_error_prefix("partitions 2\npartition-acceptors 0,x/1\n",
			    "test.conf:2: partition-acceptors: '0,x' is not a set");
	expect_error_prefix("partitions 2\npartition-acceptors 0,/1\n",
			    "test.conf:2: partition-acceptors: '0,' is not a set");
	expect_error("partitions 2\nmembership-alpha 8\npartition-acceptors spread\n",
		     "test.conf:3: partition-acceptors: 'spread' needs membership-alpha 0: a "
		     "partition's acceptors are fixed by this line, not changed through its log");
}
END_TEST

START_TEST(test_unicast_members)
{
	char path[1200];
	struct paxos_config cfg;
	source_path(path, sizeof(path), "paxos-unicast.conf");
	ck_assert_msg(paxos_config_load(&cfg, path, err, sizeof(err)) == PAXOS_OK, "%s", err);
	ck_assert_int_eq(cfg.transport, PAXOS_TRANSPORT_UNICAST);
	expect_endpoint(&cfg.acceptor_address[0], "127.0.0.1", 7201);
	expect_endpoint(&cfg.acceptor_address[2], "127.0.0.1", 7203);
	expect_endpoint(&cfg.proposer_address[1], "127.0.0.1", 7302);
	ck_assert_uint_eq(cfg.acceptor_address[3].port, 0);
	ck_assert_uint_eq(cfg.subscription_lease_ms, 3000);

	ck_assert_msg(parse(&cfg,
			    "transport unicast\nacceptors 1\nproposers 1\n"
			    "acceptor 0 10.0.0.1 8800\nproposer 0 127.0.0.1:8801\n") == PAXOS_OK,
		      "%s", err);
	expect_endpoint(&cfg.acceptor_address[0], "10.0.0.1", 8800);
	expect_endpoint(&cfg.proposer_address[0], "127.0.0.1", 8801);
	/* Addresses may be given with multicast too: switching is one line. */
	ck_assert_msg(parse(&cfg, "acceptor 1 10.0.0.2:1\n") == PAXOS_OK, "%s", err);
	ck_assert_int_eq(cfg.transport, PAXOS_TRANSPORT_MULTICAST);

	const char *members = "acceptors 1\nproposers 1\nacceptor 0 10.0.0.1:7201\n";
	char text[512];
	expect_error("transport tcp", "test.conf:1: transport: 'tcp' is not multicast or unicast");
	expect_error("transport unicast\nacceptors 1\nproposers 1\nacceptor 0 10.0.0.1:7201\n",
		     "test.conf:1: transport: unicast needs every member's address, and proposer "
		     "0 has none (add a line 'proposer 0 HOST:PORT')");
	snprintf(text, sizeof(text), "%sacceptor 1 10.0.0.2:7201\n", members);
	expect_error(text, "test.conf:4: acceptor: unknown id 1: ids are below acceptors (1)");
	/* An acceptor that is no member at the start may get its address from the log, not
	 * a member at the start. */
	struct paxos_config later;
	paxos_config_defaults(&later);
	ck_assert_int_eq(parse(&later, "transport unicast\nacceptors 4\nproposers 1\n"
				       "membership-alpha 256\ninitial-members 3\n"
				       "acceptor 0 10.0.0.1:7201\nacceptor 1 10.0.0.2:7201\n"
				       "acceptor 2 10.0.0.3:7201\nproposer 0 10.0.0.1:7301\n"),
			 PAXOS_OK);
	expect_error("transport unicast\nacceptors 4\nproposers 1\nmembership-alpha 256\n"
		     "initial-members 3\nacceptor 0 10.0.0.1:7201\nacceptor 3 10.0.0.2:7201\n"
		     "proposer 0 10.0.0.1:7301\n",
		     "test.conf:1: transport: unicast needs every member's address, and acceptor 1 "
		     "has none (add a line 'acceptor 1 HOST:PORT')");
	snprintf(text, sizeof(text), "%sacceptor 0 10.0.0.2:7201\n", members);
	expect_error(text, "test.conf:4: acceptor: 0 already has an address, on line 3");
	snprintf(text, sizeof(text), "%sproposer 0 10.0.0.1:7201\n", members);
	expect_error(text, "test.conf:4: proposer: 10.0.0.1:7201 of proposer 0 is also the "
			   "address of acceptor 0");
	expect_error("acceptor 0 239.1.1.1:7201",
		     "test.conf:1: acceptor: 239.1.1.1 is not a unicast address (a member needs "
		     "its own address)");
	expect_error("acceptor 0 0.0.0.0:7201", "test.conf:1: acceptor: 0.0.0.0 is not a unicast "
						"address (a member needs its own address)");
	expect_error("acceptor 0 localhost:7201",
		     "test.conf:1: acceptor: 'localhost' is not an IPv4 address");
	expect_error("acceptor 0 10.0.0.1:0",
		     "test.conf:1: acceptor: port 0 is out of range 1..65535");
	expect_error("acceptor 0 10.0.0.1", "test.conf:1: acceptor: '10.0.0.1' is not HOST:PORT");
	expect_error("acceptor 0", "test.conf:1: acceptor: missing address (expected 'acceptor ID "
				   "HOST:PORT')");
	expect_error("acceptor x 10.0.0.1:1", "test.conf:1: acceptor: id 'x' is not a decimal "
					      "number");
	expect_error("proposer 100 10.0.0.1:1", "test.conf:1: proposer: id 100 is out of range "
						"0..99");
	expect_error("acceptor 0 10.0.0.1 1 2", "test.conf:1: acceptor: unexpected text after the "
						"address (expected 'acceptor ID HOST:PORT')");
	snprintf(text, sizeof(text),
		 "transport unicast\n%sproposer 0 10.0.0.1:7301\nmax-datagram 65507\n", members);
	expect_error(text, "test.conf:6: max-datagram: 65507 is above 65506, the most the "
			   "unicast transport carries");
}
END_TEST

/* The opaque configuration: new, set and get by key name, free. */
START_TEST(test_keys_by_name)
{
	struct paxos_config *cfg = paxos_config_new();
	char buf[64];
	ck_assert_ptr_nonnull(cfg);
	ck_assert_int_eq(paxos_config_get(cfg, "acceptors-group", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "239.255.11.1:7101");
	ck_assert_int_eq(paxos_config_get(cfg, "learning-acceptors", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "yes");
	ck_assert_int_eq(paxos_config_get(cfg, "durability", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "none");
	ck_assert_int_eq(paxos_config_get(cfg, "lmdb-map-size", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "1073741824");
	ck_assert_int_eq(paxos_config_get(cfg, "acceptor 0", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(paxos_config_get(cfg, "no-such-key", buf, sizeof(buf)), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_config_get(cfg, "acceptor 32", buf, sizeof(buf)), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_config_get(cfg, "storage-path", buf, 4), PAXOS_E_FULL);

	ck_assert_int_eq(paxos_config_set(cfg, "phase1-timeout-ms", "35", err, sizeof(err)),
			 PAXOS_OK);
	ck_assert_int_eq(paxos_config_get(cfg, "phase1-timeout-ms", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "35");
	/* A backend brings its default durability. */
	ck_assert_int_eq(paxos_config_set(cfg, "storage", "lmdb", err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(paxos_config_get(cfg, "durability", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "sync");
	/* Members, then the transport that needs them. */
	ck_assert_int_eq(paxos_config_set(cfg, "transport", "unicast", err, sizeof(err)),
			 PAXOS_E_CONFIG);
	ck_assert_str_eq(err, "transport: unicast needs every member's address, and acceptor 0 "
			      "has none (add a line 'acceptor 0 HOST:PORT')");
	const char *members[][2] = {{"acceptor", "0 127.0.0.1:7201"},
				    {"acceptor", "1 127.0.0.1:7202"},
				    {"acceptor", "2 127.0.0.1:7203"},
				    {"proposer", "0 127.0.0.1:7301"},
				    {"proposer", "1 127.0.0.1:7302"}};
	for (size_t i = 0; i < 5; i++)
		ck_assert_msg(paxos_config_set(cfg, members[i][0], members[i][1], err,
					       sizeof(err)) == PAXOS_OK,
			      "%s", err);
	ck_assert_int_eq(paxos_config_set(cfg, "transport", "unicast", err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(paxos_config_get(cfg, "proposer 1", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "127.0.0.1:7302");
	/* A setting the whole refuses leaves cfg as it was. */
	ck_assert_int_eq(paxos_config_set(cfg, "acceptors", "2", err, sizeof(err)), PAXOS_E_CONFIG);
	ck_assert_str_eq(err, "acceptor: unknown id 2: ids are below acceptors (2)");
	ck_assert_int_eq(paxos_config_get(cfg, "acceptors", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "3");
	ck_assert_int_eq(paxos_config_set(cfg, "acceptors-group", "10.0.0.1:1", err, sizeof(err)),
			 PAXOS_E_CONFIG);
	ck_assert_str_eq(err, "acceptors-group: 10.0.0.1 is not an IPv4 multicast address "
			      "(224.0.0.0/4)");
	ck_assert_int_eq(paxos_config_set(cfg, "bad key", "1", err, sizeof(err)), PAXOS_E_CONFIG);
	ck_assert_int_eq(paxos_config_set(cfg, "acceptors", "3 # 4", err, sizeof(err)),
			 PAXOS_E_CONFIG);
	ck_assert_int_eq(paxos_config_set(cfg, "no-such-key", "1", err, sizeof(err)),
			 PAXOS_E_CONFIG);
	ck_assert_str_eq(err, "unknown key 'no-such-key'");
	/* Loading a file starts from the defaults again. */
	char path[1200];
	source_path(path, sizeof(path), "paxos.conf");
	ck_assert_int_eq(paxos_config_load(cfg, path, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(paxos_config_get(cfg, "transport", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "multicast");
	paxos_config_free(cfg);
	paxos_config_free(NULL);
}
END_TEST

/* Storage keys: backend, path, durability resolved per backend, map size, fresh start. */
START_TEST(test_storage_keys)
{
	struct paxos_config cfg;
	ck_assert_int_eq(parse(&cfg, "storage lmdb\n"), PAXOS_OK);
	ck_assert_str_eq(cfg.storage, "lmdb");
	ck_assert_int_eq(cfg.durability, PAXOS_DURABILITY_SYNC);
	ck_assert_int_eq(parse(&cfg, "storage bdb\n"), PAXOS_OK);
	ck_assert_str_eq(cfg.storage, "bdb");
	ck_assert_int_eq(cfg.durability, PAXOS_DURABILITY_SYNC);
	ck_assert_int_eq(parse(&cfg, "storage memory\ndurability none\n"), PAXOS_OK);
	ck_assert_int_eq(cfg.durability, PAXOS_DURABILITY_NONE);

	static const struct {
		const char *storage, *mode;
		enum paxos_durability want;
	} valid[] = {
	    {"lmdb", "nosync", PAXOS_DURABILITY_NOSYNC},
	    {"lmdb", "sync", PAXOS_DURABILITY_SYNC},
	    {"bdb", "inmemory-log", PAXOS_DURABILITY_INMEMORY_LOG},
	    {"bdb", "nosync", PAXOS_DURABILITY_NOSYNC},
	    {"bdb", "write-nosync", PAXOS_DURABILITY_WRITE_NOSYNC},
	    {"bdb", "sync", PAXOS_DURABILITY_SYNC},
	    {"bdb", "dbsync", PAXOS_DURABILITY_DBSYNC},
	};
	char text[256];
	for (size_t k = 0; k < sizeof(valid) / sizeof(*valid); k++) {
		/* the order of the two keys does not matter */
		snprintf(text, sizeof(text), "storage %s\ndurability %s\n", valid[k].storage,
			 valid[k].mode);
		ck_assert_msg(parse(&cfg, text) == PAXOS_OK, "%s: %s", text, err);
		ck_assert_int_eq(cfg.durability, valid[k].want);
		ck_assert_str_eq(paxos_durability_name(cfg.durability), valid[k].mode);
		snprintf(text, sizeof(text), "durability %s\nstorage %s\n", valid[k].mode,
			 valid[k].storage);
		ck_assert_msg(parse(&cfg, text) == PAXOS_OK, "%s: %s", text, err);
		ck_assert_int_eq(cfg.durability, valid[k].want);
	}
	ck_assert_str_eq(paxos_durability_name(PAXOS_DURABILITY_UNSET), "unset");
	ck_assert_str_eq(paxos_durability_name(PAXOS_DURABILITY_NONE), "none");
	ck_assert_str_eq(paxos_durability_name((enum paxos_durability)99), "unknown");

	ck_assert_int_eq(parse(&cfg, "storage-path /srv/paxos/data\nlmdb-map-size 1048576\n"
				     "storage-fresh yes\n"),
			 PAXOS_OK);
	ck_assert_str_eq(cfg.storage_path, "/srv/paxos/data");
	ck_assert_uint_eq(cfg.lmdb_map_size, 1048576);
	ck_assert(cfg.storage_fresh);
	ck_assert_int_eq(parse(&cfg, "lmdb-map-size 1099511627776\nstorage-fresh no\n"), PAXOS_OK);
	ck_assert_uint_eq(cfg.lmdb_map_size, 1ull << 40);
	ck_assert(!cfg.storage_fresh);
	ck_assert_int_eq(parse(&cfg, "learning-acceptors no\n"), PAXOS_OK);
	ck_assert(!cfg.learning_acceptors);
	ck_assert_int_eq(parse(&cfg, "learning-acceptors yes\n"), PAXOS_OK);
	ck_assert(cfg.learning_acceptors);
}
END_TEST

START_TEST(test_storage_errors)
{
	expect_error("storage lmdb\ndurability dbsync\n",
		     "test.conf:2: durability: 'dbsync' is not valid for storage lmdb "
		     "(valid: nosync, sync)");
	/* reported on the later of the two lines */
	expect_error("durability inmemory-log\n# x\nstorage lmdb\n",
		     "test.conf:3: durability: 'inmemory-log' is not valid for storage lmdb "
		     "(valid: nosync, sync)");
	expect_error(
	    "durability sync\n",
	    "test.conf:1: durability: 'sync' is not valid for storage memory (valid: none)");
	expect_error("storage bdb\ndurability none\n",
		     "test.conf:2: durability: 'none' is not valid for storage bdb (valid: nosync, "
		     "sync, inmemory-log, write-nosync, dbsync)");
	expect_error(
	    "durability fast\n",
	    "test.conf:1: durability: 'fast' is not a durability mode (none, nosync, sync, "
	    "inmemory-log, write-nosync, dbsync)");
	expect_error(
	    "durability unset\n",
	    "test.conf:1: durability: 'unset' is not a durability mode (none, nosync, sync, "
	    "inmemory-log, write-nosync, dbsync)");
	expect_error("lmdb-map-size 1048575\n",
		     "test.conf:1: lmdb-map-size: 1048575 is out of range 1048576..1099511627776");
	expect_error("lmdb-map-size\n", "test.conf:1: lmdb-map-size: missing value (expected a "
					"number in 1048576..1099511627776)");
	expect_error("storage-fresh true\n", "test.conf:1: storage-fresh: 'true' is not yes or no");
	expect_error("storage-path\n",
		     "test.conf:1: storage-path: missing value (expected a directory)");
	char text[400];
	memset(text, 'd', sizeof(text));
	memcpy(text, "storage-path /", 14);
	text[14 + 255] = '\0'; /* a 256-character path */
	expect_error(text, "test.conf:1: storage-path: path is longer than 255 characters");
	text[14 + 254] = '\0';
	struct paxos_config cfg;
	ck_assert_int_eq(parse(&cfg, text), PAXOS_OK);
	ck_assert_uint_eq(strlen(cfg.storage_path), 255);
}
END_TEST

/* Limits whose buffers the machine cannot hold are refused, naming the keys and the size. */
START_TEST(test_memory_limits)
{
	uint64_t ceiling = paxos_config_memory_ceiling();
	struct paxos_config cfg;
	char want[512];
	/* 1 Mi instances of 64 kB: 64 GiB of learner buffers. */
	struct paxos_learner_options lo;
	paxos_config_defaults(&cfg);
	cfg.learner_window = 1048576;
	cfg.max_datagram = 65507;
	paxos_learner_options_from_config(&lo, &cfg);
	uint64_t need = paxos_learner_memory(&lo);
	ck_assert_uint_ge(need, 1048576ull * (65507 - 64));
	const char *text = "learner-window 1048576\nmax-datagram 65507\n";
	if (need <= ceiling) {
		ck_assert_int_eq(parse(&cfg, text), PAXOS_OK); /* a machine that has it */
	} else {
		snprintf(
		    want, sizeof(want),
		    "test.conf:2: learner-window: 1048576 instances x max-datagram 65507 bytes "
		    "need %.1f GiB (%llu bytes) of learner buffers, more than half this "
		    "machine's memory (%.1f GiB); lower learner-window or max-datagram",
		    (double)need / (1 << 30), (unsigned long long)need,
		    (double)ceiling / (1 << 30));
		expect_error(text, want);
	}
	/* 2 Mi pending values of 64 kB: 128 GiB of proposer buffers. */
	text = "pending-list-size 1048576\nproposer-window 65536\n# x\nmax-datagram 65507\n";
	if (ceiling < (128ull << 30)) {
		expect_error_prefix(text, "test.conf:4: pending-list-size: 1048576 values and "
					  "proposer-window 65536 x max-datagram 65507 bytes need ");
		ck_assert_msg(strstr(err, "bytes) of proposer buffers, more than half this "
					  "machine's memory (") &&
				  strstr(err, "lower one of them"),
			      "%s", err);
	}
	/* The defaults fit anywhere a node runs: well under 200 MiB each. */
	paxos_config_defaults(&cfg);
	paxos_learner_options_from_config(&lo, &cfg);
	ck_assert_uint_lt(paxos_learner_memory(&lo), 200u << 20);
	struct paxos_proposer_options po;
	paxos_proposer_options_from_config(&po, &cfg, 0);
	ck_assert_uint_lt(paxos_proposer_memory(&po), 200u << 20);
	ck_assert_uint_gt(paxos_proposer_memory(&po), (uint64_t)cfg.pending_size * 8000);
	ck_assert_uint_gt(ceiling, 200u << 20);
}
END_TEST

/* auth-key-file: a path, read only when a node starts; a key costs the tag's bytes. */
START_TEST(test_auth_key_file)
{
	struct paxos_config cfg;
	ck_assert_int_eq(parse(&cfg, "auth-key-file /etc/paxos/cluster.key\n"), PAXOS_OK);
	ck_assert_str_eq(cfg.auth_key_file, "/etc/paxos/cluster.key");
	/* The parser does not open it: a config is checked without the key at hand. */
	ck_assert_int_eq(parse(&cfg, "auth-key-file relative/key   # comment\n"), PAXOS_OK);
	ck_assert_str_eq(cfg.auth_key_file, "relative/key");

	ck_assert_int_eq(parse(&cfg, "max-datagram 512\nauth-key-file k\n"), PAXOS_OK);
	ck_assert_uint_eq(paxos_config_max_instance_value(&cfg), 512 - 64 - 40);
	ck_assert_uint_eq(paxos_config_max_value(&cfg), 512 - 64 - 40 - 4);
	ck_assert_uint_eq(PAXOS_WIRE_OVERHEAD + PAXOS_AUTH_TAG_BYTES + 4, 108); /* paxos.conf */
	ck_assert_int_eq(parse(&cfg, "max-datagram 8192\nauth-key-file k\n"), PAXOS_OK);
	ck_assert_uint_eq(paxos_config_max_value(&cfg), 8192 - 108);
	ck_assert_int_eq(parse(&cfg, "max-datagram 8192\n"), PAXOS_OK);
	ck_assert_uint_eq(paxos_config_max_value(&cfg), 8192 - 68);

	expect_error("auth-key-file\n",
		     "test.conf:1: auth-key-file: missing value (expected a file)");
	expect_error("auth-key-file a b\n", "test.conf:1: auth-key-file: unexpected 'b' after "
					    "the value");
	expect_error("auth-key-file a\nauth-key-file b\n",
		     "test.conf:2: auth-key-file: already set on line 1");
	char text[400];
	memset(text, 'k', sizeof(text));
	memcpy(text, "auth-key-file /", 15);
	text[15 + 255] = '\0'; /* a 256-character path */
	expect_error(text, "test.conf:1: auth-key-file: path is longer than 255 characters");
	text[15 + 254] = '\0';
	ck_assert_int_eq(parse(&cfg, text), PAXOS_OK);
	ck_assert_uint_eq(strlen(cfg.auth_key_file), 255);
}
END_TEST

/* metrics-listen: an address of this host and a port; off unless set. */
START_TEST(test_metrics_listen)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	ck_assert_uint_eq(cfg.metrics_listen.port, 0);
	ck_assert_int_eq(parse(&cfg, "metrics-listen 127.0.0.1:9500\n"), PAXOS_OK);
	expect_endpoint(&cfg.metrics_listen, "127.0.0.1", 9500);
	ck_assert_int_eq(parse(&cfg, "metrics-listen 0.0.0.0:65535  # every address\n"), PAXOS_OK);
	expect_endpoint(&cfg.metrics_listen, "0.0.0.0", 65535);

	expect_error("metrics-listen\n", "test.conf:1: metrics-listen: missing value (expected an "
					 "IPv4 ADDRESS:PORT to listen on)");
	expect_error("metrics-listen 9500\n",
		     "test.conf:1: metrics-listen: '9500' is not ADDRESS:PORT");
	expect_error("metrics-listen localhost:9500\n",
		     "test.conf:1: metrics-listen: 'localhost' is not an IPv4 address");
	expect_error("metrics-listen 127.0.0.1:0\n",
		     "test.conf:1: metrics-listen: port 0 is out of range 1..65535");
	expect_error("metrics-listen 127.0.0.1:http\n",
		     "test.conf:1: metrics-listen: port 'http' is not a decimal number");
	expect_error("metrics-listen 239.255.11.1:9500\n",
		     "test.conf:1: metrics-listen: 239.255.11.1 is not an address to listen on (a "
		     "local address, or 0.0.0.0 for all)");
	expect_error("metrics-listen 255.255.255.255:9500\n",
		     "test.conf:1: metrics-listen: 255.255.255.255 is not an address to listen on "
		     "(a local address, or 0.0.0.0 for all)");
	expect_error("metrics-listen 127.0.0.1:9500\nmetrics-listen 127.0.0.1:9501\n",
		     "test.conf:2: metrics-listen: already set on line 1");
}
END_TEST

/* metrics-listen by name: what the runner's --metrics-listen does on top of a loaded file. */
START_TEST(test_metrics_listen_by_name)
{
	struct paxos_config cfg, before;
	char buf[64];
	paxos_config_defaults(&cfg);
	ck_assert_int_eq(paxos_config_get(&cfg, "metrics-listen", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, ""); /* not set: no server */
	ck_assert_int_eq(parse(&cfg, "metrics-listen 127.0.0.1:9500\nproposers 3\n"), PAXOS_OK);
	ck_assert_int_eq(
	    paxos_config_set(&cfg, "metrics-listen", "127.0.0.1:9501", err, sizeof(err)), PAXOS_OK);
	expect_endpoint(&cfg.metrics_listen, "127.0.0.1", 9501);
	ck_assert_uint_eq(cfg.proposers, 3); /* the rest as loaded */
	ck_assert_int_eq(paxos_config_get(&cfg, "metrics-listen", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "127.0.0.1:9501");

	before = cfg;
	ck_assert_int_eq(paxos_config_set(&cfg, "metrics-listen", "127.0.0.1", err, sizeof(err)),
			 PAXOS_E_CONFIG);
	ck_assert_str_eq(err, "metrics-listen: '127.0.0.1' is not ADDRESS:PORT");
	ck_assert_int_eq(paxos_config_set(&cfg, "metrics-listen", "", err, sizeof(err)),
			 PAXOS_E_CONFIG);
	ck_assert_str_eq(err, "metrics-listen: missing value (expected an IPv4 ADDRESS:PORT to "
			      "listen on)");
	ck_assert(config_equal(&cfg, &before));
}
END_TEST

START_TEST(test_non_multicast_groups)
{
	expect_error_prefix("learners-group 127.0.0.1:7103",
			    "test.conf:1: learners-group: 127.0.0.1 is "
			    "not an IPv4 multicast");
	expect_error_prefix(
	    "learners-group 223.255.255.255:7103",
	    "test.conf:1: learners-group: 223.255.255.255 is not an IPv4 multicast");
	expect_error_prefix("learners-group 240.0.0.1:7103",
			    "test.conf:1: learners-group: 240.0.0.1 is not an IPv4 multicast");
	expect_error_prefix("learners-group [ff02::1]:7103",
			    "test.conf:1: learners-group: '[ff02::1]' is not an IPv4 address");
}
END_TEST

START_TEST(test_comments_and_blanks)
{
	struct paxos_config cfg;
	const char *text = "# a comment\n"
			   "\n"
			   "   \t  \n"
			   "  acceptors\t5   # trailing comment\n"
			   "\tproposers 4#no space before the comment\n"
			   "leader 3 \r\n"
			   "   # indented comment with keys: acceptors 9\n"
			   "learner-start current";
	ck_assert_msg(parse(&cfg, text) == PAXOS_OK, "%s", err);
	ck_assert_uint_eq(cfg.acceptors, 5);
	ck_assert_uint_eq(cfg.proposers, 4);
	ck_assert_uint_eq(cfg.leader, 3);
	ck_assert_int_eq(cfg.learner_start, PAXOS_START_FROM_CURRENT);
	ck_assert_str_eq(err, "");
}
END_TEST

START_TEST(test_keys_are_case_sensitive)
{
	expect_error("Acceptors 3", "test.conf:1: unknown key 'Acceptors'");
	expect_error("acceptors_group 239.1.1.1:1", "test.conf:1: unknown key 'acceptors_group'");
}
END_TEST

START_TEST(test_cross_checks)
{
	/* leader must be below proposers, whatever order they come in */
	expect_error("leader 2\n", "test.conf:1: leader: 2 must be less than proposers (2)");
	expect_error("leader 1\nproposers 1\n",
		     "test.conf:2: leader: 1 must be less than proposers (1)");
	/* concurrency must not exceed the window */
	expect_error(
	    "proposer-concurrency 129\n",
	    "test.conf:1: proposer-concurrency: 129 must not exceed proposer-window (128)");
	expect_error("proposer-concurrency 10\n# x\nproposer-window 9\n",
		     "test.conf:3: proposer-concurrency: 10 must not exceed proposer-window (9)");
	/* initial members: at most acceptors, and only when the set may change */
	expect_error("membership-alpha 256\ninitial-members 4\n",
		     "test.conf:2: initial-members: 4 must not exceed acceptors (3), and needs "
		     "membership-alpha");
	expect_error("initial-members 2\n", "test.conf:1: initial-members: 2 must not exceed "
					    "acceptors (3), and needs membership-alpha");
	expect_error("membership-alpha 256\ninitial-proposers 3\n",
		     "test.conf:2: initial-proposers: 3 must not exceed proposers (2), and needs "
		     "membership-alpha");
	expect_error("initial-proposers 1\n", "test.conf:1: initial-proposers: 1 must not exceed "
					      "proposers (2), and needs membership-alpha");
	expect_error("proposers 33\nmembership-alpha 256\n",
		     "test.conf:2: membership-alpha: needs at most 32 proposers (the proposer set "
		     "of a configuration has one bit per id), not 33");
	/* the four groups must be distinct endpoints */
	expect_error(
	    "submit-group 239.255.11.1:7101\n",
	    "test.conf:1: submit-group: 239.255.11.1:7101 is also used by acceptors-group");
	expect_error("learners-group 239.9.9.9:9\nproposers-group 239.9.9.9:9\n",
		     "test.conf:2: learners-group: 239.9.9.9:9 is also used by proposers-group");
	/* same address on different ports, or same port on different addresses, is fine */
	struct paxos_config cfg;
	ck_assert_int_eq(parse(&cfg, "acceptors-group 239.9.9.9:1\nproposers-group 239.9.9.9:2\n"
				     "learners-group 239.9.9.8:1\n"),
			 PAXOS_OK);
}
END_TEST

START_TEST(test_error_leaves_config_untouched)
{
	struct paxos_config cfg, before;
	paxos_config_defaults(&cfg);
	cfg.acceptors = 7;
	before = cfg;
	ck_assert_int_eq(parse(&cfg, "acceptors 5\nproposers 1\nleader 1\n"), PAXOS_E_CONFIG);
	ck_assert(config_equal(&cfg, &before));
	ck_assert_int_eq(parse(&cfg, "acceptors 5\nbogus 1\n"), PAXOS_E_CONFIG);
	ck_assert(config_equal(&cfg, &before));
}
END_TEST

/* The parser must only read len bytes: the buffer here has no terminating NUL. */
START_TEST(test_unterminated_buffer)
{
	const char *text = "acceptors 5\nproposers 3";
	size_t len = strlen(text);
	char *buf = malloc(len);
	struct paxos_config cfg;
	memcpy(buf, text, len);
	ck_assert_int_eq(paxos_config_parse(&cfg, buf, len, "raw", err, sizeof(err)), PAXOS_OK);
	ck_assert_uint_eq(cfg.acceptors, 5);
	ck_assert_uint_eq(cfg.proposers, 3);
	/* only "proposers 3" of "proposers 31" is in range of len */
	ck_assert_int_eq(paxos_config_parse(&cfg, "proposers 31", 11, "raw", err, sizeof(err)),
			 PAXOS_OK);
	ck_assert_uint_eq(cfg.proposers, 3);
	/* a key cut short by len */
	ck_assert_int_eq(paxos_config_parse(&cfg, buf, 9, "raw", err, sizeof(err)), PAXOS_E_CONFIG);
	ck_assert_str_eq(err, "raw:1: acceptors: missing value (expected a number in 1..32)");
	free(buf);
}
END_TEST

START_TEST(test_nul_byte_rejected)
{
	struct paxos_config cfg;
	const char text[] = "acceptors 5\nproposers 3\0junk\n";
	ck_assert_int_eq(paxos_config_parse(&cfg, text, sizeof(text) - 1, "nul", err, sizeof(err)),
			 PAXOS_E_CONFIG);
	ck_assert_str_eq(err, "nul:2: line contains a NUL byte");
}
END_TEST

START_TEST(test_long_line)
{
	struct paxos_config cfg;
	size_t len = 4000;
	char *text = malloc(len);
	/* exactly 1024 characters is fine */
	memset(text, ' ', len);
	memcpy(text, "acceptors 4", 11);
	ck_assert_int_eq(paxos_config_parse(&cfg, text, 1024, "long", err, sizeof(err)), PAXOS_OK);
	ck_assert_uint_eq(cfg.acceptors, 4);
	text[1024] = '\n';
	ck_assert_int_eq(paxos_config_parse(&cfg, text, 1025, "long", err, sizeof(err)), PAXOS_OK);
	/* 1025 is not */
	ck_assert_int_eq(paxos_config_parse(&cfg, text, 1025 + 1025, "long", err, sizeof(err)),
			 PAXOS_E_CONFIG);
	ck_assert_str_eq(err, "long:2: line is longer than 1024 characters");
	/* a huge token is reported, shortened */
	memset(text, 'a', len);
	ck_assert_int_eq(paxos_config_parse(&cfg, text, 1000, "long", err, sizeof(err)),
			 PAXOS_E_CONFIG);
	ck_assert_msg(strncmp(err, "long:1: unknown key 'aaaa", 25) == 0, "%s", err);
	ck_assert_uint_lt(strlen(err), 200);
	free(text);
}
END_TEST

START_TEST(test_small_error_buffer)
{
	struct paxos_config cfg;
	char small[8];
	ck_assert_int_eq(paxos_config_parse(&cfg, "bogus 1", 7, "test.conf", small, sizeof(small)),
			 PAXOS_E_CONFIG);
	ck_assert_str_eq(small, "test.co");
	ck_assert_int_eq(paxos_config_parse(&cfg, "bogus 1", 7, "test.conf", NULL, 0),
			 PAXOS_E_CONFIG);
	ck_assert_int_eq(paxos_config_parse(NULL, "", 0, "x", err, sizeof(err)), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_config_parse(&cfg, NULL, 3, "x", err, sizeof(err)), PAXOS_E_INVALID);
}
END_TEST

START_TEST(test_nonexistent_file)
{
	struct paxos_config cfg;
	const char *path = "/nonexistent/dir/paxos.conf";
	ck_assert_int_eq(paxos_config_load(&cfg, path, err, sizeof(err)), PAXOS_E_IO);
	ck_assert_str_eq(err, "/nonexistent/dir/paxos.conf: No such file or directory");
	ck_assert_int_eq(paxos_config_load(&cfg, "/", err, sizeof(err)), PAXOS_E_IO);
	ck_assert_str_eq(err, "/: Is a directory");
}
END_TEST

/* What is not a configuration file is refused at once, with the reason: a character device
 * that never ends (it was read until memory ran out), a FIFO (opening it waited for a writer
 * for ever), a file larger than any configuration. */
START_TEST(test_load_refuses_devices_fifos_and_huge_files)
{
	struct paxos_config cfg;
	ck_assert_int_eq(paxos_config_load(&cfg, "/dev/zero", err, sizeof(err)), PAXOS_E_IO);
	ck_assert_str_eq(err, "/dev/zero: is not a regular file; a configuration is a text file "
			      "of at most 1048576 bytes");
	char dir[] = "/tmp/paxos-config-test-XXXXXX", path[300];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(paxos_config_load(&cfg, path, err, sizeof(err)), PAXOS_E_IO);
	ck_assert(strstr(err, "is not a regular file") != NULL);
	unlink(path);
	snprintf(path, sizeof(path), "%s/huge.conf", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 70000; i++) /* 15 bytes a line: 1,050,000 bytes */
		fputs("# a comment...\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(paxos_config_load(&cfg, path, err, sizeof(err)), PAXOS_E_CONFIG);
	char want[400];
	snprintf(want, sizeof(want),
		 "%s: holds 1050000 bytes; a configuration is at most 1048576 bytes", path);
	ck_assert_str_eq(err, want);
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(test_load_reports_file_name)
{
	char path[] = "/tmp/paxos-config-test-XXXXXX";
	struct paxos_config cfg;
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	FILE *f = fdopen(fd, "w");
	fputs("# test\nacceptors 3\nmulticast-ttl 300\n", f);
	fclose(f);
	ck_assert_int_eq(paxos_config_load(&cfg, path, err, sizeof(err)), PAXOS_E_CONFIG);
	char want[128];
	snprintf(want, sizeof(want), "%s:3: multicast-ttl: 300 is out of range 0..255", path);
	ck_assert_str_eq(err, want);
	unlink(path);
}
END_TEST

/* Every prefix and many corrupted copies of the shipped file, each in a buffer of exactly its
 * length: nothing may crash or read past the end (valgrind checks the latter). */
START_TEST(test_fuzz_shipped_file)
{
	char path[1200];
	source_path(path, sizeof(path), "paxos.conf");
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	static char text[16384];
	size_t len = fread(text, 1, sizeof(text), f);
	fclose(f);
	ck_assert_uint_gt(len, 0);

	struct paxos_config cfg;
	for (size_t n = 0; n <= len; n += 7) {
		char *copy = malloc(n ? n : 1);
		memcpy(copy, text, n);
		int rc = paxos_config_parse(&cfg, copy, n, "fuzz", err, sizeof(err));
		ck_assert(rc == PAXOS_OK || rc == PAXOS_E_CONFIG);
		free(copy);
	}
	uint32_t seed = 12345;
	static const char bytes[] = {'\0', '\n', '#', ' ', ':', '9', '.', 'x', '\xff', '-'};
	for (int round = 0; round < 300; round++) {
		char *copy = malloc(len);
		memcpy(copy, text, len);
		for (int k = 0; k < 4; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % len;
			seed = seed * 1103515245u + 12345u;
			copy[at] = bytes[(seed >> 16) % sizeof(bytes)];
		}
		int rc = paxos_config_parse(&cfg, copy, len, "fuzz", err, sizeof(err));
		ck_assert(rc == PAXOS_OK || rc == PAXOS_E_CONFIG);
		if (rc == PAXOS_E_CONFIG)
			ck_assert_msg(strncmp(err, "fuzz:", 5) == 0, "%s", err);
		free(copy);
	}
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_empty_text_gives_defaults);
	tcase_add_test(tc, test_shipped_file_equals_defaults);
	tcase_add_test(tc, test_shipped_file_sets_every_key);
	tcase_add_loop_test(tc, test_u32_key_applied, 0, sizeof(u32_cases) / sizeof(*u32_cases));
	tcase_add_test(tc, test_other_keys_applied);
	tcase_add_test(tc, test_max_value_follows_datagram);
	tcase_add_loop_test(tc, test_bad_values_rejected, 0,
			    sizeof(bad_cases) / sizeof(*bad_cases));
	tcase_add_test(tc, test_error_messages_exact);
	tcase_add_test(tc, test_unicast_members);
	tcase_add_test(tc, test_keys_by_name);
	tcase_add_test(tc, test_storage_keys);
	tcase_add_test(tc, test_storage_errors);
	tcase_add_test(tc, test_memory_limits);
	tcase_add_test(tc, test_auth_key_file);
	tcase_add_test(tc, test_metrics_listen);
	tcase_add_test(tc, test_metrics_listen_by_name);
	tcase_add_test(tc, test_non_multicast_groups);
	tcase_add_test(tc, test_comments_and_blanks);
	tcase_add_test(tc, test_keys_are_case_sensitive);
	tcase_add_test(tc, test_cross_checks);
	tcase_add_test(tc, test_error_leaves_config_untouched);
	tcase_add_test(tc, test_unterminated_buffer);
	tcase_add_test(tc, test_nul_byte_rejected);
	tcase_add_test(tc, test_long_line);
	tcase_add_test(tc, test_small_error_buffer);
	tcase_add_test(tc, test_nonexistent_file);
	tcase_add_test(tc, test_load_refuses_devices_fifos_and_huge_files);
	tcase_add_test(tc, test_load_reports_file_name);
	tcase_add_test(tc, test_fuzz_shipped_file);
	tcase_add_test(tc, test_partitions);
	tcase_add_test(tc, test_partition_acceptors);
	suite_add_tcase(s, tc);
	return s;
}
