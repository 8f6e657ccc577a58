/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The wire schema, included by codec.c alone: the macros below expand into its encoder, decoder
 * and size bounds there. Internal to libpaxos.
 */
#ifndef PAXOS_WIRE_SCHEMA_H
#define PAXOS_WIRE_SCHEMA_H

/*
 * The wire schema: every message once. WIRE_MESSAGES names each type, the member of
 * paxos_message.u that holds it, a check of the whole message and the wire version it came
 * with; WIRE_<TYPE> lists that message's fields in wire order, after the type, one
 * F(kind, field, since) a line. The field counts, the encoder's checks, packing, decoding and
 * the size bounds all expand from these.
 *
 * since is the first wire version with the field (or message); 5 for all that version 5
 * already had, the oldest this codec speaks (PAXOS_WIRE_VERSION_MIN). A datagram of an older
 * version than ours lacks the newer fields (they are last in each list: a version only
 * appends), which read as 0; encoding for one (paxos_encoder.version) leaves them out, and
 * leaves out the messages it lacks.
 *
 * Adding a field is one line F(kind, field, since) at the end of its message's list, since
 * the new PAXOS_WIRE_VERSION (codec.h), and the field in its struct (paxos/message.h); then
 * the field in tests/unit/test_codec.c and the fuzz corpus again (tests/fuzz/README.md).
 * Adding a message is its list and one line in WIRE_MESSAGES. A new version makes the oldest
 * spoken PAXOS_WIRE_VERSION - 1 (docs/operating.md, "Upgrades").
 *
 * Kinds, each packed, read and checked by the WIRE_*_<kind> macros in codec.c:
 *   U64, U32      an unsigned integer of that width
 *   ACCEPTOR      a uint32 below PAXOS_MAX_ACCEPTORS
 *   PROPOSER      a uint32 below PAXOS_MAX_PROPOSERS
 *   BOOL          true or false
 *   VALUE         bytes (bin), decoded in place
 *   VALUE_OR_NIL  bytes, or nil when the struct's valueless is set
 *   OPT_U64       an unsigned integer, left off the wire when 0: last fields only (a sender's
 *                 message without it decodes, as 0)
 */
#define WIRE_PREPARE(F)                                                                            \
	F(U64, iid, 5)                                                                             \
	F(U64, ballot, 5)                                                                          \
	/* end */
#define WIRE_PROMISE(F)                                                                            \
	F(U64, iid, 5)                                                                             \
	F(U64, ballot, 5)                                                                          \
	F(U64, value_ballot, 5)                                                                    \
	F(VALUE, value, 5)                                                                         \
	F(ACCEPTOR, acceptor_id, 5)                                                                \
	/* end */
#define WIRE_ACCEPT(F)                                                                             \
	F(U64, iid, 5)                                                                             \
	F(U64, ballot, 5)                                                                          \
	F(VALUE, value, 5)                                                                         \
	F(BOOL, spares_rest, 6)                                                                    \
	F(OPT_U64, chosen_from, 6)                                                                 \
	F(OPT_U64, chosen_to, 6)                                                                   \
	/* end */
#define WIRE_ACCEPTED(F)                                                                           \
	F(U64, iid, 5)                                                                             \
	F(U64, ballot, 5)                                                                          \
	F(VALUE_OR_NIL, value, 5)                                                                  \
	F(ACCEPTOR, acceptor_id, 5)                                                                \
	F(BOOL, final, 5)                                                                          \
	F(U64, generation, 6)                                                                      \
	/* end */
#define WIRE_REJECT(F)                                                                             \
	F(U64, iid, 5)                                                                             \
	F(U64, ballot, 5)                                                                          \
	F(ACCEPTOR, acceptor_id, 5)                                                                \
	/* end */
#define WIRE_REPEAT(F)                                                                             \
	F(U64, from, 5)                                                                            \
	F(U64, to, 5)                                                                              \
	/* end */
#define WIRE_TRIM(F)                                                                               \
	F(U64, iid, 5)                                                                             \
	/* end */
#define WIRE_ACCEPTOR_STATE(F)                                                                     \
	F(ACCEPTOR, acceptor_id, 5)                                                                \
	F(U64, highest_accepted, 5)                                                                \
	F(U64, trim_iid, 5)                                                                        \
	F(U64, generation, 6)                                                                      \
	F(BOOL, recovering, 6)                                                                     \
	/* end */
#define WIRE_CLIENT_VALUE(F)                                                                       \
	F(VALUE, value, 5)                                                                         \
	F(OPT_U64, id, 6)                                                                          \
	/* end */
#define WIRE_TRIMMED(F)                                                                            \
	F(ACCEPTOR, acceptor_id, 5)                                                                \
	F(U64, iid, 5)                                                                             \
	F(U64, generation, 6)                                                                      \
	/* end */
#define WIRE_HEARTBEAT(F)                                                                          \
	F(PROPOSER, proposer_id, 5)                                                                \
	F(U64, next_iid, 5)                                                                        \
	/* end */
#define WIRE_LEADER(F)                                                                             \
	F(U32, leader_id, 5)                                                                       \
	F(U64, sent_at, 6)                                                                         \
	/* end */
#define WIRE_REPAIR(F)                                                                             \
	F(U64, from, 5)                                                                            \
	F(U64, to, 5)                                                                              \
	/* end */
#define WIRE_ACCEPTOR_HELLO(F)                                                                     \
	F(ACCEPTOR, acceptor_id, 5)                                                                \
	F(U64, incarnation, 5)                                                                     \
	F(BOOL, recovering, 5)                                                                     \
	F(U64, age, 5)                                                                             \
	F(U64, echo, 5)                                                                            \
	F(U64, generation, 6)                                                                      \
	/* end */
#define WIRE_RECOVER_ASK(F)                                                                        \
	F(ACCEPTOR, acceptor_id, 5)                                                                \
	F(U64, incarnation, 5)                                                                     \
	/* end */
#define WIRE_RECOVER_INFO(F)                                                                       \
	F(U32, role, 5)                                                                            \
	F(U32, sender_id, 5)                                                                       \
	F(ACCEPTOR, acceptor_id, 5)                                                                \
	F(U64, incarnation, 5)                                                                     \
	F(U64, highest_iid, 5)                                                                     \
	F(U64, highest_ballot, 5)                                                                  \
	F(U64, generation, 6)                                                                      \
	F(BOOL, founder, 6)                                                                        \
	/* end */
#define WIRE_CONFIG_ASK(F)                                                                         \
	F(U64, nonce, 5)                                                                           \
	/* end */
#define WIRE_CONFIG_INFO(F)                                                                        \
	F(ACCEPTOR, acceptor_id, 5)                                                                \
	F(U64, nonce, 5)                                                                           \
	F(BOOL, settled, 5)                                                                        \
	F(VALUE, history, 5)                                                                       \
	/* end */
#define WIRE_CONFIG_PUSH(F)                                                                        \
	F(PROPOSER, proposer_id, 5)                                                                \
	F(BOOL, settled, 5)                                                                        \
	F(VALUE, history, 5)                                                                       \
	/* end */
#define WIRE_REFUSED(F)                                                                            \
	F(PROPOSER, proposer_id, 5)                                                                \
	F(U32, dropped, 5)                                                                         \
	F(VALUE, hashes, 5)                                                                        \
	/* end */
#define WIRE_CHANGE(F)                                                                             \
	F(VALUE, command, 6)                                                                       \
	F(U32, flags, 6)                                                                           \
	F(VALUE, mac, 6)                                                                           \
	/* end */
#define WIRE_SNAPSHOT_ASK(F)                                                                       \
	F(U64, nonce, 6)                                                                           \
	F(U64, iid, 6)                                                                             \
	F(U64, server, 6)                                                                          \
	F(U64, offset, 6)                                                                          \
	/* end */
#define WIRE_SNAPSHOT_OFFER(F)                                                                     \
	F(U64, server, 6)                                                                          \
	F(U64, nonce, 6)                                                                           \
	F(U64, iid, 6)                                                                             \
	F(U64, total, 6)                                                                           \
	F(U64, checksum, 6)                                                                        \
	/* end */
#define WIRE_SNAPSHOT_CHUNK(F)                                                                     \
	F(U64, nonce, 6)                                                                           \
	F(U64, iid, 6)                                                                             \
	F(U64, total, 6)                                                                           \
	F(U64, checksum, 6)                                                                        \
	F(U64, offset, 6)                                                                          \
	F(VALUE, bytes, 6)                                                                         \
	/* end */
#define WIRE_CHOSEN(F)                                                                             \
	F(U64, ballot, 6)                                                                          \
	F(U64, from, 6)                                                                            \
	F(U64, to, 6)                                                                              \
	/* end */

/* M(TYPE, member, check): PAXOS_MSG_<TYPE>, its fields WIRE_<TYPE>, paxos_message.u.<member>,
 * and check(const struct paxos_<member> *), what the fields' kinds do not say. */
#define WIRE_MESSAGES(M)                                                                           \
	M(PREPARE, prepare, no_check, 5)                                                           \
	M(PROMISE, promise, no_check, 5)                                                           \
	M(ACCEPT, accept, accept_ok, 5)                                                            \
	M(ACCEPTED, accepted, no_check, 5)                                                         \
	M(REJECT, reject, no_check, 5)                                                             \
	M(REPEAT, repeat, repeat_ok, 5)                                                            \
	M(TRIM, trim, no_check, 5)                                                                 \
	M(ACCEPTOR_STATE, acceptor_state, no_check, 5)                                             \
	M(CLIENT_VALUE, client_value, no_check, 5)                                                 \
	M(TRIMMED, trimmed, no_check, 5)                                                           \
	M(HEARTBEAT, heartbeat, no_check, 5)                                                       \
	M(LEADER, leader, leader_ok, 5)                                                            \
	M(REPAIR, repair, repair_ok, 5)                                                            \
	M(ACCEPTOR_HELLO, acceptor_hello, no_check, 5)                                             \
	M(RECOVER_ASK, recover_ask, no_check, 5)                                                   \
	M(RECOVER_INFO, recover_info, recover_info_ok, 5)                                          \
	M(CONFIG_ASK, config_ask, no_check, 5)                                                     \
	M(CONFIG_INFO, config_info, config_info_ok, 5)                                             \
	M(CONFIG_PUSH, config_push, config_push_ok, 5)                                             \
	M(REFUSED, refused, refused_ok, 5)                                                         \
	M(CHANGE, change, change_ok, 6)                                                            \
	M(SNAPSHOT_ASK, snapshot_ask, no_check, 6)                                                 \
	M(SNAPSHOT_OFFER, snapshot_offer, snapshot_offer_ok, 6)                                    \
	M(SNAPSHOT_CHUNK, snapshot_chunk, snapshot_chunk_ok, 6)                                    \
	M(CHOSEN, chosen, chosen_ok, 6)                                                            \
	/* end */

#endif
