/* SPDX-License-Identifier: BSD-3-Clause */
/* The paxos.conf parser on awkward text and files: comments, case, cross-checks, unterminated,
 * NUL, long lines, small buffers, missing files, devices, a fuzzed shipped file. */
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
	ck_assert_msg(parse(&cfg, text) == PAXOS_OK, "%s", parse_err);
	ck_assert_uint_eq(cfg.acceptors, 5);
	ck_assert_uint_eq(cfg.proposers, 4);
	ck_assert_uint_eq(cfg.leader, 3);
	ck_assert_int_eq(cfg.learner_start, PAXOS_START_FROM_CURRENT);
	ck_assert_str_eq(parse_err, "");
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
	ck_assert_int_eq(paxos_config_parse(&cfg, buf, len, "raw", parse_err, sizeof(parse_err)),
			 PAXOS_OK);
	ck_assert_uint_eq(cfg.acceptors, 5);
	ck_assert_uint_eq(cfg.proposers, 3);
	/* only "proposers 3" of "proposers 31" is in range of len */
	ck_assert_int_eq(
	    paxos_config_parse(&cfg, "proposers 31", 11, "raw", parse_err, sizeof(parse_err)),
	    PAXOS_OK);
	ck_assert_uint_eq(cfg.proposers, 3);
	/* a key cut short by len */
	ck_assert_int_eq(paxos_config_parse(&cfg, buf, 9, "raw", parse_err, sizeof(parse_err)),
			 PAXOS_E_CONFIG);
	ck_assert_str_eq(parse_err, "raw:1: acceptors: missing value (expected a number in 1..32)");
	free(buf);
}
END_TEST

START_TEST(test_nul_byte_rejected)
{
	struct paxos_config cfg;
	const char text[] = "acceptors 5\nproposers 3\0junk\n";
	ck_assert_int_eq(
	    paxos_config_parse(&cfg, text, sizeof(text) - 1, "nul", parse_err, sizeof(parse_err)),
	    PAXOS_E_CONFIG);
	ck_assert_str_eq(parse_err, "nul:2: line contains a NUL byte");
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
	ck_assert_int_eq(paxos_config_parse(&cfg, text, 1024, "long", parse_err, sizeof(parse_err)),
			 PAXOS_OK);
	ck_assert_uint_eq(cfg.acceptors, 4);
	text[1024] = '\n';
	ck_assert_int_eq(paxos_config_parse(&cfg, text, 1025, "long", parse_err, sizeof(parse_err)),
			 PAXOS_OK);
	/* 1025 is not */
	ck_assert_int_eq(
	    paxos_config_parse(&cfg, text, 1025 + 1025, "long", parse_err, sizeof(parse_err)),
	    PAXOS_E_CONFIG);
	ck_assert_str_eq(parse_err, "long:2: line is longer than 1024 characters");
	/* a huge token is reported, shortened */
	memset(text, 'a', len);
	ck_assert_int_eq(paxos_config_parse(&cfg, text, 1000, "long", parse_err, sizeof(parse_err)),
			 PAXOS_E_CONFIG);
	ck_assert_msg(strncmp(parse_err, "long:1: unknown key 'aaaa", 25) == 0, "%s", parse_err);
	ck_assert_uint_lt(strlen(parse_err), 200);
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
	ck_assert_int_eq(paxos_config_parse(NULL, "", 0, "x", parse_err, sizeof(parse_err)),
			 PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_config_parse(&cfg, NULL, 3, "x", parse_err, sizeof(parse_err)),
			 PAXOS_E_INVALID);
}
END_TEST

START_TEST(test_nonexistent_file)
{
	struct paxos_config cfg;
	const char *path = "/nonexistent/dir/paxos.conf";
	ck_assert_int_eq(paxos_config_load(&cfg, path, parse_err, sizeof(parse_err)), PAXOS_E_IO);
	ck_assert_str_eq(parse_err, "/nonexistent/dir/paxos.conf: No such file or directory");
	ck_assert_int_eq(paxos_config_load(&cfg, "/", parse_err, sizeof(parse_err)), PAXOS_E_IO);
	ck_assert_str_eq(parse_err, "/: Is a directory");
}
END_TEST

/* What is not a configuration file is refused at once, with the reason: a character device
 * that never ends (it was read until memory ran out), a FIFO (opening it waited for a writer
 * for ever), a file larger than any configuration. */
START_TEST(test_load_refuses_devices_fifos_and_huge_files)
{
	struct paxos_config cfg;
	ck_assert_int_eq(paxos_config_load(&cfg, "/dev/zero", parse_err, sizeof(parse_err)),
			 PAXOS_E_IO);
	ck_assert_str_eq(parse_err,
			 "/dev/zero: is not a regular file; a configuration is a text file "
			 "of at most 1048576 bytes");
	char dir[] = "/tmp/paxos-config-test-XXXXXX", path[300];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(paxos_config_load(&cfg, path, parse_err, sizeof(parse_err)), PAXOS_E_IO);
	ck_assert(strstr(parse_err, "is not a regular file") != NULL);
	unlink(path);
	snprintf(path, sizeof(path), "%s/huge.conf", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 70000; i++) /* 15 bytes a line: 1,050,000 bytes */
		fputs("# a comment...\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(paxos_config_load(&cfg, path, parse_err, sizeof(parse_err)),
			 PAXOS_E_CONFIG);
	char want[400];
	snprintf(want, sizeof(want),
		 "%s: holds 1050000 bytes; a configuration is at most 1048576 bytes", path);
	ck_assert_str_eq(parse_err, want);
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
	ck_assert_int_eq(paxos_config_load(&cfg, path, parse_err, sizeof(parse_err)),
			 PAXOS_E_CONFIG);
	char want[128];
	snprintf(want, sizeof(want), "%s:3: multicast-ttl: 300 is out of range 0..255", path);
	ck_assert_str_eq(parse_err, want);
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
		int rc = paxos_config_parse(&cfg, copy, n, "fuzz", parse_err, sizeof(parse_err));
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
		int rc = paxos_config_parse(&cfg, copy, len, "fuzz", parse_err, sizeof(parse_err));
		ck_assert(rc == PAXOS_OK || rc == PAXOS_E_CONFIG);
		if (rc == PAXOS_E_CONFIG)
			ck_assert_msg(strncmp(parse_err, "fuzz:", 5) == 0, "%s", parse_err);
		free(copy);
	}
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("config_input");
	TCase *tc = tcase_create("config_input");
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
	suite_add_tcase(s, tc);
	return s;
}
