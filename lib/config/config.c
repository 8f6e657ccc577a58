/*
 * paxos.conf parser. Every key is one row of a table (type, range, field, default), so
 * adding a key means adding a row. The parser reads a length-bounded buffer (it never looks
 * for a terminating NUL) and stops at the first error, leaving the caller's configuration
 * untouched.
 */
#include <paxos/storage_backends.h>
#include <paxos/options.h>
#include <paxos/config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

#define CONFIG_MAX_LINE 1024
/* Longest piece of a bad value quoted back in an error message. */
#define CONFIG_QUOTE_MAX 64

enum key_type {
	KEY_U32,        /* decimal number in [min, max] */
	KEY_GROUP,      /* IPv4 multicast ADDRESS:PORT */
	KEY_IPV4,       /* IPv4 address */
	KEY_ENUM,       /* one of the key's names, stored as the enum's value */
	KEY_STORAGE,    /* one of storage_backends */
	KEY_U64,        /* decimal number in [min, max], 64-bit field */
	KEY_PATH,       /* a directory path without blanks */
	KEY_FILE,       /* a file path without blanks */
	KEY_DURABILITY, /* one of durability_names; checked against the backend later */
	KEY_BOOL,       /* yes or no */
	KEY_MEMBER,     /* "ID HOST:PORT" (or "ID HOST PORT"), one line per id */
	KEY_LISTEN,     /* IPv4 ADDRESS:PORT of this host to listen on */
};

struct config_key {
	const char *name;
	enum key_type type;
	size_t offset; /* of the field in struct paxos_config */
	uint64_t min, max;
	const char *default_text; /* parsed like a value from the file; NULL: left zero */
	const char *const *names; /* KEY_ENUM: the values, indexed by the enum, NULL-ended */
};

#define FIELD(f) offsetof(struct paxos_config, f)

/* Indexed by enum paxos_learner_start. */
static const char *const learner_start_names[] = {"first", "current", NULL};
/* Indexed by enum paxos_election_mode. */
static const char *const election_names[] = {"auto", "manual", NULL};
/* Indexed by enum paxos_transport_kind. */
static const char *const transport_names[] = {"multicast", "unicast", NULL};
/* Indexed by enum paxos_flush_thread. */
static const char *const flush_thread_names[] = {"auto", "yes", "no", NULL};
/* KEY_ENUM fields are stored as int: every enum of the configuration is int-sized. */
_Static_assert(sizeof(enum paxos_learner_start) == sizeof(int) &&
		   sizeof(enum paxos_election_mode) == sizeof(int) &&
		   sizeof(enum paxos_transport_kind) == sizeof(int) &&
		   sizeof(enum paxos_flush_thread) == sizeof(int),
	       "enum fields are int-sized");

static const struct config_key config_keys[] = {
    {"transport", KEY_ENUM, FIELD(transport), 0, 0, "multicast", transport_names},
    /* Members' unicast addresses: the range is the id's; ids must also be below the counts. */
    {"acceptor", KEY_MEMBER, FIELD(acceptor_address), 0, PAXOS_MAX_ACCEPTORS - 1, NULL, NULL},
    {"proposer", KEY_MEMBER, FIELD(proposer_address), 0, PAXOS_MAX_PROPOSERS - 1, NULL, NULL},
    {"subscription-lease-ms", KEY_U32, FIELD(subscription_lease_ms), 100, 600000, "3000", NULL},
    {"acceptors-group", KEY_GROUP, FIELD(groups[PAXOS_GROUP_ACCEPTORS]), 0, 0, "239.255.11.1:7101",
     NULL},
    {"proposers-group", KEY_GROUP, FIELD(groups[PAXOS_GROUP_PROPOSERS]), 0, 0, "239.255.11.2:7102",
     NULL},
    {"learners-group", KEY_GROUP, FIELD(groups[PAXOS_GROUP_LEARNERS]), 0, 0, "239.255.11.3:7103",
     NULL},
    {"submit-group", KEY_GROUP, FIELD(groups[PAXOS_GROUP_SUBMIT]), 0, 0, "239.255.11.4:7104", NULL},
    {"multicast-interface", KEY_IPV4, FIELD(multicast_interface), 0, 0, "127.0.0.1", NULL},
    {"multicast-ttl", KEY_U32, FIELD(multicast_ttl), 0, 255, "0", NULL},
    {"max-datagram", KEY_U32, FIELD(max_datagram), 512, 65507, "8192", NULL},
    {"socket-buffer", KEY_U32, FIELD(socket_buffer), 65536, 268435456, "4194304", NULL},
    {"acceptors", KEY_U32, FIELD(acceptors), 1, PAXOS_MAX_ACCEPTORS, "3", NULL},
    {"proposers", KEY_U32, FIELD(proposers), 1, PAXOS_MAX_PROPOSERS, "2", NULL},
    /* The upper bound depends on proposers: checked once the whole file is read. */
    {"leader", KEY_U32, FIELD(leader), 0, PAXOS_MAX_PROPOSERS - 1, "0", NULL},
    {"election", KEY_ENUM, FIELD(election), 0, 0, "auto", election_names},
    /* The timeout must exceed the interval: checked once the whole file is read. */
    {"heartbeat-interval-ms", KEY_U32, FIELD(heartbeat_interval_ms), 1, 600000, "20", NULL},
    {"heartbeat-timeout-ms", KEY_U32, FIELD(heartbeat_timeout_ms), 1, 600000, "100", NULL},
    {"proposer-window", KEY_U32, FIELD(proposer_window), 1, 65536, "128", NULL},
    {"proposer-concurrency", KEY_U32, FIELD(proposer_concurrency), 1, 65536, "64", NULL},
    {"pending-list-size", KEY_U32, FIELD(pending_size), 1, 1048576, "4096", NULL},
    {"value-batch-limit", KEY_U32, FIELD(value_batch_limit), 1, 16384, "64", NULL},
    {"proposer-max-backlog", KEY_U32, FIELD(proposer_max_backlog), 0, 65536, "32", NULL},
    {"phase1-timeout-ms", KEY_U32, FIELD(phase1_timeout_ms), 1, 600000, "20", NULL},
    {"phase2-timeout-ms", KEY_U32, FIELD(phase2_timeout_ms), 1, 600000, "20", NULL},
    {"adaptive-timeouts", KEY_BOOL, FIELD(adaptive_timeouts), 0, 0, "no", NULL},
    {"timeout-floor-ms", KEY_U32, FIELD(timeout_floor_ms), 1, 600000, "10", NULL},
    {"timeout-ceiling-ms", KEY_U32, FIELD(timeout_ceiling_ms), 1, 600000, "2000", NULL},
    {"learner-window", KEY_U32, FIELD(learner_window), 16, 1048576, "4096", NULL},
    {"learner-hole-check-ms", KEY_U32, FIELD(hole_check_ms), 1, 600000, "20", NULL},
    {"learner-repeat-batch", KEY_U32, FIELD(repeat_batch), 1, PAXOS_ACCEPTOR_MAX_REPEAT, "256",
     NULL},
    {"learner-start", KEY_ENUM, FIELD(learner_start), 0, 0, "first", learner_start_names},
    {"acceptor-repeat-ms", KEY_U32, FIELD(acceptor_repeat_ms), 1, 600000, "100", NULL},
    {"counters-interval-ms", KEY_U32, FIELD(counters_interval_ms), 0, 3600000, "1000", NULL},
    {"counters-json", KEY_BOOL, FIELD(counters_json), 0, 0, "no", NULL},
    /* Not set: no metrics server. */
    {"metrics-listen", KEY_LISTEN, FIELD(metrics_listen), 0, 0, NULL, NULL},
    {"storage", KEY_STORAGE, FIELD(storage), 0, 0, "memory", NULL},
    {"storage-path", KEY_PATH, FIELD(storage_path), 0, 0, "/var/tmp/paxos", NULL},
    /* Unset until the whole file is read: the default depends on the backend. */
    {"durability", KEY_DURABILITY, FIELD(durability), 0, 0, NULL, NULL},
    {"lmdb-map-size", KEY_U64, FIELD(lmdb_map_size), 1ull << 20, 1ull << 40, "1073741824", NULL},
    {"storage-fresh", KEY_BOOL, FIELD(storage_fresh), 0, 0, "no", NULL},
    {"storage-flush-thread", KEY_ENUM, FIELD(storage_flush_thread), 0, 0, "auto",
     flush_thread_names},
    {"memory-retention", KEY_U32, FIELD(memory_retention), 0, PAXOS_MEMORY_MAX_RETENTION, "1000000",
     NULL},
    {"learning-acceptors", KEY_BOOL, FIELD(learning_acceptors), 0, 0, "yes", NULL},
    /* Not set: datagrams are not authenticated. The file is read when a node starts. */
    {"auth-key-file", KEY_FILE, FIELD(auth_key_file), 0, 0, NULL, NULL},
};

#define CONFIG_KEY_COUNT (sizeof(config_keys) / sizeof(config_keys[0]))

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Indexed by enum paxos_durability. */
static const char *const durability_names[PAXOS_DURABILITY_COUNT] = {
    "unset", "none", "nosync", "sync", "inmemory-log", "write-nosync", "dbsync"};

#define MODE(m) (1u << PAXOS_DURABILITY_##m)

/* Backends paxos_storage_open can open, the durability modes each accepts and the one it
 * gets when the file names none. */
struct storage_backend {
	const char *name;
	unsigned modes; /* bit per enum paxos_durability */
	enum paxos_durability default_mode;
};

static const struct storage_backend storage_backends[] = {
    {"memory", MODE(NONE), PAXOS_DURABILITY_NONE},
    {"lmdb", MODE(NOSYNC) | MODE(SYNC), PAXOS_DURABILITY_SYNC},
    {"bdb", MODE(NOSYNC) | MODE(SYNC) | MODE(INMEMORY_LOG) | MODE(WRITE_NOSYNC) | MODE(DBSYNC),
     PAXOS_DURABILITY_SYNC},
};

static const char *const bool_names[] = {"no", "yes"};

/* What a parse is doing: the configuration being built and where each key was set. */
struct config_parse {
	struct paxos_config cfg;
	unsigned set_on_line[CONFIG_KEY_COUNT]; /* 0: not set in the file (member keys: first) */
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

static const struct storage_backend *find_backend(const char *name)
{
	for (size_t i = 0; i < COUNT_OF(storage_backends); i++)
		if (strcmp(storage_backends[i].name, name) == 0)
			return &storage_backends[i];
	return NULL;
}

/* "memory, lmdb, bdb" into buf. */
static void join_backends(char *buf, size_t cap)
{
	const char *names[COUNT_OF(storage_backends)];

	for (size_t i = 0; i < COUNT_OF(storage_backends); i++)
		names[i] = storage_backends[i].name;
	join_names(names, COUNT_OF(names), buf, cap);
}

/* The names of the modes in the bit set, "nosync, sync", into buf. */
static void join_modes(unsigned modes, char *buf, size_t cap)
{
	const char *names[PAXOS_DURABILITY_COUNT];
	size_t n = 0;

	for (int m = PAXOS_DURABILITY_UNSET + 1; m < PAXOS_DURABILITY_COUNT; m++)
		if (modes & (1u << m))
			names[n++] = durability_names[m];
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
		if (!find_backend(text)) {
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
		i = find_name(durability_names, COUNT_OF(durability_names), text);
		if (i <= PAXOS_DURABILITY_UNSET) {
			join_modes(~0u, names, sizeof(names));
			return parse_error(p, p->line, key, "'%.*s' is not a durability mode (%s)",
					   CONFIG_QUOTE_MAX, text, names);
		}
		*(enum paxos_durability *)(void *)field = (enum paxos_durability)i;
		return PAXOS_OK;
	case KEY_BOOL:
		i = find_name(bool_names, COUNT_OF(bool_names), text);
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
	const struct config_key *key = find_key(tokens[0]);
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

/* Gives an unset durability the backend's default; refuses a mode the backend lacks. */
static int resolve_durability(struct config_parse *p)
{
	struct paxos_config *c = &p->cfg;
	const struct storage_backend *b = find_backend(c->storage);
	char names[128];

	if (!b) /* unreachable: the storage key only takes listed names */
		return parse_error(p, p->line, find_key("storage"), "unknown backend");
	if (c->durability == PAXOS_DURABILITY_UNSET) {
		c->durability = b->default_mode;
		return PAXOS_OK;
	}
	if (b->modes & (1u << c->durability))
		return PAXOS_OK;
	join_modes(b->modes, names, sizeof(names));
	return parse_error(p, later_line(p, "durability", "storage"), find_key("durability"),
			   "'%s' is not valid for storage %s (valid: %s)",
			   durability_names[c->durability], b->name, names);
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
		    p, later_line(p, "learner-window", "max-datagram"), find_key("learner-window"),
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
		    p, line > datagram ? line : datagram, find_key("pending-list-size"),
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
 * every acceptor and proposer. */
static int check_members(struct config_parse *p)
{
	const struct paxos_config *c = &p->cfg;
	const size_t total = PAXOS_MAX_ACCEPTORS + PAXOS_MAX_PROPOSERS;
	const struct config_key *transport = find_key("transport");
	char name[32], other[32], addr[INET_ADDRSTRLEN];

	for (size_t i = 0; i < total; i++) {
		const struct paxos_endpoint *e = member(c, i, name, sizeof(name));
		bool acceptor = i < PAXOS_MAX_ACCEPTORS;
		size_t id = acceptor ? i : i - PAXOS_MAX_ACCEPTORS;
		uint32_t count = acceptor ? c->acceptors : c->proposers;
		if (e->port && id >= count)
			return parse_error(p, member_line(p, i),
					   find_key(acceptor ? "acceptor" : "proposer"),
					   "unknown id %zu: ids are below %s (%u)", id,
					   acceptor ? "acceptors" : "proposers", count);
		if (!e->port && id < count && c->transport == PAXOS_TRANSPORT_UNICAST)
			return parse_error(p, p->set_on_line[transport - config_keys], transport,
					   "unicast needs every member's address, and %s has none "
					   "(add a line '%s HOST:PORT')",
					   name, name);
		for (size_t j = 0; e->port && j < i; j++) {
			const struct paxos_endpoint *f = member(c, j, other, sizeof(other));
			if (f->port != e->port || f->addr.s_addr != e->addr.s_addr)
				continue;
			inet_ntop(AF_INET, &e->addr, addr, sizeof(addr));
			return parse_error(
			    p, member_line(p, i), find_key(acceptor ? "acceptor" : "proposer"),
			    "%s:%u of %s is also the address of %s", addr, e->port, name, other);
		}
	}
	/* The unicast transport puts one byte before every datagram (lib/net/unicast.c). */
	if (c->transport == PAXOS_TRANSPORT_UNICAST && c->max_datagram > 65506)
		return parse_error(
		    p, later_line(p, "max-datagram", "transport"), find_key("max-datagram"),
		    "%u is above 65506, the most the unicast transport carries", c->max_datagram);
	return PAXOS_OK;
}

/* Rules that involve more than one key, checked once the whole file is read. */
static int check_cross(struct config_parse *p)
{
	const struct paxos_config *c = &p->cfg;
	int rc = resolve_durability(p);

	if (rc != PAXOS_OK)
		return rc;

	if (c->leader >= c->proposers)
		return parse_error(p, later_line(p, "leader", "proposers"), find_key("leader"),
				   "%u must be less than proposers (%u)", c->leader, c->proposers);
	/* A timeout within one interval would declare live proposers dead between beats. */
	if (c->heartbeat_timeout_ms <= c->heartbeat_interval_ms)
		return parse_error(p,
				   later_line(p, "heartbeat-timeout-ms", "heartbeat-interval-ms"),
				   find_key("heartbeat-timeout-ms"),
				   "%u must be greater than heartbeat-interval-ms (%u)",
				   c->heartbeat_timeout_ms, c->heartbeat_interval_ms);
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
	rc = check_members(p);
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
	for (size_t i = 0; i < CONFIG_KEY_COUNT; i++)
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

int paxos_config_load(struct paxos_config *cfg, const char *path, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0, cap = 0;
	FILE *f;
	int rc;

	if (!cfg || !path) {
		paxos_error_format(err, errlen, "invalid arguments");
		return PAXOS_E_INVALID;
	}
	f = fopen(path, "rb");
	if (!f) {
		paxos_error_format(err, errlen, "%s: %s", path, strerror(errno));
		return PAXOS_E_IO;
	}
	for (;;) {
		if (len == cap) {
			size_t new_cap = cap ? cap * 2 : 4096;
			char *grown = realloc(text, new_cap);
			if (!grown) {
				free(text);
				fclose(f);
				paxos_error_format(err, errlen, "%s: %s", path, strerror(ENOMEM));
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
		paxos_error_format(err, errlen, "%s: %s", path, strerror(saved ? saved : EIO));
		return PAXOS_E_IO;
	}
	fclose(f);
	rc = paxos_config_parse(cfg, text, len, path, err, errlen);
	free(text);
	return rc;
}

const char *paxos_durability_name(enum paxos_durability mode)
{
	if ((unsigned)mode >= PAXOS_DURABILITY_COUNT)
		return "unknown";
	return durability_names[mode];
}

struct paxos_config *paxos_config_new(void)
{
	struct paxos_config *cfg = malloc(sizeof(*cfg));
	if (cfg)
		paxos_config_defaults(cfg);
	return cfg;
}

void paxos_config_free(struct paxos_config *cfg)
{
	free(cfg);
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
		return parse_error(&p, 1, find_key(key), "'%.*s' is not a value", CONFIG_QUOTE_MAX,
				   value);
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

/* "A.B.C.D:PORT" of e, or "" for a member without an address. */
static int format_endpoint(const struct paxos_endpoint *e, bool member, char *buf, size_t cap)
{
	char addr[INET_ADDRSTRLEN];
	if (member && !e->port)
		return snprintf(buf, cap, "%s", "");
	inet_ntop(AF_INET, &e->addr, addr, sizeof(addr));
	return snprintf(buf, cap, "%s:%u", addr, e->port);
}

int paxos_config_get(const struct paxos_config *cfg, const char *key, char *buf, size_t cap)
{
	if (!cfg || !key || !buf || cap == 0)
		return PAXOS_E_INVALID;
	/* "acceptor 2": a member's address. */
	char name[32];
	unsigned id;
	char extra;
	if (sscanf(key, "%31s %u %c", name, &id, &extra) == 2) {
		const struct config_key *k = find_key(name);
		if (!k || k->type != KEY_MEMBER || id > k->max)
			return PAXOS_E_INVALID;
		const struct paxos_endpoint *e = k->offset == FIELD(acceptor_address)
						     ? &cfg->acceptor_address[id]
						     : &cfg->proposer_address[id];
		int n = format_endpoint(e, true, buf, cap);
		return n >= 0 && (size_t)n < cap ? PAXOS_OK : PAXOS_E_FULL;
	}
	const struct config_key *k = find_key(key);
	if (!k || k->type == KEY_MEMBER)
		return PAXOS_E_INVALID;
	const char *field = (const char *)cfg + k->offset;
	char addr[INET_ADDRSTRLEN];
	int n = -1;
	switch (k->type) {
	case KEY_U32:
		n = snprintf(buf, cap, "%u", *(const uint32_t *)(const void *)field);
		break;
	case KEY_U64:
		n = snprintf(buf, cap, "%llu",
			     (unsigned long long)*(const uint64_t *)(const void *)field);
		break;
	case KEY_GROUP:
		n = format_endpoint((const struct paxos_endpoint *)(const void *)field, false, buf,
				    cap);
		break;
	case KEY_LISTEN: /* "" when not set */
		n = format_endpoint((const struct paxos_endpoint *)(const void *)field, true, buf,
				    cap);
		break;
	case KEY_IPV4:
		inet_ntop(AF_INET, field, addr, sizeof(addr));
		n = snprintf(buf, cap, "%s", addr);
		break;
	case KEY_ENUM:
		n = snprintf(buf, cap, "%s", k->names[*(const int *)(const void *)field]);
		break;
	case KEY_DURABILITY:
		n = snprintf(buf, cap, "%s", durability_names[cfg->durability]);
		break;
	case KEY_BOOL:
		n = snprintf(buf, cap, "%s", bool_names[*(const bool *)(const void *)field]);
		break;
	case KEY_STORAGE:
	case KEY_PATH:
	case KEY_FILE:
		n = snprintf(buf, cap, "%s", field);
		break;
	case KEY_MEMBER:
		break;
	}
	return n >= 0 && (size_t)n < cap ? PAXOS_OK : PAXOS_E_FULL;
}
