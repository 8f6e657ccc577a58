/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Prometheus text exposition format, version 0.0.4: metric families ("# HELP", "# TYPE")
 * with their samples, labelled by role and id. Pure formatting into a caller's buffer; what
 * is measured is the caller's (lib/metrics/).
 */
#ifndef PAXOS_EXPOSITION_H
#define PAXOS_EXPOSITION_H

#include <paxos/counters.h>

enum paxos_metric_type {
	PAXOS_METRIC_COUNTER, /* only goes up: written paxos_NAME_total */
	PAXOS_METRIC_GAUGE,   /* a level: written paxos_NAME */
};

struct paxos_sample {
	const char *name; /* [a-z0-9_]: without the paxos_ prefix and a counter's _total */
	const char *help; /* one line of the family's description */
	enum paxos_metric_type type;
	const char *role; /* the role label: "acceptor", "transport", ... */
	uint32_t id;      /* the id label */
	uint64_t value;
	bool micro; /* value counts millionths: written with six decimals (microseconds as s) */
	/* The partition label (paxos.conf partitions), written only when partitioned is set. */
	bool partitioned;
	uint32_t partition;
};

/*
 * Writes the samples as exposition text: each family once, at the place of its first sample,
 * with every sample of that name (in their order) below its HELP and TYPE lines. Returns the
 * length of the whole text, like snprintf: it is complete in buf when that is below cap
 * (always NUL-terminated when cap > 0; buf may be NULL when cap is 0, to measure).
 */
size_t paxos_exposition(const struct paxos_sample *samples, size_t count, char *buf, size_t cap);

/*
 * One sample per counter of c (paxos_counter_count() of them, in the list's order) into out,
 * labelled role and id: the counts as counters, the levels among them (phase1_timeout_us,
 * phase2_timeout_us: "a level, not a count") as gauges in seconds (phase1_timeout_seconds).
 * Returns how many were written.
 */
size_t paxos_counter_samples(const struct paxos_counters *c, const char *role, uint32_t id,
			     struct paxos_sample *out);

#endif
