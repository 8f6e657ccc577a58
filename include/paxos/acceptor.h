/* The acceptor's protocol logic (thesis 2.2.2, 3.4), free of I/O. */
#ifndef PAXOS_ACCEPTOR_H
#define PAXOS_ACCEPTOR_H

#include <paxos/counters.h>
#include <paxos/message.h>
#include <paxos/storage.h>

struct paxos_acceptor;

/* Most instances one repeat request is answered for; the rest must be asked again. */
#define PAXOS_ACCEPTOR_MAX_REPEAT 512u

/* The acceptor does not own st or counters; both must outlive it. */
struct paxos_acceptor *paxos_acceptor_new(uint32_t id, struct paxos_storage *st,
					  struct paxos_counters *counters);
void paxos_acceptor_free(struct paxos_acceptor *a);

/* Most messages one group commit covers: one datagram's worth (PAXOS_MAX_MESSAGES_PER_DATAGRAM).
 * A longer batch is handled in chunks of this size, each with its own commit. */
#define PAXOS_ACCEPTOR_MAX_BATCH 1024u

/*
 * Group commit (thesis 3.4): handle msgs[0..n) sent to the acceptors group (prepare, accept,
 * repeat, trim; anything else is ignored) inside one storage transaction, commit it once,
 * and only then emit every reply, in message order. A repeat that asks for trimmed instances
 * is answered with PAXOS_MSG_TRIMMED first. Values in msgs must stay valid during the call;
 * out must not call back into the acceptor. Returns PAXOS_OK, or a storage error: then
 * nothing of the batch is emitted and the acceptor must not answer anything again.
 */
int paxos_acceptor_handle_batch(struct paxos_acceptor *a, const struct paxos_message *msgs,
				size_t n, const struct paxos_emitter *out);

/* A batch of one. */
int paxos_acceptor_handle(struct paxos_acceptor *a, const struct paxos_message *m,
			  const struct paxos_emitter *out);

/*
 * Learning acceptors (thesis 3.7.5): v was chosen for iid (the node's learner closed it).
 * Marks the record final with v; from then on the record never changes: accepts for iid, at
 * any ballot, are answered with v flagged final, prepares with a promise carrying v, and
 * repeats and ticks say final, so a learner delivers on one answer. The mark is committed
 * with the next batch or tick, not at once (losing it in a crash is harmless). Trimmed
 * instances are ignored. Must not be called from the emitter of a batch. Returns PAXOS_OK or
 * a storage error (the acceptor is then stopped, as after a failed batch).
 */
int paxos_acceptor_learned(struct paxos_acceptor *a, paxos_iid iid, const struct paxos_value *v);

/*
 * Keep at most about this many instances below the highest accepted one: each tick trims the
 * rest, as a trim request would (repeats for them are answered with PAXOS_MSG_TRIMMED). For a
 * store that lives in memory, which would otherwise grow with every instance. 0 (the
 * default): keep everything until trimmed by request.
 */
void paxos_acceptor_set_retention(struct paxos_acceptor *a, uint64_t instances);

/* Periodic: apply the retention bound, then resend the highest accepted instance and the
 * acceptor state to the learners, so they find their holes when traffic is low. */
int paxos_acceptor_tick(struct paxos_acceptor *a, const struct paxos_emitter *out);

#endif
