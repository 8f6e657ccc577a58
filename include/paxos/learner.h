/* The learner's protocol logic (thesis 3.3), free of I/O. */
#ifndef PAXOS_LEARNER_H
#define PAXOS_LEARNER_H

#include <paxos/config.h>
#include <paxos/counters.h>
#include <paxos/message.h>

struct paxos_learner;

/* Called in instance order, exactly once per instance; value is valid during the call. */
typedef void (*paxos_deliver_fn)(void *arg, paxos_iid iid, const struct paxos_value *value);

/* Called when an instance becomes closed (a quorum accepted it, or an acceptor said its value
 * is final), possibly before the instances below it are delivered, and again for each accepted
 * message that arrives for it while it waits for those: a proposer that re-runs it (its window
 * reached it after the first call) hears of it that way. The proposer uses it for event C. */
typedef void (*paxos_closed_fn)(void *arg, paxos_iid iid, const struct paxos_value *value);

/*
 * Called once when instances from..to can no longer be learned: enough acceptors trimmed
 * them (thesis 3.4.1) that no quorum can answer for them, and the learner has not delivered
 * them. The learner skips them (next becomes to + 1, already during the call); the
 * application should load a snapshot covering at least instance to.
 */
typedef void (*paxos_trimmed_fn)(void *arg, paxos_iid from, paxos_iid to);

struct paxos_learner_options {
	uint32_t acceptors;    /* quorum is acceptors / 2 + 1 */
	uint32_t window;       /* instances tracked from the next to deliver */
	uint32_t max_value;    /* largest value it must store */
	uint32_t repeat_batch; /* most instances in one repeat request */
	paxos_time hole_check; /* interval between repeat requests for holes, microseconds */
	enum paxos_learner_start start;
	paxos_iid start_iid; /* non-zero: deliver from this instance on, whatever start says */
	paxos_deliver_fn deliver;
	void *deliver_arg;
	paxos_closed_fn closed; /* may be NULL */
	void *closed_arg;
	paxos_trimmed_fn trimmed; /* may be NULL: the instances are skipped all the same */
	void *trimmed_arg;
};

/* Fills options from a configuration (callbacks left NULL). */
void paxos_learner_options_from_config(struct paxos_learner_options *o,
				       const struct paxos_config *cfg);

struct paxos_learner *paxos_learner_new(const struct paxos_learner_options *o,
					struct paxos_counters *counters);
void paxos_learner_free(struct paxos_learner *l);

/* Handle one message sent to the learners group (accepted, acceptor state, trimmed; anything
 * else is ignored). Deliveries and the trimmed callback happen inside this call. */
void paxos_learner_handle(struct paxos_learner *l, const struct paxos_message *m, paxos_time now,
			  const struct paxos_emitter *out);

/* Periodic hole check: asks the acceptors again for instances it is missing. */
void paxos_learner_tick(struct paxos_learner *l, paxos_time now, const struct paxos_emitter *out);

/* The lowest instance not yet delivered. */
paxos_iid paxos_learner_next_iid(const struct paxos_learner *l);

/* Highest instance the learner knows exists (from any message); 0 if none. */
paxos_iid paxos_learner_highest_seen(const struct paxos_learner *l);

#endif
