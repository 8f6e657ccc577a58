/* SPDX-License-Identifier: BSD-3-Clause */
#include "burn.h"

#include <time.h>

uint64_t kv_burn(uint64_t seed, uint32_t rounds)
{
	uint64_t h = seed | 1;
	for (uint32_t i = 0; i < rounds; i++) {
		h ^= h >> 33;
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 29;
		h += i;
	}
	return h;
}

static double thread_cpu_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

uint32_t kv_burn_rounds_for(double us)
{
	if (!(us > 0))
		return 0;
	/* The best of a few tries: the least disturbed by other processes. */
	const uint32_t probe = 1u << 22;
	volatile uint64_t sink = 0;
	double best = 0;
	for (int i = 0; i < 5; i++) {
		double t = thread_cpu_us();
		sink += kv_burn((uint64_t)i, probe);
		t = thread_cpu_us() - t;
		if (i == 0 || t < best)
			best = t;
	}
	(void)sink;
	double rounds = best > 0 ? us * probe / best : probe;
	return rounds < 1 ? 1 : rounds > 4e9 ? 4000000000u : (uint32_t)rounds;
}
