/* SPDX-License-Identifier: BSD-3-Clause */
/* The command line every tool reads the same way: -c/--config FILE, -p/--partition P,
 * -h/--help and --version beside the tool's own options, and the partition's configuration
 * they name. */
#ifndef PAXOS_CLI_H
#define PAXOS_CLI_H

#include <paxos/config.h>

#include <getopt.h>
#include <stdio.h>

/* What paxos_cli_parse returns when the tool goes on; any other value is its exit status. */
#define PAXOS_CLI_RUN (-1)

/* The shared options a tool takes, besides -h/--help and --version, which all take. */
enum {
	PAXOS_CLI_CONFIG = 1,    /* -c, --config FILE */
	PAXOS_CLI_PARTITION = 2, /* -p, --partition P (default 0) */
};

/* A tool's command line: its own options beside the shared ones. */
struct paxos_cli_spec {
	const char *program;
	unsigned takes;        /* PAXOS_CLI_* */
	const char *shortopts; /* the tool's own, as getopt_long spells them ("+" first: stop at
				  the first operand) */
	const struct option *options; /* the tool's own long options, ended by a NULL name */
	/* One of the tool's own options: 0, an exit status after saying why, or -1 for one the
	 * tool does not take (then the usage goes to stderr and the status is 2). */
	int (*option)(void *arg, int opt, const char *value);
	void (*usage)(void *arg, FILE *out);
};

/* What the command line gave. */
struct paxos_cli {
	const char *program;
	const char *config;    /* NULL when it gave none */
	const char *partition; /* "0" when it gave none */
	int operands;          /* argv[operands..argc) */
};

/* Reads the options (getopt_long) into cli, the tool's own through spec->option(arg, ...):
 * prints the usage on stdout for -h and the version for --version (status 0), the usage on
 * stderr for an option the tool does not take (status 2). */
int paxos_cli_parse(const struct paxos_cli_spec *spec, void *arg, int argc, char **argv,
		    struct paxos_cli *cli);

/* Loads cli->config and narrows it to partition cli->partition: 0, or 2 after saying why. */
int paxos_cli_partition_config(const struct paxos_cli *cli, struct paxos_config *cfg);

/* Loads path (defaults first); prints "program: FILE:LINE: ..." and returns -1 on error. */
int paxos_runner_config(const char *program, const char *path, struct paxos_config *cfg);

/* Parses a non-negative id below limit; prints an error naming what and returns -1. */
int paxos_runner_id(const char *program, const char *what, const char *text, uint32_t limit,
		    uint32_t *id);

/* Prints "PROGRAM (libpaxos) VERSION, wire version N" on stdout, from the running library:
 * what every installed binary answers to --version. */
void paxos_runner_version(const char *program);

#endif
