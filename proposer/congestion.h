/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The leader's congestion window over phase 2: how many instances may be in phase 2 at once,
 * at most the configured concurrency. A phase 2 timeout means an accept or its answers were
 * lost or queued too long, most often in a receiver's socket buffer, and every accept resent
 * then adds to the very queues that made it late: the more values a client offered, the less
 * the cluster carried (congestion collapse). So, as TCP does with its window, a timeout halves
 * the window (once per timeout period: a burst that overflowed a buffer times out together),
 * and every `window` instances closed in phase 2 add one instance back (additive increase).
 * The window settles just below the load at which the receivers start to drop.
 */
#ifndef PAXOS_PROPOSER_CONGESTION_H
#define PAXOS_PROPOSER_CONGESTION_H

#include <paxos/types.h>

/* The window never shrinks below this: two instances keep the pipe busy while one closes. */
#define CONGESTION_WINDOW_MIN 2u

struct congestion {
	uint32_t window;   /* instances allowed in phase 2 now, in [min(MIN, ceiling), ceiling] */
	uint32_t ceiling;  /* proposer-concurrency */
	uint32_t closed;   /* instances closed in phase 2 since the window last grew */
	paxos_time cut_at; /* when the window was last halved */
	bool cut;          /* cut_at is set */
};

void congestion_init(struct congestion *c, uint32_t ceiling);

/* An instance we sent phase 2 for was closed: the window may grow. */
void congestion_on_closed(struct congestion *c);

/* An instance timed out in phase 2 at `now`; `period` is the phase 2 timeout. Halves the
 * window unless it was halved less than a period ago. Returns whether it did. */
bool congestion_on_timeout(struct congestion *c, paxos_time now, paxos_time period);

#endif
