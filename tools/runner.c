/* SPDX-License-Identifier: BSD-3-Clause */
#include <paxos/storage_backends.h>
#include "runner.h"

#include "cli.h"

#include <paxos/log.h>
#include <paxos/metrics.h>
#include <paxos/partitions.h>
#include <paxos/version.h>

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include "config_fields.h"

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	event_base_loopexit(arg, NULL);
}

int paxos_runner_loop(struct event_base *base, struct paxos_node *const *nodes, uint32_t count)
{
	struct event *sigint = evsignal_new(base, SIGINT, on_signal, base);
	struct event *sigterm = evsignal_new(base, SIGTERM, on_signal, base);
	signal(SIGPIPE, SIG_IGN);
	if (!sigint || !sigterm || event_add(sigint, NULL) || event_add(sigterm, NULL)) {
		fprintf(stderr, "cannot install signal handlers\n");
		return 1;
	}
	event_base_dispatch(base);
	int status = 0;
	for (uint32_t p = 0; p < count; p++) {
		if (!nodes[p])
			continue; /* a partition this process does not host */
		paxos_node_report_counters(nodes[p]);
		if (paxos_node_failed(nodes[p]))
			status = 1;
	}
	event_free(sigint);
	event_free(sigterm);
	return status;
}

void paxos_runner_write_value(FILE *out, paxos_iid iid, const struct paxos_value *v)
{
	static const char digits[] = "0123456789abcdef";
	char hex[512];
	fprintf(out, "%llu ", (unsigned long long)iid);
	for (uint32_t i = 0; i < v->len;) {
		size_t k = 0;
		for (; i < v->len && k + 2 <= sizeof(hex); i++) {
			hex[k++] = digits[v->data[i] >> 4];
			hex[k++] = digits[v->data[i] & 15];
		}
		fwrite(hex, 1, k, out);
	}
	fputc('\n', out);
}

struct output {
	FILE *file;
	bool partitioned; /* several partitions: each line starts with the partition */
};

static void write_delivery(void *arg, uint32_t partition, paxos_iid iid, uint32_t position,
			   const struct paxos_value *v)
{
	(void)position;
	struct output *o = arg;
	if (o->partitioned)
		fprintf(o->file, "%u ", partition);
	paxos_runner_write_value(o->file, iid, v);
}

/* Which partition's new log a line reports. */
struct new_log_tag {
	struct output *out;
	uint32_t partition;
};

/* The acceptors began a new log: its instances are numbered from 1 again, so the output says
 * so before the first of them ("new log GENERATION"; with partitions "P new log GENERATION",
 * as the partition's deliveries start with P). */
static void write_new_log(void *arg, uint64_t generation)
{
	const struct new_log_tag *t = arg;
	if (t->out->partitioned)
		fprintf(t->out->file, "%u ", t->partition);
	fprintf(t->out->file, "new log %llu\n", (unsigned long long)generation);
	fflush(t->out->file);
}

/* Deliveries are written through stdio's buffer and flushed this often, so readers of the
 * file see them soon without a write per value. */
#define OUTPUT_FLUSH_MS 100

static void on_output_flush(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct output *o = arg;
	fflush(o->file);
}

static void runner_usage(const struct paxos_runner_spec *spec, FILE *out)
{
	bool has_id = spec->roles & (PAXOS_HOST_ACCEPTOR | PAXOS_HOST_PROPOSER);
	bool has_output = spec->roles & PAXOS_HOST_LEARNER;
	bool has_fresh = spec->roles & (PAXOS_HOST_ACCEPTOR | PAXOS_HOST_SERIALIZER);
	fprintf(out, "Usage: %s -c FILE%s%s%s [--metrics-listen ADDRESS:PORT]\n%s\n", spec->program,
		has_id ? " -i ID" : "", has_fresh ? " [--fresh]" : "",
		has_output ? " [-o FILE]" : "", spec->summary);
	fprintf(out, "  -c, --config FILE  cluster configuration (paxos.conf)\n");
	if (has_id)
		fprintf(out, "  -i, --id ID        this process's id (acceptor and/or proposer)\n");
	if (has_fresh)
		fprintf(out,
			"      --fresh        delete the stored state and start empty\n"
			"                     (default: recover it; never use on a live member)\n");
	if (has_output)
		fprintf(out,
			"  -o, --output FILE  write each delivered value as 'IID HEX' lines, and\n"
			"                     'new log G' where the acceptors began a new log\n");
	fprintf(out, "      --partitions LIST\n"
		     "                     host only these partitions (\"0,2-3\"; default: all\n"
		     "                     of paxos.conf partitions)\n");
	fprintf(out, "      --metrics-listen ADDRESS:PORT\n"
		     "                     serve /metrics and /health over HTTP there (overrides\n"
		     "                     paxos.conf metrics-listen)\n");
	fprintf(out, "  -h, --help         this text\n");
	fprintf(out, "      --version      the library's version and wire version\n");
}

/* Opens acceptor id's store (recovering what it holds unless fresh) and says what it is;
 * who names its user in the log. */
static struct paxos_storage *open_storage(const char *p, const char *who,
					  const struct paxos_config *cfg, uint32_t id, bool fresh)
{
	char err[512], dir[300] = "";
	struct paxos_storage *st = paxos_storage_open(cfg, id, fresh, err, sizeof(err));
	if (!st) {
		fprintf(stderr, "%s: %s: %s\n", p, who, err);
		return NULL;
	}
	if (strcmp(cfg->storage, "memory") == 0) {
		/* Thesis 3.7.6: an acceptor that forgot its promises must not vote as if it had
		 * none (it recovers first, see paxos_acceptor_join); a serializer that forgot its
		 * values would number new ones from 1 again. */
		fprintf(stderr, "%s: %s, storage memory (volatile: state is lost at exit)\n", p,
			who);
		return st;
	}
	paxos_storage_dir(cfg, id, dir, sizeof(dir));
	paxos_iid highest = st->ops->highest_accepted(st), trim = st->ops->trim_iid(st);
	char state[128];
	if (fresh || cfg->storage_fresh)
		snprintf(state, sizeof(state), "started fresh: earlier state deleted");
	else if (highest == 0 && trim == 0)
		snprintf(state, sizeof(state), "recovered: the store was empty");
	else
		snprintf(state, sizeof(state),
			 "recovered: accepted up to instance %llu, trimmed to %llu",
			 (unsigned long long)highest, (unsigned long long)trim);
	fprintf(stderr, "%s: %s, storage %s, durability %s, in %s (%s)\n", p, who, cfg->storage,
		paxos_durability_name(cfg->durability), dir, state);
	return st;
}

static int host_acceptor(const char *p, const struct paxos_config *cfg, struct paxos_node *node,
			 uint32_t id, bool fresh)
{
	char who[32];
	snprintf(who, sizeof(who), "acceptor %u", id);
	struct paxos_storage *st = open_storage(p, who, cfg, id, fresh);
	if (!st)
		return -1;
	if (paxos_node_add_acceptor(node, id, st) != PAXOS_OK) {
		fprintf(stderr, "%s: %s\n", p, paxos_node_error(node));
		return -1;
	}
	return 0;
}

/* The serializer keeps its values where acceptor 0 would: the two never run together. */
static int host_serializer(const char *p, const struct paxos_config *cfg, struct paxos_node *node,
			   bool fresh)
{
	struct paxos_storage *st = open_storage(p, "serializer", cfg, 0, fresh);
	if (!st)
		return -1;
	if (paxos_node_add_serializer(node, st) != PAXOS_OK) {
		fprintf(stderr, "%s: %s\n", p, paxos_node_error(node));
		return -1;
	}
	return 0;
}

/* The roles of the spec on node, partition cfg's; acceptor is the acceptor's id within the
 * partition (paxos_config_partition_acceptor), UINT32_MAX when it serves not this one. */
static int host_roles(const struct paxos_runner_spec *spec, const struct paxos_config *cfg,
		      struct paxos_node *node, uint32_t id, uint32_t acceptor, bool fresh)
{
	const char *p = spec->program;
	if ((spec->roles & PAXOS_HOST_SERIALIZER) && host_serializer(p, cfg, node, fresh) != 0)
		return -1;
	if ((spec->roles & PAXOS_HOST_ACCEPTOR) && acceptor < cfg->acceptors &&
	    host_acceptor(p, cfg, node, acceptor, fresh) != 0)
		return -1;
	if ((spec->roles & PAXOS_HOST_PROPOSER) && id < cfg->proposers &&
	    paxos_node_add_proposer(node, id) != PAXOS_OK) {
		fprintf(stderr, "%s: %s\n", p, paxos_node_error(node));
		return -1;
	}
	return 0;
}

/* The metrics server, when metrics-listen is set: before the roles start, so that a port in
 * use stops the process before it opens a store or joins a group. */
static int start_metrics(const char *p, struct event_base *base, const struct paxos_node *node,
			 const struct paxos_config *cfg, struct paxos_metrics **metrics)
{
	char err[512], addr[INET_ADDRSTRLEN];
	if (!cfg->metrics_listen.port)
		return 0;
	*metrics = paxos_metrics_new(base, node, cfg, err, sizeof(err));
	if (!*metrics) {
		fprintf(stderr, "%s: %s\n", p, err);
		return -1;
	}
	inet_ntop(AF_INET, &cfg->metrics_listen.addr, addr, sizeof(addr));
	fprintf(stderr, "%s: metrics on http://%s:%u/metrics and /health\n", p, addr,
		cfg->metrics_listen.port);
	return 0;
}

/* A durable acceptor keeps its partitions' logs under storage-path: the count is written
 * there at the first start (once partition 0's store made the directory), and a later start
 * with another count is refused (the logs of the
 * partitions it would drop hold chosen values; one it would add starts a new log). */
static int check_partition_count(const char *p, const struct paxos_config *cfg)
{
	char path[PAXOS_PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/partitions", cfg->storage_path);
	FILE *f = fopen(path, "r");
	if (f) {
		unsigned stored = 0;
		int got = fscanf(f, "%u", &stored);
		fclose(f);
		if (got == 1 && stored == cfg->partitions)
			return 0;
		fprintf(stderr,
			"%s: paxos.conf says partitions %u, but %s says %s%u: the stores under %s "
			"hold that many logs; set partitions back, or move the stores away to "
			"start new logs\n",
			p, cfg->partitions, path, got == 1 ? "" : "(unreadable) ", stored,
			cfg->storage_path);
		return -1;
	}
	/* Written beside and renamed into place: the acceptors of one host start together, and
	 * one must never read another's half-written file. */
	char tmp[sizeof(path) + 24];
	snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
	if (errno != ENOENT || !(f = fopen(tmp, "w"))) {
		fprintf(stderr, "%s: %s: %s\n", p, path, strerror(errno));
		return -1;
	}
	fprintf(f, "%u\n", cfg->partitions);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "%s: %s: %s\n", p, path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* "0,2-3": the partitions a process hosts, one bit each, all below count. */
static int parse_partitions(const char *p, const char *text, uint32_t count, uint64_t *mask)
{
	*mask = 0;
	const char *at = text;
	while (*at) {
		char *end;
		unsigned long lo = strtoul(at, &end, 10), hi = lo;
		if (end == at || *at == '-')
			break;
		if (*end == '-') {
			at = end + 1;
			hi = strtoul(at, &end, 10);
			if (end == at || *at == '-')
				break;
		}
		if (lo > hi || hi >= count)
			break;
		for (unsigned long i = lo; i <= hi; i++)
			*mask |= 1ull << i;
		at = end;
		if (*at == ',' && at[1])
			at++;
		else if (*at)
			break;
	}
	if (*at || !*mask) {
		fprintf(stderr,
			"%s: --partitions '%s': expected partition ids and ranges below %u, such "
			"as 0,2-3\n",
			p, text, count);
		return -1;
	}
	return 0;
}

/* An acceptor hosts the partitions it serves (partition-acceptors): all of them by default,
 * and --partitions may name only those. */
static int acceptor_partitions(const char *p, const struct paxos_config *cfg, uint32_t id,
			       bool given, uint64_t *hosted)
{
	uint64_t served = 0;
	for (uint32_t q = 0; q < cfg->partitions; q++)
		if (paxos_config_partition_acceptor(cfg, q, id, NULL) == PAXOS_OK)
			served |= 1ull << q;
	if (!served) {
		fprintf(stderr,
			"%s: acceptor %u serves no partition: partition-acceptors (%s) leaves it "
			"out of every partition's set\n",
			p, id, cfg->partition_acceptors);
		return -1;
	}
	for (uint32_t q = 0; given && q < cfg->partitions; q++)
		if ((*hosted >> q & 1) && !(served >> q & 1)) {
			fprintf(stderr,
				"%s: --partitions: acceptor %u does not serve partition %u "
				"(partition-acceptors %s)\n",
				p, id, q, cfg->partition_acceptors);
			return -1;
		}
	if (!given)
		*hosted = served;
	return 0;
}

/* One role binary's run: its command line, configuration and what it made of them. */
struct runner {
	const struct paxos_runner_spec *spec;
	const struct paxos_config *cfg;
	uint32_t id;
	bool fresh;
	struct event_base *base;
	struct paxos_partitions *group;
	struct paxos_metrics *metrics;
	struct output *out;
	struct new_log_tag new_log[PAXOS_MAX_PARTITIONS];
};

/* Partition p's roles on node, with part to hold the partition's configuration; the metrics
 * server (made with the first node) serves them all. Returns 0, or 1 with the reason
 * printed. */
static int host_partition(struct runner *r, struct paxos_config *part, struct paxos_node *node,
			  uint32_t p, bool first)
{
	const struct paxos_runner_spec *spec = r->spec;
	bool durable = strcmp(r->cfg->storage, "memory") != 0 &&
		       (spec->roles & (PAXOS_HOST_ACCEPTOR | PAXOS_HOST_SERIALIZER));
	uint32_t acceptor = UINT32_MAX;
	if ((spec->roles & PAXOS_HOST_ACCEPTOR) &&
	    paxos_config_partition_acceptor(r->cfg, p, r->id, &acceptor) == PAXOS_OK &&
	    acceptor != r->id)
		fprintf(stderr, "%s: acceptor %u is acceptor %u of partition %u\n", spec->program,
			r->id, acceptor, p);
	if (paxos_config_partition(r->cfg, p, part) != PAXOS_OK)
		return 1;
	if (first && start_metrics(spec->program, r->base, node, r->cfg, &r->metrics))
		return 1;
	if (!first && r->metrics && paxos_metrics_add_node(r->metrics, node) != PAXOS_OK)
		return 1;
	if (host_roles(spec, part, node, r->id, acceptor, r->fresh) != 0)
		return 1;
	/* The first store made storage-path: the count is kept beside it. */
	if (first && durable && check_partition_count(spec->program, r->cfg) != 0)
		return 1;
	return 0;
}

/* The output file, when there is one: new logs on every node, deliveries from the learner.
 * Returns 0, or 1 with the reason printed. */
static int add_output(struct runner *r)
{
	if (!r->out->file)
		return 0;
	for (uint32_t p = 0; p < r->cfg->partitions; p++) {
		r->new_log[p] = (struct new_log_tag){r->out, p};
		if (paxos_partitions_node(r->group, p))
			paxos_node_on_new_log(paxos_partitions_node(r->group, p), write_new_log,
					      &r->new_log[p]);
	}
	if ((r->spec->roles & PAXOS_HOST_LEARNER) &&
	    paxos_partitions_add_learner(r->group, write_delivery, r->out) != PAXOS_OK) {
		fprintf(stderr, "%s: %s\n", r->spec->program, paxos_partitions_error(r->group));
		return 1;
	}
	return 0;
}

/* The roles of the spec on every node of the group (one per hosted partition), then its
 * learner. Returns 0, or 1 with the reason printed. */
static int host_partitions(struct runner *r)
{
	if ((r->spec->roles & PAXOS_HOST_SERIALIZER) && r->cfg->learner_merge) {
		/* Merged learners wait for idle partitions' skips, which only leaders propose. */
		fprintf(stderr,
			"%s: learner-merge needs proposers: the serializer proposes no skips, so "
			"an idle partition would hold the merged order back for ever\n",
			r->spec->program);
		return 1;
	}
	struct paxos_config *part = paxos_config_new();
	if (!part) {
		fprintf(stderr, "%s: out of memory\n", r->spec->program);
		return 1;
	}
	int status = 0;
	bool first = true;
	for (uint32_t p = 0; p < r->cfg->partitions && status == 0; p++) {
		struct paxos_node *node = paxos_partitions_node(r->group, p);
		if (!node)
			continue;
		status = host_partition(r, part, node, p, first);
		first = false;
	}
	paxos_config_free(part);
	return status == 0 ? add_output(r) : status;
}

/* What a role binary's command line gives beside -c. */
struct runner_options {
	const struct paxos_runner_spec *spec;
	const char *id_text, *output, *metrics_listen, *partitions_text;
	bool fresh;
};

static bool has_id(const struct paxos_runner_spec *spec)
{
	return spec->roles & (PAXOS_HOST_ACCEPTOR | PAXOS_HOST_PROPOSER);
}

static int take_option(void *arg, int opt, const char *value)
{
	struct runner_options *o = arg;
	unsigned roles = o->spec->roles;
	if (opt == 'i' && has_id(o->spec))
		o->id_text = value;
	else if (opt == 'o' && (roles & PAXOS_HOST_LEARNER))
		o->output = value;
	else if (opt == 'm')
		o->metrics_listen = value;
	else if (opt == 'P')
		o->partitions_text = value;
	else if (opt == 'f' && (roles & (PAXOS_HOST_ACCEPTOR | PAXOS_HOST_SERIALIZER)))
		o->fresh = true;
	else
		return -1;
	return 0;
}

static void options_usage(void *arg, FILE *out)
{
	const struct runner_options *o = arg;
	runner_usage(o->spec, out);
}

/* Says what is missing or extra before the usage, which is longer than a screen's glance:
 * 0, or 2. */
static int check_arguments(const struct runner_options *o, const struct paxos_cli *cli, int argc,
			   char **argv)
{
	const char *p = o->spec->program;
	if (!cli->config)
		fprintf(stderr, "%s: missing -c FILE (the cluster's paxos.conf)\n", p);
	else if (has_id(o->spec) && !o->id_text)
		fprintf(stderr, "%s: missing -i ID (which member of paxos.conf this process is)\n",
			p);
	else if (cli->operands != argc)
		fprintf(stderr, "%s: unexpected argument '%s'\n", p, argv[cli->operands]);
	else
		return 0;
	runner_usage(o->spec, stderr);
	return 2;
}

/* Loads the configuration with the command line's changes to it, this process's id and the
 * partitions it hosts: 0, or 2 after saying why. */
static int load_config(const struct runner_options *o, const char *path, struct paxos_config *cfg,
		       uint32_t *id, uint64_t *hosted)
{
	const struct paxos_runner_spec *spec = o->spec;
	char err[512];
	if (paxos_runner_config(spec->program, path, cfg))
		return 2;
	/* Roles of one host share paxos.conf but each needs a port of its own. */
	if (o->metrics_listen && paxos_config_set(cfg, "metrics-listen", o->metrics_listen, err,
						  sizeof(err)) != PAXOS_OK) {
		fprintf(stderr, "%s: --%s\n", spec->program, err);
		return 2;
	}
	uint32_t id_limit = cfg->acceptors > cfg->proposers ? cfg->acceptors : cfg->proposers;
	if (!(spec->roles & PAXOS_HOST_ACCEPTOR))
		id_limit = cfg->proposers;
	else if (!(spec->roles & PAXOS_HOST_PROPOSER))
		id_limit = cfg->acceptors;
	*id = 0;
	if (has_id(spec) && paxos_runner_id(spec->program, "id", o->id_text, id_limit, id))
		return 2;
	*hosted = cfg->partitions >= 64 ? UINT64_MAX : (1ull << cfg->partitions) - 1;
	if (o->partitions_text &&
	    parse_partitions(spec->program, o->partitions_text, cfg->partitions, hosted) != 0)
		return 2;
	if (spec->roles == PAXOS_HOST_ACCEPTOR &&
	    acceptor_partitions(spec->program, cfg, *id, o->partitions_text != NULL, hosted) != 0)
		return 2;
	return 0;
}

/* Runs the loop with the output flushed every OUTPUT_FLUSH_MS: the exit status. */
static int run_loop(struct runner *r, struct paxos_node *const *nodes)
{
	int status = 1;
	struct event *flush = NULL;
	struct timeval every = {0, OUTPUT_FLUSH_MS * 1000};
	if (r->out->file &&
	    (!(flush = event_new(r->base, -1, EV_PERSIST, on_output_flush, r->out)) ||
	     event_add(flush, &every) != 0))
		fprintf(stderr, "%s: cannot add a timer\n", r->spec->program);
	else
		status = paxos_runner_loop(r->base, nodes, r->cfg->partitions);
	if (flush)
		event_free(flush);
	return status;
}

/* The group of the hosted partitions with the spec's roles, run until stopped: the exit
 * status. */
static int run_group(struct runner *r, uint64_t hosted)
{
	char err[512];
	int status = 1;
	struct paxos_node *nodes[PAXOS_MAX_PARTITIONS] = {NULL};
	r->base = event_base_new();
	if (!r->base)
		fprintf(stderr, "%s: cannot create event loop\n", r->spec->program);
	else if (!(r->group = paxos_partitions_new(r->base, r->cfg, hosted, err, sizeof(err))))
		fprintf(stderr, "%s: %s\n", r->spec->program, err);
	else {
		for (uint32_t p = 0; p < r->cfg->partitions; p++)
			nodes[p] = paxos_partitions_node(r->group, p);
		status = host_partitions(r);
	}
	if (status == 0)
		status = run_loop(r, nodes);
	paxos_metrics_free(r->metrics);
	paxos_partitions_free(r->group);
	if (r->base)
		event_base_free(r->base);
	return status;
}

int paxos_runner_main(const struct paxos_runner_spec *spec, int argc, char **argv)
{
	static const struct option options[] = {{"id", required_argument, NULL, 'i'},
						{"output", required_argument, NULL, 'o'},
						{"fresh", no_argument, NULL, 'f'},
						{"metrics-listen", required_argument, NULL, 'm'},
						{"partitions", required_argument, NULL, 'P'},
						{NULL}};
	const struct paxos_cli_spec cli_spec = {
	    spec->program, PAXOS_CLI_CONFIG, "i:o:", options, take_option, options_usage};
	struct runner_options o = {.spec = spec};
	struct paxos_cli cli;
	int status = paxos_cli_parse(&cli_spec, &o, argc, argv, &cli);
	if (status != PAXOS_CLI_RUN)
		return status;
	if (check_arguments(&o, &cli, argc, argv) != 0)
		return 2;
	struct paxos_config cfg;
	struct output out = {NULL};
	struct runner r = {.spec = spec, .cfg = &cfg, .fresh = o.fresh, .out = &out};
	uint64_t hosted;
	if (load_config(&o, cli.config, &cfg, &r.id, &hosted) != 0)
		return 2;
	if (spec->roles & PAXOS_HOST_LEARNER) {
		out.file = o.output ? fopen(o.output, "w") : stdout;
		if (!out.file) {
			fprintf(stderr, "%s: %s: %s\n", spec->program, o.output, strerror(errno));
			return 1;
		}
	}
	out.partitioned = cfg.partitions > 1;
	status = run_group(&r, hosted);
	if (out.file && out.file != stdout && fclose(out.file) != 0) {
		fprintf(stderr, "%s: %s: %s\n", spec->program, o.output, strerror(errno));
		status = 1;
	}
	return status;
}
