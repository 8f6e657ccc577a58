/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration history a process learned (paxos/membership.h), kept as DIR/membership
 * beside an acceptor's store or a proposer's epoch: a restart goes on from it rather than
 * from paxos.conf's first configuration, which may no longer be the one in force.
 */
#ifndef PAXOS_MEMBERSHIP_FILE_H
#define PAXOS_MEMBERSHIP_FILE_H

#include <paxos/config.h>
#include <paxos/membership.h>

#define MEMBERSHIP_FILE "membership"
/* The file's longest text: the header, PAXOS_MEMBERSHIP_HISTORY lines of at most 66
 * characters and PAXOS_MAX_ACCEPTORS of at most 32. */
#define MEMBERSHIP_TEXT_MAX 4096

/* *m: the history kept in dir (the caller frees it), or NULL when there is no file. A file
 * that is corrupt or made with another alpha is an error, never guessed at. */
int paxos_membership_file_read(const char *dir, uint32_t alpha, struct paxos_membership **m,
			       char *err, size_t errlen);

/* Makes dir (mode 0700) if missing, then replaces the file: temporary file, fsync, rename,
 * fsync of the directory, so a crash leaves the old history or the new one. */
int paxos_membership_file_write(const char *dir, const struct paxos_membership *m, char *err,
				size_t errlen);

/* The file's text for m, written to text (cap at least MEMBERSHIP_TEXT_MAX); its length. */
size_t paxos_membership_file_format(const struct paxos_membership *m, char *text, size_t cap);

/* paxos_membership_file_write with the text made already: what a thread other than the
 * one that owns m can do. */
int paxos_membership_file_write_text(const char *dir, const char *text, size_t len, char *err,
				     size_t errlen);

#endif
