/* SPDX-License-Identifier: BSD-3-Clause */
/* paxos-acceptor: Runs one acceptor of the configured cluster. */
#include "runner.h"

int main(int argc, char **argv)
{
	static const struct paxos_runner_spec spec = {
	    "paxos-acceptor", "Runs one acceptor of the configured cluster.", PAXOS_HOST_ACCEPTOR};
	return paxos_runner_main(&spec, argc, argv);
}
