#!/usr/bin/env bash
# Builds the seed corpus of every harness of tests/fuzz from the repository's own test data:
#   OUT/source  every log and trace of tests/data (text raw, munged, garbage, .atz)
#   OUT/text    the text logs
#   OUT/munge   the raw text logs and the garbage files
#   OUT/atz     each .atz as a file (mode byte 0x00) and its lz4-decompressed content (mode
#               bytes 0x01 and 0x2f: framed again by the harness, in 64 KiB blocks or in
#               35-byte blocks with both checksums; see fuzz_atz.c)
#   OUT/elfsym  small real ELF files: /bin/true, and a shared object, an object file and a
#               static executable compiled here from a few lines defining the malloc family
#   OUT/x86     the function prologues and decoder traps of tests/unit/test_daemon_x86_insn.c
#   OUT/convert every log and trace, after a mode byte (see fuzz_convert.c): munged to .atz,
#               kept to .atz, munged to text
#   OUT/replay  every log and trace, after a mode byte (see fuzz_replay.c): the replayer's
#               slot limit, and 4096 slots
#   OUT/report  every log and trace, after two request bytes (see fuzz_report.c): each command
#               once, with its first option variant; the traces also with each --json and
#               --csv
#   OUT/hints   a path, then dpkg-query -S's output for it: one package, an architecture,
#               diversions, several packages, none; a package, then apt-cache policy's
#   OUT/unwind  the ELF files of OUT/elfsym, the shared object linked by gold too (its
#               .eh_frame of type SHT_X86_64_UNWIND) and a copy without section headers, and
#               one with a signal trampoline's CFI (the 'S' augmentation, glibc's expressions)
#   OUT/eh_frame the .eh_frame sections of the OUT/unwind files (objcopy), and of the C library
#   OUT/table_cache  the unwind-table cache files of tests/fuzz/regressions/table_cache (the
#               tables of true and of the dynamic loader), and the ELF files of OUT/unwind
#   OUT/python  memory images of a Python thread (tests/fuzz/python_seeds.py)
# usage: tests/fuzz/seeds.sh OUT [MUNGE]  (MUNGE: an alloctap-munge program; with it, the raw
# and munged text logs are also converted to .atz seeds)
set -euo pipefail
out=${1:?usage: seeds.sh OUT [MUNGE]}
munge=${2:-}
cd "$(dirname "$0")/../.."
data=tests/data

rm -rf "$out"
mkdir -p "$out"/{source,text,munge,atz,elfsym,x86,convert,replay,report,hints,unwind,eh_frame,table_cache,python}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Copies file to dir under a name that says where it came from.
seed() {
	cp "$1" "$2/$(echo "$1" | tr '/' '_')"
}

# Writes the bytes of a mode byte (two hex digits) followed by a file's content.
with_mode() {
	{ printf "\\x$1"; cat "$2"; } >"$3"
}

shopt -s nullglob
texts=("$data"/*/*.log "$data"/*/*.out)
garbage=("$data"/*/*.bin)
traces=("$data"/*/*.atz)

if [ -n "$munge" ] && [ -x "$munge" ]; then
	"$munge" -q --keep-pointers --format binary "$data/munge/normal.log" \
		-o "$tmp/normal-raw.atz" 2>/dev/null || true
	"$munge" -q --format binary "$data/munge/normal.log" -o "$tmp/normal-munged.atz" \
		2>/dev/null || true
	for f in "$tmp"/*.atz; do
		[ -s "$f" ] && traces+=("$f")
	done
fi

for f in "${texts[@]}" "${garbage[@]}" "${traces[@]}"; do
	seed "$f" "$out/source"
done
for f in "${texts[@]}"; do
	seed "$f" "$out/text"
done
for f in "$data"/munge/*.log "$data"/replay/raw.log "${garbage[@]}"; do
	seed "$f" "$out/munge"
done
for f in "${traces[@]}"; do
	name=$(basename "$f" .atz)
	with_mode 00 "$f" "$out/atz/file-$name"
	if lz4 -dc "$f" >"$tmp/content" 2>/dev/null; then
		with_mode 01 "$tmp/content" "$out/atz/content64k-$name"
		with_mode 2f "$tmp/content" "$out/atz/content35-$name"
	fi
done

# Writes the bytes of two request bytes (hex digits each) followed by a file's content.
with_request() {
	{ printf "\\x$1\\x$2"; cat "$3"; } >"$4"
}

for f in "${texts[@]}" "${traces[@]}" "$data"/replay/*.log; do
	name=$(echo "$f" | tr '/' '_')
	with_mode 00 "$f" "$out/convert/munge-atz-$name"
	with_mode 01 "$f" "$out/convert/keep-atz-$name"
	with_mode 02 "$f" "$out/convert/munge-text-$name"
	with_mode 00 "$f" "$out/replay/limit-$name"
	with_mode 01 "$f" "$out/replay/small-$name"
done
# every command (0 to 9, report/commands.h's order) on the traces that hold stacks and times, the others on summary,
# peak and export
for f in "${traces[@]}"; do
	name=$(echo "$f" | tr '/' '_')
	for cmd in 00 01 02 03 04 05 06 07 08 09; do
		with_request "$cmd" 01 "$f" "$out/report/cmd$cmd-$name"
	done
	# the machine-readable outputs not reached above (request byte 1: the option's bit in
	# the command's row order): peak, top, timeline, lifetimes --json; leaks, top, sizes,
	# timeline, layout (its --json), diff --csv; top --by churn (by on, weight 6), top --by
	# live-bytes (weight 7) --at heap-peak and --at end
	for req in "01 08" "03 10" "05 08" "06 04" "02 02" "03 20" "04 02" "05 10" "07 02" "08 02" \
		"03 0d" "03 1f" "03 3f"; do
		with_request "${req% *}" "${req#* }" "$f" "$out/report/cmd${req% *}-opt${req#* }-$name"
	done
done
for f in "${texts[@]}"; do
	name=$(echo "$f" | tr '/' '_')
	for cmd in 00 01 08; do
		with_request "$cmd" 00 "$f" "$out/report/cmd$cmd-$name"
	done
done

# ELF files: the functions the daemon looks for, in three kinds of file.
cat >"$tmp/alloc.c" <<'EOF'
typedef unsigned long size_t;
static char heap[4096];
static size_t used;
void *malloc(size_t n) { char *p = heap + used; used += (n + 15) & ~(size_t)15; return p; }
void free(void *p) { if (p) used = 0; }
void *calloc(size_t n, size_t m) { return malloc(n * m); }
void *realloc(void *p, size_t n) { (void)p; return malloc(n); }
void _start(void) { free(malloc(1)); for (;;) ; }
EOF
cc=${CC:-cc}
"$cc" -O1 -fPIC -shared -nostdlib -o "$out/elfsym/alloc.so" "$tmp/alloc.c" 2>/dev/null || true
"$cc" -O1 -c -o "$out/elfsym/alloc.o" "$tmp/alloc.c" 2>/dev/null || true
"$cc" -O1 -static -nostdlib -no-pie -o "$out/elfsym/alloc-static" "$tmp/alloc.c" \
	2>/dev/null || true
[ -f /bin/true ] && cp /bin/true "$out/elfsym/true"

# unwind: the same objects, gold's, one without section headers, one with a signal frame
cp "$out"/elfsym/* "$out/unwind/"
"$cc" -O1 -fPIC -shared -nostdlib -fuse-ld=gold -o "$out/unwind/alloc-gold.so" "$tmp/alloc.c" \
	2>/dev/null || true
if [ -f "$out/unwind/alloc-gold.so" ]; then
	# e_shoff, e_shnum and e_shstrndx zero: the section headers are gone
	cp "$out/unwind/alloc-gold.so" "$out/unwind/alloc-gold-noshdr.so"
	printf '\0\0\0\0\0\0\0\0' | dd of="$out/unwind/alloc-gold-noshdr.so" bs=1 seek=40 \
		conv=notrunc status=none
	printf '\0\0\0\0' | dd of="$out/unwind/alloc-gold-noshdr.so" bs=1 seek=60 conv=notrunc \
		status=none
fi
cat >"$tmp/sigframe.c" <<'EOF'
__asm__(".text\n.globl tramp\n.type tramp, @function\n"
	".cfi_startproc simple\n.cfi_signal_frame\n"
	/* CFA = *(rsp + 160); rip at rsp + 168; rbp at rsp + 120 (glibc's __restore_rt) */
	".cfi_escape 0x0f,0x04,0x77,0xa0,0x01,0x06\n"
	".cfi_escape 0x10,0x10,0x03,0x77,0xa8,0x01\n"
	".cfi_escape 0x10,0x06,0x03,0x77,0xf8,0x00\n"
	"nop\ntramp: mov $15, %rax\nsyscall\n.cfi_endproc\n.size tramp, .-tramp\n");
void _start(void) { for (;;) ; }
EOF
"$cc" -O1 -static -nostdlib -no-pie -o "$out/unwind/sigframe" "$tmp/sigframe.c" 2>/dev/null || true

# eh_frame: the sections alone
for f in "$out"/unwind/* /lib/$("$cc" -dumpmachine)/libc.so.6; do
	objcopy -O binary --only-section=.eh_frame "$f" "$out/eh_frame/$(basename "$f").eh_frame" \
		2>/dev/null || true
done
find "$out/eh_frame" -empty -delete

# x86: each { "what", { bytes }, len, ... } case of the decoder's unit test, len bytes of it.
python3 - tests/unit/test_daemon_x86_insn.c "$out/x86" <<'EOF'
import re, sys
src = open(sys.argv[1]).read()
for i, m in enumerate(re.finditer(r'\{\s*"([^"]*)",\s*\{([^}]*)\},\s*(\d+)', src)):
    code = bytes(int(x, 0) for x in m.group(2).replace('\n', ' ').split(',') if x.strip())
    code = code.ljust(int(m.group(3)), b'\0')[:int(m.group(3))]
    name = re.sub(r'[^a-z0-9]+', '-', m.group(1).lower()).strip('-')
    open('%s/%02d-%s' % (sys.argv[2], i, name), 'wb').write(code)
EOF

# hints: the path asked about, then dpkg-query -S's lines
p=/usr/bin/python3.11
printf '%s\npython3.11-minimal: %s\n' $p $p >"$out/hints/one"
printf '%s\nlibc6:amd64: %s\n' $p $p >"$out/hints/arch"
printf '%s\ndiversion by dash from: %s\ndiversion by dash to: %s.real\nx: %s\n' $p $p $p $p \
	>"$out/hints/diversion"
printf '%s\na, b: %s\n' $p $p >"$out/hints/several"
printf '%s\n' $p >"$out/hints/none"
printf 'python3.11-dbg\npython3.11-dbg:\n  Installed: (none)\n  Candidate: 3.11.2-6\n' \
	>"$out/hints/policy"

# table_cache: real cache files, and objects whose tables are written and read back
cp tests/fuzz/regressions/table_cache/* "$out"/unwind/* "$out/table_cache/"
python3 tests/fuzz/python_seeds.py "$out/python"

for d in "$out"/*/; do
	printf '  SEEDS   %s: %s files\n' "$d" "$(ls "$d" | wc -l)"
done
