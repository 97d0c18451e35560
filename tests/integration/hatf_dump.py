#!/usr/bin/env python3
"""hatf_dump.py: a second, independent HATF 1.0 decoder for the tests.

Reads a raw HATF stream (codecs/heap/hatf.h's layout: tag byte, big-endian
fields whose width and interpretation metadata records set) from a file or
stdin and prints one line a record, in the form of tracemount's ascii view:
the kind's name, then its fields in schema order (codecs/heap/heap.h),
numbers in decimal, addresses as 0x hex, bytes (attributes, a comment's
text) as themselves where printable and %XX otherwise (space, %, a lone
"-"), or "-" when empty:

    alloc SIZE ADDRESS THREAD HEAP TIME ATTRIBUTES
    free ADDRESS THREAD HEAP TIME ATTRIBUTES
    realloc|realloc_alloc_free|realloc_alloc|realloc_free SIZE OLD NEW THREAD HEAP TIME ATTRIBUTES
    createHeap|destroyHeap HEAP THREAD TIME ATTRIBUTES
    createThread|destroyThread THREAD TIME ATTRIBUTES
    comment TEXT

Metadata records are applied, not printed; neither is the comment "HATF
1.0" that starts the stream (the signature, views/records.c does the same). Compressed input: pipe it
through zstdcat or gzip -dc. Exit 0, or 1 with a message naming the byte
offset of the first bad record.

usage: hatf_dump.py [FILE]
"""
import sys

KINDS = ["alloc", "free", "realloc", "realloc_alloc_free", "realloc_alloc", "realloc_free",
         "createHeap", "destroyHeap", "createThread", "destroyThread", "comment"]
# HATF fields: 0 size, 1 address, 2 time, 3 thread, 4 heap, 5 attributes.
SIZE, ADDR, TIME, THREAD, HEAP, ATTR = range(6)
REALLOC = [SIZE, ADDR, ADDR, THREAD, HEAP, TIME, ATTR]
LAYOUT = {0: [SIZE, ADDR, THREAD, HEAP, TIME, ATTR], 1: [ADDR, THREAD, HEAP, TIME, ATTR],
          2: REALLOC, 3: REALLOC, 4: REALLOC, 5: REALLOC,
          6: [HEAP, THREAD, TIME, ATTR], 7: [HEAP, THREAD, TIME, ATTR],
          8: [THREAD, TIME, ATTR], 9: [THREAD, TIME, ATTR]}
NONE, DEFAULT, BASEOFFSET, DELTA, STRIDE = range(5)
V1, V2 = 9, 10
M64 = (1 << 64) - 1


class Bad(Exception):
    pass


class Field:
    """One field's state: the paper's Appendix A, as hatf.h words it."""

    def __init__(self, f):
        numeric_default = f in (SIZE, ADDR)
        self.width = 4 if numeric_default else 0
        self.lastnz = V1 if f == ATTR else 4
        self.interp = NONE if numeric_default else DEFAULT
        self.arg = 0
        self.prev = 0

    def stored(self):
        if self.interp in (DEFAULT, STRIDE):
            return 0
        return {V1: 1, V2: 2}.get(self.width, self.width)


def be(b, signed=False):
    v = int.from_bytes(b, "big")
    if signed and b and v >> (8 * len(b) - 1):
        v -= 1 << (8 * len(b))
    return v


def token(b):
    """Bytes as the ascii view shows them (views/rrender.c)."""
    if not b:
        return "-"
    if b == b"-":
        return "%2D"
    return "".join(chr(c) if 0x20 < c < 0x7f and c != 0x25 else "%%%02X" % c for c in b)


SIGNATURE = b"\x0a\x00\x08HATF 1.0"


def decode(data, out):
    st = [Field(f) for f in range(6)]
    pos = len(SIGNATURE) if data.startswith(SIGNATURE) else 0
    n = len(data)

    def need(k, what):
        if pos + k > n:
            raise Bad("offset %d: truncated %s record" % (start, what))

    while pos < n:
        start = pos
        tag = data[pos]
        if tag == 11:
            need(4, "metadata")
            op, field, a2 = data[pos + 1], data[pos + 2], data[pos + 3]
            if field > ATTR:
                raise Bad("offset %d: metadata names unknown field %d" % (start, field))
            fs = st[field]
            if op == 1:
                ok = a2 in (0, 1, 2, 4, 8) or (field == ATTR and a2 in (V1, V2))
                if not ok:
                    raise Bad("offset %d: bad width %d for field %d" % (start, a2, field))
                fs.width = a2
                if a2:
                    fs.lastnz = a2
                pos += 4
            elif op == 2:
                extra = {NONE: 0, DEFAULT: 8, BASEOFFSET: 8, DELTA: 8, STRIDE: 16}.get(a2)
                if extra is None:
                    raise Bad("offset %d: unknown interpretation %d" % (start, a2))
                if field == ATTR and a2 not in (NONE, DEFAULT):
                    raise Bad("offset %d: attributes take none or default only" % start)
                need(4 + extra, "metadata")
                a3 = be(data[pos + 4:pos + 12])
                fs.interp = a2
                if a2 == NONE:
                    fs.width = fs.lastnz
                elif a2 == DEFAULT:
                    fs.width, fs.arg = 0, a3
                elif a2 == BASEOFFSET:
                    fs.width, fs.arg = fs.lastnz, a3
                elif a2 == DELTA:
                    fs.width, fs.prev = fs.lastnz, a3
                else:
                    fs.width, fs.prev, fs.arg = 0, a3, be(data[pos + 12:pos + 20])
                pos += 4 + extra
            else:
                raise Bad("offset %d: unknown metadata op %d" % (start, op))
            continue
        if tag == 10:
            need(3, "comment")
            ln = be(data[pos + 1:pos + 3])
            need(3 + ln, "comment")
            out.append("comment " + token(data[pos + 3:pos + 3 + ln]))
            pos += 3 + ln
            continue
        if tag not in LAYOUT:
            raise Bad("offset %d: unknown record tag %d" % (start, tag))
        pos += 1
        vals = []
        for f in LAYOUT[tag]:
            fs = st[f]
            w = fs.stored()
            if f == ATTR:
                if fs.interp == DEFAULT:
                    vals.append(token(fs.arg.to_bytes(8, "big") if fs.arg else b""))
                    continue
                if fs.width in (V1, V2):
                    need(w, KINDS[tag])
                    ln = be(data[pos:pos + w])
                    pos += w
                else:
                    ln = w
                need(ln, KINDS[tag])
                vals.append(token(data[pos:pos + ln]))
                pos += ln
                continue
            need(w, KINDS[tag])
            raw = data[pos:pos + w]
            pos += w
            if fs.interp == NONE:
                v = be(raw)
            elif fs.interp == DEFAULT:
                v = fs.arg
            elif fs.interp == BASEOFFSET:
                v = (fs.arg + be(raw, True)) & M64
            elif fs.interp == DELTA:
                v = (fs.prev + be(raw, True)) & M64
            else:
                v = (fs.prev + fs.arg) & M64
            fs.prev = v
            vals.append("0x%x" % v if f == ADDR else str(v))
        out.append(KINDS[tag] + " " + " ".join(vals))


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "-"
    data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    out = []
    try:
        decode(data, out)
    except Bad as e:
        sys.stdout.write("".join(line + "\n" for line in out))
        sys.stderr.write("hatf_dump.py: %s: %s\n" % (path, e))
        return 1
    sys.stdout.write("".join(line + "\n" for line in out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
