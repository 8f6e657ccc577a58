#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The metrics server under abuse (one acceptor serving /metrics, in a private network
# namespace, with at most 200 file descriptors: it serves 50 connections at once):
#  1. a POST of 200 MiB is refused without being read into memory (it used to be buffered
#     whole: the process grew by the body's size and kept it);
#  2. with its descriptors otherwise exhausted (its limit lowered to 40 above the ones it
#     uses), 300 connections held open: the server must rest rather than spin on accept() (it
#     used to burn a whole CPU and log ~19 MB/s), log a bounded number of lines, and serve
#     /metrics again once the connections are gone;
#  3. 200 connections held open, more than the cap: the server holds 50 of them (its
#     descriptors stay below its idle ones + 50 + a few), says so once, and serves /metrics
#     again once the connections are gone;
#  4. a slow reader of 100 pipelined requests, the last with "Connection: close", gets every
#     reply whole;
#  5. slowloris: 100 connections, each sending one byte of its request every 0.5 s and opening
#     again at once when closed: /health answers within 1 s all along (the cap used to be
#     reached and never released).
# Usage: e2e_metrics_abuse.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
command -v curl >/dev/null || fail "curl not found: install curl (scripts/install-deps.sh)"
command -v python3 >/dev/null || fail "python3 not found"
command -v prlimit >/dev/null || fail "prlimit not found: install util-linux"

CONF=$WORK/paxos.conf
sed -e 's/^acceptors  *[0-9]*/acceptors 1/' -e 's/^proposers  *[0-9]*/proposers 1/' \
	-e 's/^counters-interval-ms .*/counters-interval-ms 0/' "$(base_conf)" >"$CONF"
URL=http://127.0.0.1:9520
(ulimit -n 200 && exec "$BUILD/paxos-acceptor" -c "$CONF" -i 0 --metrics-listen 127.0.0.1:9520) \
	>"$WORK/acceptor.log" 2>&1 &
PID=$!
PIDS="$PIDS $PID"
i=0
until [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/health" || true)" = 200 ]; do
	i=$((i + 1))
	[ "$i" -le 300 ] || fail "the acceptor does not serve /health"
	sleep 0.1
done
kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$PID/status"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$PID/stat"; }
fds() { ls "/proc/$PID/fd" | wc -l; }
IDLE_FDS=$(fds)
# hold N: N connections opened (not all accepted) and held for 4 s, in the background
hold() {
	rm -f "$WORK/hold"
	python3 - "$1" "$WORK/hold" <<'EOF' &
import socket, sys, time
held = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", 9520))
    except BlockingIOError:
        pass
    held.append(s)
open(sys.argv[2], "w").close()
time.sleep(4)
EOF
	HOLDER=$!
	PIDS="$PIDS $HOLDER"
	i=0
	until [ -f "$WORK/hold" ]; do
		i=$((i + 1))
		[ "$i" -le 50 ] || fail "the connections were not opened"
		sleep 0.1
	done
}
# served_again WHEN: /metrics answers again once the held connections are gone
served_again() {
	wait "$HOLDER" || true
	i=0
	until [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "$URL/metrics" || true)" = 200 ]; do
		i=$((i + 1))
		[ "$i" -le 60 ] || fail "/metrics is not served once the connections are gone ($1)"
		sleep 0.5
	done
}

# 1. A large body.
code=$(head -c 209715200 /dev/zero |
	curl -s -o /dev/null -w '%{http_code}' --data-binary @- "$URL/metrics" || true)
hwm=$(kb VmHWM)
echo "e2e_metrics_abuse: a POST of 200 MiB got HTTP $code; the acceptor's peak RSS is $hwm kB"
[ "$hwm" -lt 102400 ] || fail "the acceptor grew to $hwm kB with a 200 MiB body"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/metrics")" = 200 ] ||
	fail "/metrics is not served after the large body"

# 2. More connections than descriptors: the connections alone no longer exhaust them (the
# server serves at most a quarter of them at once), so the limit goes down below that cap.
prlimit --pid "$PID" --nofile=$((IDLE_FDS + 40)):
hold 300
sleep 0.5
before=$(cpu_ticks)
sleep 2
used=$(($(cpu_ticks) - before))
echo "e2e_metrics_abuse: with 300 connections held, the acceptor used $used ticks of CPU in 2 s"
[ "$used" -lt 60 ] || fail "the acceptor spun on accept: $used ticks of CPU in 2 s"
served_again "out of descriptors"
lines=$(grep -c "cannot accept" "$WORK/acceptor.log" || true)
echo "e2e_metrics_abuse: $lines log lines about failed accepts"
[ "$lines" -ge 1 ] || fail "the exhausted descriptors were not logged"
[ "$lines" -le 5 ] || fail "$lines log lines about failed accepts in a few seconds"
prlimit --pid "$PID" --nofile=200:

# 3. More connections than the cap (a quarter of the 200 descriptors): the others wait in the
# kernel's queue, not in a descriptor each.
CAP=50
hold 200
most=0
for _ in $(seq 35); do # while they are held (4 s): a busy machine is slow to accept them
	n=$(fds)
	[ "$n" -le "$most" ] || most=$n
	sleep 0.1
done
echo "e2e_metrics_abuse: with 200 connections held, the acceptor had at most $most" \
	"descriptors open ($IDLE_FDS idle, cap $CAP)"
[ "$most" -lt $((IDLE_FDS + CAP + 4)) ] ||
	fail "$most descriptors open with 200 connections held (cap $CAP, $IDLE_FDS idle)"
# The idle count may include a scrape's connection that has closed since.
[ "$most" -ge $((IDLE_FDS + CAP - 2)) ] || fail "the connections held did not reach the cap"
served_again "at the cap"
lines=$(grep -c "connections open, the most it serves at once" "$WORK/acceptor.log" || true)
echo "e2e_metrics_abuse: $lines log lines about the cap"
[ "$lines" -ge 1 ] || fail "the cap was not logged"
[ "$lines" -le 3 ] || fail "$lines log lines about the cap in a few seconds"
grep -q ": $CAP connections open" "$WORK/acceptor.log" || fail "the cap is not $CAP"

# 4. A slow reader: 100 requests in one go, the last with "Connection: close", read only after
# 1 s through a small window. The server writes to the socket itself (lib/metrics/server.c):
# every reply must arrive whole, the last too, though the socket takes a little at a time. In
# the test's own network namespace, its send buffers are made small to be sure of that.
if [ "${PAXOS_IN_NETNS:-}" = 1 ]; then
	echo "4096 4096 8192" >/proc/sys/net/ipv4/tcp_wmem 2>/dev/null || true
fi
whole=$(python3 - 100 <<'EOF'
import re, socket, sys, time
n = int(sys.argv[1])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.settimeout(20)
s.connect(("127.0.0.1", 9520))
get = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
s.sendall((get + b"\r\n") * (n - 1) + get + b"Connection: close\r\n\r\n")
time.sleep(1)
data = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
whole = 0
while data.startswith(b"HTTP/1.1 200 OK\r\n"):
    head, _, rest = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
    if len(rest) < length:
        break
    whole += 1
    data = rest[length:]
print(whole if not data else -whole)
EOF
)
echo "e2e_metrics_abuse: $whole of 100 replies to a slow reader arrived whole"
[ "$whole" = 100 ] ||
	fail "$whole of 100 replies to a slow reader arrived whole (negative: then bytes that are no reply)"
# And one request after the other's reply on a connection kept alive (curl reuses it).
codes=$(curl -s -m 5 -o /dev/null -o /dev/null -w '%{http_code} %{num_connects};' \
	"$URL/metrics" "$URL/health" || true)
[ "$codes" = "200 1;200 0;" ] || fail "two requests on one connection: $codes"
kill -0 "$PID" || fail "the acceptor died"

# 5. Slowloris: requests that never end, one byte every 0.5 s, on twice as many connections as
# the cap, each opened again as soon as the server closes it.
python3 - "$WORK/loris" <<'EOF' &
import os, select, socket, sys, time
def conn():
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", 9520))
    except BlockingIOError:
        pass
    return [s, 0]
TEXT = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Loris: 1\r\n" * 1000
conns = [conn() for _ in range(100)]
opened = 100
while not os.path.exists(sys.argv[1] + ".stop"):
    for c in conns:
        try:
            c[0].send(TEXT[c[1] : c[1] + 1])
            c[1] += 1
        except OSError:
            pass
    wait = time.time() + 0.5
    while time.time() < wait:
        ready, _, _ = select.select([c[0] for c in conns], [], [], max(0, wait - time.time()))
        for s in ready:
            try:
                gone = s.recv(4096) == b""
            except BlockingIOError:
                gone = False
            except OSError:
                gone = True
            if gone:
                i = next(i for i, c in enumerate(conns) if c[0] is s)
                s.close()
                conns[i] = conn()
                opened += 1
open(sys.argv[1], "w").write("%d\n" % opened)
EOF
LORIS=$!
PIDS="$PIDS $LORIS"
sleep 2
slow=0
for _ in $(seq 16); do
	code=$(curl -s -m 1 -o /dev/null -w '%{http_code}' "$URL/health" || true)
	[ "$code" = 200 ] || slow=$((slow + 1))
	sleep 0.5
done
touch "$WORK/loris.stop"
wait "$LORIS" || true
echo "e2e_metrics_abuse: under slowloris ($(cat "$WORK/loris" 2>/dev/null || echo ?) connections" \
	"opened), $slow of 16 requests for /health got no answer within 1 s"
[ "$slow" = 0 ] || fail "$slow of 16 requests for /health got no answer within 1 s under slowloris"
kill -0 "$PID" || fail "the acceptor died"
stop_all
