/* SPDX-License-Identifier: BSD-3-Clause */
/* paxos-replica: acceptor, proposer and learner with the same id in one event loop. */
#include "runner.h"

int main(int argc, char **argv)
{
	static const struct paxos_runner_spec spec = {
	    "paxos-replica",
	    "Hosts the acceptor and the proposer with this id (where they exist) and a learner in "
	    "one event loop.",
	    PAXOS_HOST_ACCEPTOR | PAXOS_HOST_PROPOSER | PAXOS_HOST_LEARNER};
	return paxos_runner_main(&spec, argc, argv);
}
