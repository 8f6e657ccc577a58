# SPDX-License-Identifier: BSD-3-Clause
# Shell helpers for the benchmark scripts: where results go, configuration copies, one timed
# client run, JSON fields, CSV to markdown, gnuplot. Source it with SRC set to the source tree.

# bench_setup BUILD_DIR [OUT_DIR]: sets BUILD, OUT (OUT_DIR, else $BENCH_OUT, else
# BUILD_DIR/bench-results/<date>), CONFIGS ($OUT/configs, the configuration of every run)
# and TMP (scratch, removed at exit).
bench_setup() {
	BUILD=$(cd "$1" && pwd)
	OUT=${2:-${BENCH_OUT:-$BUILD/bench-results/$(date +%Y-%m-%d)}}
	mkdir -p "$OUT/configs"
	OUT=$(cd "$OUT" && pwd)
	CONFIGS=$OUT/configs
	TMP=$(mktemp -d)
	trap 'rm -rf "$TMP"' EXIT
}

# bench_conf NAME [KEY VALUE]...: writes $CONFIGS/NAME.conf, paxos.conf with memory storage,
# no periodic counters, a private storage path (for the proposer's epoch file) and then the
# given keys, and prints its path. A key commented out in paxos.conf is set too.
bench_conf() {
	conf=$CONFIGS/$1.conf
	shift
	cp "$SRC/paxos.conf" "$conf.tmp"
	set -- storage memory counters-interval-ms 0 storage-path "$TMP/store" "$@"
	while [ $# -ge 2 ]; do
		sed -e "s|^#\{0,1\}$1 .*|$1 $2|" "$conf.tmp" >"$conf.tmp2"
		grep -q "^$1 $2\$" "$conf.tmp2" || echo "$1 $2" >>"$conf.tmp2"
		mv "$conf.tmp2" "$conf.tmp"
		shift 2
	done
	mv "$conf.tmp" "$conf"
	echo "$conf"
}

# bench_run CONF SECONDS CLIENT_OPTIONS...: runs bench/cluster-client.sh (PAXOS_SYSTEM,
# PAXOS_ACCEPTORS, PAXOS_LEARNERS from the environment) for SECONDS, $BENCH_REPEAT times
# (default 1), and prints the client's JSON report of the run with the median values/s (5
# processes on 2 cores: a run now and then loses much of its rate to scheduling).
bench_run() {
	repeat=${BENCH_REPEAT:-1}
	: >"$TMP/runs"
	while [ "$repeat" -gt 0 ]; do
		bench_run_once "$@" >>"$TMP/runs" || return 1
		repeat=$((repeat - 1))
	done
	sed 's/.*"values_per_s":\([0-9.]*\).*/\1 &/' "$TMP/runs" | sort -n |
		awk '{ line[NR] = $0 } END { print substr(line[int((NR + 1) / 2)], index(line[int((NR + 1) / 2)], " ") + 1) }'
}

# bench_run_once: bench_run's single run. The client stops at its time limit with values
# left and exits non-zero: a run failed only if it delivered nothing. The report gains the
# role processes' CPU time per delivered value, in microseconds: the busiest one's
# (busiest_us_per_value) and all of theirs together (all_us_per_value).
bench_run_once() {
	run_conf=$1
	run_secs=$2
	shift 2
	rm -rf "$TMP/logs" && mkdir "$TMP/logs"
	run_out=$(PAXOS_CONF=$run_conf PAXOS_LOG_DIR=$TMP/logs "$SRC/bench/cluster-client.sh" \
		"$BUILD" --count 100000000 --time-limit "$run_secs" --json "$@" 2>"$TMP/run.err" ||
		true)
	run_json=$(echo "$run_out" | grep '^{' || true)
	case $run_json in
	*'"delivered":0,'* | '')
		echo "bench: the run ($*) failed:" >&2
		tail -n 30 "$TMP/run.err" >&2
		return 1
		;;
	esac
	run_cpu=$(awk -v d="$(jfield "$run_json" delivered)" 'd > 0 {
			us = $2 * 1e6 / $3 / d; all += us; if (us > most) most = us }
		END { printf ",\"busiest_us_per_value\":%.2f,\"all_us_per_value\":%.2f", most, all }' \
		"$TMP/logs/cpu.log" 2>/dev/null || true)
	echo "$run_json" | sed "s/}\$/$run_cpu}/"
}

# jfield JSON NAME: the number NAME in a one-line JSON object (the first, if several)
jfield() {
	echo "$1" | sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p"
}

# bench_md CSV: the CSV as a markdown table
bench_md() {
	awk -F, 'NR == 1 { h = "|"; s = "|"; for (i = 1; i <= NF; i++) { h = h " " $i " |"; s = s " --- |" }
		print h; print s; next }
		{ r = "|"; for (i = 1; i <= NF; i++) r = r " " $i " |"; print r }' "$1"
}

# bench_gnuplot PNG SCRIPT: runs the gnuplot SCRIPT with a PNG terminal writing PNG; without
# gnuplot says so and goes on (the CSV and markdown are written anyway).
bench_gnuplot() {
	if ! command -v gnuplot >/dev/null 2>&1; then
		echo "bench: gnuplot is not installed, no plot $1 (apt-get install gnuplot-nox)" >&2
		return 0
	fi
	{
		if gnuplot -e "set terminal" 2>&1 | grep -q pngcairo; then
			echo "set terminal pngcairo size ${BENCH_PNG_SIZE:-900,540} font ',10'"
		else
			echo "set terminal png size ${BENCH_PNG_SIZE:-900,540}"
		fi
		echo "set output '$1'"
		echo "set datafile separator ','"
		echo "set grid"
		echo "set key top left box opaque"
		cat "$2"
	} >"$TMP/gnuplot-run.gp"
	gnuplot "$TMP/gnuplot-run.gp" || {
		echo "bench: gnuplot failed on $1" >&2
		return 1
	}
}
