/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: paxos_decode on arbitrary bytes. Whatever it accepts must hold what the
 * cores rely on (values inside the datagram, ids in range, at most max messages) and must
 * survive an encode/decode round trip unchanged; whatever it rejects must report no messages.
 */
#include "codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* abort() so that libFuzzer (and the replay driver) report the input that broke it. */
#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_decode: %s:%d: invariant failed: %s\n", __FILE__,    \
				__LINE__, #cond);                                                  \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* Few enough that long datagrams hit the limit, which must reject them as a whole. */
#define SMALL_MAX 3u

static struct paxos_decoder decoder;
static bool decoder_ready;
static struct paxos_message msgs[PAXOS_MAX_MESSAGES_PER_DATAGRAM];
static struct paxos_message again[PAXOS_MAX_MESSAGES_PER_DATAGRAM];

static bool same_value(const struct paxos_value *a, const struct paxos_value *b)
{
	return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

static bool same_message(const struct paxos_message *a, const struct paxos_message *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case PAXOS_MSG_PREPARE:
		return a->u.prepare.iid == b->u.prepare.iid &&
		       a->u.prepare.ballot == b->u.prepare.ballot;
	case PAXOS_MSG_PROMISE:
		return a->u.promise.iid == b->u.promise.iid &&
		       a->u.promise.ballot == b->u.promise.ballot &&
		       a->u.promise.value_ballot == b->u.promise.value_ballot &&
		       a->u.promise.acceptor_id == b->u.promise.acceptor_id &&
		       same_value(&a->u.promise.value, &b->u.promise.value);
	case PAXOS_MSG_ACCEPT:
		return a->u.accept.iid == b->u.accept.iid &&
		       a->u.accept.ballot == b->u.accept.ballot &&
		       same_value(&a->u.accept.value, &b->u.accept.value);
	case PAXOS_MSG_ACCEPTED:
		return a->u.accepted.iid == b->u.accepted.iid &&
		       a->u.accepted.ballot == b->u.accepted.ballot &&
		       a->u.accepted.acceptor_id == b->u.accepted.acceptor_id &&
		       a->u.accepted.final == b->u.accepted.final &&
		       same_value(&a->u.accepted.value, &b->u.accepted.value);
	case PAXOS_MSG_REJECT:
		return a->u.reject.iid == b->u.reject.iid &&
		       a->u.reject.ballot == b->u.reject.ballot &&
		       a->u.reject.acceptor_id == b->u.reject.acceptor_id;
	case PAXOS_MSG_REPEAT:
		return a->u.repeat.from == b->u.repeat.from && a->u.repeat.to == b->u.repeat.to;
	case PAXOS_MSG_TRIM:
		return a->u.trim.iid == b->u.trim.iid;
	case PAXOS_MSG_ACCEPTOR_STATE:
		return a->u.acceptor_state.acceptor_id == b->u.acceptor_state.acceptor_id &&
		       a->u.acceptor_state.highest_accepted ==
			   b->u.acceptor_state.highest_accepted &&
		       a->u.acceptor_state.trim_iid == b->u.acceptor_state.trim_iid;
	case PAXOS_MSG_CLIENT_VALUE:
		return same_value(&a->u.client_value.value, &b->u.client_value.value);
	case PAXOS_MSG_TRIMMED:
		return a->u.trimmed.acceptor_id == b->u.trimmed.acceptor_id &&
		       a->u.trimmed.iid == b->u.trimmed.iid;
	case PAXOS_MSG_HEARTBEAT:
		return a->u.heartbeat.proposer_id == b->u.heartbeat.proposer_id &&
		       a->u.heartbeat.next_iid == b->u.heartbeat.next_iid;
	case PAXOS_MSG_LEADER:
		return a->u.leader.leader_id == b->u.leader.leader_id;
	case PAXOS_MSG_REPAIR:
		return a->u.repair.from == b->u.repair.from && a->u.repair.to == b->u.repair.to;
	case PAXOS_MSG_ACCEPTOR_HELLO:
		return a->u.acceptor_hello.acceptor_id == b->u.acceptor_hello.acceptor_id &&
		       a->u.acceptor_hello.incarnation == b->u.acceptor_hello.incarnation &&
		       a->u.acceptor_hello.recovering == b->u.acceptor_hello.recovering;
	case PAXOS_MSG_RECOVER_ASK:
		return a->u.recover_ask.acceptor_id == b->u.recover_ask.acceptor_id &&
		       a->u.recover_ask.incarnation == b->u.recover_ask.incarnation;
	case PAXOS_MSG_RECOVER_INFO:
		return a->u.recover_info.role == b->u.recover_info.role &&
		       a->u.recover_info.sender_id == b->u.recover_info.sender_id &&
		       a->u.recover_info.acceptor_id == b->u.recover_info.acceptor_id &&
		       a->u.recover_info.incarnation == b->u.recover_info.incarnation &&
		       a->u.recover_info.highest_iid == b->u.recover_info.highest_iid &&
		       a->u.recover_info.highest_ballot == b->u.recover_info.highest_ballot;
	case PAXOS_MSG_CONFIG_ASK:
		return a->u.config_ask.nonce == b->u.config_ask.nonce;
	case PAXOS_MSG_CONFIG_INFO:
		return a->u.config_info.acceptor_id == b->u.config_info.acceptor_id &&
		       a->u.config_info.nonce == b->u.config_info.nonce &&
		       a->u.config_info.settled == b->u.config_info.settled &&
		       same_value(&a->u.config_info.history, &b->u.config_info.history);
	case PAXOS_MSG_REFUSED:
		return a->u.refused.proposer_id == b->u.refused.proposer_id &&
		       a->u.refused.dropped == b->u.refused.dropped &&
		       same_value(&a->u.refused.hashes, &b->u.refused.hashes);
	case PAXOS_MSG_SNAPSHOT_ASK:
		return a->u.snapshot_ask.nonce == b->u.snapshot_ask.nonce &&
		       a->u.snapshot_ask.iid == b->u.snapshot_ask.iid &&
		       a->u.snapshot_ask.server == b->u.snapshot_ask.server &&
		       a->u.snapshot_ask.offset == b->u.snapshot_ask.offset;
	case PAXOS_MSG_SNAPSHOT_OFFER:
		return a->u.snapshot_offer.server == b->u.snapshot_offer.server &&
		       a->u.snapshot_offer.nonce == b->u.snapshot_offer.nonce &&
		       a->u.snapshot_offer.iid == b->u.snapshot_offer.iid &&
		       a->u.snapshot_offer.total == b->u.snapshot_offer.total &&
		       a->u.snapshot_offer.checksum == b->u.snapshot_offer.checksum;
	case PAXOS_MSG_SNAPSHOT_CHUNK:
		return a->u.snapshot_chunk.nonce == b->u.snapshot_chunk.nonce &&
		       a->u.snapshot_chunk.iid == b->u.snapshot_chunk.iid &&
		       a->u.snapshot_chunk.total == b->u.snapshot_chunk.total &&
		       a->u.snapshot_chunk.checksum == b->u.snapshot_chunk.checksum &&
		       a->u.snapshot_chunk.offset == b->u.snapshot_chunk.offset &&
		       same_value(&a->u.snapshot_chunk.bytes, &b->u.snapshot_chunk.bytes);
	case PAXOS_MSG_CHOSEN:
		return a->u.chosen.ballot == b->u.chosen.ballot &&
		       a->u.chosen.from == b->u.chosen.from && a->u.chosen.to == b->u.chosen.to;
	case PAXOS_MSG_CONFIG_PUSH:
		return a->u.config_push.proposer_id == b->u.config_push.proposer_id &&
		       a->u.config_push.settled == b->u.config_push.settled &&
		       same_value(&a->u.config_push.history, &b->u.config_push.history);
	case PAXOS_MSG_CHANGE:
		return same_value(&a->u.change.command, &b->u.change.command) &&
		       a->u.change.flags == b->u.change.flags &&
		       same_value(&a->u.change.mac, &b->u.change.mac);
	}
	return false;
}

/* What the cores may assume of every decoded message. */
static void check_message(const struct paxos_message *m, const uint8_t *buf, size_t len)
{
	CHECK(m->type >= PAXOS_MSG_PREPARE && m->type <= PAXOS_MSG_TYPE_MAX);
	const struct paxos_value *v = paxos_msg_value(m);
	if (v) {
		CHECK(v->len <= len);
		if (v->len) {
			CHECK(v->data >= buf && v->data + v->len <= buf + len);
			/* Read every byte, so ASan sees it if the pointer is wrong after all. */
			unsigned sum = 0;
			for (uint32_t i = 0; i < v->len; i++)
				sum += v->data[i];
			(void)sum;
		}
	}
	switch (m->type) {
	case PAXOS_MSG_PROMISE:
		CHECK(m->u.promise.acceptor_id < PAXOS_MAX_ACCEPTORS);
		break;
	case PAXOS_MSG_ACCEPTED:
		CHECK(m->u.accepted.acceptor_id < PAXOS_MAX_ACCEPTORS);
		break;
	case PAXOS_MSG_REJECT:
		CHECK(m->u.reject.acceptor_id < PAXOS_MAX_ACCEPTORS);
		break;
	case PAXOS_MSG_REPEAT:
		CHECK(m->u.repeat.from <= m->u.repeat.to);
		break;
	case PAXOS_MSG_ACCEPTOR_STATE:
		CHECK(m->u.acceptor_state.acceptor_id < PAXOS_MAX_ACCEPTORS);
		break;
	case PAXOS_MSG_TRIMMED:
		CHECK(m->u.trimmed.acceptor_id < PAXOS_MAX_ACCEPTORS);
		break;
	case PAXOS_MSG_HEARTBEAT:
		CHECK(m->u.heartbeat.proposer_id < PAXOS_MAX_PROPOSERS);
		break;
	case PAXOS_MSG_LEADER:
		CHECK(m->u.leader.leader_id < PAXOS_MAX_PROPOSERS ||
		      m->u.leader.leader_id == PAXOS_LEADER_AUTO);
		break;
	case PAXOS_MSG_REPAIR:
		CHECK(m->u.repair.from <= m->u.repair.to);
		break;
	case PAXOS_MSG_ACCEPTOR_HELLO:
		CHECK(m->u.acceptor_hello.acceptor_id < PAXOS_MAX_ACCEPTORS);
		break;
	case PAXOS_MSG_RECOVER_ASK:
		CHECK(m->u.recover_ask.acceptor_id < PAXOS_MAX_ACCEPTORS);
		break;
	case PAXOS_MSG_RECOVER_INFO:
		CHECK(m->u.recover_info.acceptor_id < PAXOS_MAX_ACCEPTORS);
		CHECK(m->u.recover_info.role == PAXOS_ROLE_ACCEPTOR ||
		      m->u.recover_info.role == PAXOS_ROLE_PROPOSER);
		break;
	default:
		break;
	}
}

/* The encoder must take back everything the decoder accepted, in no more bytes (it packs
 * numbers and lengths minimally), and the result must decode to the same messages. */
static void check_round_trip(const struct paxos_header *h, size_t n, size_t len)
{
	size_t cap = len + PAXOS_WIRE_OVERHEAD;
	uint8_t *buf = malloc(cap);
	CHECK(buf != NULL);
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, cap, h);
	for (size_t i = 0; i < n; i++)
		CHECK(paxos_encoder_add(&e, &msgs[i]) == PAXOS_OK);
	CHECK(e.len <= len);

	struct paxos_header h2;
	size_t n2 = 0;
	CHECK(paxos_decode(&decoder, buf, e.len, &h2, again, PAXOS_MAX_MESSAGES_PER_DATAGRAM,
			   &n2) == PAXOS_OK);
	CHECK(h2.role == h->role && h2.sender_id == h->sender_id);
	CHECK(n2 == n);
	for (size_t i = 0; i < n; i++)
		CHECK(same_message(&msgs[i], &again[i]));
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!decoder_ready) {
		paxos_decoder_init(&decoder);
		decoder_ready = true;
	}
	struct paxos_header h;
	size_t n = SIZE_MAX;
	int rc = paxos_decode(&decoder, data, size, &h, msgs, PAXOS_MAX_MESSAGES_PER_DATAGRAM, &n);
	CHECK(rc == PAXOS_OK || rc == PAXOS_E_MALFORMED);
	if (rc != PAXOS_OK) {
		CHECK(n == 0);
		return 0;
	}
	CHECK(n <= PAXOS_MAX_MESSAGES_PER_DATAGRAM);
	CHECK((unsigned)h.role < PAXOS_ROLE_COUNT);
	for (size_t i = 0; i < n; i++)
		check_message(&msgs[i], data, size);

	/* All or nothing under a smaller limit: the same messages, or a rejection. */
	struct paxos_message few[SMALL_MAX];
	size_t n_few = SIZE_MAX;
	rc = paxos_decode(&decoder, data, size, &h, few, SMALL_MAX, &n_few);
	if (n > SMALL_MAX) {
		CHECK(rc == PAXOS_E_MALFORMED && n_few == 0);
	} else {
		CHECK(rc == PAXOS_OK && n_few == n);
		for (size_t i = 0; i < n; i++)
			CHECK(same_message(&few[i], &msgs[i]));
	}

	check_round_trip(&h, n, size);
	return 0;
}
