#!/usr/bin/env bash
# The oracle: an independent LD_PRELOAD tracer (tests/oracle/preload_tracer.c) and alloctapd
# (--lib on the C library) record the same run of real programs; for every process and thread
# the two logs must hold the same calls in the same order (tests/oracle/compare_threads.py).
# The tracer sees what the programs ask through the PLT; alloctapd must write exactly that.
# Programs: family_calls (every function of the family, a thread that ends, a forked child),
# python3 with PYTHONMALLOC=malloc (four threads that end), sqlite3, git init/add/commit (commit
# starts a child git), xz -T2 (its threads live to the end), sort --parallel=4 (threads end).
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
need_bpf "$D"
O=$ROOT/build/oracle
CMP=$ROOT/tests/oracle/compare_threads.py

for p in preload_tracer.so preload_exec family_calls; do
	if [ ! -e "$O/$p" ]; then
		fail "oracle programs built" "$O/$p is missing (make tests)"
		finish
	fi
done
LIBC=$(ldd "$O/family_calls" | awk '$1 == "libc.so.6" { print $3 }')
LIBC=$(readlink -f "$LIBC")
if [ ! -f "$LIBC" ]; then
	fail "the C library found" "ldd $O/family_calls names no libc.so.6"
	finish
fi

# need PROGRAM:PACKAGE...: installs the Debian packages of missing programs, as `make deps` does.
need() {
	local pp missing=()
	for pp in "$@"; do
		command -v "${pp%%:*}" >/dev/null || missing+=("${pp#*:}")
	done
	if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null; then
		echo "# apt-get install ${missing[*]}"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
}
need python3:python3 sqlite3:sqlite3 git:git xz:xz-utils

# oracle_run NAME PROGRAM [ARG...]: one run of PROGRAM (a path) traced by both; the lines of
# each (pid, tid) must be identical. Leaves $T/NAME.{traced,oracle,out,err,cmp}.
oracle_run() {
	local name=$1 log=$T/${1// /_} rc
	shift
	if [ ! -x "$1" ]; then
		fail "$name: program installed" "$1 is missing (sqlite3, git, xz-utils: make deps)"
		return
	fi
	"$D" -q --lib "$LIBC" -o "$log.traced" -- "$O/preload_exec" "$O/preload_tracer.so" \
		"$log.oracle" "$@" >"$log.out" 2>"$log.err" </dev/null
	rc=$?
	check "$name: alloctapd and the program exit 0" \
		bash -c "test $rc -eq 0 || { echo 'status $rc'; cat '$log.err'; exit 1; }"
	check "$name: the oracle wrote lines, and no call of its own reached the C library" \
		bash -c "test -s '$log.oracle' && ! grep '^preload_tracer:' '$log.err'"
	python3 "$CMP" --name "$name" "$log.traced" "$log.oracle" >"$log.cmp" 2>&1
	rc=$?
	echo "# $(head -n1 "$log.cmp")"
	if [ $rc -eq 0 ]; then
		ok "$name: every thread's calls identical in the two logs"
	else
		fail "$name: every thread's calls identical in the two logs"
		head -n 60 "$log.cmp" | sed 's/^/#   /'
	fi
}

cd "$T" || exit 1
oracle_run family_calls "$O/family_calls"

PY=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
PYTHONMALLOC=malloc oracle_run python3 "$PY" "$ROOT/tests/oracle/py_workload.py"

SQLITE=$(command -v sqlite3)
{
	echo "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v INTEGER);"
	for i in $(seq 1 300); do echo "INSERT INTO t VALUES($i, 'name-$i', $((i * 7 % 101)));"; done
	echo "SELECT count(*), sum(v) FROM t WHERE v > 50;"
	echo "SELECT name FROM t ORDER BY v DESC, id LIMIT 3;"
} >"$T/inserts.sql"
oracle_run sqlite3 "$SQLITE" "$T/db.sqlite" ".read $T/inserts.sql"
check "sqlite3: the query's answer" grep -qx '148|11144' "$T/sqlite3.out"

GIT=$(command -v git)
export HOME=$T GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=oracle GIT_AUTHOR_EMAIL=oracle@example.org \
	GIT_COMMITTER_NAME=oracle GIT_COMMITTER_EMAIL=oracle@example.org
oracle_run "git init" "$GIT" init -q "$T/repo"
for i in $(seq 1 20); do seq "$i" 1000 >"$T/repo/f$i.txt"; done
oracle_run "git add" "$GIT" -C "$T/repo" add .
oracle_run "git commit" "$GIT" -C "$T/repo" commit -q -m oracle
check "git commit: the commit is there" "$GIT" -C "$T/repo" rev-parse --verify -q HEAD

XZ=$(command -v xz)
seq 1 400000 >"$T/data"
oracle_run "xz -T2" "$XZ" -T2 -3 --block-size=1MiB -k -f "$T/data"
check "xz -T2: the output is valid" "$XZ" -t "$T/data.xz"

SORT=$(command -v sort)
seq 300000 -1 1 >"$T/lines"
oracle_run "sort --parallel=4" "$SORT" --parallel=4 -o "$T/sorted" "$T/lines"
check "sort --parallel=4: the output is sorted" "$SORT" -c "$T/sorted"
finish
