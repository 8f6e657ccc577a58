/* SPDX-License-Identifier: BSD-3-Clause */
/* paxos-learner: Learns and prints every delivered value, in instance order. */
#include "runner.h"

int main(int argc, char **argv)
{
	static const struct paxos_runner_spec spec = {
	    "paxos-learner", "Learns and prints every delivered value, in instance order.",
	    PAXOS_HOST_LEARNER};
	return paxos_runner_main(&spec, argc, argv);
}
