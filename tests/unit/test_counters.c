/* SPDX-License-Identifier: BSD-3-Clause */
/* Counter reports: the compact text form and the JSON line, including truncation. */
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <paxos/counters.h>

START_TEST(test_format_all_zero_is_empty)
{
	struct paxos_counters c;
	char buf[64];
	memset(&c, 0, sizeof(c));
	memset(buf, 'x', sizeof(buf));
	ck_assert_uint_eq(paxos_counters_format(&c, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
}
END_TEST

START_TEST(test_format_only_non_zero_in_list_order)
{
	struct paxos_counters c;
	char buf[256];
	memset(&c, 0, sizeof(c));
	c.instances_delivered = 7;
	c.datagrams_sent = 5;
	c.instances_out_of_window = UINT64_MAX;
	size_t n = paxos_counters_format(&c, buf, sizeof(buf));
	const char *want = "datagrams_sent=5 instances_delivered=7 "
			   "instances_out_of_window=18446744073709551615";
	ck_assert_str_eq(buf, want);
	ck_assert_uint_eq(n, strlen(want));
}
END_TEST

/* Every counter, set alone, shows up under its own name. */
START_TEST(test_format_names_every_counter)
{
	struct paxos_counters c;
	char buf[128], want[128];
#define CHECK_ONE(name, text)                                                                      \
	memset(&c, 0, sizeof(c));                                                                  \
	c.name = 42;                                                                               \
	paxos_counters_format(&c, buf, sizeof(buf));                                               \
	snprintf(want, sizeof(want), "%s=42", #name);                                              \
	ck_assert_str_eq(buf, want);
	PAXOS_COUNTER_LIST(CHECK_ONE)
#undef CHECK_ONE
}
END_TEST

/* Checks the line is one flat JSON object of string/number members, no trailing comma. */
static void expect_json_shape(const char *s)
{
	size_t len = strlen(s);
	ck_assert_uint_gt(len, 2);
	ck_assert_int_eq(s[0], '{');
	ck_assert_int_eq(s[len - 1], '}');
	ck_assert_ptr_null(strchr(s, '\n'));
	ck_assert_ptr_null(strstr(s, ",}"));
	ck_assert_ptr_null(strstr(s, ",,"));
	size_t quotes = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\') {
			i++; /* escaped character */
			continue;
		}
		if (s[i] == '"')
			quotes++;
	}
	ck_assert_uint_eq(quotes % 2, 0);
}

static void expect_prefix(const char *s, const char *prefix)
{
	ck_assert_msg(strncmp(s, prefix, strlen(prefix)) == 0, "'%s' does not start with '%s'", s,
		      prefix);
}

START_TEST(test_json_has_every_counter)
{
	struct paxos_counters c;
	char buf[4096], key[128];
	memset(&c, 0, sizeof(c));
	c.bytes_delivered = 123456789012345ull;
	size_t n = paxos_counters_json(&c, "acceptor", 2, buf, sizeof(buf));
	ck_assert_uint_eq(n, strlen(buf));
	expect_json_shape(buf);
	expect_prefix(buf, "{\"role\":\"acceptor\",\"id\":2,");
	size_t members = 0;
#define CHECK_MEMBER(name, text)                                                                   \
	snprintf(key, sizeof(key), "\"%s\":%s", #name,                                             \
		 strcmp(#name, "bytes_delivered") == 0 ? "123456789012345" : "0");                 \
	ck_assert_msg(strstr(buf, key) != NULL, "%s missing from %s", key, buf);                   \
	members++;
	PAXOS_COUNTER_LIST(CHECK_MEMBER)
#undef CHECK_MEMBER
	/* role, id, then one member per counter: that many colons outside strings */
	size_t colons = 0;
	for (const char *p = buf; *p; p++)
		colons += *p == ':';
	ck_assert_uint_eq(colons, members + 2);
}
END_TEST

START_TEST(test_json_escapes_role)
{
	struct paxos_counters c;
	char buf[4096];
	memset(&c, 0, sizeof(c));
	paxos_counters_json(&c, "a\"b\\c\n", 0, buf, sizeof(buf));
	expect_json_shape(buf);
	expect_prefix(buf, "{\"role\":\"a\\\"b\\\\c\\u000a\",\"id\":0,");
	paxos_counters_json(&c, NULL, 1, buf, sizeof(buf));
	expect_prefix(buf, "{\"role\":\"\",\"id\":1,");
}
END_TEST

/* Truncation: the result is the prefix that fits, NUL-terminated, and the return value is
 * the length actually written (not the length the whole report needs). */
START_TEST(test_truncation)
{
	struct paxos_counters c;
	char full[4096], buf[4096];
	memset(&c, 0, sizeof(c));
	c.datagrams_received = 1000;
	c.messages_sent = 2000;
	c.instances_delivered = 3000;
	size_t full_len = paxos_counters_format(&c, full, sizeof(full));
	ck_assert_uint_eq(full_len, strlen(full));
	for (size_t cap = 1; cap <= full_len + 2; cap++) {
		memset(buf, 'x', sizeof(buf));
		size_t n = paxos_counters_format(&c, buf, cap);
		size_t expect = cap - 1 < full_len ? cap - 1 : full_len;
		ck_assert_uint_eq(n, expect);
		ck_assert_uint_eq(strlen(buf), expect);
		ck_assert(memcmp(buf, full, expect) == 0);
		ck_assert_int_eq(buf[expect + 1], 'x'); /* nothing written past the terminator */
	}

	full_len = paxos_counters_json(&c, "learner", 9, full, sizeof(full));
	for (size_t cap = 1; cap <= full_len + 2; cap++) {
		memset(buf, 'x', sizeof(buf));
		size_t n = paxos_counters_json(&c, "learner", 9, buf, cap);
		size_t expect = cap - 1 < full_len ? cap - 1 : full_len;
		ck_assert_uint_eq(n, expect);
		ck_assert_uint_eq(strlen(buf), expect);
		ck_assert(memcmp(buf, full, expect) == 0);
	}
}
END_TEST

START_TEST(test_zero_capacity_writes_nothing)
{
	struct paxos_counters c;
	char buf[4] = "abc";
	memset(&c, 0, sizeof(c));
	c.send_errors = 1;
	ck_assert_uint_eq(paxos_counters_format(&c, buf, 0), 0);
	ck_assert_str_eq(buf, "abc");
	ck_assert_uint_eq(paxos_counters_json(&c, "proposer", 0, buf, 0), 0);
	ck_assert_str_eq(buf, "abc");
	ck_assert_uint_eq(paxos_counters_format(&c, NULL, 0), 0);
}
END_TEST

/* Counters read by name or index, as a program built against another release would. */
START_TEST(test_counters_by_name_and_index)
{
	struct paxos_counters c = {0};
	c.datagrams_sent = 7;
	c.instances_repaired = 3;
	uint64_t v = 0;
	ck_assert_int_eq(paxos_counter_get(&c, "datagrams_sent", &v), PAXOS_OK);
	ck_assert_uint_eq(v, 7);
	ck_assert_int_eq(paxos_counter_get(&c, "instances_repaired", &v), PAXOS_OK);
	ck_assert_uint_eq(v, 3);
	ck_assert_int_eq(paxos_counter_get(&c, "no_such_counter", &v), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_counter_get(&c, NULL, &v), PAXOS_E_INVALID);
	size_t n = paxos_counter_count();
	ck_assert_uint_eq(n, sizeof(c) / sizeof(uint64_t));
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(paxos_counter_name(i));
		sum += paxos_counter_value(&c, i);
	}
	ck_assert_uint_eq(sum, 10);
	ck_assert_ptr_null(paxos_counter_name(n));
	ck_assert_uint_eq(paxos_counter_value(&c, n), 0);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("counters");
	TCase *tc = tcase_create("counters");
	tcase_add_test(tc, test_counters_by_name_and_index);
	tcase_add_test(tc, test_format_all_zero_is_empty);
	tcase_add_test(tc, test_format_only_non_zero_in_list_order);
	tcase_add_test(tc, test_format_names_every_counter);
	tcase_add_test(tc, test_json_has_every_counter);
	tcase_add_test(tc, test_json_escapes_role);
	tcase_add_test(tc, test_truncation);
	tcase_add_test(tc, test_zero_capacity_writes_nothing);
	suite_add_tcase(s, tc);
	return s;
}
