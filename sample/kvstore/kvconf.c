/* SPDX-License-Identifier: BSD-3-Clause */
#include "kvconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kv_config_defaults(struct kv_config *c)
{
	memset(c, 0, sizeof(*c));
	c->reply_group.sin_family = AF_INET;
	inet_pton(AF_INET, "239.255.11.5", &c->reply_group.sin_addr);
	c->reply_group.sin_port = htons(7105);
	c->replicas = 3;
	c->snapshot_every = 1000;
	c->trim = KV_TRIM_ALL;
	c->resubmit_ms = 500;
	c->session_clients = 4096;
	c->read_port = 7110;
}

static int parse_u32(const char *text, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_group(const char *text, struct sockaddr_in *out)
{
	char addr[32];
	const char *colon = strchr(text, ':');
	uint32_t port;
	if (!colon || (size_t)(colon - text) >= sizeof(addr))
		return -1;
	memcpy(addr, text, (size_t)(colon - text));
	addr[colon - text] = 0;
	struct in_addr a;
	if (inet_pton(AF_INET, addr, &a) != 1 || !IN_MULTICAST(ntohl(a.s_addr)) ||
	    parse_u32(colon + 1, 1, 65535, &port) != 0)
		return -1;
	out->sin_addr = a;
	out->sin_port = htons((uint16_t)port);
	return 0;
}

/* One "key value" line; returns NULL or what is wrong. */
static const char *parse_line(struct kv_config *c, const char *key, const char *value)
{
	if (strcmp(key, "reply-group") == 0)
		return parse_group(value, &c->reply_group) ? "reply-group must be a multicast "
							     "ADDRESS:PORT"
							   : NULL;
	if (strcmp(key, "replicas") == 0)
		return parse_u32(value, 1, 100, &c->replicas) ? "replicas must be 1..100" : NULL;
	if (strcmp(key, "snapshot-every") == 0)
		return parse_u32(value, 0, 100000000, &c->snapshot_every)
			   ? "snapshot-every must be 0..100000000"
			   : NULL;
	if (strcmp(key, "resubmit-ms") == 0)
		return parse_u32(value, 1, 600000, &c->resubmit_ms)
			   ? "resubmit-ms must be 1..600000"
			   : NULL;
	if (strcmp(key, "session-clients") == 0)
		return parse_u32(value, 1, 1u << 24, &c->session_clients)
			   ? "session-clients must be 1..16777216"
			   : NULL;
	if (strcmp(key, "read-port") == 0) {
		uint32_t port;
		if (parse_u32(value, 1, 65535, &port))
			return "read-port must be 1..65535";
		c->read_port = (uint16_t)port;
		return NULL;
	}
	if (strcmp(key, "trim") == 0) {
		static const char *const names[] = {"all", "own", "off"};
		for (int i = 0; i < 3; i++)
			if (strcmp(value, names[i]) == 0) {
				c->trim = (enum kv_trim)i;
				return NULL;
			}
		return "trim must be all, own or off";
	}
	return "unknown key";
}

int kv_config_load(struct kv_config *c, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char line[512];
	int lineno = 0, rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "#\r\n")] = 0;
		char key[64], value[256], extra[2];
		int n = sscanf(line, "%63s %255s %1s", key, value, extra);
		if (n <= 0)
			continue;
		const char *why = n == 2 ? parse_line(c, key, value) : "expected 'key value'";
		if (why) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
			rc = -1;
		}
	}
	fclose(f);
	return rc;
}
