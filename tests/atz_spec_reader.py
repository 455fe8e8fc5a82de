#!/usr/bin/env python3
"""atz_spec_reader.py: an independent .atz reader written from doc/FORMAT.md alone.

Reads the stream content (the lz4 frame already unwrapped, e.g. by `lz4 -d -c FILE`) on stdin,
or with --file FILE the file itself: it walks the lz4 frames (sections 2 and 2.1; their
checksums are lz4 -t's to check) and reads their contents one after the other as one trace. It
prints the events as logalloc text (raw, or munged when the header says so), exactly as
lib/text.c formats them. With --stats it prints, instead, bytes and records per record kind;
with --processes, one line per process change record (section 5.4):
"CHANGE PID PARENT FLAGS STATUS EXECUTABLE ARG..." (CHANGE is START, EXEC or EXIT);
with --stacks, for each event with a stack (2.0, sections 5.5 and 5.6):
"FUNC FLAGS PC0 PC1 ..." (FLAGS complete, truncated or incomplete; PCs 0x-prefixed hex);
with --mappings, one line per mapping record (section 5.7):
"PID START-END OFFSET BUILDID PATH" (BUILDID hex, "-" when empty);
with --names, one line per NAMES record (section 5.10): "NAMES PID KIND VALUE LINE FUNCTION
FILE" (KIND by name, VALUE 0x-prefixed hex, FILE "-" when empty); with --test-kinds, frames and
NAMES records of kind 254 (test, which only alloctap's tests write) are taken, and --stacks
prints a frame of a kind other than native as "KIND:0xVALUE";
with --times, one line per event: "TIME STACK" (0 0 for 1.x); with --ends, the events as text
and, where an END record stands among them (section 5.9), "END PID TID". Reads 1.0 to 2.6 (2.2: sections
5.8 and 6.5; 2.3: END records, section 5.9; 2.5: Python frames; 2.6: frames whose stacks go on,
section 2.1), within the limits of section 8.
tests/atz_cli.sh checks that its output equals the C reader's, which keeps the document honest.
Exit status: 0 ok, 1 malformed stream.
"""
import sys

FUNCS = ["malloc", "calloc", "realloc", "free", "memalign", "posix_memalign",
         "aligned_alloc", "valloc", "jemalloc_stats"]
NARGS = [1, 2, 2, 1, 2, 2, 2, 1, 0]
M64 = (1 << 64) - 1
THREADS_MAX = 1 << 22               # section 8: threads not ended, at once
BLOCKS_MAX = 1 << 24                # section 8: blocks in all live tables, at once


class Corrupt(Exception):
    pass


class Ring:
    """Section 6.1: entry 0 is the newest."""

    def __init__(self, cap):
        self.cap = cap
        self.v = []

    def push(self, x):
        self.v.insert(0, x)
        del self.v[self.cap:]

    def remove(self, k):
        del self.v[k]

    def get(self, k):
        if k >= len(self.v):
            raise Corrupt("ring index past the ring")
        return self.v[k]


class Thread:
    def __init__(self, pid, tid):
        self.pid, self.tid = pid, tid
        self.last = {"SIZE": 0, "RELEASE": 0, "ALLOC": 0}
        self.sizes, self.releases, self.allocs = Ring(8), Ring(32), Ring(64)

    def ring(self, role):
        return {"SIZE": self.sizes, "RELEASE": self.allocs, "ALLOC": self.releases}[role]

    def update(self, role, x, k):
        """Section 6.3."""
        if role == "SIZE":
            if k is not None:
                self.sizes.remove(k)
            self.sizes.push(x)
            self.last["SIZE"] = x
        elif role == "RELEASE":
            if k is not None:
                self.allocs.remove(k)
            if x:
                self.releases.push(x)
                self.last["RELEASE"] = x
        elif role == "ALLOC":
            if k is not None:
                self.releases.remove(k)
            if x:
                self.allocs.push(x)
                self.last["ALLOC"] = x


def unzigzag(z):
    return (z >> 1) ^ (-(z & 1) & M64)


def unadelta(c):
    d = unzigzag(c >> 1)
    return d if c & 1 else (d << 4) & M64


def role_of(func, field):
    if field == 2:
        return "ALLOC"
    if field == 0 and func in (2, 3):
        return "RELEASE"
    return "SIZE" if field < NARGS[func] else "EXTRA"


class Live22:
    """Section 6.5: a thread of a 2.2 frame (sizes as in 6.1 and 6.3)."""

    def __init__(self, pid, tid):
        self.pid, self.tid = pid, tid
        self.sizes, self.last_size = Ring(8), 0
        self.live = []                  # [address, size], oldest first
        self.cursor = 0
        self.freed = Ring(64)           # (address, class), entry 0 the newest
        self.top, self.last_release = 0, 0

    def update_size(self, x, k):
        if k is not None:
            self.sizes.remove(k)
        self.sizes.push(x)
        self.last_size = x


def size_class(n, munged):
    return 2 if munged else max(2, n // 16 + (n % 16 + 23) // 16)


def alloc_size(func, arg0, arg1):
    if func in (0, 7):
        return arg0
    if func == 1:
        return (arg0 * arg1) & M64
    return arg1 if func in (2, 4, 5, 6) else 0


class Model22:
    """Section 6.5: the thread table of a 2.2 frame and its updates."""

    def __init__(self, munged):
        self.munged = munged
        self.threads, self.cur, self.other = {}, None, None
        self.blocks = 0                 # in all live tables (section 8)

    def release_table(self):
        if self.other is None:
            return self.cur
        if self.other not in self.threads:
            raise Corrupt("OTHER names a thread that ended")
        return self.threads[self.other]

    def release_code(self, p):
        """The block a release code P names: taken out of its table, onto the freed ring."""
        table = self.release_table()
        if p & 1:
            rank = (table.cursor + unzigzag(p >> 1)) & M64
        else:
            rank = (len(table.live) - 1 - (p >> 1)) & M64
        if rank >= len(table.live):
            raise Corrupt("release code past its table's blocks")
        x, n = table.live.pop(rank)
        self.blocks -= 1
        table.cursor = rank
        self.cur.freed.push((x, size_class(n, self.munged)))
        self.cur.last_release = x
        return x

    def release_address(self, x):
        if x:
            self.cur.freed.push((x, 0))
            self.cur.last_release = x

    def address_code(self, a, n):
        """(address, freed entry or None) of address code A for an allocation of n bytes."""
        t = self.cur
        if a & 1:
            x, k = (t.top + unadelta(a >> 1)) & M64, None
        else:
            ks = [i for i, (_, c) in enumerate(t.freed.v) if c == size_class(n, self.munged)]
            if a >> 1 >= len(ks):
                raise Corrupt("address code names no freed block")
            k = ks[a >> 1]
            x = t.freed.v[k][0]
        if x == 0:
            raise Corrupt("allocation at address 0")
        return x, k

    def allocate(self, x, n, k):
        t = self.cur
        if k is not None:
            t.freed.remove(k)
        else:
            t.top = (x + 1) & M64 if self.munged else (x + 16 * size_class(n, 0)) & M64
        if len(t.live) == 65536:
            del t.live[0]
        elif self.blocks == BLOCKS_MAX:
            raise Corrupt("more than %d live blocks" % BLOCKS_MAX)
        else:
            self.blocks += 1
        t.live.append([x, n])


def compact22(s, m, op):
    """Section 5.8: the compact forms of a 2.2 frame."""
    t = m.cur
    if op < 0x48:
        if op < 0x40:
            k = (op >> 3) & 7
            n, name = t.sizes.get(k), "QUICK_MALLOC"
        else:
            k, n, name = None, s.varint(), "MALLOC"
        t.update_size(n, k)
        field = op & 7
        a = 2 * field if field < 6 else 1 if field == 6 else s.varint()
        x, fk = m.address_code(a, n)
        m.allocate(x, n, fk)
        return name, (0, 1, [n, 0], x)
    if op <= 0x7A:
        if op < 0x68:
            x, name = m.release_code(2 * (op - 0x48)), "QUICK_FREE"
        elif op < 0x78:
            x, name = m.release_code(2 * (op - 0x68) + 1), "FREE_NEAR"
        elif op == 0x78:
            x, name = m.release_code(s.varint()), "FREE_FAR"
        elif op == 0x79:
            x, name = 0, "FREE_NULL"
        else:
            x, name = (t.last_release + unadelta(s.varint())) & M64, "FREE_ADDR"
            if x == 0:
                raise Corrupt("FREE_ADDR of 0")
            m.release_address(x)
        return name, (3, 0, [x, 0], 0)
    if op > 0x7D:
        raise Corrupt("reserved record kind 0x%02x" % op)
    p = m.release_code(s.varint()) if op != 0x7D else 0
    n = s.varint()
    t.update_size(n, None)
    if op == 0x7B:
        t.freed.remove(0)
        if len(t.live) == 65536:
            del t.live[0]
        t.live.append([p, n])
        return "REALLOC_SAME", (2, 1, [p, n], p)
    x, fk = m.address_code(s.varint(), n)
    m.allocate(x, n, fk)
    return ("REALLOC_MOVE" if op == 0x7C else "REALLOC_NULL"), (2, 1, [p, n], x)


def general22(s, m, func):
    """Section 5.8: the EVENT form of a 2.2 frame, fields in order, each update applied before
    the next field."""
    t = m.cur
    fb = s.byte()
    if fb & 0x80:
        raise Corrupt("reserved field bit")
    vals = []
    for f in range(3):
        mode, role = (fb >> (2 * f)) & 3, role_of(func, f)
        if role == "EXTRA" and mode in (1, 2):
            raise Corrupt("ring or delta on an extra field")
        if role == "SIZE":
            k = None
            if mode == 0:
                x = 0
            elif mode == 1:
                k = s.byte()
                x = t.sizes.get(k)
            elif mode == 2:
                x = (t.last_size + unzigzag(s.varint())) & M64
            else:
                x = s.varint()
            t.update_size(x, k)
        elif role == "RELEASE":
            if mode == 0:
                x = 0
            elif mode == 1:
                x = m.release_code(s.varint())
            else:
                x = s.varint()
                if mode == 2:
                    x = (t.last_release + unadelta(x)) & M64
                m.release_address(x)
        elif role == "ALLOC":
            n = alloc_size(func, vals[0], vals[1])
            if mode == 0:
                x = 0
            elif mode == 1:
                x, fk = m.address_code(s.varint(), n)
                m.allocate(x, n, fk)
            elif mode == 2:
                raise Corrupt("delta on a result in 2.2")
            else:
                x = s.varint()
                if x:
                    m.allocate(x, n, None)
        else:
            x = s.varint() if mode == 3 else 0
        vals.append(x)
    return func, (fb >> 6) & 1, vals[:2], vals[2]


class Stream:
    def __init__(self, data):
        self.d, self.p = data, 0

    def byte(self):
        if self.p >= len(self.d):
            raise Corrupt("stream ends inside a record")
        self.p += 1
        return self.d[self.p - 1]

    def varint(self):
        """Section 4."""
        v = 0
        for i in range(10):
            b = self.byte()
            if i == 9 and b > 1:
                raise Corrupt("varint overflow")
            v |= (b & 0x7F) << (7 * i)
            if not b & 0x80:
                return v
        raise Corrupt("varint longer than 10 bytes")

    def take(self, n):
        if self.p + n > len(self.d):
            raise Corrupt("stream ends inside a record")
        self.p += n
        return self.d[self.p - n:self.p]


def hexp(v, munged):
    return "#%d" % v if munged else "0x%x" % v


def fmt(pid, tid, func, has_result, args, result, munged):
    parts = []
    for i in range(NARGS[func]):
        parts.append(hexp(args[i], munged) if i == 0 and func in (2, 3) else str(args[i]))
    line = "%d %d %s(%s)" % (pid, tid, FUNCS[func], ",".join(parts))
    if has_result:
        line += "=" + hexp(result, munged)
    return line


class Trace:
    """What the frames of one file share (section 2.1): the first frame's munged flag, the
    stacks a 2.6 frame with STACKS_GO_ON keeps, and what is printed."""

    def __init__(self, args):
        self.stats = "--stats" in args
        self.processes = "--processes" in args
        self.stacks_out = "--stacks" in args
        self.mappings_out = "--mappings" in args
        self.times_out = "--times" in args
        self.ends_out = "--ends" in args
        self.names_out = "--names" in args
        self.test_kinds = "--test-kinds" in args
        self.records_only = (self.stats or self.processes or self.stacks_out or
                             self.mappings_out or self.times_out or self.names_out)
        self.frames = 0
        self.munged = None
        self.stacks = []                # stack id - 1 -> (flags, frames, kinds)
        self.out = []
        self.kinds = {}


def read_content(data, tr):
    """One frame's content (section 1): its stream header, then its records."""
    processes, stacks_out = tr.processes, tr.stacks_out
    mappings_out, times_out, ends_out = tr.mappings_out, tr.times_out, tr.ends_out
    names_out, records_only = tr.names_out, tr.records_only
    # Section 5.6: kind 0 is native; kind 1 is python from 2.5 on; kind 254 (test, named by
    # NAMES records) is defined by no version, and taken only when the tests ask.
    frame_kinds = {0: "native", 254: "test"} if tr.test_kinds else {0: "native"}
    s = Stream(data)
    # Section 3: the header.
    if s.take(4) != b"ATZ\0":
        raise Corrupt("not an atz stream" if not tr.frames else
                      "frame %d is not an alloctap trace" % (tr.frames + 1))
    major, minor = s.byte(), s.byte()
    if major not in (1, 2):
        raise Corrupt("version %d is not 1 or 2" % major)
    if major == 2 and minor >= 5:   # Section 5.6: 2.5 defines kind 1, python
        frame_kinds[1] = "python"
    flags = s.varint()
    s.varint()                      # start time
    s.take(s.varint())              # host
    s.take(s.varint())              # header extension
    munged = flags & 1
    # Section 2.1: a later frame agrees with the first on munged; its state starts over, but
    # for the stacks of a 2.6 frame with STACKS_GO_ON (bit 3).
    if tr.frames and munged != tr.munged:
        raise Corrupt("frame %d is %s after a %s one" % (
            tr.frames + 1, "munged" if munged else "raw", "munged" if tr.munged else "raw"))
    if tr.munged is None:
        tr.munged = munged
    tr.frames += 1
    if not (major == 2 and minor >= 6 and flags & 8):
        tr.stacks = []
    stacks = tr.stacks
    out, kinds = tr.out, tr.kinds
    v22 = major == 2 and minor >= 2
    model = Model22(munged)    # Section 5.5: what follows each event record in 2.x.
    has_times = major == 2 and not flags & 2
    has_stacks = major == 2 and not flags & 4
    time_ref = 0
    threads, entries, cur = {}, 0, None   # entry -> state of threads not ended (section 5.9)
    while s.p < len(s.d):
        start = s.p
        op = s.byte()
        ev = None
        if op <= (0x7D if v22 else 0x77) or 0x80 <= op <= 0x88:
            if cur is None:
                raise Corrupt("event before any thread")
            t = cur
            if op < 0x80:
                name, ev = compact22(s, model, op) if v22 else compact(s, t, op)
            else:
                name = "EVENT " + FUNCS[op & 15]
                ev = general22(s, model, op & 15) if v22 else general(s, t, op & 15)
            model.other = None
            time, stack = 0, 0
            if has_times and has_stacks:
                code = s.varint()
                time_ref = (time_ref + unzigzag(code >> 1)) & M64
                time = time_ref
                if code & 1:
                    stack = s.varint()
                    if stack == 0:
                        raise Corrupt("stack id 0 written as present")
            elif has_times:
                time_ref = (time_ref + unzigzag(s.varint())) & M64
                time = time_ref
            elif has_stacks:
                stack = s.varint()
            if stack > len(stacks):
                raise Corrupt("stack id %d used before its stack record" % stack)
        elif op == (0x94 if v22 else 0x90):
            name = "THREAD"
            i = s.varint()
            if i not in threads:
                raise Corrupt("unknown or ended thread")
            cur = model.cur = threads[i]
        elif op == (0x95 if v22 else 0x91):
            name = "NEW_THREAD"
            pid, tid = s.varint(), s.varint()
            if pid > 0xFFFFFFFF or tid > 0xFFFFFFFF:
                raise Corrupt("pid or tid too large")
            if len(threads) == THREADS_MAX or entries == 0xFFFFFFFF:
                raise Corrupt("more than %d threads at once" % THREADS_MAX)
            cur = model.cur = Live22(pid, tid) if v22 else Thread(pid, tid)
            threads[entries] = cur
            entries += 1
            model.threads = threads
        elif op == 0x7E and v22:
            name = "OTHER"
            i = s.varint()
            if i not in threads:
                raise Corrupt("OTHER names no thread")
            model.other = i
        elif op == 0x92:
            name = "LOST"
            s.varint()
        elif op == 0x93 and has_times:
            name = "TIME"
            time_ref = s.varint()
        elif op == 0xC3 and major == 2:
            name = "STACK"
            payload = Stream(s.take(s.varint()))
            sid, pid, count, sflags, pc = [payload.varint() for _ in range(5)]
            if sid != len(stacks) + 1:
                raise Corrupt("stack id %d out of order" % sid)
            if pid > 0xFFFFFFFF or not 1 <= count <= 128 or sflags > 0xFFFF:
                raise Corrupt("bad stack record")
            frames = [pc]
            for _ in range(count - 1):
                pc = (pc + unzigzag(payload.varint())) & M64
                frames.append(pc)
            fkinds = [0] * count
            if sflags & 4:              # KINDS: a kind byte per frame (section 5.6)
                fkinds = list(payload.take(count))
                if len(fkinds) < count:
                    raise Corrupt("stack record that ends before its frame kinds")
                for i, kind in enumerate(fkinds):
                    if kind not in frame_kinds:
                        raise Corrupt("stack frame %d of kind %d" % (i, kind))
            stacks.append((sflags, frames, fkinds))
        elif op == 0xC7 and major == 2:
            name = "NAMES"
            payload = Stream(s.take(s.varint()))
            pid = payload.varint()
            kind = payload.byte()
            value, line, flen = payload.varint(), payload.varint(), payload.varint()
            if pid > 0xFFFFFFFF or line > 0xFFFFFFFF:
                raise Corrupt("bad names record")
            if kind == 0 or kind not in frame_kinds:  # named by NAMES records: every kind but 0
                raise Corrupt("names record for frames of kind %d" % kind)
            if flen > 4096 or flen > len(payload.d) - payload.p:
                raise Corrupt("names record's function too long")
            function = payload.take(flen)
            nfile = payload.d[payload.p:]
            if len(nfile) > 4096:
                raise Corrupt("names record's file too long")
            if names_out:
                out.append("NAMES %d %s 0x%x %d %s %s" % (
                    pid, frame_kinds[kind], value, line, function.decode("utf-8", "replace"),
                    nfile.decode("utf-8", "replace") or "-"))
        elif op == 0xC4 and major == 2:
            name = "MAPPING"
            payload = Stream(s.take(s.varint()))
            pid, mstart, mend, offset, blen = [payload.varint() for _ in range(5)]
            if pid > 0xFFFFFFFF or mend < mstart or blen > 20:
                raise Corrupt("bad mapping record")
            build_id = payload.take(blen)
            path = payload.d[payload.p:]
            if len(path) > 4096:
                raise Corrupt("mapping path too long")
            if mappings_out:
                out.append("%d 0x%x-0x%x 0x%x %s %s" % (
                    pid, mstart, mend, offset, build_id.hex() or "-",
                    path.decode("utf-8", "replace")))
        elif op == 0xC6 and major == 2:
            name = "END"
            payload = Stream(s.take(s.varint()))
            i = payload.varint()
            if i not in threads:
                raise Corrupt("END names no thread")
            if ends_out:
                out.append("END %d %d" % (threads[i].pid, threads[i].tid))
            if v22:
                model.blocks -= len(threads[i].live)
            if cur is threads[i]:
                cur = model.cur = None
            del threads[i]
        elif op == 0xC2:
            name = "PROCESS_CHANGE"
            payload = Stream(s.take(s.varint()))
            change, flags, pid, parent, _time, status = [payload.varint() for _ in range(6)]
            if pid > 0xFFFFFFFF or parent > 0xFFFFFFFF:
                raise Corrupt("pid too large")
            text = payload.d[payload.p:]
            exe, _, args = text.partition(b"\0")
            if processes and change in (1, 2, 3):
                words = [["START", "EXEC", "EXIT"][change - 1], str(pid), str(parent), str(flags),
                         str(status), exe.decode("utf-8", "replace")]
                words += [a.decode("utf-8", "replace") for a in args.split(b"\0")[:-1]]
                out.append(" ".join(words))
        elif op >= 0xC0:
            name = "SIZED 0x%02x" % op
            s.take(s.varint())
        else:
            raise Corrupt("reserved record kind 0x%02x" % op)
        k = kinds.setdefault(name, [0, 0])
        k[0] += 1
        k[1] += s.p - start
        if ev is not None and stacks_out and stack:
            sflags, frames, fkinds = stacks[stack - 1]
            word = "incomplete" if sflags & 2 else "truncated" if sflags & 1 else "complete"
            out.append(" ".join([FUNCS[ev[0]], word] + [
                ("%s:" % frame_kinds[k] if k else "") + "0x%x" % pc
                for pc, k in zip(frames, fkinds)]))
        if ev is not None and times_out:
            out.append("%d %d" % (time, stack))
        if ev is not None and not records_only:
            out.append(fmt(cur.pid, cur.tid, *ev, munged))


def lz4_length(src, i, what):
    """The bytes that go on a length of 15 in a token (each 255 but the last): their sum, and
    the position after them."""
    total = 0
    while True:
        if i >= len(src):
            raise Corrupt("lz4 block ends inside a %s" % what)
        b = src[i]
        i += 1
        total += b
        if b != 255:
            return total, i


def lz4_block(src, out):
    """One compressed block of the LZ4 block format, appended to out (the frame's output so
    far: a match may reach into the blocks before, up to 64 KiB back)."""
    i, n = 0, len(src)
    while True:
        if i >= n:
            raise Corrupt("lz4 block ends inside a sequence")
        token = src[i]
        i += 1
        lit = token >> 4
        if lit == 15:
            more, i = lz4_length(src, i, "literal length")
            lit += more
        if i + lit > n:
            raise Corrupt("lz4 literals past the block's end")
        out += src[i:i + lit]
        i += lit
        if i == n:                  # the last sequence: literals only
            return
        if i + 2 > n:
            raise Corrupt("lz4 block ends inside an offset")
        off = src[i] | src[i + 1] << 8
        i += 2
        ml = token & 15
        if ml == 15:
            more, i = lz4_length(src, i, "match length")
            ml += more
        ml += 4
        start = len(out) - off
        if off == 0 or start < 0:
            raise Corrupt("lz4 match offset %d before the frame's start" % off)
        if off >= ml:
            out += out[start:start + ml]
        else:                       # the match overlaps what it writes: a repeated pattern
            out += (out[start:] * (ml // off + 1))[:ml]


def lz4_frames(data):
    """Section 2 and 2.1: the content of each LZ4 frame of data, in order; skippable frames
    skipped. Checksums are not verified (lz4 -t does)."""
    p = 0
    while p < len(data):
        if len(data) - p < 4:
            raise Corrupt("unexpected data after the lz4 frame at byte offset %d" % p)
        magic = int.from_bytes(data[p:p + 4], "little")
        if 0x184D2A50 <= magic <= 0x184D2A5F:
            if len(data) - p < 8:
                raise Corrupt("skippable frame at byte offset %d cut short" % p)
            p += 8 + int.from_bytes(data[p + 4:p + 8], "little")
            continue
        if magic != 0x184D2204:
            raise Corrupt("unexpected data after the lz4 frame at byte offset %d: not another "
                          "lz4 frame" % p)
        at = p
        if len(data) - p < 7:
            raise Corrupt("the input ends inside an lz4 frame header at byte offset %d" % at)
        flg = data[p + 4]
        if flg >> 6 != 1 or flg & 3:
            raise Corrupt("lz4 frame at byte offset %d: version, reserved bit or dictionary" % at)
        p += 6 + (8 if flg & 8 else 0) + 1
        out = bytearray()
        while True:
            if p + 4 > len(data):
                raise Corrupt("lz4 frame at byte offset %d cut short" % at)
            size = int.from_bytes(data[p:p + 4], "little")
            p += 4
            if size == 0:
                break
            n = size & 0x7FFFFFFF
            if p + n > len(data):
                raise Corrupt("lz4 frame at byte offset %d cut short" % at)
            if size >> 31:
                out += data[p:p + n]
            else:
                lz4_block(data[p:p + n], out)
            p += n + (4 if flg & 0x10 else 0)
        p += 4 if flg & 4 else 0
        yield bytes(out)


def main():
    """Reads stdin as one frame's content, or with --file FILE the frames of FILE itself."""
    args = sys.argv[1:]
    tr = Trace(args)
    if "--file" in args:
        with open(args[args.index("--file") + 1], "rb") as f:
            contents = lz4_frames(f.read())
        for content in contents:
            read_content(content, tr)
        if not tr.frames:
            raise Corrupt("no lz4 frame")
    else:
        read_content(sys.stdin.buffer.read(), tr)
    if tr.stats:
        total = sum(b for _, b in tr.kinds.values())
        for name, (n, b) in sorted(tr.kinds.items(), key=lambda kv: -kv[1][1]):
            print("%-22s %9d records %9d bytes %5.1f%% %5.2f B/record" %
                  (name, n, b, 100.0 * b / total, b / n))
    else:
        sys.stdout.write("".join(line + "\n" for line in tr.out))


def compact(s, t, op):
    """Section 5.1."""
    if 0x40 <= op <= 0x5F or op in (0x71, 0x72):
        k = None
        if op <= 0x5F:
            k = op & 31
            v, name = t.allocs.get(k), "QUICK_FREE"
        elif op == 0x71:
            v, name = 0, "FREE_NULL"
        else:
            v, name = (t.last["RELEASE"] + unadelta(s.varint())) & M64, "FREE_DELTA"
            if v == 0:
                raise Corrupt("FREE_DELTA of 0")
        t.update("RELEASE", v, k)
        return name, (3, 0, [v, 0], 0)
    if op in (0x75, 0x76, 0x77):
        k, p = None, 0
        if op != 0x76:
            k = s.byte()
            p = t.allocs.get(k)
        size = s.varint()
        t.update("RELEASE", p, k)
        t.update("SIZE", size, None)
        if op == 0x75:
            result, name = p, "REALLOC_SAME"
            t.update("ALLOC", p, 0)
        else:
            result = (t.last["ALLOC"] + unadelta(s.varint())) & M64
            name = "REALLOC_NULL" if op == 0x76 else "REALLOC_MOVE"
            if result in (0, p):
                raise Corrupt("compact realloc of 0 or unmoved")
            t.update("ALLOC", result, None)
        return name, (2, 1, [p, size], result)
    sk = ak = None
    if op < 0x40:
        sk, ak, name = (op >> 3) & 7, op & 7, "QUICK_MALLOC"
    elif op < 0x68:
        sk, name = op & 7, "MALLOC_SIZE"
    elif op < 0x70:
        ak, name = op & 7, "MALLOC_ADDR"
    elif op == 0x70:
        name = "MALLOC_NEW"
    elif op == 0x73:
        b = s.byte()
        sk, ak, name = b & 7, b >> 3, "MALLOC_DEEP1"
    elif op == 0x74:
        name = "MALLOC_DEEP2"
    else:
        raise Corrupt("reserved record kind 0x%02x" % op)
    size = t.sizes.get(sk) if sk is not None else s.varint()
    if op == 0x74:
        ak = s.byte()
    if ak is not None:
        result = t.releases.get(ak)
    else:
        result = (t.last["ALLOC"] + unadelta(s.varint())) & M64
        if result == 0:
            raise Corrupt("compact malloc of 0")
    t.update("SIZE", size, sk)
    t.update("ALLOC", result, ak)
    return name, (0, 1, [size, 0], result)


def general(s, t, func):
    """Section 5.2: fields in order, each update applied before the next field."""
    fb = s.byte()
    if fb & 0x80:
        raise Corrupt("reserved field bit")
    vals = []
    for f in range(3):
        mode, role, k = (fb >> (2 * f)) & 3, role_of(func, f), None
        if mode == 0:
            x = 0
        elif role == "EXTRA" and mode != 3:
            raise Corrupt("ring or delta on an extra field")
        elif mode == 1:
            k = s.byte()
            x = t.ring(role).get(k)
        elif mode == 2:
            c = s.varint()
            d = unzigzag(c) if role == "SIZE" else unadelta(c)
            x = (t.last[role] + d) & M64
        else:
            x = s.varint()
        t.update(role, x, k)
        vals.append(x)
    return func, (fb >> 6) & 1, vals[:2], vals[2]


if __name__ == "__main__":
    try:
        main()
    except Corrupt as e:
        sys.stderr.write("atz_spec_reader: %s\n" % e)
        sys.exit(1)
