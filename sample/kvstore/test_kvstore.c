/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the kvstore's parts without Paxos: wire format, sharding, state machine,
 * snapshots, configuration, the benchmark's burn. Built in the libpaxos tree when Check is
 * installed. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "burn.h"
#include "command.h"
#include "kvconf.h"
#include "shard.h"
#include "store.h"

static struct kv_bytes text(const char *s)
{
	return (struct kv_bytes){(const uint8_t *)s, (uint16_t)strlen(s)};
}

static struct kv_command command(enum kv_op op, uint64_t client, uint64_t seq, const char *a,
				 const char *b, const char *c)
{
	struct kv_command cmd = {.op = op, .client = client, .seq = seq};
	const char *args[] = {a, b, c};
	for (int i = 0; i < KV_MAX_ARGS; i++)
		if (args[i])
			cmd.arg[i] = text(args[i]);
	return cmd;
}

static int bytes_equal(struct kv_bytes b, const char *s)
{
	return b.len == strlen(s) && memcmp(b.data, s, b.len) == 0;
}

START_TEST(command_round_trip)
{
	struct kv_command cmds[] = {command(KV_PUT, 7, 1, "key", "value", NULL),
				    command(KV_GET, 7, 2, "key", NULL, NULL),
				    command(KV_DELETE, 7, 3, "", NULL, NULL),
				    command(KV_CAS, 7, 4, "k", "old", "new"),
				    command(KV_SNAPSHOT, 2, 1234, NULL, NULL, NULL),
				    command(KV_COPY, 7, 5, "a", "b", NULL)};
	uint8_t buf[256];
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		size_t len = kv_command_encode(&cmds[i], buf, sizeof(buf));
		ck_assert_uint_gt(len, 0);
		struct kv_command out;
		ck_assert_int_eq(kv_command_decode(buf, len, &out), 0);
		ck_assert_int_eq(out.op, cmds[i].op);
		ck_assert_uint_eq(out.client, cmds[i].client);
		ck_assert_uint_eq(out.seq, cmds[i].seq);
		for (int a = 0; a < kv_op_args(out.op); a++) {
			ck_assert_uint_eq(out.arg[a].len, cmds[i].arg[a].len);
			ck_assert(memcmp(out.arg[a].data, cmds[i].arg[a].data, out.arg[a].len) ==
				  0);
		}
		/* Every truncation, and a trailing byte, is refused. */
		for (size_t cut = 0; cut < len; cut++)
			ck_assert_int_eq(kv_command_decode(buf, cut, &out), -1);
		buf[len] = 0;
		ck_assert_int_eq(kv_command_decode(buf, len + 1, &out), -1);
	}
	struct kv_command c = command(KV_PUT, 1, 1, "key", "value", NULL);
	ck_assert_uint_eq(kv_command_encode(&c, buf, 10), 0); /* does not fit */
	c.op = (enum kv_op)9;
	ck_assert_uint_eq(kv_command_encode(&c, buf, sizeof(buf)), 0);
}
END_TEST

START_TEST(command_decode_refuses_garbage)
{
	struct kv_command c = command(KV_CAS, 1, 1, "k", "a", "b"), out;
	uint8_t buf[64];
	size_t len = kv_command_encode(&c, buf, sizeof(buf));
	uint8_t bad[64];
	memcpy(bad, buf, len);
	bad[0] = 'X'; /* magic */
	ck_assert_int_eq(kv_command_decode(bad, len, &out), -1);
	memcpy(bad, buf, len);
	bad[2] = KV_VERSION + 1;
	ck_assert_int_eq(kv_command_decode(bad, len, &out), -1);
	memcpy(bad, buf, len);
	bad[3] = 0; /* op */
	ck_assert_int_eq(kv_command_decode(bad, len, &out), -1);
	memcpy(bad, buf, len);
	bad[3] = KV_PUT; /* two arguments expected, three present */
	ck_assert_int_eq(kv_command_decode(bad, len, &out), -1);
	memcpy(bad, buf, len);
	bad[KV_COMMAND_HEADER] = 0xff; /* first argument longer than the value */
	ck_assert_int_eq(kv_command_decode(bad, len, &out), -1);
	/* Random bytes never crash the decoder. */
	srand(1);
	for (int i = 0; i < 10000; i++) {
		size_t n = (size_t)rand() % sizeof(bad);
		for (size_t k = 0; k < n; k++)
			bad[k] = (uint8_t)rand();
		if (n > 2) {
			bad[0] = 'K';
			bad[1] = 'V';
			bad[2] = KV_VERSION;
		}
		kv_command_decode(bad, n, &out);
	}
}
END_TEST

START_TEST(reply_round_trip)
{
	struct kv_reply r = {KV_CAS_FAILED, 9, 3, 77, 2, text("current")}, out;
	uint8_t buf[128];
	size_t len = kv_reply_encode(&r, buf, sizeof(buf));
	ck_assert_uint_eq(len, KV_REPLY_HEADER + 7);
	ck_assert_int_eq(kv_reply_decode(buf, len, &out), 0);
	ck_assert_int_eq(out.status, KV_CAS_FAILED);
	ck_assert_uint_eq(out.client, 9);
	ck_assert_uint_eq(out.seq, 3);
	ck_assert_uint_eq(out.iid, 77);
	ck_assert_uint_eq(out.replica, 2);
	ck_assert(bytes_equal(out.value, "current"));
	for (size_t cut = 0; cut < len; cut++)
		ck_assert_int_eq(kv_reply_decode(buf, cut, &out), -1);
	buf[3] = KV_WRONG_PARTITION;
	ck_assert_int_eq(kv_reply_decode(buf, len, &out), 0);
	buf[3] = KV_CROSS_PARTITION;
	ck_assert_int_eq(kv_reply_decode(buf, len, &out), 0);
	ck_assert_str_eq(kv_status_name(out.status), "CROSS_PARTITION");
	buf[3] = KV_STATUS_LAST + 1; /* no such status */
	ck_assert_int_eq(kv_reply_decode(buf, len, &out), -1);
}
END_TEST

/* A new-leader notice: partition 1's new leader is proposer 0 (command.h). */
START_TEST(new_leader_notice_round_trip)
{
	struct kv_reply r = {.status = KV_NEW_LEADER, .seq = 1, .iid = 0, .replica = 2}, out;
	uint8_t buf[64];
	size_t len = kv_reply_encode(&r, buf, sizeof(buf));
	ck_assert_uint_eq(len, KV_REPLY_HEADER);
	ck_assert_int_eq(kv_reply_decode(buf, len, &out), 0);
	ck_assert_int_eq(out.status, KV_NEW_LEADER);
	ck_assert_str_eq(kv_status_name(out.status), "NEW_LEADER");
	ck_assert_uint_eq(out.client, 0);
	ck_assert_uint_eq(out.seq, 1);
	ck_assert_uint_eq(out.iid, 0);
	ck_assert_uint_eq(out.replica, 2);
}
END_TEST

/* The hash is part of the protocol: a client and a replica built apart must agree on it, so
 * these values are pinned (FNV-1a 64, MurmurHash3 fmix64, modulo). */
START_TEST(shard_hash_is_stable)
{
	static const struct {
		const char *key;
		uint32_t mod2, mod3, mod64;
	} pinned[] = {{"", 0, 2, 38},         {"a", 1, 2, 27},    {"b", 0, 1, 16},
		      {"greeting", 0, 1, 56}, {"key1", 0, 2, 56}, {"user:42", 0, 0, 8}};
	for (size_t i = 0; i < sizeof(pinned) / sizeof(pinned[0]); i++) {
		struct kv_bytes k = text(pinned[i].key);
		ck_assert_uint_eq(kv_key_partition(k.data, k.len, 2), pinned[i].mod2);
		ck_assert_uint_eq(kv_key_partition(k.data, k.len, 3), pinned[i].mod3);
		ck_assert_uint_eq(kv_key_partition(k.data, k.len, 64), pinned[i].mod64);
		ck_assert_uint_eq(kv_key_partition(k.data, k.len, 1), 0);
		ck_assert_uint_eq(kv_key_partition(k.data, k.len, 0), 0);
	}
	/* Keys that differ in their last character only still spread over both partitions. */
	uint32_t count[2] = {0, 0};
	char key[32];
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "key%d", i);
		count[kv_key_partition((const uint8_t *)key, strlen(key), 2)]++;
	}
	ck_assert_uint_gt(count[0], 400);
	ck_assert_uint_gt(count[1], 400);
}
END_TEST

START_TEST(shard_routes_commands)
{
	/* With 2 partitions, "a" is in 1 and "b", "c" in 0 (pinned above and checked here). */
	ck_assert_uint_eq(kv_key_partition((const uint8_t *)"a", 1, 2), 1);
	ck_assert_uint_eq(kv_key_partition((const uint8_t *)"c", 1, 2), 0);
	struct kv_command put = command(KV_PUT, 1, 1, "a", "v", NULL);
	struct kv_command cas = command(KV_CAS, 1, 2, "b", "a", "a"); /* values are no keys */
	struct kv_command same = command(KV_COPY, 1, 3, "b", "c", NULL);
	struct kv_command cross = command(KV_COPY, 1, 4, "b", "a", NULL);
	struct kv_command snap = command(KV_SNAPSHOT, 0, 9, NULL, NULL, NULL);
	uint32_t other = 99;
	ck_assert_int_eq(kv_command_partition(&put, 2, &other), 1);
	ck_assert_int_eq(kv_command_partition(&cas, 2, &other), 0);
	ck_assert_int_eq(kv_command_partition(&same, 2, &other), 0);
	ck_assert_uint_eq(other, 99);
	ck_assert_int_eq(kv_command_partition(&cross, 2, &other), -1);
	ck_assert_uint_eq(other, 1);
	ck_assert_int_eq(kv_command_partition(&cross, 2, NULL), -1);
	ck_assert_int_eq(kv_command_partition(&cross, 1, NULL), 0); /* one partition: all keys */
	ck_assert_int_eq(kv_command_partition(&snap, 2, NULL), -1);
	ck_assert_int_eq(kv_op_keys(KV_COPY), 2);
	ck_assert_int_eq(kv_op_keys(KV_PUT), 1);
	ck_assert_int_eq(kv_op_keys(KV_SNAPSHOT), 0);
	ck_assert_int_eq(kv_op_keys((enum kv_op)77), 0);
}
END_TEST

/* Applies a command and returns the outcome; reply in *r. */
static enum kv_outcome run(struct kv_store *s, struct kv_command c, uint64_t iid,
			   struct kv_reply *r)
{
	return kv_store_apply(s, &c, iid, r);
}

START_TEST(store_operations)
{
	struct kv_store *s = kv_store_new(3);
	struct kv_reply r;
	ck_assert_int_eq(run(s, command(KV_GET, 1, 1, "a", NULL, NULL), 1, &r), KV_APPLIED);
	ck_assert_int_eq(r.status, KV_NOT_FOUND);
	ck_assert_int_eq(run(s, command(KV_PUT, 1, 2, "a", "x", NULL), 2, &r), KV_APPLIED);
	ck_assert_int_eq(r.status, KV_OK);
	ck_assert_int_eq(run(s, command(KV_GET, 1, 3, "a", NULL, NULL), 3, &r), KV_APPLIED);
	ck_assert(r.status == KV_OK && bytes_equal(r.value, "x"));
	ck_assert_int_eq(run(s, command(KV_CAS, 1, 4, "a", "y", "z"), 4, &r), KV_APPLIED);
	ck_assert(r.status == KV_CAS_FAILED && bytes_equal(r.value, "x"));
	ck_assert_int_eq(run(s, command(KV_CAS, 1, 5, "a", "x", "z"), 5, &r), KV_APPLIED);
	ck_assert_int_eq(r.status, KV_OK);
	ck_assert_int_eq(run(s, command(KV_CAS, 1, 6, "b", "x", "z"), 6, &r), KV_APPLIED);
	ck_assert_int_eq(r.status, KV_NOT_FOUND);
	ck_assert_int_eq(run(s, command(KV_DELETE, 1, 7, "a", NULL, NULL), 7, &r), KV_APPLIED);
	ck_assert_int_eq(r.status, KV_OK);
	ck_assert_int_eq(run(s, command(KV_DELETE, 1, 8, "a", NULL, NULL), 8, &r), KV_APPLIED);
	ck_assert_int_eq(r.status, KV_NOT_FOUND);
	ck_assert_uint_eq(kv_store_commands(s), 8);
	ck_assert_uint_eq(kv_store_keys(s), 0);
	kv_store_free(s);
}
END_TEST

START_TEST(store_copy)
{
	struct kv_store *s = kv_store_new(3);
	struct kv_reply r;
	ck_assert_int_eq(run(s, command(KV_COPY, 1, 1, "a", "b", NULL), 1, &r), KV_APPLIED);
	ck_assert_int_eq(r.status, KV_NOT_FOUND);
	run(s, command(KV_PUT, 1, 2, "a", "x", NULL), 2, &r);
	ck_assert_int_eq(run(s, command(KV_COPY, 1, 3, "a", "b", NULL), 3, &r), KV_APPLIED);
	ck_assert_int_eq(r.status, KV_OK);
	run(s, command(KV_GET, 1, 4, "b", NULL, NULL), 4, &r);
	ck_assert(r.status == KV_OK && bytes_equal(r.value, "x"));
	ck_assert_int_eq(run(s, command(KV_COPY, 1, 5, "a", "a", NULL), 5, &r), KV_APPLIED);
	run(s, command(KV_GET, 1, 6, "a", NULL, NULL), 6, &r);
	ck_assert(r.status == KV_OK && bytes_equal(r.value, "x"));
	kv_store_free(s);
}
END_TEST

/* A shard refuses keys of other partitions, answered like any result, and nothing changed.
 * ("a" is in partition 1 of 2, "b" and "c" in 0.) */
START_TEST(store_refuses_other_partitions)
{
	struct kv_store *s = kv_store_new(3);
	struct kv_reply r;
	kv_store_set_partition(s, 0, 2);
	ck_assert_int_eq(run(s, command(KV_PUT, 1, 1, "a", "x", NULL), 1, &r), KV_APPLIED);
	ck_assert_int_eq(r.status, KV_WRONG_PARTITION);
	struct kv_bytes key = {(const uint8_t *)"a", 1}, value;
	ck_assert_int_eq(kv_store_get(s, &key, &value), -1);
	ck_assert_uint_eq(kv_store_keys(s), 0);
	ck_assert_int_eq(run(s, command(KV_PUT, 1, 2, "b", "y", NULL), 3, &r), KV_APPLIED);
	ck_assert_int_eq(r.status, KV_OK);
	ck_assert_int_eq(run(s, command(KV_COPY, 1, 3, "b", "a", NULL), 4, &r), KV_APPLIED);
	ck_assert_int_eq(r.status, KV_CROSS_PARTITION);
	ck_assert_int_eq(run(s, command(KV_COPY, 1, 4, "b", "c", NULL), 5, &r), KV_APPLIED);
	ck_assert_int_eq(r.status, KV_OK);
	ck_assert_uint_eq(kv_store_keys(s), 2);
	/* The other shard takes "a", and refuses "b". */
	struct kv_store *s1 = kv_store_new(3);
	kv_store_set_partition(s1, 1, 2);
	ck_assert_int_eq(run(s1, command(KV_PUT, 1, 1, "a", "x", NULL), 1, &r), KV_APPLIED);
	ck_assert_int_eq(r.status, KV_OK);
	ck_assert_int_eq(run(s1, command(KV_GET, 1, 2, "b", NULL, NULL), 2, &r), KV_APPLIED);
	ck_assert_int_eq(r.status, KV_WRONG_PARTITION);
	kv_store_free(s1);
	kv_store_free(s);
}
END_TEST

START_TEST(burn_is_deterministic)
{
	ck_assert_uint_eq(kv_burn(42, 1000), kv_burn(42, 1000));
	ck_assert_uint_ne(kv_burn(42, 1000), kv_burn(42, 1001));
	ck_assert_uint_eq(kv_burn_rounds_for(0), 0);
	ck_assert_uint_ge(kv_burn_rounds_for(1), 1);
}
END_TEST

/* The store applies what it is given (the sessions drop copies before it): the reply names
 * the command's client, sequence number and instance; a local read sees the same table. */
START_TEST(store_replies_and_local_reads)
{
	struct kv_store *s = kv_store_new(3);
	struct kv_reply r;
	run(s, command(KV_PUT, 5, 1, "k", "v1", NULL), 10, &r);
	ck_assert_int_eq(run(s, command(KV_CAS, 5, 2, "k", "v1", "v2"), 11, &r), KV_APPLIED);
	ck_assert(r.status == KV_OK && r.client == 5 && r.seq == 2 && r.iid == 11);
	ck_assert_int_eq(run(s, command(KV_CAS, 5, 2, "k", "v1", "v2"), 12, &r), KV_APPLIED);
	ck_assert(r.status == KV_CAS_FAILED && bytes_equal(r.value, "v2"));
	struct kv_bytes key = {(const uint8_t *)"k", 1}, missing = {(const uint8_t *)"m", 1}, v;
	ck_assert_int_eq(kv_store_get(s, &key, &v), 1);
	ck_assert(bytes_equal(v, "v2"));
	ck_assert_int_eq(kv_store_get(s, &missing, &v), 0);
	ck_assert_uint_eq(kv_store_commands(s), 3);
	kv_store_free(s);
}
END_TEST

START_TEST(store_snapshot_announcements)
{
	struct kv_store *s = kv_store_new(3);
	struct kv_reply r;
	ck_assert_int_eq(run(s, command(KV_SNAPSHOT, 0, 50, NULL, NULL, NULL), 1, &r),
			 KV_ANNOUNCED);
	ck_assert_int_eq(run(s, command(KV_SNAPSHOT, 1, 40, NULL, NULL, NULL), 2, &r),
			 KV_ANNOUNCED);
	ck_assert_uint_eq(kv_store_all_announced(s), 0); /* replica 2 has none */
	run(s, command(KV_SNAPSHOT, 2, 60, NULL, NULL, NULL), 3, &r);
	ck_assert_uint_eq(kv_store_all_announced(s), 40);
	run(s, command(KV_SNAPSHOT, 1, 30, NULL, NULL, NULL), 4, &r); /* late, lower: kept 40 */
	ck_assert_uint_eq(kv_store_announced(s, 1), 40);
	ck_assert_int_eq(run(s, command(KV_SNAPSHOT, 3, 90, NULL, NULL, NULL), 5, &r), KV_INVALID);
	ck_assert_uint_eq(kv_store_announced(s, 3), 0);
	ck_assert_uint_eq(kv_store_commands(s), 0);
	kv_store_free(s);
}
END_TEST

static char *dump_text(const struct kv_store *s)
{
	char *text_buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text_buf, &len);
	ck_assert_int_eq(kv_store_dump(s, f), 0);
	fclose(f);
	return text_buf;
}

START_TEST(store_snapshot_round_trip)
{
	char dir[] = "/tmp/kvstore-test-XXXXXX", path[64], err[256];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	struct kv_store *s = kv_store_new(2), *t;
	struct kv_reply r;
	uint64_t iid = 0;
	uint8_t *mem = NULL, *ses = NULL;
	size_t mem_len = 0, ses_len = 0;
	ck_assert_ptr_null(
	    kv_store_load(dir, 2, &iid, &mem, &mem_len, &ses, &ses_len, err, sizeof(err)));
	ck_assert_str_eq(err, ""); /* no snapshot is not an error */
	for (int i = 0; i < 500; i++) {
		char k[16], v[16];
		snprintf(k, sizeof(k), "key%d", i);
		snprintf(v, sizeof(v), "v%c%d", i % 7 ? 'x' : ' ', i);
		run(s, command(KV_PUT, (uint64_t)i % 3, (uint64_t)i + 1, k, v, NULL),
		    (uint64_t)i + 1, &r);
	}
	run(s, command(KV_SNAPSHOT, 1, 321, NULL, NULL, NULL), 501, &r);
	uint64_t generation = 99;
	ck_assert(!kv_store_generation(s, &generation));
	kv_store_set_generation(s, 3);
	ck_assert_int_eq(
	    kv_store_save(s, dir, 501, NULL, 0, (const uint8_t *)"SESSIONS", 8, err, sizeof(err)),
	    0);
	t = kv_store_load(dir, 2, &iid, &mem, &mem_len, &ses, &ses_len, err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	ck_assert_uint_eq(iid, 501);
	/* The log it was built from rides along. */
	ck_assert(kv_store_generation(t, &generation));
	ck_assert_uint_eq(generation, 3);
	char *a = dump_text(s), *b = dump_text(t);
	ck_assert_str_eq(a, b);
	ck_assert_uint_eq(kv_store_announced(t, 1), 321);
	/* The session table rides along, as bytes the store does not read. */
	ck_assert_uint_eq(ses_len, 8);
	ck_assert_mem_eq(ses, "SESSIONS", 8);
	free(ses);
	free(a);
	free(b);
	kv_store_free(t);

	ck_assert_ptr_null(
	    kv_store_load(dir, 3, &iid, &mem, &mem_len, &ses, &ses_len, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "another number of replicas"));
	/* A damaged byte anywhere is caught. */
	snprintf(path, sizeof(path), "%s/snapshot", dir);
	FILE *f = fopen(path, "r+b");
	fseek(f, 100, SEEK_SET);
	int c = fgetc(f);
	fseek(f, 100, SEEK_SET);
	fputc(c ^ 1, f);
	fclose(f);
	ck_assert_ptr_null(
	    kv_store_load(dir, 2, &iid, &mem, &mem_len, &ses, &ses_len, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "damaged"));
	ck_assert_int_eq(truncate(path, 5), 0);
	ck_assert_ptr_null(
	    kv_store_load(dir, 2, &iid, &mem, &mem_len, &ses, &ses_len, err, sizeof(err)));
	ck_assert_str_ne(err, "");
	unlink(path);

	/* The replica's configuration history rides along, as bytes the store does not read. */
	uint8_t history[300];
	for (size_t i = 0; i < sizeof(history); i++)
		history[i] = (uint8_t)(i * 7);
	ck_assert_int_eq(
	    kv_store_save(s, dir, 777, history, sizeof(history), NULL, 0, err, sizeof(err)), 0);
	t = kv_store_load(dir, 2, &iid, &mem, &mem_len, &ses, &ses_len, err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	ck_assert_uint_eq(iid, 777);
	ck_assert_uint_eq(mem_len, sizeof(history));
	ck_assert_mem_eq(mem, history, sizeof(history));
	ck_assert_ptr_null(ses);
	a = dump_text(s);
	b = dump_text(t);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	free(mem);
	kv_store_free(t);
	/* Damaged inside the history: caught like any byte. */
	f = fopen(path, "r+b");
	fseek(f, 8 + 8 + 4 + 8 + 8 + 2 * 8 + 4 + 10, SEEK_SET);
	c = fgetc(f);
	fseek(f, -1, SEEK_CUR);
	fputc(c ^ 1, f);
	fclose(f);
	ck_assert_ptr_null(
	    kv_store_load(dir, 2, &iid, &mem, &mem_len, &ses, &ses_len, err, sizeof(err)));
	ck_assert_ptr_null(mem);
	ck_assert_ptr_nonnull(strstr(err, "damaged"));
	/* Too long a history is refused before anything is written. */
	static uint8_t huge[5000];
	ck_assert_int_ne(kv_store_save(s, dir, 778, huge, sizeof(huge), NULL, 0, err, sizeof(err)),
			 0);
	unlink(path);
	rmdir(dir);
	kv_store_free(s);
}
END_TEST

static int load_text(struct kv_config *c, const char *content, char *err, size_t errlen)
{
	char path[] = "/tmp/kvstore-conf-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, content, strlen(content)), (int)strlen(content));
	close(fd);
	kv_config_defaults(c);
	int rc = kv_config_load(c, path, err, errlen);
	unlink(path);
	return rc;
}

START_TEST(config_parses_and_refuses)
{
	struct kv_config c;
	char err[256];
	ck_assert_int_eq(load_text(&c,
				   "# comment\nreply-group 239.1.2.3:9000\nreplicas 5\n"
				   "snapshot-every 0  # never\ntrim own\nresubmit-ms 20\n"
				   "session-clients 10\nread-port 9100\n",
				   err, sizeof(err)),
			 0);
	ck_assert_uint_eq(c.replicas, 5);
	ck_assert_uint_eq(c.snapshot_every, 0);
	ck_assert_int_eq(c.trim, KV_TRIM_OWN);
	ck_assert_uint_eq(c.resubmit_ms, 20);
	ck_assert_uint_eq(c.session_clients, 10);
	ck_assert_uint_eq(c.read_port, 9100);
	ck_assert_uint_eq(ntohs(c.reply_group.sin_port), 9000);
	static const char *const bad[] = {"replicas 0\n",
					  "replicas 101\n",
					  "trim some\n",
					  "reply-group 10.0.0.1:7000\n",
					  "reply-group 239.1.1.1\n",
					  "resubmit-ms -1\n",
					  "session-clients 0\n",
					  "session-clients many\n",
					  "read-port 70000\n",
					  "colour blue\n",
					  "replicas 3 4\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char content[128];
		snprintf(content, sizeof(content), "\n%s", bad[i]);
		ck_assert_int_eq(load_text(&c, content, err, sizeof(err)), -1);
		ck_assert_msg(strstr(err, ":2: ") != NULL, "%s: %s", bad[i], err);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kvstore");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, command_round_trip);
	tcase_add_test(tc, command_decode_refuses_garbage);
	tcase_add_test(tc, reply_round_trip);
	tcase_add_test(tc, new_leader_notice_round_trip);
	tcase_add_test(tc, shard_hash_is_stable);
	tcase_add_test(tc, shard_routes_commands);
	tcase_add_test(tc, store_operations);
	tcase_add_test(tc, store_copy);
	tcase_add_test(tc, store_refuses_other_partitions);
	tcase_add_test(tc, burn_is_deterministic);
	tcase_add_test(tc, store_replies_and_local_reads);
	tcase_add_test(tc, store_snapshot_announcements);
	tcase_add_test(tc, store_snapshot_round_trip);
	tcase_add_test(tc, config_parses_and_refuses);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
