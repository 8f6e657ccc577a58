/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The core kit: the I/O-free protocol cores (acceptor, proposer with its election, learner,
 * serializer), the messages they exchange and the storage interface the acceptor uses. For
 * programs that drive the cores themselves (a simulator, another event loop, an accelerated
 * transport) instead of through a node; applications include paxos/paxos.h.
 */
#ifndef PAXOS_CORE_H
#define PAXOS_CORE_H

#include <paxos/acceptor.h>
#include <paxos/election.h>
#include <paxos/learner.h>
#include <paxos/message.h>
#include <paxos/options.h> /* the cores' options from a configuration */
#include <paxos/proposer.h>
#include <paxos/serializer.h>
#include <paxos/storage.h>
#include <paxos/types.h>

#endif
