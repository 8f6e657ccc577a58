/* SPDX-License-Identifier: BSD-3-Clause */
/* The simulation's only source of randomness: splitmix64, so a seed replays a run exactly. */
#ifndef PAXOS_SIM_RNG_H
#define PAXOS_SIM_RNG_H

#include <stdbool.h>
#include <stdint.h>

struct sim_rng {
	uint64_t state;
};

static inline void rng_seed(struct sim_rng *r, uint64_t seed)
{
	r->state = seed;
}

static inline uint64_t rng_next(struct sim_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in lo..hi inclusive (the tiny modulo bias does not matter here). */
static inline uint64_t rng_range(struct sim_rng *r, uint64_t lo, uint64_t hi)
{
	return lo + rng_next(r) % (hi - lo + 1);
}

/* True with probability percent / 100. */
static inline bool rng_percent(struct sim_rng *r, uint32_t percent)
{
	return percent > 0 && rng_next(r) % 100 < percent;
}

#endif
