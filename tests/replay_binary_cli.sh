#!/usr/bin/env bash
# replay_binary_cli.sh: build/alloctap-replay on munged binary traces (.atz, doc/FORMAT.md).
# A binary trace must replay exactly as the munged text it was made from (same --summary
# figures, same calls), and its damage must end the replay with the reader's message and exit
# status 1: a truncated file after its whole blocks, a corrupt block with its byte offset, a
# newer version refused. Binary traces are made with build/bench/atz_tool (lib/atz.c) from the
# text logs of tests/data/replay/ and from an awk-generated log of many blocks.
set -u
source "$(dirname "$0")/lib.sh"
R=build/alloctap-replay
A=build/bench/atz_tool
M=build/alloctap-munge
D=tests/data/replay
LIBDIR=/usr/lib/$MULTIARCH
need_built "$R"
need_make "$A"

# same_figures DESC TEXT BINARY [OPTIONS...]: replay both with --summary; the figures match.
same_figures() {
	local desc=$1 text=$2 bin=$3
	shift 3
	"$R" --summary "$@" "$text" >/dev/null 2>"$T/text.err"
	local rc_t=$?
	"$R" --summary "$@" "$bin" >/dev/null 2>"$T/err"
	rc=$?
	figures "$T/text.err" >"$T/text.fig"
	figures "$T/err" >"$T/bin.fig"
	if [ "$rc_t" -eq 0 ] && [ "$rc" -eq 0 ] && grep -q '^operations: ' "$T/bin.fig" &&
		cmp -s "$T/text.fig" "$T/bin.fig"; then
		ok "$desc"
	else
		fail_run "$desc" "exit text $rc_t binary $rc" \
			"$(diff "$T/text.fig" "$T/bin.fig" | head -n 10 | tr '\n' ' ')"
	fi
}

# u32le FILE OFFSET: the little-endian 32-bit word at OFFSET.
u32le() {
	od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '
}

# block_offsets FILE: the byte offset of every lz4 block's size word, one a line (the frame
# alloctap writes: 7-byte frame header, block checksums on; FORMAT.md section 2).
block_offsets() {
	local off=7 size
	while :; do
		size=$(($(u32le "$1" "$off") & 0x7fffffff))
		[ "$size" -eq 0 ] && break
		echo "$off"
		off=$((off + 4 + size + 4))
	done
}

# calls_of LOG: "malloc_count ..." for the calls the munged text LOG asks for (one pid).
calls_of() {
	awk '{ f = $3; sub(/\(.*/, "", f); n[f]++ }
		END { printf "malloc_count malloc=%d calloc=%d realloc=%d free=%d memalign=%d " \
			"posix_memalign=%d aligned_alloc=%d valloc=%d\n", n["malloc"], n["calloc"],
			n["realloc"], n["free"], n["memalign"], n["posix_memalign"],
			n["aligned_alloc"], n["valloc"] }' "$1"
}

# --- the binary data files: the same replay as their text --------------------------------------
GOOD_SUMMARY=(
	"replayed pid: 1" "lines of other pids: 0" "operations: 11" "operations malloc: 2"
	"operations calloc: 1" "operations realloc: 2" "operations free: 2" "operations memalign: 1"
	"operations posix_memalign: 1" "operations aligned_alloc: 1" "operations valloc: 1"
	"operations jemalloc_stats: 1" "failed allocations: 0" "overwritten live slots: 0"
	"peak live requested bytes: 778" "final live requested bytes: 778" "final live objects: 6"
)
run_cmd "$R" --summary "$D/good.atz"
if [ "$(grep -c '^stats ' "$T/err")" -eq 1 ] &&
	grep -q '^stats event=5 ops=4 objects=3 slots=4 requested=404 arena=[0-9]* mmap=' "$T/err"; then
	check_err_lines "good.atz: the good.log summary, stats event=5" "${GOOD_SUMMARY[@]}" \
		"allocator: glibc $LIBDIR/libc.so.6"
else
	fail_run "good.atz: the good.log summary, stats event=5" "want one line: stats event=5 ops=4 ..."
fi
run_cmd "$R" --summary - <"$D/good.atz"
check_err_lines "good.atz on stdin" "${GOOD_SUMMARY[@]}"
run_cmd "$R" --summary "$D/multi_pid.atz"
check_err_lines "multi_pid.atz: only the first pid is replayed" "replayed pid: 3" "lines of other pids: 4" \
	"operations: 4" "peak live requested bytes: 2024" "final live requested bytes: 2000" \
	"final live objects: 1"
check_err "slot_limit.atz: the event number and the slot" 1 \
	"alloctap-replay: $D/slot_limit.atz: event 3: result slot beyond the slot limit: #268435456 (slots #0 to #268435455)" \
	"$R" "$D/slot_limit.atz"
check_err "raw.atz: a raw binary trace is refused" 1 \
	"alloctap-replay: $D/raw.atz: this is a raw trace; munge it first: alloctap-munge $D/raw.atz | alloctap-replay" \
	"$R" "$D/raw.atz"
check_err "raw.atz on stdin" 1 \
	"alloctap-replay: <stdin>: this is a raw trace; munge it first: ... | alloctap-munge | alloctap-replay" \
	"$R" - <"$D/raw.atz"

# (empty_lines.log is left out: a binary trace has no empty lines, atz_tool refuses them.)
for f in good crlf no_final_newline multi_pid overwrite; do
	"$A" encode "$D/$f.log" "$T/$f.atz" 2>"$T/err" || { fail_run "encode $f.log"; continue; }
	same_figures "$f.log and its .atz: the same summary and stats figures" \
		"$D/$f.log" "$T/$f.atz" -s
done

# --- no allocations of its own on binary input --------------------------------------------------
if cc -shared -fPIC -O1 -o "$T/malloc_count.so" "$D/malloc_count.c" 2>"$T/err"; then
	LD_PRELOAD=$T/malloc_count.so "$R" -s -c "$D/good.atz" >"$T/out" 2>"$T/err"
	rc=$?
	check_err_lines "binary input: exactly the log's calls, none of the replayer's" \
		"malloc_count malloc=2 calloc=1 realloc=2 free=2 memalign=1 posix_memalign=1 aligned_alloc=1 valloc=1"
	LD_PRELOAD=$T/malloc_count.so "$R" --summary "$D/multi_pid.atz" >"$T/out" 2>"$T/err"
	rc=$?
	check_err_lines "binary input: none of its own with --summary and other pids" \
		"malloc_count malloc=2 calloc=0 realloc=1 free=1 memalign=0 posix_memalign=0 aligned_alloc=0 valloc=0"
else
	fail_run "the malloc-counting library builds"
fi

# --- a trace of many blocks: equal figures, recompressed, truncated, corrupt ---------------------
awk -v n=60000 -v seed=5 -v slots=3000 -v max=4096 -v factors=2 -v calloc=0.1 -v calloc_n=2 \
	-v memalign=0.15 -v stats_every=5000 -f tests/data/munged_churn.awk >"$T/big.log"
"$A" encode "$T/big.log" "$T/big.atz" 2>"$T/err" || fail_run "encode big.log"
mapfile -t blocks < <(block_offsets "$T/big.atz")
size=$(stat -c %s "$T/big.atz")
if [ "${#blocks[@]}" -ge 3 ]; then
	ok "the generated trace has ${#blocks[@]} lz4 blocks"
else
	fail_run "the generated trace has 3 lz4 blocks or more" "blocks at: ${blocks[*]}"
fi
same_figures "60000 events over ${#blocks[@]} blocks: text and binary give the same figures" \
	"$T/big.log" "$T/big.atz"
lz4 -q -d -c "$T/big.atz" | lz4 -q -B7 -c >"$T/re.atz"
same_figures "recompressed by the lz4 tool (4 MB blocks): the same figures" "$T/big.log" "$T/re.atz"

# Truncated inside the third block: the two whole blocks are replayed, then the message.
b3=${blocks[2]:-0}
cut=$((b3 + 4 + ($(u32le "$T/big.atz" "$b3") & 0x7fffffff) / 2))
head -c "$cut" "$T/big.atz" >"$T/cut.atz"
"$A" decode "$T/cut.atz" "$T/cut.log" 2>/dev/null
whole=$(wc -l <"$T/cut.log")
head -n "$whole" "$T/big.log" >"$T/cut.want"
LD_PRELOAD=$T/malloc_count.so "$R" "$T/cut.atz" >"$T/out" 2>"$T/err"
rc=$?
want="alloctap-replay: $T/cut.atz: truncated after $whole events: the input ends inside the block at that offset; the last whole block ends at byte offset $b3 of $cut"
if [ "$rc" -eq 1 ] && grep -qxF "$want" "$T/err" && [ "$whole" -gt 0 ] &&
	cmp -s "$T/cut.log" "$T/cut.want" && grep -qxF "$(calls_of "$T/cut.want")" "$T/err" &&
	[ "$(grep -c '^stats event=' "$T/err")" -eq "$(grep -c jemalloc_stats "$T/cut.want")" ]; then
	ok "truncated in block 3: the $whole events of blocks 1-2 replayed, then the message, exit 1"
else
	fail_run "truncated in block 3: blocks 1-2 replayed, then the message, exit 1" "exit $rc" \
		"want: $want" "want calls: $(calls_of "$T/cut.want")"
fi
head -c "$b3" "$T/big.atz" >"$T/cut2.atz"
run_cmd "$R" "$T/cut2.atz"
if [ "$rc" -eq 1 ] && grep -q "^alloctap-replay: $T/cut2.atz: truncated after $whole events: .*; the last whole block ends at byte offset $b3 of $b3\$" "$T/err"; then
	ok "cut at a block boundary: truncated after the same $whole events"
else
	fail_run "cut at a block boundary: truncated after the same $whole events" "exit $rc"
fi

# A flipped byte in the third block (the second with events: the first block holds the stream
# header alone): the events the reader returns before it (as many as atz_tool decode gives;
# it may stop a few records short of the end of block 2, reading ahead) are replayed, then
# the offset of block 3.
b2=$b3
cp "$T/big.atz" "$T/flip.atz"
at=$((b2 + 100))
printf "\\x$(printf %02x $((($(od -An -tu1 -j $at -N1 "$T/big.atz") ^ 0x20))))" |
	dd of="$T/flip.atz" bs=1 seek=$at conv=notrunc status=none
"$A" decode "$T/flip.atz" "$T/flip.log" 2>/dev/null
first=$(wc -l <"$T/flip.log")
head -n "$first" "$T/big.log" >"$T/flip.want"
LD_PRELOAD=$T/malloc_count.so "$R" "$T/flip.atz" >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "^alloctap-replay: $T/flip.atz: corrupt lz4 block at byte offset $b2 " "$T/err" &&
	[ "$first" -gt 0 ] && cmp -s "$T/flip.log" "$T/flip.want" &&
	grep -qxF "$(calls_of "$T/flip.want")" "$T/err"; then
	ok "a corrupt block 3: the $first events decoded before it replayed, its offset $b2 reported, exit 1"
else
	fail_run "a corrupt block 3: the events decoded before it replayed, its offset $b2 reported, exit 1" "exit $rc"
fi

# --- other damage: refused with a message, exit 1, never a crash ---------------------------------
printf 'ATZ\0\003\001\0\0\0\0' | lz4 -q -c >"$T/v3.atz"
check_err "a newer major version is refused" 1 \
	"alloctap-replay: $T/v3.atz: trace format version 3.1 is newer than this reader's (2.6): use a newer alloctap" \
	"$R" "$T/v3.atz"
printf 'hello' | lz4 -q -c >"$T/other.lz4"
check_err "an lz4 file of something else" 1 \
	"alloctap-replay: $T/other.lz4: an lz4 file, but not an alloctap trace" "$R" "$T/other.lz4"
printf 'ATZ\0\001\000\001\0\0\0' | lz4 -q -c >"$T/none.atz"
run_cmd "$R" --summary "$T/none.atz"
check_err_lines "a munged trace with no events replays nothing" "operations: 0" "final live objects: 0"
printf '\x04\x22\x4d\x18' >"$T/magic.atz"
head -c 5000 /dev/urandom >>"$T/magic.atz"
run_cmd "$R" "$T/magic.atz"
if [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "^alloctap-replay: $T/magic.atz: " "$T/err"; then
	ok "the lz4 magic then random bytes: one message, exit 1"
else
	fail_run "the lz4 magic then random bytes: one message, exit 1" "exit $rc"
fi
# Every byte of good.atz with one bit flipped (bit i mod 8), in turn: each run replays or stops
# with a message (exit 0 or 1), never a crash or a hang.
n=$(stat -c %s "$D/good.atz")
bad=()
for ((i = 0; i < n; i++)); do
	v=$(od -An -tu1 -j $i -N1 "$D/good.atz")
	bit=$((1 << (i % 8)))
	cp "$D/good.atz" "$T/f.atz"
	printf "\\x$(printf %02x $((v ^ bit)))" | dd of="$T/f.atz" bs=1 seek=$i conv=notrunc status=none
	timeout 10 "$R" -q "$T/f.atz" >/dev/null 2>"$T/err"
	rc=$?
	[ "$rc" -le 1 ] || bad+=("byte $i bit $bit: exit $rc")
done
if [ ${#bad[@]} -eq 0 ]; then
	ok "$n one-bit flips of good.atz, one per byte: exit 0 or 1, no crash or hang"
else
	fail_run "one-bit flips of good.atz: exit 0 or 1, no crash or hang" "${bad[@]:0:5}"
fi

# --- the demo log: munged text and munged binary give the same figures --------------------------
if [ -x "$M" ] && [ -f demo/python3-json.log ]; then
	"$M" -qq demo/python3-json.log >"$T/demo.log" && "$A" encode "$T/demo.log" "$T/demo.atz"
	same_figures "demo/python3-json.log munged: text and binary give the same figures" \
		"$T/demo.log" "$T/demo.atz"
	# alloctap-munge --format binary writes the munged binary itself (to a pipe here).
	"$M" -qq --format binary demo/python3-json.log | cat >"$T/demo_m.atz"
	same_figures "alloctap-munge --format binary | replay: the same figures as munged text" \
		"$T/demo.log" "$T/demo_m.atz"
else
	fail_run "$M and demo/python3-json.log exist"
fi

finish
