/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Prometheus text exposition (version 0.0.4). A sample line is
 *   paxos_NAME[_total]{role="ROLE",id="ID"[,partition="P"]} VALUE
 * below its family's "# HELP" and "# TYPE" lines; HELP text escapes backslash and newline,
 * label values also the double quote, as the format requires.
 */
#include "exposition.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Text being appended to buf; len counts all of it, also what did not fit (like snprintf). */
struct text {
	char *buf;
	size_t cap;
	size_t len;
};

static void put_bytes(struct text *t, const char *s, size_t n)
{
	if (t->len < t->cap) {
		size_t room = t->cap - 1 - t->len; /* keep one byte for the NUL */
		size_t k = n < room ? n : room;
		memcpy(t->buf + t->len, s, k);
		t->buf[t->len + k] = '\0';
	}
	t->len += n;
}

static void put(struct text *t, const char *s)
{
	put_bytes(t, s, strlen(s));
}

static void put_u64(struct text *t, uint64_t v)
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
	put_bytes(t, digits, (size_t)n);
}

/* s with backslash and newline escaped, and the double quote too in a label value. */
static void put_escaped(struct text *t, const char *s, bool label)
{
	for (; *s; s++) {
		if (*s == '\\')
			put(t, "\\\\");
		else if (*s == '\n')
			put(t, "\\n");
		else if (*s == '"' && label)
			put(t, "\\\"");
		else
			put_bytes(t, s, 1);
	}
}

static void put_name(struct text *t, const struct paxos_sample *s)
{
	put(t, "paxos_");
	put(t, s->name);
	if (s->type == PAXOS_METRIC_COUNTER)
		put(t, "_total");
}

static void put_family(struct text *t, const struct paxos_sample *s)
{
	put(t, "# HELP ");
	put_name(t, s);
	put(t, " ");
	put_escaped(t, s->help, false);
	put(t, "\n# TYPE ");
	put_name(t, s);
	put(t, s->type == PAXOS_METRIC_COUNTER ? " counter\n" : " gauge\n");
}

static void put_sample(struct text *t, const struct paxos_sample *s)
{
	put_name(t, s);
	put(t, "{role=\"");
	put_escaped(t, s->role, true);
	put(t, "\",id=\"");
	put_u64(t, s->id);
	if (s->partitioned) {
		put(t, "\",partition=\"");
		put_u64(t, s->partition);
	}
	put(t, "\"} ");
	if (s->micro) {
		char fraction[8];
		put_u64(t, s->value / 1000000);
		snprintf(fraction, sizeof(fraction), ".%06u", (unsigned)(s->value % 1000000));
		put(t, fraction);
	} else {
		put_u64(t, s->value);
	}
	put(t, "\n");
}

static bool same_family(const struct paxos_sample *a, const struct paxos_sample *b)
{
	return a->type == b->type && strcmp(a->name, b->name) == 0;
}

size_t paxos_exposition(const struct paxos_sample *samples, size_t count, char *buf, size_t cap)
{
	struct text t = {buf, buf ? cap : 0, 0};
	if (t.cap > 0)
		buf[0] = '\0';
	/* A scrape has a few hundred samples: finding each family's members by a scan is
	 * cheaper than sorting them. */
	for (size_t i = 0; i < count; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = same_family(&samples[j], &samples[i]);
		if (seen)
			continue;
		put_family(&t, &samples[i]);
		for (size_t j = i; j < count; j++)
			if (same_family(&samples[j], &samples[i]))
				put_sample(&t, &samples[j]);
	}
	return t.len;
}

/* The counters that are levels, not counts (counters.h says so in their descriptions), and
 * the gauges they become, times in seconds as Prometheus measures time. */
static const struct {
	const char *counter;
	const char *gauge;
	const char *help;
	bool micro; /* microseconds, shown in seconds */
} levels[] = {
    {"phase1_timeout_us", "phase1_timeout_seconds", "phase 1 timeout now, seconds", true},
    {"phase2_timeout_us", "phase2_timeout_seconds", "phase 2 timeout now, seconds", true},
    {"phase2_window", "phase2_window", "instances phase 2 may hold at once now", false},
    {"membership_configuration", "membership_configuration",
     "the newest acceptor configuration chosen (1: paxos.conf's)", false},
    {"membership_members", "membership_members", "its acceptors, one bit per id", false},
    {"membership_proposers", "membership_proposers", "its proposers, one bit per id", false},
};

#define COUNTER_HELP(name, text) text,
static const char *const counter_help[] = {PAXOS_COUNTER_LIST(COUNTER_HELP)};
#undef COUNTER_HELP

size_t paxos_counter_samples(const struct paxos_counters *c, const char *role, uint32_t id,
			     struct paxos_sample *out)
{
	size_t n = paxos_counter_count();
	for (size_t i = 0; i < n; i++) {
		out[i] = (struct paxos_sample){.name = paxos_counter_name(i),
					       .help = counter_help[i],
					       .type = PAXOS_METRIC_COUNTER,
					       .role = role,
					       .id = id,
					       .value = paxos_counter_value(c, i)};
		for (size_t k = 0; k < sizeof(levels) / sizeof(levels[0]); k++)
			if (strcmp(out[i].name, levels[k].counter) == 0) {
				out[i].name = levels[k].gauge;
				out[i].help = levels[k].help;
				out[i].type = PAXOS_METRIC_GAUGE;
				out[i].micro = levels[k].micro;
			}
	}
	return n;
}
