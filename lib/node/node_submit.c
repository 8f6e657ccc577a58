/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The application's submit path and its flow control: values go to the submit group, unless
 * the leader said lately that its pending list is full (PAXOS_MSG_REFUSED): then
 * paxos_node_submit() refuses them for a while, and the application hears which of its values
 * the leader dropped, to send them again once the hold ends rather than after a timeout.
 */
#include "parts.h"

#include "batch.h"
#include "clock.h"

#include <sys/random.h>

/* A hold after a refusal: the first short (a leader drains a few hundred values a
 * millisecond), doubled when values sent right after a hold are refused again, up to the
 * longest; back to the first once a hold passes without a refusal. */
#define HOLD_FIRST_US 1000u
#define HOLD_LONGEST_US 64000u

void node_submit_refused(struct paxos_node *n, const struct paxos_refused *r, paxos_time now)
{
	struct node_submit *s = &n->submit;
	n->net.counters.refusals_heard++;
	if (s->hold == 0 || now >= s->held_until + s->hold)
		s->hold = HOLD_FIRST_US; /* calm since the last hold */
	else if (now >= s->held_until && s->hold < HOLD_LONGEST_US)
		s->hold *= 2; /* what went after the last hold was refused too */
	if (now + s->hold > s->held_until)
		s->held_until = now + s->hold;
	node_sessions_refused(n);
	if (!s->refused)
		return;
	size_t count = r->hashes.len / 8;
	for (size_t i = 0; i < count; i++) {
		const uint8_t *b = r->hashes.data + 8 * i;
		uint64_t h = 0;
		for (int k = 7; k >= 0; k--)
			h = h << 8 | b[k];
		s->hashes[i] = h;
	}
	s->refused(s->refused_arg, s->hashes, count);
}

/* Submission ids count up from a random start, so that two nodes' (or two starts') ids do not
 * meet in any run of realistic length; without an entropy source, from the clock. */
void node_submit_init(struct paxos_node *n)
{
	uint64_t x;
	if (getrandom(&x, sizeof(x), 0) != (ssize_t)sizeof(x)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	n->submit.last_id = x;
}

void paxos_node_on_refused(struct paxos_node *n, paxos_refused_fn refused, void *arg)
{
	n->submit.refused = refused;
	n->submit.refused_arg = arg;
}

int paxos_node_submit(struct paxos_node *n, const void *value, size_t len)
{
	if (!n || (!value && len)) {
		if (n)
			node_set_error(n, "paxos_node_submit: value is NULL");
		return PAXOS_E_INVALID;
	}
	if (len > n->max_value) {
		node_set_error(
		    n,
		    "paxos_node_submit: value of %zu bytes exceeds the maximum of %u bytes "
		    "(max-datagram %u)",
		    len, n->max_value, n->cfg.max_datagram);
		return PAXOS_E_TOO_BIG;
	}
	/* A leader that just dropped values would drop this one too. */
	if (n->submit.held_until && paxos_now() < n->submit.held_until) {
		n->net.counters.submits_refused++;
		node_set_error(n, "paxos_node_submit: the leader is full; submit again later");
		return PAXOS_E_FULL;
	}
	struct paxos_message m = {.type = PAXOS_MSG_CLIENT_VALUE};
	m.u.client_value.value.data = value;
	m.u.client_value.value.len = (uint32_t)len;
	/* Its submission, so that the proposers tell it from another of the same bytes; a value
	 * within PAXOS_BATCH_ID_BYTES of the largest has no room for it in a frame and goes
	 * without (then nothing drops it as delivered before it arrived). */
	if (len + PAXOS_BATCH_ID_BYTES <= n->max_value) {
		m.u.client_value.id = ++n->submit.last_id;
		if (m.u.client_value.id == 0)
			m.u.client_value.id = ++n->submit.last_id;
	}
	node_emit(&n->net.out[PAXOS_ROLE_CLIENT], PAXOS_GROUP_SUBMIT, &m);
	return PAXOS_OK;
}
