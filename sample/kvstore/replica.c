/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kvstore-replica: one replica of the key-value store. The store is sharded over the
 * partitions of paxos.conf (shard.h), and each partition runs on a thread of its own: its own
 * libevent loop and libpaxos node for that partition's log (a learner, and with --acceptor and
 * --proposer the acceptor and proposer with this id), its own store shard and snapshots. Each
 * applies its partition's delivered commands in instance order, multicasts each result on the
 * reply group, takes snapshots and tells its acceptors how far they may trim. The clients
 * submit through libpaxos sessions: the node applies each (client, sequence number) once and
 * in order, its session table goes into every snapshot. With --local-reads (kvstore-cli) a
 * replica answers a get from its own table behind a read barrier (paxos_node_barrier), on
 * its read port (kvstore.conf read-port). Snapshots name the log they are of: when the
 * acceptors begin a new log (a whole memory cluster restarted), a shard empties its store and
 * session table and applies the new log from instance 1. The main thread
 * only waits for signals and passes them on. With one partition this is one such thread and
 * the files are those of an unpartitioned store.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>
#include <paxos/storage_backends.h>
#include <paxos/paxos.h>

#include "burn.h"
#include "command.h"
#include "kvconf.h"
#include "net.h"
#include "reply_conf.h"
#include "store.h"
#include "transfer.h"
#include "replica_shard.h"

#define PROGRAM "kvstore-replica"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: " PROGRAM " -c PAXOS_CONF -k KVSTORE_CONF -i ID -d DIR [--acceptor] "
	    "[--proposer] [--burn-us US | --burn-rounds N]\n"
	    "A replica of the key-value store; it keeps its snapshots in DIR (partition P of\n"
	    "paxos.conf's \"partitions\" in DIR/partition-P, partition 0 in DIR itself).\n"
	    "  -c, --config FILE    cluster configuration (paxos.conf)\n"
	    "  -k, --kvstore FILE   kvstore configuration (kvstore.conf)\n"
	    "  -i, --id ID          replica id, 0..replicas-1 (also the acceptor and proposer id)\n"
	    "  -d, --dir DIR        where snapshots go (created if missing)\n"
	    "      --acceptor       also host acceptor ID, with the storage of paxos.conf\n"
	    "      --proposer       also host proposer ID\n"
	    "      --burn-us US     benchmark aid: spend about US microseconds of CPU on every\n"
	    "                       applied command (a fixed number of hash rounds, measured at\n"
	    "                       start); changes no state\n"
	    "      --burn-rounds N  the same with N rounds, as the start line of --burn-us gives:\n"
	    "                       the same work in every run\n"
	    "  -h, --help           this text\n"
	    "      --version        the library's version and wire version\n"
	    "Each partition runs on a thread of its own. SIGUSR1 writes each partition's state to\n"
	    "dump in its directory; SIGTERM and SIGINT snapshot and exit.\n");
}

/* What --version says: the libpaxos this program runs with. */
static void print_version(void)
{
	printf(PROGRAM " (libpaxos) %s, wire version %u\n", paxos_version(),
	       (unsigned)paxos_wire_format_version());
}

static int parse_args(struct replica *r, int argc, char **argv)
{
	static const struct option options[] = {{"config", required_argument, NULL, 'c'},
						{"kvstore", required_argument, NULL, 'k'},
						{"id", required_argument, NULL, 'i'},
						{"dir", required_argument, NULL, 'd'},
						{"acceptor", no_argument, NULL, 'A'},
						{"proposer", no_argument, NULL, 'P'},
						{"burn-us", required_argument, NULL, 'B'},
						{"burn-rounds", required_argument, NULL, 'R'},
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
			r->acceptor = true;
			break;
		case 'P':
			r->proposer = true;
			break;
		case 'B':
			r->burn_us = strtod(optarg, &end);
			if (end == optarg || *end || !(r->burn_us >= 0 && r->burn_us <= 1e6)) {
				fprintf(stderr,
					PROGRAM ": --burn-us wants microseconds, 0..1000000\n");
				return -1;
			}
			break;
		case 'R': {
			errno = 0;
			unsigned long n = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || n > 4000000000u) {
				fprintf(stderr, PROGRAM ": --burn-rounds wants 0..4000000000\n");
				return -1;
			}
			r->burn_rounds = (uint32_t)n;
			break;
		}
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
	r->partitions = paxos_config_partitions(r->pcfg);
	return 0;
}

/* DIR/partitions records how many shards the snapshots in DIR were cut into: with another
 * count every key would belong to another shard, so the replica refuses to start. One
 * partition writes no such file (DIR looks as it always did); a DIR/snapshot without it was
 * written by one partition. */
static int check_layout(const struct replica *r)
{
	char path[PATH_MAX + 16], tmp[PATH_MAX + 16];
	if (mkdir(r->dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, PROGRAM " %u: %s: %s\n", r->id, r->dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/partitions", r->dir);
	unsigned long had = 0;
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lu", &had) != 1)
			had = 0;
		fclose(f);
		if (had == 0) {
			fprintf(stderr, PROGRAM " %u: %s is damaged: it should hold a number\n",
				r->id, path);
			return -1;
		}
	} else {
		snprintf(tmp, sizeof(tmp), "%s/snapshot", r->dir);
		had = access(tmp, F_OK) == 0 ? 1 : 0;
	}
	if (had && had != r->partitions) {
		fprintf(stderr,
			PROGRAM " %u: the snapshots in %s were written with %lu partition%s, and "
				"paxos.conf now says partitions %u: keys would land in other "
				"partitions. Use the old count, or an empty directory.\n",
			r->id, r->dir, had, had == 1 ? "" : "s", r->partitions);
		return -1;
	}
	if (had || r->partitions == 1)
		return 0;
	snprintf(tmp, sizeof(tmp), "%s/partitions.tmp", r->dir);
	f = fopen(tmp, "w");
	int rc = !f;
	if (f) {
		fprintf(f, "%u\n", r->partitions);
		rc = fflush(f) != 0 || fsync(fileno(f)) != 0;
		rc |= fclose(f);
	}
	if (rc || rename(tmp, path) != 0) {
		fprintf(stderr, PROGRAM " %u: cannot write %s: %s\n", r->id, path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The shards' names, directories, configurations and control pipes, before any thread. */
static int make_shards(struct replica *r)
{
	r->shards = calloc(r->partitions, sizeof(*r->shards));
	if (!r->shards)
		return -1;
	for (uint32_t p = 0; p < r->partitions; p++) {
		struct shard *s = &r->shards[p];
		s->r = r;
		s->partition = p;
		s->reply_fd = s->read_fd = s->control[0] = s->control[1] = -1;
		if (r->partitions == 1) {
			snprintf(s->name, sizeof(s->name), PROGRAM " %u", r->id);
			snprintf(s->dir, sizeof(s->dir), "%s", r->dir);
		} else {
			snprintf(s->name, sizeof(s->name), PROGRAM " %u partition %u", r->id, p);
			if (p == 0)
				snprintf(s->dir, sizeof(s->dir), "%s", r->dir);
			else if ((size_t)snprintf(s->dir, sizeof(s->dir), "%s/partition-%u", r->dir,
						  p) >= sizeof(s->dir)) {
				fprintf(stderr, PROGRAM " %u: %s: path too long\n", r->id, r->dir);
				return -1;
			}
		}
		s->pcfg = paxos_config_new();
		if (!s->pcfg || paxos_config_partition(r->pcfg, p, s->pcfg) != PAXOS_OK ||
		    pipe2(s->control, O_CLOEXEC | O_NONBLOCK) != 0)
			return -1;
	}
	return 0;
}

static void free_shards(struct replica *r)
{
	for (uint32_t p = 0; r->shards && p < r->partitions; p++) {
		struct shard *s = &r->shards[p];
		paxos_config_free(s->pcfg);
		if (s->control[0] >= 0)
			close(s->control[0]);
		if (s->control[1] >= 0)
			close(s->control[1]);
	}
	free(r->shards);
}

/* The main thread's loop: signals in, control bytes out, until every shard ended. */
struct main_loop {
	struct replica *r;
	struct event_base *base;
	uint32_t running;
	bool stopping;
};

static void tell_all(struct replica *r, char what)
{
	for (uint32_t p = 0; p < r->partitions; p++)
		if (write(r->shards[p].control[1], &what, 1) != 1 && errno != EAGAIN)
			fprintf(stderr, PROGRAM " %u: partition %u: %s\n", r->id, p,
				strerror(errno));
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	struct main_loop *m = arg;
	if (sig == SIGUSR1) {
		tell_all(m->r, 'd');
		return;
	}
	m->stopping = true;
	tell_all(m->r, 's');
}

/* A shard ended: once one stops (an error), the replica stops whole. */
static void on_done(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct main_loop *m = arg;
	uint8_t p[64];
	ssize_t n = read(fd, p, sizeof(p));
	if (n <= 0)
		return;
	m->running = (uint32_t)n < m->running ? m->running - (uint32_t)n : 0;
	if (!m->stopping) {
		m->stopping = true;
		tell_all(m->r, 's');
	}
	if (m->running == 0)
		event_base_loopbreak(m->base);
}

/* Runs the shards, one thread each, until a signal or a shard stops them; the exit code. */
static int run(struct replica *r)
{
	struct main_loop m = {.r = r, .base = event_base_new()};
	sigset_t mask, old;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGUSR1);
	struct event *sigs[3] = {NULL, NULL, NULL}, *done = NULL;
	int code = 1;
	if (!m.base || pipe2(r->done, O_CLOEXEC) != 0)
		goto out;
	/* The handlers exist before any shard says it started; the shards' threads inherit the
	 * blocked mask, so signals reach this thread only. */
	sigs[0] = evsignal_new(m.base, SIGINT, on_signal, &m);
	sigs[1] = evsignal_new(m.base, SIGTERM, on_signal, &m);
	sigs[2] = evsignal_new(m.base, SIGUSR1, on_signal, &m);
	done = event_new(m.base, r->done[0], EV_READ | EV_PERSIST, on_done, &m);
	for (int i = 0; i < 3; i++)
		if (!sigs[i] || event_add(sigs[i], NULL) != 0)
			goto out;
	if (!done || event_add(done, NULL) != 0)
		goto out;
	pthread_sigmask(SIG_BLOCK, &mask, &old);
	for (uint32_t p = 0; p < r->partitions; p++) {
		if (pthread_create(&r->shards[p].thread, NULL, run_shard, &r->shards[p]) != 0) {
			fprintf(stderr, PROGRAM " %u: cannot start the thread of partition %u\n",
				r->id, p);
			m.stopping = true;
			tell_all(r, 's');
			break;
		}
		r->shards[p].started = true;
		m.running++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (m.running)
		event_base_dispatch(m.base);
	code = m.running == r->partitions ? 0 : 1;
	for (uint32_t p = 0; p < r->partitions; p++) {
		if (!r->shards[p].started)
			continue;
		pthread_join(r->shards[p].thread, NULL);
		if (r->shards[p].exit_code > code)
			code = r->shards[p].exit_code;
	}
out:
	for (int i = 0; i < 3; i++)
		if (sigs[i])
			event_free(sigs[i]);
	if (done)
		event_free(done);
	if (m.base)
		event_base_free(m.base);
	return code;
}

int main(int argc, char **argv)
{
	static struct replica r;
	/* Until the main loop handles it, a dump request must not kill the replica. */
	signal(SIGUSR1, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (parse_args(&r, argc, argv) != 0)
		return 2;
	if (check_layout(&r) != 0)
		return 1;
	paxos_set_log(paxos_log_stderr, NULL); /* the library's lines, on stderr */
	if (make_shards(&r) != 0) {
		fprintf(stderr, PROGRAM " %u: cannot set up %u partitions\n", r.id, r.partitions);
		return 1;
	}
	if (r.burn_us > 0)
		r.burn_rounds = kv_burn_rounds_for(r.burn_us);
	if (r.burn_us > 0)
		fprintf(stderr, PROGRAM " %u: --burn-us %.1f: %u hash rounds per applied command\n",
			r.id, r.burn_us, r.burn_rounds);
	int code = run(&r);
	free_shards(&r);
	paxos_config_free(r.pcfg);
	return code;
}
