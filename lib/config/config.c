/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos.conf parser: the file read, split into lines and tokens. Every key is one row of a
 * table (type, range, field, default: config_keys.c), so adding a key means adding a row; a
 * key's value is read in config_values.c, the checks across keys are in config_checks.c. The
 * parser reads a length-bounded buffer (it never looks for a terminating NUL) and stops at the
 * first error, leaving the caller's configuration untouched.
 */
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
		return config_error(p, p->line, NULL, "line is longer than %d characters",
				    CONFIG_MAX_LINE);
	if (memchr(line, '\0', len))
		return config_error(p, p->line, NULL, "line contains a NUL byte");
	memcpy(buf, line, len);
	buf[len] = '\0';
	hash = strchr(buf, '#');
	if (hash)
		*hash = '\0';

	n = split_tokens(buf, tokens, 4);
	if (n == 0)
		return PAXOS_OK;
	const struct config_key *key = config_find_key(tokens[0]);
	if (!key)
		return config_error(p, p->line, NULL, "unknown key '%.*s'", CONFIG_QUOTE_MAX,
				    tokens[0]);
	size_t k = (size_t)(key - config_keys);
	if (key->type == KEY_MEMBER) {
		int rc = config_parse_member(p, key, tokens + 1, n - 1);
		if (rc == PAXOS_OK && !p->set_on_line[k])
			p->set_on_line[k] = p->line;
		return rc;
	}
	if (p->set_on_line[k])
		return config_error(p, p->line, key, "already set on line %u", p->set_on_line[k]);
	if (n == 1) {
		config_describe_expected(key, expected, sizeof(expected));
		return config_error(p, p->line, key, "missing value (expected %s)", expected);
	}
	if (n > 2)
		return config_error(p, p->line, key, "unexpected '%.*s' after the value",
				    CONFIG_QUOTE_MAX, n > 3 ? "..." : tokens[2]);
	int rc = config_apply_value(p, key, tokens[1]);
	if (rc != PAXOS_OK)
		return rc;
	p->set_on_line[k] = p->line;
	return PAXOS_OK;
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
	for (size_t i = 0; i < config_key_count; i++)
		if (config_keys[i].default_text)
			config_apply_value(&p, &config_keys[i], config_keys[i].default_text);
	config_resolve_durability(&p);
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
	rc = config_check_cross(&p);
	if (rc != PAXOS_OK)
		return rc;
	*cfg = p.cfg;
	paxos_error_format(err, errlen, "%s", "");
	return PAXOS_OK;
}

/* Reads at most CONFIG_MAX_FILE bytes of path, a regular file, into *text (malloc'd). Opened
 * without blocking and checked on the open file: a FIFO never holds the start up, and
 * /dev/zero is refused, not read for ever. */
static int read_config_file(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		paxos_error_format(err, errlen, "%s: %s", path, strerror(errno));
		return PAXOS_E_IO;
	}
	struct stat st;
	int rc = PAXOS_OK;
	if (fstat(fd, &st) != 0) {
		paxos_error_format(err, errlen, "%s: %s", path, strerror(errno));
		rc = PAXOS_E_IO;
	} else if (S_ISDIR(st.st_mode)) {
		paxos_error_format(err, errlen, "%s: %s", path, strerror(EISDIR));
		rc = PAXOS_E_IO;
	} else if (!S_ISREG(st.st_mode)) {
		paxos_error_format(
		    err, errlen,
		    "%s: is not a regular file; a configuration is a text file of at "
		    "most %u bytes",
		    path, CONFIG_MAX_FILE);
		rc = PAXOS_E_IO;
	} else if (st.st_size > CONFIG_MAX_FILE) {
		paxos_error_format(err, errlen,
				   "%s: holds %lld bytes; a configuration is at most %u bytes",
				   path, (long long)st.st_size, CONFIG_MAX_FILE);
		rc = PAXOS_E_CONFIG;
	}
	char *buf = rc == PAXOS_OK ? malloc((size_t)CONFIG_MAX_FILE + 1) : NULL;
	size_t got = 0;
	if (rc == PAXOS_OK && !buf) {
		paxos_error_format(err, errlen, "%s: %s", path, strerror(ENOMEM));
		rc = PAXOS_E_NOMEM;
	}
	while (rc == PAXOS_OK && got <= CONFIG_MAX_FILE) {
		ssize_t n = read(fd, buf + got, (size_t)CONFIG_MAX_FILE + 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			paxos_error_format(err, errlen, "%s: %s", path, strerror(errno));
			rc = PAXOS_E_IO;
		} else if (n == 0) {
			break;
		}
		got += n > 0 ? (size_t)n : 0;
	}
	if (rc == PAXOS_OK && got > CONFIG_MAX_FILE) { /* it grew while it was read */
		paxos_error_format(err, errlen,
				   "%s: holds more than %u bytes, the most a "
				   "configuration may",
				   path, CONFIG_MAX_FILE);
		rc = PAXOS_E_CONFIG;
	}
	close(fd);
	if (rc != PAXOS_OK) {
		free(buf);
		return rc;
	}
	*text = buf;
	*len = got;
	return PAXOS_OK;
}

int paxos_config_load(struct paxos_config *cfg, const char *path, char *err, size_t errlen)
{
	if (!cfg || !path) {
		paxos_error_format(err, errlen, "invalid arguments");
		return PAXOS_E_INVALID;
	}
	char *text = NULL;
	size_t len = 0;
	int rc = read_config_file(path, &text, &len, err, errlen);
	if (rc != PAXOS_OK)
		return rc;
	rc = paxos_config_parse(cfg, text, len, path, err, errlen);
	free(text);
	return rc;
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
		return config_error(&p, 1, config_find_key(key), "'%.*s' is not a value",
				    CONFIG_QUOTE_MAX, value);
	if (strcmp(key, "storage") == 0)
		p.cfg.durability = PAXOS_DURABILITY_UNSET; /* the new backend's default */
	int rc = parse_line(&p, line, (size_t)len);
	if (rc == PAXOS_OK)
		rc = config_check_cross(&p);
	if (rc != PAXOS_OK)
		return rc;
	*cfg = p.cfg;
	paxos_error_format(err, errlen, "%s", "");
	return PAXOS_OK;
}
