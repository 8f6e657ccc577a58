/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A benchmark aid (kvstore-replica --burn-us): a fixed amount of real CPU work per applied
 * command, standing in for an application whose commands cost more than a table update, so
 * that parallel execution over partitions has something to parallelise. It changes no state.
 */
#ifndef KVSTORE_BURN_H
#define KVSTORE_BURN_H

#include <stdint.h>

/* Mixes seed through `rounds` dependent rounds of a 64-bit hash finaliser; the result only
 * keeps the compiler from dropping the work. */
uint64_t kv_burn(uint64_t seed, uint32_t rounds);

/* Rounds of kv_burn that take about `us` microseconds of this thread's CPU here (measured;
 * at least 1 when us > 0, 0 when us is 0). */
uint32_t kv_burn_rounds_for(double us);

#endif
