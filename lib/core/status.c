/* SPDX-License-Identifier: BSD-3-Clause */
/* Readable names for status codes and message types. */
#include <paxos/message.h>
#include <paxos/types.h>

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

bool paxos_msg_plausible(const struct paxos_message *m)
{
	switch (m->type) {
	case PAXOS_MSG_PREPARE:
		return paxos_ballot_plausible(m->u.prepare.ballot);
	case PAXOS_MSG_PROMISE:
		return paxos_ballot_plausible(m->u.promise.ballot) &&
		       paxos_ballot_plausible(m->u.promise.value_ballot);
	case PAXOS_MSG_ACCEPT:
		return paxos_ballot_plausible(m->u.accept.ballot);
	case PAXOS_MSG_ACCEPTED:
		return paxos_ballot_plausible(m->u.accepted.ballot);
	case PAXOS_MSG_REJECT:
		return paxos_ballot_plausible(m->u.reject.ballot);
	case PAXOS_MSG_RECOVER_INFO:
		return paxos_ballot_plausible(m->u.recover_info.highest_ballot);
	default:
		return true;
	}
}

bool paxos_msg_acceptor(const struct paxos_message *m, uint32_t *id)
{
	switch (m->type) {
	case PAXOS_MSG_PROMISE:
		*id = m->u.promise.acceptor_id;
		return true;
	case PAXOS_MSG_ACCEPTED:
		*id = m->u.accepted.acceptor_id;
		return true;
	case PAXOS_MSG_REJECT:
		*id = m->u.reject.acceptor_id;
		return true;
	case PAXOS_MSG_ACCEPTOR_STATE:
		*id = m->u.acceptor_state.acceptor_id;
		return true;
	case PAXOS_MSG_TRIMMED:
		*id = m->u.trimmed.acceptor_id;
		return true;
	case PAXOS_MSG_ACCEPTOR_HELLO:
		*id = m->u.acceptor_hello.acceptor_id;
		return true;
	case PAXOS_MSG_RECOVER_ASK:
		*id = m->u.recover_ask.acceptor_id;
		return true;
	case PAXOS_MSG_CONFIG_INFO:
		*id = m->u.config_info.acceptor_id;
		return true;
	default:
		return false;
	}
}

bool paxos_msg_proposer(const struct paxos_message *m, uint32_t *id)
{
	switch (m->type) {
	case PAXOS_MSG_PREPARE:
		*id = (uint32_t)(m->u.prepare.ballot % PAXOS_MAX_PROPOSERS);
		return true;
	case PAXOS_MSG_ACCEPT:
		*id = (uint32_t)(m->u.accept.ballot % PAXOS_MAX_PROPOSERS);
		return true;
	case PAXOS_MSG_HEARTBEAT:
		*id = m->u.heartbeat.proposer_id;
		return true;
	case PAXOS_MSG_CONFIG_PUSH:
		*id = m->u.config_push.proposer_id;
		return true;
	case PAXOS_MSG_REFUSED:
		*id = m->u.refused.proposer_id;
		return true;
	default:
		return false;
	}
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
