/* SPDX-License-Identifier: BSD-3-Clause */
/* What a failed PAXOS_ASSERT does (paxos_assert.h). Built in every configuration, so that
 * objects compiled with assertions link against a library built without them. */
#include "paxos_assert.h"

#include <stdio.h>
#include <stdlib.h>

_Noreturn void paxos_assert_fail(const char *file, int line, const char *expr, const char *msg)
{
	fprintf(stderr, "%s:%d: invariant broken: %s (%s)\n", file, line, msg, expr);
	fflush(stderr);
	abort();
}
