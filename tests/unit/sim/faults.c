/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulator's faults (--faults, sim.h's enum sim_fault): crashes and restarts, losses of
 * storage, network partitions, cut off and deaf proposers, leaders moved or doubled, frozen
 * processes, whole-cluster restarts, each within the budget of what the protocol tolerates
 * (budget_ok), and the healing after the fault phase.
 */
#include "cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- faults ---- */

static void use_random_partition(struct sim *s);

static void fault_crash_acceptor(struct sim *s)
{
	/* Acceptors of its own: the process serves one partition, which alone loses it. */
	if (s->o.own_acceptors)
		use_random_partition(s);
	uint32_t cand[SIM_MAX_ACCEPTORS], n = 0;
	for (uint32_t i = 0; i < s->ids; i++)
		if (s->acc[i].up)
			cand[n++] = i;
	if (n == 0)
		return;
	uint32_t i = cand[rng_range(&s->rng, 0, n - 1)];
	/* Half the crashes come between a write and the send of what it backs (acceptor_run). */
	if (rng_range(&s->rng, 0, 1) == 0) {
		trace(s, 1, "acceptor %u will crash after its next write", i);
		for (uint32_t p = 0; p < s->o.partitions; p++)
			if (!s->o.own_acceptors || p == s->cur)
				s->part[p].acc[i].crash_at_write = true;
		return;
	}
	if (s->o.own_acceptors) {
		trace(s, 1, "partition %u's own acceptor crashes", s->cur);
		acceptor_crash(s, i);
	} else {
		EACH_PARTITION(s, p)
		acceptor_crash(s, i);
	}
	schedule(s, s->now + rng_range(&s->rng, 5000, 80000), SE_ACCEPTOR_RESTART, i, 0);
}

static void fault_crash_proposer(struct sim *s)
{
	uint32_t i = pick_proposer(s, -1);
	if (i == UINT32_MAX)
		return;
	EACH_PARTITION(s, p)
	{
		trace(s, 1, "proposer %u crashes%s", i, leads(s, i) ? " (it led)" : "");
		proposer_stop(&s->prop[i]);
	}
	schedule(s, s->now + rng_range(&s->rng, 10000, 80000), SE_PROPOSER_RESTART, i, 0);
}

/* The partition a leadership fault hits: a random one (no draw with one partition). */
static void use_random_partition(struct sim *s)
{
	use(s, s->o.partitions > 1 ? (uint32_t)rng_range(&s->rng, 0, s->o.partitions - 1) : 0);
}

/* Sets acceptor i's cut flag in every partition: the network cuts the process off. With
 * acceptors of their own per partition, a cut takes partition only's (only < partitions). */
static void cut_acceptor_of(struct sim *s, uint32_t i, bool cut, uint32_t only)
{
	for (uint32_t p = 0; p < s->o.partitions; p++)
		if (only >= s->o.partitions || p == only)
			s->part[p].acc[i].cut = cut;
}

static void cut_acceptor(struct sim *s, uint32_t i, bool cut)
{
	cut_acceptor_of(s, i, cut, UINT32_MAX);
}

static void fault_move_leader(struct sim *s)
{
	use_random_partition(s);
	uint32_t i = pick_proposer(s, 0);
	if (i == UINT32_MAX)
		return;
	for (uint32_t k = 0; k < s->o.proposers; k++)
		if (k != i)
			demote(s, k);
	promote(s, i);
}

/* A second leader while the first still believes it leads, as after a false suspicion. */
static void fault_dual_leader(struct sim *s)
{
	use_random_partition(s);
	uint32_t old = pick_proposer(s, 1);
	uint32_t i = pick_proposer(s, 0);
	if (old == UINT32_MAX || i == UINT32_MAX)
		return;
	promote(s, i);
	schedule(s, s->now + rng_range(&s->rng, 5000, 60000), SE_DEMOTE, old, s->cur);
}

static void fault_partition(struct sim *s)
{
	if (s->partitioned || s->ids < 3)
		return;
	uint32_t k = (uint32_t)rng_range(&s->rng, 1, (s->ids - 1) / 2);
	s->partitioned = true;
	uint32_t only = UINT32_MAX;
	if (s->o.own_acceptors) { /* one partition's own acceptors are cut off */
		use_random_partition(s);
		only = s->cur;
	}
	for (uint32_t n = 0; n < k;) {
		uint32_t i = (uint32_t)rng_range(&s->rng, 0, s->ids - 1);
		if (!s->acc[i].cut) {
			cut_acceptor_of(s, i, true, only);
			trace(s, 1, "acceptor %u is partitioned away", i);
			n++;
		}
	}
	schedule(s, s->now + rng_range(&s->rng, 20000, 120000), SE_PARTITION_END, 0, 0);
}

void end_partition(struct sim *s)
{
	if (s->partitioned)
		trace(s, 1, "partition ends");
	s->partitioned = false;
	for (uint32_t i = 0; i < s->ids; i++)
		cut_acceptor(s, i, false);
}

/* The leader (or any proposer) loses the network with its learner but keeps leading; another
 * proposer is promoted meanwhile, as the failure detector of the others would. */
/* With partitions, the leader (or any proposer) of a random partition is cut off: another
 * takes that partition over, and every other partition it led. */
static void fault_cut_proposer(struct sim *s)
{
	use_random_partition(s);
	uint32_t hit = s->cur;
	uint32_t i = pick_proposer(s, 1);
	if (i == UINT32_MAX)
		i = pick_proposer(s, -1);
	if (i == UINT32_MAX || s->prop[i].cut)
		return;
	uint32_t other = UINT32_MAX;
	for (uint32_t k = 0; k < s->o.proposers && other == UINT32_MAX; k++)
		if (k != i && s->prop[k].up && !s->prop[k].cut && may_lead(s, k))
			other = k;
	EACH_PARTITION(s, p)
	{
		bool led = leads(s, i);
		if (p == hit || led)
			trace(s, 1, "proposer %u is cut off%s", i,
			      led ? " (it leads, and goes on)" : "");
		s->prop[i].cut = true;
		if (other != UINT32_MAX && (p == hit || led))
			promote(s, other);
	}
	schedule(s, s->now + rng_range(&s->rng, 20000, 120000), SE_PROPOSER_UNCUT, i, 0);
}

void uncut_proposer(struct sim *s, uint32_t i)
{
	if (!s->prop[i].cut)
		return;
	EACH_PARTITION(s, p)
	{
		trace(s, 1, "proposer %u is back%s", i,
		      leads(s, i) ? " and still believes it leads" : "");
		s->prop[i].cut = false;
	}
	/* Its heartbeats and the others' reach each other again: the higher id steps down. */
	schedule(s, s->now + rng_range(&s->rng, 5000, 60000), SE_DEMOTE, i, ALL_PARTITIONS);
}

/* A leading proposer (or any) goes deaf: what it sends still goes out, heartbeats included.
 * It keeps leading until its check-quorum step-down; the others elect another meanwhile,
 * which the oracle does at once here (the deaf one's last heartbeats, still heard, may delay
 * that in a real cluster: the two lead side by side either way). */
static void fault_deaf_proposer(struct sim *s)
{
	use_random_partition(s);
	uint32_t hit = s->cur;
	uint32_t i = pick_proposer(s, 1);
	if (i == UINT32_MAX)
		i = pick_proposer(s, -1);
	if (i == UINT32_MAX || s->prop[i].cut || s->prop[i].deaf)
		return;
	uint32_t other = UINT32_MAX;
	for (uint32_t k = 0; k < s->o.proposers && other == UINT32_MAX; k++)
		if (k != i && s->prop[k].up && !s->prop[k].cut && !s->prop[k].deaf &&
		    may_lead(s, k))
			other = k;
	EACH_PARTITION(s, p)
	{
		bool led = leads(s, i);
		if (p == hit || led)
			trace(s, 1, "proposer %u is deaf%s", i,
			      led ? " (it leads, and goes on sending)" : "");
		s->prop[i].deaf = true;
		if (other != UINT32_MAX && (p == hit || led))
			promote(s, other);
	}
	/* Its step-down for want of a quorum, then its hearing back. */
	schedule(s, s->now + rng_range(&s->rng, 5000, 60000), SE_DEMOTE, i, ALL_PARTITIONS);
	schedule(s, s->now + rng_range(&s->rng, 20000, 120000), SE_PROPOSER_HEARS, i, 0);
}

void proposer_hears(struct sim *s, uint32_t i)
{
	EACH_PARTITION(s, p)
	{
		if (s->prop[i].deaf)
			trace(s, 1, "proposer %u hears again%s", i,
			      leads(s, i) ? " and still believes it leads" : "");
		s->prop[i].deaf = false;
	}
}

/* Acceptors without their state in some partition: down and to restart empty, recovering,
 * or recovered but not yet holding every decision below their floor
 * (paxos_acceptor_restored). */
static uint32_t amnesiacs(const struct sim *s)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->ids; i++) {
		bool without = false;
		for (uint32_t p = 0; p < s->o.partitions; p++)
			without |= without_state(&s->part[p].acc[i]);
		n += without;
	}
	return n;
}

/* An acceptor crashes and loses its storage: it comes back empty and recovers. At most a
 * minority of acceptors per run: an instance left open below the floors of more than that
 * may have been chosen by their earlier lives alone, and nobody could safely decide it. */
static void fault_amnesia(struct sim *s)
{
	if (amnesiacs(s) > 0 || (!s->o.reconfig && s->amnesias >= (s->o.acceptors - 1) / 2))
		return;
	uint32_t cand[SIM_MAX_ACCEPTORS], n = 0;
	for (uint32_t i = 0; i < s->ids; i++)
		if (s->acc[i].up && (!s->o.reconfig || budget_ok(s, 1u << i)))
			cand[n++] = i;
	if (n == 0)
		return;
	uint32_t i = cand[rng_range(&s->rng, 0, n - 1)];
	EACH_PARTITION(s, p)
	{
		acceptor_crash(s, i);
		s->acc[i].lose_state = true;
	}
	s->amnesias++;
	s->amnesia_mask |= 1u << i;
	trace(s, 1, "acceptor %u lost its storage", i);
	schedule(s, s->now + rng_range(&s->rng, 5000, 80000), SE_ACCEPTOR_RESTART, i, 0);
}

/* --reconfig, as the network heals: up to three acceptors lost for good, each only if the
 * budget allows it (budget_ok). */
static void lose_within_budget(struct sim *s)
{
	uint32_t k = (uint32_t)rng_range(&s->rng, 1, 3);
	for (uint32_t tries = 0; k > 0 && tries < 4 * SIM_MAX_ACCEPTORS; tries++) {
		uint32_t i = (uint32_t)rng_range(&s->rng, 0, s->ids - 1);
		if (!s->acc[i].present || s->acc[i].cut || !budget_ok(s, 1u << i))
			continue;
		s->acc[i].cut = true;
		s->lost_mask |= 1u << i;
		trace(s, 1, "acceptor %u is lost for good", i);
		k--;
	}
}

/* The next acceptor of a rolling restart loses its storage, once none is without it. */
static void fault_rolling(struct sim *s)
{
	if (s->o.acceptors < 3 || amnesiacs(s) > 0)
		return;
	/* As an operator does: the next one only while every acceptor is up and holds its
	 * state (each says "restored"), in every partition. */
	for (uint32_t p = 0; p < s->o.partitions; p++)
		for (uint32_t k = 0; k < s->ids; k++)
			if (s->part[p].acc[k].present && !s->part[p].acc[k].up)
				return;
	uint32_t i = s->rolling_next % s->ids;
	while (!s->acc[i].present) /* a retired one: the next id */
		i = ++s->rolling_next % s->ids;
	s->rolling_next++;
	/* Not while retired or lost acceptors leave it too few others to recover with. */
	if (s->o.reconfig && !budget_ok(s, 1u << i))
		return;
	EACH_PARTITION(s, p)
	{
		acceptor_crash(s, i);
		s->acc[i].lose_state = true;
	}
	trace(s, 1, "rolling restart: acceptor %u lost its storage", i);
	schedule(s, s->now + rng_range(&s->rng, 2000, 40000), SE_ACCEPTOR_RESTART, i, 0);
}

/* The acceptors a double crash takes: the first quorum of ids (of the newest configuration's
 * members, with --reconfig), one bit each. */
static uint32_t double_quorum(const struct sim *s)
{
	uint32_t members =
	    s->truth ? paxos_membership_latest(s->truth)->members : (1u << s->o.acceptors) - 1;
	uint32_t quorum = paxos_membership_quorum_of(members), taken = 0;
	for (uint32_t rest = members; rest && quorum; rest &= rest - 1, quorum--)
		taken |= 1u << __builtin_ctz(rest);
	return taken;
}

/* A double crash, first step: the acceptors outside the quorum it will take stop (SIGSTOP),
 * long enough for the others to go on without them. */
static void fault_double(struct sim *s)
{
	if (s->doubled || s->o.acceptors < 3)
		return;
	s->doubled = true;
	paxos_time crash = s->now + rng_range(&s->rng, 10000, 60000);
	for (uint32_t i = 0; i < s->ids; i++) {
		if (!s->acc[i].present || (double_quorum(s) & (1u << i)))
			continue;
		paxos_time until = crash + rng_range(&s->rng, 10000, 100000);
		for (uint32_t p = 0; p < s->o.partitions; p++) {
			s->part[p].acc[i].frozen_from = s->now;
			s->part[p].acc[i].frozen_until = until;
		}
		trace(s, 1, "acceptor %u is stopped until %.3f ms", i, (double)until / 1000.0);
	}
	schedule(s, crash, SE_DOUBLE_CRASH, 0, 0);
}

/* The second step: a quorum of acceptors and every proposer crash at once, the acceptors
 * losing their storage; all restart soon after, before the stopped ones go on. A change since
 * the first step may put a stopped one in that quorum: killed, it restarts with the others
 * (what was sent to it meanwhile still comes, late). Left stopped until after they recovered,
 * it would be a second loss of state after theirs, which the acceptors cannot see: instances
 * no quorum can close again while none of them says so. */
void double_crash(struct sim *s)
{
	uint32_t taken = double_quorum(s);
	for (uint32_t i = 0; i < s->ids; i++) {
		if (!(taken & (1u << i)))
			continue;
		EACH_PARTITION(s, p)
		{
			if (s->acc[i].up)
				acceptor_crash(s, i);
			s->acc[i].lose_state = true;
			if (s->acc[i].frozen_until > s->now)
				s->acc[i].frozen_until = s->now;
		}
		trace(s, 1, "double crash: acceptor %u lost its storage", i);
		schedule(s, s->now + rng_range(&s->rng, 1000, 8000), SE_ACCEPTOR_RESTART, i, 0);
	}
	for (uint32_t i = 0; i < s->o.proposers; i++)
		if (s->prop[i].up) {
			trace(s, 1, "double crash: proposer %u crashes", i);
			EACH_PARTITION(s, p)
			proposer_stop(&s->prop[i]);
			schedule(s, s->now + rng_range(&s->rng, 1000, 8000), SE_PROPOSER_RESTART, i,
				 0);
		}
}

/* A whole cluster restarted (SIM_FAULT_WHOLE): every acceptor loses its storage (keeping its
 * generation, as the node keeps it beside the store) and every proposer restarts. */
static void fault_whole(struct sim *s)
{
	trace(s, 1, "the whole cluster restarts");
	for (uint32_t i = 0; i < s->ids; i++) {
		if (s->acc[i].up)
			acceptor_crash(s, i);
		s->acc[i].lose_state = true;
		schedule(s, s->now + rng_range(&s->rng, 1000, 20000), SE_ACCEPTOR_RESTART, i, 0);
	}
	for (uint32_t i = 0; i < s->o.proposers; i++) {
		if (s->prop[i].up)
			proposer_stop(&s->prop[i]);
		schedule(s, s->now + rng_range(&s->rng, 1000, 20000), SE_PROPOSER_RESTART, i, 0);
	}
}

/*
 * When the network heals: a random minority of acceptors is lost for good. An acceptor that
 * lost its storage counts against that minority: it needs answers from acceptors - quorum + 1
 * others to recover, and instances below its floor that were still open need a quorum of the
 * others (its earlier life's vote may have been part of a choice nobody else remembers).
 */
static void lose_minority(struct sim *s)
{
	if (s->o.reconfig) {
		lose_within_budget(s);
		return;
	}
	uint32_t budget = (s->o.acceptors - 1) / 2;
	if (s->o.acceptors < 3 || budget <= s->amnesias)
		return;
	uint32_t k = (uint32_t)rng_range(&s->rng, 1, budget - s->amnesias);
	for (uint32_t n = 0; n < k;) {
		uint32_t i = (uint32_t)rng_range(&s->rng, 0, s->o.acceptors - 1);
		if (!s->acc[i].cut) {
			cut_acceptor(s, i, true);
			trace(s, 1, "acceptor %u is lost for good", i);
			n++;
		}
	}
}

void inject_fault(struct sim *s)
{
	use(s, 0); /* process state is alike in every partition */
	uint32_t kinds[SIM_FAULT_KINDS], n = 0;
	for (uint32_t k = 0; k < SIM_FAULT_KINDS; k++)
		if (s->o.faults & (1u << k))
			kinds[n++] = 1u << k;
	if (n > 0) {
		switch (kinds[rng_range(&s->rng, 0, n - 1)]) {
		case SIM_FAULT_CRASH:
			fault_crash_acceptor(s);
			break;
		case SIM_FAULT_PCRASH:
			fault_crash_proposer(s);
			break;
		case SIM_FAULT_LEADER:
			fault_move_leader(s);
			break;
		case SIM_FAULT_DUAL:
			fault_dual_leader(s);
			break;
		case SIM_FAULT_PARTITION:
			fault_partition(s);
			break;
		case SIM_FAULT_PCUT:
			fault_cut_proposer(s);
			break;
		case SIM_FAULT_AMNESIA:
			fault_amnesia(s);
			break;
		case SIM_FAULT_ROLLING:
			fault_rolling(s);
			break;
		case SIM_FAULT_DOUBLE:
			fault_double(s);
			break;
		case SIM_FAULT_DEAF:
			fault_deaf_proposer(s);
			break;
		case SIM_FAULT_WHOLE:
			fault_whole(s);
			break;
		default: /* SIM_FAULT_LOSE acts when the network heals */
			break;
		}
	}
	EACH_PARTITION(s, p)
	ensure_leader(s);
	paxos_time next = s->now + rng_range(&s->rng, 5000, 40000);
	if (next < FAULT_PHASE)
		schedule(s, next, SE_FAULT, 0, 0);
}

/* The fault phase is over: everything restarts, the network stops losing messages and one
 * proposer leads from now on. */
void heal(struct sim *s)
{
	trace(s, 1, "the network heals");
	s->healed = true;
	s->loss = 0;
	end_partition(s);
	EACH_PARTITION(s, p)
	for (uint32_t i = 0; i < s->ids; i++)
		acceptor_restart(s, i);
	if (s->o.faults & SIM_FAULT_LOSE)
		lose_minority(s);
	EACH_PARTITION(s, p)
	{
		for (uint32_t i = 0; i < s->o.proposers; i++)
			s->prop[i].cut = s->prop[i].deaf = false;
		for (uint32_t i = 0; i < s->o.proposers; i++)
			if (!s->prop[i].up) {
				trace(s, 1, "proposer %u restarts", i);
				if (proposer_start(s, i))
					checker_view_reset(s->check, proposer_view(s, i));
			}
		/* The leader it has keeps leading; a partition without one gets its own. */
		uint32_t keep = UINT32_MAX;
		for (uint32_t i = 0; i < s->o.proposers && keep == UINT32_MAX; i++)
			if (leads(s, i) && may_lead(s, i))
				keep = i;
		for (uint32_t i = 0; i < s->o.proposers && keep == UINT32_MAX; i++)
			if (may_lead(s, (p + i) % s->o.proposers))
				keep = (p + i) % s->o.proposers;
		for (uint32_t i = 0; i < s->o.proposers; i++)
			if (i != keep)
				demote(s, i);
		promote(s, keep);
		for (uint32_t i = 0; i < s->o.proposers; i++)
			lean_follow(s, i);
	}
}
