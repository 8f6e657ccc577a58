/* SPDX-License-Identifier: BSD-3-Clause */
/* paxos/version.h: the macros agree with each other and with what the library says. */
#include "check_main.h"
#include <paxos/paxos.h>
#include <stdio.h>
#include <stdlib.h>

#include "codec.h"

START_TEST(test_macros_agree)
{
	char joined[64];
	snprintf(joined, sizeof(joined), "%d.%d.%d", PAXOS_VERSION_MAJOR, PAXOS_VERSION_MINOR,
		 PAXOS_VERSION_PATCH);
	ck_assert_str_eq(joined, PAXOS_VERSION);
}
END_TEST

START_TEST(test_library_says_the_same)
{
	ck_assert_str_eq(paxos_version(), PAXOS_VERSION);
	ck_assert_uint_eq(paxos_wire_format_version(), PAXOS_WIRE_VERSION);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("version");
	TCase *t = tcase_create("version");
	tcase_add_test(t, test_macros_agree);
	tcase_add_test(t, test_library_says_the_same);
	suite_add_tcase(s, t);
	return s;
}
