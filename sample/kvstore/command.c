/* SPDX-License-Identifier: BSD-3-Clause */
#include "command.h"

#include <string.h>

static const char *const op_names[] = {NULL, "put", "get", "delete", "cas", "snapshot", "copy"};
static const int op_args[] = {0, 2, 1, 1, 3, 0, 2};
static const int op_keys[] = {0, 1, 1, 1, 1, 0, 2};

int kv_op_args(enum kv_op op)
{
	return op >= KV_PUT && op <= KV_OP_LAST ? op_args[op] : 0;
}

int kv_op_keys(enum kv_op op)
{
	return op >= KV_PUT && op <= KV_OP_LAST ? op_keys[op] : 0;
}

const char *kv_op_name(enum kv_op op)
{
	return op >= KV_PUT && op <= KV_OP_LAST ? op_names[op] : "?";
}

enum kv_op kv_op_parse(const char *name)
{
	for (int op = KV_PUT; op <= KV_OP_LAST; op++)
		if (strcmp(name, op_names[op]) == 0)
			return (enum kv_op)op;
	return (enum kv_op)0;
}

const char *kv_status_name(enum kv_status status)
{
	switch (status) {
	case KV_OK:
		return "OK";
	case KV_NOT_FOUND:
		return "NOT_FOUND";
	case KV_CAS_FAILED:
		return "FAILED";
	case KV_WRONG_PARTITION:
		return "WRONG_PARTITION";
	case KV_CROSS_PARTITION:
		return "CROSS_PARTITION";
	case KV_NEW_LEADER:
		return "NEW_LEADER";
	}
	return "?";
}

/* A cursor over a buffer: writes and reads stop at its end, and remember that they did. */
struct cursor {
	uint8_t *w;
	const uint8_t *r;
	size_t left;
	int overflow;
};

static void put_bytes(struct cursor *c, const void *p, size_t n)
{
	if (c->overflow || n > c->left) {
		c->overflow = 1;
		return;
	}
	if (n)
		memcpy(c->w, p, n);
	c->w += n;
	c->left -= n;
}

static void put_uint(struct cursor *c, uint64_t v, int bytes)
{
	uint8_t b[8];
	for (int i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
	put_bytes(c, b, (size_t)bytes);
}

static const uint8_t *get_bytes(struct cursor *c, size_t n)
{
	if (c->overflow || n > c->left) {
		c->overflow = 1;
		return NULL;
	}
	const uint8_t *p = c->r;
	c->r += n;
	c->left -= n;
	return p;
}

static uint64_t get_uint(struct cursor *c, int bytes)
{
	const uint8_t *b = get_bytes(c, (size_t)bytes);
	uint64_t v = 0;
	for (int i = 0; b && i < bytes; i++)
		v = v << 8 | b[i];
	return v;
}

size_t kv_command_encode(const struct kv_command *cmd, uint8_t *buf, size_t cap)
{
	int args = kv_op_args(cmd->op);
	if (!args && cmd->op != KV_SNAPSHOT)
		return 0;
	struct cursor c = {.w = buf, .left = cap};
	put_bytes(&c, "KV", 2);
	put_uint(&c, KV_VERSION, 1);
	put_uint(&c, cmd->op, 1);
	put_uint(&c, cmd->client, 8);
	put_uint(&c, cmd->seq, 8);
	if (cmd->op == KV_SNAPSHOT && cmd->arg[0].len)
		args = 1; /* the announced snapshot's log */
	for (int i = 0; i < args; i++) {
		put_uint(&c, cmd->arg[i].len, 2);
		put_bytes(&c, cmd->arg[i].data, cmd->arg[i].len);
	}
	return c.overflow ? 0 : cap - c.left;
}

int kv_command_decode(const uint8_t *buf, size_t len, struct kv_command *cmd)
{
	struct cursor c = {.r = buf, .left = len};
	const uint8_t *magic = get_bytes(&c, 2);
	if (!magic || memcmp(magic, "KV", 2) != 0 || get_uint(&c, 1) != KV_VERSION)
		return -1;
	memset(cmd, 0, sizeof(*cmd));
	cmd->op = (enum kv_op)get_uint(&c, 1);
	cmd->client = get_uint(&c, 8);
	cmd->seq = get_uint(&c, 8);
	int args = kv_op_args(cmd->op);
	if (!args && cmd->op != KV_SNAPSHOT)
		return -1;
	if (cmd->op == KV_SNAPSHOT && c.left)
		args = 1; /* the announced snapshot's log */
	for (int i = 0; i < args; i++) {
		cmd->arg[i].len = (uint16_t)get_uint(&c, 2);
		cmd->arg[i].data = get_bytes(&c, cmd->arg[i].len);
	}
	return c.overflow || c.left ? -1 : 0;
}

size_t kv_reply_encode(const struct kv_reply *r, uint8_t *buf, size_t cap)
{
	struct cursor c = {.w = buf, .left = cap};
	put_bytes(&c, "KR", 2);
	put_uint(&c, KV_VERSION, 1);
	put_uint(&c, r->status, 1);
	put_uint(&c, r->client, 8);
	put_uint(&c, r->seq, 8);
	put_uint(&c, r->iid, 8);
	put_uint(&c, r->replica, 4);
	put_uint(&c, r->value.len, 2);
	put_bytes(&c, r->value.data, r->value.len);
	return c.overflow ? 0 : cap - c.left;
}

int kv_reply_decode(const uint8_t *buf, size_t len, struct kv_reply *r)
{
	struct cursor c = {.r = buf, .left = len};
	const uint8_t *magic = get_bytes(&c, 2);
	if (!magic || memcmp(magic, "KR", 2) != 0 || get_uint(&c, 1) != KV_VERSION)
		return -1;
	r->status = (enum kv_status)get_uint(&c, 1);
	r->client = get_uint(&c, 8);
	r->seq = get_uint(&c, 8);
	r->iid = get_uint(&c, 8);
	r->replica = (uint32_t)get_uint(&c, 4);
	r->value.len = (uint16_t)get_uint(&c, 2);
	r->value.data = get_bytes(&c, r->value.len);
	if (r->status > KV_STATUS_LAST)
		return -1;
	return c.overflow || c.left ? -1 : 0;
}
