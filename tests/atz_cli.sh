#!/usr/bin/env bash
# atz_cli.sh: the binary format end to end through build/bench/atz_tool (lib/source.c +
# lib/atz.c): text -> binary -> text round trips on every text log in tests/data, the lz4 tool's
# view of the files, golden files (1.0, 2.0, 2.1, 2.2 and 2.3), times, stacks and mappings of 2.0
# and 2.2 traces and their passage through a re-encoding, the document's reader against the C
# reader on every version, pipes, damaged files (truncated, corrupt, newer version), and thread
# ends: the memory of a trace of a million threads, files past the reader's limits.
set -u
source "$(dirname "$0")/lib.sh"
A=build/bench/atz_tool
D=tests/data/atz
need_make "$A"

# 1. Round trips on every file of tests/data that reads as a log (text or binary; files that do
# not are skipped): the log is first put in canonical text form (lib/text.c's formatter); the
# binary must give back exactly that, and a canonical file comes back byte for byte.
n=0
while IFS= read -r f; do
	"$A" decode "$f" "$T/canon" 2>/dev/null || continue
	[ -s "$T/canon" ] || continue
	n=$((n + 1))
	if "$A" encode "$f" "$T/x.atz" && "$A" decode "$T/x.atz" "$T/back" &&
		cmp -s "$T/canon" "$T/back"; then
		ok "round trip text -> binary -> text: $f"
	else
		fail "round trip text -> binary -> text: $f"
	fi
	if cmp -s "$f" "$T/canon"; then
		ok "canonical text is byte-identical after the round trip: $f"
	fi
done < <(find tests/data -type f | sort)
check "found text logs to round-trip ($n)" test "$n" -ge 3

# A real program's trace, when the demo one is there.
if [ -f demo/python3-json.log ]; then
	check "round trip of demo/python3-json.log is byte-identical" \
		bash -c "'$A' encode demo/python3-json.log '$T/p.atz' &&
			'$A' decode '$T/p.atz' - | cmp -s - demo/python3-json.log"
fi

# 2. The lz4 tool sees a valid frame whose content starts with the stream magic.
check "lz4 -t validates a trace" lz4 -q -t "$D/python3-head.atz"
check "lz4 -d unwraps it to the ATZ stream" \
	bash -c "lz4 -q -d -c '$D/python3-head.atz' | head -c 6 | od -An -tx1 |
		grep -q '41 54 5a 00 01 00'"

# An independent reader written from doc/FORMAT.md alone decodes the same events.
for f in python3-head munged python3-head-v21:python3-head; do
	check "the document's reader (tests/atz_spec_reader.py) agrees on $D/${f%:*}.atz" \
		bash -c "lz4 -q -d -c '$D/${f%:*}.atz' | python3 tests/atz_spec_reader.py |
			cmp -s - '$D/${f#*:}.log'"
done
if [ -f demo/python3-json.log ]; then
	"$A" encode -V 2.1 demo/python3-json.log "$T/p21.atz"
	"$A" encode -V 2.2 demo/python3-json.log "$T/p22.atz"
	"$A" encode -V 2.3 demo/python3-json.log "$T/p23.atz"
	for v in 21 22 23; do
		check "the document's reader agrees on the python3 trace as $v" \
			bash -c "lz4 -q -d -c '$T/p$v.atz' | python3 tests/atz_spec_reader.py |
				cmp -s - demo/python3-json.log"
	done
	check "the python3 trace: 2.3 is the default, and at least 25% smaller than 2.1" \
		bash -c "cmp -s '$T/p.atz' '$T/p23.atz' &&
			test \$((\$(stat -c %s '$T/p23.atz') * 4)) -le \$((\$(stat -c %s '$T/p21.atz') * 3))"
	check_eq "the python3 trace (no thread ends): 2.3 takes the bytes 2.2 takes" \
		"$(stat -c %s "$T/p22.atz")" "$(stat -c %s "$T/p23.atz")"
	build/alloctap-munge -q --format binary demo/python3-json.log -o "$T/munged21.atz" 2>/dev/null
	build/alloctap-munge -q demo/python3-json.log -o "$T/munged.log" 2>/dev/null
	check "the document's reader agrees on the munged python3 trace (2.1, munge's output)" \
		bash -c "lz4 -q -d -c '$T/munged21.atz' | python3 tests/atz_spec_reader.py |
			cmp -s - '$T/munged.log'"
	check "2.3 -> 2.1 -> 2.3 gives the same trace back" \
		bash -c "'$A' encode -V 2.1 '$T/p23.atz' '$T/back21.atz' &&
			'$A' encode '$T/back21.atz' '$T/back23.atz' && cmp -s '$T/back23.atz' '$T/p23.atz'"
fi

# 3. Golden files: the encoder is deterministic and the format has not drifted.
# The 1.0 golden files stay as 1.x writers made them: every reader still reads 1.x.
check "raw golden file re-encodes byte-identical as 1.x" \
	bash -c "'$A' encode -V 1 '$D/python3-head.log' '$T/g.atz' &&
		cmp -s '$T/g.atz' '$D/python3-head.atz'"
check "munged golden file re-encodes byte-identical as 1.x" \
	bash -c "'$A' encode -V 1 '$D/munged.log' '$T/m.atz' && cmp -s '$T/m.atz' '$D/munged.atz'"
check "text encodes as 2.3 with the NO_TIMES and NO_STACKS flags (header 02 03 06)" \
	bash -c "'$A' encode '$D/python3-head.log' - | lz4 -q -d -c | head -c 7 | od -An -tx1 |
		grep -q '41 54 5a 00 02 03 06'"
for v in 2.0 2.1 2.2 2.3; do
	check "$v from text decodes back to the same text" \
		bash -c "'$A' encode -V $v '$D/python3-head.log' - | '$A' decode - - |
			cmp -s - '$D/python3-head.log'"
done
# 2.1 golden file: python3-head.log as 2.1 writes it, which every later reader reads.
check "2.1 golden file re-encodes byte-identical as 2.1" \
	bash -c "'$A' encode -V 2.1 '$D/python3-head.log' '$T/g21.atz' &&
		cmp -s '$T/g21.atz' '$D/python3-head-v21.atz'"
check "2.1 golden file: events" \
	bash -c "'$A' decode '$D/python3-head-v21.atz' - | cmp -s - '$D/python3-head.log'"

# 2.0 and 2.2 golden files: python3-head.log with synthetic times and 20 stacks of 20 frames
# after three mappings (atz_tool synth -V 2.0 -t -s 20, and the same with -V 2.2). Their events,
# times, stacks and mappings, as the C reader and the document's reader see them, are the files
# beside the 2.0 one (synth-v2.*).
G=$D/synth-v2
check "2.0 golden file re-synthesizes byte-identical" \
	bash -c "'$A' synth -V 2.0 -t -s 20 '$D/python3-head.log' '$T/s.atz' &&
		cmp -s '$T/s.atz' '$G.atz'"
check "2.2 golden file re-synthesizes byte-identical" \
	bash -c "'$A' synth -V 2.2 -t -s 20 '$D/python3-head.log' '$T/s22.atz' &&
		cmp -s '$T/s22.atz' '$D/synth-v22.atz'"
for g in "$G" "$D/synth-v22"; do
	v=2.0
	[ "$g" = "$G" ] || v=2.2
	check "$v golden file: events" bash -c "'$A' decode '$g.atz' - | cmp -s - '$D/python3-head.log'"
	check "$v golden file: atz_tool stacks" bash -c "'$A' stacks '$g.atz' | cmp -s - '$G.stacks'"
	check "$v golden file: atz_tool mappings" \
		bash -c "'$A' mappings '$g.atz' | cmp -s - '$G.mappings'"
	check "$v golden file: atz_tool times" bash -c "'$A' times '$g.atz' | cmp -s - '$G.times'"
	for what in stacks mappings times; do
		check "the document's reader agrees on the $v golden file's $what" \
			bash -c "lz4 -q -d -c '$g.atz' | python3 tests/atz_spec_reader.py --$what |
				cmp -s - '$G.$what'"
	done
done
# 2.6 golden file: the 2.0 one encoded by two threads into frames of 16 records at most, each
# after the first going on from the stacks before it (atz_tool encode -F 16). Read as one
# trace: the same events, times, stacks and mappings as the 2.0 file's; the lz4 tool checks
# every frame.
check "2.6 golden file re-encodes byte-identical" \
	bash -c "'$A' encode -F 16 '$G.atz' '$T/s26.atz' && cmp -s '$T/s26.atz' '$D/synth-v26.atz'"
check "2.6 golden file: events" bash -c "'$A' decode '$D/synth-v26.atz' - | cmp -s - '$D/python3-head.log'"
for what in stacks mappings times; do
	check "2.6 golden file: atz_tool $what" \
		bash -c "'$A' $what '$D/synth-v26.atz' | cmp -s - '$G.$what'"
done
frames=$(lz4_frames "$D/synth-v26.atz")
check "2.6 golden file: lz4 -t reads its frames (${frames:-none}), more than 10" \
	bash -c "lz4 -q -t '$D/synth-v26.atz' && test '${frames:-0}' -gt 10"
# each frame's header: the first two (the sink's, then the first chunk's, before any stack) 2.5
# with flags 0, the 14 after them 2.6 with STACKS_GO_ON
check_eq "2.6 golden file: two 2.5 frames, then 2.6 frames whose stacks go on" \
	"$(for n in $(seq 1 "${frames:-0}"); do lz4_frames "$D/synth-v26.atz" "$n" |
		lz4 -q -d -c | head -c 7 | od -An -tx1; done | uniq -c | tr -s ' ')" \
	"$(printf ' 2 41 54 5a 00 02 05 00\n 14 41 54 5a 00 02 06 08')"
# The document's reader walks the lz4 frames itself (--file): to it too the 2.6 file is the 2.0
# file's trace. Two 2.0 traces one after the other: the second's stacks start over (its STACK
# id 1 would be out of order to a reader that kept the first's). A raw trace after a munged one,
# and bytes that are no lz4 frame after a frame, are refused, as the C reader refuses them.
check "the document's reader, walking the frames itself, agrees on the 2.6 golden file's events" \
	bash -c "python3 tests/atz_spec_reader.py --file '$D/synth-v26.atz' | cmp -s - '$D/python3-head.log'"
for what in stacks mappings times; do
	check "the document's reader agrees on the 2.6 golden file's $what" \
		bash -c "python3 tests/atz_spec_reader.py --file '$D/synth-v26.atz' --$what |
			cmp -s - '$G.$what'"
done
check "the document's reader: two 2.0 traces back to back, the second's stacks numbered from 1" \
	bash -c "cat '$G.atz' '$G.atz' >'$T/back2back.atz' &&
		python3 tests/atz_spec_reader.py --file '$T/back2back.atz' --stacks |
		cmp -s - <(cat '$G.stacks' '$G.stacks')"
cat "$D/munged.atz" "$G.atz" >"$T/mixed.atz"
check_eq "the document's reader refuses a raw frame after a munged one" \
	"atz_spec_reader: frame 2 is raw after a munged one" \
	"$(python3 tests/atz_spec_reader.py --file "$T/mixed.atz" 2>&1 >/dev/null)"
{ cat "$G.atz"; printf 'junk'; } >"$T/junk.atz"
check_eq "the document's reader refuses bytes after a frame that are no lz4 frame" \
	"atz_spec_reader: unexpected data after the lz4 frame at byte offset $(stat -c %s "$G.atz"): not another lz4 frame" \
	"$(python3 tests/atz_spec_reader.py --file "$T/junk.atz" 2>&1 >/dev/null)"
check_eq "2.0 golden file: one stack line per malloc-family call with a result" \
	"$(grep -vc 'free(\|jemalloc_stats' "$D/python3-head.log")" "$(wc -l < "$G.stacks")"
check_eq "2.0 golden file: the first mapping line" \
	"1 0x7f3a1c000000-0x7f3a1c200000 0x28000 4a912c07e35518b06fd2338e41c90a7b9526f85d /usr/lib/x86_64-linux-gnu/libc.so.6" \
	"$(head -1 "$G.mappings")"
for g in "$G" "$D/synth-v22"; do
	check "the document's reader agrees on the golden file $g.atz's events" \
		bash -c "lz4 -q -d -c '$g.atz' | python3 tests/atz_spec_reader.py |
			cmp -s - '$D/python3-head.log'"
done
check "re-encoding a 2.0 trace keeps its times, stacks and mappings" \
	bash -c "'$A' encode -l 9 '$G.atz' '$T/re2.atz' && ! cmp -s '$T/re2.atz' '$G.atz' &&
		'$A' stacks '$T/re2.atz' | cmp -s - '$G.stacks' &&
		'$A' mappings '$T/re2.atz' | cmp -s - '$G.mappings' &&
		'$A' times '$T/re2.atz' | cmp -s - '$G.times'"
check "two 2.0 traces one after the other re-encode as one, stack ids numbered on" \
	bash -c "cat '$G.atz' '$G.atz' > '$T/twice.atz' && '$A' encode '$T/twice.atz' '$T/one.atz' &&
		'$A' stacks '$T/one.atz' | cmp -s - <(cat '$G.stacks' '$G.stacks') &&
		test \"\$('$A' mappings '$T/one.atz' | wc -l)\" = 6 &&
		lz4 -q -d -c '$T/one.atz' | python3 tests/atz_spec_reader.py --stacks |
		cmp -s - <(cat '$G.stacks' '$G.stacks')"
check "a 2.0 trace written as 1.x keeps its events and drops times and stacks" \
	bash -c "'$A' encode -V 1 '$G.atz' '$T/v1.atz' && '$A' decode '$T/v1.atz' - |
		cmp -s - '$D/python3-head.log' && test -z \"\$('$A' stacks '$T/v1.atz')\" &&
		! grep -qv '^0 0\$' <('$A' times '$T/v1.atz')"
# A stack record with the KINDS flag (doc/FORMAT.md 5.6): with every frame native, both
# readers read it as a stack without the flag; a frame of a reserved kind, both refuse.
kinds_stream() {
	printf 'ATZ\0\2\0\0\52\10testhost\0'
	printf "\xc3\x0b\x01\x07\x02\x04\x90\x20\xf4\xff\x03\x00\x$1"
	printf '\x91\x07\x09\x70\x20\x80\x08\xa1\x1f\x01'
}
kinds_stream 00 | lz4 -q -BD -BX -c > "$T/kinds0.atz"
kinds_stream 01 | lz4 -q -BD -BX -c > "$T/kinds1.atz"
check_eq "a stack of native frames with KINDS: atz_tool's stacks" "malloc complete 0x1010 0x900a" \
	"$("$A" stacks "$T/kinds0.atz")"
check_eq "a stack of native frames with KINDS: the document's reader's stacks" \
	"malloc complete 0x1010 0x900a" \
	"$(lz4 -q -d -c "$T/kinds0.atz" | python3 tests/atz_spec_reader.py --stacks)"
check "a frame of a reserved kind: atz_tool refuses it, naming the record's offset" \
	bash -c "! '$A' stacks '$T/kinds1.atz' 2>'$T/kinds1.err' &&
		grep -q 'corrupt stream at content byte 18 .*: stack record with a frame of kind 1 at frame 1' '$T/kinds1.err'"
check "a frame of a reserved kind: the document's reader refuses it" \
	bash -c "! lz4 -q -d -c '$T/kinds1.atz' | python3 tests/atz_spec_reader.py --stacks"
# A NAMES record (doc/FORMAT.md 5.10) and a frame of the test kind it names (254, which no
# version defines): the document's reader takes both when told to (--test-kinds) and prints
# them; without, it refuses them, and so does atz_tool, naming the record's offset.
printf 'ATZ\0\2\0\0\52\10testhost\0\xc7\x0a\x07\xfe\x05\x0c\x01fa.py' >"$T/names.raw"
printf '\xc3\x0b\x01\x07\x02\x04\x90\x20\xf4\xff\x03\x00\xfe' >>"$T/names.raw"
printf '\x91\x07\x09\x70\x20\x80\x08\xa1\x1f\x01' >>"$T/names.raw"
lz4 -q -BD -BX -c "$T/names.raw" > "$T/names.atz"
check_eq "a NAMES record: the document's reader prints it" "NAMES 7 test 0x5 12 f a.py" \
	"$(lz4 -q -d -c "$T/names.atz" | python3 tests/atz_spec_reader.py --test-kinds --names)"
check_eq "a frame of the test kind: the document's reader prints it by kind" \
	"malloc complete 0x1010 test:0x900a" \
	"$(lz4 -q -d -c "$T/names.atz" | python3 tests/atz_spec_reader.py --test-kinds --stacks)"
check "a NAMES record of the test kind: the document's reader refuses it untold" \
	bash -c "! lz4 -q -d -c '$T/names.atz' | python3 tests/atz_spec_reader.py --names"
check "a NAMES record of the test kind: atz_tool refuses it, naming the record's offset" \
	bash -c "! '$A' stacks '$T/names.atz' 2>'$T/names.err' &&
		grep -q 'corrupt stream at content byte 18 .*: names record for frames of kind 254' '$T/names.err'"
check "munged binary decodes to munged text" \
	bash -c "'$A' decode '$D/munged.atz' - | cmp -s - '$D/munged.log'"
check "a recompressed frame (lz4 -d | lz4, 4 MB blocks) still decodes" \
	bash -c "lz4 -q -d -c '$D/python3-head.atz' | lz4 -q -B7 -c > '$T/re.atz' &&
		'$A' decode '$T/re.atz' - | cmp -s - '$D/python3-head.log'"

# 4. Pipes: format detection works without seeking.
check "binary on stdin through a pipe" \
	bash -c "cat '$D/python3-head.atz' | '$A' decode - - | cmp -s - '$D/python3-head.log'"
check "text on stdin through a pipe" \
	bash -c "cat '$D/munged.log' | '$A' encode - - | '$A' decode - - | cmp -s - '$D/munged.log'"

# 5. Damaged input: exit 1 and a message naming the file and the offset.
size=$(stat -c %s "$D/python3-head.atz")
head -c $((size - 30)) "$D/python3-head.atz" > "$T/cut.atz"
"$A" decode "$T/cut.atz" "$T/cut.log" 2> "$T/err"
rc=$?
check "truncated trace: exit 1" test "$rc" -eq 1
check "truncated trace: message" \
	grep -q "^atz_tool: $T/cut.atz: truncated after 0 events: the input ends inside the block at that offset; the last whole block ends at byte offset 33 of $((size - 30))\$" "$T/err"

cp "$D/python3-head.atz" "$T/flip.atz"
printf '\x55' | dd of="$T/flip.atz" bs=1 seek=100 conv=notrunc status=none
"$A" decode "$T/flip.atz" /dev/null 2> "$T/err"
rc=$?
check "corrupt block: exit 1" test "$rc" -eq 1
check "corrupt block: message with its offset" \
	grep -q "^atz_tool: $T/flip.atz: corrupt lz4 block at byte offset 33 " "$T/err"

printf 'ATZ\0\003\001\0\0\0\0' | lz4 -q -c > "$T/v3.atz"
"$A" decode "$T/v3.atz" /dev/null 2> "$T/err"
rc=$?
check "newer major version: exit 1" test "$rc" -eq 1
check "newer major version: refused with a clear message" \
	grep -q "^atz_tool: $T/v3.atz: trace format version 3.1 is newer than this reader's (2.6): use a newer alloctap\$" "$T/err"

# A stack id used before its stack record: corruption at its content offset.
printf 'ATZ\0\002\000\000\001\000\000\221\001\001\160\010\040\003\005' | lz4 -q -c > "$T/early.atz"
"$A" stacks "$T/early.atz" > /dev/null 2> "$T/err"
rc=$?
check "stack used before its record: exit 1" test "$rc" -eq 1
check "stack used before its record: message with the content offset" \
	grep -q "^atz_tool: $T/early.atz: corrupt stream at content byte 16 (lz4 block ending at byte offset [0-9]*): event with stack id 5 (used before its stack record)\$" "$T/err"

printf 'hello' | lz4 -q -c > "$T/other.lz4"
"$A" decode "$T/other.lz4" /dev/null 2> "$T/err"
check "an lz4 file of something else is refused" \
	grep -q "an lz4 file, but not an alloctap trace" "$T/err"

"$A" encode "$D/bad-function.log" "$T/bad.atz" 2> "$T/err"
rc=$?
check "bad text line: exit 1" test "$rc" -eq 1
check "bad text line: FILE:LINE: reason" \
	grep -qx "atz_tool: $D/bad-function.log:2: unknown function" "$T/err"

head -c 100000 /dev/urandom > "$T/random.bin"
timeout 10 "$A" decode "$T/random.bin" /dev/null 2>/dev/null
rc=$?
check "random bytes: exit 1, no crash or hang" test "$rc" -eq 1

# 6. Thread ends (2.3, doc/FORMAT.md 5.9). The golden file: three threads of process 1000, one
# malloc each, each ended after it (atz_tool threads 3).
check "2.3 golden file re-generates byte-identical" \
	bash -c "'$A' threads 3 '$T/t3.atz' && cmp -s '$T/t3.atz' '$D/threads-v23.atz'"
check "2.3 golden file: its END records (lz4 -d)" \
	bash -c "lz4 -q -d -c '$D/threads-v23.atz' | tail -c +19 | od -An -tx1 | tr -d '\n' |
		grep -qx ' 95 e8 07 01 47 10 91 80 80 40 c6 01 00 95 e8 07 02 47 10 a1 80 80 40 c6 01 01 95 e8 07 03 47 10 b1 80 80 40 c6 01 02'"
"$A" threads 2000 "$T/t2k.atz"
check "2.3 threads trace: the document's reader agrees" \
	bash -c "lz4 -q -d -c '$T/t2k.atz' | python3 tests/atz_spec_reader.py |
		cmp -s - <('$A' decode '$T/t2k.atz' -)"
check_eq "2.3 threads trace: one malloc a thread" \
	"2000 1000 1999 malloc(16)=0x1000f9e0" "$("$A" decode "$T/t2k.atz" - | wc -l) $(sed -n 1999p < <("$A" decode "$T/t2k.atz" -))"

# A million threads, one malloc each: reading the trace costs what reading its text costs, not
# the 6 KB a thread it cost before thread states were small and released at their ends (6.3 GB
# in report and munge, 8.4 GB in munge --format binary). Peak RSS by /usr/bin/time.
peak_kb() { # COMMAND...: its peak RSS in KB (its output dropped), or "failed"
	/usr/bin/time -f '%M' -o "$T/peak" "$@" > /dev/null 2>&1 && cat "$T/peak" || echo failed
}
"$A" threads 1000000 "$T/t1m.atz"
"$A" threads -V 2.2 1000000 "$T/t1m22.atz"
"$A" decode "$T/t1m.atz" "$T/t1m.log"
for c in "report:build/alloctap-report summary" "munge:build/alloctap-munge -q -o $T/m1m.log" \
	 "munge --format binary:build/alloctap-munge -q --format binary -o $T/m1m.atz"; do
	text=$(peak_kb ${c#*:} "$T/t1m.log")
	bin=$(peak_kb ${c#*:} "$T/t1m.atz")
	old=$(peak_kb ${c#*:} "$T/t1m22.atz")
	check "1,000,000 threads, ${c%%:*}: 2.3 peak RSS ${bin} KB within text's ${text} KB + 64 MB" \
		test "$bin" != failed -a "$text" != failed -a "${bin:-0}" -le $((${text:-0} + 65536))
	check "1,000,000 threads, ${c%%:*}: 2.2 (no ends) peak RSS ${old} KB within text's + 600 MB" \
		test "$old" != failed -a "${old:-0}" -le $((${text:-0} + 614400))
done
w=$(peak_kb "$A" threads 100000 "$T/t100k.atz")
check "the writer's peak RSS after 100,000 threads that ended: $w KB, under 16 MB" \
	test "$w" != failed -a "${w:-0}" -le 16384

# Files past the reader's limits (doc/FORMAT.md 8), which no writer makes: refused with the
# offset and the limit, in bounded memory.
python3 - "$T" <<'PY'
import sys
def varint(v):
    b = bytearray()
    while v >= 0x80:
        b.append(v & 0x7f | 0x80)
        v >>= 7
    b.append(v)
    return bytes(b)
hdr = b"ATZ\0\x02\x03\x06\x00\x00\x00"
# 2^22 + 1 threads that never end
open(sys.argv[1] + "/threads.raw", "wb").write(
    hdr + b"".join(b"\x95\x01" + varint(t) for t in range(1, (1 << 22) + 2)))
# 257 threads of 65,536 live blocks each: one more block than 2^24
one = b"\x47\x10\x81\x10" + b"\x06" * 65535  # 0x1000, then from the top
open(sys.argv[1] + "/blocks.raw", "wb").write(
    hdr + b"".join(b"\x95\x01" + varint(t) + one for t in range(1, 258)))
PY
lz4 -q -c "$T/threads.raw" > "$T/threads.atz"
lz4 -q -c "$T/blocks.raw" > "$T/blocks.atz"
/usr/bin/time -f '%M' -o "$T/peak" "$A" decode "$T/threads.atz" /dev/null 2> "$T/err"
rc=$?
check "2^22 + 1 threads that never end: exit 1" test "$rc" -eq 1
check "2^22 + 1 threads that never end: the offset and the limit" \
	grep -q "^atz_tool: $T/threads.atz: corrupt stream at content byte 23052173 (lz4 block ending at byte offset [0-9]*): a new thread while 4194304 threads have not ended (this reader holds at most 4194304 at once)\$" "$T/err"
check "2^22 + 1 threads that never end: refused within 1.5 GB ($(tail -1 "$T/peak") KB)" \
	test "$(tail -1 "$T/peak")" -le 1572864
/usr/bin/time -f '%M' -o "$T/peak" "$A" decode "$T/blocks.atz" /dev/null 2> "$T/err"
rc=$?
check "2^24 + 1 live blocks: exit 1" test "$rc" -eq 1
check "2^24 + 1 live blocks: the offset and the limit" \
	grep -q "^atz_tool: $T/blocks.atz: corrupt stream at content byte 16778895 (lz4 block ending at byte offset [0-9]*): an allocation while 16777216 blocks are live in the threads' tables (this reader holds at most 16777216)\$" "$T/err"
check "2^24 + 1 live blocks: refused within 1 GB ($(tail -1 "$T/peak") KB)" \
	test "$(tail -1 "$T/peak")" -le 1048576

finish
