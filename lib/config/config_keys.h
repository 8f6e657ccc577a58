/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The paxos.conf key table, shared by the parser (config.c) and the by-name reading of a
 * configuration (config_get.c): one row per key, the names of enum values, the storage
 * backends and their durability modes. Internal to the config layer.
 */
#ifndef PAXOS_CONFIG_KEYS_H
#define PAXOS_CONFIG_KEYS_H

#include <paxos/config.h>

#include <stddef.h>
#include <stdint.h>

#include "config_fields.h"

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
	KEY_PARTSET, /* partition-acceptors: all, spread or sets; checked once the file is read */
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

/* Backends paxos_storage_open can open, the durability modes each accepts and the one it
 * gets when the file names none. */
struct storage_backend {
	const char *name;
	unsigned modes; /* bit per enum paxos_durability */
	enum paxos_durability default_mode;
};

/* Room for every key: config_keys.c checks that the table fits. */
#define CONFIG_KEYS_MAX 64
#define CONFIG_BACKEND_COUNT 3

extern const struct config_key config_keys[];
extern const size_t config_key_count;
/* Indexed by enum paxos_durability. */
/* Indexed by bool. */
extern const char *const config_bool_names[2];
extern const struct storage_backend config_storage_backends[CONFIG_BACKEND_COUNT];

/* The key or backend of that name, or NULL. */
const struct config_key *config_find_key(const char *name);
const struct storage_backend *config_find_backend(const char *name);

/* Whether partitions > 1 would make two partitions share a port or a storage path too long:
 * 0 if not, else non-zero with why filled (partitions.c). */
int config_partitions_conflict(const struct paxos_config *c, char *why, size_t cap);

/* The acceptors of each partition of c, one bit per acceptor id, into sets[0..partitions):
 * 0, or -1 with why filled when partition-acceptors is wrong (partitions.c). */
int config_partition_sets(const struct paxos_config *c, uint32_t *sets, char *why, size_t cap);

#endif
