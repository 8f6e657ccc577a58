/* SPDX-License-Identifier: BSD-3-Clause */
/* A parse of paxos.conf under way, shared by the files of lib/config/: the line reader
 * (config.c), the values of one key (config_values.c) and the checks across keys
 * (config_checks.c). Not a public header. */
#ifndef PAXOS_CONFIG_PARSING_H
#define PAXOS_CONFIG_PARSING_H

#include <paxos/config.h>

#include <stdbool.h>
#include <stddef.h>

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

/* config_values.c */
/* Writes "NAME:LINE: " followed by the key's name (when key is given) and the message;
 * returns PAXOS_E_CONFIG. */
int config_error(struct config_parse *p, unsigned line, const struct config_key *key,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* key's value text into the configuration being built. */
int config_apply_value(struct config_parse *p, const struct config_key *key, const char *text);
/* "acceptor ID ADDRESS PORT" and the like, split into tokens. */
int config_parse_member(struct config_parse *p, const struct config_key *key, char **tokens,
			size_t count);
/* What key's value should look like, for an error message. */
void config_describe_expected(const struct config_key *key, char *buf, size_t cap);
/* The durability modes in modes, as words. */
void config_join_modes(unsigned modes, char *buf, size_t cap);

/* config_checks.c */
/* The durability a store gets when the file names none. */
int config_resolve_durability(struct config_parse *p);
/* Every check across keys, once the file is read. */
int config_check_cross(struct config_parse *p);

#endif
