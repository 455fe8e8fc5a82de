#!/usr/bin/env bash
# atz_bench.sh: the binary trace format (.atz): the 2.1 model against 2.2's live tables, side by
# side (bytes per event and encoding cost, fast level and LZ4HC 9, decoding speed), against
# logalloc text, gzip -6 and lz4 of the text, and what alloctapd itself writes on the demo's
# python3 workload. Traces: the bundled real one (demo/python3-json.log, python3 recorded by
# alloctap), its munged form, and the synthetic generator's (build/bench/genlog, 1M lines,
# several processes and threads). ATZ_BENCH_NO_DAEMON=1 leaves alloctapd (and BPF) out.
set -u
. "$(dirname "$0")/lib.sh"
make -s build/bench/atz_tool build/bench/genlog build/alloctap-munge >/dev/null || exit 1
ATZ=build/bench/atz_tool

traces=()
if [ -f demo/python3-json.log ]; then
	traces+=("python3 (real):demo/python3-json.log")
	build/alloctap-munge -q demo/python3-json.log -o "$T/python3.munged" 2>/dev/null
	traces+=("python3, munged:$T/python3.munged")
else
	echo "(demo/python3-json.log missing: real-program rows skipped)"
fi
build/bench/genlog 1000000 1 > "$T/synthetic.log"
traces+=("genlog 1M (synthetic):$T/synthetic.log")

per() { awk -v a="$1" -v n="$2" 'BEGIN { printf "%.3f", a / n }'; }

# atz_tool time -V VERSION [-l LEVEL] FILE: "EVENTS BYTES CONTENT B/EV ENC_NS TEXT_NS DEC_M/S
# PARSE_M/S", best of 9 runs in memory.
timed() {
	"$ATZ" time "$@" || { echo "bench: atz_tool time $* failed" >&2; exit 1; }
}

echo "atz 2.1 against 2.2: bytes per event (smaller is better; goal <= 1.5 on a real program's"
echo "trace at the fast level alloctapd writes) and ns per event to encode (goal: alloctapd's"
echo "CPU within 150 ns per event), fast level and LZ4HC 9; decoding in millions of events/s"
echo "(goal: >= 50)"
printf '%-24s %8s | %7s %7s %7s %7s | %7s %7s %7s %7s | %6s %6s\n' trace events \
	"2.1" "2.2" "2.1 HC9" "2.2 HC9" "enc 2.1" "enc 2.2" "HC9 2.1" "HC9 2.2" "dec2.1" "dec2.2"
rows=()
for t in "${traces[@]}"; do
	name=${t%%:*}
	f=${t#*:}
	read -r n b21 _ _ e21 fmt d21 parse <<< "$(timed -V 2.1 "$f")"
	read -r _ b22 _ _ e22 _ d22 _ <<< "$(timed -V 2.2 "$f")"
	read -r _ h21 _ _ he21 _ _ _ <<< "$(timed -V 2.1 -l 9 "$f")"
	read -r _ h22 _ _ he22 _ _ _ <<< "$(timed -V 2.2 -l 9 "$f")"
	printf '%-24s %8s | %7s %7s %7s %7s | %7s %7s %7s %7s | %6s %6s\n' "$name" "$n" \
		"$(per "$b21" "$n")" "$(per "$b22" "$n")" "$(per "$h21" "$n")" "$(per "$h22" "$n")" \
		"$e21" "$e22" "$he21" "$he22" "$d21" "$d22"
	rows+=("$name:$f:$n:$b22:$h22:$fmt:$parse")
done
echo "(enc: lib/atz.c writer into a memfd incl. lz4, ns per event; dec: lib/atz_read.c from a"
echo " memfd; the munged trace is written munged, as alloctap-munge writes it)"

echo
echo "alloctapd's own output: python3 demo/workload.py traced with -f binary (one run; the"
echo "file as written, times to the microsecond, its events re-encoded as 2.1 and at LZ4HC 9"
echo "for comparison; then traced again with times to the nanosecond, re-encoded at the fast"
echo "level with them, in coarser units and without times)"
if [ -n "${ATZ_BENCH_NO_DAEMON:-}" ]; then
	echo "(skipped: ATZ_BENCH_NO_DAEMON is set)"
elif [ ! -x build/alloctapd ] || [ ! -f demo/workload.py ]; then
	echo "(skipped: build/alloctapd or demo/workload.py missing)"
elif ! PYTHONMALLOC=malloc build/alloctapd -q -f binary -o "$T/daemon.atz" -- \
	/usr/bin/python3 demo/workload.py >/dev/null 2>"$T/daemon.err"; then
	echo "(skipped: alloctapd could not trace: $(head -n 1 "$T/daemon.err"))"
else
	"$ATZ" decode "$T/daemon.atz" "$T/daemon.log" || exit 1
	n=$(wc -l < "$T/daemon.log")
	"$ATZ" encode -V 2.1 "$T/daemon.atz" "$T/daemon21.atz" || exit 1
	"$ATZ" encode -l 9 "$T/daemon.atz" "$T/daemon22hc.atz" || exit 1
	version=$(lz4 -q -d -c "$T/daemon.atz" | head -c 6 | od -An -tu1 | awk '{ print $5 "." $6 }')
	drows=("as written ($version):daemon.atz:$n" "the events as 2.1:daemon21.atz:$n"
	      "the events as 2.2, LZ4HC 9:daemon22hc.atz:$n")
	# traced again with times to the nanosecond (ALLOCTAP_TIMES=ns), those events re-encoded
	# in memory (atz_tool time): their times in ns, as a coarser clock would count them (us:
	# the bytes of a format whose unit were the microsecond; as written, alloctapd's are
	# multiples of 1000 ns), and none (as alloctapd wrote binary traces without --stacks before)
	if PYTHONMALLOC=malloc ALLOCTAP_TIMES=ns build/alloctapd -q -f binary -o "$T/daemon-ns.atz" \
		-- /usr/bin/python3 demo/workload.py >/dev/null 2>&1; then
		nn=$("$ATZ" decode "$T/daemon-ns.atz" - | wc -l)
		for unit in 1 1000 10000 none; do
			opt=(-r "$unit")
			[ "$unit" = none ] && opt=()
			read -r _ bytes _ <<<"$(timed "${opt[@]}" "$T/daemon-ns.atz")"
			echo "$bytes" >"$T/daemon-$unit.bytes"
		done
		drows+=("traced again, times in ns:@1:$nn" "the same, times in us units:@1000:$nn"
			"the same, in 10 us units:@10000:$nn" "the same without times:@none:$nn")
	fi
	printf '%-34s %9s %10s %9s\n' "" events bytes "bytes/ev"
	for row in "${drows[@]}"; do
		IFS=: read -r what file events <<<"$row"
		if [ "${file#@}" != "$file" ]; then
			bytes=$(cat "$T/daemon-${file#@}.bytes")
		else
			bytes=$(stat -c %s "$T/$file")
		fi
		printf '%-34s %9s %10s %9s\n' "$what" "$events" "$bytes" "$(per "$bytes" "$events")"
	done
	echo "(alloctapd's own CPU per event: bench/probes_bench.sh, part 2)"
fi

echo
echo "atz 2.2 against the text and general compressors: bytes per event"
printf '%-24s %9s %9s %9s %9s %9s %9s\n' trace events text gzip-6 lz4 atz atz-HC9
for r in "${rows[@]}"; do
	IFS=: read -r name f n b22 h22 _ _ <<< "$r"
	text=$(stat -c %s "$f")
	gz=$(gzip -6 -c "$f" | wc -c)
	l4=$(lz4 -q -c "$f" | wc -c)
	printf '%-24s %9s %9s %9s %9s %9s %9s\n' "$name" "$n" "$(per "$text" "$n")" \
		"$(per "$gz" "$n")" "$(per "$l4" "$n")" "$(per "$b22" "$n")" "$(per "$h22" "$n")"
done

echo
echo "atz 1.1 against 2.2: bytes per event (fast level). 2.2 from text: the events only (the"
echo "NO_TIMES and NO_STACKS flags); +times: synthetic times 50-1550 ns apart, 1 in 8 up to 400 ns"
echo "early (another CPU); +stacks: 200 synthetic stacks of 20 frames on every call but free"
echo "(atz_tool time -t -s 200)"
printf '%-24s %9s %9s %9s %9s %13s %15s\n' trace events atz-1.1 atz-2.2 "2.2 +times" \
	"2.2 +stacks" "2.2 +times+stk"
for t in "${traces[@]}"; do
	name=${t%%:*}
	f=${t#*:}
	row=()
	for args in "-V 1.1" "-V 2.2" "-V 2.2 -t" "-V 2.2 -s 200" "-V 2.2 -t -s 200"; do
		# shellcheck disable=SC2086
		read -r n bytes _ <<< "$(timed $args "$f")"
		row+=("$(per "$bytes" "$n")")
	done
	printf '%-24s %9s %9s %9s %9s %13s %15s\n' "$name" "$n" "${row[@]}"
done

echo
echo "text against 2.2: cost per event (best of 9 runs, in memory)"
printf '%-24s %13s %14s\n' trace "text fmt ns" "text parse M/s"
for r in "${rows[@]}"; do
	IFS=: read -r name _ _ _ _ fmt parse <<< "$r"
	printf '%-24s %13s %14s\n' "$name" "$fmt" "$parse"
done
echo "(text fmt: at_format_raw + write into a memfd; text parse: lib/source.c reading the text)"
