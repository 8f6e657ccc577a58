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
#include "cli.h"
#include "runner.h"

#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "config_fields.h"

static void usage(void *arg, FILE *out)
{
	(void)arg;
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

/* What the command line asks beside the shared options. */
struct order_options {
	const char *leader_text; /* --leader N, or NULL */
	bool automatic;          /* --auto */
	unsigned long repeat, interval;
};

static int take_option(void *arg, int opt, const char *value)
{
	struct order_options *o = arg;
	if (opt == 'l')
		o->leader_text = value;
	else if (opt == 'a')
		o->automatic = true;
	else if (opt == 'n') {
		if (parse_number(value, 1000, &o->repeat) || o->repeat == 0) {
			fprintf(stderr, "paxos-oracle: --repeat must be 1..1000\n");
			return 2;
		}
	} else if (opt == 'i') {
		if (parse_number(value, 10000, &o->interval)) {
			fprintf(stderr, "paxos-oracle: --interval-ms must be 0..10000\n");
			return 2;
		}
	} else
		return -1;
	return 0;
}

/* A keyed cluster drops orders without a tag: the key to sign them like any node does, and
 * the room the tag leaves in a datagram. Returns 0, or 1 after saying why. */
static int open_auth(const struct paxos_config *cfg, struct paxos_auth **auth, uint32_t *cap)
{
	char err[512];
	*auth = NULL;
	*cap = cfg->max_datagram;
	if (!cfg->auth_key_file[0])
		return 0;
	*auth = paxos_auth_load_partition(cfg, err, sizeof(err));
	if (!*auth) {
		fprintf(stderr, "paxos-oracle: auth-key-file %s\n", err);
		return 1;
	}
	*cap -= PAXOS_AUTH_TAG_BYTES;
	return 0;
}

/* Sends o->repeat copies of m, o->interval ms apart, to the proposers; counts in *sent the
 * copies the transport sent. Returns 0, or 1 after saying why. */
static int send_copies(const struct order_options *o, struct paxos_transport *net,
		       struct paxos_message *m, uint8_t *buf, uint32_t cap, struct paxos_auth *auth,
		       unsigned long *sent)
{
	*sent = 0;
	for (unsigned long k = 0; k < o->repeat; k++) {
		if (k && o->interval)
			sleep_ms(o->interval);
		size_t len;
		if (encode_order(m, buf, cap, auth, &len) != PAXOS_OK) {
			fprintf(stderr, "paxos-oracle: cannot encode the order\n");
			return 1;
		}
		struct paxos_tx_datagram d = {.to = PAXOS_GROUP_PROPOSERS, .data = buf, .len = len};
		net->ops->send(net, &d, 1);
		*sent += d.sent;
	}
	if (*sent == 0) {
		fprintf(stderr, "paxos-oracle: cannot send to the proposers\n");
		return 1;
	}
	return 0;
}

/* Sends the order over the configured transport (multicast or unicast), which reaches every
 * proposer, and says what it told them. Returns the exit status. */
static int send_order(const struct order_options *o, const struct paxos_config *cfg,
		      struct paxos_message *m)
{
	struct paxos_auth *auth;
	uint32_t payload_cap;
	if (open_auth(cfg, &auth, &payload_cap) != 0)
		return 1;
	char err[512];
	struct event_base *base = event_base_new();
	struct paxos_transport *net =
	    base ? paxos_transport_open(NULL, base, cfg, ignore_datagrams, NULL, err, sizeof(err))
		 : NULL;
	uint8_t *buf = malloc(cfg->max_datagram);
	unsigned long sent = 0;
	int status = 1;
	if (!net || !buf)
		fprintf(stderr, "paxos-oracle: %s\n",
			!base  ? "cannot create an event loop"
			: !net ? err
			       : "out of memory");
	else
		status = send_copies(o, net, m, buf, payload_cap, auth, &sent);
	if (status == 0 && o->automatic)
		fprintf(stderr, "paxos-oracle: proposers elect their leader again (%lu copies)\n",
			sent);
	else if (status == 0)
		fprintf(stderr, "paxos-oracle: proposer %u leads (%lu copies)\n",
			m->u.leader.leader_id, sent);
	free(buf);
	if (net)
		net->ops->destroy(net);
	if (base)
		event_base_free(base);
	paxos_auth_free(auth);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {{"leader", required_argument, NULL, 'l'},
						{"auto", no_argument, NULL, 'a'},
						{"repeat", required_argument, NULL, 'n'},
						{"interval-ms", required_argument, NULL, 'i'},
						{NULL}};
	static const struct paxos_cli_spec spec = {
	    "paxos-oracle", PAXOS_CLI_CONFIG | PAXOS_CLI_PARTITION, "l:an:i:", options, take_option,
	    usage};
	struct order_options o = {.repeat = 5, .interval = 5};
	struct paxos_cli cli;
	int status = paxos_cli_parse(&spec, &o, argc, argv, &cli);
	if (status != PAXOS_CLI_RUN)
		return status;
	if (!cli.config || cli.operands != argc || o.automatic == (o.leader_text != NULL)) {
		usage(NULL, stderr);
		return 2;
	}
	struct paxos_config cfg;
	if (paxos_cli_partition_config(&cli, &cfg) != 0)
		return 2;
	struct paxos_message m = {.type = PAXOS_MSG_LEADER};
	m.u.leader.leader_id = PAXOS_LEADER_AUTO;
	if (o.leader_text && paxos_runner_id("paxos-oracle", "leader", o.leader_text, cfg.proposers,
					     &m.u.leader.leader_id))
		return 2;
	return send_order(&o, &cfg, &m);
}
