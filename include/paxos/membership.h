/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The acceptor set of a running cluster, changed through the log (Lamport, "Paxos Made
 * Simple", section 3): a membership command chosen in instance i takes effect from instance
 * i + alpha. Which acceptors vote in an instance is thus a function of the log alone, the same
 * at every process that delivered the log up to alpha instances below it. Free of I/O: a
 * learner applies the commands it delivers (paxos_learner_options.membership), a proposer
 * reads the same object (paxos_proposer_options.membership) to count its quorums.
 *
 * The history is a short list of configurations (first instance, members, id). Configuration
 * 1 is the one every process starts from (paxos.conf); each command applied adds one, with the
 * next id. A command names the id of the configuration it was made against and is ignored
 * unless that is the newest one chosen: two changes made at once cannot both apply, and one
 * chosen twice (a retry) applies once.
 */
#ifndef PAXOS_MEMBERSHIP_H
#define PAXOS_MEMBERSHIP_H

#include <paxos/types.h>

/** Configurations a history holds; when full, applying a command forgets the oldest one. */
#define PAXOS_MEMBERSHIP_HISTORY 16u

/** Bytes of a membership command: the whole value of its instance. */
#define PAXOS_MEMBERSHIP_COMMAND_LEN 16u
/** Bytes of a command that also carries a new acceptor's unicast address
 * (paxos_membership_command_at()): the longest command. */
#define PAXOS_MEMBERSHIP_COMMAND_MAX 24u

/** One configuration of the history. */
struct paxos_configuration {
	paxos_iid first;  /**< the first instance it governs */
	uint32_t id;      /**< 1 for the initial one, one more per change */
	uint32_t members; /**< acceptor ids, one bit each (bit a: acceptor a) */
	/** proposer ids that may lead, one bit each (bit p: proposer p); UINT32_MAX: every one
	 * (a history made by paxos_membership_new()) */
	uint32_t proposers;
};

/** What a membership command changes. */
enum paxos_membership_kind {
	PAXOS_MEMBERSHIP_ACCEPTORS = 1, /**< the acceptor set (members) */
	PAXOS_MEMBERSHIP_PROPOSERS = 2, /**< the proposer set (proposers) */
	/** one member's unicast address, the sets as they are
	 * (paxos_membership_command_address()) */
	PAXOS_MEMBERSHIP_ADDRESS = 4,
};

struct paxos_membership;

/** A history that starts with configuration 1 of @p members (one bit per acceptor id, not 0)
 * from instance 1; commands take effect @p alpha instances (at least 1) after the instance
 * they are chosen in. Every process of a cluster must use the same members and alpha. NULL on
 * bad arguments or no memory. */
PAXOS_API struct paxos_membership *paxos_membership_new(uint32_t members, uint32_t alpha);
/** As paxos_membership_new(), with configuration 1 also naming the proposers that may lead
 * (@p proposers, one bit per proposer id, not 0): the set paxos_membership_proposers() gives,
 * which commands of kind PAXOS_MEMBERSHIP_PROPOSERS change. paxos_membership_new() is this
 * with every proposer (UINT32_MAX). */
PAXOS_API struct paxos_membership *paxos_membership_create(uint32_t members, uint32_t proposers,
							   uint32_t alpha);
/** Frees the history; NULL is ignored. */
PAXOS_API void paxos_membership_free(struct paxos_membership *m);

/** The window alpha the history was made with. */
PAXOS_API uint32_t paxos_membership_alpha(const struct paxos_membership *m);

/** The highest instance applied so far (every instance up to it was delivered or skipped). */
PAXOS_API paxos_iid paxos_membership_applied(const struct paxos_membership *m);

/** Whether the configuration of @p iid is known: iid is at most applied + alpha (no command
 * chosen later can change it). */
PAXOS_API bool paxos_membership_known(const struct paxos_membership *m, paxos_iid iid);

/** The configuration that governs @p iid as far as applied (the newest whose first instance is
 * at or below iid; the oldest kept when iid lies below all of them). Meaningful for iid only
 * when paxos_membership_known(). */
PAXOS_API const struct paxos_configuration *paxos_membership_at(const struct paxos_membership *m,
								paxos_iid iid);

/** The members of paxos_membership_at(m, iid). */
PAXOS_API uint32_t paxos_membership_members(const struct paxos_membership *m, paxos_iid iid);

/** The proposers of paxos_membership_at(m, iid), one bit per id. */
PAXOS_API uint32_t paxos_membership_proposers(const struct paxos_membership *m, paxos_iid iid);

/** The quorum of paxos_membership_at(m, iid): half its members plus one. */
PAXOS_API uint32_t paxos_membership_quorum(const struct paxos_membership *m, paxos_iid iid);

/** The newest configuration chosen, which may not be in force yet (its first instance lies
 * above applied + 1). */
PAXOS_API const struct paxos_configuration *
paxos_membership_latest(const struct paxos_membership *m);

/** Whether a change is chosen but not in force yet: the newest configuration starts above
 * applied + 1. */
PAXOS_API bool paxos_membership_pending(const struct paxos_membership *m);

/**
 * Instance @p iid was delivered with value @p v, in instance order: applies it when it is a
 * membership command made against the newest configuration (a new configuration from iid +
 * alpha on, with the acceptors or the proposers the command names and the other set as
 * before; an acceptor set equal to the newest is ignored, a proposer set is not). A command naming
 * ids outside paxos_membership_limit_ids() is ignored. Instances at or below applied are ignored; a
 * gap below iid counts as skipped (see paxos_membership_skip_to()). Returns 1 when a configuration
 * was added, 0 otherwise.
 */
PAXOS_API int paxos_membership_apply(struct paxos_membership *m, paxos_iid iid,
				     const struct paxos_value *v);

/** The ids a command may name: @p acceptors and @p proposers, one bit per id (paxos.conf's
 * ids; UINT32_MAX, the default: any). paxos_membership_apply() ignores a command whose set
 * names another id, so that a bad command chosen anyway (proposed without the checks a node
 * makes) changes nothing. Every process of a cluster must limit to the same ids. Kept when the
 * history is replaced with paxos_membership_adopt(). */
PAXOS_API void paxos_membership_limit_ids(struct paxos_membership *m, uint32_t acceptors,
					  uint32_t proposers);

/** Whether command @p v names only ids paxos_membership_limit_ids() allows (true for a value
 * that is no command). */
PAXOS_API bool paxos_membership_names_known_ids(const struct paxos_membership *m,
						const struct paxos_value *v);

/** Instances up to @p iid will not be delivered here (a learner that starts later or skips
 * trimmed instances): they count as applied, with no command among them. A command among them
 * is then missed: the configuration must come from elsewhere (a snapshot). */
PAXOS_API void paxos_membership_skip_to(struct paxos_membership *m, paxos_iid iid);

/** The configurations the history keeps, oldest first, @p count of them: what a process
 * persists to start again from (paxos_membership_restore()). */
PAXOS_API const struct paxos_configuration *
paxos_membership_history(const struct paxos_membership *m, uint32_t *count);

/**
 * A history as a process persisted it: @p count configurations as paxos_membership_history()
 * gave them and the instance applied then, with window @p alpha. A restarted process goes on
 * from there, and ignores the commands it delivers again up to @p applied. NULL when the
 * history cannot be one paxos_membership_apply() made (count 0 or above
 * PAXOS_MEMBERSHIP_HISTORY, members or proposers 0, ids not consecutive, first instances not
 * increasing, a change starting less than alpha after instance 1 or more than alpha after applied)
 * or no memory.
 */
PAXOS_API struct paxos_membership *paxos_membership_restore(const struct paxos_configuration *c,
							    uint32_t count, paxos_iid applied,
							    uint32_t alpha);

/**
 * The configurations of the history acceptor @p id is a member of, newest first: the ones
 * whose instances it may have voted in, which its recovery from lost state must cover
 * (paxos_acceptor_membership.configurations). Writes at most @p max member sets to @p out
 * and a 0 after them when there is room; when @p id is a member of none, the newest one's
 * members alone. @p ends (NULL: not wanted; else as long as @p out) gets the last instance
 * each governs, 0 for the newest (paxos_acceptor_membership.configuration_ends). Returns how
 * many it wrote before the 0.
 */
PAXOS_API uint32_t paxos_membership_voted_in(const struct paxos_membership *m, uint32_t id,
					     uint32_t *out, paxos_iid *ends, uint32_t max);

/** Writes the command that changes configuration @p from_id's acceptor set to @p members,
 * one of which, acceptor @p id, has the unicast address @p addr (IPv4, network byte order)
 * and @p port: PAXOS_MEMBERSHIP_COMMAND_MAX bytes into @p buf. Applied, it is an acceptor set
 * command (paxos_membership_decode_of() says PAXOS_MEMBERSHIP_ACCEPTORS) that also records
 * the address (paxos_membership_address()). */
PAXOS_API void paxos_membership_command_at(uint32_t from_id, uint32_t members, uint32_t id,
					   uint32_t addr, uint16_t port, uint8_t *buf);

/** Writes the command that moves acceptor @p id, a member of configuration @p from_id
 * (whose acceptors are @p members), to the unicast address @p addr (IPv4, network byte order)
 * and @p port: PAXOS_MEMBERSHIP_COMMAND_MAX bytes into @p buf. Applied, it makes a new
 * configuration with the same acceptors and proposers and records the address
 * (paxos_membership_address()); paxos_membership_decode_of() says PAXOS_MEMBERSHIP_ADDRESS
 * with @p members as the set. It is ignored when @p members are not the newest
 * configuration's or leave @p id out. */
PAXOS_API void paxos_membership_command_address(uint32_t from_id, uint32_t members, uint32_t id,
						uint32_t addr, uint16_t port, uint8_t *buf);

/** The address a command made by paxos_membership_command_at() or
 * paxos_membership_command_address() carries: PAXOS_OK with the acceptor's id, address
 * (network byte order) and port; PAXOS_E_MALFORMED for any other value. */
PAXOS_API int paxos_membership_decode_address(const struct paxos_value *v, uint32_t *id,
					      uint32_t *addr, uint16_t *port);

/** The unicast address of acceptor @p id the commands applied so far carried (the newest
 * one), or set with paxos_membership_set_address(): true with it in @p addr (network byte
 * order) and @p port; false when none did. */
PAXOS_API bool paxos_membership_address(const struct paxos_membership *m, uint32_t id,
					uint32_t *addr, uint16_t *port);

/** Records acceptor @p id's address (a history restored: what the process kept). Ignored for
 * ids from PAXOS_MAX_ACCEPTORS on, or port 0. */
PAXOS_API void paxos_membership_set_address(struct paxos_membership *m, uint32_t id, uint32_t addr,
					    uint16_t port);

/** Whether @p v is a membership command (it may still be invalid or outdated): two length
 * comparisons for ordinary values. */
PAXOS_API bool paxos_membership_is_command(const struct paxos_value *v);

/** Writes the command that changes configuration @p from_id to @p members into @p buf
 * (PAXOS_MEMBERSHIP_COMMAND_LEN bytes). */
PAXOS_API void paxos_membership_command(uint32_t from_id, uint32_t members, uint8_t *buf);

/** Writes the command of @p kind that changes configuration @p from_id's acceptor set
 * (PAXOS_MEMBERSHIP_ACCEPTORS) or proposer set (PAXOS_MEMBERSHIP_PROPOSERS) to @p set, one
 * bit per id, into @p buf (PAXOS_MEMBERSHIP_COMMAND_LEN bytes). */
PAXOS_API void paxos_membership_command_of(enum paxos_membership_kind kind, uint32_t from_id,
					   uint32_t set, uint8_t *buf);

/** Reads an acceptor set command @p v: PAXOS_OK with its fields, or PAXOS_E_MALFORMED (also
 * for a command of another kind). */
PAXOS_API int paxos_membership_decode(const struct paxos_value *v, uint32_t *from_id,
				      uint32_t *members);

/** Reads command @p v of any kind: PAXOS_OK with its kind, the configuration it was made
 * against and the set it names (for PAXOS_MEMBERSHIP_ADDRESS the acceptors as they are), or
 * PAXOS_E_MALFORMED. */
PAXOS_API int paxos_membership_decode_of(const struct paxos_value *v,
					 enum paxos_membership_kind *kind, uint32_t *from_id,
					 uint32_t *set);

/** Most bytes paxos_membership_encode() writes: a full history and an address for every
 * acceptor id. */
#define PAXOS_MEMBERSHIP_ENCODED_MAX (14u + 20u * PAXOS_MEMBERSHIP_HISTORY + 1u + 7u * 32u)

/** Writes history @p m (its configurations, the instance applied, its window and the acceptor
 * addresses it knows) into @p buf, for an answer to a configuration request
 * (PAXOS_MSG_CONFIG_INFO). Returns the bytes written, or 0 when @p cap is below
 * PAXOS_MEMBERSHIP_ENCODED_MAX. */
PAXOS_API size_t paxos_membership_encode(const struct paxos_membership *m, uint8_t *buf,
					 size_t cap);

/** The history paxos_membership_encode() wrote into @p buf (@p len bytes), made with window
 * @p alpha: NULL when the bytes are not one (cut, another window, a history
 * paxos_membership_restore() refuses, an address twice or with port 0) or no memory. */
PAXOS_API struct paxos_membership *paxos_membership_decode_history(const uint8_t *buf, size_t len,
								   uint32_t alpha);

/** Whether histories @p a and @p b can both be the log's: the same window, and every
 * configuration id both keep names the same configuration (first instance, acceptors,
 * proposers). One may go further than the other. */
PAXOS_API bool paxos_membership_agrees(const struct paxos_membership *a,
				       const struct paxos_membership *b);

/**
 * The adoption rule for answers to a configuration request. @p answers[a] is the history
 * acceptor a answered with (NULL: no answer), @p count of them; answers that do not agree
 * with @p known (paxos_membership_agrees(); NULL: no check) are ignored. An answer's newest
 * configuration C is vouched for when a quorum of C's own members answered with C in their
 * history. Returns the index of the answer to adopt, the one whose newest configuration is
 * the newest vouched for (then the most applied), with that configuration's id in
 * @p config_id (NULL: not wanted); -1 when none is.
 *
 * Why it is safe: a history is a function of the log (a command chosen in instance i governs
 * from i + alpha), so the history of every member that delivered the log is a true prefix of
 * the one history, and answers are authenticated like every datagram when the cluster has a
 * key: adopting any of them tells nothing false about the instances up to its applied +
 * alpha, and the cores never act on an instance beyond that (its configuration is not
 * known). The quorum is against staleness: one lagging member, or a removed one that came
 * back with an old store, cannot hold the asker on an old configuration once a quorum of the
 * newest one answers, and the members of the configuration in force are the ones that must
 * be up for the cluster to make progress at all.
 */
PAXOS_API int paxos_membership_vouched(const struct paxos_membership *const *answers,
				       uint32_t count, const struct paxos_membership *known,
				       uint32_t *config_id);

/** Takes history @p from in place of @p m's when it goes further (a newer configuration, or
 * the same one applied further); acceptor addresses only @p m knows are kept, and so is
 * @p m's applied when it is the further one (a learner that skipped ahead, see
 * paxos_membership_skip_to(), knows the configurations up to there). Returns 1 when
 * taken, 0 when @p m goes as far already, PAXOS_E_INVALID when they do not agree
 * (paxos_membership_agrees()) or @p from names ids paxos_membership_limit_ids() does not
 * allow @p m. Learners and proposers reading @p m see the new history at
 * once. */
PAXOS_API int paxos_membership_adopt(struct paxos_membership *m,
				     const struct paxos_membership *from);

/** Half the members of @p members plus one. */
static inline uint32_t paxos_membership_quorum_of(uint32_t members)
{
	return (uint32_t)__builtin_popcount(members) / 2 + 1;
}

#endif
