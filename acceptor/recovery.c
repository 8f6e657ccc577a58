/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Generations. A log is named by a generation, which every accepted, acceptor state and
 * trimmed carries; learners deliver one log at a time and move to a higher one only when a
 * quorum of acceptors reports it (learner/learner.c), starting it from instance 1.
 *
 * When every acceptor of the set recovers (none answers, each one's hello says it recovers)
 * and every proposer answered or was waited for, no acceptor holds anything of the log any
 * more: what it chose is lost for good (a whole memory cluster was restarted). Waiting cannot
 * bring it back, so each acceptor begins a new log instead, with floor 0 and the proposers'
 * ballots as its fence. The generation is picked without a leader: each acceptor keeps the
 * one it votes in beside its store (the node writes it before any vote of it leaves, so an
 * earlier life's generation is never above the one kept), a recovering acceptor's hello
 * carries the one kept, and the new log's generation is one above the highest of them. Every
 * acceptor that decides heard the hellos of all the others, so all take the same one, and it
 * is above every generation any acceptor ever voted in: no learner is handed a value of it
 * under the number of an old log's instance. A first start, which may come before the others
 * are heard, keeps the generation heard and names none.
 *
 * An acceptor that decides later (a proposer's answer lost) hears the others vote already;
 * they answer it, and tell it when its incarnation was one of those recovering when they began
 * their log (founders): that life voted nowhere, and its earlier lives voted only in older
 * logs, so it joins the new log at once. Any other recovering acceptor recovers as before and
 * takes the generation its answers carry. Acceptors with a changing membership keep their
 * configuration history in files that speak of the old log's instances: they wait as before.
 *
 * Two values for one instance of one log: a value is chosen in a log by a quorum of its
 * acceptors, each voting in one log per life, so Paxos holds log by log. A new log's ballots
 * lie above its fence, which covers every ballot the proposers used before, so (instance,
 * ballot) names one log: a learner takes the value of a leader's accept (which carries no
 * generation) only for a ballot an acceptor of its log reported, and a proposer that learns
 * of the new log late runs its instances again above every ballot it used. A recovering
 * acceptor's state names the log it lost: learners do not follow it.
 */
#include "recovery.h"

#include <string.h>

/* Ballots are seq * PAXOS_MAX_PROPOSERS + id with seq = epoch * 2^32 + round (thesis 3.5.2). */
static bool first_epoch_or_before(paxos_ballot b)
{
	return (b / PAXOS_MAX_PROPOSERS) >> 32 <= 1;
}

void recovery_init(struct recovery *r, uint32_t id, struct paxos_counters *counters)
{
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->counters = counters;
}

/* Other members of configuration c that must answer: enough to share one with every quorum
 * of c that includes us. */
static uint32_t needed_in(const struct recovery *r, uint32_t c)
{
	uint32_t n = (uint32_t)__builtin_popcount(c), need = n - (n / 2 + 1) + 1;
	uint32_t rest = (uint32_t)__builtin_popcount(c & ~(1u << r->id));
	return need > rest ? rest : need;
}

/* Configuration k ended at or below what the answers reached, and every proposer answered:
 * whatever this acceptor did there lies below the floor and the fence already. Not while
 * another member of it says it recovers too: then a quorum of it may have lost what it
 * chose, and waiting says so rather than voting again beside instances none can close. */
static bool covered(const struct recovery *r, uint32_t k)
{
	paxos_iid end = r->m.configuration_ends[k];
	return end != 0 && r->heard_iid >= end && r->proposers_answered == r->proposers_needed &&
	       !(r->peers_recovering & r->configs[k]);
}

/* The first configuration whose members have not answered enough (0: none). */
static uint32_t short_config(const struct recovery *r)
{
	for (uint32_t k = 0; k < PAXOS_ACCEPTOR_CONFIGURATIONS && r->configs[k]; k++) {
		if (covered(r, k))
			continue;
		uint32_t heard = r->acceptors_answered & r->configs[k] & ~(1u << r->id);
		if ((uint32_t)__builtin_popcount(heard) < needed_in(r, r->configs[k]))
			return r->configs[k];
	}
	return 0;
}

/* The other acceptors' ids, one bit each: the members of every configuration but us. */
static uint32_t others(const struct recovery *r)
{
	return r->others;
}

/*
 * A first start: a cluster that never accepted anything. Every proposer that answered is in
 * its first epoch (the epoch store gives a restarted one a later epoch) and sent no accept
 * yet, and no acceptor that holds its state has accepted anything. Then nothing can be lost,
 * and acceptors that all start empty need no answer from one that holds its state, which none
 * does. A proposer that never answers is waited for (recovery_ticks), and then only if every
 * other acceptor was heard (recovering, or holding nothing): one that is away may hold what a
 * proposer that is away chose with the acceptors that lost it.
 */
static bool first_start(const struct recovery *r)
{
	if (r->proposers_needed == 0 || r->peers_holding != 0 || r->ran_before)
		return false;
	for (uint32_t i = 0; i < r->m.proposers; i++)
		if (r->answered[i] && !r->fresh[i])
			return false;
	if (r->proposers_answered == r->proposers_needed)
		return true;
	return r->m.recovery_ticks != 0 && r->age >= r->m.recovery_ticks &&
	       ((r->peers_recovering | r->peers_empty) & others(r)) == others(r);
}

/* Every proposer answered, or the one that did not was waited for. */
static bool proposers_done(const struct recovery *r)
{
	return r->proposers_answered == r->proposers_needed ||
	       (r->m.recovery_ticks != 0 && r->age >= r->m.recovery_ticks);
}

/* Every other acceptor is heard recovering, and none of an older release is live (it could
 * not serve a new log: paxos_acceptor_set_old_peers). */
static bool all_others_recover(const struct recovery *r)
{
	return !r->old_peers && (r->peers_recovering & others(r)) == others(r);
}

/* No acceptor holds the log: every other one recovers too, none answered (see above). A
 * proposer that said it ran before is waited for until it answers: what its earlier life sent
 * may still arrive, and the fence must cover it. */
static bool log_lost(const struct recovery *r)
{
	if (r->m.configurations[0] || r->acceptors_answered != 0 || !all_others_recover(r) ||
	    (r->recovering_since_accepts & others(r)) != others(r) || !proposers_done(r))
		return false;
	for (uint32_t i = 0; i < r->m.proposers; i++)
		if (r->said_ran_before[i] && !r->answered[i])
			return false;
	return true;
}

/* Begins a log: one above every generation heard, with the peers recovering now as its
 * founders. */
static void begin_log(struct recovery *r)
{
	r->new_log = PAXOS_ACCEPTOR_LOG_LOST;
	r->generation = (r->gen_seen > r->generation ? r->gen_seen : r->generation) + 1;
	for (uint32_t i = 0; i < PAXOS_MAX_ACCEPTORS; i++)
		r->founders[i] = (r->peers_recovering & (1u << i)) ? r->recovering_as[i] : 0;
	r->counters->new_logs_begun++;
}

/*
 * The proposers start their first epoch, but this acceptor served a log in an earlier life:
 * an operator began the cluster anew by hand (their epoch files removed, docs/operating.md),
 * and the old log is lost for good. Not a first start, which would name the new log like the
 * old one: once every other acceptor is heard recovering too and none answers, it is a lost
 * log, and all take the same generation, one above every one kept.
 */
static bool begun_anew(const struct recovery *r)
{
	return r->m.served_before && r->acceptors_answered == 0;
}

static void maybe_recovered(struct recovery *r)
{
	if (!r->recovering)
		return;
	bool first = first_start(r), lost = !first && log_lost(r);
	if (first && begun_anew(r)) {
		if (!all_others_recover(r))
			return;
		first = false;
		lost = true;
	}
	bool founder = !first && !lost && r->founder_gen > r->m.generation;
	if (!first && !lost && !founder) {
		if (short_config(r))
			return;
		if (!proposers_done(r))
			return;
	}
	r->recovering = false;
	r->floor = lost || founder ? 0 : r->heard_iid;
	r->fence = r->heard_ballot;
	/* A first start may come before the others are heard: it takes the generation they
	 * serve (holding nothing), or the highest heard, and names none of its own. */
	if (first) {
		r->new_log = PAXOS_ACCEPTOR_LOG_FIRST;
		if (r->acceptors_answered)
			r->generation = r->gen_answered;
		else if (r->gen_seen > r->generation)
			r->generation = r->gen_seen;
	} else if (lost)
		begin_log(r);
	else if (founder)
		r->generation = r->founder_gen;
	else if (r->gen_answered)
		r->generation = r->gen_answered;
	r->counters->recoveries++;
}

int recovery_join(struct recovery *r, const struct paxos_acceptor_membership *m)
{
	if (!m || m->proposers > PAXOS_MAX_PROPOSERS || m->incarnation == 0)
		return PAXOS_E_INVALID;
	if (!m->configurations[0] &&
	    (m->acceptors == 0 || m->acceptors > PAXOS_MAX_ACCEPTORS || r->id >= m->acceptors))
		return PAXOS_E_INVALID;
	recovery_init(r, r->id, r->counters);
	r->joined = true;
	r->m = *m;
	uint32_t all = m->proposers >= 32 ? UINT32_MAX : (1u << m->proposers) - 1;
	if (m->proposer_set && m->proposers <= 32)
		r->m.proposer_set &= all;
	else
		r->m.proposer_set = 0;
	r->proposers_needed =
	    r->m.proposer_set ? (uint32_t)__builtin_popcount(r->m.proposer_set) : m->proposers;
	if (m->configurations[0]) {
		memcpy(r->configs, m->configurations, sizeof(r->configs));
	} else {
		memset(r->configs, 0, sizeof(r->configs));
		r->configs[0] = m->acceptors >= 32 ? UINT32_MAX : (1u << m->acceptors) - 1;
	}
	for (uint32_t k = 0; k < PAXOS_ACCEPTOR_CONFIGURATIONS && r->configs[k]; k++)
		r->others |= r->configs[k];
	r->others &= ~(1u << r->id);
	r->recovering = m->amnesiac;
	r->generation = r->gen_seen = m->generation;
	r->floor = m->floor;
	r->fence = m->fence;
	if (r->recovering)
		maybe_recovered(r); /* a single acceptor with no proposers has no one to ask */
	return PAXOS_OK;
}

/*
 * Thesis 3.7.6: "An acceptor that crashes either recovers its state entirely, or it is not
 * allowed to re-enter the system." Here one that lost its state re-enters once its peers and the
 * proposers told it how far its earlier life may have voted (floor and fence), and votes only
 * where no vote of that life can be contradicted, so that volatile acceptors survive restarts
 * one at a time.
 *
 * At or below the floor an earlier life may have accepted a value that a quorum chose, so no
 * promise is given there: a promise would report nothing where that value should be seen.
 * An accept above the fence is taken there all the same. Its proposer ran phase 1 with a
 * quorum that did not include this acceptor (it promised nothing at that instance), which
 * shares a member other than this one with any quorum that chose before, so its value is the
 * chosen one if there was one; and no promise of the earlier life reaches above the fence.
 * This lets an instance below the floors of several acceptors still close with their votes.
 */
enum vote recovery_may_vote(const struct recovery *r, paxos_iid iid, paxos_ballot ballot,
			    bool accept)
{
	if (r->recovering || (iid <= r->floor && !accept))
		return WITHHOLD;
	return ballot <= r->fence ? REJECT_BELOW_FENCE : VOTE;
}

void recovery_note_vote(struct recovery *r, paxos_ballot ballot)
{
	if (ballot > r->voted_ballot)
		r->voted_ballot = ballot;
}

void recovery_handle_info(struct recovery *r, const struct paxos_recover_info *info)
{
	if (!r->recovering || info->acceptor_id != r->id || info->incarnation != r->m.incarnation ||
	    !paxos_ballot_plausible(info->highest_ballot))
		return;
	if (info->role == PAXOS_ROLE_ACCEPTOR) {
		/* An acceptor of no configuration listed counts for no quorum, but what it
		 * reports only raises the floor and fence: kept, to be safe. */
		if (info->sender_id == r->id || info->sender_id >= PAXOS_MAX_ACCEPTORS)
			return;
		uint32_t bit = 1u << info->sender_id;
		r->acceptors_answered |= bit;
		/* Only one that holds its state answers, and this one heard us: it recovers no
		 * more, whatever hello of it came last. */
		r->peers_recovering &= ~bit;
		r->recovering_as[info->sender_id] = 0;
		if (info->generation > r->gen_answered)
			r->gen_answered = info->generation;
		if (info->founder && info->generation > r->founder_gen)
			r->founder_gen = info->generation;
		if (info->highest_iid == 0) {
			r->peers_empty |= bit;
		} else {
			r->peers_empty &= ~bit;
			r->peers_holding |= bit; /* it accepted: no first start, for good */
		}
	} else if (info->role == PAXOS_ROLE_PROPOSER) {
		if (info->sender_id >= r->m.proposers)
			return;
		if (info->highest_ballot == 0) { /* restarted, its answer comes later */
			r->ran_before = true;
			r->said_ran_before[info->sender_id] = true;
			return;
		}
		/* One outside the proposer set is not waited for, but what it says still counts
		 * (a removed proposer may have led until the change): the fence only rises. */
		bool member = !r->m.proposer_set || (r->m.proposer_set & (1u << info->sender_id));
		if (member && !r->answered[info->sender_id]) {
			r->answered[info->sender_id] = true;
			r->proposers_answered++;
		}
		r->fresh[info->sender_id] =
		    info->highest_iid == 0 && first_epoch_or_before(info->highest_ballot);
		/* Accepts went to acceptors that serve a log: the peers' hellos must say again
		 * that they recover (at a first start, the others may have recovered meanwhile,
		 * and the proposer's accepts went to them). */
		if (info->highest_iid > 0)
			r->recovering_since_accepts = 0;
	} else {
		return;
	}
	if (info->highest_iid > r->heard_iid)
		r->heard_iid = info->highest_iid;
	if (info->highest_ballot > r->heard_ballot)
		r->heard_ballot = info->highest_ballot;
	maybe_recovered(r);
}

/* Our age in hellos: microseconds since the start, as the node says, or else ticks. */
static uint64_t recovery_age(const struct recovery *r)
{
	return r->age_us ? r->age_us : r->ticks;
}

/*
 * Two acceptors with one id: the one that started later stops. Ages are counted since
 * each started, not read off wall clocks, which may disagree by any amount; and one decides to
 * stop only on a hello that echoes its own incarnation (a random number drawn at its start),
 * which only a process that runs now and heard it can send: a hello of an earlier life, seen
 * late or replayed, never stops anyone (it is counted, and echoed, nothing more). Without
 * authentication anyone who heard our hello can send that echo too, so the older one must be
 * heard on duplicate_ticks ticks within twice as many (a process that runs says hello every
 * tick; a lost hello or two is tolerated), not once.
 */
static int handle_duplicate(struct recovery *r, const struct paxos_acceptor_hello *h,
			    bool *hello_now)
{
	r->counters->duplicate_acceptors++;
	if (r->duplicate != h->incarnation) {
		r->duplicate = h->incarnation;
		r->duplicate_newer = false;
		r->older_heard = 0;
		*hello_now = true; /* echo it now: if it runs, it learns of us at once */
	}
	if (h->echo != r->m.incarnation)
		return PAXOS_OK;
	uint64_t mine = recovery_age(r);
	bool older = h->age > mine || (h->age == mine && h->incarnation < r->m.incarnation);
	if (older && r->m.duplicate_ticks > 1) {
		if (r->older_heard == 0 || r->ticks - r->older_first >= 2 * r->m.duplicate_ticks) {
			r->older_heard = 1;
			r->older_first = r->older_last = r->ticks;
		} else if (r->ticks != r->older_last) {
			r->older_heard++;
			r->older_last = r->ticks;
		}
		if (r->older_heard < r->m.duplicate_ticks)
			return PAXOS_OK;
	}
	if (older)
		return PAXOS_E_DUPLICATE;
	r->duplicate_newer = true;
	return PAXOS_OK;
}

int recovery_handle_hello(struct recovery *r, const struct paxos_acceptor_hello *h, bool *answer,
			  bool *hello_now)
{
	*answer = false;
	*hello_now = false;
	if (!r->joined)
		return PAXOS_OK;
	if (h->acceptor_id == r->id) {
		if (h->incarnation == r->m.incarnation)
			return PAXOS_OK; /* our own, looped back */
		return handle_duplicate(r, h, hello_now);
	}
	if (h->acceptor_id >= PAXOS_MAX_ACCEPTORS)
		return PAXOS_OK;
	uint32_t bit = 1u << h->acceptor_id;
	/* A peer heard recovering recovers until that incarnation's hello or its answer says
	 * otherwise: a hello of another incarnation that does not recover may be an earlier
	 * life's, seen late (that one held its state; this one lost it). */
	bool stale = !h->recovering && r->recovering_as[h->acceptor_id] != 0 &&
		     r->recovering_as[h->acceptor_id] != h->incarnation;
	if (r->recovering && !stale) {
		r->peers_recovering =
		    h->recovering ? r->peers_recovering | bit : r->peers_recovering & ~bit;
		r->recovering_since_accepts = h->recovering ? r->recovering_since_accepts | bit
							    : r->recovering_since_accepts & ~bit;
		r->recovering_as[h->acceptor_id] = h->recovering ? h->incarnation : 0;
		/* A recovering one's: the highest it voted in. One that serves a log answers
		 * with it. */
		if (h->recovering && h->generation > r->gen_seen)
			r->gen_seen = h->generation;
	}
	*answer = h->recovering && !r->recovering;
	return PAXOS_OK;
}

bool recovery_waits_for(const struct recovery *r, uint32_t acceptor_id)
{
	return r->recovering && acceptor_id < PAXOS_MAX_ACCEPTORS &&
	       (others(r) & (1u << acceptor_id)) && !(r->acceptors_answered & (1u << acceptor_id));
}

/*
 * The highest instance this acceptor accepted (or, below its own floor, may have) a value for.
 * A recovering acceptor's earlier life accepted only in instances where a quorum promised
 * first, and enough of the others answer that one of them is in that quorum: its promise was
 * followed by the accept, which the proposer's answer covers while it is on its way, and which
 * this acceptor's record shows once it arrived here. Promises alone (phase 1 runs a window
 * ahead) do not raise the floor: below the fence they cannot be used again.
 */
void recovery_answer(const struct recovery *r, const struct paxos_acceptor_hello *h,
		     paxos_iid highest, struct paxos_recover_info *out)
{
	*out = (struct paxos_recover_info){
	    .role = PAXOS_ROLE_ACCEPTOR,
	    .sender_id = r->id,
	    .acceptor_id = h->acceptor_id,
	    .incarnation = h->incarnation,
	    .highest_iid = r->floor > highest ? r->floor : highest,
	    .highest_ballot = r->voted_ballot > r->fence ? r->voted_ballot : r->fence,
	    .generation = r->generation,
	    .founder = h->acceptor_id < PAXOS_MAX_ACCEPTORS && r->founders[h->acceptor_id] != 0 &&
		       r->founders[h->acceptor_id] == h->incarnation,
	};
}

void recovery_emit_hello(const struct recovery *r, const struct paxos_emitter *out)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_HELLO};
	m.u.acceptor_hello.acceptor_id = r->id;
	m.u.acceptor_hello.incarnation = r->m.incarnation;
	m.u.acceptor_hello.recovering = r->recovering;
	m.u.acceptor_hello.age = recovery_age(r);
	m.u.acceptor_hello.echo = r->duplicate;
	m.u.acceptor_hello.generation = r->generation;
	paxos_emit(out, PAXOS_GROUP_ACCEPTORS, &m);
}

/* Answers may be lost: the question is asked until recovered. */
void recovery_tick(struct recovery *r, const struct paxos_emitter *out)
{
	r->ticks++;
	recovery_emit_hello(r, out);
	if (!r->recovering)
		return;
	r->age++;
	maybe_recovered(r);
	recovery_emit_ask(r, out);
}

void recovery_emit_ask(const struct recovery *r, const struct paxos_emitter *out)
{
	if (!r->recovering)
		return;
	struct paxos_message m = {.type = PAXOS_MSG_RECOVER_ASK};
	m.u.recover_ask.acceptor_id = r->id;
	m.u.recover_ask.incarnation = r->m.incarnation;
	paxos_emit(out, PAXOS_GROUP_PROPOSERS, &m);
}

void recovery_wait(const struct recovery *r, struct paxos_acceptor_recovery_wait *w)
{
	*w = (struct paxos_acceptor_recovery_wait){0};
	if (!r->recovering)
		return;
	w->ticks = r->age;
	uint32_t c = short_config(r);
	if (!c)
		c = r->configs[0];
	w->acceptors_needed = needed_in(r, c);
	w->acceptors_silent = c & ~(1u << r->id) & ~r->acceptors_answered;
	w->acceptors_recovering = r->peers_recovering & w->acceptors_silent;
	w->acceptors_answered =
	    (uint32_t)__builtin_popcount(r->acceptors_answered & c & ~(1u << r->id));
	w->proposers_silent = r->proposers_needed - r->proposers_answered;
}
