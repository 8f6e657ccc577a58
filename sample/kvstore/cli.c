/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kvstore-cli: runs commands against the replicated store. Each command is submitted through
 * the client API (paxos_node_submit) with this client's id and the next sequence number; the
 * first reply for it, from any replica, is its result. A command not answered within
 * resubmit-ms is submitted again with the same number: the replicas apply it once; so is one
 * whose partition the replicas say has a new leader (command.h), at once. With
 * paxos.conf "partitions N", a command goes to the partition of its key (shard.h), through a
 * node for that partition's log; a copy between keys of two partitions is refused here.
 */
#include <errno.h>
#include <getopt.h>
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

#define PROGRAM "kvstore-cli"
#define MAX_LINE 4096

enum { EXIT_OK = 0, EXIT_NOT_OK = 1, EXIT_USAGE = 2, EXIT_TIMEOUT = 3 };

struct cli {
	struct paxos_config *pcfg;
	struct kv_config kcfg;
	struct event_base *base;
	uint32_t partitions;
	struct paxos_node *nodes[64]; /* per partition, made when first needed */
	uint32_t partition;           /* the current command's */
	struct event *reply_ev, *timer;
	int reply_fd;
	uint64_t client, seq;
	int copies;           /* submissions per command (--twice: 2) */
	bool where;           /* --partition-of: print the keys' partitions, submit nothing */
	double timeout;       /* seconds a command may stay unanswered */
	struct timespec sent; /* when the current command was first submitted */
	struct timespec last; /* and when last */
	FILE *script;         /* batch mode: one command per line */
	char **args;          /* single mode: the command, argument vector */
	int nargs;
	int exit_code;
	enum kv_op op;      /* the current command */
	uint8_t cmd[65536]; /* encoded */
	size_t cmd_len;
	char line[MAX_LINE];
};

static void finish(struct cli *c, int code)
{
	if (code > c->exit_code)
		c->exit_code = code;
	event_base_loopbreak(c->base);
}

static double since(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

/* The node that submits to partition p; NULL after saying why. */
static struct paxos_node *node_for(struct cli *c, uint32_t p)
{
	if (c->nodes[p])
		return c->nodes[p];
	char err[512];
	struct paxos_config *part = paxos_config_new();
	if (part && paxos_config_partition(c->pcfg, p, part) == PAXOS_OK)
		c->nodes[p] = paxos_node_new(c->base, part, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "out of memory");
	paxos_config_free(part);
	if (!c->nodes[p])
		fprintf(stderr, PROGRAM ": partition %u: %s\n", p, err);
	return c->nodes[p];
}

static void submit(struct cli *c)
{
	struct paxos_node *n = node_for(c, c->partition);
	if (!n) {
		c->cmd_len = 0; /* nothing in flight: main does not wait */
		finish(c, 1);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &c->last);
	for (int i = 0; i < c->copies; i++)
		if (paxos_node_submit(n, c->cmd, c->cmd_len) != PAXOS_OK)
			fprintf(stderr, PROGRAM ": %s\n", paxos_node_error(n));
	struct timeval tv = {c->kcfg.resubmit_ms / 1000, (c->kcfg.resubmit_ms % 1000) * 1000};
	event_add(c->timer, &tv);
}

/* Encodes "op key [value [value]]" as the next command; 0, or -1 after saying why. */
static int encode(struct cli *c, int argc, char **argv)
{
	struct kv_command cmd = {.op = argc ? kv_op_parse(argv[0]) : (enum kv_op)0};
	int want = kv_op_args(cmd.op);
	if (cmd.op == KV_SNAPSHOT || !want || argc - 1 != want) {
		fprintf(stderr,
			PROGRAM ": '%s'%s: the commands are put KEY VALUE, get KEY, delete KEY, "
				"cas KEY EXPECTED NEW, copy FROM TO\n",
			argc ? argv[0] : "",
			want && cmd.op != KV_SNAPSHOT ? " with a wrong number of arguments"
						      : " is not a command");
		return -1;
	}
	for (int i = 0; i < want; i++) {
		size_t len = strlen(argv[i + 1]);
		if (len > KV_MAX_FIELD) {
			fprintf(stderr, PROGRAM ": '%.20s...' is longer than %u bytes\n",
				argv[i + 1], KV_MAX_FIELD);
			return -1;
		}
		cmd.arg[i] = (struct kv_bytes){(const uint8_t *)argv[i + 1], (uint16_t)len};
	}
	uint32_t other = 0;
	int p = kv_command_partition(&cmd, c->partitions, &other);
	if (p < 0) {
		uint32_t first = kv_key_partition(cmd.arg[0].data, cmd.arg[0].len, c->partitions);
		fprintf(stderr,
			PROGRAM
			": %s %s %s: refused: the keys are in partitions %u and %u (of %u), "
			"and a command may not span partitions: each partition orders its "
			"own commands, and there is no order across them\n",
			argv[0], argv[1], argv[2], first, other, c->partitions);
		return -1;
	}
	c->partition = (uint32_t)p;
	c->op = cmd.op;
	cmd.client = c->client;
	cmd.seq = ++c->seq;
	size_t cap = paxos_config_max_value(c->pcfg);
	c->cmd_len = kv_command_encode(&cmd, c->cmd, cap < sizeof(c->cmd) ? cap : sizeof(c->cmd));
	if (!c->cmd_len) {
		fprintf(stderr, PROGRAM ": command longer than the %zu bytes a value may have\n",
			cap);
		return -1;
	}
	return 0;
}

/* Splits a script line on blanks; returns the word count (0 for blank lines and comments). */
static int split(char *line, char **words, int max)
{
	int n = 0;
	line[strcspn(line, "#\r\n")] = 0;
	for (char *w = strtok(line, " \t"); w; w = strtok(NULL, " \t"))
		if (n < max + 1)
			words[n++] = w;
	return n;
}

/* Submits the next command, or stops when there is none. */
static void next_command(struct cli *c)
{
	if (c->args) {
		if (c->seq > 0) {
			finish(c, EXIT_OK);
			return;
		}
		if (encode(c, c->nargs, c->args) != 0) {
			finish(c, EXIT_USAGE);
			return;
		}
	} else {
		char *words[KV_MAX_ARGS + 2];
		int n = 0;
		while (n == 0) {
			if (!fgets(c->line, sizeof(c->line), c->script)) {
				finish(c, EXIT_OK);
				return;
			}
			n = split(c->line, words, KV_MAX_ARGS + 1);
		}
		if (encode(c, n, words) != 0) {
			finish(c, EXIT_USAGE);
			return;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &c->sent);
	submit(c);
}

static void print_result(struct cli *c, const struct kv_reply *r)
{
	fputs(kv_status_name(r->status), stdout);
	if (r->value.len || (r->status == KV_OK && c->op == KV_GET)) {
		fputc(' ', stdout);
		fwrite(r->value.data, 1, r->value.len, stdout);
	}
	fputc('\n', stdout);
	fflush(stdout);
	if (r->status != KV_OK && c->args)
		c->exit_code = EXIT_NOT_OK;
}

static void on_reply(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct cli *c = arg;
	uint8_t buf[KV_REPLY_HEADER + KV_MAX_FIELD];
	ssize_t n;
	while ((n = recv(fd, buf, sizeof(buf), 0)) >= 0) {
		struct kv_reply r;
		if (kv_reply_decode(buf, (size_t)n, &r) != 0)
			continue;
		/* The current command's partition has a new leader, which may lack it. */
		if (r.status == KV_NEW_LEADER) {
			if (c->cmd_len && r.seq == c->partition &&
			    since(&c->last) >= KV_NOTICE_GUARD_S)
				submit(c);
			continue;
		}
		/* Every client on the host hears every reply: keep ours, for the current command.
		 */
		if (r.client != c->client || r.seq != c->seq || !c->cmd_len)
			continue;
		c->cmd_len = 0;
		event_del(c->timer);
		print_result(c, &r);
		next_command(c);
		if (!c->cmd_len)
			return; /* finished */
	}
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct cli *c = arg;
	if (since(&c->sent) >= c->timeout) {
		fprintf(stderr, PROGRAM ": no reply within %.1f s: are the replicas running?\n",
			c->timeout);
		finish(c, EXIT_TIMEOUT);
		return;
	}
	submit(c); /* same client id and sequence number: applied at most once */
}

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: " PROGRAM " -c PAXOS_CONF -k KVSTORE_CONF [options] COMMAND\n"
	    "       " PROGRAM " -c PAXOS_CONF -k KVSTORE_CONF [options] -f FILE\n"
	    "Commands: put KEY VALUE | get KEY | delete KEY | cas KEY EXPECTED NEW |\n"
	    "          copy FROM TO (FROM's value to key TO)\n"
	    "Prints one line per command: OK [VALUE], NOT_FOUND, FAILED CURRENT (cas), or\n"
	    "WRONG_PARTITION / CROSS_PARTITION when the replicas count partitions otherwise.\n"
	    "With paxos.conf \"partitions N\" each command goes to its key's partition; a copy\n"
	    "between keys of two partitions is refused (exit status 2).\n"
	    "  -c, --config FILE    cluster configuration (paxos.conf)\n"
	    "  -k, --kvstore FILE   kvstore configuration (kvstore.conf)\n"
	    "  -f, --file FILE      run the commands in FILE, one per line ('-': stdin), in\n"
	    "                       order, each after the previous one's reply\n"
	    "      --timeout SEC    give up on a command unanswered this long (default 10)\n"
	    "      --twice          submit every command twice (shows exactly-once)\n"
	    "      --partition-of KEY...  print the partition of each KEY, one a line, and\n"
	    "                       exit (nothing is submitted)\n"
	    "  -h, --help           this text\n"
	    "      --version        the library's version and wire version\n"
	    "Exit status: 0 done, 1 NOT_FOUND or FAILED (single command), 2 usage, 3 timeout.\n");
}

/* What --version says: the libpaxos this program runs with. */
static void print_version(void)
{
	printf(PROGRAM " (libpaxos) %s, wire version %u\n", paxos_version(),
	       (unsigned)paxos_wire_format_version());
}

static int parse_args(struct cli *c, int argc, char **argv)
{
	static const struct option options[] = {{"config", required_argument, NULL, 'c'},
						{"kvstore", required_argument, NULL, 'k'},
						{"file", required_argument, NULL, 'f'},
						{"timeout", required_argument, NULL, 'T'},
						{"twice", no_argument, NULL, '2'},
						{"partition-of", no_argument, NULL, 'W'},
						{"help", no_argument, NULL, 'h'},
						{"version", no_argument, NULL, 'V'},
						{NULL, 0, NULL, 0}};
	const char *pconf = NULL, *kconf = NULL, *file = NULL;
	char err[512], *end;
	int opt;
	c->copies = 1;
	c->timeout = 10;
	/* '+': options end at the command, so values may start with '-'. */
	while ((opt = getopt_long(argc, argv, "+c:k:f:h", options, NULL)) != -1) {
		if (opt == 'c')
			pconf = optarg;
		else if (opt == 'k')
			kconf = optarg;
		else if (opt == 'f')
			file = optarg;
		else if (opt == '2')
			c->copies = 2;
		else if (opt == 'W')
			c->where = true;
		else if (opt == 'T') {
			c->timeout = strtod(optarg, &end);
			if (end == optarg || *end || !(c->timeout > 0)) {
				fprintf(stderr, PROGRAM ": --timeout wants seconds above 0\n");
				return -1;
			}
		} else if (opt == 'h') {
			usage(stdout);
			exit(0);
		} else if (opt == 'V') {
			print_version();
			exit(0);
		} else {
			usage(stderr);
			return -1;
		}
	}
	if (!pconf || !kconf || (file != NULL) == (optind < argc) || (c->where && file)) {
		usage(stderr);
		return -1;
	}
	c->pcfg = paxos_config_new();
	kv_config_defaults(&c->kcfg);
	if (!c->pcfg || paxos_config_load(c->pcfg, pconf, err, sizeof(err)) != PAXOS_OK ||
	    kv_config_load(&c->kcfg, kconf, err, sizeof(err)) != 0 ||
	    /* a client has no counters worth a line */
	    paxos_config_set(c->pcfg, "counters-interval-ms", "0", err, sizeof(err)) != PAXOS_OK) {
		fprintf(stderr, PROGRAM ": %s\n", c->pcfg ? err : "out of memory");
		return -1;
	}
	if (file) {
		c->script = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
		if (!c->script) {
			fprintf(stderr, PROGRAM ": %s: %s\n", file, strerror(errno));
			return -1;
		}
	} else {
		c->args = argv + optind;
		c->nargs = argc - optind;
	}
	return 0;
}

/* A random id, so that clients need no coordination; sequence numbers start at 1. */
static uint64_t new_client_id(void)
{
	uint64_t id = 0;
	if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id)) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		id = (uint64_t)t.tv_sec * 1000000007u ^ (uint64_t)t.tv_nsec ^
		     (uint64_t)getpid() << 40;
	}
	return id;
}

int main(int argc, char **argv)
{
	static struct cli c; /* big buffers inside: not on the stack */
	char err[512];
	if (parse_args(&c, argc, argv) != 0)
		return EXIT_USAGE;
	if (c.where) {
		uint32_t n = paxos_config_partitions(c.pcfg);
		for (int i = 0; i < c.nargs; i++)
			printf("%u\n",
			       kv_key_partition((const uint8_t *)c.args[i], strlen(c.args[i]), n));
		paxos_config_free(c.pcfg);
		return EXIT_OK;
	}
	c.client = new_client_id();
	c.base = event_base_new();
	paxos_set_log(paxos_log_stderr, NULL); /* the library's lines, on stderr */
	if (!c.base) {
		fprintf(stderr, PROGRAM ": event_base_new failed\n");
		return 1;
	}
	c.partitions = paxos_config_partitions(c.pcfg);
	/* Listen before the first submit, so that no reply can come too early. */
	c.reply_fd =
	    kv_net_receiver(&c.kcfg.reply_group, kv_multicast_interface(c.pcfg), err, sizeof(err));
	if (c.reply_fd < 0) {
		fprintf(stderr, PROGRAM ": reply group: %s\n", err);
		return 1;
	}
	c.reply_ev = event_new(c.base, c.reply_fd, EV_READ | EV_PERSIST, on_reply, &c);
	c.timer = event_new(c.base, -1, 0, on_timer, &c);
	if (!c.reply_ev || !c.timer || event_add(c.reply_ev, NULL) != 0)
		return 1;
	next_command(&c);
	if (c.cmd_len)
		event_base_dispatch(c.base);
	event_free(c.reply_ev);
	event_free(c.timer);
	close(c.reply_fd);
	for (uint32_t p = 0; p < c.partitions; p++)
		paxos_node_free(c.nodes[p]); /* sends what is still buffered */
	event_base_free(c.base);
	paxos_config_free(c.pcfg);
	if (c.script && c.script != stdin)
		fclose(c.script);
	return c.exit_code;
}
