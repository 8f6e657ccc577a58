/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Protocol messages, as the I/O-free cores see them (decoded, zero-copy), and the emitter the
 * cores send them through. Only programs that drive the cores themselves (rather than through
 * a node, paxos/node.h) need this header; the wire format itself is private to the library.
 *
 * Values inside a message point into memory the message's producer owns (a received
 * datagram, a store's record): they are valid as long as the call that hands the message over.
 */
#ifndef PAXOS_MESSAGE_H
#define PAXOS_MESSAGE_H

#include <paxos/types.h>

/** The kind of a protocol message: which member of paxos_message.u holds it. */
enum paxos_msg_type {
	PAXOS_MSG_PREPARE = 1,        /**< proposer -> acceptors */
	PAXOS_MSG_PROMISE = 2,        /**< acceptor -> proposers */
	PAXOS_MSG_ACCEPT = 3,         /**< proposer -> acceptors, and learners listen */
	PAXOS_MSG_ACCEPTED = 4,       /**< acceptor -> learners */
	PAXOS_MSG_REJECT = 5,         /**< acceptor -> proposers */
	PAXOS_MSG_REPEAT = 6,         /**< learner -> acceptors */
	PAXOS_MSG_TRIM = 7,           /**< application/learner -> acceptors */
	PAXOS_MSG_ACCEPTOR_STATE = 8, /**< acceptor -> learners, periodically */
	PAXOS_MSG_CLIENT_VALUE = 9,   /**< client -> proposers (submit group) */
	PAXOS_MSG_TRIMMED = 10,       /**< acceptor -> learners: asked for trimmed instances */
	PAXOS_MSG_HEARTBEAT = 11,     /**< proposer -> proposers: failure detection */
	PAXOS_MSG_LEADER = 12,        /**< oracle -> proposers: force the leader */
	PAXOS_MSG_REPAIR = 13,        /**< learner -> proposers: re-run instances it cannot close */
	PAXOS_MSG_ACCEPTOR_HELLO =
	    14,                      /**< acceptor -> acceptors, periodically: id and incarnation */
	PAXOS_MSG_RECOVER_ASK = 15,  /**< recovering acceptor -> proposers: your highest ballot? */
	PAXOS_MSG_RECOVER_INFO = 16, /**< acceptor or proposer -> acceptors: the answer */
	PAXOS_MSG_CONFIG_ASK = 17,   /**< any node -> acceptors: your configuration history? */
	PAXOS_MSG_CONFIG_INFO = 18,  /**< acceptor -> learners: the answer */
	PAXOS_MSG_CONFIG_PUSH =
	    19,                 /**< proposer -> acceptors: its history (learning-acceptors no) */
	PAXOS_MSG_REFUSED = 20, /**< leader -> learners: its pending list is full */
	PAXOS_MSG_CHANGE = 21,  /**< paxos-admin -> proposers (submit group): a membership change */
	PAXOS_MSG_SNAPSHOT_ASK = 22,   /**< lagging learner -> acceptors group: a snapshot? */
	PAXOS_MSG_SNAPSHOT_OFFER = 23, /**< node with a snapshot -> learners: I have one */
	PAXOS_MSG_SNAPSHOT_CHUNK = 24, /**< its server -> learners: some of its bytes */
	PAXOS_MSG_CHOSEN = 25,         /**< idle leader -> acceptors group: what was chosen */
	PAXOS_MSG_TYPE_MAX = 25        /**< the highest type */
};

/** Phase 1a: a proposer asks for promises in instance iid at ballot. */
struct paxos_prepare {
	paxos_iid iid;       /**< the instance */
	paxos_ballot ballot; /**< the ballot to promise */
};

/** Phase 1b: an acceptor promises not to accept below ballot in iid, and reports what it
 * accepted there before. value_ballot == 0 means the acceptor has accepted nothing for iid. */
struct paxos_promise {
	paxos_iid iid;             /**< the instance */
	paxos_ballot ballot;       /**< the ballot promised */
	paxos_ballot value_ballot; /**< ballot of the value accepted before; 0: none */
	struct paxos_value value;  /**< the value accepted before (len 0 when none) */
	uint32_t acceptor_id;      /**< the acceptor promising */
};

/** Phase 2a: the leader asks the acceptors to accept value in iid at ballot. */
struct paxos_accept {
	paxos_iid iid;            /**< the instance */
	paxos_ballot ballot;      /**< the leader's ballot */
	struct paxos_value value; /**< the value to accept */
	/** The acceptors of the lowest ids that make a quorum voted for every instance the sender
	 * knows chosen (wire version 6): the others, spare acceptors, may read the leader's
	 * messages once a millisecond instead of at once (spare-acceptors, docs/ARCHITECTURE.md).
	 */
	bool spares_rest;
	/** What the sender knows chosen (wire version 6; both 0: nothing said): in each instance
	 * from chosen_from to chosen_to it sent an accept at this same ballot, and that value is
	 * the one chosen. A learner that holds the value of such an accept closes the instance
	 * without the votes (an acceptor's own learner does, which does not hear them). */
	paxos_iid chosen_from;
	paxos_iid chosen_to; /**< the last instance of the range, 0 or at least chosen_from */
};

/**
 * Phase 2b: an acceptor accepted (iid, ballot); the learners count these to a quorum.
 * final: the sender knows value is the one chosen (learning acceptor or serializer).
 * valueless: value is left out (its len 0). An acceptor's answer to an accept says only that
 * it accepted (iid, ballot): that pair names exactly one value, which the learners took from
 * the accept itself (they listen to the leader's accepts), so each value crosses the network
 * once per receiver. Repeats and final answers carry the value.
 */
struct paxos_accepted {
	paxos_iid iid;            /**< the instance */
	paxos_ballot ballot;      /**< the ballot accepted */
	struct paxos_value value; /**< the value accepted (len 0 when valueless) */
	uint32_t acceptor_id;     /**< the acceptor that accepted */
	bool final;               /**< the sender knows value is the one chosen */
	bool valueless;           /**< value is left out: (iid, ballot) names it */
	uint64_t generation;      /**< the log it belongs to (paxos_acceptor_generation) */
};

/** An acceptor refuses a prepare or accept; ballot is its promise: the ballot to beat. */
struct paxos_reject {
	paxos_iid iid;        /**< the instance */
	paxos_ballot ballot;  /**< the acceptor's promise: the ballot to beat */
	uint32_t acceptor_id; /**< the acceptor refusing */
};

/** Value bytes one acceptor's answer to a repeat carries at most; it stops before the value
 * that would pass this, and the learner asks again for the rest. Three answers stay well within
 * one receiver's socket buffer. A learner catching up asks for as many instances as fit. */
#define PAXOS_REPEAT_ANSWER_BYTES (256u << 10)

/**
 * What a leader knows chosen, said on its own (wire version 6) when no accept followed the
 * last ones to carry it: the same word as paxos_accept.chosen_from and chosen_to, at the
 * ballot of the accepts it is about. Sent to the acceptors group from the leader's tick, so
 * that learning acceptors, which learn from the leader's word and not from the votes, hold
 * the last instances before a pause too.
 */
struct paxos_chosen {
	paxos_ballot ballot; /**< the leader's ballot: the accepts whose values were chosen */
	paxos_iid from;      /**< the first instance of the range */
	paxos_iid to;        /**< the last instance of the range, at least from */
};

/** Ask acceptors to resend what they accepted for instances from..to (inclusive). */
struct paxos_repeat {
	paxos_iid from; /**< first instance asked for */
	paxos_iid to;   /**< last instance asked for */
};

/** Instances up to and including iid may be dropped (thesis 3.4.1). */
struct paxos_trim {
	paxos_iid iid; /**< the highest instance that may be dropped */
};

/** An acceptor's periodic report to the learners, so that they find their holes. */
struct paxos_acceptor_state {
	uint32_t acceptor_id;       /**< the reporting acceptor */
	paxos_iid highest_accepted; /**< 0: nothing accepted yet */
	paxos_iid trim_iid;         /**< 0: nothing trimmed */
	uint64_t generation;        /**< the log it serves (paxos_acceptor_generation) */
	bool recovering;            /**< it withholds its votes: it recovers lost state */
};

/** A value a client submits to the proposers (one paxos_node_submit()). */
struct paxos_client_value {
	struct paxos_value value; /**< the client's bytes */
	/** The submission: drawn by the submitting node, unique to this paxos_node_submit() (a
	 * resubmission of the same call's bytes would carry it again); 0: none given. Proposers
	 * tell a late copy of a value delivered already from another submission of the same
	 * bytes by it, never by the bytes. */
	uint64_t id;
};

/** Instances up to and including iid were trimmed by this acceptor: they cannot be repeated. */
struct paxos_trimmed {
	uint32_t acceptor_id; /**< the acceptor that trimmed */
	paxos_iid iid;        /**< its trim point */
	uint64_t generation;  /**< the log it trimmed */
};

/** Most value hashes one PAXOS_MSG_REFUSED carries. */
#define PAXOS_REFUSED_HASHES_MAX 128

/**
 * A leader dropped client values: its pending list was full. It says so to the learners group,
 * where submitters listen (a client hosts a learner), so that they hold new values back for a
 * while (paxos_node_submit() returns PAXOS_E_FULL) instead of sending more into a full pipe,
 * and send the dropped ones again when it has room, rather than after a timeout. A value is
 * named by paxos_value_hash() of its bytes.
 */
struct paxos_refused {
	uint32_t proposer_id;      /**< the leader that dropped them */
	uint32_t dropped;          /**< values it dropped since it last said so */
	struct paxos_value hashes; /**< up to PAXOS_REFUSED_HASHES_MAX of their hashes, 8 bytes
				      each, little-endian (fewer than dropped: the rest unnamed) */
};

/** Bytes of the MAC a paxos_change carries. */
#define PAXOS_CHANGE_MAC_BYTES 32u
/** paxos_change.flags: the proposers propose the change without checking that it leaves a
 * live quorum and a live proposer (paxos-admin --force). */
#define PAXOS_CHANGE_FORCE 1u

/**
 * A membership change asked of the proposers (membership-alpha): never a client value. A
 * proposer takes it only when mac is the MAC of the command, the flags and its partition under
 * the admin key (paxos.conf admin-key-file), which paxos-admin and the proposers hold and no
 * client does, and checks it before it proposes it.
 */
struct paxos_change {
	struct paxos_value command; /**< paxos/membership.h's command bytes */
	uint32_t flags;             /**< PAXOS_CHANGE_FORCE or 0 */
	struct paxos_value mac;     /**< PAXOS_CHANGE_MAC_BYTES */
};

/** A proposer is alive (leader election, paxos/election.h). */
struct paxos_heartbeat {
	uint32_t proposer_id; /**< the proposer alive */
	paxos_iid next_iid;   /**< the lowest instance its learner has not delivered */
};

/**
 * A learner stalled on instances from..to (inclusive) that repeats did not close: no ballot has
 * a quorum among the acceptors it hears, e.g. the quorum that chose a value lost a member. The
 * leader runs phase 1 and 2 again for those it has decided or closed already (the others it
 * drives anyway), with the acceptors that are up.
 */
struct paxos_repair {
	paxos_iid from; /**< first instance to run again */
	paxos_iid to;   /**< last instance to run again */
};

/**
 * Acceptor recovery (see acceptor.h): every acceptor says it is alive with its incarnation
 * (a random number drawn at each start), so that two acceptors with one id are found; one that
 * lost its state says it is recovering, and the others answer with a RECOVER_INFO. So do the
 * proposers, asked with a RECOVER_ASK.
 */
struct paxos_acceptor_hello {
	uint32_t acceptor_id; /**< the sender's id */
	uint64_t incarnation; /**< the sender's incarnation, drawn at its start */
	bool recovering;      /**< the sender recovers lost state */
	uint64_t age;  /**< since this acceptor started (us; ticks if not told): the later start is
			  younger */
	uint64_t echo; /**< the incarnation of another acceptor with this id last heard, or 0 */
	uint64_t generation; /**< the log it serves; recovering, the highest one an earlier life
				of it voted in (0: none) */
};

/** A recovering acceptor asks the proposers for the highest ballot they used. */
struct paxos_recover_ask {
	uint32_t acceptor_id; /**< the recovering acceptor */
	uint64_t incarnation; /**< its incarnation */
};

/** The answer to a recovering acceptor's hello (from an acceptor) or recover ask (from a
 * proposer). */
struct paxos_recover_info {
	uint32_t role;               /**< PAXOS_ROLE_ACCEPTOR or PAXOS_ROLE_PROPOSER: who answers */
	uint32_t sender_id;          /**< the answering member's id */
	uint32_t acceptor_id;        /**< the recovering acceptor */
	uint64_t incarnation;        /**< its incarnation, as it asked */
	paxos_iid highest_iid;       /**< the highest instance the sender accepted a value for (an
					acceptor) or sent an accept for (a proposer) */
	paxos_ballot highest_ballot; /**< the highest ballot it promised (an acceptor, since its
					start) or used (a proposer) */
	uint64_t generation;         /**< an acceptor's: the log it serves (0 from a proposer) */
	bool founder; /**< an acceptor's: the recovering one held nothing when this log began (its
			 hello of this incarnation said it recovered then), so it joins at once */
};

/** A process asks the acceptors for the configuration history in force (membership-alpha):
 * one started from an outdated paxos.conf, or paxos-admin. */
struct paxos_config_ask {
	uint64_t nonce; /**< the asker's, echoed in the answers */
};

/** An acceptor's answer to a paxos_config_ask: the history its learner applied, as
 * paxos_membership_encode() writes it (at most PAXOS_MEMBERSHIP_ENCODED_MAX bytes). */
struct paxos_config_info {
	uint32_t acceptor_id;       /**< the answering acceptor */
	uint64_t nonce;             /**< the ask's */
	bool settled;               /**< its history is not just paxos.conf's, unconfirmed */
	struct paxos_value history; /**< the encoded history */
};

/** A proposer's configuration history, sent to the acceptors when a change is applied and
 * every second (learning-acceptors no): an acceptor without a learner applies no log, and
 * takes its configuration from these. */
struct paxos_config_push {
	uint32_t proposer_id;       /**< the sending proposer */
	bool settled;               /**< its history is not just paxos.conf's, unconfirmed */
	struct paxos_value history; /**< paxos_membership_encode()'s bytes */
};

/**
 * Snapshot transfer (paxos_node_offer_snapshot(), paxos_node_on_install_snapshot()): a learner
 * whose next instance is trimmed asks for a snapshot covering at least iid (server 0: who has
 * one?), then asks the server it took, by the token of its offer, for the bytes from offset
 * on. Sent to the acceptors group, which every learner can reach (on unicast, the acceptors).
 */
struct paxos_snapshot_ask {
	uint64_t nonce;  /**< the asker's transfer, echoed in offers and chunks */
	paxos_iid iid;   /**< server 0: the least instance a snapshot must cover; else the
			    instance of the server's offer */
	uint64_t server; /**< 0: any node with a snapshot answers with an offer; else the token of
			    the one to send chunks */
	uint64_t offset; /**< the first byte wanted (server not 0) */
};

/** A node's answer to a paxos_snapshot_ask from any server: the snapshot it offers. */
struct paxos_snapshot_offer {
	uint64_t server;   /**< its token, drawn at its start (never 0) */
	uint64_t nonce;    /**< the ask's */
	paxos_iid iid;     /**< the snapshot covers instances up to this one */
	uint64_t total;    /**< its length in bytes */
	uint64_t checksum; /**< paxos_value_hash() of its bytes */
};

/** Bytes offset.. of a snapshot, sent to the learners group for the asker of nonce. iid,
 * total and checksum name the snapshot: a server that offers a newer one meanwhile sends
 * that, and the asker starts over. */
struct paxos_snapshot_chunk {
	uint64_t nonce;           /**< the ask's */
	paxos_iid iid;            /**< the snapshot covers instances up to this one */
	uint64_t total;           /**< its length in bytes */
	uint64_t checksum;        /**< paxos_value_hash() of all its bytes */
	uint64_t offset;          /**< where bytes go in it */
	struct paxos_value bytes; /**< the bytes, at most total - offset */
};

/** paxos_leader.leader_id that ends the oracle's override: the proposers elect again. */
#define PAXOS_LEADER_AUTO UINT32_MAX
/** Oracle: proposer leader_id leads from now on; PAXOS_LEADER_AUTO returns to election. An
 * order holds only while the proposer it names is heard (paxos/election.h), and a node takes
 * it only while it is fresh: sent_at within PAXOS_LEADER_ORDER_WINDOW_US of its own clock, and
 * no older than the last order it took. */
struct paxos_leader {
	uint32_t leader_id; /**< the proposer to lead, or PAXOS_LEADER_AUTO */
	uint64_t sent_at;   /**< when the oracle sent it: microseconds since the Unix epoch */
};

/** How far (microseconds) an order's sent_at may be from the receiver's clock, either way:
 * the oracle's copies and clock skew between hosts fit; a capture replayed later does not. */
#define PAXOS_LEADER_ORDER_WINDOW_US 2000000u

/** A decoded protocol message: its type and the member of u that type names. */
struct paxos_message {
	enum paxos_msg_type type; /**< which member of u holds the message */
	union {
		struct paxos_prepare prepare;
		struct paxos_promise promise;
		struct paxos_accept accept;
		struct paxos_accepted accepted;
		struct paxos_reject reject;
		struct paxos_repeat repeat;
		struct paxos_trim trim;
		struct paxos_acceptor_state acceptor_state;
		struct paxos_client_value client_value;
		struct paxos_trimmed trimmed;
		struct paxos_heartbeat heartbeat;
		struct paxos_leader leader;
		struct paxos_repair repair;
		struct paxos_acceptor_hello acceptor_hello;
		struct paxos_recover_ask recover_ask;
		struct paxos_recover_info recover_info;
		struct paxos_config_ask config_ask;
		struct paxos_config_info config_info;
		struct paxos_config_push config_push;
		struct paxos_refused refused;
		struct paxos_change change;
		struct paxos_snapshot_ask snapshot_ask;
		struct paxos_snapshot_offer snapshot_offer;
		struct paxos_snapshot_chunk snapshot_chunk;
		struct paxos_chosen chosen;
	} u; /**< the message, in the member named like its type */
};

/** The name of a message type ("prepare", ...), or "unknown" (static storage). */
PAXOS_API const char *paxos_msg_type_name(enum paxos_msg_type type);

/** The group a message type is sent to (PAXOS_GROUP_COUNT for an unknown type); a message
 * that arrives on another group is ignored. */
PAXOS_API enum paxos_group paxos_msg_group(enum paxos_msg_type type);

/** Whether every ballot m carries is plausible (paxos_ballot_plausible); true for types that
 * carry none. */
PAXOS_API bool paxos_msg_plausible(const struct paxos_message *m);

/** The acceptor m names as its sender (promise, accepted, reject, acceptor state, trimmed,
 * acceptor hello, recover ask, config info) in *id; false for types that name none. The node drops
 * such a message unless the datagram's header says it comes from that acceptor, so one datagram
 * cannot speak for several. */
PAXOS_API bool paxos_msg_acceptor(const struct paxos_message *m, uint32_t *id);

/** The proposer m speaks for (prepare and accept: their ballot's proposer; heartbeat) in *id;
 * false for types that name none. The node drops such a message unless the datagram's header
 * says it comes from that proposer: a client or learner cannot send a proposer's ballot. */
PAXOS_API bool paxos_msg_proposer(const struct paxos_message *m, uint32_t *id);

/** The value field of m (promise, accept, accepted, client value), or NULL for a type that
 * carries none (or a valueless accepted). Like strchr, the result is writable when m is. */
PAXOS_API struct paxos_value *paxos_msg_value(const struct paxos_message *m);

/**
 * The cores never do I/O: they hand each outgoing message to an emitter with the group it
 * is for. Values inside m are only valid during the call; an emitter that keeps the message
 * must copy them (the libevent adapter encodes it into a datagram at once).
 */
struct paxos_emitter {
	void (*emit)(void *ctx, enum paxos_group to,
		     const struct paxos_message *m); /**< receives each message and the group it is
							for; must not call back into the core */
	void *ctx; /**< emit's first argument, not owned by the core */
};

/** Hands @p m, for group @p to, to the emitter @p out: out->emit(out->ctx, to, m). */
static inline void paxos_emit(const struct paxos_emitter *out, enum paxos_group to,
			      const struct paxos_message *m)
{
	out->emit(out->ctx, to, m);
}

#endif
