/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The libevent adapter's set-up, timers and application interface, and the acceptor's and
 * learner's set-up; the proposer's is node_proposer.c, datagrams in and out are node_io.c.
 * They share parts.h.
 */
#include <paxos/epoch.h>
#include <paxos/storage_backends.h>
#include <paxos/options.h>
#include "log_line.h"
#include "parts.h"
#include "snapshot.h"

#include "batch.h"
#include "clock.h"
#include "recovery_fence.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "config_fields.h"

static const char *const role_names[PAXOS_ROLE_COUNT] = {"acceptor", "proposer", "learner",
							 "client"};

/* ---- timers ---- */

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct paxos_node *n = arg;
	if (n->learner.values_lazy)
		node_drain_values(n); /* values that came without votes */
	paxos_time now = paxos_now();
	/* A lean follower asks for nothing it does not read. */
	if (n->learner.core && !n->proposer.lean)
		paxos_learner_tick(n->learner.core, now, &n->net.out[PAXOS_ROLE_LEARNER].emitter);
	node_snapshot_tick(n, now);
	if (n->proposer.core)
		paxos_proposer_tick(n->proposer.core, now,
				    &n->net.out[PAXOS_ROLE_PROPOSER].emitter);
	node_membership_tick(n, now);
	node_version_choose(n, now);
}

static void on_acceptor_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct paxos_node *n = arg;
	if (n->acceptor.core && !n->failed) {
		node_version_choose(n, paxos_now());
		paxos_acceptor_set_age(n->acceptor.core, paxos_now() - n->acceptor.started);
		node_acceptor_run(n, paxos_acceptor_step_tick(n->acceptor.core));
		node_acceptor_waiting(n);
		node_acceptor_keep_served(n);
	}
	if (n->acceptor.serializer && !n->failed) {
		int rc = paxos_serializer_tick(n->acceptor.serializer,
					       &n->net.out[PAXOS_ROLE_ACCEPTOR].emitter);
		if (rc != PAXOS_OK)
			node_fail(n, rc, "serializer storage");
	}
	node_durable_poll(n);
}

static void on_report(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	paxos_node_report_counters(arg);
}

/* ---- set-up ---- */

struct paxos_node *paxos_node_new(struct event_base *base, const struct paxos_config *cfg,
				  char *err, size_t errlen)
{
	return paxos_node_new_on(base, cfg, paxos_transport_open, NULL, err, errlen);
}

struct paxos_node *paxos_node_new_on(struct event_base *base, const struct paxos_config *cfg,
				     paxos_transport_open_fn open, void *open_arg, char *err,
				     size_t errlen)
{
	struct paxos_node *n = calloc(1, sizeof(*n));
	if (!n) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	n->base = base;
	n->cfg = *cfg;
	n->timers.on_tick = on_tick;
	node_submit_init(n);
	if (cfg->partitions > 1)
		snprintf(n->partition_label, sizeof(n->partition_label), " partition %u",
			 cfg->partition);
	/* Members talk at least every acceptor tick (states) or heartbeat: an address silent for
	 * two of those has stopped, and a restarted member may take over its id. At most
	 * ORIGIN_SILENCE_MAX_MS: a restarted member is not kept out longer for slow ticks. */
	uint32_t quiet_ms = 2 * cfg->acceptor_repeat_ms > cfg->heartbeat_timeout_ms
				? 2 * cfg->acceptor_repeat_ms
				: cfg->heartbeat_timeout_ms;
	if (quiet_ms > ORIGIN_SILENCE_MAX_MS)
		quiet_ms = ORIGIN_SILENCE_MAX_MS;
	n->net.origins.silence = (paxos_time)quiet_ms * 1000;
	n->net.rx.header.role = PAXOS_ROLE_COUNT; /* no datagram is being handled */
	n->net.wire.spoken = PAXOS_WIRE_VERSION;
	n->max_value = paxos_config_max_value(cfg);
	n->net.payload_cap = cfg->max_datagram;
	/* Before any socket: a key that cannot be used stops the node before it sends. */
	if (cfg->auth_key_file[0]) {
		char why[2 * PAXOS_PATH_MAX + 128]; /* the sentence names the file twice */
		n->net.auth = paxos_auth_load_partition(cfg, why, sizeof(why));
		if (!n->net.auth) {
			snprintf(err, errlen, "auth-key-file %s", why);
			paxos_node_free(n);
			return NULL;
		}
		n->net.payload_cap -= PAXOS_AUTH_TAG_BYTES;
	}
	size_t dg = cfg->max_datagram;
	n->net.tx.buf = malloc(dg * (ENCODERS + TX_QUEUE));
	n->net.rx.msgs = calloc(RX_MESSAGES, sizeof(*n->net.rx.msgs));
	n->acceptor.own_votes = calloc(RX_MESSAGES, sizeof(*n->acceptor.own_votes));
	n->timers.flush = event_new(base, -1, 0, node_on_flush, n);
	paxos_decoder_init(&n->net.rx.decoder);
	if (!open)
		snprintf(n->error, sizeof(n->error), "no transport to open");
	n->net.transport =
	    open ? open(open_arg, base, cfg, node_deliver, n, n->error, sizeof(n->error)) : NULL;
	if (!n->net.tx.buf || !n->net.rx.msgs || !n->acceptor.own_votes || !n->timers.flush ||
	    !n->net.transport) {
		snprintf(err, errlen, "%s", !n->net.transport ? n->error : "out of memory");
		paxos_node_free(n);
		return NULL;
	}
	for (int r = 0; r < PAXOS_ROLE_COUNT; r++) {
		struct role_out *o = &n->net.out[r];
		o->node = n;
		o->role = (enum paxos_role)r;
		o->emitter.emit = node_emit;
		o->emitter.ctx = o;
		for (int g = 0; g < PAXOS_GROUP_COUNT; g++)
			o->enc[g].buf = n->net.tx.buf + dg * (size_t)(r * PAXOS_GROUP_COUNT + g);
	}
	for (size_t i = 0; i < TX_QUEUE; i++)
		n->net.tx.free[n->net.tx.free_count++] = n->net.tx.buf + dg * (ENCODERS + i);
	node_acceptor_homes(n);
	node_host(n, PAXOS_ROLE_CLIENT, 0);
	if (cfg->counters_interval_ms &&
	    node_add_timer(n, &n->timers.report, cfg->counters_interval_ms, on_report) !=
		PAXOS_OK) {
		snprintf(err, errlen, "%s", n->error);
		paxos_node_free(n);
		return NULL;
	}
	return n;
}

void paxos_node_free(struct paxos_node *n)
{
	if (!n)
		return;
	if (n->net.transport && n->timers.flush) {
		node_flush_all(n);
		node_durable_finish(n); /* the replies held for durability, once it is there */
	}
	struct event *timers[] = {n->timers.flush,  n->timers.tick,     n->timers.acceptor,
				  n->timers.report, n->timers.election, n->timers.learn,
				  n->timers.spare};
	for (size_t i = 0; i < sizeof(timers) / sizeof(timers[0]); i++)
		if (timers[i])
			event_free(timers[i]);
	node_sessions_free(n);
	if (n->net.transport)
		n->net.transport->ops->destroy(n->net.transport);
	paxos_acceptor_free(n->acceptor.core);
	paxos_serializer_free(n->acceptor.serializer);
	paxos_storage_destroy(n->storage);
	paxos_proposer_free(n->proposer.core);
	free(n->proposer.own_deferred);
	paxos_epoch_store_destroy(n->proposer.epoch.store);
	paxos_election_free(n->proposer.election);
	paxos_learner_free(n->learner.core);
	node_snapshot_free(n);
	node_membership_free_answers(n);
	node_keeper_free(n); /* before the history its thread may be writing from */
	paxos_membership_free(n->membership);
	paxos_decoder_destroy(&n->net.rx.decoder);
	node_hold_free(n);
	if (n->commits.ev)
		event_free(n->commits.ev);
	free(n->net.tx.buf);
	free(n->net.rx.msgs);
	free(n->acceptor.own_votes);
	paxos_auth_free(n->net.auth);
	node_admin_wipe(n);
	free(n);
}

int paxos_node_add_acceptor(struct paxos_node *n, uint32_t id, struct paxos_storage *st)
{
	if (n->acceptor.serializer) {
		node_set_error(n, "this node hosts a serializer, which replaces its acceptor");
		paxos_storage_destroy(st);
		return PAXOS_E_INVALID;
	}
	if (n->acceptor.core || !st || id >= n->cfg.acceptors) {
		node_set_error(n,
			       n->acceptor.core ? "this node already hosts an acceptor"
			       : !st            ? "acceptor needs a storage"
						: "acceptor id %u is not below acceptors (%u)",
			       id, n->cfg.acceptors);
		paxos_storage_destroy(st);
		return PAXOS_E_INVALID;
	}
	node_own_accepts(n, false); /* the acceptor reads the group */
	n->storage = st;
	node_host(n, PAXOS_ROLE_ACCEPTOR, id);
	int rc = node_host_member(n, PAXOS_ROLE_ACCEPTOR, id);
	if (rc != PAXOS_OK)
		return rc;
	struct paxos_acceptor_options o;
	paxos_acceptor_options_from_config(&o, &n->cfg, id);
	n->acceptor.core = paxos_acceptor_new(&o, st, &n->role_counters[PAXOS_ROLE_ACCEPTOR]);
	if (!n->acceptor.core) {
		node_set_error(n, "out of memory");
		return PAXOS_E_NOMEM;
	}
	rc = node_join_acceptors(n, id, st);
	if (rc == PAXOS_OK)
		rc = node_durable_init(n, st);
	if (rc != PAXOS_OK)
		return rc;
	/* A store in memory would grow with every instance: it keeps memory-retention of them.
	 * Durable stores keep everything until the application trims (paxos_node_trim). */
	if (strcmp(st->ops->name, "memory") == 0)
		paxos_acceptor_set_retention(n->acceptor.core, n->cfg.memory_retention);
	if (n->learner.core) /* trims go no further than it delivered */
		paxos_acceptor_decided(n->acceptor.core,
				       paxos_learner_next_iid(n->learner.core) - 1);
	node_spare_init(n, id);
	rc = node_join(n, PAXOS_GROUP_ACCEPTORS);
	if (rc == PAXOS_OK)
		rc = node_add_timer(n, &n->timers.acceptor, n->cfg.acceptor_repeat_ms,
				    on_acceptor_tick);
	/* Recovering: its first tick (hello, and the question to the proposers) goes out as soon
	 * as the loop runs, not one acceptor-repeat-ms later; it votes again once answered. */
	if (rc == PAXOS_OK && n->acceptor.recovering)
		event_active(n->timers.acceptor, EV_TIMEOUT, 0);
	/* A learning acceptor (thesis 3.7.5) learns through the node's learner: see on_closed. */
	if (rc == PAXOS_OK && n->cfg.learning_acceptors)
		rc = node_ensure_learner(n);
	if (rc == PAXOS_OK)
		rc = node_set_learner_reading(n);
	return rc;
}

int paxos_node_add_serializer(struct paxos_node *n, struct paxos_storage *st)
{
	if (n->acceptor.serializer || n->acceptor.core || n->proposer.core || !st) {
		node_set_error(n, n->acceptor.serializer ? "this node already hosts a serializer"
				  : !st                  ? "serializer needs a storage"
					: "a serializer replaces the acceptors and proposers: "
					  "it cannot share a node with them");
		paxos_storage_destroy(st);
		return PAXOS_E_INVALID;
	}
	n->storage = st;
	/* Learners take it for acceptor 0, whose accepted messages are final. */
	node_host(n, PAXOS_ROLE_ACCEPTOR, 0);
	n->acceptor.serializer =
	    paxos_serializer_new(st, n->max_value, &n->role_counters[PAXOS_ROLE_ACCEPTOR]);
	if (!n->acceptor.serializer) {
		node_set_error(n, "out of memory");
		return PAXOS_E_NOMEM;
	}
	/* Clients send to it as proposer 0 where members have addresses (unicast). */
	int rc = node_durable_init(n, st);
	if (rc == PAXOS_OK)
		rc = node_host_member(n, PAXOS_ROLE_ACCEPTOR, 0);
	if (rc == PAXOS_OK)
		rc = node_host_member(n, PAXOS_ROLE_PROPOSER, 0);
	if (rc == PAXOS_OK)
		rc = node_join(n, PAXOS_GROUP_SUBMIT);
	if (rc == PAXOS_OK)
		rc = node_join(n, PAXOS_GROUP_ACCEPTORS);
	if (rc == PAXOS_OK)
		rc = node_add_timer(n, &n->timers.acceptor, n->cfg.acceptor_repeat_ms,
				    on_acceptor_tick);
	return rc;
}

int paxos_node_set_learner_start(struct paxos_node *n, paxos_iid first)
{
	if (n->learner.core || first == 0) {
		node_set_error(n, n->learner.core ? "the learner has started already"
						  : "instances start at 1");
		return PAXOS_E_INVALID;
	}
	n->learner.app.learner_start = first;
	return PAXOS_OK;
}

int paxos_node_set_learner_generation(struct paxos_node *n, uint64_t generation)
{
	if (!n)
		return PAXOS_E_INVALID;
	if (n->learner.core) {
		node_set_error(n, "the learner has started already");
		return PAXOS_E_INVALID;
	}
	n->learner.app.learner_generation = generation;
	n->learner.app.learner_generation_known = true;
	return PAXOS_OK;
}

int paxos_node_keep_membership(struct paxos_node *n, const char *dir)
{
	if (!n || !dir || !dir[0] || n->mship.ready || !n->cfg.membership_alpha) {
		if (n)
			node_set_error(n, "paxos_node_keep_membership: %s",
				       !dir || !dir[0]  ? "no directory"
				       : n->mship.ready ? "call it before adding roles"
							: "needs membership-alpha");
		return PAXOS_E_INVALID;
	}
	return node_membership_keep_in(n, dir);
}

void paxos_node_on_trimmed(struct paxos_node *n, paxos_instances_trimmed_fn trimmed, void *arg)
{
	n->learner.app.trimmed = trimmed;
	n->learner.app.trimmed_arg = arg;
}

void paxos_node_on_new_log(struct paxos_node *n, paxos_new_log_fn new_log, void *arg)
{
	n->learner.app.new_log = new_log;
	n->learner.app.new_log_arg = arg;
}

void paxos_node_on_new_leader(struct paxos_node *n, paxos_new_leader_fn new_leader, void *arg)
{
	n->learner.app.new_leader = new_leader;
	n->learner.app.new_leader_arg = arg;
}

int paxos_node_add_learner(struct paxos_node *n, paxos_value_delivered_fn deliver, void *arg)
{
	if (n->learner.app.deliver || !deliver) {
		node_set_error(n, deliver ? "this node already hosts a learner"
					  : "a learner needs a deliver callback");
		return PAXOS_E_INVALID;
	}
	n->learner.app.deliver = deliver;
	n->learner.app.deliver_arg = arg;
	node_lean_end(n); /* the application needs the whole log: read it again from here */
	int rc = node_ensure_learner(n);
	return rc == PAXOS_OK ? node_set_learner_reading(n) : rc;
}

/* ---- application interface ---- */

const char *paxos_node_error(const struct paxos_node *n)
{
	return n->error;
}

const struct paxos_counters *paxos_node_counters(const struct paxos_node *n, enum paxos_role role)
{
	if ((unsigned)role >= PAXOS_ROLE_COUNT || !n->hosted[role])
		return NULL;
	return &n->role_counters[role];
}

const struct paxos_counters *paxos_node_transport_counters(const struct paxos_node *n)
{
	return &n->net.counters;
}

/* A role's counters for the report, into line: those of recovering lost state apart. An
 * acceptor that starts without its earlier state (memory storage, --fresh, a new store)
 * withholds its votes until the others answered, then rejects what came at or below the fence
 * it learned: the handshake of every such start, which plain counts would make read as
 * faults. */
static void format_role_counters(const struct paxos_counters *c, char *line, size_t cap)
{
	struct paxos_counters rest = *c, recovery = {0};
	recovery.votes_withheld = c->votes_withheld;
	recovery.fence_rejects = c->fence_rejects;
	recovery.recoveries = c->recoveries;
	rest.votes_withheld = rest.fence_rejects = rest.recoveries = 0;
	size_t n = paxos_counters_format(&rest, line, cap);
	if (!recovery.votes_withheld && !recovery.fence_rejects && !recovery.recoveries)
		return;
	if (n >= cap)
		return;
	int m = snprintf(line + n, cap - n, "%s%s: ", n ? "; " : "",
			 "recovery of lost state (expected after a start without it, no fault)");
	if (m > 0 && (size_t)m < cap - n)
		paxos_counters_format(&recovery, line + n + (size_t)m, cap - n - (size_t)m);
}

void paxos_node_report_counters(const struct paxos_node *n)
{
	char line[4096]; /* every counter as JSON, at 20 digits each */
	if (n->cfg.counters_json) {
		for (int r = 0; r < PAXOS_ROLE_COUNT; r++)
			if (n->hosted[r] && r != PAXOS_ROLE_CLIENT) {
				paxos_counters_json(&n->role_counters[r], role_names[r],
						    n->role_id[r], line, sizeof(line));
				paxos_logf(PAXOS_LOG_INFO, "%s", line);
			}
		paxos_counters_json(&n->net.counters, "transport", 0, line, sizeof(line));
		paxos_logf(PAXOS_LOG_INFO, "%s", line);
		return;
	}
	for (int r = 0; r < PAXOS_ROLE_COUNT; r++) {
		if (!n->hosted[r] || r == PAXOS_ROLE_CLIENT)
			continue;
		format_role_counters(&n->role_counters[r], line, sizeof(line));
		const struct paxos_counters *c = &n->role_counters[r];
		char derived[96] = "";
		if (c->instances_proposed) /* value batching at work (thesis 3.7.4) */
			snprintf(derived, sizeof(derived), " (values/instance %.2f)",
				 (double)c->values_proposed / (double)c->instances_proposed);
		else if (c->storage_flushes) /* pipelined commits: group commit at work */
			snprintf(derived, sizeof(derived), " (records/flush %.1f, us/flush %.0f)",
				 (double)c->storage_flush_records / (double)c->storage_flushes,
				 (double)c->storage_flush_us / (double)c->storage_flushes);
		paxos_logf(PAXOS_LOG_INFO, "paxos: counters%s %s %u: %s%s", n->partition_label,
			   role_names[r], n->role_id[r], line[0] ? line : "(none)", derived);
	}
	paxos_counters_format(&n->net.counters, line, sizeof(line));
	const struct paxos_counters *t = &n->net.counters;
	double sent = t->datagrams_sent ? (double)t->messages_sent / (double)t->datagrams_sent : 0;
	double got = t->datagrams_received
			 ? (double)t->messages_received / (double)t->datagrams_received
			 : 0;
	/* Message batching at work (thesis 3.7.3). */
	paxos_logf(PAXOS_LOG_INFO,
		   "paxos: counters%s transport: %s (messages/datagram sent %.2f received %.2f)",
		   n->partition_label, line[0] ? line : "(none)", sent, got);
}

int paxos_node_role_id(const struct paxos_node *n, enum paxos_role role, uint32_t *id)
{
	if ((unsigned)role >= PAXOS_ROLE_COUNT || !n->hosted[role])
		return PAXOS_E_INVALID;
	*id = n->role_id[role];
	return PAXOS_OK;
}

uint32_t paxos_node_leader(const struct paxos_node *n)
{
	return n->proposer.election ? paxos_election_leader(n->proposer.election)
				    : PAXOS_MAX_PROPOSERS;
}

bool paxos_node_quorum_heard(const struct paxos_node *n)
{
	return n->proposer.election && paxos_election_eligible(n->proposer.election);
}

paxos_ballot paxos_node_ballot(const struct paxos_node *n)
{
	return n->proposer.core ? paxos_proposer_ballot(n->proposer.core) : 0;
}

uint32_t paxos_node_pending(const struct paxos_node *n)
{
	return n->proposer.core ? paxos_proposer_pending(n->proposer.core) : 0;
}

uint32_t paxos_node_window_in_use(const struct paxos_node *n)
{
	return n->proposer.core ? paxos_proposer_window_in_use(n->proposer.core) : 0;
}

paxos_iid paxos_node_highest_seen(const struct paxos_node *n)
{
	return n->learner.core ? paxos_learner_highest_seen(n->learner.core) : 0;
}

paxos_iid paxos_node_highest_accepted(const struct paxos_node *n)
{
	return n->storage ? n->storage->ops->highest_accepted(n->storage) : 0;
}

paxos_iid paxos_node_trimmed(const struct paxos_node *n)
{
	return n->storage ? n->storage->ops->trim_iid(n->storage) : 0;
}

bool paxos_node_recovering(const struct paxos_node *n)
{
	return n->acceptor.core && paxos_acceptor_recovering(n->acceptor.core);
}

int paxos_node_storage_space(const struct paxos_node *n, uint64_t *used, uint64_t *limit)
{
	return paxos_storage_space(n->storage, used, limit);
}

int paxos_node_failed(const struct paxos_node *n)
{
	return n->failed;
}

uint32_t paxos_node_partition(const struct paxos_node *n, uint32_t *count)
{
	if (count)
		*count = n ? n->cfg.partitions : 0;
	return n ? n->cfg.partition : 0;
}

paxos_iid paxos_node_next_iid(const struct paxos_node *n)
{
	return n->learner.core ? paxos_learner_next_iid(n->learner.core) : 0;
}

uint64_t paxos_node_generation(const struct paxos_node *n)
{
	return n->learner.core ? paxos_learner_generation(n->learner.core) : 0;
}

/* The learner's answer, unpacked like a delivery (see deliver_batch). */
static void on_fetched(void *arg, paxos_iid iid, int status, const struct paxos_value *v)
{
	struct node_fetch *f = arg;
	paxos_value_fetched_fn done = f->done;
	void *done_arg = f->arg;
	f->done = NULL; /* free before the calls, which may fetch again */
	uint32_t count = 0;
	if (status == PAXOS_OK && (paxos_batch_is_skip(v) || paxos_membership_is_command(v))) {
		done(done_arg, iid, PAXOS_OK, 0, 0, NULL); /* no client value there */
		return;
	}
	if (status == PAXOS_OK && paxos_batch_count(v, &count) != PAXOS_OK)
		status = PAXOS_E_MALFORMED;
	if (status != PAXOS_OK) {
		done(done_arg, iid, status, 0, 0, NULL);
		return;
	}
	struct paxos_batch_iter it;
	struct paxos_value one;
	paxos_batch_iter_init(&it, v);
	for (uint32_t position = 0; paxos_batch_next(&it, &one) == 1; position++)
		done(done_arg, iid, PAXOS_OK, position, count, &one);
}

int paxos_node_fetch(struct paxos_node *n, paxos_iid iid, paxos_value_fetched_fn done, void *arg)
{
	if (!n->learner.core || iid == 0 || !done) {
		node_set_error(n, "paxos_node_fetch: %s",
			       !n->learner.core ? "this node hosts no learner"
			       : iid == 0       ? "instances start at 1"
						: "done is NULL");
		return PAXOS_E_INVALID;
	}
	struct node_fetch *f = NULL;
	for (uint32_t i = 0; i < PAXOS_LEARNER_MAX_FETCHES && !f; i++)
		if (!n->learner.app.fetches[i].done)
			f = &n->learner.app.fetches[i];
	int rc = f ? paxos_learner_fetch(n->learner.core, iid, paxos_now(), on_fetched, f,
					 &n->net.out[PAXOS_ROLE_LEARNER].emitter)
		   : PAXOS_E_FULL;
	if (rc != PAXOS_OK) {
		node_set_error(n, "paxos_node_fetch: %u fetches are outstanding already",
			       PAXOS_LEARNER_MAX_FETCHES);
		return rc;
	}
	f->done = done;
	f->arg = arg;
	return rc;
}
