/* SPDX-License-Identifier: BSD-3-Clause */
/* The paxos.conf key table (config_keys.h): every key, its type, range, field and default. */
#include "config_keys.h"

#include <paxos/acceptor.h>
#include <paxos/storage_backends.h>

#include <string.h>

/* Indexed by enum paxos_learner_start. */
static const char *const learner_start_names[] = {"first", "current", NULL};
/* Indexed by enum paxos_election_mode. */
static const char *const election_names[] = {"auto", "manual", NULL};
static const char *const auth_mac_names[] = {"auto", "aes256-gcm", "chacha20-poly1305", NULL};
/* Indexed by enum paxos_transport_kind. */
static const char *const transport_names[] = {"multicast", "unicast", NULL};
/* Indexed by enum paxos_flush_thread. */
static const char *const flush_thread_names[] = {"auto", "yes", "no", NULL};
/* KEY_ENUM fields are stored as int: every enum of the configuration is int-sized. */
_Static_assert(sizeof(enum paxos_learner_start) == sizeof(int) &&
		   sizeof(enum paxos_election_mode) == sizeof(int) &&
		   sizeof(enum paxos_transport_kind) == sizeof(int) &&
		   sizeof(enum paxos_flush_thread) == sizeof(int),
	       "enum fields are int-sized");

const struct config_key config_keys[] = {
    {"transport", KEY_ENUM, FIELD(transport), 0, 0, "multicast", transport_names},
    /* Members' unicast addresses: the range is the id's; ids must also be below the counts. */
    {"acceptor", KEY_MEMBER, FIELD(acceptor_address), 0, PAXOS_MAX_ACCEPTORS - 1, NULL, NULL},
    {"proposer", KEY_MEMBER, FIELD(proposer_address), 0, PAXOS_MAX_PROPOSERS - 1, NULL, NULL},
    {"subscription-lease-ms", KEY_U32, FIELD(subscription_lease_ms), 100, 600000, "3000", NULL},
    {"acceptors-group", KEY_GROUP, FIELD(groups[PAXOS_GROUP_ACCEPTORS]), 0, 0, "239.255.11.1:7101",
     NULL},
    {"proposers-group", KEY_GROUP, FIELD(groups[PAXOS_GROUP_PROPOSERS]), 0, 0, "239.255.11.2:7102",
     NULL},
    {"learners-group", KEY_GROUP, FIELD(groups[PAXOS_GROUP_LEARNERS]), 0, 0, "239.255.11.3:7103",
     NULL},
    {"submit-group", KEY_GROUP, FIELD(groups[PAXOS_GROUP_SUBMIT]), 0, 0, "239.255.11.4:7104", NULL},
    {"votes-group", KEY_GROUP, FIELD(groups[PAXOS_GROUP_VOTES]), 0, 0, "239.255.11.6:7106", NULL},
    {"multicast-interface", KEY_IPV4, FIELD(multicast_interface), 0, 0, "127.0.0.1", NULL},
    {"multicast-ttl", KEY_U32, FIELD(multicast_ttl), 0, 255, "0", NULL},
    {"max-datagram", KEY_U32, FIELD(max_datagram), 512, 65507, "8192", NULL},
    {"socket-buffer", KEY_U32, FIELD(socket_buffer), 65536, 268435456, "4194304", NULL},
    {"acceptors", KEY_U32, FIELD(acceptors), 1, PAXOS_MAX_ACCEPTORS, "3", NULL},
    {"proposers", KEY_U32, FIELD(proposers), 1, PAXOS_MAX_PROPOSERS, "2", NULL},
    /* At most acceptors, and only with membership-alpha: checked once the file is read. */
    {"membership-alpha", KEY_U32, FIELD(membership_alpha), 0, 1048576, "0", NULL},
    {"initial-members", KEY_U32, FIELD(initial_members), 0, PAXOS_MAX_ACCEPTORS, "0", NULL},
    /* At most proposers, and only with membership-alpha: checked once the file is read. */
    {"initial-proposers", KEY_U32, FIELD(initial_proposers), 0, PAXOS_MAX_PROPOSERS, "0", NULL},
    /* Every partition's ports must be free of the others': checked once the file is read. */
    {"partitions", KEY_U32, FIELD(partitions), 1, PAXOS_MAX_PARTITIONS, "1", NULL},
    {"partition-acceptors", KEY_PARTSET, FIELD(partition_acceptors), 0, 0, "all", NULL},
    {"learner-merge", KEY_BOOL, FIELD(learner_merge), 0, 0, "no", NULL},
    {"merge-segment", KEY_U32, FIELD(merge_segment), 1, 1048576, "64", NULL},
    {"merge-skip-ms", KEY_U32, FIELD(merge_skip_ms), 1, 600000, "5", NULL},
    /* The upper bound depends on proposers: checked once the whole file is read. */
    {"leader", KEY_U32, FIELD(leader), 0, PAXOS_MAX_PROPOSERS - 1, "0", NULL},
    {"election", KEY_ENUM, FIELD(election), 0, 0, "auto", election_names},
    /* The timeout must exceed the interval: checked once the whole file is read. */
    {"heartbeat-interval-ms", KEY_U32, FIELD(heartbeat_interval_ms), 1, 600000, "20", NULL},
    {"heartbeat-timeout-ms", KEY_U32, FIELD(heartbeat_timeout_ms), 1, 600000, "100", NULL},
    {"check-quorum", KEY_BOOL, FIELD(check_quorum), 0, 0, "yes", NULL},
    {"proposer-window", KEY_U32, FIELD(proposer_window), 1, 65536, "128", NULL},
    {"proposer-concurrency", KEY_U32, FIELD(proposer_concurrency), 1, 65536, "64", NULL},
    {"pending-list-size", KEY_U32, FIELD(pending_size), 1, 1048576, "4096", NULL},
    {"value-batch-limit", KEY_U32, FIELD(value_batch_limit), 1, 16384, "64", NULL},
    {"proposer-max-backlog", KEY_U32, FIELD(proposer_max_backlog), 0, 65536, "32", NULL},
    {"phase1-timeout-ms", KEY_U32, FIELD(phase1_timeout_ms), 1, 600000, "20", NULL},
    {"phase2-timeout-ms", KEY_U32, FIELD(phase2_timeout_ms), 1, 600000, "20", NULL},
    {"adaptive-timeouts", KEY_BOOL, FIELD(adaptive_timeouts), 0, 0, "no", NULL},
    {"timeout-floor-ms", KEY_U32, FIELD(timeout_floor_ms), 1, 600000, "10", NULL},
    {"timeout-ceiling-ms", KEY_U32, FIELD(timeout_ceiling_ms), 1, 600000, "2000", NULL},
    {"learner-window", KEY_U32, FIELD(learner_window), 16, 1048576, "4096", NULL},
    {"learner-hole-check-ms", KEY_U32, FIELD(hole_check_ms), 1, 600000, "20", NULL},
    {"learner-repeat-batch", KEY_U32, FIELD(repeat_batch), 1, PAXOS_ACCEPTOR_MAX_REPEAT, "256",
     NULL},
    {"learner-start", KEY_ENUM, FIELD(learner_start), 0, 0, "first", learner_start_names},
    {"acceptor-repeat-ms", KEY_U32, FIELD(acceptor_repeat_ms), 1, 600000, "100", NULL},
    {"spare-acceptors", KEY_BOOL, FIELD(spare_acceptors), 0, 0, "yes", NULL},
    {"counters-interval-ms", KEY_U32, FIELD(counters_interval_ms), 0, 3600000, "1000", NULL},
    {"counters-json", KEY_BOOL, FIELD(counters_json), 0, 0, "no", NULL},
    /* Not set: no metrics server. */
    {"metrics-listen", KEY_LISTEN, FIELD(metrics_listen), 0, 0, NULL, NULL},
    {"storage", KEY_STORAGE, FIELD(storage), 0, 0, "memory", NULL},
    {"storage-path", KEY_PATH, FIELD(storage_path), 0, 0, "/var/tmp/paxos", NULL},
    /* Unset until the whole file is read: the default depends on the backend. */
    {"durability", KEY_DURABILITY, FIELD(durability), 0, 0, NULL, NULL},
    {"lmdb-map-size", KEY_U64, FIELD(lmdb_map_size), 1ull << 20, 1ull << 40, "1073741824", NULL},
    {"storage-fresh", KEY_BOOL, FIELD(storage_fresh), 0, 0, "no", NULL},
    {"storage-flush-thread", KEY_ENUM, FIELD(storage_flush_thread), 0, 0, "auto",
     flush_thread_names},
    {"memory-retention", KEY_U32, FIELD(memory_retention), 0, PAXOS_MEMORY_MAX_RETENTION, "1000000",
     NULL},
    {"learning-acceptors", KEY_BOOL, FIELD(learning_acceptors), 0, 0, "yes", NULL},
    {"snapshot-max-bytes", KEY_U64, FIELD(snapshot_max_bytes), 0, UINT32_MAX, "268435456", NULL},
    /* Not set: datagrams are not authenticated. The file is read when a node starts. */
    {"auth-key-file", KEY_FILE, FIELD(auth_key_file), 0, 0, NULL, NULL},
    {"auth-mac", KEY_ENUM, FIELD(auth_mac), 0, 0, "auto", auth_mac_names},
    /* Not set: no membership change is accepted (membership-alpha). */
    {"admin-key-file", KEY_FILE, FIELD(admin_key_file), 0, 0, NULL, NULL},
};

#define MODE(m) (1u << PAXOS_DURABILITY_##m)

const struct storage_backend config_storage_backends[CONFIG_BACKEND_COUNT] = {
    {"memory", MODE(NONE), PAXOS_DURABILITY_NONE},
    {"lmdb", MODE(NOSYNC) | MODE(SYNC), PAXOS_DURABILITY_SYNC},
    {"bdb", MODE(NOSYNC) | MODE(SYNC) | MODE(INMEMORY_LOG) | MODE(WRITE_NOSYNC) | MODE(DBSYNC),
     PAXOS_DURABILITY_SYNC},
};

const char *const config_bool_names[2] = {"no", "yes"};

const size_t config_key_count = sizeof(config_keys) / sizeof(config_keys[0]);
_Static_assert(sizeof(config_keys) / sizeof(config_keys[0]) <= CONFIG_KEYS_MAX,
	       "CONFIG_KEYS_MAX too small for the key table");

const struct storage_backend *config_find_backend(const char *name)
{
	for (size_t i = 0; i < CONFIG_BACKEND_COUNT; i++)
		if (strcmp(config_storage_backends[i].name, name) == 0)
			return &config_storage_backends[i];
	return NULL;
}

const struct config_key *config_find_key(const char *name)
{
	for (size_t i = 0; i < config_key_count; i++)
		if (strcmp(config_keys[i].name, name) == 0)
			return &config_keys[i];
	return NULL;
}
