#!/usr/bin/env bash
# daemon_filter.sh: alloctapd --min-size and --sample-bytes (doc/DESIGN.md, "Filtered traces").
# --min-size: the LD_PRELOAD oracle (tests/oracle/preload_tracer.c, its lines numbered in the
# order the calls ran: ORACLE_SEQ) and alloctapd record the same run; the oracle's log filtered
# by the documented rule (tests/oracle/filter_log.py) and
# alloctapd's trace must hold the same calls, thread by thread, in the same order
# (tests/oracle/compare_threads.py). The trace's header says min-size N; text output, and
# alloctap-munge and alloctap-replay on such a trace, are refused.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
A=$ROOT/build/bench/atz_tool
need_bpf "$D"
need_built "$A" "$ROOT/build/alloctap-munge" "$ROOT/build/alloctap-replay" \
	"$ROOT/build/alloctap-report"
O=$ROOT/build/oracle
CMP=$ROOT/tests/oracle/compare_threads.py
FILTER=$ROOT/tests/oracle/filter_log.py
for p in preload_tracer.so preload_exec family_calls; do
	if [ ! -e "$O/$p" ]; then
		fail "oracle programs built" "$O/$p is missing (make tests)"
		finish
	fi
done
LIBC=$(readlink -f "$(ldd "$O/family_calls" | awk '$1 == "libc.so.6" { print $3 }')")

# the options (a usage error ends with the hint TRY)
TRY=$'\n'"Try 'alloctapd --help'."
check_err "--min-size with text output is refused" 2 \
	"alloctapd: --min-size needs --format binary: logalloc's text format has no place to say that the trace holds a part of the calls""$TRY" \
	"$D" --min-size 64 -- /bin/true
check_err "--sample-bytes with text output is refused" 2 \
	"alloctapd: --sample-bytes needs --format binary: logalloc's text format has no place to say that the trace holds a part of the calls""$TRY" \
	"$D" --sample-bytes 4096 -- /bin/true
check_err "--min-size 0 is refused" 2 \
	"alloctapd: --min-size must be a whole number from 1 to 18446744073709551615, not '0'""$TRY" \
	"$D" -f binary --min-size 0 -- /bin/true
check_err "--sample-bytes above 2^32 is refused" 2 \
	"alloctapd: --sample-bytes must be a whole number from 1 to 4294967296, not '4294967297'""$TRY" \
	"$D" -f binary --sample-bytes 4294967297 -- /bin/true
check_err "--block-map of a word is refused" 2 \
	"alloctapd: --block-map must be a whole number from 1 to 1073741824, not 'x'""$TRY" \
	"$D" -f binary --min-size 1 --block-map x -- /bin/true

# filtered_run NAME MIN PROGRAM [ARG...]: one run traced by both, alloctapd with --min-size MIN;
# the oracle's log filtered must be alloctapd's trace, thread by thread.
filtered_run() {
	local name=$1 min=$2 log=$T/${1// /_} rc
	shift 2
	ORACLE_SEQ=1 "$D" -q --lib "$LIBC" -f binary --min-size "$min" -o "$log.atz" -- "$O/preload_exec" \
		"$O/preload_tracer.so" "$log.oracle" "$@" >"$log.out" 2>"$log.err" </dev/null
	rc=$?
	check "$name: alloctapd and the program exit 0" \
		bash -c "test $rc -eq 0 || { echo 'status $rc'; cat '$log.err'; exit 1; }"
	"$A" decode "$log.atz" "$log.traced" 2>>"$log.err"
	python3 "$FILTER" --min-size "$min" "$log.oracle" >"$log.want"
	check "$name: the oracle's calls of at least $min bytes are some, and fewer than all" \
		bash -c "test -s '$log.want' && test \$(wc -l <'$log.want') -lt \$(wc -l <'$log.oracle')"
	python3 "$CMP" --name "$name" "$log.traced" "$log.want" >"$log.cmp" 2>&1
	rc=$?
	echo "# $(head -n1 "$log.cmp")"
	if [ $rc -eq 0 ]; then
		ok "$name: every thread's calls identical to the oracle's filtered"
	else
		fail "$name: every thread's calls identical to the oracle's filtered"
		head -n 60 "$log.cmp" | sed 's/^/#   /'
	fi
}

# The oracle's lines reach its file in each thread's buffers: the rule follows its numbers
# (ORACLE_SEQ), not the file's order. Here thread 2's buffer came first, though thread 1 freed
# the block before thread 2 was given it; in the file's order thread 1's free would be of a
# block no longer known.
printf '%s\n' "1 1 1 1 realloc(0x0,600)=0x1000" "3 3 1 2 malloc(600)=0x1000" \
	"4 4 1 2 free(0x1000)" "2 2 1 1 free(0x1000)" >"$T/numbered.log"
check_eq "the oracle's log filtered in the order of its numbers" \
	"$(python3 "$FILTER" --min-size 512 "$T/numbered.log" 2>&1)" \
	"$(printf '%s\n' "1 1 realloc(0x0,600)=0x1000" "1 2 malloc(600)=0x1000" "1 2 free(0x1000)" \
		"1 1 free(0x1000)")"

cd "$T" || exit 1
filtered_run "family_calls --min-size 100" 100 "$O/family_calls"
filtered_run "family_calls --min-size 4097" 4097 "$O/family_calls"
PY=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
PYTHONMALLOC=malloc filtered_run "python3 --min-size 512" 512 "$PY" \
	"$ROOT/tests/oracle/py_workload.py"

# the header says so, and the tools that need every call refuse the trace
H=$T/family_calls_--min-size_100.atz
check_eq "the header of a --min-size trace, read back" "$("$A" header "$H" 2>&1)" \
	"version 2.4 min-size 100"
check_err "alloctap-munge refuses a --min-size trace" 1 \
	"alloctap-munge: $H: the trace holds only the allocations of at least 100 bytes (alloctapd --min-size): munging needs every call" \
	"$ROOT/build/alloctap-munge" "$H" -o "$T/munged"
check "alloctap-munge wrote no output" test ! -e "$T/munged"
check_err "alloctap-replay refuses a --min-size trace" 1 \
	"alloctap-replay: $H: the trace holds only the allocations of at least 100 bytes (alloctapd --min-size): replaying needs every call" \
	"$ROOT/build/alloctap-replay" "$H"
finish
