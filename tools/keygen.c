/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-keygen: writes a fresh random key for auth-key-file or admin-key-file (paxos.conf),
 * mode 0600. Every holder of a key uses a copy of the same file.
 */
#include "auth.h"

#include <paxos/types.h>

#include "cli.h"

#include <stdbool.h>
#include <stdio.h>

static void usage(void *arg, FILE *out)
{
	(void)arg;
	fprintf(out,
		"Usage: paxos-keygen [--force] FILE\n"
		"Writes a random %u-byte key for auth-key-file or admin-key-file to FILE,\n"
		"mode 0600.\n"
		"  -f, --force  replace FILE if it exists (default: refuse)\n"
		"  -h, --help   this text\n"
		"      --version  the library's version and wire version\n",
		PAXOS_AUTH_KEY_BYTES);
}

static int take_option(void *arg, int opt, const char *value)
{
	(void)value;
	if (opt != 'f')
		return -1;
	*(bool *)arg = true;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {{"force", no_argument, NULL, 'f'}, {NULL}};
	static const struct paxos_cli_spec spec = {"paxos-keygen", 0,           "f",
						   options,        take_option, usage};
	bool force = false;
	struct paxos_cli cli;
	int status = paxos_cli_parse(&spec, &force, argc, argv, &cli);
	if (status != PAXOS_CLI_RUN)
		return status;
	if (cli.operands != argc - 1) {
		usage(NULL, stderr);
		return 2;
	}
	const char *file = argv[cli.operands];
	char err[512];
	if (paxos_auth_write_key(file, force, err, sizeof(err)) != PAXOS_OK) {
		fprintf(stderr, "paxos-keygen: %s\n", err);
		return 1;
	}
	fprintf(stderr, "paxos-keygen: wrote a new key to %s (mode 0600)\n", file);
	return 0;
}
