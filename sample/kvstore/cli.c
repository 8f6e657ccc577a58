/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kvstore-cli: runs commands against the replicated store. Each command is submitted through a
 * libpaxos client session (paxos/session.h), which numbers it, sends it again until the
 * client's own learner sees it chosen (at once when a leader changes) and has the replicas
 * apply it once; the first reply for it, from any replica, is its result. With paxos.conf
 * "partitions N", a command goes to the partition of its key (shard.h), through a node (and
 * session) for that partition's log; a copy between keys of two partitions is refused here.
 * With --local-reads R, a get goes to replica R alone, which answers from its own table
 * behind a read barrier (paxos_node_barrier): no command in the log, but it sees every write
 * chosen before it asked.
 */
#include <arpa/inet.h>
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
	struct paxos_node *nodes[64];       /* per partition, made when first needed */
	struct paxos_session *sessions[64]; /* and its session */
	uint32_t partition;                 /* the current command's */
	struct event *reply_ev, *timer, *read_ev;
	int reply_fd, read_fd;
	uint64_t client, seq; /* local reads: this client's id and the read's number */
	uint64_t session_seq; /* the current command's number in its session (0: none yet) */
	bool chosen;          /* the session saw the current command chosen */
	paxos_iid chosen_iid; /* in this instance */
	int local_reads;      /* --local-reads: the replica gets go to; -1: none */
	bool twice;           /* --twice: every command is sent twice */
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

/* The client's learner sees the log only to complete its session's submissions. */
static void ignore_value(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)arg;
	(void)iid;
	(void)position;
	(void)v;
}

/* The session that submits to partition p, on a node with a learner that starts at the
 * current instance (it need not replay the log); NULL after saying why. */
static struct paxos_session *session_for(struct cli *c, uint32_t p)
{
	if (c->sessions[p])
		return c->sessions[p];
	char err[512] = "out of memory";
	struct paxos_config *part = paxos_config_new();
	if (part && paxos_config_partition(c->pcfg, p, part) == PAXOS_OK &&
	    paxos_config_set(part, "learner-start", "current", err, sizeof(err)) == PAXOS_OK)
		c->nodes[p] = paxos_node_new(c->base, part, err, sizeof(err));
	paxos_config_free(part);
	struct paxos_session_options o;
	paxos_session_options_default(&o);
	o.window = 4; /* one command at a time, and those its learner has not seen chosen yet */
	o.resubmit_ms = c->kcfg.resubmit_ms;
	o.timeout_ms = (uint32_t)(c->timeout * 1000);
	if (c->nodes[p] && (paxos_node_add_learner(c->nodes[p], ignore_value, NULL) != PAXOS_OK ||
			    !(c->sessions[p] = paxos_session_new(c->nodes[p], &o))))
		snprintf(err, sizeof(err), "%s", paxos_node_error(c->nodes[p]));
	if (!c->sessions[p])
		fprintf(stderr, PROGRAM ": partition %u: %s\n", p, err);
	return c->sessions[p];
}

static void arm(struct cli *c, uint32_t ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	event_add(c->timer, &tv);
}

/* The session's word on the current command: chosen (its reply follows), or not within the
 * timeout. */
static void on_done(void *arg, uint64_t seq, int status, paxos_iid iid)
{
	struct cli *c = arg;
	if (!c->cmd_len || seq != c->session_seq)
		return;
	if (status != PAXOS_OK) {
		fprintf(stderr, PROGRAM ": no reply within %.1f s: are the replicas running?\n",
			c->timeout);
		c->cmd_len = 0;
		finish(c, EXIT_TIMEOUT);
		return;
	}
	c->chosen = true;
	c->chosen_iid = iid;
}

/* A get with --local-reads: to the replica's read port, again each resubmit-ms. */
static void send_local_read(struct cli *c)
{
	struct sockaddr_in to = {.sin_family = AF_INET,
				 .sin_addr = kv_multicast_interface(c->pcfg),
				 .sin_port = htons((uint16_t)(c->kcfg.read_port + c->local_reads +
							      c->kcfg.replicas * c->partition))};
	clock_gettime(CLOCK_MONOTONIC, &c->last);
	if (sendto(c->read_fd, c->cmd, c->cmd_len, 0, (const struct sockaddr *)&to, sizeof(to)) < 0)
		fprintf(stderr, PROGRAM ": local read: %s\n", strerror(errno));
	arm(c, c->kcfg.resubmit_ms);
}

static void submit(struct cli *c)
{
	if (c->local_reads >= 0 && c->op == KV_GET) {
		send_local_read(c);
		return;
	}
	struct paxos_session *s = session_for(c, c->partition);
	if (!s) {
		c->cmd_len = 0; /* nothing in flight: main does not wait */
		finish(c, 1);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &c->last);
	c->chosen = false;
	int rc = paxos_session_submit(s, c->cmd, c->cmd_len, on_done, c, &c->session_seq);
	if (rc == PAXOS_E_FULL) {
		c->session_seq = 0;
		arm(c, 10); /* the leader is full: again shortly */
		return;
	}
	if (rc != PAXOS_OK) {
		fprintf(stderr, PROGRAM ": %s\n", paxos_node_error(c->nodes[c->partition]));
		c->cmd_len = 0;
		finish(c, 1);
		return;
	}
	if (c->twice)
		paxos_session_resend(s);
	arm(c, c->kcfg.resubmit_ms);
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
	c->session_seq = 0;
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
	bool local = fd == c->read_fd;
	while ((n = recv(fd, buf, sizeof(buf), 0)) >= 0) {
		struct kv_reply r;
		if (kv_reply_decode(buf, (size_t)n, &r) != 0)
			continue;
		struct paxos_session *s = c->sessions[c->partition];
		/* The current command's partition has a new leader, which may lack it: the
		 * session sends it again (its learner may see the change later). */
		if (r.status == KV_NEW_LEADER) {
			if (c->cmd_len && c->session_seq && s && r.seq == c->partition &&
			    since(&c->last) >= KV_NOTICE_GUARD_S)
				paxos_session_resend(s);
			continue;
		}
		/* Every client on the host hears every reply: keep ours, for the current command
		 * (a local read's names this client and the read; a command's, its session). */
		bool ours = local ? r.client == c->client && r.seq == c->seq
				  : s && c->session_seq && r.client == paxos_session_client(s) &&
					r.seq == c->session_seq;
		if (!ours || !c->cmd_len)
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
	if (!c->cmd_len)
		return;
	if (since(&c->sent) >= c->timeout) {
		if (c->chosen)
			fprintf(stderr,
				PROGRAM ": chosen in instance %llu, but no replica's reply came "
					"within %.1f s\n",
				(unsigned long long)c->chosen_iid, c->timeout);
		else
			fprintf(stderr,
				PROGRAM ": no reply within %.1f s: are the replicas running?\n",
				c->timeout);
		finish(c, EXIT_TIMEOUT);
		return;
	}
	if (c->local_reads >= 0 && c->op == KV_GET)
		send_local_read(c); /* a read changes nothing: asked again */
	else if (c->chosen && c->op == KV_GET)
		submit(c); /* its replies were lost: a get may run again, as a new command */
	else if (!c->session_seq)
		submit(c); /* refused as the leader was full: now */
	else
		arm(c, c->kcfg.resubmit_ms); /* the session sends it again itself */
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
	    "      --local-reads R  send each get to replica R, which answers from its own\n"
	    "                       table behind a read barrier (sees every write chosen\n"
	    "                       before it), not through the log\n"
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
	static const struct option options[] = {
	    {"config", required_argument, NULL, 'c'}, {"kvstore", required_argument, NULL, 'k'},
	    {"file", required_argument, NULL, 'f'},   {"timeout", required_argument, NULL, 'T'},
	    {"twice", no_argument, NULL, '2'},        {"local-reads", required_argument, NULL, 'L'},
	    {"partition-of", no_argument, NULL, 'W'}, {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0}};
	const char *pconf = NULL, *kconf = NULL, *file = NULL;
	char err[512], *end;
	int opt;
	c->local_reads = -1;
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
			c->twice = true;
		else if (opt == 'L') {
			long r = strtol(optarg, &end, 10);
			if (end == optarg || *end || r < 0 || r > 99) {
				fprintf(stderr, PROGRAM ": --local-reads wants a replica id\n");
				return -1;
			}
			c->local_reads = (int)r;
		} else if (opt == 'W')
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
	/* A reply lost once the command was chosen is not sent again: room for bursts. */
	int rcvbuf = 4 << 20;
	setsockopt(c.reply_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	c.reply_ev = event_new(c.base, c.reply_fd, EV_READ | EV_PERSIST, on_reply, &c);
	c.timer = event_new(c.base, -1, 0, on_timer, &c);
	if (!c.reply_ev || !c.timer || event_add(c.reply_ev, NULL) != 0)
		return 1;
	/* Local reads are answered to the socket they came from. */
	c.read_fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	c.read_ev = c.read_fd >= 0
			? event_new(c.base, c.read_fd, EV_READ | EV_PERSIST, on_reply, &c)
			: NULL;
	if (!c.read_ev || event_add(c.read_ev, NULL) != 0)
		return 1;
	next_command(&c);
	if (c.cmd_len)
		event_base_dispatch(c.base);
	event_free(c.reply_ev);
	event_free(c.read_ev);
	event_free(c.timer);
	close(c.reply_fd);
	close(c.read_fd);
	for (uint32_t p = 0; p < c.partitions; p++)
		paxos_node_free(c.nodes[p]); /* its session too; sends what is still buffered */
	event_base_free(c.base);
	paxos_config_free(c.pcfg);
	if (c.script && c.script != stdin)
		fclose(c.script);
	return c.exit_code;
}
