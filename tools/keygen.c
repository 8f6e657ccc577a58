/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-keygen: writes a fresh random key for auth-key-file or admin-key-file (paxos.conf),
 * mode 0600. Every holder of a key uses a copy of the same file.
 */
#include "auth.h"

#include <paxos/types.h>

#include "runner.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: paxos-keygen [--force] FILE\n"
		"Writes a random %u-byte key for auth-key-file or admin-key-file to FILE,\n"
		"mode 0600.\n"
		"  -f, --force  replace FILE if it exists (default: refuse)\n"
		"  -h, --help   this text\n"
		"      --version  the library's version and wire version\n",
		PAXOS_AUTH_KEY_BYTES);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {{"force", no_argument, NULL, 'f'},
						{"help", no_argument, NULL, 'h'},
						{"version", no_argument, NULL, 'V'},
						{NULL, 0, NULL, 0}};
	bool force = false;
	int opt;
	while ((opt = getopt_long(argc, argv, "fh", options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			force = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			paxos_runner_version("paxos-keygen");
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	char err[512];
	if (paxos_auth_write_key(argv[optind], force, err, sizeof(err)) != PAXOS_OK) {
		fprintf(stderr, "paxos-keygen: %s\n", err);
		return 1;
	}
	fprintf(stderr, "paxos-keygen: wrote a new key to %s (mode 0600)\n", argv[optind]);
	return 0;
}
