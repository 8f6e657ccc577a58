/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PAXOS_CLOCK_H
#define PAXOS_CLOCK_H

#include <paxos/types.h>
#include <time.h>

/* Monotonic microseconds; clock_gettime is served by the vDSO, not a system call. */
static inline paxos_time paxos_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (paxos_time)ts.tv_sec * 1000000u + (paxos_time)ts.tv_nsec / 1000u;
}

/* Microseconds since the Unix epoch: for times another host stamped (an oracle's order). */
static inline uint64_t paxos_wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

#endif
