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

/*
 * Handle one message sent to the acceptors group (prepare, accept, repeat, trim; anything
 * else is ignored). State is written to storage before the reply is emitted. Returns
 * PAXOS_OK, or a storage error after which the acceptor must not answer anything again.
 */
int paxos_acceptor_handle(struct paxos_acceptor *a, const struct paxos_message *m,
			  const struct paxos_emitter *out);

/* Periodic: resend the highest accepted instance and the acceptor state to the learners, so
 * they find their holes when traffic is low. */
int paxos_acceptor_tick(struct paxos_acceptor *a, const struct paxos_emitter *out);

#endif
