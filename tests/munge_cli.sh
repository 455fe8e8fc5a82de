#!/usr/bin/env bash
# munge_cli.sh: command-line tests of alloctap-munge.
#
# Inputs and expected outputs live in tests/data/munge/ (see its README): for each case the exact
# stdout, the exact stderr (or its summary line) and the exit code.
set -u
source "$(dirname "$0")/lib.sh"
M=build/alloctap-munge
D=tests/data/munge
need_built "$M"

# --- logs the reference munges: stdout must be the reference's, byte for byte ---------------
check_cmd "normal log" 0 $D/normal.out $D/normal.err -- $M $D/normal.log
check_cmd "CRLF line ends" 0 $D/normal.out $D/crlf.err -- $M $D/crlf.log
check_cmd "no final newline" 0 $D/no_final_newline.out $D/no_final_newline.err \
	-- $M $D/no_final_newline.log
check_cmd "empty and blank lines are dropped and reported" 0 $D/empty_lines.out $D/empty_lines.err \
	-- $M $D/empty_lines.log
check_cmd "binary garbage between good lines" 0 $D/garbage_mixed.out - -- $M $D/garbage_mixed.bin
check_err_last "binary garbage: summary" \
	"alloctap-munge: $D/garbage_mixed.bin: 46 lines read, 4 written, 42 ignored"
if grep -q '[^ -~]' "$T/err"; then
	fail "binary garbage: messages escape non-ASCII bytes"
else
	ok "binary garbage: messages escape non-ASCII bytes"
fi
check_cmd "4 KiB of random bytes: no crash" 0 "" - -- $M $D/random.bin
check_err_last "random bytes: summary" \
	"alloctap-munge: $D/random.bin: $(($(tr -cd '\n' <$D/random.bin | wc -c) + 1)) lines read, 0 written, $(($(tr -cd '\n' <$D/random.bin | wc -c) + 1)) ignored"

# --- input and output plumbing ---------------------------------------------------------------
check_cmd "standard input when no FILE" 0 $D/normal.out - -- $M <$D/normal.log
check_err_last "standard input: summary names <stdin>" \
	"alloctap-munge: <stdin>: 413 lines read, 407 written, 6 ignored, 1 not replayable"
check_cmd "standard input as -" 0 $D/normal.out - -- $M - <$D/normal.log
cat $D/normal.log >"$T/fifo.log"
check_cmd "a pipe as input, one thread" 0 $D/normal.out - -- sh -c "cat '$T/fifo.log' | $M --threads 1"
check_cmd "a pipe as input, two threads" 0 $D/normal.out - -- sh -c "cat '$T/fifo.log' | $M --threads 2"
check_cmd "-o writes the file" 0 "" $D/normal.err -- $M -o "$T/munged" $D/normal.log
check_file_eq "-o file content" "$T/munged" $D/normal.out
tail -n 1 $D/normal.err >"$T/want_err"
check_cmd "-q keeps only the summary" 0 $D/normal.out "$T/want_err" -- $M -q $D/normal.log
check_cmd "-qq prints nothing" 0 $D/normal.out "" -- $M -qq $D/normal.log
check_cmd "--pid keeps one process as process 1" 0 $D/normal.pid15487.out - \
	-- $M --pid 15487 $D/normal.log
check_err_last "--pid: summary counts the other processes" \
	"alloctap-munge: $D/normal.log: 413 lines read, 141 written, 2 ignored, 270 of other processes"
check_cmd "--stats-every 50" 0 $D/normal.stats50.out - -- $M --stats-every 50 $D/normal.log
check_cmd "--strict on a clean log" 0 $D/no_final_newline.out - -- $M --strict $D/no_final_newline.log
printf '1 1 malloc(8)=#1\n1 1 free(#1)\n' >"$T/want_out"
{
	echo "alloctap-munge: $D/strict.log:3: Ignored \"1 1 free(0x10)\": Did not see an alloc for pointer (--strict)"
	echo "alloctap-munge: $D/strict.log: 3 lines read, 2 written, 1 ignored"
} >"$T/want_err"
check_cmd "--strict stops at the first dropped line" 1 "$T/want_out" "$T/want_err" \
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
check_cmd "1 MiB lines" 0 "$T/want_out" - -- $M "$T/long.log"
echo "alloctap-munge: $T/long.log:3: Ignored \"$(head -c 200 /dev/zero | tr '\0' 'x')...\": Malformed input" >"$T/want_err"
echo "alloctap-munge: $T/long.log: 3 lines read, 2 written, 1 ignored" >>"$T/want_err"
check_file_eq "1 MiB line: echo cut at 200 bytes" "$T/err" "$T/want_err"

# --- errors ----------------------------------------------------------------------------------
echo "alloctap-munge: $D/nonexistent.log: cannot open: No such file or directory" >"$T/want_err"
check_cmd "nonexistent input" 1 "" "$T/want_err" -- $M $D/nonexistent.log
{
	echo "alloctap-munge: $D: read error: Is a directory"
	echo "alloctap-munge: $D: 0 lines read, 0 written, 0 ignored"
} >"$T/want_err"
check_cmd "directory as input" 1 "" "$T/want_err" -- $M $D
{
	echo "alloctap-munge: /dev/zero: read error: a line longer than 64 MiB (no log line is: not a log?)"
	echo "alloctap-munge: /dev/zero: 0 lines read, 0 written, 0 ignored"
} >"$T/want_err"
check_cmd "an endless line (/dev/zero): the line limit, not a buffer growing without end" 1 "" \
	"$T/want_err" -- $M /dev/zero
echo "alloctap-munge: /nonexistent/dir/out: cannot open for writing: No such file or directory" >"$T/want_err"
check_cmd "-o into a missing directory" 1 "" "$T/want_err" -- $M -o /nonexistent/dir/out $D/normal.log
echo "alloctap-munge: $D: cannot open for writing: Is a directory" >"$T/want_err"
check_cmd "-o to a directory" 1 "" "$T/want_err" -- $M -o $D $D/normal.log
mkfifo "$T/fifo"
check_err "-o a FIFO with no reader: refused at once, not waited on" 1 \
	"alloctap-munge: $T/fifo: cannot open for writing: a FIFO with no reader" \
	timeout 10 $M -o "$T/fifo" $D/normal.log
cat "$T/fifo" >"$T/fifo.out" &
reader=$!
for i in $(seq 100); do # until the reader is there
	$M -q -o "$T/fifo" $D/normal.log 2>/dev/null && break
	sleep 0.1
done
wait $reader
check_file_eq "-o a FIFO with a reader: written through" "$T/fifo.out" $D/normal.out
{
	echo "alloctap-munge: /dev/full: write error: No space left on device"
	echo "alloctap-munge: $D/normal.log: 413 lines read, 407 written, 6 ignored, 1 not replayable"
} >"$T/want_err"
check_cmd "full disk (-o /dev/full)" 1 "" "$T/want_err" -- $M -q -o /dev/full $D/normal.log

# a trace taken by attaching (alloctapd --pid): 512 frees and 3 reallocs of blocks allocated
# before it began, among 100 pairs it saw whole: one line counts them; -v lists each
awk 'BEGIN { for (i = 1; i <= 100; i++) printf "7 7 malloc(8)=0x%x\n7 7 free(0x%x)\n", 16 * i, 16 * i
	for (i = 1; i <= 512; i++) printf "7 7 free(0x%x)\n", 65536 + 16 * i
	for (i = 1; i <= 3; i++) printf "7 7 realloc(0x%x,32)=0x%x\n", 1048576 + 16 * i, 16 * i }' \
	>"$T/attached.log"
{
	echo "alloctap-munge: $T/attached.log: frees or reallocs of a pointer never allocated in the trace: 515, ignored (blocks allocated before it began, as when alloctapd attaches with --pid; -v lists them)"
	echo "alloctap-munge: $T/attached.log: 715 lines read, 200 written, 515 ignored"
} >"$T/want_err"
check_cmd "a trace taken by attaching: the unseen frees and reallocs counted in one line" 0 - \
	"$T/want_err" -- $M "$T/attached.log"
check_eq "a trace taken by attaching: the munged lines are the 100 pairs" \
	"$(wc -l <"$T/out"):$(tail -n 1 "$T/out")" "200:1 1 free(#1)"
run_cmd $M -v "$T/attached.log"
check_eq "-v: each of the 515 listed, with its line, then the count" \
	"$(grep -c ': Ignored "7 7 \(free\|realloc\)(0x[0-9a-f]*\(,32)=0x[0-9a-f]*\|)\)": Did not see an alloc for pointer$' "$T/err"):$(head -n 1 "$T/err" | cut -d: -f2-):$(wc -l <"$T/err"):$(grep -c 'in the trace: 515, ignored' "$T/err")" \
	"515: $T/attached.log:201: Ignored \"7 7 free(0x10010)\": Did not see an alloc for pointer:518:1"
check_err "--strict: the first unseen free is still an error, exit 1" 1 \
	"alloctap-munge: $T/attached.log:201: Ignored \"7 7 free(0x10010)\": Did not see an alloc for pointer (--strict)
alloctap-munge: $T/attached.log: 201 lines read, 200 written, 1 ignored" $M --strict "$T/attached.log"

# a closed pipe: the writer stops quietly, as cat does: nothing said (not even the summary),
# killed by SIGPIPE (141), without reading on to the end
awk 'BEGIN { for (i = 0; i < 400000; i++) printf "1 1 malloc(8)=0x%x\n", 16 * (i + 1) }' >"$T/big.log"
timeout 60 $M "$T/big.log" 2>"$T/err" | head -n 1 >"$T/out"
status=("${PIPESTATUS[@]}")
check_eq "| head -n 1: stopped quietly, killed by SIGPIPE (141) as cat is" \
	"${status[*]}:$(cat "$T/out"):$(wc -c <"$T/err")" "141 0:1 1 malloc(8)=#1:0" "$(head -c 200 "$T/err")"
timeout 60 $M -v "$T/big.log" 2>"$T/err" | head -n 1 >/dev/null
status=("${PIPESTATUS[@]}")
check_eq "| head -n 1 with -v: one line says the reader went away" \
	"${status[0]}:$(grep -c 'Broken pipe\|write error' "$T/err"):$(tail -n 1 "$T/err")" \
	"141:0:alloctap-munge: <stdout>: the reader went away; output stopped"

# --- lines the reference writes but no replay reads ----------------------------------------
R=build/alloctap-replay
printf '100 100 malloc(8)=0x1000\n100 100 malloc(7)\n' >"$T/nores.log"
printf '1 1 malloc(8)=#1\n1 1 malloc(7)\n' >"$T/want_out"
{
	echo "alloctap-munge: $T/nores.log:2: Written, but not replayable \"100 100 malloc(7)\": an allocation without a result (a replay needs its slot)"
	echo "alloctap-munge: $T/nores.log: 2 lines read, 2 written, 0 ignored, 1 not replayable"
} >"$T/want_err"
check_cmd "an allocation without a result: written as the reference does, with a warning" 0 \
	"$T/want_out" "$T/want_err" -- $M "$T/nores.log"
for fmt in text binary; do
	check_err "--strict --format $fmt: an allocation without a result stops the run" 1 \
		"alloctap-munge: $T/nores.log:2: Ignored \"100 100 malloc(7)\": an allocation without a result (a replay needs its slot) (--strict)
alloctap-munge: $T/nores.log: 2 lines read, 1 written, 1 ignored" \
		$M --strict --format $fmt "$T/nores.log" -o "$T/nores.$fmt"
	check_cmd "--strict --format $fmt: what was written replays" 0 "" - -- $R -q "$T/nores.$fmt"
done
printf '100 100 calloc( 2 , 8 )=0x1000\n' >"$T/spaces.log"
check_err_match "sizes with spaces: written as they are, with a warning" 0 \
	'spaces.log:1: Written, but not replayable "100 100 calloc( 2 , 8 )=0x1000": an argument that is not a decimal number' \
	$M "$T/spaces.log"
check_err_match "sizes with spaces, --strict: refused" 1 "an argument that is not a decimal number (a replay reads only those) (--strict)" \
	$M --strict "$T/spaces.log"
check_cmd "sizes with spaces, --format binary: numbers, replayable" 0 "" - \
	-- sh -c "$M --strict --format binary '$T/spaces.log' -o '$T/spaces.atz' && $R -q '$T/spaces.atz'"
printf '1 1 malloc(8)=#268435456\n1 1 free(#268435456)\n' >"$T/bigslot.log"
check_err_match "--keep-pointers, munged input: slots a replay does not have are said so" 0 \
	'bigslot.log:1: Written, but not replayable "1 1 malloc(8)=#268435456": a slot number beyond #268435455' \
	$M --keep-pointers "$T/bigslot.log"
printf '1 1 valloc(100)\n1 1 malloc(8)=#3\n' >"$T/undecided.log"
check_err_match "--keep-pointers: a line before the log shows it is munged is checked too" 0 \
	'undecided.log:1: Written, but not replayable "1 1 valloc(100)": an allocation without a result' \
	$M --keep-pointers "$T/undecided.log"
printf '1 1 malloc(4096)=c\n1 1 malloc(8)=#3\n' >"$T/neither.log"
check_err_match "--keep-pointers: a pointer neither #N nor 0x... before the log shows its kind: ignored" 0 \
	'neither.log:1: Ignored: a pointer that is neither a slot (#N) nor an address (0x...)' \
	$M --keep-pointers "$T/neither.log" -o "$T/neither.out"
check "--keep-pointers: that log's output is munged alone" \
	bash -c "printf '1 1 malloc(8)=#3\\n' | cmp - '$T/neither.out'"
check_err_match "--keep-pointers --strict --format binary: refused" 1 "a slot number beyond #268435455 (the last a replay has) (--strict)" \
	$M --keep-pointers --strict --format binary "$T/bigslot.log" -o "$T/bigslot.atz"

printf "alloctap-munge: unknown option --bogus\nTry 'alloctap-munge --help'.\n" >"$T/want_err"
check_cmd "unknown option" 2 "" "$T/want_err" -- $M --bogus $D/normal.log
printf "alloctap-munge: missing argument for option -o\nTry 'alloctap-munge --help'.\n" >"$T/want_err"
check_cmd "missing option argument" 2 "" "$T/want_err" -- $M $D/normal.log -o
check_cmd "--stats-every 0" 2 "" - -- $M --stats-every 0 $D/normal.log
check_cmd "--stats-every x" 2 "" - -- $M --stats-every x $D/normal.log
check_cmd "--pid not a number" 2 "" - -- $M --pid 12ab $D/normal.log
check_cmd "--threads 3" 2 "" - -- $M --threads 3 $D/normal.log
check_cmd "--threads 1 gives the same output" 0 $D/normal.out $D/normal.err -- $M --threads 1 $D/normal.log
check_cmd "two input files" 2 "" - -- $M $D/normal.log $D/crlf.log
check_cmd "--help" 0 - "" -- $M --help
cp "$T/out" "$T/help"
if grep -q '^Usage: alloctap-munge ' "$T/help" && grep -q '^Exit status: 0 success' "$T/help" &&
	grep -q 'more than' "$T/help"; then
	ok "--help shows usage, exit codes and the known difference"
else
	fail "--help shows usage, exit codes and the known difference"
fi

# --- many processes: memory per process, not per table size -------------------------------
# 30,000 processes allocate two blocks and free the first; process 30,001 allocates 200 blocks
# and frees them all, last first (its grown table given back); then every process allocates
# again and takes its oldest released id. Each process's tables start small: they once took
# 31 KB each whatever the process held (30,000 processes: about 940 MB of RSS), now well under
# 200 MB. The lines are the reference's rules written out: processes numbered in order of first
# line, thread 1, ids from 1, a released id reused oldest first.
python3 - "$T/procs.log" "$T/procs.want" <<'PY'
import sys
n = 30000
log, want = open(sys.argv[1], 'w'), open(sys.argv[2], 'w')
for p in range(1, n + 1):
    a, b = 0x1000 + 32 * p, 0x2000000 + 32 * p
    log.write('%d %d malloc(16)=0x%x\n%d %d malloc(24)=0x%x\n%d %d free(0x%x)\n'
              % (p + 100, p + 7, a, p + 100, p + 7, b, p + 100, p + 7, a))
    want.write('%d 1 malloc(16)=#1\n%d 1 malloc(24)=#2\n%d 1 free(#1)\n' % (p, p, p))
big = n + 1
for k in range(1, 201):
    log.write('7 7 malloc(%d)=0x%x\n' % (k, 0x5000 + 16 * k))
    want.write('%d 1 malloc(%d)=#%d\n' % (big, k, k))
for k in range(200, 0, -1):
    log.write('7 7 free(0x%x)\n' % (0x5000 + 16 * k))
    want.write('%d 1 free(#%d)\n' % (big, k))
for p in range(1, n + 1):
    log.write('%d %d malloc(8)=0x%x\n' % (p + 100, p + 7, 0x9000000 + 32 * p))
    want.write('%d 1 malloc(8)=#1\n' % p)
for k in range(200, 197, -1):
    log.write('7 7 calloc(1,8)=0x%x\n' % (0x7000 + 16 * k))
    want.write('%d 1 calloc(1,8)=#%d\n' % (big, k))
PY
/usr/bin/time -f %M -o "$T/rss" timeout 120 $M "$T/procs.log" >"$T/out" 2>"$T/err"
rc=$?
check_file_eq "30,001 processes: the exact munged lines" "$T/out" "$T/procs.want"
check "30,001 processes: under 200 MB of RSS (took $(cat "$T/rss") KB, exit $rc)" \
	awk -v k="$(tail -n 1 "$T/rss")" -v rc="$rc" 'BEGIN { exit !(rc == 0 && k + 0 < 200000) }'

finish
