/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A chosen membership change is kept (DIR/membership in every membership directory) on a
 * thread, not on the event loop: a loaded disk can take seconds to flush a file, and a
 * proposer whose loop waits for it sends no heartbeat, renews no subscription and reads no
 * datagram meanwhile, and every proposer keeps the same change at the same moment. The
 * learner holds after the change (paxos_learner_options.hold_changes) and the rest of its
 * delivery waits here, so nothing acts on a configuration a restart would not know, as when
 * the write was made on the loop; the loop itself goes on.
 */
#include "log_line.h"
#include "parts.h"

#include <stdlib.h>
#include <string.h>

#include "flusher.h"
#include "membership_file.h"

/* The longest membership command a delivery carries (lib/core/membership.c). */
#define DEFERRED_VALUE_MAX 64

struct node_keeper {
	struct paxos_node *n;
	struct storage_flusher flusher;
	struct event *ev; /* the flusher's wake-up */
	/* The job, made on the loop and read by the thread while it runs. */
	char text[MEMBERSHIP_TEXT_MAX];
	size_t len;
	uint32_t dir_count;
	uint32_t id; /* the configuration being kept */
	/* The delivery that waits for it (node_learner.c); deferred false: none, or dropped by
	 * a new log. */
	bool running, deferred;
	paxos_iid iid;
	paxos_ballot ballot;
	uint8_t value[DEFERRED_VALUE_MAX];
	size_t value_len;
	node_kept_fn kept; /* told the result, on the loop */
	/* The finished job's result, collected on the loop (finish). */
	bool done;
	int rc;
	char err[FLUSHER_ERROR_MAX];
};

/* On the thread: the text to every directory the job named. */
static int write_all(void *arg, char *err, size_t errlen)
{
	struct node_keeper *k = arg;
	for (uint32_t d = 0; d < k->dir_count; d++) {
		int rc = paxos_membership_file_write_text(k->n->mship.dirs[d], k->text, k->len, err,
							  errlen);
		if (rc != PAXOS_OK)
			return rc;
	}
	return PAXOS_OK;
}

static void finish(void *arg, int rc, const char *err)
{
	struct node_keeper *k = arg;
	k->done = true;
	k->rc = rc;
	snprintf(k->err, sizeof(k->err), "%s", err);
}

static const struct storage_flusher_ops keeper_ops = {.flush = write_all, .finish = finish};

/* The job collected: whoever asked for it acts on the change, then delivers what followed. */
static void collected(struct node_keeper *k)
{
	struct paxos_node *n = k->n;
	k->done = false;
	k->running = false;
	if (k->rc != PAXOS_OK)
		node_set_error(n, "%s", k->err);
	struct node_keep_result r = {.id = k->id,
				     .iid = k->iid,
				     .value = {k->value, (uint32_t)k->value_len},
				     .ballot = k->ballot,
				     .ok = k->rc == PAXOS_OK,
				     .deferred = k->deferred};
	k->deferred = false;
	k->kept(n, &r);
}

static void on_kept(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct node_keeper *k = arg;
	storage_flusher_sync(&k->flusher, false, NULL);
	if (k->done)
		collected(k);
}

static struct node_keeper *keeper(struct paxos_node *n)
{
	struct node_keeper *k = n->mship.keeper;
	if (k)
		return k;
	char err[256];
	k = calloc(1, sizeof(*k));
	if (!k) {
		node_set_error(n, "no memory to keep the membership history");
		return NULL;
	}
	k->n = n;
	if (storage_flusher_start(&k->flusher, &keeper_ops, k, err, sizeof(err)) != PAXOS_OK) {
		node_set_error(n, "membership history: %s", err);
		free(k);
		return NULL;
	}
	k->ev =
	    event_new(n->base, storage_flusher_fd(&k->flusher), EV_READ | EV_PERSIST, on_kept, k);
	if (!k->ev || event_add(k->ev, NULL) != 0) {
		if (k->ev)
			event_free(k->ev);
		storage_flusher_stop(&k->flusher);
		free(k);
		node_set_error(n, "cannot add the membership history's writes to the event loop");
		return NULL;
	}
	n->mship.keeper = k;
	return k;
}

int node_keeper_start(struct paxos_node *n, paxos_iid iid, const struct paxos_value *v,
		      paxos_ballot ballot, node_kept_fn kept)
{
	if (!v || v->len > DEFERRED_VALUE_MAX || !kept)
		return PAXOS_E_INVALID;
	struct node_keeper *k = keeper(n);
	if (!k)
		return PAXOS_E_NOMEM;
	if (k->running) /* the learner holds after each change: one at a time */
		return PAXOS_E_INVALID;
	k->len = paxos_membership_file_format(n->membership, k->text, sizeof(k->text));
	k->dir_count = n->mship.dir_count;
	k->id = paxos_membership_latest(n->membership)->id;
	k->iid = iid;
	k->ballot = ballot;
	memcpy(k->value, v->data, v->len);
	k->value_len = v->len;
	k->kept = kept;
	if (storage_flusher_commit(&k->flusher, 1, false) != PAXOS_OK)
		return PAXOS_E_IO; /* an earlier job failed: the node stopped then */
	k->running = k->deferred = true;
	storage_flusher_sync(&k->flusher, false, NULL);
	return PAXOS_OK;
}

void node_keeper_drop_deferred(struct paxos_node *n)
{
	if (n->mship.keeper)
		n->mship.keeper->deferred = false;
}

void node_keeper_wait(struct paxos_node *n)
{
	struct node_keeper *k = n->mship.keeper;
	if (!k || !k->running)
		return;
	storage_flusher_sync(&k->flusher, true, NULL);
	/* Collected here, acted on from the loop: the caller is in the middle of its own. */
	event_active(k->ev, EV_READ, 0);
}

void node_keeper_free(struct paxos_node *n)
{
	struct node_keeper *k = n->mship.keeper;
	if (!k)
		return;
	storage_flusher_stop(&k->flusher);
	event_free(k->ev);
	free(k);
	n->mship.keeper = NULL;
}
