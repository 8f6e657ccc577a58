/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-monitor: a learner that prints delivered values/s and kB/s every second, or every
 * --interval-ms (the thesis' second kind of benchmark client, 4.1.2), optionally also as CSV.
 * With --fetch it instead fetches the values of one past instance (thesis 3.3), prints them
 * and exits. With partitions it learns all of them (merged with learner-merge) or, with
 * --partition P, one.
 */
#include <paxos/paxos.h>

#include "clock.h"
#include "runner.h"

#include <errno.h>
#include <event2/event.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_fields.h"

struct monitor {
	uint64_t values, bytes, last_values, last_bytes;
	paxos_time started, last;
	/* Pauses in delivery: the longest one that ended in the current interval (thesis Fig.
	 * 4.5 measures failover by them). */
	paxos_time last_delivery, longest_pause;
	FILE *csv;
};

static void on_deliver(void *arg, uint32_t partition, paxos_iid iid, uint32_t position,
		       const struct paxos_value *v)
{
	(void)partition;
	(void)iid;
	(void)position;
	struct monitor *m = arg;
	paxos_time now = paxos_now();
	if (m->last_delivery && now - m->last_delivery > m->longest_pause)
		m->longest_pause = now - m->last_delivery;
	m->last_delivery = now;
	m->values++;
	m->bytes += v->len;
}

static void on_interval(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct monitor *m = arg;
	paxos_time now = paxos_now();
	double dt = (double)(now - m->last) / 1e6, t = (double)(now - m->started) / 1e6;
	uint64_t values = m->values - m->last_values;
	double vps = (double)values / dt;
	double kbps = (double)(m->bytes - m->last_bytes) / 1000.0 / dt;
	printf("%8.3f s  %10.0f values/s  %10.1f kB/s  %llu values in all\n", t, vps, kbps,
	       (unsigned long long)m->values);
	fflush(stdout);
	if (m->csv) {
		fprintf(m->csv, "%.3f,%.1f,%.1f,%llu,%llu,%.1f\n", t, vps, kbps,
			(unsigned long long)m->values, (unsigned long long)values,
			(double)m->longest_pause / 1000.0);
		fflush(m->csv);
	}
	m->last = now;
	m->last_values = m->values;
	m->last_bytes = m->bytes;
	m->longest_pause = 0;
}

static void on_signal(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopexit(arg, NULL);
}

/* --fetch: what came back, and the loop to stop once it is complete. */
struct fetch_result {
	struct event_base *base;
	int status;
};

static void on_fetched(void *arg, paxos_iid iid, int status, uint32_t position, uint32_t count,
		       const struct paxos_value *v)
{
	struct fetch_result *r = arg;
	r->status = status;
	if (status == PAXOS_OK)
		paxos_runner_write_value(stdout, iid, v);
	else
		fprintf(stderr, "paxos-monitor: instance %llu: %s\n", (unsigned long long)iid,
			paxos_strerror(status));
	if (status != PAXOS_OK || position + 1 == count)
		event_base_loopexit(r->base, NULL);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: paxos-monitor -c FILE [--csv FILE] [--interval-ms T] [--partition P]\n"
		"   or: paxos-monitor -c FILE [--partition P] --fetch IID\n"
		"Learns every value and prints values/s and kB/s every T ms (default 1000).\n"
		"The CSV has a line per interval: seconds since start, values/s, kB/s, values\n"
		"in all, values in the interval, and the longest pause between two deliveries\n"
		"that ended in it (ms).\n"
		"With several partitions it learns them all (in the merged order with\n"
		"learner-merge yes), or partition P alone with --partition P.\n"
		"--fetch IID asks the acceptors for the values of instance IID, prints them as\n"
		"'IID HEX' lines and exits: 0 on success, 1 if the instance was trimmed or\n"
		"nobody answered.\n"
		"--version prints the library's version and wire version.\n");
}

static int parse_number(const char *what, const char *text, uint64_t min, uint64_t max,
			uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || v < min || v > max) {
		fprintf(stderr, "paxos-monitor: %s '%s' must be a number from %llu to %llu\n", what,
			text, (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

/* Fetch mode: a learner that starts at iid (so it does not catch up on the past), asks for
 * iid and waits for the answer. */
static void ignore_value(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)arg;
	(void)iid;
	(void)position;
	(void)v;
}

static int fetch_one(struct event_base *base, struct paxos_node *node, paxos_iid iid)
{
	struct fetch_result r = {base, PAXOS_E_TIMEOUT};
	if (paxos_node_set_learner_start(node, iid) != PAXOS_OK ||
	    paxos_node_add_learner(node, ignore_value, NULL) != PAXOS_OK ||
	    paxos_node_fetch(node, iid, on_fetched, &r) != PAXOS_OK) {
		fprintf(stderr, "paxos-monitor: %s\n", paxos_node_error(node));
		return 1;
	}
	event_base_dispatch(base);
	fflush(stdout);
	return r.status == PAXOS_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
	    {"config", required_argument, NULL, 'c'},      {"csv", required_argument, NULL, 'o'},
	    {"interval-ms", required_argument, NULL, 'i'}, {"fetch", required_argument, NULL, 'f'},
	    {"partition", required_argument, NULL, 'p'},   {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},           {NULL, 0, NULL, 0}};
	const char *config = NULL, *csv = NULL;
	uint64_t interval_ms = 1000, fetch = 0, partition = UINT64_MAX;
	int opt;
	while ((opt = getopt_long(argc, argv, "c:o:i:f:h", options, NULL)) != -1) {
		if (opt == 'c')
			config = optarg;
		else if (opt == 'o')
			csv = optarg;
		else if (opt == 'i') {
			if (parse_number("interval-ms", optarg, 1, 3600000, &interval_ms))
				return 2;
		} else if (opt == 'f') {
			if (parse_number("fetch", optarg, 1, UINT64_MAX, &fetch))
				return 2;
		} else if (opt == 'p') {
			if (parse_number("partition", optarg, 0, PAXOS_MAX_PARTITIONS - 1,
					 &partition))
				return 2;
		} else if (opt == 'V') {
			paxos_runner_version("paxos-monitor");
			return 0;
		} else {
			usage(opt == 'h' ? stdout : stderr);
			return opt == 'h' ? 0 : 2;
		}
	}
	struct paxos_config cfg;
	if (!config || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (paxos_runner_config("paxos-monitor", config, &cfg))
		return 2;
	if (partition != UINT64_MAX && partition >= cfg.partitions) {
		fprintf(stderr, "paxos-monitor: partition %llu: %s has partitions %u (0..%u)\n",
			(unsigned long long)partition, config, cfg.partitions, cfg.partitions - 1);
		return 2;
	}
	uint64_t hosted = cfg.partitions >= 64 ? UINT64_MAX : (1ull << cfg.partitions) - 1;
	if (partition != UINT64_MAX) {
		hosted = 1ull << partition;
		cfg.learner_merge = false; /* one partition alone: its own order */
	} else if (fetch)
		hosted = 1; /* partition 0 */
	struct monitor m = {0};
	if (csv && !fetch) {
		if (!(m.csv = fopen(csv, "w"))) {
			fprintf(stderr, "paxos-monitor: %s: %s\n", csv, strerror(errno));
			return 1;
		}
		fprintf(m.csv,
			"seconds,values_per_s,kb_per_s,values_total,values,longest_pause_ms\n");
	}
	char err[256];
	struct event_base *base = event_base_new();
	struct paxos_partitions *group =
	    base ? paxos_partitions_new(base, &cfg, hosted, err, sizeof(err)) : NULL;
	if (!group) {
		fprintf(stderr, "paxos-monitor: %s\n", base ? err : "cannot create event loop");
		return 1;
	}
	if (fetch) {
		struct paxos_node *node =
		    paxos_partitions_node(group, partition == UINT64_MAX ? 0 : (uint32_t)partition);
		int status = fetch_one(base, node, fetch);
		paxos_partitions_free(group);
		event_base_free(base);
		return status;
	}
	if (paxos_partitions_add_learner(group, on_deliver, &m) != PAXOS_OK) {
		fprintf(stderr, "paxos-monitor: %s\n", paxos_partitions_error(group));
		return 1;
	}
	m.started = m.last = paxos_now();
	struct timeval every = {(time_t)(interval_ms / 1000),
				(suseconds_t)(interval_ms % 1000) * 1000};
	struct event *tick = event_new(base, -1, EV_PERSIST, on_interval, &m);
	struct event *sigint = evsignal_new(base, SIGINT, on_signal, base);
	struct event *sigterm = evsignal_new(base, SIGTERM, on_signal, base);
	event_add(tick, &every);
	event_add(sigint, NULL);
	event_add(sigterm, NULL);
	event_base_dispatch(base);
	event_free(tick);
	event_free(sigint);
	event_free(sigterm);
	paxos_partitions_free(group);
	event_base_free(base);
	if (m.csv)
		fclose(m.csv);
	return 0;
}
