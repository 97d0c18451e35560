#!/usr/bin/env python3
"""The include graph of the library and its users, checked.

Layers, lowest first (STYLE.md: data flows one way, a lower layer never
includes a higher one):

    include/   the public header (it includes nothing of ours)
    codecs/    containers, codecs, the registry (codecs/common at the bottom);
    arch/      vector code, included by the modules of codecs/ and views/
    views/     the engine: trace, index, render, stats, views
    fs/        the FUSE daemon          tools/  tracetool, record
    (fs/ and tools/ are side by side: neither includes the other)

Rules:
  1. no #include "..." from a layer into a higher one (codecs -> views,
     views -> fs or tools, ...);
  2. no circle of includes between modules (a module is a .c/.h pair by
     its path without the extension): x.h including y.h and y.h, or y.c,
     including x.h;
  3. tools/ reaches the library's headers (codecs/, views/) through
     tools/lib_int.h alone, which names what the CLI uses beyond the API
     (include/tracemount.h); tests/call_graph.py checks the calls.

Known breaches that issue 27 ("one engine") removes are listed in
ALLOWED with the reason; the check fails on any other, and on an allowed
one that no longer exists (so the list shrinks as they are fixed).

usage: include_graph.py SOURCE_ROOT        exit 0 clean, 1 with the breaches
"""
import os
import re
import sys

LAYER = {"include": 0, "arch": 1, "codecs": 1, "views": 2, "fs": 3, "tools": 3}
SIDE = {"fs", "tools"}  # same level, but not each other
TOOLS_LIB = "tools/lib_int.h"

# (from, to) file paths, relative to the root
ALLOWED = set()
ALLOWED_CIRCLES = set([])

INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def sources(root):
    for top in LAYER:
        d = os.path.join(root, top)
        for dp, _, files in os.walk(d):
            for f in files:
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dp, f), root)


def resolve(root, src, name):
    """The included file's path relative to root, or None (system or generated)."""
    cands = [os.path.normpath(os.path.join(os.path.dirname(src), name)), os.path.normpath(name)]
    for c in cands:
        if os.path.isfile(os.path.join(root, c)):
            return c
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    edges = {}
    for src in sources(root):
        with open(os.path.join(root, src), errors="replace") as f:
            for line in f:
                m = INC.match(line)
                if not m:
                    continue
                dst = resolve(root, src, m.group(1))
                if dst and dst != src:
                    edges.setdefault(src, set()).add(dst)
    bad, seen_allowed, seen_circles = [], set(), set()

    def breach(a, b, why):
        if (a, b) in ALLOWED:
            seen_allowed.add((a, b))
        else:
            bad.append("%s includes %s: %s" % (a, b, why))

    for a, dsts in sorted(edges.items()):
        la = a.split("/")[0]
        for b in sorted(dsts):
            lb = b.split("/")[0]
            if lb not in LAYER:
                continue
            if LAYER[lb] > LAYER[la]:
                breach(a, b, "a lower layer includes a higher one")
            elif la in SIDE and lb in SIDE and la != lb:
                breach(a, b, "fs/ and tools/ are side by side")
            elif la == "tools" and lb in ("codecs", "views") and a != TOOLS_LIB:
                breach(a, b, "tools/ includes the library's headers through %s" % TOOLS_LIB)
    # circles between modules: x_priv.h, x_impl.h and x_int.h belong to
    # module x when there is one; an internal header of a folder (no such
    # x: cont_impl.h) including the folder's public header is no circle
    internal = re.compile(r"^(.*)_(priv|impl|int)$")
    mods = {os.path.splitext(p)[0] for p in sources(root)}

    def mod(p):
        m = os.path.splitext(p)[0]
        g = internal.match(m)
        if g and g.group(1) in mods:
            return g.group(1)
        return m
    medges = {}
    for a, dsts in edges.items():
        if internal.match(os.path.splitext(a)[0]) and mod(a) == os.path.splitext(a)[0]:
            continue
        for b in dsts:
            if mod(a) != mod(b):
                medges.setdefault(mod(a), set()).add(mod(b))
    for m, outs in sorted(medges.items()):
        for o in sorted(outs):
            if m < o and m in medges.get(o, set()):
                why = "module %s and module %s include each other" % (m, o)
                if (m, o) in ALLOWED_CIRCLES:
                    seen_circles.add((m, o))
                else:
                    bad.append(why)
    for c in sorted(ALLOWED_CIRCLES - seen_circles):
        bad.append("modules %s and %s no longer include each other: remove them from "
                   "ALLOWED_CIRCLES" % c)
    for a in sorted(ALLOWED - seen_allowed):
        bad.append("%s no longer includes %s: remove it from ALLOWED" % a)
    for b in bad:
        print("include_graph: " + b)
    print("include_graph: %d files, %d includes, %d breaches" %
          (len(edges), sum(len(v) for v in edges.values()), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
