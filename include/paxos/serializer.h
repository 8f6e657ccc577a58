/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The serializer (thesis 4.2): an ideal atomic broadcast to compare Paxos against. It gives
 * each client value the next instance, stores it through the acceptors' storage interface
 * and sends it to the learners marked final, so unmodified learners deliver it at once. It
 * has no fault tolerance; it exists to be measured. I/O-free, like the role cores.
 */
#ifndef PAXOS_SERIALIZER_H
#define PAXOS_SERIALIZER_H

#include <paxos/counters.h>
#include <paxos/message.h>
#include <paxos/storage.h>

struct paxos_serializer;

/** Resumes after the highest instance st holds. Neither st nor counters is owned. Each client
 * value becomes the frame of one value (lib/core/batch.h), as proposers frame theirs; values longer
 * than max_value (paxos_config_max_value) are dropped, their frame would not fit in a
 * datagram. NULL if max_value is 0 or out of memory. */
PAXOS_API struct paxos_serializer *
paxos_serializer_new(struct paxos_storage *st, uint32_t max_value, struct paxos_counters *counters);
/** Frees the serializer (not its store nor its counters); NULL is ignored. */
PAXOS_API void paxos_serializer_free(struct paxos_serializer *s);

/**
 * Handle the messages of one datagram: client values are numbered and stored in one storage
 * transaction, then sent as final accepted messages; repeat requests are answered from
 * storage; trim requests trim it. Returns PAXOS_OK or a storage error, after which the
 * serializer refuses to do anything else. As for the acceptor, a pipelined storage's commit is
 * durable only once its sync says so: the sender holds what out receives until then.
 */
PAXOS_API int paxos_serializer_handle_batch(struct paxos_serializer *s,
					    const struct paxos_message *msgs, size_t n,
					    const struct paxos_emitter *out);

/** Periodic: tell the learners the highest instance, so they find holes at low load. */
PAXOS_API int paxos_serializer_tick(struct paxos_serializer *s, const struct paxos_emitter *out);

/** The next instance a value will get. */
PAXOS_API paxos_iid paxos_serializer_next_iid(const struct paxos_serializer *s);

#endif
