#!/usr/bin/env python3
"""Write loop.lpr: a Laplace raw reference trace (docs/formats/laplace.md)
of a made-up loop in two address spaces, 18-byte packed little-endian
records (type, time, size, space, address), for the conformance suite
(tests/unit_conformance.c takes every file of tests/data/ that a codec
probes as its sample), and loop.lpt, the same records in the text form
("r 123456789abcdef0 4 9f8e7 9a8b7c6d": type, then hex), and loop.lpk,
the kernel events of the same made-up run, every tag of the catalog
("switch 10000 9f8e7": tag, time, fields in hex). Deterministic: rerunning
writes the same bytes."""
import struct

recs = []
t = 0x10000
for i in range(240):
    space = 0x9f8e7 if i < 160 else 0x1234
    pc = 0x08048000 + (i % 12) * 4
    kind = i % 3
    if kind == 0:
        recs.append((b"i", t, 4, space, pc))
    elif kind == 1:
        recs.append((b"r", t, 4, space, 0xbfff0000 + (i % 40) * 4))
    else:
        recs.append((b"w", t, 8, space, 0x0804a000 + (i % 16) * 8))
    t += 3 + i % 5
with open("loop.lpr", "wb") as f:
    for r in recs:
        f.write(struct.pack("<cQBII", *r))
with open("loop.lpt", "w") as f:
    for ty, t, size, space, addr in recs:
        f.write("%s %x %x %x %x\n" % (ty.decode(), t, size, space, addr))

# the kernel events: space 0x9f8e7 forks 0x1234, which execs; the two take
# turns on the processor, map and unmap regions, and end
ev = [("fork", 0x0ff00, (0x9f8e7, 0x1234)), ("exec", 0x0ff40, (0x1234,))]
t = 0x10000
for i in range(40):
    space = 0x9f8e7 if i % 2 == 0 else 0x1234
    ev.append(("switch", t, (space,)))
    ev.append(("mmap", t + 1, (space, 0x40000000 + i * 0x1000, 0x1000)))
    if i % 3 == 0:
        ev.append(("munmap", t + 2, (space, 0x40000000 + i * 0x1000, 0x1000)))
    t += 0x40
ev += [("exit", t, (0x1234,)), ("exit", t + 1, (0x9f8e7,))]
with open("loop.lpk", "w") as f:
    for tag, t, fields in ev:
        f.write("%s %x %s\n" % (tag, t, " ".join("%x" % v for v in fields)))
