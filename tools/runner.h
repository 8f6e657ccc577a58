/* SPDX-License-Identifier: BSD-3-Clause */
/* What every role binary does the same way: read the config, run the loop, stop on signals. */
#ifndef PAXOS_RUNNER_H
#define PAXOS_RUNNER_H

#include <paxos/config.h>
#include <paxos/node.h>
#include <stdio.h>

#include "cli.h"

struct event_base;

/* Runs base until SIGINT or SIGTERM (then reports the counters of nodes[0..count), one per
 * partition) or until a node fails. Returns the process exit status. */
int paxos_runner_loop(struct event_base *base, struct paxos_node *const *nodes, uint32_t count);

/* A role binary: which roles it hosts from the configuration. */
enum {
	PAXOS_HOST_ACCEPTOR = 1,
	PAXOS_HOST_PROPOSER = 2,
	PAXOS_HOST_LEARNER = 4,
	PAXOS_HOST_SERIALIZER = 8, /* thesis 4.2, in place of acceptors and proposers */
};

struct paxos_runner_spec {
	const char *program;
	const char *summary; /* one line for --help */
	unsigned roles;      /* PAXOS_HOST_* */
};

/* The whole main() of a role binary: options -c/--config, -i/--id (when it hosts an
 * acceptor or proposer), -o/--output (when it hosts a learner), --fresh (when it hosts an
 * acceptor or the serializer), -h/--help, --version. */
int paxos_runner_main(const struct paxos_runner_spec *spec, int argc, char **argv);

/* Writes "IID HEX\n": the instance id, a space, the value in lowercase hex. */
void paxos_runner_write_value(FILE *out, paxos_iid iid, const struct paxos_value *v);

#endif
