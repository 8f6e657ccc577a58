/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-limit: how many one-datagram multicasts this machine carries per second, sender to
 * receiver, through the same sockets and options libpaxos uses, and what each datagram costs
 * the sending and the receiving process in CPU time. Every benchmark figure can be read
 * against it: a process that receives a value once and sends it once cannot cost less than
 * the sum of the two. The receivers are child processes, as learners would be (one by
 * default; a value's datagram reaches several on one host, and the sender's kernel pays for
 * each copy); all move datagrams in batches (sendmmsg, recvmmsg), as the transports do.
 */
#include <paxos/config.h>

#include "clock.h"
#include "runner.h"
#include "udp.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "config_fields.h"

/* Datagrams per recvmmsg and at most per sendmmsg: the multicast transport's batches. */
#define READ_BATCH 64
#define MAX_SEND_BATCH 32
#define MAX_RECEIVERS 8

struct result {
	volatile uint64_t received;
	volatile uint64_t cpu_us; /* the receiver's user + system time while it received */
	volatile int ready;
};

/* User + system CPU time of this process so far, in microseconds. */
static uint64_t cpu_us(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return (uint64_t)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000u +
	       (uint64_t)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static void receive(int fd, struct result *r, size_t size, paxos_time until)
{
	uint8_t *buf = malloc((size + 1) * READ_BATCH);
	struct mmsghdr hdr[READ_BATCH];
	struct iovec iov[READ_BATCH];
	for (int i = 0; i < READ_BATCH; i++) {
		iov[i] = (struct iovec){buf + (size + 1) * (size_t)i, size + 1};
		hdr[i].msg_hdr = (struct msghdr){.msg_iov = &iov[i], .msg_iovlen = 1};
	}
	uint64_t cpu = cpu_us();
	r->ready = 1;
	while (paxos_now() < until) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 10) <= 0)
			continue;
		int got;
		while ((got = recvmmsg(fd, hdr, READ_BATCH, MSG_DONTWAIT, NULL)) > 0)
			r->received += (uint64_t)got;
	}
	r->cpu_us = cpu_us() - cpu;
	free(buf);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
	    {"config", required_argument, NULL, 'c'},    {"size", required_argument, NULL, 's'},
	    {"seconds", required_argument, NULL, 't'},   {"batch", required_argument, NULL, 'b'},
	    {"receivers", required_argument, NULL, 'r'}, {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},         {NULL, 0, NULL, 0}};
	const char *config = NULL;
	long size = 64;
	double seconds = 2;
	long batch = MAX_SEND_BATCH, receivers = 1;
	int opt;
	while ((opt = getopt_long(argc, argv, "c:s:t:b:r:h", options, NULL)) != -1) {
		if (opt == 'c')
			config = optarg;
		else if (opt == 's')
			size = strtol(optarg, NULL, 10);
		else if (opt == 't')
			seconds = strtod(optarg, NULL);
		else if (opt == 'b')
			batch = strtol(optarg, NULL, 10);
		else if (opt == 'r')
			receivers = strtol(optarg, NULL, 10);
		else if (opt == 'V') {
			paxos_runner_version("paxos-limit");
			return 0;
		} else {
			printf("Usage: paxos-limit -c FILE [--size BYTES] [--seconds S] "
			       "[--batch N] [--receivers R]\n"
			       "Sends one-datagram multicasts to the learners group as fast as it "
			       "can for S seconds,\nN per sendmmsg (default 32, 1..32), to R "
			       "receiving processes (default 1, 1..8), and\nprints what a receiver "
			       "got on average (datagrams/s, MB/s) and the CPU time each\ndatagram "
			       "cost the sender and a receiver.\n"
			       "--version prints the library's version and wire version.\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	struct paxos_config cfg;
	char err[512];
	paxos_config_defaults(&cfg);
	if (!config || paxos_config_load(&cfg, config, err, sizeof(err)) != PAXOS_OK) {
		fprintf(stderr, "paxos-limit: %s\n", config ? err : "-c FILE is required");
		return 2;
	}
	if (size < 1 || size > (long)cfg.max_datagram || seconds <= 0 || seconds > 600 ||
	    batch < 1 || batch > MAX_SEND_BATCH || receivers < 1 || receivers > MAX_RECEIVERS) {
		fprintf(stderr,
			"paxos-limit: size must be 1..%u, seconds 0..600, batch 1..%d, receivers "
			"1..%d\n",
			cfg.max_datagram, MAX_SEND_BATCH, MAX_RECEIVERS);
		return 2;
	}
	int rx[MAX_RECEIVERS];
	for (long i = 0; i < receivers; i++) {
		rx[i] = paxos_transport_receiver(&cfg, PAXOS_GROUP_LEARNERS, err, sizeof(err));
		if (rx[i] < 0) {
			fprintf(stderr, "paxos-limit: %s\n", err);
			return 1;
		}
	}
	int tx = paxos_transport_sender(&cfg, err, sizeof(err));
	if (tx < 0) {
		fprintf(stderr, "paxos-limit: %s\n", err);
		return 1;
	}
	struct result *r = mmap(NULL, sizeof(*r) * (size_t)receivers, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED) {
		perror("paxos-limit: mmap");
		return 1;
	}
	paxos_time start = paxos_now() + 200000, stop = start + (paxos_time)(seconds * 1e6);
	pid_t child[MAX_RECEIVERS];
	for (long i = 0; i < receivers; i++) {
		child[i] = fork();
		if (child[i] < 0) {
			perror("paxos-limit: fork");
			return 1;
		}
		if (child[i] == 0) {
			close(tx);
			receive(rx[i], &r[i], (size_t)size, stop + 100000);
			_exit(0);
		}
		close(rx[i]);
	}
	for (long i = 0; i < receivers; i++)
		while (!r[i].ready)
			usleep(1000);
	uint8_t *buf = calloc(1, (size_t)size);
	struct sockaddr_in to;
	paxos_transport_address(&cfg, PAXOS_GROUP_LEARNERS, &to);
	struct mmsghdr hdr[MAX_SEND_BATCH];
	struct iovec iov = {buf, (size_t)size};
	for (int i = 0; i < MAX_SEND_BATCH; i++)
		hdr[i].msg_hdr = (struct msghdr){
		    .msg_name = &to, .msg_namelen = sizeof(to), .msg_iov = &iov, .msg_iovlen = 1};
	uint64_t sent = 0, refused = 0;
	while (paxos_now() < start)
		;
	uint64_t cpu = cpu_us();
	while (paxos_now() < stop) {
		int n = sendmmsg(tx, hdr, (unsigned)batch, 0);
		if (n < 0)
			refused++; /* the first of the batch; the rest go again */
		else
			sent += (uint64_t)n;
	}
	cpu = cpu_us() - cpu;
	uint64_t received = 0, receiver_cpu = 0;
	for (long i = 0; i < receivers; i++) {
		waitpid(child[i], NULL, 0);
		received += r[i].received;
		receiver_cpu += r[i].cpu_us;
	}
	double secs = (double)(stop - start) / 1e6;
	/* A receiver's figures are the average over the receivers. */
	double got = (double)received / (double)receivers;
	printf("size %ld B: sent %.0f datagrams/s, received %.0f datagrams/s = %.1f MB/s "
	       "(%llu refused by the socket); CPU per datagram: sender %.3f us, receiver %.3f "
	       "us\n",
	       size, (double)sent / secs, got / secs, got * (double)size / secs / 1e6,
	       (unsigned long long)refused, sent ? (double)cpu / (double)sent : 0.0,
	       received ? (double)receiver_cpu / (double)received : 0.0);
	free(buf);
	return 0;
}
