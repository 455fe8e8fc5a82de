#!/usr/bin/env bash
# alloctapd under faults and hostile files: SIGHUP when the path cannot be opened again or
# still names the same file, a full filesystem, links and files planted by another user in a
# sticky folder, a FIFO given as a library, another tool's uprobe with a reference counter on
# malloc.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
M=$ROOT/build/alloctap-munge
FX=$ROOT/build/fixtures
need_bpf "$D"
need_built "$M" "$FX/alloc_sequence" "$FX/alloc_loop" "$FX/refctr_uprobe"
need_make build/bench/atz_tool
ATZ=$ROOT/build/bench/atz_tool

# The link protections this script turns off, restored at the end however it ends.
protected_symlinks=$(sysctl -n fs.protected_symlinks)
protected_regular=$(sysctl -n fs.protected_regular)
protected_hardlinks=$(sysctl -n fs.protected_hardlinks)
restore_sysctls() {
	sysctl -qw fs.protected_symlinks="$protected_symlinks" fs.protected_regular="$protected_regular" \
		fs.protected_hardlinks="$protected_hardlinks"
}
cleanup() {
	mountpoint -q "$T/small" 2>/dev/null && umount "$T/small"
	restore_sysctls
	rm -rf "$T"
}
trap cleanup EXIT

# The "N events written" of a summary on stderr file $1.
written() {
	sed -n 's/^alloctapd: \([0-9]*\) events written, .*/\1/p' "$1"
}

# start_waiting NAME ARGS...: runs alloctapd -v ARGS -- alloc_sequence (waiting for SIGUSR1)
# in the background; sets dm (the daemon) and fx (the fixture) once the fixture is ready.
start_waiting() {
	local name=$1
	shift
	rm -f "$T/$name.ready"
	"$D" -v "$@" -- "$FX/alloc_sequence" "$T/$name.exp" --threads 0 --wait "$T/$name.ready" \
		2>"$T/$name.err" &
	dm=$!
	fx=
	wait_for "$T/$name.ready" . 20 && fx=$(cat "$T/$name.ready")
	[ -n "$fx" ]
}

# finish_waiting NAME: lets the fixture run its sequence, waits for the daemon: its status in rc.
finish_waiting() {
	kill -USR1 "$fx"
	wait "$dm"
	rc=$?
}

# 1. SIGHUP after the output's folder was moved away: the path cannot be opened again, the
# trace goes on in the file opened before, complete, with one message, and exit status 0.
mkdir "$T/logs"
if start_waiting moved -o "$T/logs/x.log"; then
	mv "$T/logs" "$T/logs.old"
	kill -HUP "$dm"
	wait_for "$T/moved.err" "cannot reopen" 5
	finish_waiting moved
	check "SIGHUP, folder moved away: exit status 0" test "$rc" -eq 0
	check_eq "SIGHUP, folder moved away: one message saying the old file goes on" \
		"$(grep -c "cannot reopen output $T/logs/x.log: No such file or directory; still writing to the file opened before" "$T/moved.err")" 1
	check "SIGHUP, folder moved away: the whole sequence is in the old file" \
		bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/moved.exp $T/logs.old/x.log"
	check_eq "SIGHUP, folder moved away: every event written is in it" \
		"$(wc -l <"$T/logs.old/x.log")" "$(written "$T/moved.err")"
	check "SIGHUP, folder moved away: nothing created at the old path" test ! -e "$T/logs/x.log"
else
	kill "$dm" 2>/dev/null
	fail "SIGHUP, folder moved away: fixture ready" "$(cat "$T/moved.err")"
fi

# 2. SIGHUP twice on a binary trace without rotation: flushed only, one lz4 frame that lz4
# and munge read whole.
if start_waiting same -f binary -o "$T/same.atz"; then
	kill -HUP "$dm"
	wait_for "$T/same.err" "still the file being written" 5
	kill -HUP "$dm"
	sleep 0.3
	finish_waiting same
	check "SIGHUP without rotation: exit status 0" test "$rc" -eq 0
	check_eq "SIGHUP without rotation: flushed twice, not reopened" \
		"$(grep -c "same.atz is still the file being written: flushed, not reopened" "$T/same.err")" 2
	check "SIGHUP without rotation: lz4 -t accepts the trace" lz4 -qt "$T/same.atz"
	run_cmd "$M" --keep-pointers "$T/same.atz" -o "$T/same.log"
	check_eq "SIGHUP without rotation: munge reads every event written (exit $rc)" \
		"$rc $(wc -l <"$T/same.log")" "0 $(written "$T/same.err")"
	check "SIGHUP without rotation: the whole sequence is in the trace" \
		bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/same.exp $T/same.log"
else
	kill "$dm" 2>/dev/null
	fail "SIGHUP without rotation: fixture ready" "$(cat "$T/same.err")"
fi

# 3. A rotation onto a file that already holds a trace: the new trace is appended as a second
# lz4 frame, and the file reads as one trace (both frames), as lz4 reads it.
"$D" -q -f binary -o "$T/first.atz" -- "$FX/alloc_loop" 100 >/dev/null
"$ATZ" decode "$T/first.atz" "$T/first.log"
if start_waiting onto -f binary -o "$T/onto.atz"; then
	mv "$T/onto.atz" "$T/onto.atz.1"
	cp "$T/first.atz" "$T/onto.atz"
	kill -HUP "$dm"
	wait_for "$T/onto.err" "reopened" 5
	finish_waiting onto
	check "rotation onto an existing trace: lz4 -t accepts the two frames" lz4 -qt "$T/onto.atz"
	run_cmd "$M" --keep-pointers "$T/onto.atz" -o "$T/onto.log"
	check "rotation onto an existing trace: munge reads both frames (exit $rc)" \
		bash -c "test $rc -eq 0 && head -n $(wc -l <"$T/first.log") $T/onto.log | cmp - $T/first.log"
	check "rotation onto an existing trace: the sequence is in the second frame" \
		bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/onto.exp $T/onto.log"
else
	kill "$dm" 2>/dev/null
	fail "rotation onto an existing trace: fixture ready" "$(cat "$T/onto.err")"
fi

# 4. A full filesystem (a 1 MiB tmpfs): the text log ends with a whole line and the summary
# counts exactly the events in the file; a binary trace holds exactly the events counted.
mkdir "$T/small"
if mount -t tmpfs -o size=1m none "$T/small"; then
	"$D" -o "$T/small/x.log" -- "$FX/alloc_loop" 100000 >/dev/null 2>"$T/full.err"
	rc=$?
	check "full filesystem, text: exit status 1 and a message" \
		bash -c "test $rc -eq 1 && grep -q 'No space left on device' $T/full.err"
	check_eq "full filesystem, text: the log ends with a whole line" \
		"$(tail -c 1 "$T/small/x.log" | od -An -c | tr -d ' ')" '\n'
	check_eq "full filesystem, text: the summary counts the lines in the file" \
		"$(written "$T/full.err")" "$(wc -l <"$T/small/x.log")"
	rm -f "$T/small/x.log"
	"$D" -f binary -o "$T/small/x.atz" -- python3 -c \
		'import random; k = [bytearray(random.randrange(1, 5000)) for i in range(400000)]' \
		>/dev/null 2>"$T/fullb.err"
	"$ATZ" decode "$T/small/x.atz" "$T/fullb.log" 2>/dev/null
	check "full filesystem, binary: the trace filled the filesystem" \
		grep -q 'No space left on device' "$T/fullb.err"
	check_eq "full filesystem, binary: the summary counts the events the trace holds" \
		"$(written "$T/fullb.err")" "$(wc -l <"$T/fullb.log")"
	umount "$T/small"
else
	fail "full filesystem: a 1 MiB tmpfs can be mounted"
fi

# 5. A sticky folder shared with `nobody`, the kernel's own link protections off: a link or a
# file planted there is refused, and its target left alone; a new file is root's, mode 0600.
sysctl -qw fs.protected_symlinks=0 fs.protected_regular=0
chmod 755 "$T"
S=$T/shared
mkdir -m 1777 "$S"
printf 'root:x:0:0:victim\n' >"$T/victim"
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}
as_nobody ln -s "$T/victim" "$S/link.log"
as_nobody ln -s "$T/chosen" "$S/dangling.log"
as_nobody sh -c "printf 'nobody\n' >'$S/planted.log'; chmod 666 '$S/planted.log'"
sysctl -qw fs.protected_hardlinks=0
as_nobody ln "$T/victim" "$S/hard.log"
sysctl -qw fs.protected_hardlinks="$protected_hardlinks"
for f in text binary; do
	check_err "sticky folder, -f $f: a link planted by nobody is refused" 1 \
		"alloctapd: cannot open output $S/link.log: a symbolic link (outputs are not opened through links)" \
		"$D" -f $f -o "$S/link.log" -- /bin/true
	check_err_match "sticky folder, -f $f: a dangling link is refused" 1 \
		"cannot open output $S/dangling.log: a symbolic link" "$D" -f $f -o "$S/dangling.log" -- /bin/true
	check_err "sticky folder, -f $f: a file of nobody's is refused" 1 \
		"alloctapd: cannot open output $S/planted.log: a file of another user (uid 65534) in a sticky shared folder" \
		"$D" -f $f -o "$S/planted.log" -- /bin/true
	check_err_match "sticky folder, -f $f: a hard link to root's file is refused" 1 \
		"cannot open output $S/hard.log: a file with 2 hard links" "$D" -f $f -o "$S/hard.log" -- /bin/true
done
check_eq "sticky folder: the link's target is untouched" "$(cat "$T/victim")" "root:x:0:0:victim"
check "sticky folder: nothing created where the dangling link points" test ! -e "$T/chosen"
check_eq "sticky folder: nobody's file is untouched" "$(cat "$S/planted.log")" "nobody"
"$D" -q -o "$S/new.log" -- /bin/true
check_eq "sticky folder: a new output is root's, mode 600" "$(stat -c '%U %a' "$S/new.log")" "root 600"
restore_sysctls

# 6. A FIFO given as the library: refused at once, naming it (a plain open would wait forever).
mkfifo "$T/fifo"
start=$(date +%s%N)
check_err "--lib FIFO: refused with a message naming it" 1 \
	"alloctapd: cannot read $T/fifo: a FIFO, not a regular file" \
	timeout 10 "$D" --lib "$T/fifo" -- /bin/true
el=$((($(date +%s%N) - start) / 1000000))
check "--lib FIFO: at once, not after the 10 s timeout (took $el ms)" test "$el" -lt 5000

# 8. A process maps a copy of the C library at a path longer than the daemon's buffers, and a
# FIFO waits where a cut copy of that path would end: --pid and --all must neither hang on it
# nor trace the wrong file; the long path is passed over and the real C library traced.
LIBC=$(ldd /bin/true | sed -n 's/.*=> \(.*libc.so.6\) .*/\1/p')
cat >"$T/longmap.py" <<'PY2'
import mmap, os, sys, time
root, libc, ready = sys.argv[1], sys.argv[2], sys.argv[3]
fd = os.open(root, os.O_RDONLY)
depth = 0
while depth * 200 < 4100:              # each level: a 199-byte name and a '/'
    name = "d" * 199
    os.mkdir(name, dir_fd=fd)
    nfd = os.open(name, os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd
    depth += 1
data = open(libc, "rb").read()
out = os.open("libc.so.6", os.O_WRONLY | os.O_CREAT, 0o755, dir_fd=fd)
os.write(out, data)
os.close(out)
lib = os.open("libc.so.6", os.O_RDONLY, dir_fd=fd)
m = mmap.mmap(lib, 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)
open(ready, "w").close()
time.sleep(30)
PY2
mkdir -p "$T/long"
python3 "$T/longmap.py" "$T/long" "$LIBC" "$T/long.ready" &
lm=$!
for _ in $(seq 200); do [ -e "$T/long.ready" ] && break; sleep 0.05; done
# a FIFO where a copy cut to a 512- or a 4096-byte buffer (with "/proc/PID/root" before the
# path, as the daemon opens it) would end, give or take a byte
long=$(sed -n 's|^.* \(/.*/libc.so.6\)$|\1|p' "/proc/$lm/maps" | grep ddddd | head -n 1)
prefix=$(printf '/proc/%d/root' $lm)
for size in 512 4096; do
	for extra in -2 -1 0; do
		cut=${long:0:$((size - 1 - ${#prefix} + extra))}
		[ -d "$(dirname "$cut")" ] && [ ! -e "$cut" ] && mkfifo "$cut"
	done
done
check "the long mapping is there" grep -q "libc.so.6" "/proc/$lm/maps"
timeout --preserve-status -s INT 3 "$D" -v --pid $lm -o "$T/long.log" 2>"$T/long.err"
check "--pid with a mapping at a 4100-byte path: no hang, exit 0" test $? -eq 0
check "--pid with a mapping at a 4100-byte path: the real C library probed" \
	bash -c "grep -q 'probing /.*/libc.so.6\$' '$T/long.err' && ! grep -q ddddd '$T/long.err'"
start=$(date +%s%N)
timeout --preserve-status -s INT 3 "$D" --all -o /dev/null 2>"$T/all.err"
rc=$?
el=$((($(date +%s%N) - start) / 1000000))
check "--all with that mapping: no hang, exit 0 after the 3 s SIGINT (took $el ms)" \
	test $rc -eq 0 -a $el -lt 8000
kill $lm 2>/dev/null
wait $lm 2>/dev/null
# Another tool's uprobe on malloc with a reference counter (as a USDT semaphore's): the kernel
# refuses alloctapd's probe there (EINVAL, "ref_ctr_offset mismatch" in its log); alloctapd
# says so, naming the function, the counter offset and the fixture among the holders.
name="another tool's uprobe with a reference counter on malloc"
# A probe without a counter already there (another tracer's, another alloctapd's) keeps the
# fixture's out: it tries 50 times over some 10 s, for tracers that come and go.
for _ in $(seq 50); do
	"$FX/refctr_uprobe" "$T/refctr.ready" 2>"$T/refctr.err" &
	rp=$!
	for _ in $(seq 100); do
		[ -e "$T/refctr.ready" ] || ! kill -0 $rp 2>/dev/null && break
		sleep 0.05
	done
	[ -e "$T/refctr.ready" ] && break
	wait $rp 2>/dev/null
	sleep 0.15
done
if [ ! -e "$T/refctr.ready" ]; then
	fail "$name: the fixture plants its probe" "the fixture could not plant its probe:" \
		"$(cat "$T/refctr.err")" \
		"(EINVAL, 50 times over 10 s: another tracer's uprobe is on malloc without a reference counter;" \
		"the kernel takes one counter offset per place, so this case cannot run beside it)"
else
	read -r rlib roff rref <"$T/refctr.ready"
	# Launched, the program runs (its exit status is alloctapd's) with its calls unrecorded, and
	# both the cause and the count say so; attached with --pid, nothing can be traced: status 1.
	run_cmd "$D" -o "$T/refctr.log" -- "$FX/alloc_sequence" "$T/refctr.exp" --threads 0
	want="cannot attach a uprobe to $rlib: Invalid argument (another tool's uprobe"
	want+=" is on malloc ($roff) of this file with a reference counter (USDT semaphore) at"
	want+=" $rref; the kernel allows one counter offset per place, alloctapd's is none (log:"
	want+=' "ref_ctr_offset mismatch"); holders of perf events or such links: '
	got=$(grep -m1 "cannot attach" "$T/err" | sed -E 's/^alloctapd: pid [0-9]+: //')
	if [ "$rc" -eq 0 ] && [ "${got:0:${#want}}" = "$want" ] &&
		[[ ${got:${#want}} == *"refctr_uprobe ($rp)"* ]] &&
		grep -qx "alloctapd: 1 programs whose allocator could not be probed" "$T/err"; then
		ok "$name: a launched command runs, its probes' failure named and counted"
	else
		fail_run "$name: a launched command runs, its probes' failure named and counted" \
			"exit $rc (want 0, the command's)" "want: $want... refctr_uprobe ($rp) ..." \
			"got:  $got"
	fi
	sleep 30 &
	sp=$!
	run_cmd "$D" --pid $sp -o "$T/refctr.log"
	got=$(grep -m1 "cannot attach" "$T/err" | sed -E "s/^alloctapd: pid $sp: //")
	kill $sp 2>/dev/null
	wait $sp 2>/dev/null
	check "$name, --pid: alloctapd exits 1 naming it (exit $rc)" \
		bash -c "[ $rc -eq 1 ] && [[ \"\$1\" == \"\$2\"*'refctr_uprobe ($rp)'* ]]" _ "$got" "$want"
fi
kill $rp 2>/dev/null
wait $rp 2>/dev/null
finish
