#!/usr/bin/env bash
# alloctap-report's frames that its objects cannot name, and the debug files that name them:
# a fixture (tests/fixtures/report_sites.c) stripped of its symbols, its debug file split off
# (objcopy --only-keep-debug), traced with alloctapd --stacks, then
# - without DEBUGINFOD_URLS: the fixture's frames are fixture+0x..., and one warning names the
#   debug file by its build-id (/usr/lib/debug/.build-id/xx/yyyy.debug) and counts them;
# - with DEBUGINFOD_URLS naming Debian's debuginfod server on the loopback (debuginfod -F,
#   serving a folder): a server without the file (the fetch fails, naming the build-id and
#   the server), the same server once it serves the debug file (every frame named as in a
#   trace of the unstripped fixture, folded line for folded line), the server gone (refused).
. "$(dirname "$0")/lib.sh"
R=build/alloctap-report
D=build/alloctapd
FX=build/fixtures
need_built "$R" "$FX/report_sites" "$FX/unwind_chain"
need_bpf "$D"

# --- the fixture, stripped, and its debug file ----------------------------------------------
mkdir -p "$T/bin" "$T/full" "$T/srv" "$T/cache"
cp "$FX/report_sites" "$T/full/fixture"
objcopy --only-keep-debug "$T/full/fixture" "$T/fixture.debug"
strip --strip-all -o "$T/bin/fixture" "$T/full/fixture"
objcopy --add-gnu-debuglink="$T/fixture.debug" "$T/bin/fixture"
id=$(readelf -n "$T/bin/fixture" 2>/dev/null | sed -n 's/^ *Build ID: \([0-9a-f]*\)$/\1/p')
check "the stripped fixture has no .symtab, and keeps the build-id of its debug file" bash -c \
	"! readelf -S '$T/bin/fixture' | grep -q '\\.symtab' &&
	 [ -n '$id' ] && readelf -n '$T/fixture.debug' | grep -q 'Build ID: $id\$'"
debug_path=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
if [ -e "$debug_path" ]; then
	fail "no debug file of the fixture's build-id is installed" "$debug_path is there"
	finish
fi

# traced NAME PROGRAM: alloctapd --stacks -f binary -o $T/NAME.atz -- PROGRAM.
traced() {
	if "$D" -q --stacks -f binary -o "$T/$1.atz" -- "$2" >/dev/null 2>"$T/$1.err"; then
		ok "$1: traced with --stacks"
	else
		fail "$1: traced with --stacks" "$(tail -n 5 "$T/$1.err")"
		finish
	fi
}
traced full "$T/full/fixture"
traced stripped "$T/bin/fixture"
run_cmd env -u DEBUGINFOD_URLS "$R" export --folded "$T/full.atz"
cp "$T/out" "$T/full.folded"
check "unstripped: the fixture's sites named (keep_blocks, burst, churn, grow_table)" bash -c \
	"[ $rc -eq 0 ] && grep -q ';main;keep_blocks;malloc 10\$' '$T/full.folded' &&
	 grep -q ';main;burst;malloc 20\$' '$T/full.folded' && ! grep -q 'fixture+0x' '$T/full.folded'"

# --- without DEBUGINFOD_URLS: offsets, and the debug file that would name them ----------------
run_cmd env -u DEBUGINFOD_URLS "$R" export --folded "$T/stripped.atz"
cp "$T/out" "$T/stripped.folded"
check "stripped: the fixture's frames are fixture+0x..., none named" bash -c \
	"grep -q ';fixture+0x[0-9a-f]*;fixture+0x[0-9a-f]*;malloc 10\$' '$T/stripped.folded' &&
	 ! grep -q 'keep_blocks\|burst\|churn\|grow_table' '$T/stripped.folded'"
# the report names each address of a process once: the distinct addresses of the fixture
frames=$(grep -o 'fixture+0x[0-9a-f]*' "$T/stripped.folded" | sort -u | wc -l)
check_eq "stripped: one warning, naming the debug file by build-id and counting the frames" \
	"$rc:$(cat "$T/err")" \
	"0:alloctap-report: $T/bin/fixture: $frames frames left unnamed (fixture+0xOFFSET): its debug file by build-id, $debug_path, would name them; or set DEBUGINFOD_URLS to fetch it from a debuginfod server"
run_cmd env -u DEBUGINFOD_URLS "$R" leaks "$T/stripped.atz"
check "leaks: the same warning" grep -qF "$debug_path, would name them" "$T/err"
run_cmd env -u DEBUGINFOD_URLS "$R" summary "$T/stripped.atz"
check_eq "summary names no frame: no warning" "$rc:$(cat "$T/err")" "0:"
run_cmd env -u DEBUGINFOD_URLS "$R" export --folded -q "$T/stripped.atz"
check_eq "-q: no warning" "$rc:$(cat "$T/err")" "0:"

# --- a debuginfod server on the loopback --------------------------------------------------
if ! command -v debuginfod >/dev/null; then
	fail "debuginfod is installed" "no debuginfod program: apt-get install debuginfod (make deps)"
	finish
fi
# free_port: a loopback TCP port nothing listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# http_status URL: the HTTP status of a GET of URL (000: no answer).
http_status() {
	python3 - "$1" <<'PY'
import sys, urllib.request, urllib.error
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=5).status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception:
    print("000")
PY
}
# wait_served URL STATUS: waits up to 60 s until a GET of URL answers STATUS; 1 on timeout.
wait_served() {
	local i
	for ((i = 0; i < 120; i++)); do
		[ "$(http_status "$1")" = "$2" ] && return 0
		sleep 0.5
	done
	return 1
}
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$T"' EXIT
# Another program's debug file, so that the server has something, but not the fixture's.
objcopy --only-keep-debug "$FX/unwind_chain" "$T/srv/other.debug"
other=$(readelf -n "$T/srv/other.debug" 2>/dev/null | sed -n 's/^ *Build ID: \([0-9a-f]*\)$/\1/p')
for _ in 1 2 3; do
	port=$(free_port)
	debuginfod -F -p "$port" -d "$T/db.sqlite" -t 0 "$T/srv" >"$T/server.log" 2>&1 &
	server=$!
	url=http://127.0.0.1:$port
	if wait_served "$url/buildid/$other/debuginfo" 200; then
		break
	fi
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
	server=
done
if [ -z "$server" ]; then
	fail "debuginfod serves a folder on the loopback" "$(tail -n 5 "$T/server.log")"
	finish
fi
ok "debuginfod serves a folder on the loopback ($url), its first scan done"

run_cmd env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$T/cache" "$R" export --folded \
	"$T/stripped.atz"
check_eq "a server without the debug file: offsets, and the fetch's failure named" \
	"$rc:$(cat "$T/err")" \
	"0:alloctap-report: $T/bin/fixture: $frames frames left unnamed (fixture+0xOFFSET): its debug file by build-id, $debug_path, would name them; no debug file from debuginfod for build-id $id (DEBUGINFOD_URLS=$url): the servers have none"
check_file_eq "a server without the debug file: the folded lines of no server" "$T/out" \
	"$T/stripped.folded"

cp "$T/fixture.debug" "$T/srv/"
kill -USR1 "$server" # a rescan of the folder now
if wait_served "$url/buildid/$id/debuginfo" 200; then
	ok "debuginfod serves the fixture's debug file by its build-id"
else
	fail "debuginfod serves the fixture's debug file by its build-id" "$(tail -n 5 "$T/server.log")"
fi
run_cmd env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$T/cache2" "$R" export --folded \
	"$T/stripped.atz"
check_file_eq "the debug file fetched: every frame named as in the unstripped fixture's trace" \
	"$T/out" "$T/full.folded"
check_eq "the debug file fetched: nothing to say" "$rc:$(cat "$T/err")" "0:"
check "the fetched file is in DEBUGINFOD_CACHE_PATH, by build-id" \
	cmp "$T/cache2/$id/debuginfo" "$T/fixture.debug"
run_cmd env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$T/cache2" "$R" leaks "$T/stripped.atz"
check "leaks: named from the cache too (keep_blocks)" bash -c \
	"[ $rc -eq 0 ] && [ ! -s '$T/err' ] && grep -q '  malloc < keep_blocks (report_sites.c:[0-9]*)\$' '$T/out'"

kill "$server"
wait "$server" 2>/dev/null
server=
run_cmd env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$T/cache3" "$R" export --folded \
	"$T/stripped.atz"
check_eq "the server gone: offsets, and the fetch's failure named" "$rc:$(cat "$T/err")" \
	"0:alloctap-report: $T/bin/fixture: $frames frames left unnamed (fixture+0xOFFSET): its debug file by build-id, $debug_path, would name them; no debug file from debuginfod for build-id $id (DEBUGINFOD_URLS=$url): Connection refused"
finish
