#!/usr/bin/env bash
# munge_cli.sh: command-line tests of alloctap-munge.
#
# Inputs and expected outputs live in tests/data/munge/ (see its README): for each case the exact
# stdout, the exact stderr (or its summary line) and the exit code. Prints one TAP line per case
# and exits non-zero if any failed.
set -u
cd "$(dirname "$0")/.."
M=build/alloctap-munge
D=tests/data/munge
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
failed=0

ok() { echo "ok - $1"; }
not_ok() {
	echo "not ok - $1"
	failed=$((failed + 1))
}

# check NAME RC OUT ERR -- COMMAND...
# Runs COMMAND (stdout to $T/out, stderr to $T/err) and checks its exit code is RC, its stdout
# equals the file OUT ("" for empty, "-" to skip) and its stderr equals the file ERR ("" for empty, "-" to
# skip). Pass expected text instead of a file by writing it to $T/want_* first.
check() {
	local name=$1 rc=$2 out=$3 err=$4
	shift 5
	"$@" >"$T/out" 2>"$T/err"
	local got=$?
	local why=""
	[ "$got" -eq "$rc" ] || why="exit $got, want $rc"
	if [ -z "$why" ]; then
		if [ -z "$out" ]; then
			[ -s "$T/out" ] && why="stdout not empty"
		elif [ "$out" != "-" ] && ! cmp -s "$T/out" "$out"; then
			why="stdout differs from $out"
		fi
	fi
	if [ -z "$why" ] && [ "$err" != "-" ]; then
		if [ -z "$err" ]; then
			[ -s "$T/err" ] && why="stderr not empty: $(head -c 300 "$T/err")"
		elif ! cmp -s "$T/err" "$err"; then
			why="stderr differs from $err: $(diff "$err" "$T/err" | head -5)"
		fi
	fi
	if [ -z "$why" ]; then ok "$name"; else not_ok "$name ($why)"; fi
}

# last_err_line_is NAME TEXT: the last stderr line of the previous check is TEXT.
last_err_line_is() {
	local got
	got=$(tail -n 1 "$T/err")
	if [ "$got" = "$2" ]; then ok "$1"; else not_ok "$1 (got: $got)"; fi
}

if [ ! -x "$M" ]; then
	not_ok "$M is built (run make first)"
	exit 1
fi

# --- logs the reference munges: stdout must be the reference's, byte for byte ---------------
check "normal log" 0 $D/normal.out $D/normal.err -- $M $D/normal.log
check "CRLF line ends" 0 $D/normal.out $D/crlf.err -- $M $D/crlf.log
check "no final newline" 0 $D/no_final_newline.out $D/no_final_newline.err \
	-- $M $D/no_final_newline.log
check "empty and blank lines are dropped and reported" 0 $D/empty_lines.out $D/empty_lines.err \
	-- $M $D/empty_lines.log
check "binary garbage between good lines" 0 $D/garbage_mixed.out - -- $M $D/garbage_mixed.bin
last_err_line_is "binary garbage: summary" \
	"alloctap-munge: $D/garbage_mixed.bin: 46 lines read, 4 written, 42 ignored"
if grep -q '[^ -~]' "$T/err"; then
	not_ok "binary garbage: messages escape non-ASCII bytes"
else
	ok "binary garbage: messages escape non-ASCII bytes"
fi
check "4 KiB of random bytes: no crash" 0 "" - -- $M $D/random.bin
last_err_line_is "random bytes: summary" \
	"alloctap-munge: $D/random.bin: $(($(tr -cd '\n' <$D/random.bin | wc -c) + 1)) lines read, 0 written, $(($(tr -cd '\n' <$D/random.bin | wc -c) + 1)) ignored"

# --- input and output plumbing ---------------------------------------------------------------
check "standard input when no FILE" 0 $D/normal.out - -- $M <$D/normal.log
last_err_line_is "standard input: summary names <stdin>" \
	"alloctap-munge: <stdin>: 413 lines read, 407 written, 6 ignored"
check "standard input as -" 0 $D/normal.out - -- $M - <$D/normal.log
cat $D/normal.log >"$T/fifo.log"
check "a pipe as input, one thread" 0 $D/normal.out - -- sh -c "cat '$T/fifo.log' | $M --threads 1"
check "a pipe as input, two threads" 0 $D/normal.out - -- sh -c "cat '$T/fifo.log' | $M --threads 2"
check "-o writes the file" 0 "" $D/normal.err -- $M -o "$T/munged" $D/normal.log
if cmp -s "$T/munged" $D/normal.out; then ok "-o file content"; else not_ok "-o file content"; fi
tail -n 1 $D/normal.err >"$T/want_err"
check "-q keeps only the summary" 0 $D/normal.out "$T/want_err" -- $M -q $D/normal.log
check "-qq prints nothing" 0 $D/normal.out "" -- $M -qq $D/normal.log
check "--pid keeps one process as process 1" 0 $D/normal.pid15487.out - \
	-- $M --pid 15487 $D/normal.log
last_err_line_is "--pid: summary counts the other processes" \
	"alloctap-munge: $D/normal.log: 413 lines read, 141 written, 2 ignored, 270 of other processes"
check "--stats-every 50" 0 $D/normal.stats50.out - -- $M --stats-every 50 $D/normal.log
check "--strict on a clean log" 0 $D/no_final_newline.out - -- $M --strict $D/no_final_newline.log
printf '1 1 malloc(8)=#1\n1 1 free(#1)\n' >"$T/want_out"
{
	echo "alloctap-munge: $D/strict.log:3: Ignored \"1 1 free(0x10)\": Did not see an alloc for pointer (--strict)"
	echo "alloctap-munge: $D/strict.log: 3 lines read, 2 written, 1 ignored"
} >"$T/want_err"
check "--strict stops at the first dropped line" 1 "$T/want_out" "$T/want_err" \
	-- $M --strict $D/strict.log

# --- long lines ------------------------------------------------------------------------------
{
	printf '1 1 malloc('
	head -c 1048576 /dev/zero | tr '\0' '0'
	printf '8)=0x10\n1 1 free(0x10)\n'
	head -c 1048576 /dev/zero | tr '\0' 'x'
	printf '\n'
} >"$T/long.log"
{
	printf '1 1 malloc('
	head -c 1048576 /dev/zero | tr '\0' '0'
	printf '8)=#1\n1 1 free(#1)\n'
} >"$T/want_out"
check "1 MiB lines" 0 "$T/want_out" - -- $M "$T/long.log"
echo "alloctap-munge: $T/long.log:3: Ignored \"$(head -c 200 /dev/zero | tr '\0' 'x')...\": Malformed input" >"$T/want_err"
echo "alloctap-munge: $T/long.log: 3 lines read, 2 written, 1 ignored" >>"$T/want_err"
if cmp -s "$T/err" "$T/want_err"; then ok "1 MiB line: echo cut at 200 bytes"; else
	not_ok "1 MiB line: echo cut at 200 bytes"; fi

# --- errors ----------------------------------------------------------------------------------
echo "alloctap-munge: $D/nonexistent.log: cannot open: No such file or directory" >"$T/want_err"
check "nonexistent input" 1 "" "$T/want_err" -- $M $D/nonexistent.log
{
	echo "alloctap-munge: $D: read error: Is a directory"
	echo "alloctap-munge: $D: 0 lines read, 0 written, 0 ignored"
} >"$T/want_err"
check "directory as input" 1 "" "$T/want_err" -- $M $D
echo "alloctap-munge: /nonexistent/dir/out: cannot open for writing: No such file or directory" >"$T/want_err"
check "-o into a missing directory" 1 "" "$T/want_err" -- $M -o /nonexistent/dir/out $D/normal.log
echo "alloctap-munge: $D: cannot open for writing: Is a directory" >"$T/want_err"
check "-o to a directory" 1 "" "$T/want_err" -- $M -o $D $D/normal.log
{
	echo "alloctap-munge: /dev/full: write error: No space left on device"
	echo "alloctap-munge: $D/normal.log: 413 lines read, 407 written, 6 ignored"
} >"$T/want_err"
check "full disk (-o /dev/full)" 1 "" "$T/want_err" -- $M -q -o /dev/full $D/normal.log

# a closed pipe: the writer gets EPIPE, says so, exits 1, and does not read on to the end
awk 'BEGIN { for (i = 0; i < 400000; i++) printf "1 1 malloc(8)=0x%x\n", 16 * (i + 1) }' >"$T/big.log"
timeout 60 $M "$T/big.log" 2>"$T/err" | head -n 1 >"$T/out"
status=("${PIPESTATUS[@]}")
if [ "${status[0]}" -eq 1 ] && [ "$(cat "$T/out")" = "1 1 malloc(8)=#1" ] &&
	grep -qx 'alloctap-munge: <stdout>: write error: Broken pipe' "$T/err"; then
	ok "| head -1: EPIPE reported, exit 1"
else
	not_ok "| head -1: EPIPE reported, exit 1 (status ${status[*]}, stderr $(head -c 200 "$T/err"))"
fi

printf "alloctap-munge: unknown option --bogus\nTry 'alloctap-munge --help'.\n" >"$T/want_err"
check "unknown option" 2 "" "$T/want_err" -- $M --bogus $D/normal.log
printf "alloctap-munge: missing argument for option -o\nTry 'alloctap-munge --help'.\n" >"$T/want_err"
check "missing option argument" 2 "" "$T/want_err" -- $M $D/normal.log -o
check "--stats-every 0" 2 "" - -- $M --stats-every 0 $D/normal.log
check "--stats-every x" 2 "" - -- $M --stats-every x $D/normal.log
check "--pid not a number" 2 "" - -- $M --pid 12ab $D/normal.log
check "--threads 3" 2 "" - -- $M --threads 3 $D/normal.log
check "--threads 1 gives the same output" 0 $D/normal.out $D/normal.err -- $M --threads 1 $D/normal.log
check "two input files" 2 "" - -- $M $D/normal.log $D/crlf.log
check "--help" 0 - "" -- $M --help
cp "$T/out" "$T/help"
if grep -q '^Usage: alloctap-munge ' "$T/help" && grep -q '^Exit status: 0 success' "$T/help" &&
	grep -q 'more than' "$T/help"; then
	ok "--help shows usage, exit codes and the known difference"
else
	not_ok "--help shows usage, exit codes and the known difference"
fi

[ "$failed" -eq 0 ]
