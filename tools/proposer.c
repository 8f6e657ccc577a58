/* SPDX-License-Identifier: BSD-3-Clause */
/* paxos-proposer: Runs one proposer; the configured leader proposes client values. */
#include "runner.h"

int main(int argc, char **argv)
{
	static const struct paxos_runner_spec spec = {
	    "paxos-proposer", "Runs one proposer; the configured leader proposes client values.",
	    PAXOS_HOST_PROPOSER};
	return paxos_runner_main(&spec, argc, argv);
}
