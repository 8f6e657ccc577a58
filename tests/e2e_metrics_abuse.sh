#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The metrics server under abuse (one acceptor serving /metrics, in a private network
# namespace, with at most 64 file descriptors):
#  1. a POST of 200 MiB is refused without being read into memory (it used to be buffered
#     whole: the process grew by the body's size and kept it);
#  2. 300 connections held open exhaust the descriptors: the server must rest rather than
#     spin on accept() (it used to burn a whole CPU and log ~19 MB/s), log a bounded number
#     of lines, and serve /metrics again once the connections are gone.
# Usage: e2e_metrics_abuse.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/cluster.sh"
command -v curl >/dev/null || fail "curl not found: install curl (scripts/install-deps.sh)"
command -v python3 >/dev/null || fail "python3 not found"

CONF=$WORK/paxos.conf
sed -e 's/^acceptors  *[0-9]*/acceptors 1/' -e 's/^proposers  *[0-9]*/proposers 1/' \
	-e 's/^counters-interval-ms .*/counters-interval-ms 0/' "$(base_conf)" >"$CONF"
URL=http://127.0.0.1:9520
(ulimit -n 64 && exec "$BUILD/paxos-acceptor" -c "$CONF" -i 0 --metrics-listen 127.0.0.1:9520) \
	>"$WORK/acceptor.log" 2>&1 &
PID=$!
PIDS="$PIDS $PID"
i=0
until [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/health" || true)" = 200 ]; do
	i=$((i + 1))
	[ "$i" -le 50 ] || fail "the acceptor does not serve /health"
	sleep 0.1
done
kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$PID/status"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$PID/stat"; }

# 1. A large body.
code=$(head -c 209715200 /dev/zero |
	curl -s -o /dev/null -w '%{http_code}' --data-binary @- "$URL/metrics" || true)
hwm=$(kb VmHWM)
echo "e2e_metrics_abuse: a POST of 200 MiB got HTTP $code; the acceptor's peak RSS is $hwm kB"
[ "$hwm" -lt 102400 ] || fail "the acceptor grew to $hwm kB with a 200 MiB body"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/metrics")" = 200 ] ||
	fail "/metrics is not served after the large body"

# 2. More connections than descriptors.
python3 - "$WORK/hold" <<'EOF' &
import socket, sys, time
held = []
for _ in range(300):
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", 9520))
    except BlockingIOError:
        pass
    held.append(s)
open(sys.argv[1], "w").close()
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
sleep 0.5
before=$(cpu_ticks)
sleep 2
used=$(($(cpu_ticks) - before))
echo "e2e_metrics_abuse: with 300 connections held, the acceptor used $used ticks of CPU in 2 s"
[ "$used" -lt 60 ] || fail "the acceptor spun on accept: $used ticks of CPU in 2 s"
wait "$HOLDER" || true
i=0
until [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "$URL/metrics" || true)" = 200 ]; do
	i=$((i + 1))
	[ "$i" -le 60 ] || fail "/metrics is not served once the connections are gone"
	sleep 0.5
done
lines=$(grep -c "cannot accept" "$WORK/acceptor.log" || true)
echo "e2e_metrics_abuse: $lines log lines about failed accepts"
[ "$lines" -ge 1 ] || fail "the exhausted descriptors were not logged"
[ "$lines" -le 5 ] || fail "$lines log lines about failed accepts in a few seconds"
kill -0 "$PID" || fail "the acceptor died"
stop_all
