/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A configuration as an opaque object (paxos/config.h): allocated with its defaults, and each
 * key read back by name in the words paxos.conf uses. Setting a key parses it (config.c).
 */
#include "config_keys.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		const struct config_key *k = config_find_key(name);
		if (!k || k->type != KEY_MEMBER || id > k->max)
			return PAXOS_E_INVALID;
		const struct paxos_endpoint *e = k->offset == FIELD(acceptor_address)
						     ? &cfg->acceptor_address[id]
						     : &cfg->proposer_address[id];
		int n = format_endpoint(e, true, buf, cap);
		return n >= 0 && (size_t)n < cap ? PAXOS_OK : PAXOS_E_FULL;
	}
	const struct config_key *k = config_find_key(key);
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
		n = snprintf(buf, cap, "%s", paxos_durability_name(cfg->durability));
		break;
	case KEY_BOOL:
		n = snprintf(buf, cap, "%s", config_bool_names[*(const bool *)(const void *)field]);
		break;
	case KEY_STORAGE:
	case KEY_PATH:
	case KEY_FILE:
	case KEY_PARTSET:
		n = snprintf(buf, cap, "%s", field);
		break;
	case KEY_MEMBER:
		break;
	}
	return n >= 0 && (size_t)n < cap ? PAXOS_OK : PAXOS_E_FULL;
}
