/* SPDX-License-Identifier: BSD-3-Clause */
/* The library's version (paxos/version.h, generated from the project's version). */
#include <paxos/version.h>

const char *paxos_version(void)
{
	return PAXOS_VERSION;
}
