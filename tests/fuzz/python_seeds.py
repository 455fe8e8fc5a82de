"""python_seeds.py: seeds of fuzz_python.c, written into the folder given as the argument.

Each seed is the memory image of a thread of a Python process, laid out as fuzz_python.c reads
it (first byte: the offsets, 0 for 3.11's, 1 for 3.12's; then the thread id; _PyRuntime at 64):
one interpreter, one thread, two Python frames (the inner one called from the outer, the outer
the entry of its run; 3.12's run ends at a shim frame), a code object with ASCII names and a
one-entry location table, and another whose qualified name is not ASCII."""
import struct
import sys

# The fields of daemon/python/pyoffsets.c's tables that the seeds lay out.
OFFSETS = {
    0: dict(interp_head=0x28, threads_head=0x10, next=0x8, tid=0xa0, cframe=0x38, cur=0x8,
            previous=0x30, code=0x20, instr=0x38, owner=0x45, is_entry=0x44,
            filename=0x70, name=0x78, qualname=0x80, linetable=0x88, first=0x48,
            adaptive=0xb8, ascii_size=48, compact_size=72),
    1: dict(interp_head=0x28, threads_head=0x48, next=0x8, tid=0x90, cframe=0x38, cur=0x0,
            previous=0x8, code=0x0, instr=0x38, owner=0x46, is_entry=None,
            filename=0x70, name=0x78, qualname=0x80, linetable=0x88, first=0x44,
            adaptive=0xc0, ascii_size=40, compact_size=56),
}
RUNTIME, INTERP, TSTATE, CFRAME = 64, 512, 1024, 1536
FRAMES, SHIM, CODES, STRS = (2048, 2304), 2560, (4096, 4608), 6144
TID = 7


def put(img, at, fmt, value):
    struct.pack_into(fmt, img, at, value)


def put_str(img, at, o, text):
    """A compact str: ASCII (kind 1, ascii bit) or UCS-2 (kind 2)."""
    ascii_only = all(ord(c) < 128 for c in text)
    kind = 1 if ascii_only else 2
    put(img, at + 0x10, "<q", len(text))
    put(img, at + 0x20, "<I", (kind << 2) | (1 << 5) | ((1 << 6) if ascii_only else 0))
    data = text.encode("ascii" if ascii_only else "utf-16-le")
    base = at + (o["ascii_size"] if ascii_only else o["compact_size"])
    img[base:base + len(data)] = data


def seed(sel):
    o = OFFSETS[sel]
    img = bytearray(8192)
    img[0] = sel
    put(img, 1, "<I", TID)
    put(img, RUNTIME + o["interp_head"], "<Q", INTERP)
    put(img, INTERP + o["threads_head"], "<Q", TSTATE)
    put(img, TSTATE + o["tid"], "<Q", TID)
    put(img, TSTATE + o["cframe"], "<Q", CFRAME)
    put(img, CFRAME + o["cur"], "<Q", FRAMES[0])
    for i, (frame, code) in enumerate(zip(FRAMES, CODES)):
        put(img, frame + o["code"], "<Q", code)
        put(img, frame + o["instr"], "<Q", code + o["adaptive"] + 2 * i)
        last = i == len(FRAMES) - 1
        put(img, frame + o["previous"], "<Q", SHIM if last and o["is_entry"] is None else
            (0 if last else FRAMES[i + 1]))
        if o["is_entry"] is not None:
            img[frame + o["is_entry"]] = int(last)
        s = STRS + 768 * i
        put(img, code + o["filename"], "<Q", s)
        put(img, code + o["name"], "<Q", s + 256)
        put(img, code + o["qualname"], "<Q", s + 256 if i == 0 else s + 512)
        put(img, code + o["linetable"], "<Q", s + 640)
        put(img, code + o["first"], "<i", 10 + i)
        put_str(img, s, o, "app.py")
        put_str(img, s + 256, o, "handle" if i == 0 else "serve")
        if i:
            put_str(img, s + 512, o, "Caf\u00e9.serve")
        put(img, s + 640 + 0x10, "<q", 2)
        img[s + 640 + 0x20:s + 640 + 0x22] = bytes([0x87, 0x00])
    img[SHIM + o["owner"]] = 3
    return bytes(img)


for sel in OFFSETS:
    with open("%s/thread-%d" % (sys.argv[1], sel), "wb") as f:
        f.write(seed(sel))
