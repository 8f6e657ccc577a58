/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-client's submitting and learning (bench/client.h): each slot holds one outstanding
 * value, tagged with the client and its sequence number; a delivery frees its slot and fills
 * it again (closed loop) or the rate timer fills the free ones (--rate); values not delivered
 * in time, or refused by a full leader, go again; a new leader gets the outstanding values at
 * once; and when nothing is delivered the client says why, from the acceptors' state.
 */
#include <paxos/paxos.h>
#include <paxos/proposer.h>

#include "clock.h"
#include "runner.h"

#include <errno.h>
#include <event2/event.h>
#include <getopt.h>
#include <sys/resource.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "config_fields.h"

#include "client.h"

static uint64_t next_random(struct client *c)
{
	/* xorshift64: reproducible payloads without a dependency. */
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	return c->rng;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void arm_held(struct client *c)
{
	if (c->held_count > 0 && !evtimer_pending(c->held_ev, NULL)) {
		struct timeval retry = {0, HELD_RETRY_US};
		evtimer_add(c->held_ev, &retry);
	}
}

static void held(struct client *c, struct slot *s, bool is_held)
{
	if (s->held != is_held) {
		s->held = is_held;
		c->held_count += is_held ? 1u : (uint32_t)-1;
	}
	arm_held(c);
}

/* Returns false when the node held the value back: the leader said it is full. */
static bool send_slot(struct client *c, struct slot *s, paxos_time now)
{
	struct paxos_node *node = c->parts[s->part].node;
	int rc = paxos_node_submit(node, s->buf, s->len);
	if (rc == PAXOS_E_FULL) {
		c->held_back++;
		held(c, s, true);
		return false;
	}
	if (rc != PAXOS_OK) {
		c->submit_errors++;
		fprintf(stderr, "paxos-client: %s\n", paxos_node_error(node));
	}
	held(c, s, false);
	s->last_sent = now;
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The leader dropped these values (its list was full): ours among them go again once the node
 * stops holding values back, not after --resubmit-ms. A value's hash is taken the first time
 * a refusal needs it. */
void client_on_refused(void *arg, const uint64_t *hashes, size_t count)
{
	struct client *c = arg;
	uint64_t sorted[PAXOS_REFUSED_HASHES_MAX];
	if (count == 0 || count > PAXOS_REFUSED_HASHES_MAX)
		return;
	memcpy(sorted, hashes, count * sizeof(*hashes));
	qsort(sorted, count, sizeof(*sorted), cmp_u64);
	c->held_budget =
	    c->held_budget / 2 > HELD_BUDGET_STEP ? c->held_budget / 2 : HELD_BUDGET_STEP;
	for (uint32_t i = 0; i < c->outstanding; i++) {
		struct slot *s = &c->slots[i];
		if (!s->seq || s->held)
			continue;
		if (!s->hash)
			s->hash = paxos_value_hash(s->buf, s->len);
		if (bsearch(&s->hash, sorted, count, sizeof(*sorted), cmp_u64)) {
			c->refused_resends++;
			held(c, s, true);
		}
	}
}

/* Up to the budget of the values held back go now, oldest slot first, until the node holds one
 * back again. */
void client_on_held_retry(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	paxos_time now = paxos_now();
	uint32_t sent = 0;
	for (uint32_t i = 0; i < c->outstanding && c->held_count > 0 && sent < c->held_budget;
	     i++) {
		struct slot *s = &c->slots[i];
		if (!s->seq || !s->held)
			continue;
		if (!send_slot(c, s, now))
			return; /* send_slot armed the timer again */
		sent++;
	}
	if (sent == c->held_budget && c->held_budget < c->outstanding)
		c->held_budget += HELD_BUDGET_STEP;
	arm_held(c);
}

/* The partition of a key: a fixed 64-bit mix (splitmix64's finalizer), so that one key always
 * goes to one partition, whatever the client. */
static uint32_t key_partition(uint64_t key, uint32_t partitions)
{
	key ^= key >> 30;
	key *= 0xbf58476d1ce4e5b9ull;
	key ^= key >> 27;
	key *= 0x94d049bb133111ebull;
	key ^= key >> 31;
	return (uint32_t)(key % partitions);
}

/* fill_slot: the next value into slot S, due at DUE (its latency counts from then), sent now */
static void fill_slot(struct client *c, struct slot *s, paxos_time due, paxos_time now)
{
	s->seq = ++c->submitted;
	s->hash = 0;
	s->part = (uint32_t)(s->seq % c->part_count);
	c->slot_of[s->seq & c->slot_of_mask] = (uint32_t)(s - c->slots);
	uint32_t span = c->size_max - c->size_min + 1;
	s->len = c->size_min + (uint32_t)(next_random(c) % span);
	put_u32(s->buf, TAG_MAGIC);
	put_u32(s->buf + 4, c->id);
	put_u64(s->buf + 8, s->seq);
	uint32_t i = TAG_SIZE;
	if (c->spread_key) {
		uint64_t key = next_random(c) % c->keys;
		s->part = key_partition(key, c->part_count);
		if (s->len >= TAG_SIZE + KEY_SIZE) {
			put_u64(s->buf + TAG_SIZE, key);
			i += KEY_SIZE;
		}
	}
	c->parts[s->part].submitted++;
	/* Eight payload bytes per random number: at 1 kB values a byte each took a fifth of
	 * the cluster's CPU (perf). */
	for (; i + 8 <= s->len; i += 8)
		put_u64(s->buf + i, next_random(c));
	for (uint64_t r = next_random(c); i < s->len; i++, r >>= 8)
		s->buf[i] = (uint8_t)r;
	s->first_sent = due;
	if (c->log) {
		struct paxos_value v = {s->buf, s->len};
		paxos_runner_write_value(c->log, s->seq, &v);
	}
	send_slot(c, s, now);
}

static bool slot_holds(const struct slot *s, uint64_t seq, const struct paxos_value *v)
{
	return s->seq == seq && s->len == v->len && memcmp(s->buf, v->data, v->len) == 0;
}

static struct slot *find_slot(struct client *c, uint64_t seq, const struct paxos_value *v)
{
	if (seq == 0)
		return NULL;
	struct slot *hint = &c->slots[c->slot_of[seq & c->slot_of_mask]];
	if (slot_holds(hint, seq, v))
		return hint;
	for (uint32_t i = 0; i < c->outstanding; i++)
		if (slot_holds(&c->slots[i], seq, v))
			return &c->slots[i];
	return NULL;
}

/* due_time: when value number SEQ (from 1) is due under --rate */
static paxos_time due_time(const struct client *c, uint64_t seq)
{
	return c->started + (paxos_time)((seq - 1) * 1000000u / c->rate);
}

/* submit_due: open loop: every value due by NOW that has a free slot goes out */
static void submit_due(struct client *c, paxos_time now)
{
	while (c->free_count && c->submitted < c->count) {
		paxos_time due = due_time(c, c->submitted + 1);
		if (due > now)
			break;
		fill_slot(c, &c->slots[c->free_slots[--c->free_count]], due, now);
	}
}

void client_on_deliver(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)position;
	struct part *part = arg;
	struct client *c = part->c;
	if (!c->first_iid)
		c->first_iid = iid;
	uint32_t magic, id;
	uint64_t seq;
	if (v->len < TAG_SIZE) {
		c->foreign++;
		return;
	}
	memcpy(&magic, v->data, 4);
	memcpy(&id, v->data + 4, 4);
	memcpy(&seq, v->data + 8, 8);
	if (magic != TAG_MAGIC || id != c->id) {
		c->foreign++;
		return;
	}
	struct slot *s = find_slot(c, seq, v);
	if (!s) {
		c->duplicates++; /* a resubmitted value delivered twice */
		return;
	}
	paxos_time now = paxos_now();
	c->delivered++;
	part->delivered++;
	c->progress = now;
	c->reason[0] = 0;
	if (s->first_sent >= c->started + c->warmup) {
		c->latency_part[c->measured] = (uint8_t)s->part;
		c->latency_us[c->measured++] = (uint32_t)(now - s->first_sent);
	}
	if (s->held) { /* delivered from an earlier send: nothing to send again */
		s->held = false;
		c->held_count--;
	}
	s->seq = 0;
	if (c->delivered == c->count) {
		c->finished = now;
		event_base_loopexit(c->base, NULL);
	} else if (c->rate) {
		c->free_slots[c->free_count++] = (uint32_t)(s - c->slots);
		submit_due(c, now); /* a value may be waiting for this slot */
	} else if (c->submitted < c->count) {
		fill_slot(c, s, now, now);
	}
}

void client_on_resubmit_check(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	paxos_time now = paxos_now();
	for (uint32_t i = 0; i < c->outstanding; i++) {
		struct slot *s = &c->slots[i];
		if (s->seq && !s->held && now - s->last_sent >= c->resubmit) {
			c->resubmits++;
			send_slot(c, s, now);
		}
	}
}

/* With several partitions the new leader of one has no copy of the values that waited on the
 * leader before (docs/operating.md, "Lean followers"): they go again as soon as its first
 * instance is delivered, not after --resubmit-ms. */
void client_on_new_leader(void *arg, uint32_t proposer)
{
	(void)proposer;
	struct part *part = arg;
	struct client *c = part->c;
	uint32_t index = (uint32_t)(part - c->parts);
	paxos_time now = paxos_now();
	for (uint32_t i = 0; i < c->outstanding; i++) {
		struct slot *s = &c->slots[i];
		if (s->seq && s->part == index) {
			c->resubmits++;
			c->new_leader_resubmits++;
			send_slot(c, s, now);
		}
	}
}

/* How long without a delivery before the client says why, when the acceptors tell. */
#define STALL_SAY_US 1000000u

/*
 * Nothing delivered for a second while values wait: if the acceptors' state messages show
 * why (too few heard, or they withhold their votes, recovering lost state), say so once, and
 * again when the reason changes, rather than time out silently.
 */
void client_on_stall_check(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	paxos_time now = paxos_now();
	if (c->delivered == c->count || now - c->progress < STALL_SAY_US)
		return;
	char why[256] = "";
	for (uint32_t p = 0; p < c->part_count && !why[0]; p++) {
		struct paxos_node *node = c->parts[p].node;
		uint32_t acceptors = c->parts[p].acceptors, quorum = acceptors / 2 + 1;
		uint32_t heard = paxos_node_acceptors_heard(node, c->heard_ms);
		uint32_t withheld = paxos_node_acceptors_withholding(node, c->heard_ms);
		uint32_t voting = (uint32_t)__builtin_popcount(heard & ~withheld);
		if (voting >= quorum)
			continue;
		size_t n =
		    (size_t)snprintf(why, sizeof(why), "partition %u: ", c->parts[p].partition);
		if (withheld)
			snprintf(why + n, sizeof(why) - n,
				 "%d of the %u acceptors withhold their votes: they recover lost "
				 "state (their logs say what they wait for)",
				 __builtin_popcount(withheld), acceptors);
		else
			snprintf(why + n, sizeof(why) - n,
				 "%d of the %u acceptors are heard, a quorum is %u",
				 __builtin_popcount(heard), acceptors, quorum);
	}
	if (!why[0] || strcmp(why, c->reason) == 0)
		return;
	snprintf(c->reason, sizeof(c->reason), "%s", why);
	fprintf(stderr, "paxos-client: nothing delivered for %.1f s: %s\n",
		(double)(now - c->progress) / 1e6, why);
}

void client_on_rate_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	if (c->started)
		submit_due(c, paxos_now());
}

/*
 * The learner starts at the first instance it hears of. Values sent before that could land
 * below it and never be seen delivered (then resubmitted: delivered twice). So the client
 * waits until its learner started, from the highest accepted instance the acceptors resend
 * every acceptor-repeat-ms, or, on a cluster that has accepted nothing, for two of those.
 */
void client_on_start(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	paxos_time now = paxos_now();
	if (!c->learner_wait_until)
		c->learner_wait_until = now + c->learner_wait;
	bool waiting = false;
	for (uint32_t p = 0; p < c->part_count; p++)
		waiting |= paxos_node_next_iid(c->parts[p].node) <= 1;
	if (waiting && now < c->learner_wait_until) {
		struct timeval again = {0, 2000};
		event_add(c->start_ev, &again);
		return;
	}
	c->started = now;
	if (c->rate) {
		submit_due(c, c->started);
		return;
	}
	for (uint32_t i = 0; i < c->outstanding && c->submitted < c->count; i++)
		fill_slot(c, &c->slots[i], c->started, c->started);
}

void client_on_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	fprintf(stderr, "paxos-client: time limit reached\n");
	event_base_loopexit(c->base, NULL);
}

void client_on_signal(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopexit(arg, NULL);
}

/* SIGUSR1: no new value; the client ends, as if --count had been what it submitted, once
 * those are delivered. A test runs it until a condition holds, not for a count that a fast
 * or a slow machine would get through too early or too late. */
void client_on_drain(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	c->count = c->submitted;
	if (c->delivered == c->count) {
		c->finished = paxos_now();
		event_base_loopexit(c->base, NULL);
	}
}
