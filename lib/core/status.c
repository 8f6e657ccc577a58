/* SPDX-License-Identifier: BSD-3-Clause */
/* Readable names for status codes and message types. */
#include <paxos/message.h>
#include <paxos/types.h>

#include <stddef.h>
#include <string.h>

const char *paxos_strerror(int status)
{
	switch (status) {
	case PAXOS_OK:
		return "success";
	case PAXOS_E_INVALID:
		return "invalid argument";
	case PAXOS_E_TOO_BIG:
		return "value larger than the configured maximum";
	case PAXOS_E_NOMEM:
		return "out of memory";
	case PAXOS_E_IO:
		return "I/O error";
	case PAXOS_E_CONFIG:
		return "bad configuration";
	case PAXOS_E_FULL:
		return "buffer full";
	case PAXOS_E_MALFORMED:
		return "malformed datagram";
	case PAXOS_E_STORAGE:
		return "storage error";
	case PAXOS_E_TRIMMED:
		return "instance trimmed";
	case PAXOS_E_TIMEOUT:
		return "timed out";
	case PAXOS_E_DUPLICATE:
		return "another acceptor with this id is running";
	}
	return "unknown status";
}

const char *paxos_msg_type_name(enum paxos_msg_type type)
{
	switch (type) {
	case PAXOS_MSG_PREPARE:
		return "prepare";
	case PAXOS_MSG_PROMISE:
		return "promise";
	case PAXOS_MSG_ACCEPT:
		return "accept";
	case PAXOS_MSG_ACCEPTED:
		return "accepted";
	case PAXOS_MSG_REJECT:
		return "reject";
	case PAXOS_MSG_REPEAT:
		return "repeat";
	case PAXOS_MSG_TRIM:
		return "trim";
	case PAXOS_MSG_ACCEPTOR_STATE:
		return "acceptor_state";
	case PAXOS_MSG_CLIENT_VALUE:
		return "client_value";
	case PAXOS_MSG_TRIMMED:
		return "trimmed";
	case PAXOS_MSG_HEARTBEAT:
		return "heartbeat";
	case PAXOS_MSG_LEADER:
		return "leader";
	case PAXOS_MSG_REPAIR:
		return "repair";
	case PAXOS_MSG_ACCEPTOR_HELLO:
		return "acceptor_hello";
	case PAXOS_MSG_RECOVER_ASK:
		return "recover_ask";
	case PAXOS_MSG_RECOVER_INFO:
		return "recover_info";
	case PAXOS_MSG_CONFIG_ASK:
		return "config_ask";
	case PAXOS_MSG_CONFIG_INFO:
		return "config_info";
	case PAXOS_MSG_CONFIG_PUSH:
		return "config_push";
	case PAXOS_MSG_REFUSED:
		return "refused";
	case PAXOS_MSG_CHANGE:
		return "change";
	case PAXOS_MSG_SNAPSHOT_ASK:
		return "snapshot_ask";
	case PAXOS_MSG_SNAPSHOT_OFFER:
		return "snapshot_offer";
	case PAXOS_MSG_SNAPSHOT_CHUNK:
		return "snapshot_chunk";
	case PAXOS_MSG_CHOSEN:
		return "chosen";
	}
	return "unknown";
}

enum paxos_group paxos_msg_group(enum paxos_msg_type type)
{
	switch (type) {
	case PAXOS_MSG_PREPARE:
	case PAXOS_MSG_ACCEPT:
	case PAXOS_MSG_REPEAT:
	case PAXOS_MSG_TRIM:
	case PAXOS_MSG_ACCEPTOR_HELLO:
	case PAXOS_MSG_RECOVER_INFO:
	case PAXOS_MSG_CONFIG_ASK:
	case PAXOS_MSG_CONFIG_PUSH:
	case PAXOS_MSG_SNAPSHOT_ASK:
	case PAXOS_MSG_CHOSEN:
		return PAXOS_GROUP_ACCEPTORS;
	case PAXOS_MSG_PROMISE:
	case PAXOS_MSG_REJECT:
	case PAXOS_MSG_HEARTBEAT:
	case PAXOS_MSG_LEADER:
	case PAXOS_MSG_REPAIR:
	case PAXOS_MSG_RECOVER_ASK:
		return PAXOS_GROUP_PROPOSERS;
	case PAXOS_MSG_ACCEPTED:
	case PAXOS_MSG_ACCEPTOR_STATE:
	case PAXOS_MSG_TRIMMED:
	case PAXOS_MSG_CONFIG_INFO:
	case PAXOS_MSG_REFUSED:
	case PAXOS_MSG_SNAPSHOT_OFFER:
	case PAXOS_MSG_SNAPSHOT_CHUNK:
		return PAXOS_GROUP_LEARNERS;
	case PAXOS_MSG_CLIENT_VALUE:
	case PAXOS_MSG_CHANGE:
		return PAXOS_GROUP_SUBMIT;
	}
	return PAXOS_GROUP_COUNT;
}

/* Where a message's fields are, by type: offsetof into struct paxos_message, 0 for a type
 * without such a field (the union follows the type, so no field sits at 0). */
#define AT(member, field) offsetof(struct paxos_message, u.member.field)

/* The ballots a message carries, checked by paxos_msg_plausible. */
static const size_t ballots_at[PAXOS_MSG_TYPE_MAX + 1][2] = {
    [PAXOS_MSG_PREPARE] = {AT(prepare, ballot)},
    [PAXOS_MSG_PROMISE] = {AT(promise, ballot), AT(promise, value_ballot)},
    [PAXOS_MSG_ACCEPT] = {AT(accept, ballot)},
    [PAXOS_MSG_ACCEPTED] = {AT(accepted, ballot)},
    [PAXOS_MSG_REJECT] = {AT(reject, ballot)},
    [PAXOS_MSG_RECOVER_INFO] = {AT(recover_info, highest_ballot)},
    [PAXOS_MSG_CHOSEN] = {AT(chosen, ballot)},
};

/* The sending acceptor's id. */
static const size_t acceptor_at[PAXOS_MSG_TYPE_MAX + 1] = {
    [PAXOS_MSG_PROMISE] = AT(promise, acceptor_id),
    [PAXOS_MSG_ACCEPTED] = AT(accepted, acceptor_id),
    [PAXOS_MSG_REJECT] = AT(reject, acceptor_id),
    [PAXOS_MSG_ACCEPTOR_STATE] = AT(acceptor_state, acceptor_id),
    [PAXOS_MSG_TRIMMED] = AT(trimmed, acceptor_id),
    [PAXOS_MSG_ACCEPTOR_HELLO] = AT(acceptor_hello, acceptor_id),
    [PAXOS_MSG_RECOVER_ASK] = AT(recover_ask, acceptor_id),
    [PAXOS_MSG_CONFIG_INFO] = AT(config_info, acceptor_id),
};

/* The sending proposer's id, or the ballot that names it (a ballot's proposer is the ballot
 * modulo PAXOS_MAX_PROPOSERS). */
static const size_t proposer_at[PAXOS_MSG_TYPE_MAX + 1] = {
    [PAXOS_MSG_HEARTBEAT] = AT(heartbeat, proposer_id),
    [PAXOS_MSG_CONFIG_PUSH] = AT(config_push, proposer_id),
    [PAXOS_MSG_REFUSED] = AT(refused, proposer_id),
};
static const size_t proposer_ballot_at[PAXOS_MSG_TYPE_MAX + 1] = {
    [PAXOS_MSG_PREPARE] = AT(prepare, ballot),
    [PAXOS_MSG_ACCEPT] = AT(accept, ballot),
    [PAXOS_MSG_CHOSEN] = AT(chosen, ballot),
};

#undef AT

/* The field at offset at of m, a uint32_t or a paxos_ballot. */
static uint32_t u32_at(const struct paxos_message *m, size_t at)
{
	uint32_t v;
	memcpy(&v, (const char *)m + at, sizeof(v));
	return v;
}

static paxos_ballot ballot_at(const struct paxos_message *m, size_t at)
{
	paxos_ballot v;
	memcpy(&v, (const char *)m + at, sizeof(v));
	return v;
}

static bool known_type(const struct paxos_message *m)
{
	return (unsigned)m->type <= PAXOS_MSG_TYPE_MAX;
}

bool paxos_msg_plausible(const struct paxos_message *m)
{
	if (!known_type(m))
		return true;
	for (size_t i = 0; i < 2 && ballots_at[m->type][i]; i++)
		if (!paxos_ballot_plausible(ballot_at(m, ballots_at[m->type][i])))
			return false;
	return true;
}

bool paxos_msg_acceptor(const struct paxos_message *m, uint32_t *id)
{
	if (!known_type(m) || !acceptor_at[m->type])
		return false;
	*id = u32_at(m, acceptor_at[m->type]);
	return true;
}

bool paxos_msg_proposer(const struct paxos_message *m, uint32_t *id)
{
	if (!known_type(m))
		return false;
	if (proposer_at[m->type]) {
		*id = u32_at(m, proposer_at[m->type]);
		return true;
	}
	if (proposer_ballot_at[m->type]) {
		*id = (uint32_t)(ballot_at(m, proposer_ballot_at[m->type]) % PAXOS_MAX_PROPOSERS);
		return true;
	}
	return false;
}

struct paxos_value *paxos_msg_value(const struct paxos_message *m)
{
	struct paxos_message *w = (struct paxos_message *)m;
	switch (m->type) {
	case PAXOS_MSG_PROMISE:
		return &w->u.promise.value;
	case PAXOS_MSG_ACCEPT:
		return &w->u.accept.value;
	case PAXOS_MSG_ACCEPTED:
		return m->u.accepted.valueless ? NULL : &w->u.accepted.value;
	case PAXOS_MSG_CLIENT_VALUE:
		return &w->u.client_value.value;
	default:
		return NULL;
	}
}
