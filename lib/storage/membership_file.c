/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DIR/membership, in words an operator can read:
 *   paxos-membership 2
 *   alpha 256
 *   applied 457
 *   configuration ID FIRST MEMBERS PROPOSERS   (one line each, oldest first; the sets in
 *                                               hexadecimal, one bit per id)
 *   address ID ADDR PORT   (after them, one line per acceptor whose unicast address a command
 *                           carried; ADDR in hexadecimal, network byte order)
 * Format 1 had no PROPOSERS: every proposer.
 */
#include "membership_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "storage_backend.h"

#define MEMBERSHIP_TEMP "membership.tmp"
#define MEMBERSHIP_FORMAT 2
#define TEXT_MAX MEMBERSHIP_TEXT_MAX

static int corrupt(const char *path, const char *why, char *err, size_t errlen)
{
	paxos_error_format(err, errlen,
			   "corrupt %s: %s; restore it, or delete it to start from paxos.conf's "
			   "first configuration (the process then learns the current one from the "
			   "log again)",
			   path, why);
	return PAXOS_E_STORAGE;
}

/* Parses text into *m. */
static int parse(const char *path, char *text, uint32_t alpha, struct paxos_membership **m,
		 char *err, size_t errlen)
{
	struct paxos_configuration c[PAXOS_MEMBERSHIP_HISTORY];
	uint32_t format = 0, file_alpha = 0, count = 0, naddr = 0;
	uint32_t addr_id[PAXOS_MAX_ACCEPTORS], addr[PAXOS_MAX_ACCEPTORS];
	uint16_t port[PAXOS_MAX_ACCEPTORS];
	uint64_t applied = 0;
	int used = 0;
	if (sscanf(text, "paxos-membership %" SCNu32 "\nalpha %" SCNu32 "\napplied %" SCNu64 "\n%n",
		   &format, &file_alpha, &applied, &used) != 3 ||
	    used == 0)
		return corrupt(path, "no header", err, errlen);
	if (format != 1 && format != MEMBERSHIP_FORMAT)
		return corrupt(path, "an unknown format", err, errlen);
	for (char *p = text + used; *p; p += used) {
		uint32_t id, members, proposers = UINT32_MAX;
		uint64_t first;
		used = 0;
		unsigned short p16 = 0;
		if (strncmp(p, "address ", 8) == 0) {
			if (naddr == PAXOS_MAX_ACCEPTORS ||
			    sscanf(p, "address %" SCNu32 " %" SCNx32 " %hu\n%n", &addr_id[naddr],
				   &addr[naddr], &p16, &used) != 3 ||
			    used == 0 || addr_id[naddr] >= PAXOS_MAX_ACCEPTORS || p16 == 0)
				return corrupt(path, "an address line that names no acceptor", err,
					       errlen);
			port[naddr++] = p16;
			continue;
		}
		int fields =
		    count == PAXOS_MEMBERSHIP_HISTORY ? 0
		    : format == 1
			? sscanf(p, "configuration %" SCNu32 " %" SCNu64 " %" SCNx32 "\n%n", &id,
				 &first, &members, &used) +
			      1
			: sscanf(p,
				 "configuration %" SCNu32 " %" SCNu64 " %" SCNx32 " %" SCNx32
				 "\n%n",
				 &id, &first, &members, &proposers, &used);
		if (fields != 4 || used == 0)
			return corrupt(path, "a line that is no configuration", err, errlen);
		c[count++] = (struct paxos_configuration){
		    .first = first, .id = id, .members = members, .proposers = proposers};
	}
	if (file_alpha != alpha) {
		paxos_error_format(
		    err, errlen,
		    "%s was learned with membership-alpha %u, paxos.conf says %u: every "
		    "process of a cluster needs the same",
		    path, file_alpha, alpha);
		return PAXOS_E_INVALID;
	}
	*m = paxos_membership_restore(c, count, applied, alpha);
	if (!*m)
		return corrupt(path, "not a history of changes", err, errlen);
	for (uint32_t k = 0; k < naddr; k++)
		paxos_membership_set_address(*m, addr_id[k], addr[k], port[k]);
	return PAXOS_OK;
}

int paxos_membership_file_read(const char *dir, uint32_t alpha, struct paxos_membership **m,
			       char *err, size_t errlen)
{
	char path[PAXOS_PATH_MAX + 64], text[TEXT_MAX + 1];
	*m = NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, MEMBERSHIP_FILE);
	size_t n;
	bool missing;
	int rc = storage_read_small(-1, dir, MEMBERSHIP_FILE, text, sizeof(text), &n, &missing, err,
				    errlen);
	if (rc != PAXOS_OK || missing)
		return rc;
	if (n == TEXT_MAX)
		return corrupt(path, "too long", err, errlen);
	return parse(path, text, alpha, m, err, errlen);
}

size_t paxos_membership_file_format(const struct paxos_membership *m, char *text, size_t cap)
{
	uint32_t count;
	const struct paxos_configuration *c = paxos_membership_history(m, &count);
	int len =
	    snprintf(text, cap, "paxos-membership %d\nalpha %" PRIu32 "\napplied %" PRIu64 "\n",
		     MEMBERSHIP_FORMAT, paxos_membership_alpha(m), paxos_membership_applied(m));
	for (uint32_t k = 0; k < count; k++)
		len +=
		    snprintf(text + len, cap - (size_t)len,
			     "configuration %" PRIu32 " %" PRIu64 " 0x%" PRIx32 " 0x%" PRIx32 "\n",
			     c[k].id, c[k].first, c[k].members, c[k].proposers);
	for (uint32_t id = 0; id < PAXOS_MAX_ACCEPTORS; id++) {
		uint32_t addr;
		uint16_t port;
		if (paxos_membership_address(m, id, &addr, &port))
			len += snprintf(text + len, cap - (size_t)len,
					"address %" PRIu32 " 0x%" PRIx32 " %u\n", id, addr,
					(unsigned)port);
	}
	return (size_t)len;
}

int paxos_membership_file_write_text(const char *dir, const char *text, size_t len, char *err,
				     size_t errlen)
{
	if (storage_make_dirs(dir, err, errlen) != PAXOS_OK)
		return PAXOS_E_IO;
	return storage_replace_in_dir(dir, MEMBERSHIP_FILE, MEMBERSHIP_TEMP, text, len, err,
				      errlen);
}

int paxos_membership_file_write(const char *dir, const struct paxos_membership *m, char *err,
				size_t errlen)
{
	char text[MEMBERSHIP_TEXT_MAX];
	size_t len = paxos_membership_file_format(m, text, sizeof(text));
	return paxos_membership_file_write_text(dir, text, len, err, errlen);
}
