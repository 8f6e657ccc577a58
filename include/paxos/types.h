/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Basic types shared by every part of libpaxos: instance ids, ballots, time, values, roles,
 * groups, limits, and the status codes every fallible function returns (enum paxos_status).
 */
#ifndef PAXOS_TYPES_H
#define PAXOS_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Marks the library's public functions: libpaxos.so exports these and nothing else (it is
 * built with -fvisibility=hidden). Applications never need it. */
#define PAXOS_API __attribute__((visibility("default")))

typedef uint64_t paxos_iid;    /**< instance id; the first instance is 1 */
typedef uint64_t paxos_ballot; /**< 0 means "none" (real ballots are >= PAXOS_MAX_PROPOSERS) */
typedef uint64_t paxos_time;   /**< monotonic time in microseconds */

/** Most proposers a cluster may have (ids 0 .. PAXOS_MAX_PROPOSERS - 1).
 *
 * Ballots follow thesis 3.5.2, ballot = seq * n + p for proposer p: b++ is b + n, and seq
 * carries the proposer's incarnation (epoch) above its round (see proposer/ballot.h). */
#define PAXOS_MAX_PROPOSERS 100u

/**
 * Ballots have room for 2^25 proposer epochs (PAXOS_PROPOSER_EPOCH_LIMIT), but no proposer
 * restarts a million times: a ballot in epoch PAXOS_PLAUSIBLE_EPOCHS or later is a forgery or a
 * bug. Every core drops such a ballot as malformed (counted as implausible_ballots), so one bad
 * datagram cannot make acceptors promise, or a proposer jump, to the end of the ballot space.
 * Proposers never take or raise to an epoch at or beyond it either.
 */
#define PAXOS_PLAUSIBLE_EPOCHS (1u << 20)

/** Whether ballot @p b lies below epoch PAXOS_PLAUSIBLE_EPOCHS (seq = b / n, epoch = seq >> 32). */
static inline bool paxos_ballot_plausible(paxos_ballot b)
{
	return (b / PAXOS_MAX_PROPOSERS) >> 32 < PAXOS_PLAUSIBLE_EPOCHS;
}

/** Acceptor ids must fit in the 32-bit quorum masks the cores use. */
#define PAXOS_MAX_ACCEPTORS 32u

/** Most partitions (paxos.conf "partitions"): independent Paxos logs of one cluster. */
#define PAXOS_MAX_PARTITIONS 64u

/** Partition p's ports are the configured ones plus p times this (groups, unicast members). */
#define PAXOS_PARTITION_PORT_STEP 10u

/** A value is a borrowed byte range; whoever hands it over says how long it lives. The
 * library never frees a paxos_value's bytes it was given, and values it hands to callbacks
 * are valid during the call only: copy what you keep. */
struct paxos_value {
	const uint8_t *data; /**< the bytes (not NUL-terminated); may be NULL when len is 0 */
	uint32_t len;        /**< how many bytes data holds */
};

/** The roles a process can play (a node hosts any mix of the first three). */
enum paxos_role {
	PAXOS_ROLE_ACCEPTOR = 0, /**< votes on values and keeps them (paxos/acceptor.h) */
	PAXOS_ROLE_PROPOSER =
	    1,                  /**< proposes client values, one of them leads (paxos/proposer.h) */
	PAXOS_ROLE_LEARNER = 2, /**< delivers the chosen values in order (paxos/learner.h) */
	PAXOS_ROLE_CLIENT = 3,  /**< only submits values */
	PAXOS_ROLE_COUNT        /**< number of roles, not a role */
};

/** Multicast groups, one per destination. */
enum paxos_group {
	PAXOS_GROUP_ACCEPTORS = 0, /**< prepare, accept, repeat, trim */
	PAXOS_GROUP_PROPOSERS = 1, /**< promise, reject */
	PAXOS_GROUP_LEARNERS = 2,  /**< accepted, acceptor state */
	PAXOS_GROUP_SUBMIT = 3,    /**< client values */
	/** The acceptors' votes on the leader's accepts (valueless accepted messages): the
	 * learners that count them join it, an acceptor's own learner does not (it learns what
	 * was chosen from the leader's accepts, paxos_accept.chosen_to). A node speaking wire
	 * version 5 sends them to the learners group. */
	PAXOS_GROUP_VOTES = 4,
	PAXOS_GROUP_COUNT /**< number of groups, not a group */
};

/** Status codes: 0 is success, errors are negative. Functions returning @c int return one of
 * these; paxos_strerror() describes each, and a node's paxos_node_error() says more about its
 * last failure. */
enum paxos_status {
	PAXOS_OK = 0,            /**< success */
	PAXOS_E_INVALID = -1,    /**< bad argument */
	PAXOS_E_TOO_BIG = -2,    /**< value larger than the configured maximum */
	PAXOS_E_NOMEM = -3,      /**< allocation failed */
	PAXOS_E_IO = -4,         /**< socket or file error */
	PAXOS_E_CONFIG = -5,     /**< bad configuration */
	PAXOS_E_FULL = -6,       /**< a bounded buffer or list is full */
	PAXOS_E_MALFORMED = -7,  /**< undecodable datagram */
	PAXOS_E_STORAGE = -8,    /**< storage backend failed */
	PAXOS_E_TRIMMED = -9,    /**< the instance was trimmed (thesis 3.4.1): load a snapshot */
	PAXOS_E_TIMEOUT = -10,   /**< no answer in time */
	PAXOS_E_DUPLICATE = -11, /**< another acceptor with this id runs (and started earlier) */
};

/** A readable description of a status code ("bad argument", ...), in static storage: never
 * NULL, also for codes this library does not know. Any thread may call it. */
PAXOS_API const char *paxos_strerror(int status);

#endif
