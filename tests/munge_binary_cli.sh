#!/usr/bin/env bash
# munge_binary_cli.sh: build/alloctap-munge on binary traces (.atz, doc/FORMAT.md).
#
# Round trips (raw text -> raw binary with --keep-pointers --format binary -> raw text with
# --keep-pointers) on every log of tests/data, demo/python3-json.log and a fresh genlog log:
# byte-identical for canonical inputs, the same events otherwise. Munging the raw binary gives
# the munged text of the raw text; --format binary gives a munged .atz with the same events,
# which alloctap-replay replays with the same --summary figures. Damaged binary input
# (truncated, corrupt block, newer version, not a trace, already munged) ends with the reader's
# message and exit 1, after munging what was decoded.
set -u
source "$(dirname "$0")/lib.sh"
M=build/alloctap-munge
R=build/alloctap-replay
G=build/bench/genlog
need_built "$M" "$R"
need_make "$G"

# to_bin IN OUT / to_text IN OUT: conversions without munging (stderr to $T/err).
to_bin() { "$M" -q --keep-pointers --format binary "$1" -o "$2" 2>"$T/err"; }
to_text() { "$M" -q --keep-pointers "$1" -o "$2" 2>"$T/err"; }
is_atz() { [ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' ')" = "04224d18" ]; }

# --- round trips -------------------------------------------------------------------------------
"$G" 100000 3 -p 2 -t 3 >"$T/genlog.log" || fail "genlog runs"
canonical=(tests/data/atz/python3-head.log tests/data/atz/munged.log tests/data/munge/strict.log
	tests/data/replay/good.log tests/data/replay/multi_pid.log tests/data/replay/overwrite.log
	tests/data/replay/raw.log tests/data/replay/slot_limit.log demo/python3-json.log
	"$T/genlog.log")
for log in "${canonical[@]}"; do
	n=$(basename "$log" .log)
	if to_bin "$log" "$T/$n.atz" && is_atz "$T/$n.atz" && to_text "$T/$n.atz" "$T/$n.back" &&
		cmp -s "$T/$n.back" "$log"; then
		ok "round trip text -> binary -> text byte-identical: $log ($(wc -l <"$log") lines, $(stat -c %s "$T/$n.atz") bytes binary)"
	else
		fail "round trip text -> binary -> text byte-identical: $log" "$(head -c 300 "$T/err")"
	fi
done

# Non-canonical inputs: the events survive (CR dropped, final newline added, lines that do
# not fit the event model reported and skipped); a second round trip changes nothing.
noncanonical=(tests/data/atz/bad-function.log tests/data/atz/crlf-no-final-newline.log
	tests/data/munge/crlf.log tests/data/munge/empty_lines.log
	tests/data/munge/no_final_newline.log tests/data/munge/normal.log
	tests/data/replay/crlf.log tests/data/replay/empty_lines.log
	tests/data/replay/no_final_newline.log)
for log in "${noncanonical[@]}"; do
	n=nc_$(basename "$log" .log)
	"$M" --keep-pointers --format binary "$log" -o "$T/$n.atz" 2>"$T/$n.err1"
	rc1=$?
	to_text "$T/$n.atz" "$T/$n.back"
	to_bin "$T/$n.back" "$T/$n.atz2"
	to_text "$T/$n.atz2" "$T/$n.back2"
	# the input without CRs, empty lines and the reported lines, with a final newline
	skip=$(sed -n 's/^alloctap-munge: [^:]*:\([0-9]*\): Ignored: .*/\1/p' "$T/$n.err1" | tr '\n' ' ')
	awk -v skip=" $skip" '{ sub(/\r$/, "") } index(skip, " " NR " ") == 0 && NF' "$log" >"$T/$n.want"
	if [ "$rc1" -eq 0 ] && cmp -s "$T/$n.back" "$T/$n.back2" && [ -s "$T/$n.back" ]; then
		ok "round trip of a non-canonical log keeps its events: $log (skipped lines: ${skip:-none})"
	else
		fail "round trip of a non-canonical log keeps its events: $log" "exit $rc1"
	fi
done
# the non-canonical logs whose kept lines are canonical apart from CR and a final newline
for n in crlf-no-final-newline crlf empty_lines no_final_newline bad-function; do
	if cmp -s "$T/nc_$n.back" "$T/nc_$n.want"; then
		ok "$n: the output is the input without CRs, blank and reported lines"
	else
		fail "$n: the output is the input without CRs, blank and reported lines" \
			"$(diff "$T/nc_$n.want" "$T/nc_$n.back" | head -5 | tr '\n' ' ')"
	fi
done
D=tests/data/munge
{
	echo "alloctap-munge: $D/normal.log:406: Ignored: unknown function"
	echo "alloctap-munge: $D/normal.log:409: Ignored: Malformed input"
	echo "alloctap-munge: $D/normal.log:410: Ignored: free and jemalloc_stats take no result"
	echo "alloctap-munge: $D/normal.log: 413 lines read, 410 written, 3 ignored"
} >"$T/want_err"
check_file_eq "normal.log: lines that do not fit the event model are reported as FILE:LINE" \
	"$T/nc_normal.err1" "$T/want_err"
"$M" --strict --keep-pointers --format binary $D/normal.log -o "$T/strict_normal.atz" 2>"$T/err"
rc=$?
want="alloctap-munge: $D/normal.log:406: Ignored: unknown function (--strict)"
if [ "$rc" -eq 1 ] && [ "$(head -n 1 "$T/err")" = "$want" ]; then
	ok "--strict: the first line that does not fit is an error, exit 1"
else
	fail "--strict: the first line that does not fit is an error, exit 1" "exit $rc" "$(head -2 "$T/err")"
fi
printf '1 1 malloc(0x10)=0x10\n' >"$T/hex.log"
"$M" --keep-pointers --format binary "$T/hex.log" -o "$T/hex.atz" 2>"$T/err"
check "a hex size is reported and skipped" grep -qxF \
	"alloctap-munge: $T/hex.log:1: Ignored: bad size or alignment argument (expected a decimal number)" "$T/err"

# --- munging a binary trace --------------------------------------------------------------------
for log in "${canonical[@]}" tests/data/munge/normal.log; do
	n=$(basename "$log" .log)
	[ -f "$T/$n.atz" ] || to_bin "$log" "$T/$n.atz"
	grep -q '#' "$log" && continue # munged logs: below
	"$M" -q "$log" >"$T/$n.mt" 2>/dev/null
	"$M" -q "$T/$n.atz" >"$T/$n.mb" 2>/dev/null
	if [ "$n" = normal ]; then # its odd lines did not fit: compare with its canonical events
		"$M" -q "$T/nc_normal.back" >"$T/$n.mt" 2>/dev/null
	fi
	check_file_eq "munged text of the raw binary = munged text of the raw text: $log" \
		"$T/$n.mt" "$T/$n.mb"
	"$M" -q --format binary "$log" -o "$T/$n.mta" 2>/dev/null
	"$M" -q --format binary "$T/$n.atz" -o "$T/$n.mba" 2>/dev/null
	to_text "$T/$n.mta" "$T/$n.mta.txt"
	to_text "$T/$n.mba" "$T/$n.mba.txt"
	if is_atz "$T/$n.mba" && cmp -s "$T/$n.mba.txt" "$T/$n.mb" &&
		{ [ "$n" = normal ] || cmp -s "$T/$n.mta.txt" "$T/$n.mb"; }; then
		ok "--format binary from raw text and from raw binary: the same munged events: $log"
	else
		fail "--format binary from raw text and from raw binary: the same munged events: $log"
	fi
done

# replay --summary of the munged binary and of the munged text
for n in python3-json genlog normal raw; do
	"$R" --summary "$T/$n.mb" >/dev/null 2>"$T/rt.err"
	rc_t=$?
	"$R" --summary "$T/$n.mba" >/dev/null 2>"$T/rb.err"
	rc_b=$?
	figures "$T/rt.err" >"$T/rt.fig"
	figures "$T/rb.err" >"$T/rb.fig"
	if [ "$rc_t" -eq 0 ] && [ "$rc_b" -eq 0 ] && grep -q '^operations: ' "$T/rb.fig" &&
		cmp -s "$T/rt.fig" "$T/rb.fig"; then
		ok "replay --summary: munged binary and munged text give the same figures: $n"
	else
		fail "replay --summary: munged binary and munged text give the same figures: $n" \
			"exit $rc_t/$rc_b" "$(diff "$T/rt.fig" "$T/rb.fig" | head -5 | tr '\n' ' ')"
	fi
done

"$M" -q --pid 15487 $D/normal.log >"$T/pid.t" 2>/dev/null
"$M" -q --pid 15487 "$T/normal.atz" >"$T/pid.b" 2>/dev/null
check_file_eq "--pid on a binary trace: the same output as on the text" "$T/pid.t" "$T/pid.b"
check "--pid output is not empty" test -s "$T/pid.b"
"$M" -q --stats-every 50 "$T/genlog.atz" >"$T/st.b" 2>/dev/null
"$M" -q --stats-every 50 "$T/genlog.log" >"$T/st.t" 2>/dev/null
check_file_eq "--stats-every on a binary trace: the same output as on the text" "$T/st.t" "$T/st.b"
"$M" -q --stats-every 50 --format binary "$T/genlog.atz" -o "$T/st.atz" 2>/dev/null
to_text "$T/st.atz" "$T/st.atz.txt"
check_file_eq "--stats-every with --format binary: the same events" "$T/st.t" "$T/st.atz.txt"
"$M" -q <"$T/genlog.atz" >"$T/stdin.out" 2>/dev/null
check_file_eq "a binary trace on standard input" "$T/stdin.out" "$T/genlog.mb"
"$M" -q --format binary <"$T/genlog.log" 2>/dev/null | "$M" -q --keep-pointers >"$T/pipe.out" 2>/dev/null
check_file_eq "--format binary to a pipe, read back from it" "$T/pipe.out" "$T/genlog.mb"

# the summary of a binary input counts events; drops name the event number
printf '1 1 malloc(8)=0x10\n1 1 free(0x10)\n1 1 free(0x10)\n1 1 malloc(8)=0x0\n' >"$T/drops.log"
to_bin "$T/drops.log" "$T/drops.atz"
"$M" "$T/drops.atz" >"$T/out" 2>"$T/err"
rc=$?
{
	echo "alloctap-munge: $T/drops.atz: event 4: Ignored \"1 1 malloc(8)=0x0\": Result is NULL"
	echo "alloctap-munge: $T/drops.atz: frees or reallocs of a pointer never allocated in the trace: 1, ignored (blocks allocated before it began, as when alloctapd attaches with --pid; -v lists them)"
	echo "alloctap-munge: $T/drops.atz: 4 events read, 2 written, 2 ignored"
} >"$T/want_err"
printf '1 1 malloc(8)=#1\n1 1 free(#1)\n' >"$T/want_out"
if [ "$rc" -eq 0 ] && cmp -s "$T/err" "$T/want_err" && cmp -s "$T/out" "$T/want_out"; then
	ok "events the munge drops are reported with their number; the summary counts events"
else
	fail "events the munge drops are reported with their number" "exit $rc" "$(diff "$T/want_err" "$T/err" | tr '\n' ' ')"
fi
"$M" -v "$T/drops.atz" >"$T/out" 2>"$T/err"
check_eq "-v: the free of a pointer never allocated listed with its event number" \
	"$(head -n 1 "$T/err")" \
	"alloctap-munge: $T/drops.atz: event 3: Ignored \"1 1 free(0x10)\": Did not see an alloc for pointer"
# a binary trace taken by attaching: 512 frees of blocks from before it, one line counts them
awk 'BEGIN { print "1 1 malloc(8)=0x10"; for (i = 1; i <= 512; i++) printf "1 1 free(0x%x)\n", 4096 + 16 * i }' \
	>"$T/attached.log"
to_bin "$T/attached.log" "$T/attached.atz"
"$M" "$T/attached.atz" >"$T/out" 2>"$T/err"
check_eq "a binary trace taken by attaching: 512 unseen frees in one line, exit 0" "$?:$(cat "$T/err")" \
	"0:alloctap-munge: $T/attached.atz: frees or reallocs of a pointer never allocated in the trace: 512, ignored (blocks allocated before it began, as when alloctapd attaches with --pid; -v lists them)
alloctap-munge: $T/attached.atz: 513 events read, 1 written, 512 ignored"
"$M" -v "$T/attached.atz" 2>&1 >/dev/null | grep -c ': Did not see an alloc for pointer$' >"$T/n"
check_eq "a binary trace taken by attaching, -v: the 512 listed" "$(cat "$T/n")" 512
"$M" --strict "$T/drops.atz" >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 1 ] && [ "$(head -n 1 "$T/err")" = \
	"alloctap-munge: $T/drops.atz: event 3: Ignored \"1 1 free(0x10)\": Did not see an alloc for pointer (--strict)" ]; then
	ok "--strict on a binary trace: the first dropped event is an error, exit 1"
else
	fail "--strict on a binary trace: the first dropped event is an error, exit 1" "exit $rc"
fi

# --- already munged input ---------------------------------------------------------------------
"$M" "$T/good.atz" >"$T/out" 2>"$T/err"
rc=$?
want="alloctap-munge: $T/good.atz: already munged (the trace's header says so): nothing to munge; --keep-pointers converts it as it is"
if [ "$rc" -eq 1 ] && [ "$(head -n 1 "$T/err")" = "$want" ] && [ ! -s "$T/out" ]; then
	ok "a munged binary trace is refused, exit 1"
else
	fail "a munged binary trace is refused, exit 1" "exit $rc" "$(head -2 "$T/err")"
fi
"$M" --format binary tests/data/replay/good.log -o "$T/x.atz" 2>"$T/err"
rc=$?
want="alloctap-munge: tests/data/replay/good.log:1: already munged (#slots, not addresses): nothing to munge; --keep-pointers converts it as it is"
if [ "$rc" -eq 1 ] && [ "$(head -n 1 "$T/err")" = "$want" ]; then
	ok "munged text with --format binary is refused at its first munged line, exit 1"
else
	fail "munged text with --format binary is refused, exit 1" "exit $rc" "$(head -2 "$T/err")"
fi
"$R" --summary "$T/good.atz" >/dev/null 2>"$T/rb.err"
"$R" --summary tests/data/replay/good.log >/dev/null 2>"$T/rt.err"
figures "$T/rb.err" >"$T/rb.fig"
figures "$T/rt.err" >"$T/rt.fig"
check_file_eq "--keep-pointers on munged text makes a munged trace replay reads the same" \
	"$T/rt.fig" "$T/rb.fig"

# lines without a pointer come before the one that shows whether the text is raw or munged:
# the trace's header must still say which it is
printf '1 1 jemalloc_stats()\n1 1 malloc(8)\n1 1 malloc(8)=#1\n1 1 free(#1)\n' >"$T/late.log"
to_bin "$T/late.log" "$T/late.atz"
to_text "$T/late.atz" "$T/late.back"
"$M" "$T/late.atz" >/dev/null 2>"$T/err"
rc=$?
if cmp -s "$T/late.back" "$T/late.log" && [ "$rc" -eq 1 ] && grep -q "already munged" "$T/err"; then
	ok "munged text whose first lines hold no pointer: a munged trace (its header says so)"
else
	fail "munged text whose first lines hold no pointer: a munged trace" "exit $rc"
fi
printf '1 1 jemalloc_stats()\n1 1 malloc(8)\n' >"$T/nop.log"
to_bin "$T/nop.log" "$T/nop.atz"
to_text "$T/nop.atz" "$T/nop.back"
"$M" -q "$T/nop.atz" >"$T/out" 2>"$T/err"
rc=$?
if cmp -s "$T/nop.back" "$T/nop.log" && [ "$rc" -eq 0 ] && cmp -s "$T/out" "$T/nop.log"; then
	ok "a text with no pointer at all: a raw trace, munged as the reference munges it"
else
	fail "a text with no pointer at all: a raw trace" "exit $rc"
fi

# lost-event records (thread 7/9: LOST 5, malloc(32)=0x1000, free, LOST 3 at the end)
printf 'ATZ\0\001\000\000\000\000\000\x91\x07\x09\x92\x05\x70\x20\x80\x08\x40\x92\x03' |
	lz4 -q -c >"$T/lost.atz"
"$M" --keep-pointers "$T/lost.atz" >"$T/out" 2>"$T/err"
rc=$?
printf '7 9 malloc(32)=0x1000\n7 9 free(0x1000)\n' >"$T/want_out"
if [ "$rc" -eq 0 ] && cmp -s "$T/out" "$T/want_out" && [ "$(cat "$T/err")" = \
	"alloctap-munge: $T/lost.atz: 2 events read, 2 written, 0 ignored, 8 lost in recording (a text log cannot show where)" ]; then
	ok "lost events: binary -> text keeps the events and counts the lost ones in the summary"
else
	fail "lost events: binary -> text keeps the events and counts the lost ones" "exit $rc" "$(cat "$T/err")"
fi
"$M" -q --keep-pointers --format binary "$T/lost.atz" -o "$T/lost2.atz" 2>/dev/null
"$M" -q --format binary "$T/lost.atz" -o "$T/lost3.atz" 2>/dev/null
tail2=$(lz4 -q -d -c "$T/lost2.atz" | od -An -tx1 | tr -d ' \n' | tail -c 24)
tail3=$(lz4 -q -d -c "$T/lost3.atz" | od -An -tx1 | tr -d ' \n' | tail -c 22)
if [ "$tail2" = "920595070947208110489203" ] && [ "$tail3" = "9205910101702005409203" ]; then
	ok "lost events: carried to a binary output at their places (raw and munged)"
else
	fail "lost events: carried to a binary output at their places" "raw: $tail2" "munged: $tail3"
fi

# --- damaged binary input ---------------------------------------------------------------------
"$G" 300000 9 >"$T/big.log"
to_bin "$T/big.log" "$T/big.atz"
"$M" -q "$T/big.log" >"$T/big.mt" 2>/dev/null
u32le() { od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '; }
blocks=()
off=7
while :; do
	size=$(($(u32le "$T/big.atz" "$off") & 0x7fffffff))
	[ "$size" -eq 0 ] && break
	blocks+=("$off")
	off=$((off + 4 + size + 4))
done
check "the big trace has 4 or more lz4 blocks (${#blocks[@]})" test "${#blocks[@]}" -ge 4
b3=${blocks[2]}
cut=$((b3 + 4 + ($(u32le "$T/big.atz" "$b3") & 0x7fffffff) / 2))
head -c "$cut" "$T/big.atz" >"$T/cut.atz"
"$M" "$T/cut.atz" >"$T/out" 2>"$T/err"
rc=$?
n=$(sed -n "s/^alloctap-munge: .*: truncated after \([0-9]*\) events: .*/\1/p" "$T/err")
want="alloctap-munge: $T/cut.atz: truncated after $n events: the input ends inside the block at that offset; the last whole block ends at byte offset $b3 of $cut"
head -n "${n:-0}" "$T/big.log" | "$M" -q >"$T/cut.want" 2>/dev/null
if [ "$rc" -eq 1 ] && [ "${n:-0}" -gt 0 ] && grep -qxF "$want" "$T/err" &&
	cmp -s "$T/out" "$T/cut.want" &&
	tail -n 1 "$T/err" | grep -q "^alloctap-munge: $T/cut.atz: $n events read, $(wc -l <"$T/out") written, [0-9]* ignored\$"; then
	ok "truncated trace: the $n events of the whole blocks munged, then the reader's message, exit 1"
else
	fail "truncated trace: the events of the whole blocks munged, then the message, exit 1" \
		"exit $rc" "want: $want" "$(tail -3 "$T/err")"
fi
"$M" --format binary "$T/cut.atz" -o "$T/cut.m.atz" 2>/dev/null
rc=$?
to_text "$T/cut.m.atz" "$T/cut.m.txt"
if [ "$rc" -eq 1 ] && cmp -s "$T/cut.m.txt" "$T/cut.want"; then
	ok "truncated trace, --format binary: a complete munged trace of the decoded events, exit 1"
else
	fail "truncated trace, --format binary: a complete munged trace of the decoded events" "exit $rc"
fi
"$M" --keep-pointers "$T/cut.atz" >"$T/out" 2>/dev/null
rc=$?
if [ "$rc" -eq 1 ] && head -n "${n:-0}" "$T/big.log" | cmp -s - "$T/out"; then
	ok "truncated trace, --keep-pointers: the decoded events as raw text, exit 1"
else
	fail "truncated trace, --keep-pointers: the decoded events as raw text, exit 1" "exit $rc"
fi

cp "$T/big.atz" "$T/flip.atz"
at=$((b3 + 100))
printf "\\x$(printf %02x $((($(od -An -tu1 -j $at -N1 "$T/big.atz") ^ 0x20))))" |
	dd of="$T/flip.atz" bs=1 seek=$at conv=notrunc status=none
"$M" "$T/flip.atz" >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "^alloctap-munge: $T/flip.atz: corrupt lz4 block at byte offset $b3 " "$T/err" &&
	[ -s "$T/out" ] && head -c "$(stat -c %s "$T/out")" "$T/big.mt" | cmp -s - "$T/out"; then
	ok "corrupt block: munged up to it ($(wc -l <"$T/out") lines), its offset $b3 reported, exit 1"
else
	fail "corrupt block: munged up to it, its offset $b3 reported, exit 1" "exit $rc" "$(head -3 "$T/err")"
fi

printf 'ATZ\0\003\001\0\0\0\0' | lz4 -q -c >"$T/v3.atz"
"$M" "$T/v3.atz" >"$T/out" 2>"$T/err"
rc=$?
{
	echo "alloctap-munge: $T/v3.atz: trace format version 3.1 is newer than this reader's (2.6): use a newer alloctap"
	echo "alloctap-munge: $T/v3.atz: 0 events read, 0 written, 0 ignored"
} >"$T/want_err"
if [ "$rc" -eq 1 ] && cmp -s "$T/err" "$T/want_err" && [ ! -s "$T/out" ]; then
	ok "a newer major version is refused, exit 1"
else
	fail "a newer major version is refused, exit 1" "exit $rc" "$(cat "$T/err")"
fi
printf 'hello' | lz4 -q -c >"$T/other.lz4"
"$M" "$T/other.lz4" >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -qxF "alloctap-munge: $T/other.lz4: an lz4 file, but not an alloctap trace" "$T/err"; then
	ok "an lz4 file of something else: refused, exit 1"
else
	fail "an lz4 file of something else: refused, exit 1" "exit $rc" "$(cat "$T/err")"
fi
printf '\x04\x22\x4d\x18' >"$T/magic.atz"
head -c 5000 /dev/urandom >>"$T/magic.atz"
timeout 20 "$M" "$T/magic.atz" >/dev/null 2>"$T/err"
rc=$?
check "the lz4 magic followed by random bytes: an error, exit 1 (got $rc)" test "$rc" -eq 1
printf '\x04\x22\x4d' >"$T/short"
"$M" "$T/short" >"$T/out" 2>"$T/err"
rc=$?
check "three bytes of the magic are text (one malformed line), exit 0 (got $rc)" test "$rc" -eq 0

# --- output errors and usage --------------------------------------------------------------------
"$M" -q --format binary -o /dev/full "$T/genlog.atz" 2>"$T/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -qxF "alloctap-munge: /dev/full: write error: No space left on device" "$T/err"; then
	ok "--format binary to a full disk: write error, exit 1"
else
	fail "--format binary to a full disk: write error, exit 1" "exit $rc" "$(cat "$T/err")"
fi
timeout 60 "$M" --keep-pointers "$T/big.atz" 2>"$T/err" | head -n 1 >/dev/null
status=("${PIPESTATUS[@]}")
check_eq "binary -> text | head -n 1: stopped quietly, killed by SIGPIPE (141)" \
	"${status[*]}:$(wc -c <"$T/err")" "141 0:0" "$(head -3 "$T/err")"
timeout 60 "$M" -q "$T/big.atz" 2>"$T/err" | head -n 1 >/dev/null
status=("${PIPESTATUS[@]}")
check_eq "binary munged to text -q | head -n 1: nothing said (no summary), killed by SIGPIPE (141)" \
	"${status[*]}:$(wc -c <"$T/err")" "141 0:0" "$(head -3 "$T/err")"
for args in "--format xml" "--keep-pointers --pid 1" "--keep-pointers --stats-every 5"; do
	# shellcheck disable=SC2086
	"$M" $args "$T/genlog.atz" >/dev/null 2>&1
	rc=$?
	check "usage error: $args (exit $rc)" test "$rc" -eq 2
done
# --- 2.0 traces: times, stack ids, STACK and MAPPING records pass through ----------------------
# tests/data/atz/synth-v2.atz: python3-head.log with synthetic times and stacks after three
# mappings (bench/atz_tool synth). The munged binary output keeps every event's time and stack
# id and the records, in order; the text output is the munged text of the plain log; replay
# reads the 2.0 output as any other.
A=build/bench/atz_tool
need_make "$A"
S=tests/data/atz/synth-v2
"$M" -q --format binary "$S.atz" -o "$T/sv2.atz" 2>"$T/err"
check "2.0 in, munged binary out: exit 0" test $? -eq 0
# The munge drops three events of python3-head.log (results of 0: events 205, 209 and 214);
# every other event keeps its time, stack id and stack.
sed '205d;209d;214d' "$S.times" >"$T/want.times"
awk 'NR == FNR { if ($2 != 0) { n++; keep[n] = FNR != 205 && FNR != 209 && FNR != 214 }
		 next }
     keep[FNR]' "$S.times" "$S.stacks" >"$T/want.stacks"
check_eq "2.0 munged binary: three events dropped, each with its stack" \
	"$(($(wc -l <"$S.stacks") - 3))" "$(wc -l <"$T/want.stacks")"
check "2.0 munged binary: the same stacks, event by event" \
	bash -c "'$A' stacks '$T/sv2.atz' | cmp -s - '$T/want.stacks'"
check "2.0 munged binary: the same mappings" \
	bash -c "'$A' mappings '$T/sv2.atz' | cmp -s - '$S.mappings'"
check "2.0 munged binary: the same times and stack ids" \
	bash -c "'$A' times '$T/sv2.atz' | cmp -s - '$T/want.times'"
"$M" -q tests/data/atz/python3-head.log -o "$T/plain.munged" 2>/dev/null
check "2.0 munged binary: the same events as the munged text of the plain log" \
	bash -c "'$A' decode '$T/sv2.atz' - | cmp -s - '$T/plain.munged'"
check "2.0 in, text out: the munged text of the plain log" \
	bash -c "'$M' -q '$S.atz' -o - | cmp -s - '$T/plain.munged'"
check "2.0 in, --keep-pointers binary out: stacks, mappings and times kept" \
	bash -c "'$M' -q --keep-pointers --format binary '$S.atz' -o '$T/kv2.atz' &&
		'$A' stacks '$T/kv2.atz' | cmp -s - '$S.stacks' &&
		'$A' mappings '$T/kv2.atz' | cmp -s - '$S.mappings' &&
		'$A' times '$T/kv2.atz' | cmp -s - '$S.times' &&
		'$A' decode '$T/kv2.atz' - | cmp -s - tests/data/atz/python3-head.log"
check "the document's reader agrees on the munged 2.0 output's stacks" \
	bash -c "lz4 -q -d -c '$T/sv2.atz' | python3 tests/atz_spec_reader.py --stacks |
		cmp -s - '$T/want.stacks'"
check "2.0 in, --keep-pointers text out: the plain log" \
	bash -c "'$M' -q --keep-pointers '$S.atz' -o - | cmp -s - tests/data/atz/python3-head.log"
"$R" --summary "$T/plain.munged" >/dev/null 2>"$T/rt.err"
rc_t=$?
"$R" --summary "$T/sv2.atz" >/dev/null 2>"$T/rb.err"
rc_b=$?
# (the stop is named FILE:LINE for text, FILE: event N for a trace)
figures "$T/rt.err" | sed -E 's#^(alloctap-replay: ).*/plain\.munged:([0-9]+): #\1event \2: #' >"$T/rt.fig"
figures "$T/rb.err" | sed -E 's#^(alloctap-replay: ).*/sv2\.atz: event ([0-9]+): #\1event \2: #' >"$T/rb.fig"
check_eq "replay stops at the same event of the munged 2.0 output as of the munged text" \
	"$rc_t" "$rc_b"
check_file_eq "replay of the munged 2.0 output: the munged text's figures" "$T/rt.fig" "$T/rb.fig"
cat "$S.atz" "$S.atz" >"$T/twice.atz"
check "two 2.0 frames munge into one trace, stack ids numbered on" \
	bash -c "'$M' -q --format binary '$T/twice.atz' -o '$T/tw.atz' 2>/dev/null;
		'$A' stacks '$T/tw.atz' | cmp -s - <(cat '$T/want.stacks' '$T/want.stacks')"

"$M" --help >"$T/help"
check "--help documents --format and --keep-pointers" grep -q -- '--keep-pointers  convert' "$T/help"

finish
