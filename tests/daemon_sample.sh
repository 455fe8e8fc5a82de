#!/usr/bin/env bash
# daemon_sample.sh: alloctapd --sample-bytes N and alloctap-report's estimates (doc/DESIGN.md,
# "Filtered traces"). tests/fixtures/sample_sites (four sites, a known live heap at its peak)
# traced with --stacks --sample-bytes N at three N: each site's estimated bytes at the peak, and
# the events written, within the exact binomial bounds of tests/sample_check.py (a correct
# alloctapd fails a run with probability below 1e-6, whatever the random draws); the header
# read back; the report saying that its figures are estimates in text, JSON, pprof and
# heaptrack outputs (and on stderr); the folded export scaled as the engine scales; layout
# refused; alloctap-munge and alloctap-replay refusing the trace.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
A=$ROOT/build/bench/atz_tool
R=$ROOT/build/alloctap-report
FX=$ROOT/build/fixtures/sample_sites
need_bpf "$D"
need_built "$A" "$R" "$FX" "$ROOT/build/alloctap-munge" "$ROOT/build/alloctap-replay"

for n in 8192 65536 524288; do
	t=$T/s$n
	run_cmd "$D" -q -f binary --stacks --sample-bytes "$n" -o "$t.atz" -- "$FX"
	check_eq "--sample-bytes $n: alloctapd and the fixture exit 0" "$rc" 0 "$(cat "$T/err")"
	"$R" top --by peak-bytes --csv "$t.atz" >"$t.csv" 2>"$t.err"
	"$A" decode "$t.atz" "$t.txt"
	python3 "$ROOT/tests/sample_check.py" "$n" "$t.csv" "$t.txt" >"$t.check" 2>&1
	rc=$?
	sed 's/^/# /' "$t.check"
	check_eq "--sample-bytes $n: each site's estimate at the peak, and the events written, inside their bounds" \
		"$rc" 0 "$(cat "$t.check")"
	check_eq "--sample-bytes $n: the header read back" "$("$A" header "$t.atz")" \
		"version 2.5 sample-bytes $n"
done

S=$T/s65536.atz
NOTE="a sample of the allocations, one per 65536 bytes on average (alloctapd --sample-bytes)"
run_cmd "$R" summary "$S"
check_eq "summary's last line says its figures are estimates" "$(tail -n 1 "$T/out")" \
	"estimated from a sample: $S holds $NOTE; every heap figure above is an estimate (events and RSS as recorded)"
check_eq "and stderr says how" "$(head -n 1 "$T/err")" \
	"alloctap-report: $S: the trace holds $NOTE: every figure is an estimate, each allocation of s bytes counted as 1/(1 - exp(-s/65536)) allocations of s bytes"
run_cmd "$R" summary --json "$S"
check_eq "summary --json says it first" "$(head -c 200 "$T/out" | sed 's/,"processes".*//')" \
	"{\"filtered\":\"$S holds $NOTE: every heap figure is an estimate\""
peak=$(sed -n 's/.*"peak_live_bytes":\([0-9]*\).*/\1/p' "$T/out")
sites=$(awk -F, 'NR > 1 { s += $3 } END { print s }' "$T/s65536.csv")
check_eq "the estimated peak is the sites' estimates at the peak, summed" "$peak" "$sites"
"$R" export --folded --weight alloc-bytes "$S" >"$T/folded" 2>/dev/null
"$R" top --by alloc-bytes --csv --limit 100 "$S" 2>/dev/null | awk -F, 'NR > 1 { s += $3 } END { print s }' >"$T/alloc.sum"
check_eq "the folded export's bytes are the engine's estimates" \
	"$(awk '{ s += $NF } END { print s }' "$T/folded")" "$(cat "$T/alloc.sum")"
run_cmd "$R" export --pprof -o "$T/s.pb.gz" "$S"
if command -v go >/dev/null; then
	check_eq "the pprof profile's comment says it" "$(go tool pprof -comments "$T/s.pb.gz" 2>&1)" \
		"estimated from a sample of the allocations, one per 65536 bytes on average (alloctapd --sample-bytes): each allocation of s bytes counted as 1/(1 - exp(-s/65536)) allocations of s bytes"
else
	fail "the pprof profile's comment says it" "go is not installed (make deps)"
fi
run_cmd "$R" export --heaptrack -o "$T/s.ht" "$S"
check "the heaptrack file's debuggee line says it" \
	grep -qx "X alloctap trace $S, pid [0-9]*, estimated from a sample of 1 in 65536 bytes: bytes scaled, allocation counts the sample's" "$T/s.ht"
run_cmd "$R" html -o "$T/s.html" "$S"
check "the page says its figures are estimates" grep -qF \
	'<p class="estimate">Estimated from a sample of the allocations, 1 in 65536 bytes on average: every heap figure on this page is an estimate (events and RSS as recorded).</p>' \
	"$T/s.html"
run_cmd "$R" top --follow "$S"
check_eq "the live view's heading says it" \
	"$(grep -c '^== at .*the end of the trace: .* (estimated from a sample, 1 in 65536 bytes)$' "$T/out")" 1
run_cmd "$R" summary --follow "$S"
check_eq "summary --follow's last line says it too" "$(tail -n 1 "$T/out")" \
	"estimated from a sample: $S holds $NOTE; every heap figure above is an estimate (events and RSS as recorded)"
check_err "layout refuses a sampled trace" 1 \
	"alloctap-report: $S: the trace holds $NOTE: layout describes every block, a sample cannot tell it" \
	"$R" layout "$S"
check_err "alloctap-munge refuses a sampled trace" 1 \
	"alloctap-munge: $S: the trace holds $NOTE: munging needs every call" \
	"$ROOT/build/alloctap-munge" "$S"
check_err "alloctap-replay refuses a sampled trace" 1 \
	"alloctap-replay: $S: the trace holds $NOTE: replaying needs every call" \
	"$ROOT/build/alloctap-replay" "$S"
finish
