/* SPDX-License-Identifier: BSD-3-Clause */
/* Every unit test file defines its Check suite; tests/unit/check_main.c runs it. */
#ifndef PAXOS_TEST_CHECK_MAIN_H
#define PAXOS_TEST_CHECK_MAIN_H

#include <check.h>

/* The suite of this test program. */
Suite *test_suite(void);

#endif
