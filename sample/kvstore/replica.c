/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kvstore-replica: one replica of the key-value store. It hosts a learner (and, with
 * --acceptor and --proposer, the acceptor and proposer with its id) on one libevent loop,
 * applies every delivered command to its store in instance order, multicasts each result on
 * the reply group, takes snapshots and tells the acceptors how far they may trim.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>
#include <paxos/storage_backends.h>
#include <paxos/paxos.h>

#include "command.h"
#include "kvconf.h"
#include "net.h"
#include "reply_conf.h"
#include "store.h"

#define PROGRAM "kvstore-replica"

struct replica {
	uint32_t id;
	const char *dir;
	struct paxos_config *pcfg;
	struct kv_config kcfg;
	struct event_base *base;
	struct paxos_node *node;
	struct kv_store *store;
	int reply_fd;
	paxos_iid last_iid;      /* instance of the last value applied */
	paxos_iid snapshot_iid;  /* the newest snapshot covers instances up to here */
	paxos_iid trim_iid;      /* the highest trim this replica asked for */
	uint64_t since_snapshot; /* commands applied since */
	uint64_t ignored;        /* delivered values that are not kvstore commands */
	int exit_code;
	uint8_t buf[KV_REPLY_HEADER + KV_MAX_FIELD];
};

static void stop(struct replica *r, int code)
{
	r->exit_code = code;
	event_base_loopbreak(r->base);
}

/* Trim up to where the policy allows: thesis 3.4.1, snapshot(i). Repeated from the timer,
 * since a trim request may be lost like any datagram. */
static void trim(struct replica *r)
{
	paxos_iid upto = 0;
	if (r->kcfg.trim == KV_TRIM_ALL)
		upto = kv_store_all_announced(r->store);
	else if (r->kcfg.trim == KV_TRIM_OWN)
		upto = r->snapshot_iid;
	if (upto == 0)
		return;
	if (upto > r->trim_iid)
		fprintf(stderr, PROGRAM " %u: trim: acceptors may drop instances up to %llu\n",
			r->id, (unsigned long long)upto);
	r->trim_iid = upto > r->trim_iid ? upto : r->trim_iid;
	if (paxos_node_trim(r->node, upto) != PAXOS_OK)
		fprintf(stderr, PROGRAM " %u: %s\n", r->id, paxos_node_error(r->node));
}

/* Tells the other replicas (through Paxos, so all agree) that this one has a snapshot. */
static void announce(struct replica *r)
{
	struct kv_command c = {.op = KV_SNAPSHOT, .client = r->id, .seq = r->snapshot_iid};
	size_t len = kv_command_encode(&c, r->buf, sizeof(r->buf));
	if (paxos_node_submit(r->node, r->buf, len) != PAXOS_OK)
		fprintf(stderr, PROGRAM " %u: %s\n", r->id, paxos_node_error(r->node));
}

/* Saves the store as of the end of instance last_iid. Only called between instances. */
static void snapshot(struct replica *r)
{
	char err[PATH_MAX + 128];
	if (kv_store_save(r->store, r->dir, r->last_iid, err, sizeof(err)) != 0) {
		fprintf(stderr, PROGRAM " %u: snapshot failed: %s\n", r->id, err);
		return;
	}
	r->snapshot_iid = r->last_iid;
	r->since_snapshot = 0;
	fprintf(stderr, PROGRAM " %u: snapshot at instance %llu (%zu keys, %llu commands)\n", r->id,
		(unsigned long long)r->snapshot_iid, kv_store_keys(r->store),
		(unsigned long long)kv_store_commands(r->store));
	if (r->kcfg.trim == KV_TRIM_ALL)
		announce(r);
	else
		trim(r);
}

static void send_reply(struct replica *r, struct kv_reply *reply)
{
	reply->replica = r->id;
	size_t len = kv_reply_encode(reply, r->buf, sizeof(r->buf));
	/* Unreliable on purpose: a client that misses it resubmits and is answered again. */
	if (len)
		sendto(r->reply_fd, r->buf, len, 0, (const struct sockaddr *)&r->kcfg.reply_group,
		       sizeof(r->kcfg.reply_group));
}

static void deliver(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)position;
	struct replica *r = arg;
	if (r->exit_code)
		return;
	/* A new instance: the previous one is complete, so a snapshot can cover it. */
	if (iid != r->last_iid) {
		if (r->kcfg.snapshot_every && r->since_snapshot >= r->kcfg.snapshot_every)
			snapshot(r);
		r->last_iid = iid;
	}
	struct kv_command c;
	struct kv_reply reply;
	if (kv_command_decode(v->data, v->len, &c) != 0) {
		r->ignored++; /* not ours (or an empty value): every replica skips it alike */
		return;
	}
	switch (kv_store_apply(r->store, &c, iid, &reply)) {
	case KV_APPLIED:
		r->since_snapshot++;
		send_reply(r, &reply);
		break;
	case KV_DUPLICATE:
		send_reply(r, &reply);
		break;
	case KV_ANNOUNCED:
		trim(r);
		break;
	case KV_STALE:
	case KV_INVALID:
		break;
	case KV_NOMEM:
		fprintf(stderr, PROGRAM " %u: out of memory at instance %llu: stopping\n", r->id,
			(unsigned long long)iid);
		stop(r, 1);
		break;
	}
}

/* The acceptors dropped instances this replica never applied: its log cannot be replayed,
 * and skipping them would silently diverge from the other replicas. */
static void trimmed(void *arg, paxos_iid from, paxos_iid to)
{
	struct replica *r = arg;
	fprintf(stderr,
		PROGRAM " %u: instances %llu..%llu were trimmed before this replica applied "
			"them; it cannot catch up from the acceptors. Copy the DIR/snapshot of a "
			"replica whose snapshot covers instance %llu or more into %s, and restart "
			"this one.\n",
		r->id, (unsigned long long)from, (unsigned long long)to, (unsigned long long)to,
		r->dir);
	stop(r, 3);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct replica *r = arg;
	if (r->kcfg.trim == KV_TRIM_ALL && kv_store_announced(r->store, r->id) < r->snapshot_iid)
		announce(r);
	trim(r);
}

/* DIR/dump: the state as text (kv_store_dump), replaced atomically. */
static void dump(struct replica *r)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	snprintf(path, sizeof(path), "%s/dump", r->dir);
	snprintf(tmp, sizeof(tmp), "%s/dump.tmp", r->dir);
	FILE *f = fopen(tmp, "w");
	int rc = !f;
	if (f) {
		fprintf(f, "# instance %llu\n", (unsigned long long)r->last_iid);
		rc = kv_store_dump(r->store, f);
		rc |= fclose(f);
	}
	if (rc || rename(tmp, path) != 0)
		fprintf(stderr, PROGRAM " %u: cannot write %s: %s\n", r->id, path, strerror(errno));
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	struct replica *r = arg;
	if (sig == SIGUSR1) {
		dump(r);
		return;
	}
	if (r->since_snapshot)
		snapshot(r);
	stop(r, 0);
}

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: " PROGRAM " -c PAXOS_CONF -k KVSTORE_CONF -i ID -d DIR [--acceptor] "
	    "[--proposer]\n"
	    "A replica of the key-value store; it keeps its snapshot in DIR.\n"
	    "  -c, --config FILE    cluster configuration (paxos.conf)\n"
	    "  -k, --kvstore FILE   kvstore configuration (kvstore.conf)\n"
	    "  -i, --id ID          replica id, 0..replicas-1 (also the acceptor and proposer id)\n"
	    "  -d, --dir DIR        where snapshots go (created if missing)\n"
	    "      --acceptor       also host acceptor ID, with the storage of paxos.conf\n"
	    "      --proposer       also host proposer ID\n"
	    "  -h, --help           this text\n"
	    "      --version        the library's version and wire version\n"
	    "SIGUSR1 writes the state to DIR/dump; SIGTERM and SIGINT snapshot and exit.\n");
}

/* What --version says: the libpaxos this program runs with. */
static void print_version(void)
{
	printf(PROGRAM " (libpaxos) %s, wire version %u\n", paxos_version(),
	       (unsigned)paxos_wire_format_version());
}

static int parse_args(struct replica *r, int argc, char **argv, bool *acceptor, bool *proposer)
{
	static const struct option options[] = {{"config", required_argument, NULL, 'c'},
						{"kvstore", required_argument, NULL, 'k'},
						{"id", required_argument, NULL, 'i'},
						{"dir", required_argument, NULL, 'd'},
						{"acceptor", no_argument, NULL, 'A'},
						{"proposer", no_argument, NULL, 'P'},
						{"help", no_argument, NULL, 'h'},
						{"version", no_argument, NULL, 'V'},
						{NULL, 0, NULL, 0}};
	const char *pconf = NULL, *kconf = NULL, *id = NULL;
	char err[PATH_MAX + 256], *end;
	int opt;
	while ((opt = getopt_long(argc, argv, "c:k:i:d:h", options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			pconf = optarg;
			break;
		case 'k':
			kconf = optarg;
			break;
		case 'i':
			id = optarg;
			break;
		case 'd':
			r->dir = optarg;
			break;
		case 'A':
			*acceptor = true;
			break;
		case 'P':
			*proposer = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			print_version();
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (!pconf || !kconf || !id || !r->dir || optind != argc) {
		usage(stderr);
		return -1;
	}
	r->pcfg = paxos_config_new();
	kv_config_defaults(&r->kcfg);
	if (!r->pcfg || paxos_config_load(r->pcfg, pconf, err, sizeof(err)) != PAXOS_OK ||
	    kv_config_load(&r->kcfg, kconf, err, sizeof(err)) != 0) {
		fprintf(stderr, PROGRAM ": %s\n", err);
		return -1;
	}
	errno = 0;
	unsigned long v = strtoul(id, &end, 10);
	if (errno || end == id || *end || id[0] == '-' || v >= r->kcfg.replicas) {
		fprintf(stderr,
			PROGRAM ": id '%s' must be a number from 0 to %u (replicas in %s)\n", id,
			r->kcfg.replicas - 1, kconf);
		return -1;
	}
	r->id = (uint32_t)v;
	return 0;
}

/* The newest snapshot if there is one; the learner starts right after it. */
static int load_state(struct replica *r)
{
	char err[PATH_MAX + 256];
	if (mkdir(r->dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, PROGRAM " %u: %s: %s\n", r->id, r->dir, strerror(errno));
		return -1;
	}
	r->store = kv_store_load(r->dir, r->kcfg.replicas, &r->snapshot_iid, err, sizeof(err));
	if (!r->store && err[0]) {
		fprintf(stderr, PROGRAM " %u: %s\n", r->id, err);
		return -1;
	}
	if (r->store)
		fprintf(stderr,
			PROGRAM " %u: loaded %s/snapshot: instances up to %llu, %zu keys, %llu "
				"commands; learning from instance %llu\n",
			r->id, r->dir, (unsigned long long)r->snapshot_iid, kv_store_keys(r->store),
			(unsigned long long)kv_store_commands(r->store),
			(unsigned long long)r->snapshot_iid + 1);
	else if ((r->store = kv_store_new(r->kcfg.replicas)) != NULL)
		fprintf(stderr, PROGRAM " %u: no snapshot in %s: learning from instance 1\n", r->id,
			r->dir);
	else
		return -1;
	kv_store_set_client_expiry(r->store, r->kcfg.client_expiry);
	r->last_iid = r->snapshot_iid;
	return 0;
}

/* The roles, in the order the node wants: learner start and trimmed callback first. */
static int host_roles(struct replica *r, bool acceptor, bool proposer)
{
	char err[PATH_MAX + 256];
	struct paxos_node *n = r->node;
	if (paxos_node_set_learner_start(n, r->last_iid + 1) != PAXOS_OK)
		goto fail;
	paxos_node_on_trimmed(n, trimmed, r);
	if (acceptor) {
		struct paxos_storage *st =
		    paxos_storage_open(r->pcfg, r->id, false, err, sizeof(err));
		if (!st) {
			fprintf(stderr, PROGRAM " %u: acceptor: %s\n", r->id, err);
			return -1;
		}
		if (paxos_node_add_acceptor(n, r->id, st) != PAXOS_OK)
			goto fail;
		char storage[16];
		paxos_config_get(r->pcfg, "storage", storage, sizeof(storage));
		fprintf(stderr, PROGRAM " %u: acceptor %u, storage %s\n", r->id, r->id, storage);
	}
	if (proposer && paxos_node_add_proposer(n, r->id) != PAXOS_OK)
		goto fail;
	if (paxos_node_add_learner(n, deliver, r) != PAXOS_OK)
		goto fail;
	return 0;
fail:
	fprintf(stderr, PROGRAM " %u: %s\n", r->id, paxos_node_error(n));
	return -1;
}

int main(int argc, char **argv)
{
	static struct replica r; /* big buffer inside: not on the stack */
	bool acceptor = false, proposer = false;
	char err[512];
	r.reply_fd = -1;
	/* Until the loop handles it, a dump request must not kill the replica. */
	signal(SIGUSR1, SIG_IGN);
	if (parse_args(&r, argc, argv, &acceptor, &proposer) != 0)
		return 2;
	if (load_state(&r) != 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	r.base = event_base_new();
	if (!r.base)
		return 1;
	paxos_set_log(paxos_log_stderr, NULL); /* the library's lines, on stderr */
	r.node = paxos_node_new(r.base, r.pcfg, err, sizeof(err));
	if (!r.node) {
		fprintf(stderr, PROGRAM " %u: %s\n", r.id, err);
		return 1;
	}
	r.reply_fd = kv_net_sender(kv_multicast_interface(r.pcfg), kv_multicast_ttl(r.pcfg), err,
				   sizeof(err));
	if (r.reply_fd < 0) {
		fprintf(stderr, PROGRAM " %u: reply group: %s\n", r.id, err);
		return 1;
	}
	if (host_roles(&r, acceptor, proposer) != 0)
		return 1;

	struct timeval every = {r.kcfg.resubmit_ms / 1000, (r.kcfg.resubmit_ms % 1000) * 1000};
	struct event *timer = event_new(r.base, -1, EV_PERSIST, on_timer, &r);
	struct event *sigs[3] = {evsignal_new(r.base, SIGINT, on_signal, &r),
				 evsignal_new(r.base, SIGTERM, on_signal, &r),
				 evsignal_new(r.base, SIGUSR1, on_signal, &r)};
	if (!timer || event_add(timer, &every) != 0)
		return 1;
	for (int i = 0; i < 3; i++)
		if (!sigs[i] || event_add(sigs[i], NULL) != 0)
			return 1;
	event_base_dispatch(r.base);

	int code = paxos_node_failed(r.node) ? 1 : r.exit_code;
	fprintf(stderr, PROGRAM " %u: stopped at instance %llu: %llu commands applied, %zu keys\n",
		r.id, (unsigned long long)r.last_iid,
		(unsigned long long)kv_store_commands(r.store), kv_store_keys(r.store));
	paxos_node_report_counters(r.node);
	for (int i = 0; i < 3; i++)
		event_free(sigs[i]);
	event_free(timer);
	paxos_node_free(r.node);
	close(r.reply_fd);
	kv_store_free(r.store);
	event_base_free(r.base);
	paxos_config_free(r.pcfg);
	return code;
}
