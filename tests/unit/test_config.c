/* SPDX-License-Identifier: BSD-3-Clause */
/* The paxos.conf parser: defaults, the shipped file, every key and its values, the errors' words.
 */
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
#include "config_fixture.h"

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
	ck_assert_int_eq(paxos_config_parse(&cfg, NULL, 0, "empty", parse_err, sizeof(parse_err)),
			 PAXOS_OK);
	ck_assert(config_equal(&cfg, &defaults));
	ck_assert_int_eq(parse(&cfg, "\n\n   \n# only a comment\n"), PAXOS_OK);
	ck_assert(config_equal(&cfg, &defaults));
}
END_TEST

START_TEST(test_shipped_file_equals_defaults)
{
	char path[1200];
	struct paxos_config cfg, defaults;
	source_path(path, sizeof(path), "paxos.conf");
	paxos_config_defaults(&defaults);
	memset(&cfg, 0, sizeof(cfg));
	ck_assert_msg(paxos_config_load(&cfg, path, parse_err, sizeof(parse_err)) == PAXOS_OK, "%s",
		      parse_err);
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
	ck_assert_msg(parse(&cfg, c->text) == PAXOS_OK, "%s: %s", c->text, parse_err);
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
	ck_assert_msg(parse(&cfg, text) == PAXOS_OK, "%s: %s", text, parse_err);
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

	ck_assert_int_eq(
	    paxos_config_set(cfg, "phase1-timeout-ms", "35", parse_err, sizeof(parse_err)),
	    PAXOS_OK);
	ck_assert_int_eq(paxos_config_get(cfg, "phase1-timeout-ms", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "35");
	/* A backend brings its default durability. */
	ck_assert_int_eq(paxos_config_set(cfg, "storage", "lmdb", parse_err, sizeof(parse_err)),
			 PAXOS_OK);
	ck_assert_int_eq(paxos_config_get(cfg, "durability", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "sync");
	/* Members, then the transport that needs them. */
	ck_assert_int_eq(
	    paxos_config_set(cfg, "transport", "unicast", parse_err, sizeof(parse_err)),
	    PAXOS_E_CONFIG);
	ck_assert_str_eq(parse_err,
			 "transport: unicast needs every member's address, and acceptor 0 "
			 "has none (add a line 'acceptor 0 HOST:PORT')");
	const char *members[][2] = {{"acceptor", "0 127.0.0.1:7201"},
				    {"acceptor", "1 127.0.0.1:7202"},
				    {"acceptor", "2 127.0.0.1:7203"},
				    {"proposer", "0 127.0.0.1:7301"},
				    {"proposer", "1 127.0.0.1:7302"}};
	for (size_t i = 0; i < 5; i++)
		ck_assert_msg(paxos_config_set(cfg, members[i][0], members[i][1], parse_err,
					       sizeof(parse_err)) == PAXOS_OK,
			      "%s", parse_err);
	ck_assert_int_eq(
	    paxos_config_set(cfg, "transport", "unicast", parse_err, sizeof(parse_err)), PAXOS_OK);
	ck_assert_int_eq(paxos_config_get(cfg, "proposer 1", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "127.0.0.1:7302");
	/* A setting the whole refuses leaves cfg as it was. */
	ck_assert_int_eq(paxos_config_set(cfg, "acceptors", "2", parse_err, sizeof(parse_err)),
			 PAXOS_E_CONFIG);
	ck_assert_str_eq(parse_err, "acceptor: unknown id 2: ids are below acceptors (2)");
	ck_assert_int_eq(paxos_config_get(cfg, "acceptors", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "3");
	ck_assert_int_eq(
	    paxos_config_set(cfg, "acceptors-group", "10.0.0.1:1", parse_err, sizeof(parse_err)),
	    PAXOS_E_CONFIG);
	ck_assert_str_eq(parse_err, "acceptors-group: 10.0.0.1 is not an IPv4 multicast address "
				    "(224.0.0.0/4)");
	ck_assert_int_eq(paxos_config_set(cfg, "bad key", "1", parse_err, sizeof(parse_err)),
			 PAXOS_E_CONFIG);
	ck_assert_int_eq(paxos_config_set(cfg, "acceptors", "3 # 4", parse_err, sizeof(parse_err)),
			 PAXOS_E_CONFIG);
	ck_assert_int_eq(paxos_config_set(cfg, "no-such-key", "1", parse_err, sizeof(parse_err)),
			 PAXOS_E_CONFIG);
	ck_assert_str_eq(parse_err, "unknown key 'no-such-key'");
	/* Loading a file starts from the defaults again. */
	char path[1200];
	source_path(path, sizeof(path), "paxos.conf");
	ck_assert_int_eq(paxos_config_load(cfg, path, parse_err, sizeof(parse_err)), PAXOS_OK);
	ck_assert_int_eq(paxos_config_get(cfg, "transport", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "multicast");
	paxos_config_free(cfg);
	paxos_config_free(NULL);
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
	tcase_add_test(tc, test_keys_by_name);
	suite_add_tcase(s, tc);
	return s;
}
