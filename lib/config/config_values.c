/* SPDX-License-Identifier: BSD-3-Clause */
/* paxos.conf: the value of one key, from its text (numbers, addresses, groups, members, names
 * of backends and modes), or the error that says what was expected. */
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
#include "parsing.h"

int config_error(struct config_parse *p, unsigned line, const struct config_key *key,
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
		return config_error(p, p->line, key, "%s'%.*s' is not a decimal number", what,
				    CONFIG_QUOTE_MAX, text);
	if (overflow || v < min || v > max)
		return config_error(p, p->line, key, "%s%.*s is out of range %llu..%llu", what,
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

/* ADDRESS:PORT, a dotted IPv4 address (its text in addr_text) and a port from 1 up. */
static int parse_address_port(struct config_parse *p, const struct config_key *key,
			      const char *text, char addr_text[INET_ADDRSTRLEN],
			      struct paxos_endpoint *out)
{
	const char *colon = strrchr(text, ':');
	size_t addr_len = colon ? (size_t)(colon - text) : 0;
	uint32_t port = 0;

	if (!colon || colon == text || colon[1] == '\0')
		return config_error(p, p->line, key, "'%.*s' is not ADDRESS:PORT", CONFIG_QUOTE_MAX,
				    text);
	if (addr_len >= INET_ADDRSTRLEN)
		return config_error(p, p->line, key, "'%.*s' is not an IPv4 address",
				    CONFIG_QUOTE_MAX, text);
	memcpy(addr_text, text, addr_len);
	addr_text[addr_len] = '\0';
	if (!parse_ipv4(addr_text, &out->addr))
		return config_error(p, p->line, key, "'%s' is not an IPv4 address", addr_text);
	int rc = parse_u32(p, key, "port ", colon + 1, 1, 65535, &port);
	out->port = (uint16_t)port;
	return rc;
}

/* ADDRESS:PORT where the address is a multicast group (group), in 224.0.0.0/4, or else an
 * address of this host to listen on: a dotted IPv4 address (0.0.0.0: all of them), not a
 * group or broadcast address. */
static int parse_endpoint_for(struct config_parse *p, const struct config_key *key,
			      const char *text, bool group, struct paxos_endpoint *out)
{
	char addr_text[INET_ADDRSTRLEN];
	struct paxos_endpoint e;
	int rc = parse_address_port(p, key, text, addr_text, &e);
	if (rc != PAXOS_OK)
		return rc;
	uint32_t a = ntohl(e.addr.s_addr);
	if (group && !IN_MULTICAST(a))
		return config_error(p, p->line, key,
				    "%s is not an IPv4 multicast address (224.0.0.0/4)", addr_text);
	if (!group && (IN_MULTICAST(a) || a == INADDR_BROADCAST))
		return config_error(p, p->line, key,
				    "%s is not an address to listen on (a local address, or "
				    "0.0.0.0 for all)",
				    addr_text);
	*out = e;
	return PAXOS_OK;
}

/* A member's host: a dotted IPv4 address of its own (no name: parsing never waits on DNS). */
static int parse_host(struct config_parse *p, const struct config_key *key, const char *text,
		      struct in_addr *out)
{
	if (!parse_ipv4(text, out))
		return config_error(p, p->line, key, "'%.*s' is not an IPv4 address",
				    CONFIG_QUOTE_MAX, text);
	uint32_t a = ntohl(out->s_addr);
	if (IN_MULTICAST(a) || a == INADDR_ANY || a == INADDR_BROADCAST)
		return config_error(
		    p, p->line, key,
		    "%.*s is not a unicast address (a member needs its own address)",
		    CONFIG_QUOTE_MAX, text);
	return PAXOS_OK;
}

/* "acceptor 0 10.0.0.1:7201" (or "... 10.0.0.1 7201", as libpaxos3 wrote it): tokens after the
 * key. Each id once; the ids are checked against the counts once the file is read. */
int config_parse_member(struct config_parse *p, const struct config_key *key, char **tokens,
			size_t n)
{
	bool is_acceptor = key->offset == FIELD(acceptor_address);
	uint32_t id;
	if (n < 2 || n > 3)
		return config_error(p, p->line, key,
				    n < 2 ? "missing address (expected '%s ID HOST:PORT')"
					  : "unexpected text after the address (expected '%s ID "
					    "HOST:PORT')",
				    key->name);
	int rc = parse_u32(p, key, "id ", tokens[0], key->min, key->max, &id);
	if (rc != PAXOS_OK)
		return rc;
	unsigned *line = is_acceptor ? &p->acceptor_line[id] : &p->proposer_line[id];
	if (*line)
		return config_error(p, p->line, key, "%u already has an address, on line %u", id,
				    *line);
	char host[256];
	const char *port_text;
	if (n == 3) {
		snprintf(host, sizeof(host), "%s", tokens[1]);
		port_text = tokens[2];
	} else {
		const char *colon = strrchr(tokens[1], ':');
		if (!colon || colon == tokens[1] || colon[1] == '\0')
			return config_error(p, p->line, key, "'%.*s' is not HOST:PORT",
					    CONFIG_QUOTE_MAX, tokens[1]);
		size_t len = (size_t)(colon - tokens[1]);
		if (len >= sizeof(host))
			return config_error(p, p->line, key, "host name is too long");
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
void config_join_modes(unsigned modes, char *buf, size_t cap)
{
	const char *names[PAXOS_DURABILITY_COUNT];
	size_t n = 0;

	for (int m = PAXOS_DURABILITY_UNSET + 1; m < PAXOS_DURABILITY_COUNT; m++)
		if (modes & (1u << m))
			names[n++] = paxos_durability_name((enum paxos_durability)m);
	join_names(names, n, buf, cap);
}

/* text into field, which has room for max characters and the NUL: refused when longer
 * (what, if not empty, says what is too long). */
static int copy_text(struct config_parse *p, const struct config_key *key, const char *what,
		     const char *text, char *field, size_t max)
{
	if (strlen(text) > max)
		return config_error(p, p->line, key, "%slonger than %zu characters", what, max);
	snprintf(field, max + 1, "%s", text);
	return PAXOS_OK;
}

/* Sets key's field from text; the only place that knows how each type is stored. */
int config_apply_value(struct config_parse *p, const struct config_key *key, const char *text)
{
	char *field = (char *)&p->cfg + key->offset;
	char names[128];
	int i;

	switch (key->type) {
	case KEY_U32:
		return parse_u32(p, key, "", text, key->min, key->max, (uint32_t *)(void *)field);
	case KEY_GROUP:
		return parse_endpoint_for(p, key, text, true,
					  (struct paxos_endpoint *)(void *)field);
	case KEY_IPV4:
		if (!parse_ipv4(text, (struct in_addr *)(void *)field))
			return config_error(p, p->line, key, "'%.*s' is not an IPv4 address",
					    CONFIG_QUOTE_MAX, text);
		return PAXOS_OK;
	case KEY_ENUM:
		i = find_name(key->names, name_count(key->names), text);
		if (i < 0) {
			either_names(key->names, names, sizeof(names));
			return config_error(p, p->line, key, "'%.*s' is not %s", CONFIG_QUOTE_MAX,
					    text, names);
		}
		*(int *)(void *)field = i;
		return PAXOS_OK;
	case KEY_MEMBER: /* parse_member takes the whole line */
		break;
	case KEY_LISTEN:
		return parse_endpoint_for(p, key, text, false,
					  (struct paxos_endpoint *)(void *)field);
	case KEY_STORAGE:
		if (!config_find_backend(text)) {
			join_backends(names, sizeof(names));
			return config_error(p, p->line, key,
					    "unknown backend '%.*s' (available: %s)",
					    CONFIG_QUOTE_MAX, text, names);
		}
		snprintf(field, sizeof(p->cfg.storage), "%s", text);
		return PAXOS_OK;
	case KEY_U64:
		return parse_u64(p, key, "", text, key->min, key->max, (uint64_t *)(void *)field);
	case KEY_PATH:
	case KEY_FILE:
		return copy_text(p, key, "path is ", text, field, PAXOS_PATH_MAX);
	case KEY_DURABILITY:
		i = find_durability(text);
		if (i <= PAXOS_DURABILITY_UNSET) {
			config_join_modes(~0u, names, sizeof(names));
			return config_error(p, p->line, key, "'%.*s' is not a durability mode (%s)",
					    CONFIG_QUOTE_MAX, text, names);
		}
		*(enum paxos_durability *)(void *)field = (enum paxos_durability)i;
		return PAXOS_OK;
	case KEY_PARTSET:
		return copy_text(p, key, "", text, field, PAXOS_PARTITION_ACCEPTORS_MAX);
	case KEY_BOOL:
		i = find_name(config_bool_names, 2, text);
		if (i < 0)
			return config_error(p, p->line, key, "'%.*s' is not yes or no",
					    CONFIG_QUOTE_MAX, text);
		*(bool *)(void *)field = i == 1;
		return PAXOS_OK;
	}
	return config_error(p, p->line, key, "internal error: unknown key type");
}

/* What a value of each type looks like, where that says it all. */
static const char *const expected[] = {
    [KEY_GROUP] = "a multicast ADDRESS:PORT",
    [KEY_IPV4] = "an IPv4 address",
    [KEY_MEMBER] = "ID HOST:PORT",
    [KEY_LISTEN] = "an IPv4 ADDRESS:PORT to listen on",
    [KEY_PATH] = "a directory",
    [KEY_FILE] = "a file",
    [KEY_BOOL] = "yes or no",
    [KEY_PARTSET] = "all, spread, or one set of acceptor ids per partition such as 0-2/3-5",
};

/* What a key's value looks like, for "missing value" errors. */
void config_describe_expected(const struct config_key *key, char *buf, size_t cap)
{
	char names[128];

	switch (key->type) {
	case KEY_U32:
	case KEY_U64:
		snprintf(buf, cap, "a number in %llu..%llu", (unsigned long long)key->min,
			 (unsigned long long)key->max);
		return;
	case KEY_ENUM:
		either_names(key->names, buf, cap);
		return;
	case KEY_STORAGE:
		join_backends(names, sizeof(names));
		snprintf(buf, cap, "a storage backend: %s", names);
		return;
	case KEY_DURABILITY:
		config_join_modes(~0u, names, sizeof(names));
		snprintf(buf, cap, "a durability mode: %s", names);
		return;
	default:
		break;
	}
	bool known =
	    (size_t)key->type < sizeof(expected) / sizeof(expected[0]) && expected[key->type];
	snprintf(buf, cap, "%s", known ? expected[key->type] : "a value");
}
