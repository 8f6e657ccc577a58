/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node's acceptor: how it joins (its incarnation, recovery when it starts without its
 * earlier state, the floor and fence kept beside a durable store) and what the node does with
 * the acceptor's results (a duplicate stops the process, a finished recovery is logged and
 * kept, a storage failure is fatal).
 */
#include "log_line.h"
#include "parts.h"

#include <paxos/storage_backends.h>

#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "clock.h"
#include "recovery_fence.h"

/* While an acceptor waits to recover or to be restored, it says so this often for its first
 * minute of waiting, then twelve times less often. */
#define WAIT_LOG_MS 5000u
#define WAIT_LOG_LINES_OFTEN 12u

/* An incarnation tells two starts of one acceptor id apart: random, so that neither a clock
 * set wrong nor a replayed hello can pass for a start it is not. */
static uint64_t random_incarnation(void)
{
	uint64_t x = 0;
	while (x == 0) {
		if (getrandom(&x, sizeof(x), 0) != (ssize_t)sizeof(x)) {
			struct timespec
			    ts; /* no entropy source: the clock still differs per start */
			clock_gettime(CLOCK_REALTIME, &ts);
			x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		}
	}
	return x;
}

/*
 * Hellos with this start's incarnation, and recovery when the acceptor starts without
 * earlier state: volatile storage, or a store with nothing in it (a new or --fresh one, or
 * one that lost its disk: the same to us). A durable store that recovered before keeps its
 * floor and fence beside it.
 */
int node_join_acceptors(struct paxos_node *n, uint32_t id, struct paxos_storage *st)
{
	bool memory = strcmp(n->cfg.storage, "memory") == 0;
	bool empty = st->ops->highest_accepted(st) == 0 && st->ops->trim_iid(st) == 0;
	struct paxos_acceptor_membership m = {
	    .acceptors = n->cfg.acceptors,
	    .proposers = n->cfg.proposers,
	    .incarnation = random_incarnation(),
	    .recovery_ticks = PAXOS_RECOVERY_WAIT_MS / n->cfg.acceptor_repeat_ms + 1,
	    /* A tagged hello comes from a key holder; an untagged one from anyone. */
	    .duplicate_ticks = n->cfg.auth_key_file[0] ? 1 : PAXOS_DUPLICATE_TICKS_UNAUTHENTICATED,
	};
	char err[512];
	if (!memory &&
	    paxos_storage_dir(&n->cfg, id, n->acceptor.store_dir, sizeof(n->acceptor.store_dir)) ==
		PAXOS_OK &&
	    paxos_recovery_fence_read(n->acceptor.store_dir, &m.floor, &m.fence, err,
				      sizeof(err)) != PAXOS_OK) {
		node_set_error(n, "acceptor %u: %s", id, err);
		return PAXOS_E_IO;
	}
	/* The generation of the log it voted in last, whatever the storage (see
	 * acceptor/recovery.c): a new log is named above every acceptor's. */
	if (paxos_storage_dir(&n->cfg, id, n->acceptor.generation_dir,
			      sizeof(n->acceptor.generation_dir)) != PAXOS_OK ||
	    paxos_generation_read(n->acceptor.generation_dir, &m.generation, &m.served_before, err,
				  sizeof(err)) != PAXOS_OK) {
		node_set_error(n, "acceptor %u: %s", id,
			       n->acceptor.generation_dir[0] ? err : "storage-path too long");
		return PAXOS_E_IO;
	}
	n->acceptor.generation = m.generation;
	n->acceptor.generation_kept = m.served_before;
	/* A store that recovered before and accepted nothing since is still that store: its
	 * promises are in it and its fence beside it (--fresh deletes both). */
	m.amnesiac = memory || (empty && m.floor == 0 && m.fence == 0);
	/* The configurations this process learned (kept beside the store, whatever its kind),
	 * else paxos.conf's first one: recovery covers each it may have voted in. */
	if (n->cfg.membership_alpha) {
		char dir[PAXOS_PATH_MAX + 32];
		int rc = paxos_storage_dir(&n->cfg, id, dir, sizeof(dir));
		if (rc == PAXOS_OK)
			rc = node_membership_keep_in(n, dir);
		if (rc == PAXOS_OK)
			rc = node_membership_init(n);
		if (rc != PAXOS_OK)
			return rc;
		paxos_membership_voted_in(n->membership, id, m.configurations, m.configuration_ends,
					  PAXOS_ACCEPTOR_CONFIGURATIONS);
		/* The proposers of the set in force and of a change to it chosen already: every
		 * one of them may lead (a removed one refuses to). */
		m.proposer_set =
		    node_membership_proposers(n, paxos_membership_applied(n->membership) + 1) |
		    node_membership_proposers(n, UINT64_MAX); /* the newest configuration's */
	}
	if (paxos_acceptor_join(n->acceptor.core, &m) != PAXOS_OK) {
		node_set_error(n, "acceptor %u: cannot join %u acceptors and %u proposers", id,
			       m.acceptors, m.proposers);
		return PAXOS_E_INVALID;
	}
	n->acceptor.recovering = m.amnesiac;
	n->acceptor.incarnation = m.incarnation;
	n->acceptor.started = paxos_now();
	paxos_acceptor_set_age(n->acceptor.core, 1);
	if (m.amnesiac)
		paxos_logf(
		    PAXOS_LOG_INFO,
		    "paxos: acceptor %u: started without earlier state (incarnation %llu): "
		    "recovering, no votes until the other acceptors and the proposers answer",
		    id, (unsigned long long)m.incarnation);
	else if (m.floor || m.fence)
		paxos_logf(PAXOS_LOG_INFO,
			   "paxos: acceptor %u: votes only above instance %llu and ballot %llu, as "
			   "its recovery set (%s/recovery)",
			   id, (unsigned long long)m.floor, (unsigned long long)m.fence,
			   n->acceptor.store_dir);
	return PAXOS_OK;
}

/* The first log a store serves is kept too, its generation unchanged: a later start then
 * knows that the store served one (served_before, acceptor/recovery.c). No vote needs it, so
 * a failure (a full disk, no descriptor left) is said once and tried again at each tick. */
void node_acceptor_keep_served(struct paxos_node *n)
{
	if (n->acceptor.generation_kept || n->acceptor.recovering || !n->acceptor.core)
		return;
	char err[512];
	if (paxos_generation_write(n->acceptor.generation_dir, n->acceptor.generation, err,
				   sizeof(err)) == PAXOS_OK) {
		n->acceptor.generation_kept = true;
		return;
	}
	if (!n->acceptor.generation_warned)
		paxos_logf(PAXOS_LOG_WARNING,
			   "paxos: acceptor %u%s: %s; trying again each tick (it names the log "
			   "this store serves, so that a start begun anew by hand names a new one)",
			   n->role_id[PAXOS_ROLE_ACCEPTOR], n->partition_label, err);
	n->acceptor.generation_warned = true;
}

/*
 * The one straight line of the acceptor's path (the Ready pattern): what the step produced is
 * written in one transaction (one pipelined commit), then each message goes to the encoders
 * tagged with the storage commit it waits for: the commit of the write its ready tag names
 * (the node writes every ready as it comes, so that is the last one), or none. seal hands the
 * datagram to node_durable.c, which holds it until that commit is durable; a storage whose
 * commits return durable holds nothing. Then the acceptor advances.
 */
void node_acceptor_run(struct paxos_node *n, int rc)
{
	struct paxos_ready rd;
	int wrc = PAXOS_OK;
	if (paxos_acceptor_ready(n->acceptor.core, &rd)) {
		wrc = paxos_acceptor_write(n->storage, &rd);
		if (wrc == PAXOS_OK && rd.write != 0 && n->commits.ev)
			n->commits.acceptor_commit = n->storage->ops->committed(n->storage);
		const struct paxos_emitter *out = &n->net.out[PAXOS_ROLE_ACCEPTOR].emitter;
		for (size_t i = 0; i < rd.message_count && wrc == PAXOS_OK; i++) {
			const struct paxos_ready_message *r = &rd.messages[i];
			if (r->record != PAXOS_READY_NO_RECORD && rd.records[r->record].iid == 0)
				continue; /* the store could not hold what it reports */
			n->commits.emit_needs = r->after ? n->commits.acceptor_commit : 0;
			paxos_emit(out, r->to, &r->m);
		}
		n->commits.emit_needs = 0;
	}
	paxos_acceptor_advance(n->acceptor.core, wrc);
	node_acceptor_status(n, rc != PAXOS_OK ? rc : wrc);
}

void node_acceptor_status(struct paxos_node *n, int rc)
{
	uint32_t id = n->role_id[PAXOS_ROLE_ACCEPTOR];
	if (rc == PAXOS_E_DUPLICATE) {
		node_set_error(
		    n,
		    "acceptor %u: another acceptor %u (incarnation %llu) runs since before "
		    "this one (incarnation %llu) started",
		    id, id, (unsigned long long)paxos_acceptor_duplicate(n->acceptor.core),
		    (unsigned long long)n->acceptor.incarnation);
		n->failed = rc;
		paxos_logf(PAXOS_LOG_ERROR, "paxos: fatal: %s; this one stops", n->error);
		event_base_loopbreak(n->base);
		return;
	}
	if (rc != PAXOS_OK) {
		node_fail(n, rc, "acceptor storage");
		return;
	}
	/* An older duplicate heard, not yet on enough ticks to stop this one: said loudly, since
	 * it is either a second process with this id or a forged hello. */
	uint32_t older = paxos_acceptor_duplicate_older_heard(n->acceptor.core);
	if (older > n->acceptor.older_heard_logged)
		paxos_logf(
		    PAXOS_LOG_WARNING,
		    "paxos: acceptor %u: a hello says another acceptor %u (incarnation %llu) "
		    "runs since before this one (incarnation %llu); unauthenticated, so this "
		    "one stops only if that goes on for %u ticks (heard on %u)",
		    id, id, (unsigned long long)paxos_acceptor_duplicate(n->acceptor.core),
		    (unsigned long long)n->acceptor.incarnation,
		    PAXOS_DUPLICATE_TICKS_UNAUTHENTICATED, older);
	n->acceptor.older_heard_logged = older;
	const struct paxos_counters *c = &n->role_counters[PAXOS_ROLE_ACCEPTOR];
	/* A newer duplicate: it stops by itself, this one says so. (An older one makes this one
	 * stop: see above.) */
	if (c->duplicate_acceptors > n->acceptor.duplicates_logged &&
	    paxos_acceptor_duplicate_newer(n->acceptor.core)) {
		/* At most once a second's worth of hellos: one line per newer duplicate start. */
		if (n->acceptor.duplicates_logged == 0 ||
		    c->duplicate_acceptors - n->acceptor.duplicates_logged >= 10)
			paxos_logf(
			    PAXOS_LOG_INFO,
			    "paxos: acceptor %u: another acceptor %u (incarnation %llu) started "
			    "while this one runs; the newer one stops",
			    id, id, (unsigned long long)paxos_acceptor_duplicate(n->acceptor.core));
		n->acceptor.duplicates_logged = c->duplicate_acceptors;
	}
	if (n->acceptor.restoring && paxos_acceptor_restored(n->acceptor.core)) {
		n->acceptor.restoring = false;
		paxos_logf(PAXOS_LOG_INFO,
			   "paxos: acceptor %u: restored: holds the decisions up to instance %llu "
			   "again; another acceptor may restart now",
			   id, (unsigned long long)paxos_acceptor_floor(n->acceptor.core));
	}
	if (!n->acceptor.recovering || paxos_acceptor_recovering(n->acceptor.core))
		return;
	n->acceptor.recovering = false;
	paxos_iid floor = paxos_acceptor_floor(n->acceptor.core);
	paxos_ballot fence = paxos_acceptor_fence(n->acceptor.core);
	uint64_t generation = paxos_acceptor_generation(n->acceptor.core);
	char err[512];
	/* Kept before any vote of it leaves (they go at the end of this round). */
	if (generation != n->acceptor.generation) {
		if (paxos_generation_write(n->acceptor.generation_dir, generation, err,
					   sizeof(err)) != PAXOS_OK) {
			node_fail(n, PAXOS_E_IO, err);
			return;
		}
		n->acceptor.generation = generation;
		n->acceptor.generation_kept = true;
	}
	node_acceptor_keep_served(n);
	if (paxos_acceptor_began_log(n->acceptor.core) == PAXOS_ACCEPTOR_LOG_LOST)
		paxos_logf(PAXOS_LOG_WARNING,
			   "paxos: acceptor %u%s: every acceptor lost the log of generation %llu, "
			   "and none holds it: began a new log, generation %llu, from "
			   "instance 1; learners that delivered the old log are told so",
			   id, n->partition_label, (unsigned long long)generation - 1,
			   (unsigned long long)generation);
	paxos_logf(PAXOS_LOG_INFO,
		   "paxos: acceptor %u%s: recovered: votes again above instance %llu and ballot "
		   "%llu (log generation %llu)",
		   id, n->partition_label, (unsigned long long)floor, (unsigned long long)fence,
		   (unsigned long long)generation);
	n->acceptor.restoring = !paxos_acceptor_restored(n->acceptor.core);
	if (n->acceptor.store_dir[0] &&
	    paxos_recovery_fence_write(n->acceptor.store_dir, floor, fence, err, sizeof(err)) !=
		PAXOS_OK)
		node_fail(n, PAXOS_E_IO, err);
}

/* "1, 2 (recovering too) and 4" for the ids set in mask. */
static void describe_ids(char *buf, size_t cap, uint32_t mask, uint32_t recovering)
{
	size_t n = 0;
	buf[0] = 0;
	uint32_t left = (uint32_t)__builtin_popcount(mask);
	for (uint32_t i = 0; i < 32 && n < cap; i++) {
		if (!(mask & (1u << i)))
			continue;
		left--;
		n += (size_t)snprintf(buf + n, cap - n, "%u%s%s", i,
				      recovering & (1u << i) ? " (recovering too)" : "",
				      left == 0   ? ""
				      : left == 1 ? " and "
						  : ", ");
	}
}

/*
 * Once, at the second tick of a recovery: proposers that have not answered are waited for
 * (one may have run before and be on its way back). The common cause is a first start with
 * fewer proposers running than paxos.conf names: say whom, until when, and what to do.
 */
static void say_silent_proposers(struct paxos_node *n)
{
	if (!paxos_acceptor_recovering(n->acceptor.core))
		return;
	struct paxos_acceptor_recovery_wait w;
	paxos_acceptor_recovery_wait(n->acceptor.core, &w);
	if (!w.proposers_silent)
		return;
	/* With membership-alpha: the proposer set it asks (node_join_acceptors). */
	uint32_t total = n->cfg.proposers;
	if (n->membership)
		total = (uint32_t)__builtin_popcount(
		    node_membership_proposers(n, paxos_membership_applied(n->membership) + 1) |
		    node_membership_proposers(n, UINT64_MAX));
	paxos_logf(PAXOS_LOG_WARNING,
		   "paxos: acceptor %u: %u of the %u proposers %s %s not answered; votes are "
		   "withheld until %s or for %u ms from the start (a proposer may have run "
		   "before). Start every proposer %s, or set proposers to the number that run",
		   n->role_id[PAXOS_ROLE_ACCEPTOR], w.proposers_silent, total,
		   n->membership ? "of the proposer set" : "paxos.conf names",
		   w.proposers_silent == 1 ? "has" : "have",
		   w.proposers_silent == 1 ? "it answers" : "they answer", PAXOS_RECOVERY_WAIT_MS,
		   n->membership ? "of the set" : "the file names");
}

/*
 * Now and then while the acceptor withholds votes, or holds fewer decisions than its
 * floor: what it waits for, in words an operator can act on.
 */
void node_acceptor_waiting(struct paxos_node *n)
{
	uint64_t every = WAIT_LOG_MS / n->cfg.acceptor_repeat_ms + 1;
	if (++n->acceptor.ticks > every * WAIT_LOG_LINES_OFTEN)
		every *= WAIT_LOG_LINES_OFTEN;
	if (n->acceptor.ticks == 2)
		say_silent_proposers(n);
	if (n->acceptor.ticks % every != 0)
		return;
	uint32_t id = n->role_id[PAXOS_ROLE_ACCEPTOR];
	if (paxos_acceptor_recovering(n->acceptor.core)) {
		struct paxos_acceptor_recovery_wait w;
		paxos_acceptor_recovery_wait(n->acceptor.core, &w);
		char ids[256];
		describe_ids(ids, sizeof(ids), w.acceptors_silent, w.acceptors_recovering);
		paxos_logf(
		    PAXOS_LOG_WARNING,
		    "paxos: acceptor %u: still recovering, votes withheld: answers from %u "
		    "of the %u other acceptors it needs; no answer from acceptor%s %s%s%s. "
		    "Only an acceptor that holds its state answers: if a quorum of acceptors "
		    "lost its state at once, what it chose may be known to none, and this "
		    "acceptor waits until enough of the others hold theirs",
		    id, w.acceptors_answered, w.acceptors_needed,
		    __builtin_popcount(w.acceptors_silent) == 1 ? "" : "s", ids,
		    w.proposers_silent ? " nor from a proposer" : "",
		    w.proposers_silent > 1 ? "s" : "");
		uint32_t others = w.acceptors_silent | w.acceptors_recovering;
		/* Without a changing membership a new log begins by itself (acceptor/recovery.c).
		 */
		if (n->membership && w.acceptors_answered == 0 &&
		    w.acceptors_recovering == others && others != 0)
			paxos_logf(
			    PAXOS_LOG_WARNING,
			    "paxos: acceptor %u%s: every other acceptor recovers too, and the "
			    "proposers ran before: what the cluster chose is lost. With "
			    "membership-alpha no new log begins by itself (the configuration files "
			    "speak of the old log's instances). For a new log, restart every "
			    "process without its membership file (%s/*/membership) and the "
			    "proposers without their epoch files (%s/proposer-N/epoch): the "
			    "acceptors then begin a new log, one generation above the old one",
			    id, n->partition_label, n->cfg.storage_path, n->cfg.storage_path);
		return;
	}
	if (!n->acceptor.restoring)
		return;
	if (n->learner.core)
		paxos_logf(
		    PAXOS_LOG_WARNING,
		    "paxos: acceptor %u: restoring: its learner holds the decisions up to "
		    "instance %llu of %llu; until it is restored, restarting another acceptor "
		    "may leave instances no quorum can close",
		    id, (unsigned long long)(paxos_learner_next_iid(n->learner.core) - 1),
		    (unsigned long long)paxos_acceptor_floor(n->acceptor.core));
	else {
		paxos_logf(PAXOS_LOG_WARNING,
			   "paxos: acceptor %u: recovered without a learner (learning-acceptors "
			   "no): it cannot hold the decisions up to instance %llu again; let the "
			   "learners catch up before restarting another acceptor",
			   id, (unsigned long long)paxos_acceptor_floor(n->acceptor.core));
		n->acceptor.restoring = false; /* said once: nothing will change it */
	}
}
