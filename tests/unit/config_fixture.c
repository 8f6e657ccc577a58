/* SPDX-License-Identifier: BSD-3-Clause */
/* The paxos.conf parser tests' harness (config_fixture.h). */
#include "config_fixture.h"

#include <check.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <paxos/config.h>

char parse_err[512];

int parse(struct paxos_config *cfg, const char *text)
{
	return paxos_config_parse(cfg, text, strlen(text), "test.conf", parse_err,
				  sizeof(parse_err));
}

static bool endpoint_equal(const struct paxos_endpoint *a, const struct paxos_endpoint *b)
{
	return a->addr.s_addr == b->addr.s_addr && a->port == b->port;
}

/* Field by field: struct copies need not preserve padding, so memcmp would lie. */
bool config_equal(const struct paxos_config *a, const struct paxos_config *b)
{
	for (int g = 0; g < PAXOS_GROUP_COUNT; g++)
		if (!endpoint_equal(&a->groups[g], &b->groups[g]))
			return false;
	for (unsigned i = 0; i < PAXOS_MAX_ACCEPTORS; i++)
		if (!endpoint_equal(&a->acceptor_address[i], &b->acceptor_address[i]))
			return false;
	for (unsigned i = 0; i < PAXOS_MAX_PROPOSERS; i++)
		if (!endpoint_equal(&a->proposer_address[i], &b->proposer_address[i]))
			return false;
	return a->transport == b->transport &&
	       a->subscription_lease_ms == b->subscription_lease_ms &&
	       a->multicast_interface.s_addr == b->multicast_interface.s_addr &&
	       a->multicast_ttl == b->multicast_ttl && a->max_datagram == b->max_datagram &&
	       a->socket_buffer == b->socket_buffer && a->acceptors == b->acceptors &&
	       a->proposers == b->proposers && a->leader == b->leader &&
	       a->proposer_window == b->proposer_window &&
	       a->proposer_concurrency == b->proposer_concurrency &&
	       a->pending_size == b->pending_size && a->phase1_timeout_ms == b->phase1_timeout_ms &&
	       a->phase2_timeout_ms == b->phase2_timeout_ms &&
	       a->adaptive_timeouts == b->adaptive_timeouts &&
	       a->timeout_floor_ms == b->timeout_floor_ms &&
	       a->timeout_ceiling_ms == b->timeout_ceiling_ms &&
	       a->learner_window == b->learner_window && a->hole_check_ms == b->hole_check_ms &&
	       a->repeat_batch == b->repeat_batch && a->learner_start == b->learner_start &&
	       a->acceptor_repeat_ms == b->acceptor_repeat_ms &&
	       a->counters_interval_ms == b->counters_interval_ms &&
	       a->counters_json == b->counters_json && strcmp(a->storage, b->storage) == 0 &&
	       strcmp(a->storage_path, b->storage_path) == 0 && a->durability == b->durability &&
	       a->lmdb_map_size == b->lmdb_map_size && a->storage_fresh == b->storage_fresh &&
	       a->storage_flush_thread == b->storage_flush_thread &&
	       a->learning_acceptors == b->learning_acceptors &&
	       a->memory_retention == b->memory_retention &&
	       a->value_batch_limit == b->value_batch_limit &&
	       a->proposer_max_backlog == b->proposer_max_backlog &&
	       strcmp(a->auth_key_file, b->auth_key_file) == 0 &&
	       endpoint_equal(&a->metrics_listen, &b->metrics_listen);
}

void expect_endpoint(const struct paxos_endpoint *e, const char *addr, uint16_t port)
{
	char text[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &e->addr, text, sizeof(text));
	ck_assert_str_eq(text, addr);
	ck_assert_uint_eq(e->port, port);
}

/* Parses text, expects PAXOS_E_CONFIG and exactly the error message want. */
void expect_error(const char *text, const char *want)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	ck_assert_int_eq(parse(&cfg, text), PAXOS_E_CONFIG);
	ck_assert_str_eq(parse_err, want);
}

/* Parses text, expects PAXOS_E_CONFIG with an error that starts with prefix. */
void expect_error_prefix(const char *text, const char *prefix)
{
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	ck_assert_int_eq(parse(&cfg, text), PAXOS_E_CONFIG);
	ck_assert_msg(strncmp(parse_err, prefix, strlen(prefix)) == 0,
		      "'%s' does not start with '%s'", parse_err, prefix);
}

/* The repository root: $PAXOS_SOURCE_DIR, else three levels up from this file. */
void source_path(char *out, size_t cap, const char *relative)
{
	const char *env = getenv("PAXOS_SOURCE_DIR");
	if (env && *env) {
		snprintf(out, cap, "%s/%s", env, relative);
		return;
	}
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s", __FILE__);
	for (int up = 0; up < 3; up++) {
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		else
			snprintf(dir, sizeof(dir), "..");
	}
	snprintf(out, cap, "%s/%s", dir, relative);
}
