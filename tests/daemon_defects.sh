#!/usr/bin/env bash
# Defects on alloctapd's attach path, each with the case that showed it: a pid given twice, a
# chrooted target, LD_PRELOAD after 64 KiB of environment, --lib naming an object the target
# does not map, glibc's aligned_alloc written as memalign, a bind-mounted C library in a mount
# namespace of its own, and a C library from LD_LIBRARY_PATH.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
need_bpf "$D"
JE=/usr/lib/$MULTIARCH/libjemalloc.so.2

# attach NAME FIXTURE_PID DAEMON_ARGS...: attaches to a fixture waiting for SIGUSR1, lets it
# run, waits for both; sets $rc to the daemon's status.
attach() {
	local name=$1 fx=$2
	shift 2
	"$D" -v "$@" -o "$T/$name.log" 2>"$T/$name.err" &
	local dm=$!
	wait_for "$T/$name.err" "alloctapd: recording" 10
	kill -USR1 "$fx"
	wait "$fx"
	wait "$dm"
	rc=$?
}

# 1. --pid X,X: one set of probes, every call once.
"$FX/alloc_sequence" "$T/twice.exp" --threads 0 --wait "$T/twice.ready" &
fx=$!
wait_for "$T/twice.ready" . 10
attach twice "$fx" --pid "$fx,$fx"
check "--pid X,X: status 0, the sequence exactly once" \
	bash -c "test $rc -eq 0 && $(declare -f compare_bracketed); T=$T; compare_bracketed $T/twice.exp $T/twice.log"
check "--pid X,X: as many frees as the program made" \
	bash -c "test \$(grep -c ' free(' $T/twice.log) -eq \$(grep -c ' free(' $T/twice.exp)"

# 2. A chrooted target: its maps paths are the daemon's, not to be put under its root.
CH=$T/chroot
mkdir -p "$CH/tmp"
cp "$FX/alloc_sequence" "$CH/"
for lib in $(ldd "$FX/alloc_sequence" | grep -o '/[^ ]*'); do
	mkdir -p "$CH$(dirname "$lib")"
	cp -L "$lib" "$CH$lib"
done
chroot "$CH" /alloc_sequence /tmp/exp --threads 0 --wait /tmp/ready &
fx=$!
wait_for "$CH/tmp/ready" . 10
fx=$(cat "$CH/tmp/ready")
attach chroot "$fx" --pid "$fx"
check "chrooted target: status 0, its C library probed by its path" \
	bash -c "test $rc -eq 0 && grep -q 'pid $fx: probing .*$CH/.*libc.so.6\$' $T/chroot.err"
check "chrooted target: the sequence exactly" \
	bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $CH/tmp/exp $T/chroot.log"

# 3. LD_PRELOAD after more than 64 KiB of environment is found.
if [ -e "$JE" ]; then
	big=$(head -c 70000 /dev/zero | tr '\0' x)
	env -i BIG="$big" LD_PRELOAD="$JE" "$FX/alloc_sequence" "$T/env.exp" --threads 0 \
		--no-extras --wait "$T/env.ready" &
	fx=$!
	wait_for "$T/env.ready" . 10
	attach env "$fx" --pid "$fx"
	check "LD_PRELOAD past 64 KiB of environment: jemalloc is probed" \
		bash -c "test $rc -eq 0 && grep -q 'pid $fx: probing .*libjemalloc.so.2\$' $T/env.err"
	check "LD_PRELOAD past 64 KiB of environment: the sequence exactly" \
		bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/env.exp $T/env.log"
else
	fail "LD_PRELOAD past 64 KiB" "libjemalloc2 is not installed (make deps)"
fi

# 4. --lib naming an object the target does not map: an error naming both, status 1.
"$FX/alloc_sequence" "$T/lib.exp" --threads 0 --wait "$T/lib.ready" &
fx=$!
wait_for "$T/lib.ready" . 10
"$D" --pid "$fx" --lib "$JE" --duration 5 -o "$T/lib.log" 2>"$T/lib.err"
rc=$?
kill -USR1 "$fx"
wait "$fx"
check "--lib not mapped by the pid: status 1, says which pid and which object" \
	bash -c "test $rc -eq 1 && grep -q '^alloctapd: pid $fx does not map $JE' $T/lib.err"

# 5. glibc's aligned_alloc is memalign: the log says memalign, and --help says so.
"$D" -q -o "$T/aligned.log" -- "$FX/alloc_sequence" "$T/aligned.exp" --threads 0
check "glibc's aligned_alloc(256,512) is written memalign(256,512)" \
	bash -c "grep -q ' memalign(256,512)=' $T/aligned.log && ! grep -q aligned_alloc $T/aligned.log"
check "--help says that glibc's aligned_alloc lines are memalign lines" \
	bash -c "'$D' --help | tr '\n' ' ' | grep -q \"glibc's aligned_alloc and memalign *are one function: a program using glibc gets memalign lines for both\""
# 6. A program in a mount namespace of its own whose C library is a bind-mounted copy: its
# allocator is what it maps (the copy), not the file its path names in the daemon's namespace.
LIBC=$(readlink -f /lib/$MULTIARCH/libc.so.6)
cp "$LIBC" "$T/libc-copy.so.6"
"$D" -v -o "$T/mntns.log" -- unshare -m sh -c "mount --bind '$T/libc-copy.so.6' '$LIBC' &&
	exec '$FX/alloc_sequence' '$T/mntns.exp' --threads 0" 2>"$T/mntns.err"
rc=$?
check "bind-mounted libc in its own mount namespace: status 0, the copy probed" \
	bash -c "test $rc -eq 0 && grep -q 'executed a new program: probing .*$LIBC\$' $T/mntns.err"
check "bind-mounted libc in its own mount namespace: the sequence exactly" \
	bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/mntns.exp $T/mntns.log"

# 7. A launched program whose C library comes from LD_LIBRARY_PATH: the one the loader maps is
# probed, and the calls are recorded.
mkdir -p "$T/altlib"
cp "$LIBC" "$T/altlib/libc.so.6"
LD_LIBRARY_PATH=$T/altlib "$D" -v -o "$T/llp.log" -- "$FX/alloc_sequence" "$T/llp.exp" \
	--threads 0 2>"$T/llp.err"
rc=$?
check "libc from LD_LIBRARY_PATH: status 0, that copy probed" \
	bash -c "test $rc -eq 0 && grep -q 'executed a new program: probing .*$T/altlib/libc.so.6\$' $T/llp.err"
check "libc from LD_LIBRARY_PATH: the sequence exactly" \
	bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/llp.exp $T/llp.log"

# 8. A program linked against another allocator (not preloaded): the loader's rule, the first
# object of its lookup scope that defines malloc, is the library before the C library. Launched
# (held at the loader) and attached with --pid.
for al in jemalloc tcmalloc; do
	"$D" -v -o "$T/linked_$al.log" -- "$FX/alloc_sequence_$al" "$T/linked_$al.exp" \
		--threads 0 --no-extras 2>"$T/linked_$al.err"
	rc=$?
	check "linked against $al: status 0, $al probed, not the C library" \
		bash -c "test $rc -eq 0 && grep -q 'executed a new program: probing .*lib${al}[_a-z]*\.so[.0-9]*\$' $T/linked_$al.err"
	check "linked against $al: the sequence exactly" \
		bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/linked_$al.exp $T/linked_$al.log"
done
"$FX/alloc_sequence_jemalloc" "$T/linkedpid.exp" --threads 0 --no-extras \
	--wait "$T/linkedpid.ready" &
fx=$!
wait_for "$T/linkedpid.ready" . 10
attach linkedpid "$fx" --pid "$fx"
check "--pid of a program linked against jemalloc: status 0, jemalloc probed" \
	bash -c "test $rc -eq 0 && grep -q 'pid $fx: probing .*libjemalloc.so.2\$' $T/linkedpid.err"
check "--pid of a program linked against jemalloc: the sequence exactly" \
	bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/linkedpid.exp $T/linkedpid.log"

# 9. --pid of a process whose LD_PRELOAD is longer than 4 KiB (libm, which has no malloc, named
# many times, then jemalloc): read whole, jemalloc probed.
LIBM=/usr/lib/$MULTIARCH/libm.so.6
long=$(for i in $(seq 120); do printf '%s:' "$LIBM"; done)$JE
LD_PRELOAD=$long "$FX/alloc_sequence" "$T/longpre.exp" --threads 0 --no-extras \
	--wait "$T/longpre.ready" &
fx=$!
wait_for "$T/longpre.ready" . 10
attach longpre "$fx" --pid "$fx"
check "--pid with an LD_PRELOAD of ${#long} bytes: status 0, jemalloc probed" \
	bash -c "test $rc -eq 0 && grep -q 'pid $fx: probing .*libjemalloc.so.2\$' $T/longpre.err"
check "--pid with a long LD_PRELOAD: the sequence exactly" \
	bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/longpre.exp $T/longpre.log"

# 10. A program run through its dynamic loader (`ld.so PROGRAM`): the executable is the loader
# itself (no PT_INTERP); the process is held at the loader's own _dl_debug_state and the
# program's C library is probed, as for the program run directly.
"$D" -v -o "$T/ldso.log" -- "$LDSO" "$FX/alloc_sequence" "$T/ldso.exp" --threads 0 \
	--no-extras 2>"$T/ldso.err"
rc=$?
check "run through $LDSO: status 0, its C library probed, nothing left unprobed" \
	bash -c "test $rc -eq 0 && grep -q 'executed a new program: probing .*libc.so.6\$' $T/ldso.err && ! grep -q 'could not be probed' $T/ldso.err"
check "run through $LDSO: the sequence exactly" \
	bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/ldso.exp $T/ldso.log"

# 11. LD_AUDIT: the loader is consistent once with the auditor's namespace loaded, before the
# program's libraries are listed; the process is held again at its next consistent state and
# the program's C library probed. A plain program is still held once: its exec, the hold, its
# exit.
printf '#define _GNU_SOURCE\n#include <link.h>\nunsigned int la_version(unsigned int v) { return LAV_CURRENT; }\n' \
	>"$T/auditor.c"
if cc -shared -fPIC -o "$T/auditor.so" "$T/auditor.c" 2>"$T/auditor.cc.err"; then
	LD_AUDIT=$T/auditor.so "$D" -v -o "$T/audit.log" -- "$FX/alloc_sequence" "$T/audit.exp" \
		--threads 0 --no-extras 2>"$T/audit.err"
	rc=$?
	check "LD_AUDIT: status 0, the C library probed, nothing left unprobed" \
		bash -c "test $rc -eq 0 && grep -q 'executed a new program: probing .*libc.so.6\$' $T/audit.err && ! grep -q 'could not be probed' $T/audit.err"
	check "LD_AUDIT: the sequence exactly" \
		bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/audit.exp $T/audit.log"
else
	check "LD_AUDIT: cannot build the auditor ($(head -c 200 "$T/auditor.cc.err"))" false
fi
"$D" -v -o "$T/plainhold.log" -- "$FX/alloc_sequence" "$T/plainhold.exp" --threads 0 \
	--no-extras 2>"$T/plainhold.err"
rc=$?
check "a plain program: status 0, 3 ptrace stops (exec, one hold at the loader, exit)" \
	bash -c "test $rc -eq 0 && grep -q '^alloctapd: 3 ptrace stops handled' $T/plainhold.err"
check "a plain program: the sequence exactly" \
	bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/plainhold.exp $T/plainhold.log"
finish
