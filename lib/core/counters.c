/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counter reports. Both formats walk PAXOS_COUNTER_LIST, so a new counter shows up in them
 * without touching this file.
 *
 * Truncation: like snprintf, the output is always NUL-terminated when cap > 0 and never
 * written when cap == 0. Unlike snprintf, both functions return the length actually written
 * (strlen(buf), at most cap - 1), not the length the full report would have had: callers
 * hand the result straight to write(2).
 */
#include <paxos/counters.h>

#include <stddef.h>
#include <string.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

/* A bounded string being appended to; len stops at cap - 1. */
struct out {
	char *buf;
	size_t cap;
	size_t len;
};

static void out_init(struct out *o, char *buf, size_t cap)
{
	o->buf = buf;
	o->cap = buf ? cap : 0;
	o->len = 0;
	if (o->cap > 0)
		o->buf[0] = '\0';
}

static void out_printf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out_printf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->cap == 0 || o->len + 1 >= o->cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	o->len += (size_t)n;
	if (o->len > o->cap - 1)
		o->len = o->cap - 1;
}

/* A JSON string body: quotes, backslashes and control characters escaped. */
static void out_json_string(struct out *o, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			out_printf(o, "\\%c", c);
		else if (c < 0x20)
			out_printf(o, "\\u%04x", c);
		else
			out_printf(o, "%c", c);
	}
}

size_t paxos_counters_format(const struct paxos_counters *c, char *buf, size_t cap)
{
	struct out o;
	const char *sep = "";

	out_init(&o, buf, cap);
#define PAXOS_COUNTER_TEXT(name, text)                                                             \
	if (c->name != 0) {                                                                        \
		out_printf(&o, "%s%s=%" PRIu64, sep, #name, c->name);                              \
		sep = " ";                                                                         \
	}
	PAXOS_COUNTER_LIST(PAXOS_COUNTER_TEXT)
#undef PAXOS_COUNTER_TEXT
	return o.len;
}

size_t paxos_counters_json(const struct paxos_counters *c, const char *role, uint32_t id, char *buf,
			   size_t cap)
{
	struct out o;

	out_init(&o, buf, cap);
	out_printf(&o, "{\"role\":\"");
	out_json_string(&o, role ? role : "");
	out_printf(&o, "\",\"id\":%" PRIu32, id);
#define PAXOS_COUNTER_JSON(name, text) out_printf(&o, ",\"%s\":%" PRIu64, #name, c->name);
	PAXOS_COUNTER_LIST(PAXOS_COUNTER_JSON)
#undef PAXOS_COUNTER_JSON
	out_printf(&o, "}");
	return o.len;
}

#define PAXOS_COUNTER_NAME(name, text) #name,
static const char *const counter_names[] = {PAXOS_COUNTER_LIST(PAXOS_COUNTER_NAME)};
#undef PAXOS_COUNTER_NAME
#define PAXOS_COUNTER_OFFSET(name, text) offsetof(struct paxos_counters, name),
static const size_t counter_offsets[] = {PAXOS_COUNTER_LIST(PAXOS_COUNTER_OFFSET)};
#undef PAXOS_COUNTER_OFFSET
#define COUNTERS (sizeof(counter_names) / sizeof(counter_names[0]))

size_t paxos_counter_count(void)
{
	return COUNTERS;
}

const char *paxos_counter_name(size_t i)
{
	return i < COUNTERS ? counter_names[i] : NULL;
}

uint64_t paxos_counter_value(const struct paxos_counters *c, size_t i)
{
	if (!c || i >= COUNTERS)
		return 0;
	uint64_t v;
	memcpy(&v, (const char *)c + counter_offsets[i], sizeof(v));
	return v;
}

int paxos_counter_get(const struct paxos_counters *c, const char *name, uint64_t *value)
{
	if (!c || !name || !value)
		return PAXOS_E_INVALID;
	for (size_t i = 0; i < COUNTERS; i++)
		if (strcmp(counter_names[i], name) == 0) {
			*value = paxos_counter_value(c, i);
			return PAXOS_OK;
		}
	return PAXOS_E_INVALID;
}
