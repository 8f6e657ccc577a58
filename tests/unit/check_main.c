/* SPDX-License-Identifier: BSD-3-Clause */
/* The one main of the unit test programs: runs the file's suite, exits non-zero on a failure.
 * Check's own environment (CK_RUN_CASE, CK_RUN_SUITE, CK_FORK, CK_DEFAULT_TIMEOUT) selects and
 * shapes the run. A test case's time limit is a guard against hangs, not a timing assertion:
 * Check's default of 4 s is raised to 60 s (unless the environment sets one), as a loaded 2-core
 * machine stretches the randomized suites past 4 s. */
#include <stdlib.h>

#include "check_main.h"

int main(void)
{
	setenv("CK_DEFAULT_TIMEOUT", "60", 0);
	SRunner *sr = srunner_create(test_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
