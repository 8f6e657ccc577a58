/*
 * paxos.conf parser. Every key is one row of a table (type, range, field, default), so
 * adding a key means adding a row. The parser reads a length-bounded buffer (it never looks
 * for a terminating NUL) and stops at the first error, leaving the caller's configuration
 * untouched.
 */
#include <paxos/config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <paxos/acceptor.h>

#include "codec.h"

#define CONFIG_MAX_LINE 1024
/* Longest piece of a bad value quoted back in an error message. */
#define CONFIG_QUOTE_MAX 64

enum key_type {
	KEY_U32,           /* decimal number in [min, max] */
	KEY_GROUP,         /* IPv4 multicast ADDRESS:PORT */
	KEY_IPV4,          /* IPv4 address */
	KEY_LEARNER_START, /* one of learner_start_names */
	KEY_STORAGE,       /* one of storage_backends */
};

struct config_key {
	const char *name;
	enum key_type type;
	size_t offset; /* of the field in struct paxos_config */
	uint32_t min, max;
	const char *default_text; /* parsed like a value from the file */
};

#define FIELD(f) offsetof(struct paxos_config, f)

static const struct config_key config_keys[] = {
    {"acceptors-group", KEY_GROUP, FIELD(groups[PAXOS_GROUP_ACCEPTORS]), 0, 0, "239.255.11.1:7101"},
    {"proposers-group", KEY_GROUP, FIELD(groups[PAXOS_GROUP_PROPOSERS]), 0, 0, "239.255.11.2:7102"},
    {"learners-group", KEY_GROUP, FIELD(groups[PAXOS_GROUP_LEARNERS]), 0, 0, "239.255.11.3:7103"},
    {"submit-group", KEY_GROUP, FIELD(groups[PAXOS_GROUP_SUBMIT]), 0, 0, "239.255.11.4:7104"},
    {"multicast-interface", KEY_IPV4, FIELD(multicast_interface), 0, 0, "127.0.0.1"},
    {"multicast-ttl", KEY_U32, FIELD(multicast_ttl), 0, 255, "0"},
    {"max-datagram", KEY_U32, FIELD(max_datagram), 512, 65507, "8192"},
    {"socket-buffer", KEY_U32, FIELD(socket_buffer), 65536, 268435456, "4194304"},
    {"acceptors", KEY_U32, FIELD(acceptors), 1, PAXOS_MAX_ACCEPTORS, "3"},
    {"proposers", KEY_U32, FIELD(proposers), 1, PAXOS_MAX_PROPOSERS, "2"},
    /* The upper bound depends on proposers: checked once the whole file is read. */
    {"leader", KEY_U32, FIELD(leader), 0, PAXOS_MAX_PROPOSERS - 1, "0"},
    {"proposer-window", KEY_U32, FIELD(proposer_window), 1, 65536, "128"},
    {"proposer-concurrency", KEY_U32, FIELD(proposer_concurrency), 1, 65536, "64"},
    {"pending-list-size", KEY_U32, FIELD(pending_size), 1, 1048576, "4096"},
    {"phase1-timeout-ms", KEY_U32, FIELD(phase1_timeout_ms), 1, 600000, "20"},
    {"phase2-timeout-ms", KEY_U32, FIELD(phase2_timeout_ms), 1, 600000, "20"},
    {"learner-window", KEY_U32, FIELD(learner_window), 16, 1048576, "4096"},
    {"learner-hole-check-ms", KEY_U32, FIELD(hole_check_ms), 1, 600000, "20"},
    {"learner-repeat-batch", KEY_U32, FIELD(repeat_batch), 1, PAXOS_ACCEPTOR_MAX_REPEAT, "256"},
    {"learner-start", KEY_LEARNER_START, FIELD(learner_start), 0, 0, "first"},
    {"acceptor-repeat-ms", KEY_U32, FIELD(acceptor_repeat_ms), 1, 600000, "100"},
    {"counters-interval-ms", KEY_U32, FIELD(counters_interval_ms), 0, 3600000, "1000"},
    {"storage", KEY_STORAGE, FIELD(storage), 0, 0, "memory"},
};

#define CONFIG_KEY_COUNT (sizeof(config_keys) / sizeof(config_keys[0]))

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Indexed by enum paxos_learner_start. */
static const char *const learner_start_names[] = {"first", "current"};
/* Backends paxos_storage can open; errors list them. */
static const char *const storage_backends[] = {"memory"};

/* What a parse is doing: the configuration being built and where each key was set. */
struct config_parse {
	struct paxos_config cfg;
	unsigned set_on_line[CONFIG_KEY_COUNT]; /* 0: not set in the file */
	const char *name;
	unsigned line;
	char *err;
	size_t errlen;
};

static void set_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Writes "NAME:LINE: " followed by the key's name (when key is given) and the message. */
static int parse_error(struct config_parse *p, unsigned line, const struct config_key *key,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int parse_error(struct config_parse *p, unsigned line, const struct config_key *key,
		       const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (key)
		set_error(p->err, p->errlen, "%s:%u: %s: %s", p->name, line, key->name, msg);
	else
		set_error(p->err, p->errlen, "%s:%u: %s", p->name, line, msg);
	return PAXOS_E_CONFIG;
}

/* Decimal digits only; false on anything else or on overflow of 64 bits. */
static bool parse_decimal(const char *s, uint64_t *out, bool *overflow)
{
	uint64_t v = 0;

	*overflow = false;
	if (*s == '\0')
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		unsigned digit = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - digit) / 10)
			*overflow = true;
		else
			v = v * 10 + digit;
	}
	*out = v;
	return true;
}

/* Parses a number in [min, max]; what names the thing for the error ("port 0 is ..."). */
static int parse_u32(struct config_parse *p, const struct config_key *key, const char *what,
		     const char *text, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v = 0;
	bool overflow;

	if (!parse_decimal(text, &v, &overflow))
		return parse_error(p, p->line, key, "%s'%.*s' is not a decimal number", what,
				   CONFIG_QUOTE_MAX, text);
	if (overflow || v < min || v > max)
		return parse_error(p, p->line, key, "%s%.*s is out of range %u..%u", what,
				   CONFIG_QUOTE_MAX, text, min, max);
	*out = (uint32_t)v;
	return PAXOS_OK;
}

static bool parse_ipv4(const char *text, struct in_addr *out)
{
	/* inet_pton accepts only the four-part dotted form, no shorthands. */
	return strlen(text) < INET_ADDRSTRLEN && inet_pton(AF_INET, text, out) == 1;
}

static int parse_group(struct config_parse *p, const struct config_key *key, const char *text,
		       struct paxos_endpoint *out)
{
	const char *colon = strrchr(text, ':');
	char addr_text[INET_ADDRSTRLEN];
	struct in_addr addr;
	uint32_t port;
	size_t addr_len;

	if (!colon || colon == text || colon[1] == '\0')
		return parse_error(p, p->line, key, "'%.*s' is not ADDRESS:PORT", CONFIG_QUOTE_MAX,
				   text);
	addr_len = (size_t)(colon - text);
	if (addr_len >= sizeof(addr_text))
		return parse_error(p, p->line, key, "'%.*s' is not an IPv4 address",
				   CONFIG_QUOTE_MAX, text);
	memcpy(addr_text, text, addr_len);
	addr_text[addr_len] = '\0';
	if (!parse_ipv4(addr_text, &addr))
		return parse_error(p, p->line, key, "'%s' is not an IPv4 address", addr_text);
	if (!IN_MULTICAST(ntohl(addr.s_addr)))
		return parse_error(p, p->line, key,
				   "%s is not an IPv4 multicast address (224.0.0.0/4)", addr_text);
	int rc = parse_u32(p, key, "port ", colon + 1, 1, 65535, &port);
	if (rc != PAXOS_OK)
		return rc;
	out->addr = addr;
	out->port = (uint16_t)port;
	return PAXOS_OK;
}

/* Index of text in names[0..count), or -1. */
static int find_name(const char *const *names, size_t count, const char *text)
{
	for (size_t i = 0; i < count; i++)
		if (strcmp(names[i], text) == 0)
			return (int)i;
	return -1;
}

/* "a, b, c" into buf. */
static void join_names(const char *const *names, size_t count, char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < count && len < cap; i++) {
		int n = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", names[i]);
		if (n < 0)
			break;
		len += (size_t)n;
	}
}

/* Sets key's field from text; the only place that knows how each type is stored. */
static int apply_value(struct config_parse *p, const struct config_key *key, const char *text)
{
	char *field = (char *)&p->cfg + key->offset;
	char names[128];
	int i;

	switch (key->type) {
	case KEY_U32:
		return parse_u32(p, key, "", text, key->min, key->max, (uint32_t *)(void *)field);
	case KEY_GROUP:
		return parse_group(p, key, text, (struct paxos_endpoint *)(void *)field);
	case KEY_IPV4:
		if (!parse_ipv4(text, (struct in_addr *)(void *)field))
			return parse_error(p, p->line, key, "'%.*s' is not an IPv4 address",
					   CONFIG_QUOTE_MAX, text);
		return PAXOS_OK;
	case KEY_LEARNER_START:
		i = find_name(learner_start_names, COUNT_OF(learner_start_names), text);
		if (i < 0)
			return parse_error(p, p->line, key, "'%.*s' is not first or current",
					   CONFIG_QUOTE_MAX, text);
		*(enum paxos_learner_start *)(void *)field = (enum paxos_learner_start)i;
		return PAXOS_OK;
	case KEY_STORAGE:
		i = find_name(storage_backends, COUNT_OF(storage_backends), text);
		if (i < 0) {
			join_names(storage_backends, COUNT_OF(storage_backends), names,
				   sizeof(names));
			return parse_error(p, p->line, key,
					   "unknown backend '%.*s' (available: %s)",
					   CONFIG_QUOTE_MAX, text, names);
		}
		snprintf(field, sizeof(p->cfg.storage), "%s", storage_backends[i]);
		return PAXOS_OK;
	}
	return parse_error(p, p->line, key, "internal error: unknown key type");
}

/* What a key's value looks like, for "missing value" errors. */
static void describe_expected(const struct config_key *key, char *buf, size_t cap)
{
	char names[128];

	switch (key->type) {
	case KEY_U32:
		snprintf(buf, cap, "a number in %u..%u", key->min, key->max);
		return;
	case KEY_GROUP:
		snprintf(buf, cap, "a multicast ADDRESS:PORT");
		return;
	case KEY_IPV4:
		snprintf(buf, cap, "an IPv4 address");
		return;
	case KEY_LEARNER_START:
		snprintf(buf, cap, "first or current");
		return;
	case KEY_STORAGE:
		join_names(storage_backends, COUNT_OF(storage_backends), names, sizeof(names));
		snprintf(buf, cap, "a storage backend: %s", names);
		return;
	}
	snprintf(buf, cap, "a value");
}

static const struct config_key *find_key(const char *name)
{
	for (size_t i = 0; i < CONFIG_KEY_COUNT; i++)
		if (strcmp(config_keys[i].name, name) == 0)
			return &config_keys[i];
	return NULL;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Splits a NUL-terminated line (comment already cut) into at most max tokens in place. */
static size_t split_tokens(char *s, char **tokens, size_t max)
{
	size_t n = 0;

	for (;;) {
		while (is_blank(*s))
			s++;
		if (*s == '\0')
			return n;
		if (n == max)
			return n + 1; /* more than max: the caller only needs to know that */
		tokens[n++] = s;
		while (*s && !is_blank(*s))
			s++;
		if (*s)
			*s++ = '\0';
	}
}

static int parse_line(struct config_parse *p, const char *line, size_t len)
{
	char buf[CONFIG_MAX_LINE + 1];
	char *tokens[3];
	char expected[192];
	char *hash;
	size_t n;

	if (len > CONFIG_MAX_LINE)
		return parse_error(p, p->line, NULL, "line is longer than %d characters",
				   CONFIG_MAX_LINE);
	if (memchr(line, '\0', len))
		return parse_error(p, p->line, NULL, "line contains a NUL byte");
	memcpy(buf, line, len);
	buf[len] = '\0';
	hash = strchr(buf, '#');
	if (hash)
		*hash = '\0';

	n = split_tokens(buf, tokens, 3);
	if (n == 0)
		return PAXOS_OK;
	const struct config_key *key = find_key(tokens[0]);
	if (!key)
		return parse_error(p, p->line, NULL, "unknown key '%.*s'", CONFIG_QUOTE_MAX,
				   tokens[0]);
	size_t k = (size_t)(key - config_keys);
	if (p->set_on_line[k])
		return parse_error(p, p->line, key, "already set on line %u", p->set_on_line[k]);
	if (n == 1) {
		describe_expected(key, expected, sizeof(expected));
		return parse_error(p, p->line, key, "missing value (expected %s)", expected);
	}
	if (n > 2)
		return parse_error(p, p->line, key, "unexpected '%.*s' after the value",
				   CONFIG_QUOTE_MAX, tokens[2]);
	int rc = apply_value(p, key, tokens[1]);
	if (rc != PAXOS_OK)
		return rc;
	p->set_on_line[k] = p->line;
	return PAXOS_OK;
}

/* Line where the later of two keys was set (the one that made them conflict); 0 if neither. */
static unsigned later_line(const struct config_parse *p, const char *a, const char *b)
{
	unsigned la = p->set_on_line[find_key(a) - config_keys];
	unsigned lb = p->set_on_line[find_key(b) - config_keys];
	return la > lb ? la : lb;
}

static const struct config_key *group_key(size_t group)
{
	size_t offset = FIELD(groups) + group * sizeof(struct paxos_endpoint);

	for (size_t i = 0; i < CONFIG_KEY_COUNT; i++)
		if (config_keys[i].type == KEY_GROUP && config_keys[i].offset == offset)
			return &config_keys[i];
	return NULL; /* unreachable: every group has a row */
}

/* Rules that involve more than one key, checked once the whole file is read. */
static int check_cross(struct config_parse *p)
{
	const struct paxos_config *c = &p->cfg;

	if (c->leader >= c->proposers)
		return parse_error(p, later_line(p, "leader", "proposers"), find_key("leader"),
				   "%u must be less than proposers (%u)", c->leader, c->proposers);
	if (c->proposer_concurrency > c->proposer_window)
		return parse_error(p, later_line(p, "proposer-concurrency", "proposer-window"),
				   find_key("proposer-concurrency"),
				   "%u must not exceed proposer-window (%u)",
				   c->proposer_concurrency, c->proposer_window);
	for (size_t i = 0; i < PAXOS_GROUP_COUNT; i++) {
		for (size_t j = 0; j < i; j++) {
			const struct paxos_endpoint *a = &c->groups[i], *b = &c->groups[j];
			if (a->addr.s_addr != b->addr.s_addr || a->port != b->port)
				continue;
			char addr[INET_ADDRSTRLEN];
			inet_ntop(AF_INET, &a->addr, addr, sizeof(addr));
			const struct config_key *ki = group_key(i), *kj = group_key(j);
			unsigned line = later_line(p, ki->name, kj->name);
			return parse_error(p, line, ki, "%s:%u is also used by %s", addr, a->port,
					   kj->name);
		}
	}
	return PAXOS_OK;
}

static void parse_init(struct config_parse *p, const char *name, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->name = name ? name : "(config)";
	p->err = err;
	p->errlen = errlen;
}

void paxos_config_defaults(struct paxos_config *cfg)
{
	struct config_parse p;

	parse_init(&p, "(defaults)", NULL, 0);
	for (size_t i = 0; i < CONFIG_KEY_COUNT; i++)
		apply_value(&p, &config_keys[i], config_keys[i].default_text);
	*cfg = p.cfg;
}

int paxos_config_parse(struct paxos_config *cfg, const char *text, size_t len, const char *name,
		       char *err, size_t errlen)
{
	struct config_parse p;
	size_t pos = 0;
	int rc;

	if (!cfg || (!text && len > 0)) {
		set_error(err, errlen, "%s: invalid arguments", name ? name : "(config)");
		return PAXOS_E_INVALID;
	}
	parse_init(&p, name, err, errlen);
	paxos_config_defaults(&p.cfg);
	while (pos < len) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t line_len = nl ? (size_t)(nl - line) : len - pos;

		p.line++;
		rc = parse_line(&p, line, line_len);
		if (rc != PAXOS_OK)
			return rc;
		pos += line_len + (nl ? 1 : 0);
	}
	rc = check_cross(&p);
	if (rc != PAXOS_OK)
		return rc;
	*cfg = p.cfg;
	set_error(err, errlen, "%s", "");
	return PAXOS_OK;
}

int paxos_config_load(struct paxos_config *cfg, const char *path, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0, cap = 0;
	FILE *f;
	int rc;

	if (!cfg || !path) {
		set_error(err, errlen, "invalid arguments");
		return PAXOS_E_INVALID;
	}
	f = fopen(path, "rb");
	if (!f) {
		set_error(err, errlen, "%s: %s", path, strerror(errno));
		return PAXOS_E_IO;
	}
	for (;;) {
		if (len == cap) {
			size_t new_cap = cap ? cap * 2 : 4096;
			char *grown = realloc(text, new_cap);
			if (!grown) {
				free(text);
				fclose(f);
				set_error(err, errlen, "%s: %s", path, strerror(ENOMEM));
				return PAXOS_E_NOMEM;
			}
			text = grown;
			cap = new_cap;
		}
		size_t got = fread(text + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		int saved = errno;
		free(text);
		fclose(f);
		set_error(err, errlen, "%s: %s", path, strerror(saved ? saved : EIO));
		return PAXOS_E_IO;
	}
	fclose(f);
	rc = paxos_config_parse(cfg, text, len, path, err, errlen);
	free(text);
	return rc;
}

uint32_t paxos_config_max_value(const struct paxos_config *cfg)
{
	if (cfg->max_datagram <= PAXOS_WIRE_OVERHEAD)
		return 0;
	return cfg->max_datagram - PAXOS_WIRE_OVERHEAD;
}
