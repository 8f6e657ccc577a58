/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos.conf parser. Every key is one row of a table (type, range, field, default:
 * config_keys.c), so adding a key means adding a row. The parser reads a length-bounded buffer (it
 * never looks for a terminating NUL) and stops at the first error, leaving the caller's
 * configuration untouched.
 */
#include <paxos/storage_backends.h>
#include <paxos/options.h>
#include <paxos/config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <paxos/acceptor.h>
#include <paxos/learner.h>
#include <paxos/proposer.h>
#include <paxos/storage.h>

#include "error.h"
#include "batch.h"
#include "auth.h"
#include "codec.h"
#include "config_fields.h"
#include "config_keys.h"

#define CONFIG_MAX_LINE 1024
/* The largest configuration file read: far above any real one (paxos.conf is ~5 kB). */
#define CONFIG_MAX_FILE (1024u * 1024u)
/* Longest piece of a bad value quoted back in an error message. */
#define CONFIG_QUOTE_MAX 64

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* What a parse is doing: the configuration being built and where each key was set. */
struct config_parse {
	struct paxos_config cfg;
	unsigned set_on_line[CONFIG_KEYS_MAX]; /* 0: not set in the file (member keys: first) */
	unsigned acceptor_line[PAXOS_MAX_ACCEPTORS]; /* where "acceptor ID" was set, 0: not */
	unsigned proposer_line[PAXOS_MAX_PROPOSERS];
	const char *name; /* NULL: errors name no file and line (paxos_config_set) */
	unsigned line;
	char *err;
	size_t errlen;
};

/* Writes "NAME:LINE: " followed by the key's name (when key is given) and the message. */
static int parse_error(struct config_parse *p, unsigned line, const struct config_key *key,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int parse_error(struct config_parse *p, unsigned line, const struct config_key *key,
		       const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!p->name)
		paxos_error_format(p->err, p->errlen, "%s%s%s", key ? key->name : "",
				   key ? ": " : "", msg);
	else if (key)
		paxos_error_format(p->err, p->errlen, "%s:%u: %s: %s", p->name, line, key->name,
				   msg);
	else
		paxos_error_format(p->err, p->errlen, "%s:%u: %s", p->name, line, msg);
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
static int parse_u64(struct config_parse *p, const struct config_key *key, const char *what,
		     const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	bool overflow;

	if (!parse_decimal(text, &v, &overflow))
		return parse_error(p, p->line, key, "%s'%.*s' is not a decimal number", what,
				   CONFIG_QUOTE_MAX, text);
	if (overflow || v < min || v > max)
		return parse_error(p, p->line, key, "%s%.*s is out of range %llu..%llu", what,
				   CONFIG_QUOTE_MAX, text, (unsigned long long)min,
				   (unsigned long long)max);
	*out = v;
	return PAXOS_OK;
}

static int parse_u32(struct config_parse *p, const struct config_key *key, const char *what,
		     const char *text, uint64_t min, uint64_t max, uint32_t *out)
{
	uint64_t v;
	int rc = parse_u64(p, key, what, text, min, max > UINT32_MAX ? UINT32_MAX : max, &v);
	if (rc == PAXOS_OK)
		*out = (uint32_t)v;
	return rc;
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

/* An address of this host to listen on: a dotted IPv4 address (0.0.0.0: all of them), not a
 * group or broadcast address, and a port. */
static int parse_listen(struct config_parse *p, const struct config_key *key, const char *text,
			struct paxos_endpoint *out)
{
	const char *colon = strrchr(text, ':');
	char addr_text[INET_ADDRSTRLEN];
	struct in_addr addr;
	uint32_t port;
	size_t addr_len = colon ? (size_t)(colon - text) : 0;

	if (!colon || colon == text || colon[1] == '\0')
		return parse_error(p, p->line, key, "'%.*s' is not ADDRESS:PORT", CONFIG_QUOTE_MAX,
				   text);
	if (addr_len >= sizeof(addr_text))
		return parse_error(p, p->line, key, "'%.*s' is not an IPv4 address",
				   CONFIG_QUOTE_MAX, text);
	memcpy(addr_text, text, addr_len);
	addr_text[addr_len] = '\0';
	if (!parse_ipv4(addr_text, &addr))
		return parse_error(p, p->line, key, "'%s' is not an IPv4 address", addr_text);
	uint32_t a = ntohl(addr.s_addr);
	if (IN_MULTICAST(a) || a == INADDR_BROADCAST)
		return parse_error(p, p->line, key,
				   "%s is not an address to listen on (a local address, or "
				   "0.0.0.0 for all)",
				   addr_text);
	int rc = parse_u32(p, key, "port ", colon + 1, 1, 65535, &port);
	if (rc != PAXOS_OK)
		return rc;
	out->addr = addr;
	out->port = (uint16_t)port;
	return PAXOS_OK;
}

/* A member's host: a dotted IPv4 address of its own (no name: parsing never waits on DNS). */
static int parse_host(struct config_parse *p, const struct config_key *key, const char *text,
		      struct in_addr *out)
{
	if (!parse_ipv4(text, out))
		return parse_error(p, p->line, key, "'%.*s' is not an IPv4 address",
				   CONFIG_QUOTE_MAX, text);
	uint32_t a = ntohl(out->s_addr);
	if (IN_MULTICAST(a) || a == INADDR_ANY || a == INADDR_BROADCAST)
		return parse_error(p, p->line, key,
				   "%.*s is not a unicast address (a member needs its own address)",
				   CONFIG_QUOTE_MAX, text);
	return PAXOS_OK;
}

/* "acceptor 0 10.0.0.1:7201" (or "... 10.0.0.1 7201", as libpaxos3 wrote it): tokens after the
 * key. Each id once; the ids are checked against the counts once the file is read. */
static int parse_member(struct config_parse *p, const struct config_key *key, char **tokens,
			size_t n)
{
	bool is_acceptor = key->offset == FIELD(acceptor_address);
	uint32_t id;
	if (n < 2 || n > 3)
		return parse_error(p, p->line, key,
				   n < 2 ? "missing address (expected '%s ID HOST:PORT')"
					 : "unexpected text after the address (expected '%s ID "
					   "HOST:PORT')",
				   key->name);
	int rc = parse_u32(p, key, "id ", tokens[0], key->min, key->max, &id);
	if (rc != PAXOS_OK)
		return rc;
	unsigned *line = is_acceptor ? &p->acceptor_line[id] : &p->proposer_line[id];
	if (*line)
		return parse_error(p, p->line, key, "%u already has an address, on line %u", id,
				   *line);
	char host[256];
	const char *port_text;
	if (n == 3) {
		snprintf(host, sizeof(host), "%s", tokens[1]);
		port_text = tokens[2];
	} else {
		const char *colon = strrchr(tokens[1], ':');
		if (!colon || colon == tokens[1] || colon[1] == '\0')
			return parse_error(p, p->line, key, "'%.*s' is not HOST:PORT",
					   CONFIG_QUOTE_MAX, tokens[1]);
		size_t len = (size_t)(colon - tokens[1]);
		if (len >= sizeof(host))
			return parse_error(p, p->line, key, "host name is too long");
		memcpy(host, tokens[1], len);
		host[len] = '\0';
		port_text = colon + 1;
	}
	struct paxos_endpoint *out =
	    is_acceptor ? &p->cfg.acceptor_address[id] : &p->cfg.proposer_address[id];
	uint32_t port;
	if ((rc = parse_host(p, key, host, &out->addr)) != PAXOS_OK ||
	    (rc = parse_u32(p, key, "port ", port_text, 1, 65535, &port)) != PAXOS_OK)
		return rc;
	out->port = (uint16_t)port;
	*line = p->line;
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

/* The durability mode called text (the storage layer names them), or -1. */
static int find_durability(const char *text)
{
	for (int m = 0; m < PAXOS_DURABILITY_COUNT; m++)
		if (strcmp(paxos_durability_name((enum paxos_durability)m), text) == 0)
			return m;
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

static size_t name_count(const char *const *names)
{
	size_t n = 0;
	while (names[n])
		n++;
	return n;
}

/* "a, b or c" into buf: the values an enum key takes. */
static void either_names(const char *const *names, char *buf, size_t cap)
{
	size_t count = name_count(names), len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < count && len < cap; i++) {
		int n = snprintf(buf + len, cap - len, "%s%s",
				 i == 0          ? ""
				 : i + 1 < count ? ", "
						 : " or ",
				 names[i]);
		if (n < 0)
			break;
		len += (size_t)n;
	}
}

/* "memory, lmdb, bdb" into buf. */
static void join_backends(char *buf, size_t cap)
{
	const char *names[CONFIG_BACKEND_COUNT];

	for (size_t i = 0; i < CONFIG_BACKEND_COUNT; i++)
		names[i] = config_storage_backends[i].name;
	join_names(names, COUNT_OF(names), buf, cap);
}

/* The names of the modes in the bit set, "nosync, sync", into buf. */
static void join_modes(unsigned modes, char *buf, size_t cap)
{
	const char *names[PAXOS_DURABILITY_COUNT];
	size_t n = 0;

	for (int m = PAXOS_DURABILITY_UNSET + 1; m < PAXOS_DURABILITY_COUNT; m++)
		if (modes & (1u << m))
			names[n++] = paxos_durability_name((enum paxos_durability)m);
	join_names(names, n, buf, cap);
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
	case KEY_ENUM:
		i = find_name(key->names, name_count(key->names), text);
		if (i < 0) {
			either_names(key->names, names, sizeof(names));
			return parse_error(p, p->line, key, "'%.*s' is not %s", CONFIG_QUOTE_MAX,
					   text, names);
		}
		*(int *)(void *)field = i;
		return PAXOS_OK;
	case KEY_MEMBER: /* parse_member takes the whole line */
		break;
	case KEY_LISTEN:
		return parse_listen(p, key, text, (struct paxos_endpoint *)(void *)field);
	case KEY_STORAGE:
		if (!config_find_backend(text)) {
			join_backends(names, sizeof(names));
			return parse_error(p, p->line, key,
					   "unknown backend '%.*s' (available: %s)",
					   CONFIG_QUOTE_MAX, text, names);
		}
		snprintf(field, sizeof(p->cfg.storage), "%s", text);
		return PAXOS_OK;
	case KEY_U64:
		return parse_u64(p, key, "", text, key->min, key->max, (uint64_t *)(void *)field);
	case KEY_PATH:
	case KEY_FILE:
		if (strlen(text) > PAXOS_PATH_MAX)
			return parse_error(p, p->line, key, "path is longer than %d characters",
					   PAXOS_PATH_MAX);
		snprintf(field, PAXOS_PATH_MAX + 1, "%s", text);
		return PAXOS_OK;
	case KEY_DURABILITY:
		i = find_durability(text);
		if (i <= PAXOS_DURABILITY_UNSET) {
			join_modes(~0u, names, sizeof(names));
			return parse_error(p, p->line, key, "'%.*s' is not a durability mode (%s)",
					   CONFIG_QUOTE_MAX, text, names);
		}
		*(enum paxos_durability *)(void *)field = (enum paxos_durability)i;
		return PAXOS_OK;
	case KEY_PARTSET:
		if (strlen(text) > PAXOS_PARTITION_ACCEPTORS_MAX)
			return parse_error(p, p->line, key, "longer than %d characters",
					   PAXOS_PARTITION_ACCEPTORS_MAX);
		snprintf(field, PAXOS_PARTITION_ACCEPTORS_MAX + 1, "%s", text);
		return PAXOS_OK;
	case KEY_BOOL:
		i = find_name(config_bool_names, 2, text);
		if (i < 0)
			return parse_error(p, p->line, key, "'%.*s' is not yes or no",
					   CONFIG_QUOTE_MAX, text);
		*(bool *)(void *)field = i == 1;
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
	case KEY_U64:
		snprintf(buf, cap, "a number in %llu..%llu", (unsigned long long)key->min,
			 (unsigned long long)key->max);
		return;
	case KEY_GROUP:
		snprintf(buf, cap, "a multicast ADDRESS:PORT");
		return;
	case KEY_IPV4:
		snprintf(buf, cap, "an IPv4 address");
		return;
	case KEY_ENUM:
		either_names(key->names, buf, cap);
		return;
	case KEY_MEMBER:
		snprintf(buf, cap, "ID HOST:PORT");
		return;
	case KEY_LISTEN:
		snprintf(buf, cap, "an IPv4 ADDRESS:PORT to listen on");
		return;
	case KEY_STORAGE:
		join_backends(names, sizeof(names));
		snprintf(buf, cap, "a storage backend: %s", names);
		return;
	case KEY_PATH:
		snprintf(buf, cap, "a directory");
		return;
	case KEY_FILE:
		snprintf(buf, cap, "a file");
		return;
	case KEY_DURABILITY:
		join_modes(~0u, names, sizeof(names));
		snprintf(buf, cap, "a durability mode: %s", names);
		return;
	case KEY_BOOL:
		snprintf(buf, cap, "yes or no");
		return;
	case KEY_PARTSET:
		snprintf(buf, cap,
			 "all, spread, or one set of acceptor ids per partition such as "
			 "0-2/3-5");
		return;
	}
	snprintf(buf, cap, "a value");
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
	char *tokens[4];
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

	n = split_tokens(buf, tokens, 4);
	if (n == 0)
		return PAXOS_OK;
	const struct config_key *key = config_find_key(tokens[0]);
	if (!key)
		return parse_error(p, p->line, NULL, "unknown key '%.*s'", CONFIG_QUOTE_MAX,
				   tokens[0]);
	size_t k = (size_t)(key - config_keys);
	if (key->type == KEY_MEMBER) {
		int rc = parse_member(p, key, tokens + 1, n - 1);
		if (rc == PAXOS_OK && !p->set_on_line[k])
			p->set_on_line[k] = p->line;
		return rc;
	}
	if (p->set_on_line[k])
		return parse_error(p, p->line, key, "already set on line %u", p->set_on_line[k]);
	if (n == 1) {
		describe_expected(key, expected, sizeof(expected));
		return parse_error(p, p->line, key, "missing value (expected %s)", expected);
	}
	if (n > 2)
		return parse_error(p, p->line, key, "unexpected '%.*s' after the value",
				   CONFIG_QUOTE_MAX, n > 3 ? "..." : tokens[2]);
	int rc = apply_value(p, key, tokens[1]);
	if (rc != PAXOS_OK)
		return rc;
	p->set_on_line[k] = p->line;
	return PAXOS_OK;
}

/* Line where the later of two keys was set (the one that made them conflict); 0 if neither. */
static unsigned later_line(const struct config_parse *p, const char *a, const char *b)
{
	unsigned la = p->set_on_line[config_find_key(a) - config_keys];
	unsigned lb = p->set_on_line[config_find_key(b) - config_keys];
	return la > lb ? la : lb;
}

static const struct config_key *group_key(size_t group)
{
	size_t offset = FIELD(groups) + group * sizeof(struct paxos_endpoint);

	for (size_t i = 0; i < config_key_count; i++)
		if (config_keys[i].type == KEY_GROUP && config_keys[i].offset == offset)
			return &config_keys[i];
	return NULL; /* unreachable: every group has a row */
}

/* Gives an unset durability the backend's default; refuses a mode the backend lacks. */
static int resolve_durability(struct config_parse *p)
{
	struct paxos_config *c = &p->cfg;
	const struct storage_backend *b = config_find_backend(c->storage);
	char names[128];

	if (!b) /* unreachable: the storage key only takes listed names */
		return parse_error(p, p->line, config_find_key("storage"), "unknown backend");
	if (c->durability == PAXOS_DURABILITY_UNSET) {
		c->durability = b->default_mode;
		return PAXOS_OK;
	}
	if (b->modes & (1u << c->durability))
		return PAXOS_OK;
	join_modes(b->modes, names, sizeof(names));
	return parse_error(p, later_line(p, "durability", "storage"), config_find_key("durability"),
			   "'%s' is not valid for storage %s (valid: %s)",
			   paxos_durability_name(c->durability), b->name, names);
}

uint64_t paxos_config_memory_ceiling(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || page_size <= 0)
		return UINT64_MAX;
	return (uint64_t)pages * (uint64_t)page_size / 2;
}

static double gib(uint64_t bytes)
{
	return (double)bytes / (double)(1ull << 30);
}

/*
 * The learner's and the proposer's buffers are allocated whole when they start, and filled as
 * instances go by: limits whose product the machine cannot hold would fail there ("out of
 * memory"), or later with the OOM killer. Refused here instead, naming the keys and the size.
 */
static int check_memory(struct config_parse *p)
{
	const struct paxos_config *c = &p->cfg;
	uint64_t ceiling = paxos_config_memory_ceiling();
	struct paxos_learner_options lo;
	paxos_learner_options_from_config(&lo, c);
	uint64_t need = paxos_learner_memory(&lo);
	if (need > ceiling)
		return parse_error(
		    p, later_line(p, "learner-window", "max-datagram"),
		    config_find_key("learner-window"),
		    "%u instances x max-datagram %u bytes need %.1f GiB (%llu bytes) of "
		    "learner buffers, more than half this machine's memory (%.1f GiB); "
		    "lower learner-window or max-datagram",
		    c->learner_window, c->max_datagram, gib(need), (unsigned long long)need,
		    gib(ceiling));
	struct paxos_proposer_options po;
	paxos_proposer_options_from_config(&po, c, 0);
	need = paxos_proposer_memory(&po);
	if (need > ceiling) {
		unsigned line = later_line(p, "pending-list-size", "proposer-window");
		unsigned datagram = later_line(p, "max-datagram", "max-datagram");
		return parse_error(
		    p, line > datagram ? line : datagram, config_find_key("pending-list-size"),
		    "%u values and proposer-window %u x max-datagram %u bytes need %.1f "
		    "GiB (%llu bytes) of proposer buffers, more than half this machine's "
		    "memory (%.1f GiB); lower one of them",
		    c->pending_size, c->proposer_window, c->max_datagram, gib(need),
		    (unsigned long long)need, gib(ceiling));
	}
	return PAXOS_OK;
}

/* "acceptor 1" or "proposer 0" for the member i of all acceptors then all proposers. */
static const struct paxos_endpoint *member(const struct paxos_config *c, size_t i, char *name,
					   size_t cap)
{
	bool acceptor = i < PAXOS_MAX_ACCEPTORS;
	size_t id = acceptor ? i : i - PAXOS_MAX_ACCEPTORS;
	snprintf(name, cap, "%s %zu", acceptor ? "acceptor" : "proposer", id);
	return acceptor ? &c->acceptor_address[id] : &c->proposer_address[id];
}

static unsigned member_line(const struct config_parse *p, size_t i)
{
	return i < PAXOS_MAX_ACCEPTORS ? p->acceptor_line[i]
				       : p->proposer_line[i - PAXOS_MAX_ACCEPTORS];
}

/* Member addresses: known ids only, each address once, and with transport unicast one for
 * every acceptor and proposer (but acceptors added later, see below). */
static int check_members(struct config_parse *p)
{
	const struct paxos_config *c = &p->cfg;
	const size_t total = PAXOS_MAX_ACCEPTORS + PAXOS_MAX_PROPOSERS;
	const struct config_key *transport = config_find_key("transport");
	char name[32], other[32], addr[INET_ADDRSTRLEN];

	for (size_t i = 0; i < total; i++) {
		const struct paxos_endpoint *e = member(c, i, name, sizeof(name));
		bool acceptor = i < PAXOS_MAX_ACCEPTORS;
		size_t id = acceptor ? i : i - PAXOS_MAX_ACCEPTORS;
		uint32_t count = acceptor ? c->acceptors : c->proposers;
		if (e->port && id >= count)
			return parse_error(p, member_line(p, i),
					   config_find_key(acceptor ? "acceptor" : "proposer"),
					   "unknown id %zu: ids are below %s (%u)", id,
					   acceptor ? "acceptors" : "proposers", count);
		/* With membership-alpha, an acceptor that is no member at the start may have its
		 * address carried by the command that adds it (paxos-admin add-acceptor ID
		 * HOST:PORT) instead. */
		bool later = acceptor && c->membership_alpha && c->initial_members &&
			     id >= c->initial_members;
		if (!e->port && id < count && c->transport == PAXOS_TRANSPORT_UNICAST && !later)
			return parse_error(p, p->set_on_line[transport - config_keys], transport,
					   "unicast needs every member's address, and %s has none "
					   "(add a line '%s HOST:PORT')",
					   name, name);
		for (size_t j = 0; e->port && j < i; j++) {
			const struct paxos_endpoint *f = member(c, j, other, sizeof(other));
			if (f->port != e->port || f->addr.s_addr != e->addr.s_addr)
				continue;
			inet_ntop(AF_INET, &e->addr, addr, sizeof(addr));
			return parse_error(p, member_line(p, i),
					   config_find_key(acceptor ? "acceptor" : "proposer"),
					   "%s:%u of %s is also the address of %s", addr, e->port,
					   name, other);
		}
	}
	/* The unicast transport puts one byte before every datagram (lib/net/unicast.c). */
	if (c->transport == PAXOS_TRANSPORT_UNICAST && c->max_datagram > 65506)
		return parse_error(
		    p, later_line(p, "max-datagram", "transport"), config_find_key("max-datagram"),
		    "%u is above 65506, the most the unicast transport carries", c->max_datagram);
	return PAXOS_OK;
}

/* Partitions > 1: their ports and storage paths, and the acceptors of each (partitions.c). */
static int check_partitions(struct config_parse *p)
{
	char why[256];
	uint32_t sets[PAXOS_MAX_PARTITIONS];
	if (config_partition_sets(&p->cfg, sets, why, sizeof(why)) != 0)
		return parse_error(p, later_line(p, "partition-acceptors", "partitions"),
				   config_find_key("partition-acceptors"), "%s", why);
	if (p->cfg.membership_alpha && strcmp(p->cfg.partition_acceptors, "all") != 0)
		return parse_error(p, later_line(p, "partition-acceptors", "membership-alpha"),
				   config_find_key("partition-acceptors"),
				   "'%s' needs membership-alpha 0: a partition's acceptors are "
				   "fixed by this line, not changed through its log",
				   p->cfg.partition_acceptors);
	if (config_partitions_conflict(&p->cfg, why, sizeof(why)) == 0)
		return PAXOS_OK;
	return parse_error(p, later_line(p, "partitions", "partitions"),
			   config_find_key("partitions"), "%s", why);
}

/* Rules that involve more than one key, checked once the whole file is read. */
static int check_cross(struct config_parse *p)
{
	const struct paxos_config *c = &p->cfg;
	int rc = resolve_durability(p);

	if (rc != PAXOS_OK)
		return rc;

	if (c->leader >= c->proposers)
		return parse_error(p, later_line(p, "leader", "proposers"),
				   config_find_key("leader"), "%u must be less than proposers (%u)",
				   c->leader, c->proposers);
	/* A timeout within one interval would declare live proposers dead between beats. */
	if (c->heartbeat_timeout_ms <= c->heartbeat_interval_ms)
		return parse_error(p,
				   later_line(p, "heartbeat-timeout-ms", "heartbeat-interval-ms"),
				   config_find_key("heartbeat-timeout-ms"),
				   "%u must be greater than heartbeat-interval-ms (%u)",
				   c->heartbeat_timeout_ms, c->heartbeat_interval_ms);
	/* Merging learners agree on the order only if each cuts every log from its start. */
	if (c->learner_merge && c->learner_start == PAXOS_START_FROM_CURRENT)
		return parse_error(
		    p, later_line(p, "learner-merge", "learner-start"),
		    config_find_key("learner-merge"),
		    "needs learner-start first: a learner that starts at the current "
		    "instance would merge the partitions in another order than the "
		    "others");
	if (c->initial_members > c->acceptors || (c->initial_members && !c->membership_alpha))
		return parse_error(p, later_line(p, "initial-members", "acceptors"),
				   config_find_key("initial-members"),
				   "%u must not exceed acceptors (%u), and needs membership-alpha",
				   c->initial_members, c->acceptors);
	if (c->initial_proposers > c->proposers || (c->initial_proposers && !c->membership_alpha))
		return parse_error(p, later_line(p, "initial-proposers", "proposers"),
				   config_find_key("initial-proposers"),
				   "%u must not exceed proposers (%u), and needs membership-alpha",
				   c->initial_proposers, c->proposers);
	if (c->membership_alpha && c->proposers > 32)
		return parse_error(
		    p, later_line(p, "membership-alpha", "proposers"),
		    config_find_key("membership-alpha"),
		    "needs at most 32 proposers (the proposer set of a configuration "
		    "has one bit per id), not %u",
		    c->proposers);
	if (c->proposer_concurrency > c->proposer_window)
		return parse_error(p, later_line(p, "proposer-concurrency", "proposer-window"),
				   config_find_key("proposer-concurrency"),
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
	rc = check_members(p);
	if (rc == PAXOS_OK)
		rc = check_partitions(p);
	if (rc != PAXOS_OK)
		return rc;
	return check_memory(p);
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
	for (size_t i = 0; i < config_key_count; i++)
		if (config_keys[i].default_text)
			apply_value(&p, &config_keys[i], config_keys[i].default_text);
	resolve_durability(&p);
	*cfg = p.cfg;
}

int paxos_config_parse(struct paxos_config *cfg, const char *text, size_t len, const char *name,
		       char *err, size_t errlen)
{
	struct config_parse p;
	size_t pos = 0;
	int rc;

	if (!cfg || (!text && len > 0)) {
		paxos_error_format(err, errlen, "%s: invalid arguments", name ? name : "(config)");
		return PAXOS_E_INVALID;
	}
	parse_init(&p, name, err, errlen);
	paxos_config_defaults(&p.cfg);
	p.cfg.durability = PAXOS_DURABILITY_UNSET; /* its default follows the backend */
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
	paxos_error_format(err, errlen, "%s", "");
	return PAXOS_OK;
}

/* Reads at most CONFIG_MAX_FILE bytes of path, a regular file, into *text (malloc'd). Opened
 * without blocking and checked on the open file: a FIFO never holds the start up, and
 * /dev/zero is refused, not read for ever. */
static int read_config_file(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		paxos_error_format(err, errlen, "%s: %s", path, strerror(errno));
		return PAXOS_E_IO;
	}
	struct stat st;
	int rc = PAXOS_OK;
	if (fstat(fd, &st) != 0) {
		paxos_error_format(err, errlen, "%s: %s", path, strerror(errno));
		rc = PAXOS_E_IO;
	} else if (S_ISDIR(st.st_mode)) {
		paxos_error_format(err, errlen, "%s: %s", path, strerror(EISDIR));
		rc = PAXOS_E_IO;
	} else if (!S_ISREG(st.st_mode)) {
		paxos_error_format(
		    err, errlen,
		    "%s: is not a regular file; a configuration is a text file of at "
		    "most %u bytes",
		    path, CONFIG_MAX_FILE);
		rc = PAXOS_E_IO;
	} else if (st.st_size > CONFIG_MAX_FILE) {
		paxos_error_format(err, errlen,
				   "%s: holds %lld bytes; a configuration is at most %u bytes",
				   path, (long long)st.st_size, CONFIG_MAX_FILE);
		rc = PAXOS_E_CONFIG;
	}
	char *buf = rc == PAXOS_OK ? malloc((size_t)CONFIG_MAX_FILE + 1) : NULL;
	size_t got = 0;
	if (rc == PAXOS_OK && !buf) {
		paxos_error_format(err, errlen, "%s: %s", path, strerror(ENOMEM));
		rc = PAXOS_E_NOMEM;
	}
	while (rc == PAXOS_OK && got <= CONFIG_MAX_FILE) {
		ssize_t n = read(fd, buf + got, (size_t)CONFIG_MAX_FILE + 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			paxos_error_format(err, errlen, "%s: %s", path, strerror(errno));
			rc = PAXOS_E_IO;
		} else if (n == 0) {
			break;
		}
		got += n > 0 ? (size_t)n : 0;
	}
	if (rc == PAXOS_OK && got > CONFIG_MAX_FILE) { /* it grew while it was read */
		paxos_error_format(err, errlen,
				   "%s: holds more than %u bytes, the most a "
				   "configuration may",
				   path, CONFIG_MAX_FILE);
		rc = PAXOS_E_CONFIG;
	}
	close(fd);
	if (rc != PAXOS_OK) {
		free(buf);
		return rc;
	}
	*text = buf;
	*len = got;
	return PAXOS_OK;
}

int paxos_config_load(struct paxos_config *cfg, const char *path, char *err, size_t errlen)
{
	if (!cfg || !path) {
		paxos_error_format(err, errlen, "invalid arguments");
		return PAXOS_E_INVALID;
	}
	char *text = NULL;
	size_t len = 0;
	int rc = read_config_file(path, &text, &len, err, errlen);
	if (rc != PAXOS_OK)
		return rc;
	rc = paxos_config_parse(cfg, text, len, path, err, errlen);
	free(text);
	return rc;
}

int paxos_config_set(struct paxos_config *cfg, const char *key, const char *value, char *err,
		     size_t errlen)
{
	char line[CONFIG_MAX_LINE + 1];
	if (!cfg || !key || !value) {
		paxos_error_format(err, errlen, "paxos_config_set: invalid arguments");
		return PAXOS_E_INVALID;
	}
	/* One word for the key: "a b" would set key a to "b ...". */
	if (!*key || strpbrk(key, " \t#\n")) {
		paxos_error_format(err, errlen, "paxos_config_set: '%.*s' is not a key",
				   CONFIG_QUOTE_MAX, key);
		return PAXOS_E_CONFIG;
	}
	int len = snprintf(line, sizeof(line), "%s %s", key, value);
	struct config_parse p;
	parse_init(&p, NULL, err, errlen);
	p.name = NULL;
	p.cfg = *cfg;
	p.line = 1;
	if (len < 0 || (size_t)len >= sizeof(line) || strpbrk(value, "#\n"))
		return parse_error(&p, 1, config_find_key(key), "'%.*s' is not a value",
				   CONFIG_QUOTE_MAX, value);
	if (strcmp(key, "storage") == 0)
		p.cfg.durability = PAXOS_DURABILITY_UNSET; /* the new backend's default */
	int rc = parse_line(&p, line, (size_t)len);
	if (rc == PAXOS_OK)
		rc = check_cross(&p);
	if (rc != PAXOS_OK)
		return rc;
	*cfg = p.cfg;
	paxos_error_format(err, errlen, "%s", "");
	return PAXOS_OK;
}
