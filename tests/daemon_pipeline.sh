#!/usr/bin/env bash
# The whole pipeline on a traced fixture: alloctapd, alloctap-munge, alloctap-replay --summary;
# the replay's final live bytes equal what the fixture says it left live (issue 3, test 6).
source "$(dirname "$0")/data/daemon/lib.sh"
require_bpf
M=$ROOT/build/alloctap-munge
R=$ROOT/build/alloctap-replay

"$D" -q -o "$TMP/p.log" -- "$FX/alloc_sequence" "$TMP/p.exp" --threads 0 --pipeline "$TMP/p.live"
check "pipeline: in launch mode the log is exactly the fixture's calls" cmp "$TMP/p.exp" "$TMP/p.log"
check "pipeline: munge accepts the log" bash -c "'$M' -q '$TMP/p.log' >'$TMP/p.munged'"
for alloc in glibc jemalloc; do
	"$R" --summary --allocator "$alloc" "$TMP/p.munged" 2>"$TMP/p.$alloc.summary" >/dev/null
	live=$(sed -n 's/^final live requested bytes: //p' "$TMP/p.$alloc.summary")
	check "pipeline: replay ($alloc) final live bytes ($live) = fixture's ($(cat "$TMP/p.live"))" \
		test -n "$live" -a "$live" = "$(cat "$TMP/p.live")"
done
finish
