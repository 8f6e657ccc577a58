/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One simulated run (sim_run, sim.h): the cluster built from the options, the first events
 * planned (timers with random phases, the clients' submissions, the faults, the healing),
 * the queue run to its end or to the first violation, and the result.
 */
#include "cluster.h"

#include "mutant.h"

#include <paxos/storage_backends.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- set-up and the run ---- */

static bool build(struct sim *s)
{
	s->ids = s->o.acceptors;
	if (s->o.reconfig) {
		s->truth = paxos_membership_create((1u << s->o.acceptors) - 1,
						   (1u << s->o.proposers) - 1, s->alpha);
		if (!s->truth)
			return false;
		s->configs[s->config_count++] = (1u << s->o.acceptors) - 1;
	}
	EACH_PARTITION(s, part)
	{
		endpoint_init(s, &s->part[part].client, EP_CLIENT, 0);
		for (uint32_t i = 0; i < s->o.acceptors; i++) {
			struct sim_acceptor *a = &s->acc[i];
			endpoint_init(s, &a->ep, EP_ACCEPTOR, i);
			a->st = paxos_storage_memory_new();
			if (!a->st || !acceptor_start(s, i, false))
				return false;
		}
		for (uint32_t i = 0; i < s->o.proposers; i++) {
			struct sim_proposer *p = &s->prop[i];
			endpoint_init(s, &p->ep, EP_PROPOSER, i);
			if (!proposer_start(s, i))
				return false;
		}
		for (uint32_t i = 0; i < s->o.learners; i++) {
			struct sim_learner *l = &s->lrn[i];
			endpoint_init(s, &l->ep, EP_LEARNER, i);
			l->core = learner_new(s, on_learner_deliver, NULL, &l->ep, &l->counters,
					      &l->membership);
			if (!l->core)
				return false;
		}
	}
	return true;
}

static void teardown(struct sim *s)
{
	for (uint32_t p = 0; p < SIM_MAX_PARTITIONS; p++) {
		struct sim_partition *q = &s->part[p];
		for (uint32_t i = 0; i < SIM_MAX_ACCEPTORS; i++) {
			paxos_acceptor_free(q->acc[i].core);
			paxos_learner_free(q->acc[i].learner);
			paxos_membership_free(q->acc[i].membership);
			paxos_storage_destroy(q->acc[i].st);
		}
		for (uint32_t i = 0; i < SIM_MAX_PROPOSERS; i++)
			proposer_stop(&q->prop[i]);
		for (uint32_t i = 0; i < SIM_MAX_LEARNERS; i++) {
			paxos_learner_free(q->lrn[i].core);
			paxos_membership_free(q->lrn[i].membership);
		}
		checker_destroy(&q->check);
	}
	merged_destroy(&s->merged);
	paxos_membership_free(s->truth);
	pool_destroy(&s->pool);
	queue_destroy(&s->queue);
}

static bool options_valid(const struct sim_options *o)
{
	return o->acceptors >= 1 && o->acceptors <= SIM_MAX_ACCEPTORS && o->proposers >= 1 &&
	       o->proposers <= SIM_MAX_PROPOSERS && o->learners >= 1 &&
	       o->learners <= SIM_MAX_LEARNERS && o->loss <= 100 && o->dup <= 100 &&
	       o->accept_loss <= 100 && o->values >= 1 && o->values <= SIM_MAX_VALUES &&
	       (o->faults & ~(SIM_FAULT_EVERY | SIM_FAULT_WHOLE)) == 0 &&
	       (unsigned)o->mutant < SIM_MUTANT_COUNT && o->partitions >= 1 &&
	       o->partitions <= SIM_MAX_PARTITIONS && (o->partitions == 1 || !o->reconfig) &&
	       (!(o->faults & SIM_FAULT_WHOLE) || (o->partitions == 1 && !o->reconfig));
}

/* The initial events: timers with random phases, the clients' submissions, faults, healing. */
static void plan(struct sim *s)
{
	schedule(s, rng_range(&s->rng, 0, TICK - 1), SE_TICK, 0, 0);
	for (uint32_t i = 0; i < s->o.acceptors; i++)
		schedule(s, rng_range(&s->rng, 0, ACCEPTOR_REPEAT - 1), SE_ACCEPTOR_TICK, i, 0);
	for (uint32_t id = 0; id < s->o.values; id++)
		schedule(s, rng_range(&s->rng, 0, SUBMIT_SPAN), SE_SUBMIT, 0, id);
	if (s->o.faults)
		schedule(s, rng_range(&s->rng, 5000, 40000), SE_FAULT, 0, 0);
	schedule(s, FAULT_PHASE, SE_HEAL, 0, 0);
	if (s->o.reconfig)
		schedule(s, rng_range(&s->rng, 5000, 60000), SE_RECONFIG, 0, 0);
	/* Merging learners restart from snapshots now and then, during the faults or after. */
	for (uint32_t i = 0; s->merging && i < s->o.learners; i++)
		if (rng_percent(&s->rng, 50)) {
			merged_arm(&s->merged, i, (uint32_t)rng_range(&s->rng, 1, 40));
			schedule(s, rng_range(&s->rng, 10000, FAULT_PHASE + 100000), SE_SNAPSHOT, i,
				 0);
		}
}

/* Whether an acceptor still recovers: what a lost quorum chose may be known to none. */
static bool withheld_for_lost_quorum(const struct sim *s)
{
	for (uint32_t p = 0; p < s->o.partitions; p++)
		for (uint32_t i = 0; i < s->ids; i++)
			if (s->part[p].acc[i].up &&
			    paxos_acceptor_recovering(s->part[p].acc[i].core))
				return true;
	return false;
}

/* The first violation found: a partition's checker's, or the merged order's. */
const char *violation(const struct sim *s, enum sim_violation *v)
{
	for (uint32_t p = 0; p < s->o.partitions; p++)
		if (s->part[p].check.violation != SIM_OK) {
			*v = s->part[p].check.violation;
			return s->part[p].check.message;
		}
	*v = s->merged.violation;
	return s->merged.message;
}

static bool violated(const struct sim *s)
{
	enum sim_violation v;
	violation(s, &v);
	return v != SIM_OK;
}

static void run(struct sim *s)
{
	/* Leaders spread: partition p is led by proposer p mod proposers at first. */
	EACH_PARTITION(s, p)
	{
		promote(s, p % s->o.proposers);
		for (uint32_t i = 0; i < s->o.proposers; i++)
			lean_follow(s, i);
	}
	plan(s);
	struct sim_event e;
	uint64_t events = 0;
	while (!violated(s) && queue_pop(&s->queue, &e)) {
		s->now = e.at;
		step(s, &e);
		if (++events > MAX_EVENTS) {
			use(s, 0);
			checker_fail(s->check, SIM_V_INTERNAL, "more than %u events", MAX_EVENTS);
			break;
		}
		if (e.kind != SE_TICK)
			continue;
		/* Checked on ticks only: the scan is linear in the values. */
		truth_advance(s);
		/* A leader a change removed opens nothing from where the change is in force
		 * (admission.c): like the node once its learner got there, it hands over. */
		handover_removed(s);
		if (complete(s))
			break;
		if (s->now > FAULT_PHASE + LIVENESS_BUDGET) {
			/* After a double crash a stall is allowed, but only one the acceptors
			 * explain: some still recover, withholding their votes. */
			if (!s->doubled || !withheld_for_lost_quorum(s))
				report_liveness(s);
			break;
		}
	}
}

enum sim_violation sim_run(const struct sim_options *o, struct sim_result *r)
{
	memset(r, 0, sizeof(*r));
	r->trace_hash = 0xcbf29ce484222325ull;
	if (!o || !options_valid(o)) {
		r->violation = SIM_V_INTERNAL;
		snprintf(r->message, sizeof(r->message), "invalid simulation options");
		return r->violation;
	}
	struct sim *s = calloc(1, sizeof(*s));
	if (!s) {
		r->violation = SIM_V_INTERNAL;
		snprintf(r->message, sizeof(r->message), "out of memory");
		return r->violation;
	}
	s->o = *o;
	s->r = r;
	use(s, 0);
	s->loss = o->loss;
	rng_seed(&s->rng, o->seed);
	/* Proposer tuning varies with the seed too: FIFO, pipelined, tiny and larger windows. */
	s->window = (uint32_t)rng_range(&s->rng, 1, 16);
	s->concurrency = (uint32_t)rng_range(&s->rng, 1, s->window);
	/* Alpha below the window makes the leader wait for configurations; above it, learners
	 * keep votes of instances whose configuration they do not know yet. */
	if (o->reconfig)
		s->alpha = (uint32_t)rng_range(&s->rng, 1, 3 * s->window);
	/* Partitions: merge-segment 1..4 instances. */
	s->merging = o->partitions > 1;
	if (s->merging)
		s->segment = (uint32_t)rng_range(&s->rng, 1, 4);
	pool_init(&s->pool);
	queue_init(&s->queue);
	bool ready = true;
	const struct checker *logs[SIM_MAX_PARTITIONS];
	EACH_PARTITION(s, p)
	{
		logs[p] = s->check;
		ready &= checker_init(s->check, o->values, o->learners + o->proposers,
				      o->proposers) == 0;
		/* Duplicates are bounded while no leader fails (a planned removal hands over
		 * cleanly); after a leader's failure or a cut, the next one may propose values
		 * its predecessor already got chosen (at-least-once). */
		/* Skips also bring a chosen membership change into force (no-ops). */
		s->check->skips = o->skip_idle_us != 0 || o->reconfig || o->partitions > 1;
		s->check->reconfig = o->reconfig;
		s->check->integrity =
		    (o->faults & (SIM_FAULT_LEADER | SIM_FAULT_DUAL | SIM_FAULT_PCUT |
				  SIM_FAULT_WHOLE | SIM_FAULT_DEAF)) == 0 &&
		    (o->proposers == 1 || (o->faults & SIM_FAULT_PCRASH) == 0);
	}
	if (s->merging && ready) {
		ready = merged_init(&s->merged, o->partitions, s->segment, o->learners, o->values,
				    logs) == 0;
		s->merged.broken = o->mutant == SIM_MUTANT_MERGE_SKIP;
	}
	if (!ready)
		checker_fail(s->check, SIM_V_INTERNAL, "out of memory");
	else if (build(s))
		run(s);
	else
		checker_fail(s->check, SIM_V_INTERNAL, "cannot build the cluster");
	enum sim_violation v;
	const char *message = violation(s, &v);
	r->violation = v;
	snprintf(r->message, sizeof(r->message), "%s", message);
	for (uint32_t p = 0; p < o->partitions; p++) {
		r->deliveries += s->part[p].check.deliveries;
		r->duplicates += s->part[p].check.duplicates;
	}
	r->merged = merged_total(&s->merged);
	r->end_time = s->now;
	r->reconfigurations = s->config_count ? s->config_count - 1 : 0;
	r->proposer_reconfigurations = s->proposer_changes;
	if (o->verbose)
		fprintf(stderr,
			"sim: window %u, concurrency %u, alpha %u, merge-segment %u, %u changes; "
			"%" PRIu64 " messages, %" PRIu64 " deliveries (%" PRIu64
			" duplicates), %" PRIu64 " submissions, ended at %.1f ms: %s%s%s\n",
			s->window, s->concurrency, s->alpha, s->segment, r->reconfigurations,
			r->messages, r->deliveries, r->duplicates, r->submissions,
			(double)s->now / 1000.0, sim_violation_name(r->violation),
			r->violation ? ": " : "", r->message);
	teardown(s);
	free(s);
	return r->violation;
}
