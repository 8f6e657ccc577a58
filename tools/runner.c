/* SPDX-License-Identifier: BSD-3-Clause */
#include <paxos/storage_backends.h>
#include "runner.h"

#include <paxos/log.h>
#include <paxos/metrics.h>
#include <paxos/partitions.h>
#include <paxos/version.h>

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include "config_fields.h"

int paxos_runner_config(const char *program, const char *path, struct paxos_config *cfg)
{
	char err[512];
	/* The library logs nothing by itself: the binaries print its lines, as before. */
	paxos_set_log(paxos_log_stderr, NULL);
	paxos_config_defaults(cfg);
	if (paxos_config_load(cfg, path, err, sizeof(err)) != PAXOS_OK) {
		fprintf(stderr, "%s: %s\n", program, err);
		return -1;
	}
	return 0;
}

int paxos_runner_id(const char *program, const char *what, const char *text, uint32_t limit,
		    uint32_t *id)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || v >= limit) {
		fprintf(stderr, "%s: %s '%s' must be a number from 0 to %u\n", program, what, text,
			limit - 1);
		return -1;
	}
	*id = (uint32_t)v;
	return 0;
}

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

/* The acceptors began a new log: its instances are numbered from 1 again, so the output says
 * so before the first of them ("new log GENERATION"). */
static void write_new_log(void *arg, uint64_t generation)
{
	struct output *o = arg;
	fprintf(o->file, "new log %llu\n", (unsigned long long)generation);
	fflush(o->file);
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

void paxos_runner_version(const char *program)
{
	printf("%s (libpaxos) %s, wire version %u\n", program, paxos_version(),
	       (unsigned)paxos_wire_format_version());
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

/* The roles of the spec on every node of the group (one per hosted partition), then its
 * learner; the metrics server (made with the first node) serves them all. Returns 0, or 1
 * with the reason printed. */
static int host_partitions(const struct paxos_runner_spec *spec, struct event_base *base,
			   const struct paxos_config *cfg, struct paxos_partitions *group,
			   uint32_t id, bool fresh, struct output *out,
			   struct paxos_metrics **metrics)
{
	bool first = true;
	bool durable = strcmp(cfg->storage, "memory") != 0 &&
		       (spec->roles & (PAXOS_HOST_ACCEPTOR | PAXOS_HOST_SERIALIZER));
	if ((spec->roles & PAXOS_HOST_SERIALIZER) && cfg->learner_merge) {
		/* Merged learners wait for idle partitions' skips, which only leaders propose. */
		fprintf(stderr,
			"%s: learner-merge needs proposers: the serializer proposes no skips, so "
			"an idle partition would hold the merged order back for ever\n",
			spec->program);
		return 1;
	}
	struct paxos_config *part = paxos_config_new();
	if (!part) {
		fprintf(stderr, "%s: out of memory\n", spec->program);
		return 1;
	}
	int status = 0;
	for (uint32_t p = 0; p < cfg->partitions && status == 0; p++) {
		struct paxos_node *node = paxos_partitions_node(group, p);
		if (!node)
			continue;
		uint32_t acceptor = UINT32_MAX;
		if ((spec->roles & PAXOS_HOST_ACCEPTOR) &&
		    paxos_config_partition_acceptor(cfg, p, id, &acceptor) == PAXOS_OK &&
		    acceptor != id)
			fprintf(stderr, "%s: acceptor %u is acceptor %u of partition %u\n",
				spec->program, id, acceptor, p);
		if (paxos_config_partition(cfg, p, part) != PAXOS_OK)
			status = 1;
		else if (first && start_metrics(spec->program, base, node, cfg, metrics))
			status = 1;
		else if (!first && *metrics && paxos_metrics_add_node(*metrics, node) != PAXOS_OK)
			status = 1;
		else if (host_roles(spec, part, node, id, acceptor, fresh) != 0)
			status = 1;
		/* The first store made storage-path: the count is kept beside it. */
		else if (first && durable && check_partition_count(spec->program, cfg) != 0)
			status = 1;
		first = false;
	}
	paxos_config_free(part);
	for (uint32_t p = 0; status == 0 && out->file && p < cfg->partitions; p++)
		if (paxos_partitions_node(group, p))
			paxos_node_on_new_log(paxos_partitions_node(group, p), write_new_log, out);
	if (status == 0 && (spec->roles & PAXOS_HOST_LEARNER) && out->file &&
	    paxos_partitions_add_learner(group, write_delivery, out) != PAXOS_OK) {
		fprintf(stderr, "%s: %s\n", spec->program, paxos_partitions_error(group));
		status = 1;
	}
	return status;
}

int paxos_runner_main(const struct paxos_runner_spec *spec, int argc, char **argv)
{
	static const struct option options[] = {{"config", required_argument, NULL, 'c'},
						{"id", required_argument, NULL, 'i'},
						{"output", required_argument, NULL, 'o'},
						{"fresh", no_argument, NULL, 'f'},
						{"metrics-listen", required_argument, NULL, 'm'},
						{"partitions", required_argument, NULL, 'P'},
						{"help", no_argument, NULL, 'h'},
						{"version", no_argument, NULL, 'V'},
						{NULL, 0, NULL, 0}};
	bool has_id = spec->roles & (PAXOS_HOST_ACCEPTOR | PAXOS_HOST_PROPOSER);
	bool has_output = spec->roles & PAXOS_HOST_LEARNER;
	const char *config = NULL, *id_text = NULL, *output = NULL, *metrics_listen = NULL;
	const char *partitions_text = NULL;
	bool fresh = false;
	int opt;
	while ((opt = getopt_long(argc, argv, "c:i:o:h", options, NULL)) != -1) {
		if (opt == 'c')
			config = optarg;
		else if (opt == 'i' && has_id)
			id_text = optarg;
		else if (opt == 'o' && has_output)
			output = optarg;
		else if (opt == 'm')
			metrics_listen = optarg;
		else if (opt == 'P')
			partitions_text = optarg;
		else if (opt == 'f' &&
			 (spec->roles & (PAXOS_HOST_ACCEPTOR | PAXOS_HOST_SERIALIZER)))
			fresh = true;
		else if (opt == 'h') {
			runner_usage(spec, stdout);
			return 0;
		} else if (opt == 'V') {
			paxos_runner_version(spec->program);
			return 0;
		} else {
			runner_usage(spec, stderr);
			return 2;
		}
	}
	/* Say what is wrong before the usage, which is longer than a screen's glance. */
	if (!config)
		fprintf(stderr, "%s: missing -c FILE (the cluster's paxos.conf)\n", spec->program);
	else if (has_id && !id_text)
		fprintf(stderr, "%s: missing -i ID (which member of paxos.conf this process is)\n",
			spec->program);
	else if (optind != argc)
		fprintf(stderr, "%s: unexpected argument '%s'\n", spec->program, argv[optind]);
	if (!config || (has_id && !id_text) || optind != argc) {
		runner_usage(spec, stderr);
		return 2;
	}
	struct paxos_config cfg;
	uint32_t id = 0;
	if (paxos_runner_config(spec->program, config, &cfg))
		return 2;
	char err[512];
	/* Roles of one host share paxos.conf but each needs a port of its own. */
	if (metrics_listen && paxos_config_set(&cfg, "metrics-listen", metrics_listen, err,
					       sizeof(err)) != PAXOS_OK) {
		fprintf(stderr, "%s: --%s\n", spec->program, err);
		return 2;
	}
	uint32_t id_limit = cfg.acceptors > cfg.proposers ? cfg.acceptors : cfg.proposers;
	if (!(spec->roles & PAXOS_HOST_ACCEPTOR))
		id_limit = cfg.proposers;
	else if (!(spec->roles & PAXOS_HOST_PROPOSER))
		id_limit = cfg.acceptors;
	if (has_id && paxos_runner_id(spec->program, "id", id_text, id_limit, &id))
		return 2;
	uint64_t hosted = cfg.partitions >= 64 ? UINT64_MAX : (1ull << cfg.partitions) - 1;
	if (partitions_text &&
	    parse_partitions(spec->program, partitions_text, cfg.partitions, &hosted) != 0)
		return 2;
	if (spec->roles == PAXOS_HOST_ACCEPTOR &&
	    acceptor_partitions(spec->program, &cfg, id, partitions_text != NULL, &hosted) != 0)
		return 2;

	struct output out = {NULL};
	if (has_output) {
		out.file = output ? fopen(output, "w") : stdout;
		if (!out.file) {
			fprintf(stderr, "%s: %s: %s\n", spec->program, output, strerror(errno));
			return 1;
		}
	}
	int status = 1;
	uint32_t partitions = cfg.partitions;
	out.partitioned = partitions > 1;
	struct paxos_node *nodes[PAXOS_MAX_PARTITIONS] = {NULL};
	struct event_base *base = event_base_new();
	struct paxos_metrics *metrics = NULL;
	struct paxos_partitions *group = NULL;
	if (!base)
		fprintf(stderr, "%s: cannot create event loop\n", spec->program);
	else if (!(group = paxos_partitions_new(base, &cfg, hosted, err, sizeof(err))))
		fprintf(stderr, "%s: %s\n", spec->program, err);
	else {
		for (uint32_t p = 0; p < partitions; p++)
			nodes[p] = paxos_partitions_node(group, p);
		status = host_partitions(spec, base, &cfg, group, id, fresh, &out, &metrics);
	}
	if (status == 0) {
		status = 1;
		struct event *flush = NULL;
		struct timeval every = {0, OUTPUT_FLUSH_MS * 1000};
		if (out.file &&
		    (!(flush = event_new(base, -1, EV_PERSIST, on_output_flush, &out)) ||
		     event_add(flush, &every) != 0))
			fprintf(stderr, "%s: cannot add a timer\n", spec->program);
		else
			status = paxos_runner_loop(base, nodes, partitions);
		if (flush)
			event_free(flush);
	}
	paxos_metrics_free(metrics);
	paxos_partitions_free(group);
	if (base)
		event_base_free(base);
	if (out.file && out.file != stdout && fclose(out.file) != 0) {
		fprintf(stderr, "%s: %s: %s\n", spec->program, output, strerror(errno));
		status = 1;
	}
	return status;
}
