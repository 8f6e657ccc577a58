/* SPDX-License-Identifier: BSD-3-Clause */
/* paxos-serializer: Runs the serializer (thesis 4.2) in place of the acceptors and proposers. */
#include "runner.h"

int main(int argc, char **argv)
{
	static const struct paxos_runner_spec spec = {
	    "paxos-serializer",
	    "Runs the serializer (thesis 4.2): numbers, stores and multicasts client values as\n"
	    "final, in place of the acceptors and proposers; learners and clients are unchanged.",
	    PAXOS_HOST_SERIALIZER};
	return paxos_runner_main(&spec, argc, argv);
}
