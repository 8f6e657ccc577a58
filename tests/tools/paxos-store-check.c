/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-store-check: checks a stopped acceptor's store against what it acknowledged, as
 * paxos-witness wrote it down: every promise and accepted message acceptor ID (or the
 * serializer, acceptor 0) sent must be backed by its store (a durable acceptor answers only
 * from durable state). For a promise the record holds a promise at least as high (or is
 * final) and an accepted ballot at least the one reported; for an accepted message the record
 * holds an accepted ballot at least as high, with the same value when it is the same ballot
 * (unless it became final: the chosen value replaced it); one sent as final is final in the
 * store, with the same value.
 * Prints how many messages it checked; the first problems and exit status 1 if any.
 *
 * Usage: paxos-store-check -c CONFIG -i ID WITNESS_FILE
 */
#include <paxos/paxos.h>
#include <paxos/storage_backends.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHOWN_MAX 10

static unsigned long long fnv1a(const struct paxos_value *v)
{
	unsigned long long h = 0xcbf29ce484222325ull;
	for (uint32_t i = 0; i < v->len; i++)
		h = (h ^ v->data[i]) * 0x100000001b3ull;
	return h;
}

/* Why the record does not back the message, or NULL when it does. */
static const char *unbacked(int found, const struct paxos_record *r, char kind,
			    unsigned long long ballot, unsigned long long extra,
			    unsigned long long hash)
{
	if (found != 1)
		return "no record";
	if (kind == 'P') {
		if (r->promised < ballot && !r->final)
			return "promise lower than the one sent";
		if (r->accepted < extra && !r->final)
			return "accepted ballot lower than the promise reported";
		return NULL;
	}
	if (r->accepted < ballot)
		return "accepted ballot lower than the one sent";
	if (extra && !r->final) /* sent as final (chosen): it stays so */
		return "not final, but sent as final";
	/* hash 0: the message named its value by the ballot only (the store's ballot is checked).
	 */
	if (hash && (extra || (r->accepted == ballot && !r->final)) && fnv1a(&r->value) != hash)
		return "another value than the one sent";
	return NULL;
}

/* The usage on OUT; returns the exit status: 0 for --help (stdout), 2 for a wrong command line. */
static int usage(FILE *out)
{
	fprintf(out,
		"Usage: paxos-store-check -c CONFIG -i ID WITNESS_FILE\n"
		"Checks a stopped acceptor's store against what paxos-witness saw it acknowledge.\n"
		"  -c CONFIG    the cluster's paxos.conf (storage backend and path)\n"
		"  -i ID        the acceptor whose store to check\n"
		"  -h, --help   this text\n");
	return out == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
	const char *config = NULL, *id_text = NULL;
	int opt;
	static const struct option options[] = {{"help", no_argument, NULL, 'h'},
						{NULL, 0, NULL, 0}};
	while ((opt = getopt_long(argc, argv, "c:i:h", options, NULL)) != -1) {
		if (opt == 'h')
			return usage(stdout);
		if (opt == 'c')
			config = optarg;
		else if (opt == 'i')
			id_text = optarg;
		else
			return usage(stderr);
	}
	if (!config || !id_text || optind != argc - 1)
		return usage(stderr);
	unsigned id = (unsigned)strtoul(id_text, NULL, 10);
	char err[1024];
	struct paxos_config *cfg = paxos_config_new();
	if (!cfg || paxos_config_load(cfg, config, err, sizeof(err)) != PAXOS_OK) {
		fprintf(stderr, "paxos-store-check: %s\n", cfg ? err : "out of memory");
		return 1;
	}
	FILE *in = fopen(argv[optind], "r");
	if (!in) {
		perror(argv[optind]);
		return 1;
	}
	struct paxos_storage *st = paxos_storage_open(cfg, id, false, err, sizeof(err));
	if (!st) {
		fprintf(stderr, "paxos-store-check: acceptor %u: %s\n", id, err);
		return 1;
	}
	unsigned long long checked = 0, bad = 0;
	char line[256];
	while (fgets(line, sizeof(line), in)) {
		unsigned who;
		char kind;
		unsigned long long iid, ballot, extra, hash;
		if (sscanf(line, "%u %c %llu %llu %llu %llx", &who, &kind, &iid, &ballot, &extra,
			   &hash) != 6 ||
		    (kind != 'P' && kind != 'A')) {
			fprintf(stderr, "paxos-store-check: %s: not a witness line: %s",
				argv[optind], line);
			return 1;
		}
		if (who != id)
			continue;
		struct paxos_record r;
		memset(&r, 0, sizeof(r));
		int found = st->ops->get(st, iid, &r);
		if (found < 0) {
			fprintf(stderr, "paxos-store-check: acceptor %u: %s\n", id,
				paxos_storage_error(st));
			return 1;
		}
		checked++;
		const char *why = unbacked(found, &r, kind, ballot, extra, hash);
		if (why && bad++ < SHOWN_MAX)
			printf(
			    "acceptor %u sent %s for instance %llu at ballot %llu, its store has "
			    "promised %llu accepted %llu%s: %s\n",
			    id, kind == 'P' ? "a promise" : "an accepted", iid, ballot,
			    (unsigned long long)(found == 1 ? r.promised : 0),
			    (unsigned long long)(found == 1 ? r.accepted : 0),
			    found == 1 && r.final ? " final" : "", why);
	}
	fclose(in);
	paxos_storage_destroy(st);
	paxos_config_free(cfg);
	if (bad) {
		printf("acceptor %u: %llu of %llu messages it sent are not backed by its store\n",
		       id, bad, checked);
		return 1;
	}
	printf("acceptor %u: all %llu promises and accepted messages it sent are in its store\n",
	       id, checked);
	return 0;
}
