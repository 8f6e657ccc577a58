/* SPDX-License-Identifier: BSD-3-Clause */
/* The Prometheus text exposition of counters and levels (lib/core/exposition.c): exact text,
 * families grouped, escaping, truncation like snprintf, and every counter of counters.h. */
#include "check_main.h"
#include <stdlib.h>
#include <string.h>

#include "exposition.h"

static size_t count_lines(const char *text, const char *prefix)
{
	size_t n = 0, len = strlen(prefix);
	for (const char *line = text; *line;) {
		if (strncmp(line, prefix, len) == 0)
			n++;
		const char *nl = strchr(line, '\n');
		if (!nl)
			break;
		line = nl + 1;
	}
	return n;
}

START_TEST(test_families_grouped_in_first_order)
{
	const struct paxos_sample s[] = {
	    {"instances_delivered", "instances delivered", PAXOS_METRIC_COUNTER, "learner", 0, 42,
	     false, false, 0},
	    {"proposer_ballot", "ballot now", PAXOS_METRIC_GAUGE, "proposer", 1, 201, false, false,
	     0},
	    {"instances_delivered", "instances delivered", PAXOS_METRIC_COUNTER, "acceptor", 2, 7,
	     false, false, 0},
	    {"phase1_timeout_seconds", "phase 1 timeout", PAXOS_METRIC_GAUGE, "proposer", 1, 20000,
	     true, false, 0},
	};
	char buf[2048];
	size_t len = paxos_exposition(s, 4, buf, sizeof(buf));
	ck_assert_str_eq(buf,
			 "# HELP paxos_instances_delivered_total instances delivered\n"
			 "# TYPE paxos_instances_delivered_total counter\n"
			 "paxos_instances_delivered_total{role=\"learner\",id=\"0\"} 42\n"
			 "paxos_instances_delivered_total{role=\"acceptor\",id=\"2\"} 7\n"
			 "# HELP paxos_proposer_ballot ballot now\n"
			 "# TYPE paxos_proposer_ballot gauge\n"
			 "paxos_proposer_ballot{role=\"proposer\",id=\"1\"} 201\n"
			 "# HELP paxos_phase1_timeout_seconds phase 1 timeout\n"
			 "# TYPE paxos_phase1_timeout_seconds gauge\n"
			 "paxos_phase1_timeout_seconds{role=\"proposer\",id=\"1\"} 0.020000\n");
	ck_assert_uint_eq(len, strlen(buf));
}
END_TEST

START_TEST(test_values_and_escaping)
{
	const struct paxos_sample s[] = {
	    {"x", "a \\ b\nc \"quoted\"", PAXOS_METRIC_GAUGE, "we\"ird\\\n", UINT32_MAX, UINT64_MAX,
	     false, false, 0},
	    {"y", "h", PAXOS_METRIC_GAUGE, "r", 0, 12000001, true, false, 0},
	    {"z", "h", PAXOS_METRIC_COUNTER, "r", 0, 0, false, false, 0},
	};
	char buf[1024];
	paxos_exposition(s, 3, buf, sizeof(buf));
	/* HELP escapes backslash and newline only; label values the double quote too. */
	ck_assert_str_eq(buf, "# HELP paxos_x a \\\\ b\\nc \"quoted\"\n"
			      "# TYPE paxos_x gauge\n"
			      "paxos_x{role=\"we\\\"ird\\\\\\n\",id=\"4294967295\"} "
			      "18446744073709551615\n"
			      "# HELP paxos_y h\n# TYPE paxos_y gauge\n"
			      "paxos_y{role=\"r\",id=\"0\"} 12.000001\n"
			      "# HELP paxos_z_total h\n# TYPE paxos_z_total counter\n"
			      "paxos_z_total{role=\"r\",id=\"0\"} 0\n");
}
END_TEST

/* Like snprintf: the length of the whole text, and as much of it as fits, NUL-terminated. */
/* Several partitions: each sample says whose log it counts. */
START_TEST(test_partition_label)
{
	const struct paxos_sample s[] = {
	    {"instances_delivered", "instances delivered", PAXOS_METRIC_COUNTER, "learner", 0, 42,
	     false, true, 0},
	    {"instances_delivered", "instances delivered", PAXOS_METRIC_COUNTER, "learner", 0, 7,
	     false, true, 1},
	};
	char buf[1024];
	paxos_exposition(s, 2, buf, sizeof(buf));
	ck_assert_str_eq(
	    buf, "# HELP paxos_instances_delivered_total instances delivered\n"
		 "# TYPE paxos_instances_delivered_total counter\n"
		 "paxos_instances_delivered_total{role=\"learner\",id=\"0\",partition=\"0\"} 42\n"
		 "paxos_instances_delivered_total{role=\"learner\",id=\"0\",partition=\"1\"} 7\n");
}
END_TEST

START_TEST(test_truncation_measures_the_whole_text)
{
	const struct paxos_sample s[] = {
	    {"instances_delivered", "instances delivered", PAXOS_METRIC_COUNTER, "learner", 0, 42,
	     false, false, 0},
	};
	char full[512], small[20];
	size_t len = paxos_exposition(s, 1, full, sizeof(full));
	ck_assert_uint_eq(paxos_exposition(s, 1, NULL, 0), len);
	memset(small, 'x', sizeof(small));
	ck_assert_uint_eq(paxos_exposition(s, 1, small, sizeof(small)), len);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	ck_assert(strncmp(small, full, sizeof(small) - 1) == 0);
	ck_assert_uint_eq(paxos_exposition(s, 1, full, len), len); /* no room for the NUL */
	ck_assert_uint_eq(strlen(full), len - 1);
	ck_assert_uint_eq(paxos_exposition(s, 0, full, sizeof(full)), 0);
	ck_assert_str_eq(full, "");
}
END_TEST

static bool valid_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* Every counter of counters.h, with its value and description; the levels as gauges. */
START_TEST(test_every_counter)
{
	size_t n = paxos_counter_count();
	struct paxos_counters c;
	for (size_t i = 0; i < sizeof(c) / sizeof(uint64_t); i++)
		((uint64_t *)(void *)&c)[i] = 1000 + i;
	c.phase1_timeout_us = 20000;
	struct paxos_sample *s = calloc(2 * n, sizeof(*s));
	ck_assert_uint_eq(paxos_counter_samples(&c, "acceptor", 3, s), n);
	ck_assert_uint_eq(paxos_counter_samples(&c, "transport", 0, s + n), n);
	size_t gauges = 0;
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(valid_name(s[i].name), "%s", s[i].name);
		ck_assert_str_eq(s[i].role, "acceptor");
		ck_assert_uint_eq(s[i].id, 3);
		ck_assert_uint_eq(s[i].value, paxos_counter_value(&c, i));
		ck_assert(s[i].help && s[i].help[0]);
		bool level = strstr(s[i].help, "a level, not a count") ||
			     strstr(paxos_counter_name(i), "timeout_us");
		if (s[i].type == PAXOS_METRIC_GAUGE && !level) {
			gauges++; /* the membership levels and the phase 2 window: as they are */
			ck_assert(!s[i].micro);
			ck_assert_str_eq(s[i].name, paxos_counter_name(i));
			ck_assert(strstr(s[i].name, "membership_") ||
				  strcmp(s[i].name, "phase2_window") == 0);
		} else if (s[i].type == PAXOS_METRIC_GAUGE) {
			gauges++;
			ck_assert(s[i].micro);
			ck_assert_ptr_nonnull(strstr(s[i].name, "_seconds"));
			ck_assert_ptr_null(strstr(s[i].help, "microseconds"));
		} else {
			ck_assert_msg(!level, "%s is a level, not a count", paxos_counter_name(i));
			ck_assert_str_eq(s[i].name, paxos_counter_name(i));
		}
	}
	/* phase1_timeout_us, phase2_timeout_us, phase2_window, membership_configuration,
	 * membership_members, membership_proposers */
	ck_assert_uint_eq(gauges, 6);

	size_t len = paxos_exposition(s, 2 * n, NULL, 0);
	char *text = malloc(len + 1);
	ck_assert_uint_eq(paxos_exposition(s, 2 * n, text, len + 1), len);
	ck_assert_uint_eq(count_lines(text, "# HELP "), n);
	ck_assert_uint_eq(count_lines(text, "# TYPE "), n);
	ck_assert_uint_eq(count_lines(text, "paxos_"), 2 * n);
	ck_assert_uint_eq(count_lines(text, "# TYPE paxos_instances_delivered_total counter"), 1);
	ck_assert_ptr_nonnull(
	    strstr(text, "# TYPE paxos_instances_delivered_total counter\n"
			 "paxos_instances_delivered_total{role=\"acceptor\",id=\"3\"} "));
	ck_assert_ptr_nonnull(
	    strstr(text, "# TYPE paxos_phase1_timeout_seconds gauge\n"
			 "paxos_phase1_timeout_seconds{role=\"acceptor\",id=\"3\"} 0.020000\n"
			 "paxos_phase1_timeout_seconds{role=\"transport\",id=\"0\"} 0.020000\n"));
	free(text);
	free(s);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("exposition");
	TCase *tc = tcase_create("exposition");
	tcase_add_test(tc, test_families_grouped_in_first_order);
	tcase_add_test(tc, test_values_and_escaping);
	tcase_add_test(tc, test_truncation_measures_the_whole_text);
	tcase_add_test(tc, test_partition_label);
	tcase_add_test(tc, test_every_counter);
	suite_add_tcase(s, tc);
	return s;
}
