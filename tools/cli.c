/* SPDX-License-Identifier: BSD-3-Clause */
#include "cli.h"

#include <paxos/log.h>
#include <paxos/version.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

/* The shared options and the tool's own, in one table for getopt_long. */
#define CLI_MAX_OPTIONS 24

static const struct option shared_options[] = {{"config", required_argument, NULL, 'c'},
					       {"partition", required_argument, NULL, 'p'},
					       {"help", no_argument, NULL, 'h'},
					       {"version", no_argument, NULL, 'V'}};

static bool shared_taken(const struct paxos_cli_spec *spec, int opt)
{
	return (opt == 'c' && (spec->takes & PAXOS_CLI_CONFIG)) ||
	       (opt == 'p' && (spec->takes & PAXOS_CLI_PARTITION)) || opt == 'h' || opt == 'V';
}

/* Returns 0, or -1 when the tool's table does not fit. */
static int build_options(const struct paxos_cli_spec *spec, struct option *all, char *shortopts,
			 size_t cap)
{
	size_t n = 0;
	const char *own = spec->shortopts ? spec->shortopts : "";
	snprintf(shortopts, cap, "%s%s%s%sh", own[0] == '+' ? "+" : "",
		 (spec->takes & PAXOS_CLI_CONFIG) ? "c:" : "",
		 (spec->takes & PAXOS_CLI_PARTITION) ? "p:" : "", own + (own[0] == '+'));
	for (size_t i = 0; i < sizeof(shared_options) / sizeof(shared_options[0]); i++)
		if (shared_taken(spec, shared_options[i].val))
			all[n++] = shared_options[i];
	for (const struct option *o = spec->options; o && o->name; o++) {
		if (n + 1 >= CLI_MAX_OPTIONS)
			return -1;
		all[n++] = *o;
	}
	all[n] = (struct option){NULL, 0, NULL, 0};
	return 0;
}

int paxos_cli_parse(const struct paxos_cli_spec *spec, void *arg, int argc, char **argv,
		    struct paxos_cli *cli)
{
	struct option all[CLI_MAX_OPTIONS];
	char shortopts[64];
	*cli = (struct paxos_cli){spec->program, NULL, "0", 0};
	if (build_options(spec, all, shortopts, sizeof(shortopts)) != 0) {
		fprintf(stderr, "%s: too many options\n", spec->program);
		return 2;
	}
	int opt;
	while ((opt = getopt_long(argc, argv, shortopts, all, NULL)) != -1) {
		int status = -1;
		if (opt == 'c' && (spec->takes & PAXOS_CLI_CONFIG)) {
			cli->config = optarg;
			status = 0;
		} else if (opt == 'p' && (spec->takes & PAXOS_CLI_PARTITION)) {
			cli->partition = optarg;
			status = 0;
		} else if (opt == 'h') {
			spec->usage(arg, stdout);
			return 0;
		} else if (opt == 'V') {
			paxos_runner_version(spec->program);
			return 0;
		} else if (opt != '?' && opt != ':' && spec->option)
			status = spec->option(arg, opt, optarg);
		if (status < 0) {
			spec->usage(arg, stderr);
			return 2;
		}
		if (status > 0)
			return status;
	}
	cli->operands = optind;
	return PAXOS_CLI_RUN;
}

int paxos_cli_partition_config(const struct paxos_cli *cli, struct paxos_config *cfg)
{
	uint32_t partition;
	if (paxos_runner_config(cli->program, cli->config, cfg) ||
	    paxos_runner_id(cli->program, "partition", cli->partition, paxos_config_partitions(cfg),
			    &partition) ||
	    paxos_config_partition(cfg, partition, cfg) != PAXOS_OK)
		return 2;
	return 0;
}

int paxos_runner_config(const char *program, const char *path, struct paxos_config *cfg)
{
	char err[512];
	/* The library logs nothing by itself: the binaries print its lines, as before. */
	paxos_set_log(paxos_log_stderr, NULL);
	paxos_config_defaults(cfg);
	if (paxos_config_load(cfg, path, err, sizeof(err)) != PAXOS_OK) {
		fprintf(stderr, "%s: %s\n", program, err);
		return -1;
	}
	return 0;
}

int paxos_runner_id(const char *program, const char *what, const char *text, uint32_t limit,
		    uint32_t *id)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || v >= limit) {
		fprintf(stderr, "%s: %s '%s' must be a number from 0 to %u\n", program, what, text,
			limit - 1);
		return -1;
	}
	*id = (uint32_t)v;
	return 0;
}

void paxos_runner_version(const char *program)
{
	printf("%s (libpaxos) %s, wire version %u\n", program, paxos_version(),
	       (unsigned)paxos_wire_format_version());
}
