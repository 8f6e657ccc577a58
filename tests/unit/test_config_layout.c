/* SPDX-License-Identifier: BSD-3-Clause */
/* The paxos.conf parser: where a cluster lives (partitions, unicast members), its storage,
 * memory limits, authentication, metrics and groups. */
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

/* Partitions: each one's ports are the configured ones plus 10 per partition, its storage
 * a directory of its own; overlapping ports and long paths are refused at load. */
START_TEST(test_partitions)
{
	struct paxos_config cfg, part;
	paxos_config_defaults(&cfg);
	ck_assert_uint_eq(paxos_config_partitions(&cfg), 1);
	ck_assert_msg(parse(&cfg, "partitions 3\nstorage-path /var/tmp/px\n"
				  "metrics-listen 127.0.0.1:9100\n") == PAXOS_OK,
		      "%s", parse_err);
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
		      "%s", parse_err);
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
		      "%s", parse_err);
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
		      "%s", parse_err);
	ck_assert_int_eq(paxos_config_partition_acceptor(&cfg, 1, 0, &local), PAXOS_OK);
	ck_assert_uint_eq(local, 0);
	ck_assert_int_eq(paxos_config_partition_acceptor(&cfg, 1, 2, NULL), PAXOS_E_INVALID);

	/* Explicit sets; unicast members follow their acceptor into its partition's numbering. */
	ck_assert_msg(parse(&cfg, "acceptor 0 127.0.0.1:8800\nacceptor 1 127.0.0.1:8801\n"
				  "acceptor 2 127.0.0.1:8802\nacceptor 3 127.0.0.1:8803\n"
				  "proposer 0 127.0.0.1:8900\nproposer 1 127.0.0.1:8901\n"
				  "transport unicast\nacceptors 4\npartitions 2\n"
				  "partition-acceptors 0,1,3/1-3\n") == PAXOS_OK,
		      "%s", parse_err);
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
	ck_assert_msg(parse(&cfg, "partitions 2\n") == PAXOS_OK, "%s", parse_err);
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

/* transport unicast and the members' addresses: the shipped file, both line forms, and every
 * mistake named. */
START_TEST(test_unicast_members)
{
	char path[1200];
	struct paxos_config cfg;
	source_path(path, sizeof(path), "paxos-unicast.conf");
	ck_assert_msg(paxos_config_load(&cfg, path, parse_err, sizeof(parse_err)) == PAXOS_OK, "%s",
		      parse_err);
	ck_assert_int_eq(cfg.transport, PAXOS_TRANSPORT_UNICAST);
	expect_endpoint(&cfg.acceptor_address[0], "127.0.0.1", 7201);
	expect_endpoint(&cfg.acceptor_address[2], "127.0.0.1", 7203);
	expect_endpoint(&cfg.proposer_address[1], "127.0.0.1", 7302);
	ck_assert_uint_eq(cfg.acceptor_address[3].port, 0);
	ck_assert_uint_eq(cfg.subscription_lease_ms, 3000);

	ck_assert_msg(parse(&cfg,
			    "transport unicast\nacceptors 1\nproposers 1\n"
			    "acceptor 0 10.0.0.1 8800\nproposer 0 127.0.0.1:8801\n") == PAXOS_OK,
		      "%s", parse_err);
	expect_endpoint(&cfg.acceptor_address[0], "10.0.0.1", 8800);
	expect_endpoint(&cfg.proposer_address[0], "127.0.0.1", 8801);
	/* Addresses may be given with multicast too: switching is one line. */
	ck_assert_msg(parse(&cfg, "acceptor 1 10.0.0.2:1\n") == PAXOS_OK, "%s", parse_err);
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
		ck_assert_msg(parse(&cfg, text) == PAXOS_OK, "%s: %s", text, parse_err);
		ck_assert_int_eq(cfg.durability, valid[k].want);
		ck_assert_str_eq(paxos_durability_name(cfg.durability), valid[k].mode);
		snprintf(text, sizeof(text), "durability %s\nstorage %s\n", valid[k].mode,
			 valid[k].storage);
		ck_assert_msg(parse(&cfg, text) == PAXOS_OK, "%s: %s", text, parse_err);
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
		ck_assert_msg(strstr(parse_err, "bytes) of proposer buffers, more than half this "
						"machine's memory (") &&
				  strstr(parse_err, "lower one of them"),
			      "%s", parse_err);
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
	ck_assert_int_eq(paxos_config_set(&cfg, "metrics-listen", "127.0.0.1:9501", parse_err,
					  sizeof(parse_err)),
			 PAXOS_OK);
	expect_endpoint(&cfg.metrics_listen, "127.0.0.1", 9501);
	ck_assert_uint_eq(cfg.proposers, 3); /* the rest as loaded */
	ck_assert_int_eq(paxos_config_get(&cfg, "metrics-listen", buf, sizeof(buf)), PAXOS_OK);
	ck_assert_str_eq(buf, "127.0.0.1:9501");

	before = cfg;
	ck_assert_int_eq(
	    paxos_config_set(&cfg, "metrics-listen", "127.0.0.1", parse_err, sizeof(parse_err)),
	    PAXOS_E_CONFIG);
	ck_assert_str_eq(parse_err, "metrics-listen: '127.0.0.1' is not ADDRESS:PORT");
	ck_assert_int_eq(paxos_config_set(&cfg, "metrics-listen", "", parse_err, sizeof(parse_err)),
			 PAXOS_E_CONFIG);
	ck_assert_str_eq(parse_err,
			 "metrics-listen: missing value (expected an IPv4 ADDRESS:PORT to "
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

Suite *test_suite(void)
{
	Suite *s = suite_create("config_layout");
	TCase *tc = tcase_create("config_layout");
	tcase_add_test(tc, test_unicast_members);
	tcase_add_test(tc, test_storage_keys);
	tcase_add_test(tc, test_storage_errors);
	tcase_add_test(tc, test_memory_limits);
	tcase_add_test(tc, test_auth_key_file);
	tcase_add_test(tc, test_metrics_listen);
	tcase_add_test(tc, test_metrics_listen_by_name);
	tcase_add_test(tc, test_non_multicast_groups);
	tcase_add_test(tc, test_partitions);
	tcase_add_test(tc, test_partition_acceptors);
	suite_add_tcase(s, tc);
	return s;
}
