#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Metrics over HTTP: a cluster of 3 LMDB acceptors, 2 proposers and a learner, each serving
# /metrics and /health on 127.0.0.1 (acceptor 0 on paxos.conf's metrics-listen, the others on
# --metrics-listen ports of their own). A client submits values; every /metrics page must
# parse with the Prometheus client library's parser, have each hosted role's counters and
# levels under role/id labels, and the learner's delivered counters must equal what it wrote.
# /health is 200, other paths 404; a malformed address, an address not of this host and a
# port in use stop a role at start with the reason. Runs in a private network namespace.
# Usage: e2e_metrics.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
COUNT=2000

# The parser of the Prometheus client library (Debian python3-prometheus-client).
PY=""
for py in /usr/bin/python3 python3; do
	if "$py" -c 'import prometheus_client.parser' 2>/dev/null; then
		PY=$py
		break
	fi
done
[ -n "$PY" ] || fail "no python3 with prometheus_client: install python3-prometheus-client (scripts/install-deps.sh)"
command -v curl >/dev/null || fail "curl not found: install curl (scripts/install-deps.sh)"

CONF=$WORK/paxos.conf
sed -e "s|^storage .*|storage lmdb|" -e "s|^storage-path .*|storage-path $WORK/store|" \
	-e "s|^#durability .*|durability nosync|" -e "s|^lmdb-map-size .*|lmdb-map-size 67108864|" \
	-e "s|^#metrics-listen .*|metrics-listen 127.0.0.1:9500|" "$SRC/paxos.conf" >"$CONF"
grep -q "^metrics-listen 127.0.0.1:9500$" "$CONF" || fail "cannot set metrics-listen"
grep -q "^storage lmdb" "$CONF" || fail "cannot set storage"

# get NAME PATH: the status code of GET PATH from NAME's server ($PORT_NAME); body in
# $WORK/NAME.body
get() {
	eval "port=\$PORT_$1"
	curl -s -o "$WORK/$1.body" -w '%{http_code}' "http://127.0.0.1:$port$2" || true
}

# healthy NAME: waits until NAME answers /health (it listens before its roles start)
healthy() {
	i=0
	until [ "$(get "$1" /health)" = 200 ]; do
		i=$((i + 1))
		[ "$i" -le 300 ] || fail "$1 never answered /health with 200"
		sleep 0.1
	done
	[ "$(cat "$WORK/$1.body")" = ok ] || fail "$1: /health says '$(cat "$WORK/$1.body")'"
}

# refused NAME STATUS MESSAGE BINARY ARGS...: the role exits with STATUS, saying MESSAGE
refused() {
	name=$1
	want=$2
	msg=$3
	shift 3
	rc=0
	"$BUILD/$@" >"$WORK/$name.log" 2>&1 || rc=$?
	[ "$rc" -eq "$want" ] || fail "$name: exit status $rc, want $want"
	grep -qxF "$msg" "$WORK/$name.log" || fail "$name does not say: $msg"
	echo "$name: exit status $rc: $msg"
}

# --- errors at start -------------------------------------------------------------------
refused bad-address 2 "paxos-acceptor: --metrics-listen: '127.0.0.1' is not ADDRESS:PORT" \
	paxos-acceptor -c "$CONF" -i 0 --metrics-listen 127.0.0.1
refused not-local 1 "paxos-proposer: metrics-listen 10.0.0.1:9600: cannot listen: Cannot assign requested address" \
	paxos-proposer -c "$CONF" -i 0 --metrics-listen 10.0.0.1:9600

# --- the cluster -----------------------------------------------------------------------
PORT_acceptor0=9500 # from paxos.conf
PORT_acceptor1=9501
PORT_acceptor2=9502
PORT_proposer0=9510
PORT_proposer1=9511
PORT_learner=9520
start acceptor0 paxos-acceptor -c "$CONF" -i 0
for i in 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i --metrics-listen 127.0.0.1:950$i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i --metrics-listen 127.0.0.1:951$i; done
start learner paxos-learner -c "$CONF" -o "$WORK/learner.out" --metrics-listen 127.0.0.1:9520
NAMES="acceptor0 acceptor1 acceptor2 proposer0 proposer1 learner"
for n in $NAMES; do healthy "$n"; done
grep -q "paxos-acceptor: metrics on http://127.0.0.1:9500/metrics and /health" "$WORK/acceptor0.log" ||
	fail "acceptor 0 does not say where its metrics are"

# A port taken by a running role: the next one stops at start.
refused port-in-use 1 "paxos-learner: metrics-listen 127.0.0.1:9501: cannot listen: Address already in use" \
	paxos-learner -c "$CONF" -o "$WORK/none.out" --metrics-listen 127.0.0.1:9501
[ ! -s "$WORK/none.out" ] || fail "the refused learner delivered values"

"$BUILD/paxos-client" -c "$CONF" --count $COUNT --outstanding 32 --size 64 \
	--resubmit-ms 2000 --time-limit 120 --log "$WORK/submitted" >"$WORK/client.log" 2>&1 ||
	fail "paxos-client did not get all $COUNT values delivered"
wait_lines "$WORK/learner.out" $COUNT 60 || fail "the learner wrote fewer than $COUNT values"

# Every page parses; names, types and labels as documented; the learner's counters equal its
# output once it is flushed (every 100 ms); every acceptor has recovered (they start empty).
i=0
while :; do
	for n in $NAMES; do
		[ "$(get "$n" /metrics)" = 200 ] || fail "$n: GET /metrics is not 200"
		mv "$WORK/$n.body" "$WORK/$n.metrics"
	done
	cut -d' ' -f1 "$WORK/learner.out" | uniq | wc -l >"$WORK/instances"
	wc -l <"$WORK/learner.out" >"$WORK/values"
	tail -n 1 "$WORK/learner.out" | cut -d' ' -f1 >"$WORK/last"
	rc=0
	"$PY" - "$WORK" $NAMES >"$WORK/check.log" 2>&1 <<'EOF' || rc=$?
import sys
from prometheus_client.parser import text_string_to_metric_families

work, names = sys.argv[1], sys.argv[2:]
def read(name):
    with open(f"{work}/{name}") as f:
        return f.read()
instances, values, last = (int(read(n)) for n in ("instances", "values", "last"))
# Written on one line per family so that a failure shows what was there.
families = {}
for name in names:
    fams = {}
    for fam in text_string_to_metric_families(read(name + ".metrics")):
        assert fam.documentation, f"{name}: {fam.name} has no HELP"
        for s in fam.samples:
            assert set(s.labels) == {"role", "id"}, f"{name}: {s.name} labels {s.labels}"
            if fam.type == "counter":
                assert s.name == fam.name + "_total", f"{name}: counter {s.name}"
            fams[(s.name, s.labels["role"], s.labels["id"])] = s.value
        assert fam.type in ("counter", "gauge"), f"{name}: {fam.name} is a {fam.type}"
        assert fam.type == "gauge" or not fam.name.endswith("_seconds"), fam.name
    families[name] = fams

def value(name, metric, role, id):
    key = (metric, role, str(id))
    assert key in families[name], f"{name}: no {metric}{{role={role},id={id}}}"
    return families[name][key]

retry = []
for name in names:
    role = name.rstrip("0123456789")
    id = int(name[len(role):] or 0)
    for r, i in ((role, id), ("transport", 0)):
        value(name, "paxos_datagrams_received_total", r, i)
        value(name, "paxos_instances_delivered_total", r, i)
    assert value(name, "paxos_datagrams_received_total", "transport", 0) > 0, name
    if role != "acceptor":
        value(name, "paxos_phase1_timeout_seconds", role, id)
    if role == "acceptor":
        assert value(name, "paxos_acceptor_accepted_instance", role, id) >= 1, name
        assert value(name, "paxos_acceptor_trimmed_instance", role, id) == 0, name
        assert value(name, "paxos_acceptor_storage_limit_bytes", role, id) == 67108864, name
        assert 0 < value(name, "paxos_acceptor_storage_bytes", role, id) <= 67108864, name
        assert value(name, "paxos_promises_sent_total", role, id) > 0, name
        if value(name, "paxos_acceptor_recovering", role, id) != 0:
            retry.append(f"{name} still recovering")
    if role == "proposer":
        value(name, "paxos_quorum_losses_total", role, id)
        # Out for want of a quorum, as a busy host can make it for a moment: scraped again.
        if value(name, "paxos_proposer_quorum", role, id) != 1:
            retry.append(f"{name} hears no acceptor quorum")
            continue
        # A heartbeat missed under load may move the leadership for a while: asked again.
        if (value(name, "paxos_proposer_leader", role, id) != 0 or
                value(name, "paxos_proposer_leading", role, id) != (id == 0)):
            retry.append(f"{name}: proposer 0 does not lead now")
        assert value(name, "paxos_proposer_pending_values", role, id) >= 0, name
        assert value(name, "paxos_proposer_window_in_use", role, id) >= 0, name
        # Every proposer has a learner of its own.
        value(name, "paxos_learner_delivered_instance", "learner", 0)
    if name == "proposer0":
        assert value(name, "paxos_proposer_ballot", role, id) > 0, name
        # Proposer 1 proposes too if it led for a while.
        proposed = sum(families[n].get(("paxos_values_proposed_total", "proposer", n[-1]), 0)
                       for n in ("proposer0", "proposer1"))
        assert proposed >= values, f"proposers proposed {proposed} values, the learner has {values}"
    if role == "learner":
        delivered = value(name, "paxos_instances_delivered_total", role, 0)
        if delivered != instances or value(name, "paxos_values_delivered_total", role, 0) != values:
            retry.append(f"learner: counters say {delivered} instances, its output {instances}")
        else:
            assert value(name, "paxos_learner_delivered_instance", role, 0) == last, name
            assert value(name, "paxos_learner_seen_instance", role, 0) >= last, name
if retry:
    print("; ".join(retry))
    sys.exit(3)
print(f"learner: {int(instances)} instances, {int(values)} values, as counted; "
      f"{sum(len(f) for f in families.values())} samples on {len(names)} pages")
EOF
	[ "$rc" -ne 3 ] || {
		i=$((i + 1))
		[ "$i" -le 300 ] || fail "metrics never agreed: $(cat "$WORK/check.log")"
		sleep 0.2
		continue
	}
	[ "$rc" -eq 0 ] || fail "metrics: $(cat "$WORK/check.log")"
	break
done
cat "$WORK/check.log"

for n in $NAMES; do
	[ "$(get "$n" /health)" = 200 ] || fail "$n: /health is not 200 after the run"
	code=$(get "$n" /nowhere)
	[ "$code" = 404 ] || fail "$n: GET /nowhere is $code, not 404"
done
grep -q "^# TYPE paxos_instances_delivered_total counter$" "$WORK/learner.metrics" ||
	fail "the learner's page lacks the TYPE line of instances_delivered"
stop_all
echo "e2e_metrics: 6 roles served /metrics (parsed), /health 200, 404 elsewhere; bad listen addresses refused"
