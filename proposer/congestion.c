/* SPDX-License-Identifier: BSD-3-Clause */
#include "congestion.h"

static uint32_t window_min(const struct congestion *c)
{
	return c->ceiling < CONGESTION_WINDOW_MIN ? c->ceiling : CONGESTION_WINDOW_MIN;
}

/* A leader starts with the whole concurrency: a cluster that is not overloaded never sees a
 * timeout and keeps it. */
void congestion_init(struct congestion *c, uint32_t ceiling)
{
	*c = (struct congestion){.window = ceiling, .ceiling = ceiling};
}

void congestion_on_closed(struct congestion *c)
{
	if (c->window >= c->ceiling)
		return;
	if (++c->closed >= c->window) {
		c->closed = 0;
		c->window++;
	}
}

bool congestion_on_timeout(struct congestion *c, paxos_time now, paxos_time period)
{
	/* Instances sent before the last cut time out after it: they were in the burst that cut. */
	if (c->cut && now >= c->cut_at && now - c->cut_at < period)
		return false;
	c->cut = true;
	c->cut_at = now;
	c->closed = 0;
	uint32_t half = c->window / 2;
	c->window = half > window_min(c) ? half : window_min(c);
	return true;
}
