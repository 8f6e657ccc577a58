/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nfq-delay: delays the packets of one netfilter queue, for kernels without tc netem.
 * An iptables rule (-j NFQUEUE --queue-num Q) hands packets to this program, which accepts
 * each one DELAY +- JITTER ms later (uniform), so packets also get reordered. Talks nfnetlink
 * directly: no library beyond libc. Prints "ready" once bound; stops on SIGTERM or SIGINT.
 * Usage: nfq-delay QUEUE DELAY_MS JITTER_MS
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PENDING 65536u

struct pending {
	uint64_t due_ns;
	uint32_t id; /* network byte order, as the kernel gave it */
};

/* A binary min-heap on due_ns: jitter makes due times arrive out of order. */
static struct pending heap[MAX_PENDING];
static uint32_t heap_len;
static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void heap_swap(uint32_t a, uint32_t b)
{
	struct pending t = heap[a];
	heap[a] = heap[b];
	heap[b] = t;
}

static int heap_push(uint64_t due_ns, uint32_t id)
{
	if (heap_len == MAX_PENDING)
		return -1;
	uint32_t i = heap_len++;
	heap[i] = (struct pending){due_ns, id};
	while (i > 0 && heap[(i - 1) / 2].due_ns > heap[i].due_ns) {
		heap_swap(i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	return 0;
}

static void heap_pop(void)
{
	heap[0] = heap[--heap_len];
	uint32_t i = 0;
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < heap_len && heap[l].due_ns < heap[m].due_ns)
			m = l;
		if (r < heap_len && heap[r].due_ns < heap[m].due_ns)
			m = r;
		if (m == i)
			return;
		heap_swap(i, m);
		i = m;
	}
}

/* put_attr: appends a netlink attribute to the message in buf, returns the new length. */
static size_t put_attr(char *buf, size_t len, uint16_t type, const void *data, uint16_t size)
{
	struct nlattr *a = (struct nlattr *)(buf + len);
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + size);
	memcpy(buf + len + NLA_HDRLEN, data, size);
	return len + NLA_ALIGN(a->nla_len);
}

static size_t put_header(char *buf, uint16_t msg_type, uint16_t flags, uint16_t queue)
{
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	memset(buf, 0, NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg)));
	h->nlmsg_type = (uint16_t)((NFNL_SUBSYS_QUEUE << 8) | msg_type);
	h->nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
	struct nfgenmsg *g = (struct nfgenmsg *)(buf + NLMSG_HDRLEN);
	g->nfgen_family = AF_UNSPEC;
	g->version = NFNETLINK_V0;
	g->res_id = htons(queue);
	return NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
}

static int send_msg(int fd, char *buf, size_t len)
{
	((struct nlmsghdr *)buf)->nlmsg_len = (uint32_t)len;
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	return sendto(fd, buf, len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0 ? -1 : 0;
}

/* wait_ack: the kernel's answer to the last request: 0 or a negative errno. */
static int wait_ack(int fd)
{
	char buf[8192];
	ssize_t n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	if (!NLMSG_OK(h, (size_t)n) || h->nlmsg_type != NLMSG_ERROR)
		return -EPROTO;
	return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
}

static int configure(int fd, uint16_t queue)
{
	char buf[256];
	size_t len = put_header(buf, NFQNL_MSG_CONFIG, NLM_F_ACK, queue);
	struct nfqnl_msg_config_cmd cmd = {.command = NFQNL_CFG_CMD_BIND, .pf = htons(AF_INET)};
	len = put_attr(buf, len, NFQA_CFG_CMD, &cmd, sizeof(cmd));
	if (send_msg(fd, buf, len) < 0)
		return -errno;
	int err = wait_ack(fd);
	if (err != 0)
		return err;
	len = put_header(buf, NFQNL_MSG_CONFIG, NLM_F_ACK, queue);
	/* Metadata only: the verdict needs the packet id, not its bytes. */
	struct nfqnl_msg_config_params params = {.copy_range = 0, .copy_mode = NFQNL_COPY_META};
	len = put_attr(buf, len, NFQA_CFG_PARAMS, &params, sizeof(params));
	uint32_t maxlen = htonl(MAX_PENDING);
	len = put_attr(buf, len, NFQA_CFG_QUEUE_MAXLEN, &maxlen, sizeof(maxlen));
	if (send_msg(fd, buf, len) < 0)
		return -errno;
	return wait_ack(fd);
}

static void accept_packet(int fd, uint16_t queue, uint32_t id)
{
	char buf[128];
	size_t len = put_header(buf, NFQNL_MSG_VERDICT, 0, queue);
	struct nfqnl_msg_verdict_hdr v = {.verdict = htonl(NF_ACCEPT), .id = id};
	len = put_attr(buf, len, NFQA_VERDICT_HDR, &v, sizeof(v));
	if (send_msg(fd, buf, len) < 0)
		perror("nfq-delay: verdict");
}

/* packet_id: the id in a queued-packet message, or -1 if it has none. */
static int packet_id(const struct nlmsghdr *h, uint32_t *id)
{
	if ((h->nlmsg_type & 0xff) != NFQNL_MSG_PACKET ||
	    h->nlmsg_len < NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg)))
		return -1;
	const char *p = (const char *)h + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
	const char *end = (const char *)h + h->nlmsg_len;
	while (p + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
			return -1;
		if ((a->nla_type & NLA_TYPE_MASK) == NFQA_PACKET_HDR &&
		    a->nla_len >= NLA_HDRLEN + sizeof(struct nfqnl_msg_packet_hdr)) {
			struct nfqnl_msg_packet_hdr ph;
			memcpy(&ph, p + NLA_HDRLEN, sizeof(ph));
			*id = ph.packet_id;
			return 0;
		}
		p += NLA_ALIGN(a->nla_len);
	}
	return -1;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: nfq-delay QUEUE DELAY_MS JITTER_MS\n");
		return 2;
	}
	uint16_t queue = (uint16_t)atoi(argv[1]);
	uint64_t delay = (uint64_t)atoi(argv[2]) * 1000000u;
	uint64_t jitter = (uint64_t)atoi(argv[3]) * 1000000u;
	if (jitter > delay)
		jitter = delay;
	srand((unsigned)getpid());

	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	struct sockaddr_nl self = {.nl_family = AF_NETLINK};
	if (fd < 0 || bind(fd, (struct sockaddr *)&self, sizeof(self)) < 0) {
		perror("nfq-delay: netlink socket");
		return 1;
	}
	int big = 16 << 20, one = 1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));
	int err = configure(fd, queue);
	if (err < 0) {
		fprintf(stderr, "nfq-delay: cannot bind queue %u: %s\n", queue, strerror(-err));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);

	static char buf[1 << 16];
	unsigned long delayed = 0, overflow = 0;
	while (!stopping) {
		uint64_t now = now_ns();
		while (heap_len > 0 && heap[0].due_ns <= now) {
			accept_packet(fd, queue, heap[0].id);
			heap_pop();
		}
		int timeout = -1;
		if (heap_len > 0)
			timeout = (int)((heap[0].due_ns - now + 999999) / 1000000);
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (poll(&pfd, 1, timeout) <= 0)
			continue;
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n <= 0)
			continue;
		now = now_ns();
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			uint32_t id;
			if (packet_id(h, &id) < 0)
				continue;
			uint64_t d = delay - jitter;
			if (jitter > 0)
				d += (uint64_t)rand() % (2 * jitter + 1);
			if (heap_push(now + d, id) < 0) {
				accept_packet(fd, queue, id); /* full: let it through undelayed */
				overflow++;
			}
			delayed++;
		}
	}
	fprintf(stderr, "nfq-delay: queue %u: %lu packets delayed, %lu passed undelayed\n", queue,
		delayed, overflow);
	close(fd);
	return 0;
}
