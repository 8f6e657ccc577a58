/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-oracle: the leader oracle of thesis 4.7. It tells every proposer who leads (or to go
 * back to electing the lowest-id live proposer) and exits. UDP may lose a datagram, so the
 * order is sent several times; proposers obey each copy the same way. Each copy carries the
 * time it is sent: a proposer takes only a fresh order (paxos_leader.sent_at).
 */
#include <paxos/config.h>
#include <paxos/message.h>
#include <paxos/transport.h>

#include "auth_key.h"
#include "codec.h"
#include "runner.h"

#include <errno.h>
#include <event2/event.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "config_fields.h"

static void usage(FILE *out)
{
	fprintf(out, "Usage: paxos-oracle -c FILE (--leader N | --auto) [options]\n"
		     "Forces the leader among the proposers, or returns to automatic election.\n"
		     "  -c, --config FILE   cluster configuration (paxos.conf)\n"
		     "  -l, --leader N      proposer N leads until told otherwise\n"
		     "  -a, --auto          the live proposers lead again by the rule (the\n"
		     "                      lowest-id live one for one partition)\n"
		     "  -p, --partition P   the order is for partition P (default 0)\n"
		     "  -n, --repeat K      send the order K times (default 5)\n"
		     "  -i, --interval-ms T between copies (default 5)\n"
		     "  -h, --help          this text\n"
		     "      --version       the library's version and wire version\n");
}

static int parse_number(const char *text, unsigned long max, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || v > max)
		return -1;
	*out = v;
	return 0;
}

/* The oracle only sends. */
static void ignore_datagrams(void *arg, enum paxos_group g, struct paxos_rx_datagram *d, size_t n)
{
	(void)arg;
	(void)g;
	(void)d;
	(void)n;
}

static void sleep_ms(unsigned long ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Microseconds since the Unix epoch: what the proposers compare with their own clocks. */
static uint64_t wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* One copy of the order, stamped now and tagged when a key is on, into buf. */
static int encode_order(struct paxos_message *m, uint8_t *buf, uint32_t cap,
			struct paxos_auth *auth, size_t *len)
{
	struct paxos_encoder enc;
	struct paxos_header h = {.role = PAXOS_ROLE_CLIENT, .sender_id = 0};
	m->u.leader.sent_at = wall_now();
	paxos_encoder_init(&enc, buf, cap, &h);
	int rc = paxos_encoder_add(&enc, m);
	if (rc != PAXOS_OK)
		return rc;
	*len = enc.len;
	if (auth) {
		paxos_auth_seal(auth, buf, *len);
		*len += PAXOS_AUTH_TAG_BYTES;
	}
	return PAXOS_OK;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {{"config", required_argument, NULL, 'c'},
						{"leader", required_argument, NULL, 'l'},
						{"auto", no_argument, NULL, 'a'},
						{"partition", required_argument, NULL, 'p'},
						{"repeat", required_argument, NULL, 'n'},
						{"interval-ms", required_argument, NULL, 'i'},
						{"help", no_argument, NULL, 'h'},
						{"version", no_argument, NULL, 'V'},
						{NULL, 0, NULL, 0}};
	const char *config = NULL, *leader_text = NULL, *partition_text = "0";
	unsigned long repeat = 5, interval = 5;
	bool automatic = false;
	int opt;
	while ((opt = getopt_long(argc, argv, "c:l:ap:n:i:h", options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			config = optarg;
			break;
		case 'l':
			leader_text = optarg;
			break;
		case 'a':
			automatic = true;
			break;
		case 'p':
			partition_text = optarg;
			break;
		case 'n':
			if (parse_number(optarg, 1000, &repeat) || repeat == 0) {
				fprintf(stderr, "paxos-oracle: --repeat must be 1..1000\n");
				return 2;
			}
			break;
		case 'i':
			if (parse_number(optarg, 10000, &interval)) {
				fprintf(stderr, "paxos-oracle: --interval-ms must be 0..10000\n");
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			paxos_runner_version("paxos-oracle");
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!config || optind != argc || automatic == (leader_text != NULL)) {
		usage(stderr);
		return 2;
	}
	struct paxos_config cfg;
	uint32_t partition;
	if (paxos_runner_config("paxos-oracle", config, &cfg) ||
	    paxos_runner_id("paxos-oracle", "partition", partition_text, cfg.partitions,
			    &partition) ||
	    paxos_config_partition(&cfg, partition, &cfg) != PAXOS_OK)
		return 2;
	struct paxos_message m = {.type = PAXOS_MSG_LEADER};
	m.u.leader.leader_id = PAXOS_LEADER_AUTO;
	if (leader_text && paxos_runner_id("paxos-oracle", "leader", leader_text, cfg.proposers,
					   &m.u.leader.leader_id))
		return 2;

	char err[512];
	/* A keyed cluster drops orders without a tag: sign them like any node does. */
	struct paxos_auth *auth = NULL;
	uint32_t payload_cap = cfg.max_datagram;
	if (cfg.auth_key_file[0]) {
		auth = paxos_auth_load_partition(&cfg, err, sizeof(err));
		if (!auth) {
			fprintf(stderr, "paxos-oracle: auth-key-file %s\n", err);
			return 1;
		}
		payload_cap -= PAXOS_AUTH_TAG_BYTES;
	}
	/* The configured transport (multicast or unicast) reaches every proposer. */
	struct event_base *base = event_base_new();
	struct paxos_transport *net =
	    base ? paxos_transport_open(NULL, base, &cfg, ignore_datagrams, NULL, err, sizeof(err))
		 : NULL;
	uint8_t *buf = malloc(cfg.max_datagram);
	int status = 1;
	if (!net || !buf) {
		fprintf(stderr, "paxos-oracle: %s\n",
			!base  ? "cannot create an event loop"
			: !net ? err
			       : "out of memory");
		goto out;
	}
	unsigned long sent = 0;
	for (unsigned long k = 0; k < repeat; k++) {
		if (k && interval)
			sleep_ms(interval);
		size_t len;
		if (encode_order(&m, buf, payload_cap, auth, &len) != PAXOS_OK) {
			fprintf(stderr, "paxos-oracle: cannot encode the order\n");
			goto out;
		}
		struct paxos_tx_datagram d = {.to = PAXOS_GROUP_PROPOSERS, .data = buf, .len = len};
		net->ops->send(net, &d, 1);
		sent += d.sent;
	}
	if (sent == 0) {
		fprintf(stderr, "paxos-oracle: cannot send to the proposers\n");
		goto out;
	}
	if (automatic)
		fprintf(stderr, "paxos-oracle: proposers elect their leader again (%lu copies)\n",
			sent);
	else
		fprintf(stderr, "paxos-oracle: proposer %u leads (%lu copies)\n",
			m.u.leader.leader_id, sent);
	status = 0;
out:
	free(buf);
	if (net)
		net->ops->destroy(net);
	if (base)
		event_base_free(base);
	paxos_auth_free(auth);
	return status;
}
