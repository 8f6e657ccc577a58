# SPDX-License-Identifier: BSD-3-Clause
# Shell helpers for the sample key-value store's end-to-end tests: replicas, clients, rounds
# of workload and their convergence. Source it after cluster.sh with BUILD, WORK, KV, CONF
# and KCONF set.
replica() { # replica NAME ID: starts replica ID (acceptor + proposer + learner)
	: >"$WORK/$1.log"
	start "$1" $KV/kvstore-replica -c "$CONF" -k "$KCONF" -i "$2" -d "$WORK/r$2" \
		--acceptor --proposer
	# Its first line comes after it set SIGUSR1 aside for dumps.
	wait_lines "$WORK/$1.log" 1 30 || fail "replica $2 ($1) did not start"
}
cli() { # cli ARGS...
	"$BUILD/$KV/kvstore-cli" -c "$CONF" -k "$KCONF" --timeout 20 "$@"
}

# workload ROUND CLIENT: a script of 100 commands on keys of this client (so the results are
# known in advance: OUT.expect) plus puts to one key every client writes.
workload() {
	base=$WORK/w$1-$2
	: >"$base.cmds"
	: >"$base.expect"
	for i in $(seq 1 20); do
		k=c$2-r$1-$i
		printf 'put %s v%s\ncas %s v%s w%s\nget %s\nput shared %s\n' \
			"$k" "$i" "$k" "$i" "$i" "$k" "$k" >>"$base.cmds"
		printf 'OK\nOK\nOK w%s\nOK\n' "$i" >>"$base.expect"
	done
	for i in $(seq 1 10); do
		k=c$2-r$1-$i
		printf 'delete %s\nget %s\n' "$k" "$k" >>"$base.cmds"
		printf 'OK\nNOT_FOUND\n' >>"$base.expect"
	done
}

# round ROUND: three clients at once, client 0 submitting everything twice.
round() {
	pids=""
	for c in 0 1 2; do
		workload "$1" $c
		twice=""
		[ $c -eq 0 ] && twice=--twice
		cli $twice -f "$WORK/w$1-$c.cmds" >"$WORK/w$1-$c.out" 2>"$WORK/w$1-$c.err" &
		pids="$pids $!"
	done
	for pid in $pids; do wait "$pid" || fail "round $1: a client failed"; done
	for c in 0 1 2; do
		cmp -s "$WORK/w$1-$c.out" "$WORK/w$1-$c.expect" ||
			fail "round $1: client $c got unexpected results"
	done
}

# converge COMMANDS "IDS" PIDS...: until the dumps (SIGUSR1) of replicas IDS, running as
# PIDS, are the same and count COMMANDS commands applied (60 s: a loaded replica may be slow to
# catch up).
converge() {
	want=$1
	ids=$2
	shift 2
	first=${ids%% *}
	i=0
	while :; do
		rm -f "$WORK"/r*/dump
		for pid in "$@"; do kill -USR1 "$pid"; done
		sleep 0.2
		same=1
		for r in $ids; do
			[ -f "$WORK/r$r/dump" ] || { same=0; break; }
			tail -n +2 "$WORK/r$r/dump" >"$WORK/state$r"
			cmp -s "$WORK/state$first" "$WORK/state$r" || same=0
		done
		[ $same = 1 ] && grep -qx "commands $want" "$WORK/state$first" && return 0
		i=$((i + 1))
		[ $i -gt 300 ] && fail "replicas did not converge on $want commands" \
			"($(cat "$WORK"/state* 2>/dev/null | grep '^commands' | tr '\n' ' '))"
	done
}

last_number() { # last_number FILE PATTERN: the number after PATTERN in its last match
	sed -n "s/.*$2 \([0-9]*\).*/\1/p" "$1" | tail -n 1
}
