/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kvstore-load: a benchmark aid. Many closed-loop clients in one process, each with one put in
 * flight, submitted to its key's partition through a libpaxos session of its own there
 * (paxos/session.h); a client submits its next put when the reply to the last one came. One
 * process and one reply socket hear every reply once, where as many kvstore-cli processes
 * would each hear all of them. The session sends a put again until the process's learner sees
 * it chosen, at once on a leader change (the replicas' notice too). At the end no new put is
 * submitted until every submission completed (10 s at most). Prints the puts answered and
 * their rate, in all and per partition, the puts sent again on a notice (told), each
 * partition's slowest put, then the submissions, their completions (chosen or timed out) and
 * any completed twice or out of order: each must complete once.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <paxos/paxos.h>

#include "command.h"
#include "kvconf.h"
#include "net.h"
#include "reply_conf.h"
#include "shard.h"

#define PROGRAM "kvstore-load"
#define MAX_COMMAND 2048

struct client {
	uint64_t seq;       /* puts made, for the keys */
	uint64_t put_seq;   /* the put in flight: its number in its partition's session */
	uint32_t partition; /* of the put in flight */
	bool waiting;       /* a put is in flight (not answered) */
	bool held;          /* its submission was refused (the leader is full): again at a tick */
	struct paxos_session **sessions; /* per partition, made when first needed */
	uint64_t *completed;             /* per partition: the last sequence number completed */
	double first;                    /* when it was first submitted */
	double sent;                     /* when it was last submitted */
	size_t len;
	uint8_t cmd[MAX_COMMAND];
};

struct load {
	struct paxos_config *pcfg;
	struct kv_config kcfg;
	struct event_base *base;
	uint32_t partitions;
	struct paxos_node *nodes[64];
	struct client *clients;
	uint32_t nclients, size, keys;
	uint64_t first_id; /* client i has id first_id + i */
	double seconds, start, end;
	uint64_t done, resubmits, per_partition[64];
	uint64_t submitted, completed, timed_out, twice; /* sessions' submissions, completions */
	bool draining;
	uint64_t told;              /* puts submitted again on a new-leader notice */
	double slowest_ms[64];      /* per partition, the longest a put waited for its answer */
	struct done_arg *done_args; /* per client and partition */
	char value[MAX_COMMAND];
};

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Client ids: first_id + 64 * client + partition, one session each. */
static void on_done(void *arg, uint64_t seq, int status, paxos_iid iid);

struct done_arg {
	struct load *l;
	uint32_t client, partition;
};

static struct paxos_session *session_of(struct load *l, uint32_t i, uint32_t p)
{
	struct client *c = &l->clients[i];
	if (c->sessions[p])
		return c->sessions[p];
	struct paxos_session_options o;
	paxos_session_options_default(&o);
	o.client = l->first_id + 64 * (uint64_t)i + p;
	o.window = 4; /* the next put may go before the learner saw the last one chosen */
	o.resubmit_ms = l->kcfg.resubmit_ms;
	c->sessions[p] = paxos_session_new(l->nodes[p], &o);
	if (!c->sessions[p])
		fprintf(stderr, PROGRAM ": %s\n", paxos_node_error(l->nodes[p]));
	return c->sessions[p];
}

static void submit(struct load *l, uint32_t i)
{
	struct client *c = &l->clients[i];
	struct paxos_session *s = session_of(l, i, c->partition);
	c->sent = now();
	c->held = false;
	if (!s)
		return;
	int rc = paxos_session_submit(s, c->cmd, c->len, on_done,
				      &l->done_args[(size_t)i * l->partitions + c->partition],
				      &c->put_seq);
	if (rc == PAXOS_OK) {
		l->submitted++;
		return;
	}
	/* A full leader or window (PAXOS_E_FULL): again at the next tick. */
	c->held = true;
	if (rc != PAXOS_E_FULL)
		fprintf(stderr, PROGRAM ": %s\n", paxos_node_error(l->nodes[c->partition]));
}

static void on_done(void *arg, uint64_t seq, int status, paxos_iid iid)
{
	(void)iid;
	struct done_arg *d = arg;
	struct load *l = d->l;
	uint64_t *last = &l->clients[d->client].completed[d->partition];
	if (seq != *last + 1)
		l->twice++; /* completed twice, or out of order: never */
	if (seq > *last)
		*last = seq;
	l->completed++;
	if (status != PAXOS_OK)
		l->timed_out++;
	if (l->draining && l->completed >= l->submitted)
		event_base_loopbreak(l->base);
}

/* Client i's next put: one of its `keys` keys, in turn. */
static void next(struct load *l, uint32_t i)
{
	struct client *c = &l->clients[i];
	char key[48];
	int klen =
	    snprintf(key, sizeof(key), "k%u-%llu", i, (unsigned long long)(c->seq % l->keys));
	struct kv_command cmd = {.op = KV_PUT, .seq = ++c->seq}; /* the session names it */
	cmd.arg[0] = (struct kv_bytes){(const uint8_t *)key, (uint16_t)klen};
	cmd.arg[1] = (struct kv_bytes){(const uint8_t *)l->value, (uint16_t)l->size};
	c->partition = kv_key_partition(cmd.arg[0].data, cmd.arg[0].len, l->partitions);
	c->len = kv_command_encode(&cmd, c->cmd, sizeof(c->cmd));
	c->waiting = true;
	submit(l, i);
	c->first = c->sent;
}

/* Partition p has a new leader, which may lack the puts in flight there: submitted again
 * (but those just submitted, on another replica's notice of the same change). */
static void resubmit_partition(struct load *l, uint64_t p)
{
	double t = now();
	for (uint32_t i = 0; i < l->nclients; i++) {
		struct client *c = &l->clients[i];
		if (c->partition == p && c->sessions[p] && t - c->sent >= KV_NOTICE_GUARD_S &&
		    paxos_session_in_flight(c->sessions[p])) {
			l->told++;
			c->sent = t;
			paxos_session_resend(c->sessions[p]);
		}
	}
}

static void on_reply(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct load *l = arg;
	uint8_t buf[KV_REPLY_HEADER + MAX_COMMAND];
	ssize_t n;
	while ((n = recv(fd, buf, sizeof(buf), 0)) >= 0) {
		struct kv_reply r;
		if (kv_reply_decode(buf, (size_t)n, &r) != 0)
			continue;
		if (r.status == KV_NEW_LEADER) {
			resubmit_partition(l, r.seq);
			continue;
		}
		if (r.client - l->first_id >= 64 * (uint64_t)l->nclients)
			continue;
		uint32_t i = (uint32_t)((r.client - l->first_id) / 64);
		struct client *c = &l->clients[i];
		if (!c->waiting || c->held || (r.client - l->first_id) % 64 != c->partition ||
		    r.seq != c->put_seq)
			continue; /* another replica's answer to a put already answered */
		c->waiting = false;
		if (r.status != KV_OK)
			fprintf(stderr, PROGRAM ": client %u: %s\n", i, kv_status_name(r.status));
		l->done++;
		l->per_partition[c->partition]++;
		double waited_ms = (now() - c->first) * 1e3;
		if (waited_ms > l->slowest_ms[c->partition])
			l->slowest_ms[c->partition] = waited_ms;
		if (!l->draining)
			next(l, i);
	}
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct load *l = arg;
	double t = now();
	if (!l->draining && t - l->start >= l->seconds) {
		l->draining = true; /* no new put; the submissions made complete */
		l->end = t;
	}
	if (l->draining && (l->completed >= l->submitted || t - l->end >= 10)) {
		event_base_loopbreak(l->base);
		return;
	}
	for (uint32_t i = 0; i < l->nclients; i++)
		if (l->clients[i].held && !l->draining) {
			l->resubmits++;
			submit(l, i);
		}
}

/* SIGTERM or SIGINT: the end, as if the seconds were over. */
static void on_stop(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct load *l = arg;
	if (!l->draining) {
		l->draining = true;
		l->end = now();
	}
}

static int parse_u32(const char *what, const char *text, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || v < min || v > max) {
		fprintf(stderr, PROGRAM ": %s wants a number from %u to %u\n", what, min, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: " PROGRAM " -c PAXOS_CONF -k KVSTORE_CONF [--clients N] [--seconds S] "
		"[--size B] [--keys K]\n"
		"Benchmark aid: N closed-loop clients (default 64), each with one put of a B-byte\n"
		"value (default 16) in flight on one of its K keys (default 16), for S seconds\n"
		"(default 5; SIGTERM ends them early). Prints: clients, seconds, puts answered, "
		"puts/s, puts held back by\n"
		"a full leader and submitted again, the puts answered per partition, and the\n"
		"sessions' submissions and completions.\n");
}

static int parse_args(struct load *l, int argc, char **argv)
{
	static const struct option options[] = {{"config", required_argument, NULL, 'c'},
						{"kvstore", required_argument, NULL, 'k'},
						{"clients", required_argument, NULL, 'n'},
						{"seconds", required_argument, NULL, 's'},
						{"size", required_argument, NULL, 'b'},
						{"keys", required_argument, NULL, 'K'},
						{"help", no_argument, NULL, 'h'},
						{"version", no_argument, NULL, 'V'},
						{NULL, 0, NULL, 0}};
	const char *pconf = NULL, *kconf = NULL;
	uint32_t seconds = 5;
	char err[512];
	int opt;
	l->nclients = 64;
	l->size = 16;
	l->keys = 16;
	while ((opt = getopt_long(argc, argv, "c:k:h", options, NULL)) != -1) {
		int rc = 0;
		if (opt == 'c')
			pconf = optarg;
		else if (opt == 'k')
			kconf = optarg;
		else if (opt == 'n')
			rc = parse_u32("--clients", optarg, 1, 100000, &l->nclients);
		else if (opt == 's')
			rc = parse_u32("--seconds", optarg, 1, 3600, &seconds);
		else if (opt == 'b')
			rc = parse_u32("--size", optarg, 0, 1024, &l->size);
		else if (opt == 'K')
			rc = parse_u32("--keys", optarg, 1, 1000000, &l->keys);
		else if (opt == 'h') {
			usage(stdout);
			exit(0);
		} else if (opt == 'V') {
			printf(PROGRAM " (libpaxos) %s, wire version %u\n", paxos_version(),
			       (unsigned)paxos_wire_format_version());
			exit(0);
		} else {
			usage(stderr);
			return -1;
		}
		if (rc)
			return -1;
	}
	if (!pconf || !kconf || optind != argc) {
		usage(stderr);
		return -1;
	}
	l->seconds = seconds;
	l->pcfg = paxos_config_new();
	kv_config_defaults(&l->kcfg);
	if (!l->pcfg || paxos_config_load(l->pcfg, pconf, err, sizeof(err)) != PAXOS_OK ||
	    kv_config_load(&l->kcfg, kconf, err, sizeof(err)) != 0 ||
	    paxos_config_set(l->pcfg, "counters-interval-ms", "0", err, sizeof(err)) != PAXOS_OK) {
		fprintf(stderr, PROGRAM ": %s\n", l->pcfg ? err : "out of memory");
		return -1;
	}
	l->partitions = paxos_config_partitions(l->pcfg);
	return 0;
}

/* The learner sees the log only to complete the sessions' submissions. */
static void ignore_value(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)arg;
	(void)iid;
	(void)position;
	(void)v;
}

/* A node per partition, with a learner that starts at the current instance. */
static int open_nodes(struct load *l)
{
	char err[512] = "out of memory";
	struct paxos_config *part = paxos_config_new();
	int rc = part ? 0 : -1;
	for (uint32_t p = 0; rc == 0 && p < l->partitions; p++) {
		if (paxos_config_partition(l->pcfg, p, part) != PAXOS_OK ||
		    paxos_config_set(part, "learner-start", "current", err, sizeof(err)) !=
			PAXOS_OK ||
		    !(l->nodes[p] = paxos_node_new(l->base, part, err, sizeof(err)))) {
			fprintf(stderr, PROGRAM ": partition %u: %s\n", p, err);
			rc = -1;
		} else if (paxos_node_add_learner(l->nodes[p], ignore_value, NULL) != PAXOS_OK) {
			fprintf(stderr, PROGRAM ": partition %u: %s\n", p,
				paxos_node_error(l->nodes[p]));
			rc = -1;
		}
	}
	paxos_config_free(part);
	for (uint32_t i = 0; rc == 0 && i < l->nclients; i++) {
		struct client *c = &l->clients[i];
		c->sessions = calloc(l->partitions, sizeof(*c->sessions));
		c->completed = calloc(l->partitions, sizeof(*c->completed));
		if (!c->sessions || !c->completed)
			rc = -1;
		for (uint32_t p = 0; rc == 0 && p < l->partitions; p++)
			l->done_args[(size_t)i * l->partitions + p] =
			    (struct done_arg){.l = l, .client = i, .partition = p};
	}
	return rc;
}

int main(int argc, char **argv)
{
	static struct load l;
	char err[512];
	if (parse_args(&l, argc, argv) != 0)
		return 2;
	memset(l.value, 'v', sizeof(l.value));
	if (getrandom(&l.first_id, sizeof(l.first_id), 0) != (ssize_t)sizeof(l.first_id))
		l.first_id = (uint64_t)getpid() << 32;
	l.first_id &= ~(1ull << 63); /* no wrap past the last client */
	l.clients = calloc(l.nclients, sizeof(*l.clients));
	l.done_args = calloc((size_t)l.nclients * l.partitions, sizeof(*l.done_args));
	l.base = event_base_new();
	paxos_set_log(paxos_log_stderr, NULL);
	if (!l.clients || !l.done_args || !l.base || open_nodes(&l) != 0)
		return 1;
	int fd =
	    kv_net_receiver(&l.kcfg.reply_group, kv_multicast_interface(l.pcfg), err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, PROGRAM ": reply group: %s\n", err);
		return 1;
	}
	int rcvbuf = 8 << 20; /* a burst of replies must not overflow it (the kernel may cap it) */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	struct event *reply_ev = event_new(l.base, fd, EV_READ | EV_PERSIST, on_reply, &l);
	struct event *tick = event_new(l.base, -1, EV_PERSIST, on_tick, &l);
	struct event *term = evsignal_new(l.base, SIGTERM, on_stop, &l);
	struct event *intr = evsignal_new(l.base, SIGINT, on_stop, &l);
	struct timeval every = {0, 100000};
	if (!reply_ev || !tick || !term || !intr || event_add(reply_ev, NULL) != 0 ||
	    event_add(tick, &every) != 0 || event_add(term, NULL) != 0 ||
	    event_add(intr, NULL) != 0)
		return 1;
	l.start = now();
	for (uint32_t i = 0; i < l.nclients; i++)
		next(&l, i);
	event_base_dispatch(l.base);
	double elapsed = (l.end ? l.end : now()) - l.start;
	printf("clients %u seconds %.2f puts %llu per_s %.0f resubmits %llu told %llu", l.nclients,
	       elapsed, (unsigned long long)l.done, (double)l.done / elapsed,
	       (unsigned long long)l.resubmits, (unsigned long long)l.told);
	for (uint32_t p = 0; p < l.partitions; p++)
		printf(" partition%u %llu", p, (unsigned long long)l.per_partition[p]);
	for (uint32_t p = 0; p < l.partitions; p++)
		printf(" slowest_ms%u %.1f", p, l.slowest_ms[p]);
	printf(" submitted %llu completed %llu timed_out %llu completed_twice %llu\n",
	       (unsigned long long)l.submitted, (unsigned long long)l.completed,
	       (unsigned long long)l.timed_out, (unsigned long long)l.twice);
	event_free(reply_ev);
	event_free(tick);
	event_free(term);
	event_free(intr);
	close(fd);
	for (uint32_t p = 0; p < l.partitions; p++)
		paxos_node_free(l.nodes[p]); /* and the sessions on it */
	event_base_free(l.base);
	paxos_config_free(l.pcfg);
	for (uint32_t i = 0; i < l.nclients; i++) {
		free(l.clients[i].sessions);
		free(l.clients[i].completed);
	}
	free(l.done_args);
	free(l.clients);
	return l.done ? 0 : 1;
}
