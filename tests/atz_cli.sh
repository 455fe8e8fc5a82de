#!/usr/bin/env bash
# atz_cli.sh: the binary format end to end through build/bench/atz_tool (lib/source.c +
# lib/atz.c): text -> binary -> text round trips on every text log in tests/data, the lz4 tool's
# view of the files, golden files, pipes, and damaged files (truncated, corrupt, newer version).
# Prints TAP lines; exits non-zero if any case failed.
set -u
cd "$(dirname "$0")/.."
make -s build/bench/atz_tool >/dev/null || { echo "not ok - build build/bench/atz_tool"; exit 1; }
T=build/bench/atz_tool
D=tests/data/atz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

ok() { echo "ok - $1"; }
nok() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { # check DESCRIPTION COMMAND...
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}

# 1. Round trips on every file of tests/data that reads as a log (text or binary; files that do
# not are skipped): the log is first put in canonical text form (lib/text.c's formatter); the
# binary must give back exactly that, and a canonical file comes back byte for byte.
n=0
while IFS= read -r f; do
	"$T" decode "$f" "$tmp/canon" 2>/dev/null || continue
	[ -s "$tmp/canon" ] || continue
	n=$((n + 1))
	if "$T" encode "$f" "$tmp/x.atz" && "$T" decode "$tmp/x.atz" "$tmp/back" &&
		cmp -s "$tmp/canon" "$tmp/back"; then
		ok "round trip text -> binary -> text: $f"
	else
		nok "round trip text -> binary -> text: $f"
	fi
	if cmp -s "$f" "$tmp/canon"; then
		ok "canonical text is byte-identical after the round trip: $f"
	fi
done < <(find tests/data -type f | sort)
check "found text logs to round-trip ($n)" test "$n" -ge 3

# A real program's trace, when the demo one is there.
if [ -f demo/python3-json.log ]; then
	check "round trip of demo/python3-json.log is byte-identical" \
		bash -c "'$T' encode demo/python3-json.log '$tmp/p.atz' &&
			'$T' decode '$tmp/p.atz' - | cmp -s - demo/python3-json.log"
fi

# 2. The lz4 tool sees a valid frame whose content starts with the stream magic.
check "lz4 -t validates a trace" lz4 -q -t "$D/python3-head.atz"
check "lz4 -d unwraps it to the ATZ stream" \
	bash -c "lz4 -q -d -c '$D/python3-head.atz' | head -c 6 | od -An -tx1 |
		grep -q '41 54 5a 00 01 00'"

# An independent reader written from doc/FORMAT.md alone decodes the same events.
for f in "$D/python3-head.atz" "$D/munged.atz"; do
	check "the document's reader (tests/atz_spec_reader.py) agrees on $f" \
		bash -c "lz4 -q -d -c '$f' | python3 tests/atz_spec_reader.py | cmp -s - '${f%.atz}.log'"
done
if [ -f demo/python3-json.log ]; then
	check "the document's reader agrees on the python3 trace" \
		bash -c "lz4 -q -d -c '$tmp/p.atz' | python3 tests/atz_spec_reader.py |
			cmp -s - demo/python3-json.log"
fi

# 3. Golden files: the encoder is deterministic and the format has not drifted.
check "raw golden file re-encodes byte-identical" \
	bash -c "'$T' encode '$D/python3-head.log' '$tmp/g.atz' && cmp -s '$tmp/g.atz' '$D/python3-head.atz'"
check "munged golden file re-encodes byte-identical" \
	bash -c "'$T' encode '$D/munged.log' '$tmp/m.atz' && cmp -s '$tmp/m.atz' '$D/munged.atz'"
check "munged binary decodes to munged text" \
	bash -c "'$T' decode '$D/munged.atz' - | cmp -s - '$D/munged.log'"
check "a recompressed frame (lz4 -d | lz4, 4 MB blocks) still decodes" \
	bash -c "lz4 -q -d -c '$D/python3-head.atz' | lz4 -q -B7 -c > '$tmp/re.atz' &&
		'$T' decode '$tmp/re.atz' - | cmp -s - '$D/python3-head.log'"

# 4. Pipes: format detection works without seeking.
check "binary on stdin through a pipe" \
	bash -c "cat '$D/python3-head.atz' | '$T' decode - - | cmp -s - '$D/python3-head.log'"
check "text on stdin through a pipe" \
	bash -c "cat '$D/munged.log' | '$T' encode - - | '$T' decode - - | cmp -s - '$D/munged.log'"

# 5. Damaged input: exit 1 and a message naming the file and the offset.
size=$(stat -c %s "$D/python3-head.atz")
head -c $((size - 30)) "$D/python3-head.atz" > "$tmp/cut.atz"
"$T" decode "$tmp/cut.atz" "$tmp/cut.log" 2> "$tmp/err"
rc=$?
check "truncated trace: exit 1" test "$rc" -eq 1
check "truncated trace: message" \
	grep -q "^atz_tool: $tmp/cut.atz: truncated after 0 events: the input ends inside the block at that offset; the last whole block ends at byte offset 33 of $((size - 30))\$" "$tmp/err"

cp "$D/python3-head.atz" "$tmp/flip.atz"
printf '\x55' | dd of="$tmp/flip.atz" bs=1 seek=100 conv=notrunc status=none
"$T" decode "$tmp/flip.atz" /dev/null 2> "$tmp/err"
rc=$?
check "corrupt block: exit 1" test "$rc" -eq 1
check "corrupt block: message with its offset" \
	grep -q "^atz_tool: $tmp/flip.atz: corrupt lz4 block at byte offset 33 " "$tmp/err"

printf 'ATZ\0\002\001\0\0\0\0' | lz4 -q -c > "$tmp/v2.atz"
"$T" decode "$tmp/v2.atz" /dev/null 2> "$tmp/err"
rc=$?
check "newer major version: exit 1" test "$rc" -eq 1
check "newer major version: refused with a clear message" \
	grep -q "^atz_tool: $tmp/v2.atz: trace format version 2.1 is newer than this reader's (1.0): use a newer alloctap\$" "$tmp/err"

printf 'hello' | lz4 -q -c > "$tmp/other.lz4"
"$T" decode "$tmp/other.lz4" /dev/null 2> "$tmp/err"
check "an lz4 file of something else is refused" \
	grep -q "an lz4 file, but not an alloctap trace" "$tmp/err"

"$T" encode "$D/bad-function.log" "$tmp/bad.atz" 2> "$tmp/err"
rc=$?
check "bad text line: exit 1" test "$rc" -eq 1
check "bad text line: FILE:LINE: reason" \
	grep -qx "atz_tool: $D/bad-function.log:2: unknown function" "$tmp/err"

head -c 100000 /dev/urandom > "$tmp/random.bin"
timeout 10 "$T" decode "$tmp/random.bin" /dev/null 2>/dev/null
rc=$?
check "random bytes: exit 1, no crash or hang" test "$rc" -eq 1

[ "$fails" -eq 0 ]
