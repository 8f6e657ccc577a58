/* SPDX-License-Identifier: BSD-3-Clause */
/* What the paxos.conf parser's tests share (tests/unit/test_config*.c): parsing text, comparing
 * configurations, expecting errors, and the repository's files. */
#ifndef PAXOS_TEST_CONFIG_FIXTURE_H
#define PAXOS_TEST_CONFIG_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config_fields.h"

/* The last parse's error message. */
extern char parse_err[512];

/* Parses text as the file "test.conf" into cfg; the status. */
int parse(struct paxos_config *cfg, const char *text);
/* Field by field (struct copies need not preserve padding, so memcmp would lie). */
bool config_equal(const struct paxos_config *a, const struct paxos_config *b);
void expect_endpoint(const struct paxos_endpoint *e, const char *addr, uint16_t port);
/* Parses text, expects PAXOS_E_CONFIG and exactly the error message want. */
void expect_error(const char *text, const char *want);
/* Parses text, expects PAXOS_E_CONFIG with an error that starts with prefix. */
void expect_error_prefix(const char *text, const char *prefix);
/* The repository root: $PAXOS_SOURCE_DIR, else three levels up from this file. */
void source_path(char *out, size_t cap, const char *relative);

#endif
