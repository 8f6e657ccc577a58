/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-client: the benchmark client of thesis 4.1.2. It keeps K distinct values outstanding,
 * learns them, submits a new one for each of its values delivered, resubmits values that are
 * not delivered in time, and reports throughput and latency percentiles.
 * With --rate it runs open-loop instead (the load of 004_... sec. 5): it submits values on a
 * timer at a fixed rate, whatever the deliveries, and measures each latency from the moment
 * the value was due, so a value that waited for a free slot counts its wait.
 * Its learner starts at the current instance (learner-start current): a client that joins
 * a long-running cluster does not replay its history, which would hold back its own values.
 * With --partitions N it spreads its values over partitions 0..N-1, round-robin or by the
 * hash of a key each value carries (--spread key), and reports each partition apart.
 */
#include <paxos/paxos.h>
#include <paxos/proposer.h>

#include "clock.h"
#include "runner.h"

#include <errno.h>
#include <event2/event.h>
#include <getopt.h>
#include <sys/resource.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "config_fields.h"

#include "client.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static double percentile_ms(const uint32_t *sorted, uint64_t n, double p)
{
	if (n == 0)
		return 0;
	uint64_t k = (uint64_t)(p / 100.0 * (double)(n - 1) + 0.5);
	return sorted[k] / 1000.0;
}

/* write_latencies: every latency in microseconds, one a line, in delivery order */
static int write_latencies(const struct client *c, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "paxos-client: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (uint64_t i = 0; i < c->measured; i++)
		fprintf(f, "%" PRIu32 "\n", c->latency_us[i]);
	if (fclose(f) != 0) {
		fprintf(stderr, "paxos-client: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The client's own CPU time so far, user + system, in microseconds. */
static uint64_t cpu_us(void)
{
	struct rusage u;
	if (getrusage(RUSAGE_SELF, &u) != 0)
		return 0;
	return (uint64_t)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000u +
	       (uint64_t)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/* Partition index p's measured latencies, sorted, into out (room for c->measured); returns
 * how many. */
static uint64_t part_latencies(const struct client *c, uint32_t p, uint32_t *out)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i < c->measured; i++)
		if (c->latency_part[i] == p)
			out[n++] = c->latency_us[i];
	qsort(out, n, sizeof(uint32_t), cmp_u32);
	return n;
}

/* Each partition's values and latencies, when the client spreads over several. */
static void report_parts(const struct client *c, bool json, double secs)
{
	uint32_t *lat = c->part_count > 1 ? malloc((c->measured + 1) * sizeof(*lat)) : NULL;
	if (json && c->part_count > 1)
		printf(",\"spread\":\"%s\",\"partitions\":[", c->spread_key ? "key" : "rr");
	for (uint32_t p = 0; lat && p < c->part_count; p++) {
		const struct part *part = &c->parts[p];
		uint64_t n = part_latencies(c, p, lat);
		double rate = secs > 0 ? (double)part->delivered / secs : 0;
		double p50 = percentile_ms(lat, n, 50), p99 = percentile_ms(lat, n, 99);
		if (json)
			printf("%s{\"partition\":%u,\"submitted\":%" PRIu64
			       ",\"delivered\":%" PRIu64
			       ",\"values_per_s\":%.1f,\"latency_ms\":{\"p50\":%.3f,\"p99\":%.3f}}",
			       p ? "," : "", part->partition, part->submitted, part->delivered,
			       rate, p50, p99);
		else
			printf("partition %u: %" PRIu64 " values delivered (of %" PRIu64
			       " submitted), %.0f values/s, latency ms p50 %.3f p99 %.3f\n",
			       part->partition, part->delivered, part->submitted, rate, p50, p99);
	}
	if (json && c->part_count > 1)
		printf("]");
	if (c->part_count > 1 && !lat)
		fprintf(stderr, "paxos-client: out of memory for the per-partition report\n");
	free(lat);
}

static void report(const struct client *c, bool json)
{
	uint64_t cpu = cpu_us();
	uint64_t n = c->measured;
	paxos_time end = c->finished ? c->finished : paxos_now();
	double secs = (double)(end - c->started) / 1e6;
	if (!json)
		printf("delivered %" PRIu64 " of %" PRIu64 " values (%u-%u bytes, %u outstanding) "
		       "in %.3f s: %.0f values/s\n",
		       c->delivered, c->count, c->size_min, c->size_max, c->outstanding, secs,
		       secs > 0 ? (double)c->delivered / secs : 0);
	if (!json && c->part_count > 1)
		printf("spread %s over %u partitions\n",
		       c->spread_key ? "by key hash" : "round-robin", c->part_count);
	if (!json)
		report_parts(c, json, secs);
	/* Sorted apart: latency_part still names the partition of each latency_us. */
	uint32_t *sorted = malloc((n + 1) * sizeof(*sorted));
	if (!sorted) {
		fprintf(stderr, "paxos-client: out of memory for the report\n");
		return;
	}
	memcpy(sorted, c->latency_us, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(uint32_t), cmp_u32);
	double rate = secs > 0 ? (double)c->delivered / secs : 0;
	double p50 = percentile_ms(sorted, n, 50);
	double p5 = percentile_ms(sorted, n, 5);
	double p90 = percentile_ms(sorted, n, 90);
	double p95 = percentile_ms(sorted, n, 95);
	double p99 = percentile_ms(sorted, n, 99);
	double min = n ? sorted[0] / 1000.0 : 0;
	double max = n ? sorted[n - 1] / 1000.0 : 0;
	free(sorted);
	if (json) {
		printf("{\"count\":%" PRIu64 ",\"delivered\":%" PRIu64 ",\"seconds\":%.3f,"
		       "\"values_per_s\":%.1f,\"size_min\":%u,\"size_max\":%u,\"outstanding\":%u,"
		       "\"rate\":%" PRIu64 ",\"warmup_ms\":%" PRIu64 ",\"measured\":%" PRIu64
		       ",\"latency_ms\":{\"min\":%.3f,\"p5\":%.3f,\"p50\":%.3f,"
		       "\"p90\":%.3f,\"p95\":%.3f,\"p99\":%.3f,\"max\":%.3f},\"resubmits\":%" PRIu64
		       ",\"new_leader_resubmits\":%" PRIu64 ",\"duplicates\":%" PRIu64
		       ",\"submit_errors\":%" PRIu64 ",\"held_back\":%" PRIu64
		       ",\"refused_resends\":%" PRIu64 ",\"first_instance\":%" PRIu64
		       ",\"foreign\":%" PRIu64 ",\"cpu_us\":%" PRIu64,
		       c->count, c->delivered, secs, rate, c->size_min, c->size_max, c->outstanding,
		       c->rate, (uint64_t)(c->warmup / 1000), n, min, p5, p50, p90, p95, p99, max,
		       c->resubmits, c->new_leader_resubmits, c->duplicates, c->submit_errors,
		       c->held_back, c->refused_resends, (uint64_t)c->first_iid, c->foreign, cpu);
		report_parts(c, json, secs);
		printf("}\n");
		return;
	}
	if (c->rate)
		printf("open loop: %" PRIu64 " values/s offered\n", c->rate);
	if (c->warmup)
		printf("latency of the %" PRIu64 " values sent after the first %" PRIu64 " ms:\n",
		       n, (uint64_t)(c->warmup / 1000));
	printf("latency ms: min %.3f  p50 %.3f  p90 %.3f  p99 %.3f  max %.3f  (90%% interval "
	       "%.3f-%.3f)\n",
	       min, p50, p90, p99, max, p5, p95);
	printf("resubmits %" PRIu64 ", duplicates %" PRIu64 ", submit errors %" PRIu64 "; %" PRIu64
	       " of the resubmits at a partition's new leader\n",
	       c->resubmits, c->duplicates, c->submit_errors, c->new_leader_resubmits);
	printf("flow control: %" PRIu64 " submits held back, %" PRIu64
	       " values sent again (the leader was full)\n",
	       c->held_back, c->refused_resends);
	printf("learned from instance %" PRIu64 " on; %" PRIu64 " values of other clients\n",
	       (uint64_t)c->first_iid, c->foreign);
	printf("client cpu %.3f s, %.3f us/value\n", (double)cpu / 1e6,
	       c->delivered ? (double)cpu / (double)c->delivered : 0);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: paxos-client -c FILE [options]\n"
		"Submits values, learns them, and reports throughput and latency.\n"
		"  -c, --config FILE       cluster configuration (paxos.conf)\n"
		"  -n, --count N           values to deliver (default 1000)\n"
		"  -s, --size MIN[-MAX]    value size in bytes, at least %u (default 64)\n"
		"  -k, --outstanding K     values in flight at once (default 1; with --rate: at "
		"most K,\n"
		"                          default 1024)\n"
		"      --rate N            open loop: submit N values/s on a timer, whatever the\n"
		"                          deliveries; latency counts from when a value was due\n"
		"  -r, --resubmit-ms T     resubmit a value not delivered after T ms (default "
		"1000);\n"
		"                          with several partitions also at once when a\n"
		"                          partition's new leader is delivered from\n"
		"  -t, --time-limit S      give up after S seconds (default 120)\n"
		"  -l, --log FILE          write each submitted value as 'SEQ HEX' lines\n"
		"      --id N              client id in value tags (default: process id)\n"
		"      --partition P       submit to and learn from partition P (paxos.conf\n"
		"                          partitions; default 0)\n"
		"      --partitions N      spread the values over partitions 0..N-1 and report\n"
		"                          each one's values and latency\n"
		"      --spread rr|key     with --partitions: round-robin (rr, the default), or\n"
		"                          by the hash of a key each value carries after its\n"
		"                          tag (8 bytes, little-endian; a key always goes to one\n"
		"                          partition)\n"
		"      --keys K            --spread key: keys are drawn from 0..K-1 (default\n"
		"                          1024)\n"
		"      --json              print the summary as one JSON object\n"
		"      --counters          write the client's counters to stderr at the end\n"
		"      --latencies FILE    write every latency in microseconds, one a line, in\n"
		"                          delivery order\n"
		"      --warmup-ms T       leave the values sent in the first T ms out of the\n"
		"                          latencies (default 0)\n"
		"  -h, --help              this text\n"
		"      --version           the library's version and wire version\n"
		"Its learner starts at the current instance: it does not replay the cluster's\n"
		"history. Exits 0 only when all N values were delivered. SIGUSR1 makes it submit\n"
		"no new value and end once those it submitted are delivered.\n",
		TAG_SIZE);
}

static int parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || text[0] == '+' || text[0] == ' ' ||
	    v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* A number option: on a bad value says which option, what it takes and what it got. */
static int option_u64(const char *option, const char *text, uint64_t min, uint64_t max,
		      uint64_t *out)
{
	if (parse_u64(text, min, max, out) == 0)
		return 0;
	fprintf(stderr,
		"paxos-client: %s: expected a number in %" PRIu64 "..%" PRIu64 ", not '%s'\n",
		option, min, max, text);
	return -1;
}

/* "N" or "MIN-MAX" bytes, TAG_SIZE..max_value each, MIN <= MAX. */
static int parse_size(const char *text, uint32_t max_value, uint32_t *lo, uint32_t *hi)
{
	char buf[64];
	if (strlen(text) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", text);
	char *dash = strchr(buf, '-');
	uint64_t a, b;
	if (dash)
		*dash = '\0';
	if (parse_u64(buf, TAG_SIZE, max_value, &a))
		return -1;
	b = a;
	if (dash && parse_u64(dash + 1, a, max_value, &b))
		return -1;
	*lo = (uint32_t)a;
	*hi = (uint32_t)b;
	return 0;
}

int main(int argc, char **argv)
{
	enum {
		OPT_ID = 256,
		OPT_JSON,
		OPT_RATE,
		OPT_LATENCIES,
		OPT_WARMUP,
		OPT_COUNTERS,
		OPT_PARTITION,
		OPT_PARTITIONS,
		OPT_SPREAD,
		OPT_KEYS,
		OPT_VERSION
	};
	static const struct option options[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"count", required_argument, NULL, 'n'},
	    {"size", required_argument, NULL, 's'},
	    {"outstanding", required_argument, NULL, 'k'},
	    {"resubmit-ms", required_argument, NULL, 'r'},
	    {"time-limit", required_argument, NULL, 't'},
	    {"log", required_argument, NULL, 'l'},
	    {"id", required_argument, NULL, OPT_ID},
	    {"partition", required_argument, NULL, OPT_PARTITION},
	    {"partitions", required_argument, NULL, OPT_PARTITIONS},
	    {"spread", required_argument, NULL, OPT_SPREAD},
	    {"keys", required_argument, NULL, OPT_KEYS},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"counters", no_argument, NULL, OPT_COUNTERS},
	    {"rate", required_argument, NULL, OPT_RATE},
	    {"warmup-ms", required_argument, NULL, OPT_WARMUP},
	    {"latencies", required_argument, NULL, OPT_LATENCIES},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, OPT_VERSION},
	    {NULL, 0, NULL, 0}};
	const char *config = NULL, *size = "64", *log_path = NULL;
	const char *count_text = "1000", *k_text = NULL, *resubmit_text = "1000",
		   *limit_text = "120";
	const char *id_text = NULL, *rate_text = NULL, *latencies_path = NULL, *warmup_text = "0";
	const char *partition_text = "0", *partitions_text = NULL, *spread_text = NULL,
		   *keys_text = NULL;
	bool json = false, counters = false;
	int opt;
	opterr = 0; /* its messages name the program by its path: ours name the option */
	while ((opt = getopt_long(argc, argv, ":c:n:s:k:r:t:l:h", options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			config = optarg;
			break;
		case 'n':
			count_text = optarg;
			break;
		case 's':
			size = optarg;
			break;
		case 'k':
			k_text = optarg;
			break;
		case 'r':
			resubmit_text = optarg;
			break;
		case 't':
			limit_text = optarg;
			break;
		case 'l':
			log_path = optarg;
			break;
		case OPT_ID:
			id_text = optarg;
			break;
		case OPT_PARTITION:
			partition_text = optarg;
			break;
		case OPT_PARTITIONS:
			partitions_text = optarg;
			break;
		case OPT_SPREAD:
			spread_text = optarg;
			break;
		case OPT_KEYS:
			keys_text = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_COUNTERS:
			counters = true;
			break;
		case OPT_RATE:
			rate_text = optarg;
			break;
		case OPT_LATENCIES:
			latencies_path = optarg;
			break;
		case OPT_WARMUP:
			warmup_text = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			paxos_runner_version("paxos-client");
			return 0;
		case ':':
			fprintf(stderr, "paxos-client: %s: needs a value (see --help)\n",
				argv[optind - 1]);
			return 2;
		default:
			/* getopt sets optopt for a known long option given a value it does not
			 * take (--json=1), 0 for an unknown one, the letter for a short one. */
			if (strncmp(argv[optind - 1], "--", 2) != 0)
				fprintf(stderr, "paxos-client: unknown option '-%c' (see --help)\n",
					optopt);
			else if (optopt)
				fprintf(stderr, "paxos-client: %s: takes no value (see --help)\n",
					argv[optind - 1]);
			else
				fprintf(stderr, "paxos-client: unknown option '%s' (see --help)\n",
					argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr,
			"paxos-client: unexpected argument '%s' (options take the forms in "
			"--help)\n",
			argv[optind]);
		return 2;
	}
	if (!config) {
		fprintf(stderr, "paxos-client: -c/--config FILE is required (see --help)\n");
		return 2;
	}
	struct client c = {0};
	uint64_t k, resubmit_ms, limit_s, warmup_ms, id = (uint64_t)getpid();
	if (!k_text)
		k_text = rate_text ? "1024" : "1";
	if (option_u64("--count", count_text, 1, 100000000, &c.count) ||
	    option_u64("--outstanding", k_text, 1, 100000, &k) ||
	    (rate_text && option_u64("--rate", rate_text, 1, 10000000, &c.rate)) ||
	    option_u64("--warmup-ms", warmup_text, 0, 3600000, &warmup_ms) ||
	    option_u64("--resubmit-ms", resubmit_text, 1, 3600000, &resubmit_ms) ||
	    option_u64("--time-limit", limit_text, 1, 86400, &limit_s) ||
	    (id_text && option_u64("--id", id_text, 0, UINT32_MAX, &id)))
		return 2;
	struct paxos_config cfg;
	if (paxos_runner_config("paxos-client", config, &cfg))
		return 2;
	uint64_t partition, spread = 1;
	if (option_u64("--partition", partition_text, 0, cfg.partitions - 1, &partition) ||
	    (partitions_text &&
	     option_u64("--partitions", partitions_text, 1, cfg.partitions, &spread)))
		return 2;
	if (partitions_text && partition != 0) {
		fprintf(stderr, "paxos-client: --partition and --partitions exclude each other\n");
		return 2;
	}
	if ((spread_text || keys_text) && !partitions_text) {
		fprintf(stderr, "paxos-client: %s needs --partitions N\n",
			spread_text ? "--spread" : "--keys");
		return 2;
	}
	if (spread_text && strcmp(spread_text, "rr") != 0 && strcmp(spread_text, "key") != 0) {
		fprintf(stderr, "paxos-client: --spread: expected rr or key, not '%s'\n",
			spread_text);
		return 2;
	}
	c.spread_key = spread_text && strcmp(spread_text, "key") == 0;
	if (keys_text && !c.spread_key) {
		fprintf(stderr, "paxos-client: --keys needs --spread key\n");
		return 2;
	}
	c.keys = 1024;
	if (keys_text && option_u64("--keys", keys_text, 1, UINT64_MAX, &c.keys))
		return 2;
	c.part_count = (uint32_t)spread;
	for (uint32_t p = 0; p < c.part_count; p++)
		c.parts[p] =
		    (struct part){.c = &c, .partition = partitions_text ? p : (uint32_t)partition};
	/* Only its own values matter to the client: replaying the history of a long-running
	 * cluster first (learner-start first) would stall them, and resubmit them, for as long
	 * as the replay takes. */
	cfg.learner_start = PAXOS_START_FROM_CURRENT;
	/* The largest value follows max-datagram: known only once the configuration is read. */
	uint32_t max_value = paxos_config_max_value(&cfg);
	if (parse_size(size, max_value, &c.size_min, &c.size_max)) {
		fprintf(
		    stderr,
		    "paxos-client: --size: expected N or MIN-MAX bytes, each %u..%u (max-datagram "
		    "%u), not '%s'\n",
		    TAG_SIZE, max_value, cfg.max_datagram, size);
		return 2;
	}
	c.outstanding = (uint32_t)k;
	c.resubmit = resubmit_ms * 1000;
	c.warmup = warmup_ms * 1000;
	c.id = (uint32_t)id;
	c.rng = 0x9e3779b97f4a7c15ull ^ id;
	c.slots = calloc(c.outstanding, sizeof(*c.slots));
	c.latency_us = calloc(c.count, sizeof(*c.latency_us));
	c.latency_part = calloc(c.count, sizeof(*c.latency_part));
	c.slot_of_mask = 1;
	while (c.slot_of_mask < 4 * c.outstanding)
		c.slot_of_mask <<= 1;
	c.slot_of = calloc(c.slot_of_mask--, sizeof(*c.slot_of));
	c.free_slots = calloc(c.outstanding, sizeof(*c.free_slots));
	if (!c.slots || !c.latency_us || !c.latency_part || !c.slot_of || !c.free_slots) {
		fprintf(stderr, "paxos-client: out of memory\n");
		return 1;
	}
	for (uint32_t i = 0; i < c.outstanding; i++)
		c.free_slots[c.free_count++] = c.outstanding - 1 - i;
	for (uint32_t i = 0; i < c.outstanding; i++)
		if (!(c.slots[i].buf = malloc(c.size_max))) {
			fprintf(stderr, "paxos-client: out of memory\n");
			return 1;
		}
	if (log_path && !(c.log = fopen(log_path, "w"))) {
		fprintf(stderr, "paxos-client: %s: %s\n", log_path, strerror(errno));
		return 1;
	}

	char err[256];
	/* The open loop's timer fires every 100 us or so: it needs the precise timer. */
	struct event_config *ecfg = event_config_new();
	if (ecfg && c.rate)
		event_config_set_flag(ecfg, EVENT_BASE_FLAG_PRECISE_TIMER);
	c.base = ecfg ? event_base_new_with_config(ecfg) : NULL;
	if (ecfg)
		event_config_free(ecfg);
	for (uint32_t p = 0; p < c.part_count; p++) {
		struct part *part = &c.parts[p];
		struct paxos_config part_cfg;
		part->node = NULL;
		if (c.base &&
		    paxos_config_partition(&cfg, part->partition, &part_cfg) == PAXOS_OK) {
			part->acceptors = part_cfg.acceptors;
			part->node = paxos_node_new(c.base, &part_cfg, err, sizeof(err));
		}
		if (!part->node ||
		    paxos_node_add_learner(part->node, client_on_deliver, part) != PAXOS_OK) {
			fprintf(stderr, "paxos-client: %s\n",
				part->node ? paxos_node_error(part->node) : err);
			return 1;
		}
		paxos_node_on_refused(part->node, client_on_refused, &c);
		/* One partition: the followers keep the values, a new leader has them. */
		if (cfg.partitions > 1)
			paxos_node_on_new_leader(part->node, client_on_new_leader, part);
	}
	c.node = c.parts[0].node;
	struct timeval check = {0, (suseconds_t)(resubmit_ms * 1000 / 4)};
	if (resubmit_ms >= 4000)
		check = (struct timeval){(time_t)(resubmit_ms / 4000), 0};
	struct timeval limit = {(time_t)limit_s, 0}, zero = {0, 0};
	struct event *resubmit_ev = event_new(c.base, -1, EV_PERSIST, client_on_resubmit_check, &c);
	struct event *start_ev = evtimer_new(c.base, client_on_start, &c);
	c.start_ev = start_ev;
	/* Two acceptor ticks (each resends the highest accepted instance), at most a second. */
	c.learner_wait =
	    (paxos_time)(cfg.acceptor_repeat_ms < 500 ? 2 * cfg.acceptor_repeat_ms : 1000) * 1000;
	struct event *deadline_ev = evtimer_new(c.base, client_on_deadline, &c);
	struct event *stall_ev = event_new(c.base, -1, EV_PERSIST, client_on_stall_check, &c);
	struct timeval stall_every = {0, 250000};
	c.heard_ms = 3 * cfg.acceptor_repeat_ms + 100;
	c.progress = paxos_now();
	event_add(stall_ev, &stall_every);
	struct event *sigint = evsignal_new(c.base, SIGINT, client_on_signal, c.base);
	struct event *sigterm = evsignal_new(c.base, SIGTERM, client_on_signal, c.base);
	struct event *sigusr1 = evsignal_new(c.base, SIGUSR1, client_on_drain, &c);
	/* Open loop: a tick per value at low rates, every 100 us at high ones (values due
	 * between two ticks go out together). */
	uint64_t tick_us = c.rate ? 1000000u / c.rate : 0;
	if (tick_us < 100)
		tick_us = 100;
	struct timeval tick = {(time_t)(tick_us / 1000000u), (suseconds_t)(tick_us % 1000000u)};
	struct event *rate_ev = event_new(c.base, -1, EV_PERSIST, client_on_rate_tick, &c);
	c.held_ev = evtimer_new(c.base, client_on_held_retry, &c);
	c.held_budget = HELD_BUDGET_STEP;
	if (c.rate)
		event_add(rate_ev, &tick);
	event_add(resubmit_ev, &check);
	event_add(start_ev, &zero);
	event_add(deadline_ev, &limit);
	event_add(sigint, NULL);
	event_add(sigterm, NULL);
	event_add(sigusr1, NULL);
	event_base_dispatch(c.base);

	int status = c.delivered == c.count ? 0 : 1;
	if (latencies_path && write_latencies(&c, latencies_path))
		status = 1;
	report(&c, json);
	for (uint32_t p = 0; counters && p < c.part_count; p++)
		paxos_node_report_counters(c.parts[p].node); /* bytes received count per value */
	struct event *evs[] = {resubmit_ev, start_ev, deadline_ev, sigint,  sigterm,
			       sigusr1,     rate_ev,  c.held_ev,   stall_ev};
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		event_free(evs[i]);
	for (uint32_t p = 0; p < c.part_count; p++)
		paxos_node_free(c.parts[p].node);
	event_base_free(c.base);
	if (c.log && fclose(c.log) != 0)
		status = 1;
	for (uint32_t i = 0; i < c.outstanding; i++)
		free(c.slots[i].buf);
	free(c.slots);
	free(c.slot_of);
	free(c.free_slots);
	free(c.latency_us);
	free(c.latency_part);
	return status;
}
