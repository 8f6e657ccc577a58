/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The wire codec's unit tests' shared part (test_codec*.c): a decoder set up and torn down
 * around each test, helpers that compare and round-trip messages, sample messages of every
 * type, and datagrams crafted with msgpack's own packer.
 */
#ifndef PAXOS_TEST_CODEC_FIXTURE_H
#define PAXOS_TEST_CODEC_FIXTURE_H

#include <msgpack.h>
#include <stdbool.h>

#include "codec.h"

#define BIG_BUF 65536

/* A raw datagram built with msgpack's own packer, for input our encoder would not make. */
struct craft {
	msgpack_sbuffer sb;
	msgpack_packer pk;
};

extern struct paxos_decoder dec;
void setup(void);
void teardown(void);
extern const struct paxos_header test_header;
bool value_inside(const struct paxos_value *v, const uint8_t *buf, size_t len);
bool value_eq(const struct paxos_value *a, const struct paxos_value *b);
void assert_msg_eq(const struct paxos_message *a, const struct paxos_message *b);
int decode_exact(const uint8_t *src, size_t len, struct paxos_header *h, size_t max,
		 const struct paxos_message *expected, size_t *n);
extern uint64_t rng_state;
uint64_t rng(void);
extern const uint8_t payload[];
struct paxos_value pv(size_t len);
/* One message of each type, SAMPLE_MESSAGES in all, into m; returns how many. */
#define SAMPLE_MESSAGES PAXOS_MSG_TYPE_MAX
size_t sample_messages(struct paxos_message *m);
void roundtrip(const struct paxos_message *m);
void craft_init(struct craft *c);
void craft_header(struct craft *c, uint64_t magic, uint64_t version, uint64_t role,
		  uint64_t sender);
void craft_good_header(struct craft *c);
int craft_decode(struct craft *c, size_t *n);
void craft_expect(struct craft *c, int rc);

#endif
