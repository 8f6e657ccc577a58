/*
 * paxos-monitor: a learner that prints delivered values/s and kB/s every second (the thesis'
 * second kind of benchmark client, 4.1.2), optionally also as CSV.
 */
#include <paxos/paxos.h>

#include "clock.h"
#include "runner.h"

#include <errno.h>
#include <event2/event.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

struct monitor {
	uint64_t values, bytes, last_values, last_bytes;
	paxos_time started, last;
	FILE *csv;
};

static void on_deliver(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)iid;
	(void)position;
	struct monitor *m = arg;
	m->values++;
	m->bytes += v->len;
}

static void on_second(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct monitor *m = arg;
	paxos_time now = paxos_now();
	double dt = (double)(now - m->last) / 1e6, t = (double)(now - m->started) / 1e6;
	double vps = (double)(m->values - m->last_values) / dt;
	double kbps = (double)(m->bytes - m->last_bytes) / 1000.0 / dt;
	printf("%8.1f s  %10.0f values/s  %10.1f kB/s  %llu values in all\n", t, vps, kbps,
	       (unsigned long long)m->values);
	fflush(stdout);
	if (m->csv) {
		fprintf(m->csv, "%.3f,%.1f,%.1f,%llu\n", t, vps, kbps,
			(unsigned long long)m->values);
		fflush(m->csv);
	}
	m->last = now;
	m->last_values = m->values;
	m->last_bytes = m->bytes;
}

static void on_signal(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopexit(arg, NULL);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {{"config", required_argument, NULL, 'c'},
						{"csv", required_argument, NULL, 'o'},
						{"help", no_argument, NULL, 'h'},
						{NULL, 0, NULL, 0}};
	const char *config = NULL, *csv = NULL;
	int opt;
	while ((opt = getopt_long(argc, argv, "c:o:h", options, NULL)) != -1) {
		if (opt == 'c')
			config = optarg;
		else if (opt == 'o')
			csv = optarg;
		else {
			printf("usage: paxos-monitor -c FILE [--csv FILE]\n"
			       "Learns every value and prints values/s and kB/s each second.\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	struct paxos_config cfg;
	if (!config) {
		fprintf(stderr, "paxos-monitor: -c FILE is required\n");
		return 2;
	}
	if (paxos_runner_config("paxos-monitor", config, &cfg))
		return 2;
	struct monitor m = {0};
	if (csv) {
		if (!(m.csv = fopen(csv, "w"))) {
			fprintf(stderr, "paxos-monitor: %s: %s\n", csv, strerror(errno));
			return 1;
		}
		fprintf(m.csv, "seconds,values_per_s,kb_per_s,values_total\n");
	}
	char err[256];
	struct event_base *base = event_base_new();
	struct paxos_node *node = base ? paxos_node_new(base, &cfg, err, sizeof(err)) : NULL;
	if (!node || paxos_node_add_learner(node, on_deliver, &m) != PAXOS_OK) {
		fprintf(stderr, "paxos-monitor: %s\n", node ? paxos_node_error(node) : err);
		return 1;
	}
	m.started = m.last = paxos_now();
	struct timeval second = {1, 0};
	struct event *tick = event_new(base, -1, EV_PERSIST, on_second, &m);
	struct event *sigint = evsignal_new(base, SIGINT, on_signal, base);
	struct event *sigterm = evsignal_new(base, SIGTERM, on_signal, base);
	event_add(tick, &second);
	event_add(sigint, NULL);
	event_add(sigterm, NULL);
	event_base_dispatch(base);
	event_free(tick);
	event_free(sigint);
	event_free(sigterm);
	paxos_node_free(node);
	event_base_free(base);
	if (m.csv)
		fclose(m.csv);
	return 0;
}
