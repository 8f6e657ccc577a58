/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A proposer's client queue: submissions queued, settled credits taken, and refusals for
 * the values the full list drops (flow control).
 *
 * Every proposer queues every client value, and drops its copy once the value is delivered
 * (instance_settle), or does not queue a copy that arrives after (settled.h). A copy is known by
 * its submission: the id the submitting node drew for that paxos_node_submit(), carried in the
 * client value and in the frame the leader packs it into. Matching by the bytes instead made two
 * submitters' equal values one (the second dropped as if delivered), and let anyone who can submit
 * drop another's value with bytes of the same hash. A value that names no submission (a client that
 * gives none) is never dropped as delivered before it arrived; a copy queued already still leaves
 * on an equal delivered value that names none. A client value is data, whatever its bytes: a change
 * comes only through paxos_proposer_change() (the node takes it from a PAXOS_MSG_CHANGE with the
 * operators' MAC), and a value is framed in its instance (lib/core/batch.h), so a learner never
 * reads one as a command either.
 */
#include <paxos/proposer.h>

#include "leader_state.h"

static int queue_submission(struct paxos_proposer *p, const struct paxos_value *v, uint64_t id)
{
	if (!v || (v->len && !v->data))
		return PAXOS_E_INVALID;
	if (v->len > p->pending.max_value)
		return PAXOS_E_TOO_BIG;
	/* Keyed once, and only when a credit may match it: a leader's list seldom asks. */
	uint64_t key = PENDING_NO_HASH;
	if (id && p->settled.count) {
		key = pending_key(v->data, v->len, id);
		if (settled_take(&p->settled, key)) {
			p->counters->values_settled++; /* delivered already: it would repeat */
			return PAXOS_OK;
		}
	}
	int rc = pending_push_back_id(&p->pending, v->data, v->len, id, key);
	if (rc == PAXOS_E_FULL) {
		p->counters->pending_dropped++;
		p->unrefused++;
		if (p->leader && p->refused_named < REFUSED_HASHES)
			p->refused_hash[p->refused_named++] = pending_hash(v->data, v->len);
	}
	return rc;
}

int paxos_proposer_queue(struct paxos_proposer *p, const struct paxos_value *v)
{
	return queue_submission(p, v, 0);
}

int paxos_proposer_queue_value(struct paxos_proposer *p, const struct paxos_client_value *cv)
{
	return cv ? queue_submission(p, &cv->value, cv->id) : PAXOS_E_INVALID;
}

/* Flow control: a leader that drops client values tells their submitters which ones, so that
 * they hold new values back a while (paxos_node_submit() returns PAXOS_E_FULL) rather than
 * send more into a full list, and send the dropped ones again then. A follower's list fills
 * only with values the leader got too: it says nothing. */
void proposer_refuse(struct paxos_proposer *p, const struct paxos_emitter *out)
{
	uint32_t named = 0;
	while (p->leader && p->unrefused > 0) {
		uint32_t k = p->refused_named - named;
		if (k > PAXOS_REFUSED_HASHES_MAX)
			k = PAXOS_REFUSED_HASHES_MAX;
		for (uint32_t i = 0; i < k; i++) {
			uint64_t h = p->refused_hash[named + i];
			for (int b = 0; b < 8; b++)
				p->refused_bytes[8 * i + b] = (uint8_t)(h >> (8 * b));
		}
		struct paxos_message m = {.type = PAXOS_MSG_REFUSED};
		m.u.refused.proposer_id = p->o.id;
		/* The last message also counts the values left unnamed. */
		m.u.refused.dropped = named + k < p->refused_named ? k : p->unrefused;
		m.u.refused.hashes = (struct paxos_value){p->refused_bytes, 8 * k};
		paxos_emit(out, PAXOS_GROUP_LEARNERS, &m);
		p->counters->refusals_sent++;
		named += k;
		p->unrefused -= m.u.refused.dropped;
	}
	p->unrefused = 0;
	p->refused_named = 0;
}

uint32_t paxos_proposer_pending(const struct paxos_proposer *p)
{
	return pending_count(&p->pending);
}

void paxos_proposer_drop_pending(struct paxos_proposer *p)
{
	if (p->leader)
		return;
	p->counters->pending_dropped += pending_count(&p->pending);
	pending_clear(&p->pending);
}
