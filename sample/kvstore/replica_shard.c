/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One partition of a kvstore replica, on a thread of its own (replica_shard.h): its libevent
 * loop and libpaxos node (a learner, and with --acceptor and --proposer the acceptor and
 * proposer with this id), its store shard, the delivered commands applied in instance order
 * with each result multicast on the reply group, snapshots and the trims they allow, local
 * reads behind a read barrier, and a new log's fresh start.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>
#include <paxos/storage_backends.h>
#include <paxos/paxos.h>

#include "burn.h"
#include "command.h"
#include "kvconf.h"
#include "net.h"
#include "reply_conf.h"
#include "store.h"
#include "transfer.h"
#include "replica_shard.h"

static void stop(struct shard *s, int code)
{
	s->exit_code = code;
	event_base_loopbreak(s->base);
}

/* Trim up to where the policy allows: thesis 3.4.1, snapshot(i). Repeated from the timer,
 * since a trim request may be lost like any datagram. */
static void trim(struct shard *s)
{
	paxos_iid upto = 0;
	if (s->r->kcfg.trim == KV_TRIM_ALL)
		upto = kv_store_all_announced(s->store);
	else if (s->r->kcfg.trim == KV_TRIM_OWN)
		upto = s->snapshot_iid;
	if (upto == 0)
		return;
	if (upto > s->trim_iid)
		fprintf(stderr, "%s: trim: acceptors may drop instances up to %llu\n", s->name,
			(unsigned long long)upto);
	s->trim_iid = upto > s->trim_iid ? upto : s->trim_iid;
	if (paxos_node_trim(s->node, upto) != PAXOS_OK)
		fprintf(stderr, "%s: %s\n", s->name, paxos_node_error(s->node));
}

/* Tells the other replicas (through this partition's log, so all agree) that this one has a
 * snapshot of the partition. */
static void announce(struct shard *s)
{
	uint8_t generation[8];
	uint64_t g = paxos_node_generation(s->node);
	for (int i = 0; i < 8; i++)
		generation[i] = (uint8_t)(g >> (56 - 8 * i));
	struct kv_command c = {.op = KV_SNAPSHOT,
			       .client = s->r->id,
			       .seq = s->snapshot_iid,
			       .arg = {{generation, sizeof(generation)}}};
	size_t len = kv_command_encode(&c, s->buf, sizeof(s->buf));
	if (paxos_node_submit(s->node, s->buf, len) != PAXOS_OK)
		fprintf(stderr, "%s: %s\n", s->name, paxos_node_error(s->node));
}

/* Saves the shard as of the end of instance last_iid. Only called between instances. */
static void snapshot(struct shard *s)
{
	char err[PATH_MAX + 128];
	/* With membership-alpha, the configuration history goes with it: the changes chosen in
	 * the instances a trim removes are known to a replica started from it (or from a copy of
	 * it). It may be applied a little past last_iid: a history is the log's, whatever
	 * instance it was taken at, and the node ignores commands it delivers again. */
	const struct paxos_membership *m = paxos_node_membership(s->node);
	uint8_t history[PAXOS_MEMBERSHIP_ENCODED_MAX];
	size_t history_len = m ? paxos_membership_encode(m, history, sizeof(history)) : 0;
	/* The session table as of the end of last_iid, with the state it guards. */
	const struct paxos_session_table *t = paxos_node_session_table(s->node);
	size_t table_len = paxos_session_table_export_size(t);
	uint8_t *table = malloc(table_len);
	/* Of the log the store was built from: a replica started from it knows whether the
	 * acceptors serve another one by then. */
	kv_store_set_generation(s->store, paxos_node_generation(s->node));
	if (!table || paxos_session_table_export(t, table, table_len, &table_len) != PAXOS_OK ||
	    kv_store_save(s->store, s->dir, s->last_iid, history, history_len, table, table_len,
			  err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: snapshot failed: %s\n", s->name,
			table ? err : "out of memory");
		free(table);
		return;
	}
	free(table);
	s->snapshot_iid = s->last_iid;
	s->since_snapshot = 0;
	fprintf(stderr, "%s: snapshot at instance %llu (%zu keys, %llu commands)\n", s->name,
		(unsigned long long)s->snapshot_iid, kv_store_keys(s->store),
		(unsigned long long)kv_store_commands(s->store));
	/* Offered before the trim it allows: a replica that finds those instances trimmed
	 * fetches it. */
	if (kv_transfer_offer(s->node, s->dir, s->snapshot_iid, err, sizeof(err)) != 0)
		fprintf(stderr, "%s: cannot offer the snapshot: %s\n", s->name, err);
	if (s->r->kcfg.trim == KV_TRIM_ALL)
		announce(s);
	else
		trim(s);
}

static void send_reply(struct shard *s, struct kv_reply *reply)
{
	reply->replica = s->r->id;
	size_t len = kv_reply_encode(reply, s->buf, sizeof(s->buf));
	/* Unreliable on purpose: a client that misses it resubmits and is answered again. */
	if (len)
		sendto(s->reply_fd, s->buf, len, 0,
		       (const struct sockaddr *)&s->r->kcfg.reply_group,
		       sizeof(s->r->kcfg.reply_group));
}

/* A new leader of this partition may lack the commands that waited on the one before: the
 * clients are told, and submit theirs again at once (command.h). Every replica tells them. */
static void new_leader(void *arg, uint32_t proposer)
{
	struct shard *s = arg;
	struct kv_reply notice = {.status = KV_NEW_LEADER, .seq = s->partition, .iid = proposer};
	send_reply(s, &notice);
	fprintf(stderr, "%s: new leader: proposer %u; clients told\n", s->name, proposer);
}

/* An empty session table in place of the node's: the clients' numbers start over with the
 * log. Through an export of a new table, since a table is only ever replaced whole. */
static int empty_sessions(struct shard *s)
{
	struct paxos_session_table *t = paxos_node_session_table(s->node);
	struct paxos_session_table *empty = paxos_session_table_new(paxos_session_table_limit(t));
	size_t len = empty ? paxos_session_table_export_size(empty) : 0;
	uint8_t *bytes = empty ? malloc(len) : NULL;
	int rc = bytes ? paxos_session_table_export(empty, bytes, len, &len) : PAXOS_E_NOMEM;
	if (rc == PAXOS_OK)
		rc = paxos_session_table_import(t, bytes, len);
	free(bytes);
	paxos_session_table_free(empty);
	return rc;
}

/* The acceptors began a new log (every one of them lost the old log: a whole memory cluster
 * restarted), delivered from its instance 1 after this call. What the store holds is the old
 * log's, so it starts over empty, like the session table; the old log's snapshot is neither
 * offered to peers nor loaded at the next start. */
static void new_log(void *arg, uint64_t generation)
{
	struct shard *s = arg;
	if (s->exit_code)
		return;
	struct kv_store *store = kv_store_new(s->r->kcfg.replicas);
	if (!store || empty_sessions(s) != PAXOS_OK) {
		fprintf(stderr, "%s: new log %llu: out of memory: stopping\n", s->name,
			(unsigned long long)generation);
		kv_store_free(store);
		stop(s, 1);
		return;
	}
	kv_store_set_partition(store, s->partition, s->r->partitions);
	kv_store_set_generation(store, generation);
	fprintf(stderr,
		"%s: new log %llu: the acceptors lost the log this replica applied up to instance "
		"%llu; its %zu keys are dropped and the store starts over empty from instance 1\n",
		s->name, (unsigned long long)generation, (unsigned long long)s->last_iid,
		kv_store_keys(s->store));
	kv_store_free(s->store);
	s->store = store;
	s->last_iid = s->snapshot_iid = s->trim_iid = 0;
	s->since_snapshot = 0;
	s->new_logs++;
	paxos_node_on_snapshot_request(s->node, NULL, NULL);
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/snapshot", s->dir);
	if (unlink(path) != 0 && errno != ENOENT)
		fprintf(stderr, "%s: cannot remove the old log's %s: %s\n", s->name, path,
			strerror(errno));
}

/* Whether a snapshot announcement is of the log delivering it: one sent before the acceptors
 * began a new log speaks of the old log's instances. The same for every replica, which all
 * deliver it in the same log. Announcements that do not say are taken. */
static bool of_this_log(struct shard *s, const struct kv_command *c)
{
	if (c->arg[0].len != 8)
		return c->arg[0].len == 0;
	uint64_t g = 0;
	for (int i = 0; i < 8; i++)
		g = g << 8 | c->arg[0].data[i];
	return g == paxos_node_generation(s->node);
}

static void deliver(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)position;
	struct shard *s = arg;
	if (s->exit_code)
		return;
	struct kv_command c;
	struct kv_reply reply;
	if (kv_command_decode(v->data, v->len, &c) != 0) {
		s->ignored++; /* not ours (or an empty value): every replica skips it alike */
		return;
	}
	/* A client command comes through a session, which names its client and sequence number
	 * and has been applied once; a snapshot announcement is a replica's plain value. */
	bool session = paxos_node_delivery_session(s->node, &c.client, &c.seq);
	if (session == (c.op == KV_SNAPSHOT)) {
		s->plain_commands++;
		return;
	}
	if (c.op == KV_SNAPSHOT && !of_this_log(s, &c)) {
		s->ignored++;
		return;
	}
	switch (kv_store_apply(s->store, &c, iid, &reply)) {
	case KV_APPLIED:
		if (s->r->burn_rounds)
			s->burned += kv_burn(c.client ^ c.seq, s->r->burn_rounds);
		s->since_snapshot++;
		send_reply(s, &reply);
		break;
	case KV_ANNOUNCED:
		trim(s);
		break;
	case KV_INVALID:
		break;
	case KV_NOMEM:
		fprintf(stderr, "%s: out of memory at instance %llu: stopping\n", s->name,
			(unsigned long long)iid);
		stop(s, 1);
		break;
	}
}

/* The end of an instance: the store and the session table are as of its end, so a snapshot
 * taken now covers it. */
static void instance_end(void *arg, paxos_iid iid)
{
	struct shard *s = arg;
	if (s->exit_code)
		return;
	s->last_iid = iid;
	if (s->r->kcfg.snapshot_every && s->since_snapshot >= s->r->kcfg.snapshot_every)
		snapshot(s);
}

/* The barrier of a local read passed: every command chosen before the read came is applied
 * here, so the local table answers as the log would. */
static void read_ready(void *arg, int status, paxos_iid iid)
{
	struct local_read *q = arg;
	struct shard *s = q->s;
	q->used = false;
	if (status != PAXOS_OK)
		return; /* the client asks again */
	struct kv_bytes key = {q->key, q->key_len}, value = {NULL, 0};
	int found = kv_store_get(s->store, &key, &value);
	struct kv_reply r = {.status = found > 0    ? KV_OK
				       : found == 0 ? KV_NOT_FOUND
						    : KV_WRONG_PARTITION,
			     .client = q->client,
			     .seq = q->seq,
			     .iid = iid,
			     .replica = s->r->id,
			     .value = value};
	size_t len = kv_reply_encode(&r, s->buf, sizeof(s->buf));
	if (len)
		sendto(s->read_fd, s->buf, len, 0, (const struct sockaddr *)&q->from,
		       sizeof(q->from));
	s->reads++;
}

/* A get on the read port: answered behind a barrier. */
static void on_read(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct shard *s = arg;
	uint8_t buf[KV_COMMAND_HEADER + 2 + KV_MAX_FIELD];
	struct sockaddr_in from;
	socklen_t from_len = sizeof(from);
	ssize_t n;
	while ((n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &from_len)) >= 0) {
		struct kv_command c;
		if (kv_command_decode(buf, (size_t)n, &c) != 0 || c.op != KV_GET)
			continue;
		struct local_read *q = NULL;
		for (int i = 0; i < READS_WAITING && !q; i++)
			if (!s->reads_waiting[i].used)
				q = &s->reads_waiting[i];
		if (!q)
			continue; /* busy: the client asks again */
		*q = (struct local_read){.s = s,
					 .used = true,
					 .from = from,
					 .client = c.client,
					 .seq = c.seq,
					 .key_len = c.arg[0].len};
		memcpy(q->key, c.arg[0].data, c.arg[0].len);
		if (paxos_node_barrier(s->node, read_ready, q) != PAXOS_OK)
			q->used = false;
		from_len = sizeof(from);
	}
}

/* The read port of this shard (kvstore.conf read-port); -1 after saying why. */
static int open_reads(struct shard *s)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_addr = kv_multicast_interface(s->pcfg),
				.sin_port = htons((uint16_t)(s->r->kcfg.read_port + s->r->id +
							     s->r->kcfg.replicas * s->partition))};
	s->reads_waiting = calloc(READS_WAITING, sizeof(*s->reads_waiting));
	s->read_fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (!s->reads_waiting || s->read_fd < 0 ||
	    bind(s->read_fd, (const struct sockaddr *)&a, sizeof(a)) != 0) {
		fprintf(stderr, "%s: read port %s:%u: %s\n", s->name, inet_ntoa(a.sin_addr),
			(unsigned)ntohs(a.sin_port), strerror(errno));
		return -1;
	}
	s->read_ev = event_new(s->base, s->read_fd, EV_READ | EV_PERSIST, on_read, s);
	return s->read_ev && event_add(s->read_ev, NULL) == 0 ? 0 : -1;
}

/* The acceptors dropped instances this shard never applied, and another replica's snapshot
 * covers them: it becomes this shard's state (and its DIR/snapshot), and applying goes on
 * after it. */
static int install_snapshot(void *arg, paxos_iid iid, const void *bytes, size_t len)
{
	struct shard *s = arg;
	char err[PATH_MAX + 256];
	uint8_t *sessions = NULL;
	size_t sessions_len = 0;
	struct kv_store *store = kv_transfer_install(s->dir, s->r->kcfg.replicas, iid, bytes, len,
						     &sessions, &sessions_len, err, sizeof(err));
	if (!store) {
		fprintf(stderr, "%s: cannot install the snapshot a peer sent: %s\n", s->name, err);
		return PAXOS_E_INVALID;
	}
	/* A peer that did not hear the new log yet may offer the old log's state. */
	uint64_t its, ours = paxos_node_generation(s->node);
	if (kv_store_generation(store, &its) && its != ours) {
		fprintf(stderr,
			"%s: the snapshot a peer sent is of log %llu, and this replica applies log "
			"%llu: refused\n",
			s->name, (unsigned long long)its, (unsigned long long)ours);
		free(sessions);
		kv_store_free(store);
		return PAXOS_E_INVALID;
	}
	/* The commands the snapshot applied are the session table's: copies still in the log
	 * after it are dropped as they would be at the peer. */
	int rc = sessions ? paxos_session_table_import(paxos_node_session_table(s->node), sessions,
						       sessions_len)
			  : PAXOS_OK;
	free(sessions);
	if (rc != PAXOS_OK) {
		fprintf(stderr,
			"%s: the snapshot a peer sent has a session table this replica "
			"cannot take (%s)\n",
			s->name, paxos_strerror(rc));
		kv_store_free(store);
		return PAXOS_E_INVALID;
	}
	kv_store_set_partition(store, s->partition, s->r->partitions);
	kv_store_free(s->store);
	s->store = store;
	s->last_iid = s->snapshot_iid = iid;
	s->since_snapshot = 0;
	fprintf(stderr,
		"%s: installed a peer's snapshot: instances up to %llu, %zu keys, %llu commands; "
		"learning from instance %llu\n",
		s->name, (unsigned long long)iid, kv_store_keys(store),
		(unsigned long long)kv_store_commands(store), (unsigned long long)iid + 1);
	if (kv_transfer_offer(s->node, s->dir, iid, err, sizeof(err)) != 0)
		fprintf(stderr, "%s: cannot offer the snapshot: %s\n", s->name, err);
	return PAXOS_OK;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct shard *s = arg;
	if (s->r->kcfg.trim == KV_TRIM_ALL &&
	    kv_store_announced(s->store, s->r->id) < s->snapshot_iid)
		announce(s);
	trim(s);
}

/* dump in the shard's directory: its state as text (kv_store_dump), replaced atomically. */
static void dump(struct shard *s)
{
	char path[PATH_MAX + 8], tmp[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/dump", s->dir);
	snprintf(tmp, sizeof(tmp), "%s/dump.tmp", s->dir);
	FILE *f = fopen(tmp, "w");
	int rc = !f;
	if (f) {
		uint64_t duplicates = 0;
		paxos_session_table_stats(paxos_node_session_table(s->node), NULL, &duplicates,
					  NULL);
		fprintf(f, "# instance %llu, new logs %llu\nduplicates %llu\n",
			(unsigned long long)s->last_iid, (unsigned long long)s->new_logs,
			(unsigned long long)duplicates);
		rc = kv_store_dump(s->store, f);
		rc |= fclose(f);
	}
	if (rc || rename(tmp, path) != 0)
		fprintf(stderr, "%s: cannot write %s: %s\n", s->name, path, strerror(errno));
}

/* What the main thread asks: 'd' dump, 's' snapshot (if anything changed) and stop. */
static void on_control(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct shard *s = arg;
	char cmd[16];
	ssize_t n = read(fd, cmd, sizeof(cmd));
	for (ssize_t i = 0; i < n; i++) {
		if (cmd[i] == 'd') {
			dump(s);
		} else if (cmd[i] == 's' && !s->exit_code) {
			if (s->since_snapshot)
				snapshot(s);
			stop(s, 0);
			return;
		}
	}
}

/* The shard's newest snapshot if there is one; the learner starts right after it. */
static int load_state(struct shard *s)
{
	char err[PATH_MAX + 256];
	if (mkdir(s->dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "%s: %s: %s\n", s->name, s->dir, strerror(errno));
		return -1;
	}
	uint32_t replicas = s->r->kcfg.replicas;
	s->store =
	    kv_store_load(s->dir, replicas, &s->snapshot_iid, &s->membership, &s->membership_len,
			  &s->sessions, &s->sessions_len, err, sizeof(err));
	if (!s->store && err[0]) {
		fprintf(stderr, "%s: %s\n", s->name, err);
		return -1;
	}
	if (s->store)
		fprintf(stderr,
			"%s: loaded %s/snapshot: instances up to %llu, %zu keys, %llu commands; "
			"learning from instance %llu\n",
			s->name, s->dir, (unsigned long long)s->snapshot_iid,
			kv_store_keys(s->store), (unsigned long long)kv_store_commands(s->store),
			(unsigned long long)s->snapshot_iid + 1);
	else if ((s->store = kv_store_new(replicas)) != NULL)
		fprintf(stderr, "%s: no snapshot in %s: learning from instance 1\n", s->name,
			s->dir);
	else
		return -1;
	kv_store_set_partition(s->store, s->partition, s->r->partitions);
	s->last_iid = s->snapshot_iid;
	return 0;
}

/* The roles, in the order the node wants: learner start and snapshot installer first. */
static int host_roles(struct shard *s)
{
	char err[PATH_MAX + 256];
	struct paxos_node *n = s->node;
	uint32_t id = s->r->id;
	if (paxos_node_set_learner_start(n, s->last_iid + 1) != PAXOS_OK)
		goto fail;
	/* The snapshot's log: if the acceptors serve another, the store starts over (new_log). */
	uint64_t generation;
	if (s->snapshot_iid && kv_store_generation(s->store, &generation) &&
	    paxos_node_set_learner_generation(n, generation) != PAXOS_OK)
		goto fail;
	paxos_node_on_new_log(n, new_log, s);
	paxos_node_on_new_leader(n, new_leader, s);
	if (paxos_node_on_install_snapshot(n, install_snapshot, s) != PAXOS_OK)
		goto fail;
	if (s->snapshot_iid && kv_transfer_offer(n, s->dir, s->snapshot_iid, err, sizeof(err)) != 0)
		fprintf(stderr, "%s: cannot offer the snapshot: %s\n", s->name, err);
	/* The acceptor serves this partition if partition-acceptors says so, under its number
	 * in the partition's set. */
	uint32_t acceptor;
	if (s->r->acceptor &&
	    paxos_config_partition_acceptor(s->r->pcfg, s->partition, id, &acceptor) == PAXOS_OK) {
		struct paxos_storage *st =
		    paxos_storage_open(s->pcfg, acceptor, false, err, sizeof(err));
		if (!st) {
			fprintf(stderr, "%s: acceptor: %s\n", s->name, err);
			return -1;
		}
		if (paxos_node_add_acceptor(n, acceptor, st) != PAXOS_OK)
			goto fail;
		char storage[16];
		paxos_config_get(s->pcfg, "storage", storage, sizeof(storage));
		fprintf(stderr, "%s: acceptor %u, storage %s\n", s->name, acceptor, storage);
	}
	if (s->r->proposer && paxos_node_add_proposer(n, id) != PAXOS_OK)
		goto fail;
	if (paxos_node_add_learner(n, deliver, s) != PAXOS_OK)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "%s: %s\n", s->name, paxos_node_error(n));
	return -1;
}

/* Everything the shard's loop needs, made on its own thread; 0, or -1 after saying why. */
/* The history the snapshot carried, to the node before its roles (a newer one the node kept
 * in its acceptor's or proposer's directory wins). */
static int give_membership(struct shard *s)
{
	char text[32] = "0";
	paxos_config_get(s->pcfg, "membership-alpha", text, sizeof(text));
	uint32_t alpha = (uint32_t)strtoul(text, NULL, 10);
	struct paxos_membership *m =
	    paxos_membership_decode_history(s->membership, s->membership_len, alpha);
	if (!m) {
		fprintf(stderr,
			"%s: %s/snapshot carries a configuration history this paxos.conf cannot "
			"take (membership-alpha %u): start with the membership-alpha it was "
			"written with\n",
			s->name, s->dir, alpha);
		return -1;
	}
	int rc = paxos_node_set_membership_history(s->node, m);
	if (rc == PAXOS_OK)
		fprintf(stderr,
			"%s: configuration %u from the snapshot (applied to instance %llu)\n",
			s->name, paxos_membership_latest(m)->id,
			(unsigned long long)paxos_membership_applied(m));
	else
		fprintf(stderr, "%s: %s\n", s->name, paxos_node_error(s->node));
	paxos_membership_free(m);
	free(s->membership);
	s->membership = NULL;
	return rc == PAXOS_OK ? 0 : -1;
}

/* Sessions on the node, with the table the snapshot carried: the commands it applied before
 * the snapshot's end are known, and copies of them still in the log are dropped. */
static int give_sessions(struct shard *s)
{
	struct paxos_node *n = s->node;
	if (paxos_node_enable_sessions(n, s->r->kcfg.session_clients) != PAXOS_OK) {
		fprintf(stderr, "%s: %s\n", s->name, paxos_node_error(n));
		return -1;
	}
	int rc = s->sessions ? paxos_session_table_import(paxos_node_session_table(n), s->sessions,
							  s->sessions_len)
			     : PAXOS_OK;
	free(s->sessions);
	s->sessions = NULL;
	if (rc != PAXOS_OK)
		fprintf(stderr, "%s: %s/snapshot: its session table cannot be read (%s)%s\n",
			s->name, s->dir, paxos_strerror(rc),
			rc == PAXOS_E_FULL ? ": it holds more clients than session-clients" : "");
	return rc == PAXOS_OK ? 0 : -1;
}

static int open_shard(struct shard *s)
{
	char err[512];
	if (load_state(s) != 0)
		return -1;
	s->base = event_base_new();
	if (!s->base)
		return -1;
	s->node = paxos_node_new(s->base, s->pcfg, err, sizeof(err));
	if (!s->node) {
		fprintf(stderr, "%s: %s\n", s->name, err);
		return -1;
	}
	s->reply_fd = kv_net_sender(kv_multicast_interface(s->pcfg), kv_multicast_ttl(s->pcfg), err,
				    sizeof(err));
	if (s->reply_fd < 0) {
		fprintf(stderr, "%s: reply group: %s\n", s->name, err);
		return -1;
	}
	if (s->membership && give_membership(s) != 0)
		return -1;
	if (give_sessions(s) != 0 || open_reads(s) != 0)
		return -1;
	paxos_node_on_instance_end(s->node, instance_end, s);
	if (host_roles(s) != 0)
		return -1;
	uint32_t ms = s->r->kcfg.resubmit_ms;
	struct timeval every = {ms / 1000, (ms % 1000) * 1000};
	s->timer = event_new(s->base, -1, EV_PERSIST, on_timer, s);
	s->control_ev = event_new(s->base, s->control[0], EV_READ | EV_PERSIST, on_control, s);
	if (!s->timer || event_add(s->timer, &every) != 0 || !s->control_ev ||
	    event_add(s->control_ev, NULL) != 0)
		return -1;
	return 0;
}

void *run_shard(void *arg)
{
	struct shard *s = arg;
	if (open_shard(s) == 0) {
		event_base_dispatch(s->base);
		if (paxos_node_failed(s->node))
			s->exit_code = 1;
		fprintf(stderr,
			"%s: stopped at instance %llu: %llu commands applied, %zu keys, %llu local "
			"reads, %llu new logs\n",
			s->name, (unsigned long long)s->last_iid,
			(unsigned long long)kv_store_commands(s->store), kv_store_keys(s->store),
			(unsigned long long)s->reads, (unsigned long long)s->new_logs);
		if (s->plain_commands)
			fprintf(stderr,
				"%s: %llu client commands came without a session and were "
				"ignored\n",
				s->name, (unsigned long long)s->plain_commands);
		paxos_node_report_counters(s->node);
	} else {
		s->exit_code = 1;
	}
	if (s->control_ev)
		event_free(s->control_ev);
	if (s->read_ev)
		event_free(s->read_ev);
	if (s->read_fd >= 0)
		close(s->read_fd);
	free(s->reads_waiting);
	free(s->sessions);
	if (s->timer)
		event_free(s->timer);
	paxos_node_free(s->node);
	if (s->reply_fd >= 0)
		close(s->reply_fd);
	kv_store_free(s->store);
	free(s->membership);
	if (s->base)
		event_base_free(s->base);
	uint8_t p = (uint8_t)s->partition;
	if (write(s->r->done[1], &p, 1) != 1)
		abort(); /* the main thread would wait for ever */
	return NULL;
}
