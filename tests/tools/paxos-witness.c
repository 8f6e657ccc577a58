/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-witness: writes down every promise and accepted message the acceptors send, as a
 * third party on the multicast groups sees them, for tests that check a killed acceptor's
 * store against what it acknowledged (paxos-store-check). One line per message:
 *   ACCEPTOR P IID BALLOT VALUE_BALLOT HASH    a promise (HASH of the value it reports)
 *   ACCEPTOR A IID BALLOT FINAL HASH           an accepted message
 * HASH is the 64-bit FNV-1a of the value bytes, in hex; 0 for an accepted message that carries
 * no value (wire version 3: the answer to an accept names the value by its ballot only). Runs
 * until SIGTERM or SIGINT.
 *
 * With -H ID:FILE it also keeps, as it came (tag included), the first datagram of acceptor ID
 * that holds an acceptor hello, in FILE, and with -L FILE the first oracle order that names a
 * proposer (paxos-oracle --leader): tests replay them (paxos-send @FILE).
 *
 * Usage: paxos-witness -c CONFIG -o FILE [-H ID:FILE] [-L FILE]
 */
#include <paxos/paxos.h>

#include <event2/event.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "auth.h"
#include "codec.h"

struct witness {
	FILE *out;
	const char *hello_file; /* -H: where to keep acceptor hello_id's first hello */
	uint32_t hello_id;
	const char *order_file; /* -L: where to keep the first order naming a leader */
	struct paxos_decoder decoder;
	struct paxos_message msgs[PAXOS_MAX_MESSAGES_PER_DATAGRAM];
};

static unsigned long long fnv1a(const struct paxos_value *v)
{
	unsigned long long h = 0xcbf29ce484222325ull;
	for (uint32_t i = 0; i < v->len; i++)
		h = (h ^ v->data[i]) * 0x100000001b3ull;
	return h;
}

/* Whether msgs[0..count) hold a message of this type (for a leader order: naming one). */
static bool holds(const struct paxos_message *msgs, size_t count, enum paxos_msg_type type)
{
	for (size_t k = 0; k < count; k++)
		if (msgs[k].type == type &&
		    (type != PAXOS_MSG_LEADER || msgs[k].u.leader.leader_id != PAXOS_LEADER_AUTO))
			return true;
	return false;
}

/* Keeps d in *file, and forgets *file, if d comes from (role, id) (any id for a client) and
 * holds a message of this type (a keyed datagram ends with its tag, which the decoder is not
 * shown). */
static void keep_first(struct witness *w, const struct paxos_rx_datagram *d, const char **file,
		       enum paxos_role role, uint32_t id, enum paxos_msg_type type)
{
	static const size_t tag_lengths[] = {0, PAXOS_AUTH_TAG_BYTES};
	for (size_t t = 0; t < 2 && !d->truncated && d->len > tag_lengths[t]; t++) {
		struct paxos_header h;
		size_t count = 0;
		if (paxos_decode(&w->decoder, d->data, d->len - tag_lengths[t], &h, w->msgs,
				 PAXOS_MAX_MESSAGES_PER_DATAGRAM, &count) != PAXOS_OK ||
		    h.role != role || (role != PAXOS_ROLE_CLIENT && h.sender_id != id))
			continue;
		if (!holds(w->msgs, count, type))
			return;
		FILE *f = fopen(*file, "wb");
		if (f && fwrite(d->data, 1, d->len, f) == d->len && fclose(f) == 0)
			*file = NULL; /* once */
		else if (f)
			fclose(f);
		return;
	}
}

static void on_datagrams(void *arg, enum paxos_group g, struct paxos_rx_datagram *d, size_t n)
{
	struct witness *w = arg;
	for (size_t i = 0; i < n; i++) {
		if (g == PAXOS_GROUP_ACCEPTORS) {
			if (w->hello_file)
				keep_first(w, &d[i], &w->hello_file, PAXOS_ROLE_ACCEPTOR,
					   w->hello_id, PAXOS_MSG_ACCEPTOR_HELLO);
			continue;
		}
		if (g == PAXOS_GROUP_PROPOSERS && w->order_file)
			keep_first(w, &d[i], &w->order_file, PAXOS_ROLE_CLIENT, 0,
				   PAXOS_MSG_LEADER);
		struct paxos_header h;
		size_t count = 0;
		if (d[i].truncated ||
		    paxos_decode(&w->decoder, d[i].data, d[i].len, &h, w->msgs,
				 PAXOS_MAX_MESSAGES_PER_DATAGRAM, &count) != PAXOS_OK ||
		    h.role != PAXOS_ROLE_ACCEPTOR)
			continue;
		for (size_t k = 0; k < count; k++) {
			const struct paxos_message *m = &w->msgs[k];
			if (m->type == PAXOS_MSG_PROMISE)
				fprintf(w->out, "%u P %llu %llu %llu %016llx\n", h.sender_id,
					(unsigned long long)m->u.promise.iid,
					(unsigned long long)m->u.promise.ballot,
					(unsigned long long)m->u.promise.value_ballot,
					fnv1a(&m->u.promise.value));
			else if (m->type == PAXOS_MSG_ACCEPTED)
				fprintf(w->out, "%u A %llu %llu %d %016llx\n", h.sender_id,
					(unsigned long long)m->u.accepted.iid,
					(unsigned long long)m->u.accepted.ballot,
					m->u.accepted.final ? 1 : 0,
					m->u.accepted.value.len ? fnv1a(&m->u.accepted.value) : 0);
		}
	}
	fflush(w->out); /* the test reads the file while this runs */
}

/* The usage on OUT; returns the exit status: 0 for --help (stdout), 2 for a wrong command line. */
static int usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: paxos-witness -c CONFIG -o FILE [-H ID:FILE] [-L FILE]\n"
	    "Writes down every promise and accepted message the acceptors send, until SIGTERM.\n"
	    "  -c CONFIG    the cluster's paxos.conf\n"
	    "  -o FILE      one line per message: ACCEPTOR P|A IID BALLOT ... HASH\n"
	    "  -H ID:FILE   keep the first datagram holding acceptor ID's hello in FILE\n"
	    "  -L FILE      keep the first leader order (an oracle's datagram) in FILE\n"
	    "  -h, --help   this text\n");
	return out == stdout ? 0 : 2;
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	event_base_loopbreak(arg);
}

int main(int argc, char **argv)
{
	const char *config = NULL, *output = NULL, *hello_file = NULL, *order_file = NULL;
	unsigned hello_id = 0;
	int opt, used = 0;
	static const struct option options[] = {{"help", no_argument, NULL, 'h'},
						{NULL, 0, NULL, 0}};
	while ((opt = getopt_long(argc, argv, "c:o:H:L:h", options, NULL)) != -1) {
		if (opt == 'h')
			return usage(stdout);
		if (opt == 'c')
			config = optarg;
		else if (opt == 'o')
			output = optarg;
		else if (opt == 'H' && sscanf(optarg, "%u:%n", &hello_id, &used) == 1 && used > 0 &&
			 optarg[used])
			hello_file = optarg + used;
		else if (opt == 'L')
			order_file = optarg;
		else
			return usage(stderr);
	}
	if (!config || !output || optind != argc)
		return usage(stderr);
	char err[512];
	struct paxos_config *cfg = paxos_config_new();
	if (!cfg || paxos_config_load(cfg, config, err, sizeof(err)) != PAXOS_OK) {
		fprintf(stderr, "paxos-witness: %s\n", cfg ? err : "out of memory");
		return 1;
	}
	struct witness w = {
	    .hello_file = hello_file, .hello_id = hello_id, .order_file = order_file};
	w.out = fopen(output, "w");
	if (!w.out) {
		perror(output);
		return 1;
	}
	paxos_decoder_init(&w.decoder);
	struct event_base *base = event_base_new();
	struct paxos_transport *t =
	    base ? paxos_transport_multicast_new(base, cfg, on_datagrams, &w, err, sizeof(err))
		 : NULL;
	if (!t || t->ops->join(t, PAXOS_GROUP_PROPOSERS, err, sizeof(err)) != PAXOS_OK ||
	    t->ops->join(t, PAXOS_GROUP_LEARNERS, err, sizeof(err)) != PAXOS_OK ||
	    (hello_file && t->ops->join(t, PAXOS_GROUP_ACCEPTORS, err, sizeof(err)) != PAXOS_OK)) {
		fprintf(stderr, "paxos-witness: %s\n", err);
		return 1;
	}
	struct event *term = evsignal_new(base, SIGTERM, on_signal, base);
	struct event *intr = evsignal_new(base, SIGINT, on_signal, base);
	if (!term || !intr || event_add(term, NULL) != 0 || event_add(intr, NULL) != 0) {
		fprintf(stderr, "paxos-witness: cannot install signal handlers\n");
		return 1;
	}
	event_base_dispatch(base);
	event_free(term);
	event_free(intr);
	t->ops->destroy(t);
	event_base_free(base);
	paxos_decoder_destroy(&w.decoder);
	paxos_config_free(cfg);
	return fclose(w.out) == 0 ? 0 : 1;
}
