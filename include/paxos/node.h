/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A node hosts any mix of roles (acceptor, proposer, learner) on one libevent loop and
 * connects them to the UDP multicast groups of a configuration. It is the thin adapter
 * around the I/O-free cores; applications link it to broadcast and deliver values.
 */
#ifndef PAXOS_NODE_H
#define PAXOS_NODE_H

#include <paxos/config.h>
#include <paxos/transport.h>
#include <paxos/counters.h>
#include <paxos/epoch.h>
#include <paxos/learner.h>
#include <paxos/storage.h>

struct event_base;
struct paxos_node;

/* Opens the sender socket. cfg is copied. NULL on error, with err filled. */
PAXOS_API struct paxos_node *paxos_node_new(struct event_base *base, const struct paxos_config *cfg,
					    char *err, size_t errlen);

/* A node on another transport (paxos/transport.h): open(open_arg, ...) gives it one, which the
 * node owns from then on. paxos_node_new is this with the UDP multicast transport. */
PAXOS_API struct paxos_node *paxos_node_new_on(struct event_base *base,
					       const struct paxos_config *cfg,
					       paxos_transport_open_fn open, void *open_arg,
					       char *err, size_t errlen);
PAXOS_API void paxos_node_free(struct paxos_node *n);

/* Host an acceptor with this id; the node takes ownership of st. A memory store keeps only
 * the last memory-retention instances (paxos.conf); older ones are trimmed as they age. */
PAXOS_API int paxos_node_add_acceptor(struct paxos_node *n, uint32_t id, struct paxos_storage *st);

/* Host the serializer (thesis 4.2, include/paxos/serializer.h) in place of the acceptors and
 * proposers: it takes the clients' values, stores them in st (owned by the node from now on)
 * and sends them to the learners as final, speaking as acceptor 0. Not on a node that hosts
 * an acceptor or a proposer. */
PAXOS_API int paxos_node_add_serializer(struct paxos_node *n, struct paxos_storage *st);

/* Host a proposer with this id. It brings an internal learner, shared with
 * paxos_node_add_learner, and takes part in leader election (paxos.conf `election`): it leads
 * while it is the lowest-id live proposer, or while the oracle says so. */
PAXOS_API int paxos_node_add_proposer(struct paxos_node *n, uint32_t id);

/* paxos_node_add_proposer with the proposer's epochs in es (paxos/epoch.h), which the node
 * owns from now on; paxos_node_add_proposer opens the file store in
 * storage-path/proposer-<id> (paxos_epoch_store_dir). */
PAXOS_API int paxos_node_add_proposer_with(struct paxos_node *n, uint32_t id,
					   struct paxos_epoch_store *es);

/* Called for every value delivered, in instance order: iid is its instance, position its
 * place among the values batched into that instance (0 for the first). value is valid during
 * the call only. */
typedef void (*paxos_value_delivered_fn)(void *arg, paxos_iid iid, uint32_t position,
					 const struct paxos_value *value);

/* Host a learner that delivers every value, in order, to deliver. */
PAXOS_API int paxos_node_add_learner(struct paxos_node *n, paxos_value_delivered_fn deliver,
				     void *arg);

/* Start learning at instance first rather than where paxos.conf says (learner-start), e.g.
 * after loading a snapshot that covers everything below first. Call it before adding a
 * learner or a proposer. */
PAXOS_API int paxos_node_set_learner_start(struct paxos_node *n, paxos_iid first);

/* Called when instances from..to can no longer be learned because the acceptors trimmed
 * them (thesis 3.4.1): the application should load a snapshot. The learner then goes on
 * from to + 1. Call it before adding a learner or a proposer. */
PAXOS_API void paxos_node_on_trimmed(struct paxos_node *n, paxos_instances_trimmed_fn trimmed,
				     void *arg);

/* snapshot(i), thesis 3.4.1: tell the acceptors they may drop every instance up to iid.
 * Unreliable like paxos_submit; repeat it now and then. */
PAXOS_API int paxos_node_trim(struct paxos_node *n, paxos_iid iid);

/*
 * Atomic broadcast, thesis 3.2.2: sends value to the proposers without blocking and without
 * any guarantee; learn the value to know it was delivered. Returns PAXOS_OK, PAXOS_E_INVALID
 * for a NULL value with a non-zero length, or PAXOS_E_TOO_BIG when len exceeds
 * paxos_config_max_value(); on error nothing is sent and paxos_node_error() says why.
 */
PAXOS_API int paxos_node_submit(struct paxos_node *n, const void *value, size_t len);

/* The former name of paxos_node_submit, kept for programs written against 0.1. */
PAXOS_API int paxos_submit(struct paxos_node *n, const void *value, size_t len);

/* The last error this node reported, as a sentence. */
PAXOS_API const char *paxos_node_error(const struct paxos_node *n);

/* Counters of a hosted role (NULL if the role is not hosted); the transport's counters
 * (datagrams, messages, malformed input) are paxos_node_transport_counters(). */
PAXOS_API const struct paxos_counters *paxos_node_counters(const struct paxos_node *n,
							   enum paxos_role role);
PAXOS_API const struct paxos_counters *paxos_node_transport_counters(const struct paxos_node *n);

/* PAXOS_OK and the id this node hosts role with (a learner's is 0; the serializer is
 * acceptor 0), or PAXOS_E_INVALID when it does not host role. */
PAXOS_API int paxos_node_role_id(const struct paxos_node *n, enum paxos_role role, uint32_t *id);

/*
 * Levels of the hosted roles beside their counters, read on demand (paxos/metrics.h serves
 * them). Each is 0 (false) when the node does not host the role, but paxos_node_leader:
 * PAXOS_MAX_PROPOSERS then.
 * Proposer: the proposer it takes for the leader, the highest ballot it prepared with, the
 * client values in its pending list, the instances of its window in use
 * (paxos_proposer_window_in_use).
 */
PAXOS_API uint32_t paxos_node_leader(const struct paxos_node *n);
PAXOS_API paxos_ballot paxos_node_ballot(const struct paxos_node *n);
PAXOS_API uint32_t paxos_node_pending(const struct paxos_node *n);
PAXOS_API uint32_t paxos_node_window_in_use(const struct paxos_node *n);
/* Learner: the highest instance it heard of (it delivered up to paxos_node_next_iid() - 1). */
PAXOS_API paxos_iid paxos_node_highest_seen(const struct paxos_node *n);
/* Acceptor (or serializer): its store's highest accepted instance and trim point; whether it
 * is recovering lost state (votes withheld, see paxos_acceptor_join). */
PAXOS_API paxos_iid paxos_node_highest_accepted(const struct paxos_node *n);
PAXOS_API paxos_iid paxos_node_trimmed(const struct paxos_node *n);
PAXOS_API bool paxos_node_recovering(const struct paxos_node *n);
/* PAXOS_OK and the bytes its store takes and may take (0: no limit), or PAXOS_E_INVALID when
 * there is no store or its backend cannot tell cheaply (paxos_storage_space). */
PAXOS_API int paxos_node_storage_space(const struct paxos_node *n, uint64_t *used, uint64_t *limit);

/* Write every hosted role's counters as one line each to stderr (also done every
 * counters-interval-ms). */
PAXOS_API void paxos_node_report_counters(const struct paxos_node *n);

/* Non-zero once the node stopped because of a fatal error (e.g. acceptor storage failed);
 * the node has then broken its event loop, and paxos_node_error() says what failed and why,
 * in the storage backend's words ("acceptor storage: storage error: lmdb ...: MDB_MAP_FULL"). */
PAXOS_API int paxos_node_failed(const struct paxos_node *n);

/* Lowest instance this node's learner has not delivered yet (0 without a learner). */
PAXOS_API paxos_iid paxos_node_next_iid(const struct paxos_node *n);

/*
 * The answer to paxos_node_fetch. On success it is called once per value the instance holds
 * (several when values were batched), in order: status PAXOS_OK, position 0..count-1, value
 * valid during the call. Otherwise it is called once with count 0 and value NULL: status
 * PAXOS_E_TRIMMED (the acceptors trimmed the instance: load a snapshot), PAXOS_E_TIMEOUT (no
 * answer within 50 learner-hole-checks) or PAXOS_E_MALFORMED (the instance's value is not a
 * valid batch).
 */
typedef void (*paxos_value_fetched_fn)(void *arg, paxos_iid iid, int status, uint32_t position,
				       uint32_t count, const struct paxos_value *value);

/*
 * Fetch the values chosen for one instance closed in the past (thesis 3.3), e.g. for a
 * replica that lost them: the node's learner asks the acceptors again (repeat iid..iid, every
 * learner-hole-check) and answers through done, from the event loop. Needs a learner
 * (paxos_node_add_learner or paxos_node_add_proposer); delivery goes on undisturbed. Returns
 * PAXOS_OK, PAXOS_E_INVALID (no learner, iid 0, done NULL) or PAXOS_E_FULL
 * (PAXOS_LEARNER_MAX_FETCHES outstanding); on error paxos_node_error() says why.
 * paxos_node_free drops outstanding fetches without calling done.
 */
PAXOS_API int paxos_node_fetch(struct paxos_node *n, paxos_iid iid, paxos_value_fetched_fn done,
			       void *arg);

#endif
