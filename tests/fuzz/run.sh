#!/usr/bin/env bash
# Runs the libFuzzer harnesses of tests/fuzz. For each NAME: replays every input under
# tests/fuzz/regressions/NAME/ (each must pass), then fuzzes for SECONDS from the corpus
# DIR/corpus/NAME (kept between runs) and the seeds DIR/seeds/NAME; SECONDS 0 replays the
# seeds once instead. Every harness runs even after a finding; the status is 1 if any found
# something, and each finding is printed with its reproducer's path and the commands to
# replay and minimise it. Logs go to DIR/logs/NAME.log (fuzzing) and NAME.replay.log.
# usage: tests/fuzz/run.sh DIR SECONDS NAME...   (DIR holds fuzz_NAME, as build/fuzz does)
set -u
dir=${1:?usage: run.sh DIR SECONDS NAME...}
seconds=${2:?usage: run.sh DIR SECONDS NAME...}
shift 2
cd "$(dirname "$0")/../.."
dict=tests/fuzz/logalloc.dict

# libFuzzer options of one harness: input size limits that fit what it parses.
options() {
	case $1 in
	source | munge | convert | replay | report) echo "-dict=$dict -max_len=16384" ;;
	text) echo "-dict=$dict -max_len=4096" ;;
	atz | elfsym | unwind | eh_frame | table_cache) echo "-max_len=65536" ;;
	x86) echo "-max_len=64" ;;
	hints) echo "-max_len=4096" ;;
	*) echo "" ;;
	esac
}

# The value of libFuzzer's final statistic $2 in log $1.
stat() {
	sed -n "s/^stat::$2: *//p" "$1" | tail -n1
}

findings=0
mkdir -p "$dir/logs"
for name in "$@"; do
	bin=$dir/fuzz_$name
	log=$dir/logs/$name.replay.log
	if [ ! -x "$bin" ]; then
		echo "fuzz: $bin is missing (make fuzz-build)"
		findings=$((findings + 1))
		continue
	fi
	regressions=(tests/fuzz/regressions/"$name"/*)
	if [ -e "${regressions[0]}" ]; then
		if ! "$bin" "${regressions[@]}" >"$log" 2>&1; then
			echo "FAIL    fuzz_$name: a regression input fails again:"
			grep -m1 -A8 'ERROR\|invariant broken\|runtime error' "$log" | head -n 10
			echo "        input: $(sed -n 's/^Running: //p' "$log" | tail -n1)"
			echo "        log: $log"
			findings=$((findings + 1))
			continue
		fi
		printf '  REPLAY  fuzz_%s: %d regression inputs pass\n' "$name" "${#regressions[@]}"
	fi
	if [ "$seconds" -eq 0 ]; then
		# shellcheck disable=SC2046
		if ! "$bin" -runs=0 $(options "$name") "$dir/seeds/$name" >"$log" 2>&1; then
			echo "FAIL    fuzz_$name: a seed input fails:"
			grep -m1 -A8 'ERROR\|invariant broken\|runtime error' "$log" | head -n 10
			echo "        log: $log"
			findings=$((findings + 1))
			continue
		fi
		printf '  REPLAY  fuzz_%s: %d seed inputs pass\n' "$name" "$(ls "$dir/seeds/$name" | wc -l)"
		continue
	fi
	log=$dir/logs/$name.log
	corpus=$dir/corpus/$name
	artifacts=$dir/artifacts/$name
	mkdir -p "$corpus" "$artifacts"
	# shellcheck disable=SC2046
	"$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 -print_final_stats=1 \
		-artifact_prefix="$artifacts/" $(options "$name") "$corpus" "$dir/seeds/$name" \
		>"$log" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		printf '  FUZZ    fuzz_%s: %s s, %s runs, corpus %s: no finding\n' "$name" \
			"$seconds" "$(stat "$log" number_of_executed_units)" "$(ls "$corpus" | wc -l)"
		continue
	fi
	findings=$((findings + 1))
	input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n1)
	echo "FAIL    fuzz_$name found a problem (status $rc):"
	grep -m1 -A8 'ERROR\|invariant broken\|runtime error\|Timeout\|out-of-memory' "$log" |
		head -n 10
	if [ -n "$input" ]; then
		echo "        reproducer: $input"
		echo "        replay:     $bin $input"
		echo "        minimise:   $bin -minimize_crash=1 -max_total_time=60" \
			"-exact_artifact_path=$input.min $input"
	fi
	echo "        log: $log"
done
if [ "$findings" -gt 0 ]; then
	echo "fuzz: $findings harness(es) found a problem"
	exit 1
fi
exit 0
