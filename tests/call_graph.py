#!/usr/bin/env python3
"""The call graph between modules, read from the built objects, checked.

include_graph.py reads #include lines; a header can declare another
module's functions, so modules may call each other in a circle while
their includes do not. This check reads what the linker reads: for each
object file of the library, the daemon and the CLI (meson's *.p/ folders,
found through compile_commands.json), `nm` tells which global symbols it
defines and which it references (a call, or a table's pointer to a
function or an object). Module a uses module b when a references a
symbol that b defines, resolved as the link does (a program's own
objects first, then the library's). The two checks run side by side in
the suite: the includes by include_graph.py, the calls here.

A module is a source file without its extension, except that a format is
one module (STYLE.md): in codecs/, x_part.c belongs to module x when x.c
or x.h is in the same folder (hatf_enc.c to hatf), and the Meta-TF
engine's mtf_*.c, which share metatf_impl.h, belong to metatf.

Layers, lowest first (STYLE.md: data flows one way); a module never calls
one of a higher layer:

    0  codecs/common                     errors, I/O, CPU features, JSON
    1  codecs/containers, codecs/record  byte streams; the record model
    2  the other codecs (codecs/*/, codecs/registry.c), arch/
    3  views/                            the engine and the views
    4  fs/ | tools/*/                    the daemon | the CLI's parts (record/,
                                         heapin/), side by side: neither
    5         tools/*.c                  calls the other; the CLI's commands

Rules:
  1. no call from a module to one of a higher layer, nor between fs/ and
     tools/;
  2. no circle of calls between modules: every strongly connected part
     of the graph is one module;
  3. tools/ calls of the library (codecs/, views/) are of the API
     (TM_API in include/tracemount.h) or of the internals that
     tools/lib_int.h names, no others.

Known breaches are listed in ALLOWED as edges (caller, callee) with the
reason; the check leaves them out of the graph, fails on any other
breach, and fails on an allowed edge that no longer exists (so the list
shrinks as they are fixed).

usage: call_graph.py [--nm NM] [--only DIR]... [--expect LINE]... SOURCE_ROOT BUILD_ROOT
  --only DIR     read only the objects of these *.p folders (relative to BUILD_ROOT)
  --expect LINE  exit 0 iff the breaches are exactly these lines ("layer: a -> b",
                 "circle: a b ..."): the test of this test
exit 0 clean, 1 with the breaches
"""
import argparse
import json
import os
import re
import subprocess
import sys

TOPS = ("arch", "codecs", "views", "fs", "tools")
# the library, the daemon and the CLI (the recorders' preloaded libraries
# link none of them)
PROGRAMS = ("libtracemount.a.p", "fs/tracemount.p", "tools/tracetool.p")
SIDE = {"fs", "tools"}  # same layer, but neither calls the other
ALIAS = {
    "codecs/metatf/mtf": "codecs/metatf/metatf",  # the engine's mtf_*.c
    "codecs/native/ncol": "codecs/native/native",  # the native format's schema 2 (ncol_*.c)
}

# Known breaches: (caller, callee) modules, each with its reason (none).
ALLOWED = set()


def layer(mod):
    """The layer of a module path (no extension), or None outside the layers."""
    parts = mod.split("/")
    if parts[0] not in TOPS:
        return None
    if parts[0] == "codecs":
        if len(parts) > 2 and parts[1] == "common":
            return 0
        if len(parts) > 2 and parts[1] in ("containers", "record"):
            return 1
        return 2
    if parts[0] == "tools":
        return 5 if len(parts) == 2 else 4
    return {"arch": 2, "views": 3, "fs": 4}[parts[0]]


def objects(root, build, only):
    """{*.p folder: [(object path, source path relative to root)]}"""
    with open(os.path.join(build, "compile_commands.json")) as f:
        cc = json.load(f)
    out = {}
    for c in cc:
        obj = c["output"]
        tgt = os.path.dirname(obj)
        while tgt and not tgt.endswith(".p"):
            tgt = os.path.dirname(tgt)
        if only and tgt not in only:
            continue
        if not only and tgt not in PROGRAMS:
            continue
        src = os.path.normpath(os.path.join(c["directory"], c["file"]))
        rel = os.path.relpath(src, root)
        if rel.startswith("..") or layer(os.path.splitext(rel)[0]) is None:
            continue
        out.setdefault(tgt, []).append((os.path.join(build, obj), rel))
    return out


def symbols(nm, obj):
    """(defined, undefined) global symbol names of an object file."""
    res = subprocess.run([nm, "-g", obj], capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit("call_graph: FAIL: %s -g %s: %s" % (nm, obj, res.stderr.strip()))
    d, u = set(), set()
    for line in res.stdout.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] in ("U", "w", "v"):
            u.add(f[1])
        elif len(f) == 3 and f[1] not in ("U", "w", "v"):
            d.add(f[2])
    return d, u


def module(rel, root):
    """The module of a source file (path relative to root)."""
    m = os.path.splitext(rel)[0]
    d, base = os.path.split(m)
    if not m.startswith("codecs/") or "_" not in base:
        return m
    parts = base.split("_")
    for i in range(len(parts) - 1, 0, -1):  # the longest x first
        x = os.path.join(d, "_".join(parts[:i]))
        if x in ALIAS:
            return ALIAS[x]
        if any(os.path.isfile(os.path.join(root, x + e)) for e in (".c", ".h")):
            return x
    return m


def call_edges(nm, objs, root):
    """{module: {module: first symbol it calls there}} and the objects read."""
    syms = {}
    for tgt, lst in objs.items():
        for obj, rel in lst:
            if obj not in syms:
                syms[obj] = symbols(nm, obj)
    lib = [(o, r) for t, l in objs.items() if t.startswith("libtracemount") for o, r in l]
    edges = {}
    for tgt, lst in objs.items():
        scope = lst if tgt.startswith("libtracemount") else lst + lib
        where = {}
        for obj, rel in reversed(scope):  # the program's own objects win
            for s in syms[obj][0]:
                where[s] = module(rel, root)
        for obj, rel in lst:
            a = module(rel, root)
            for s in sorted(syms[obj][1]):
                b = where.get(s)
                if b and b != a:
                    edges.setdefault(a, {}).setdefault(b, set()).add(s)
    return edges, len(syms)


def tools_may_call(root):
    """The library functions tools/ may call: the API's and lib_int.h's."""
    names = set()
    api = os.path.join(root, "include", "tracemount.h")
    if os.path.isfile(api):
        with open(api) as f:
            names |= set(re.findall(r"^TM_API .*?[ *](tm_[a-z0-9_]*)\(", f.read(), re.M))
    lib = os.path.join(root, "tools", "lib_int.h")
    if os.path.isfile(lib):
        with open(lib) as f:
            names |= set(re.findall(r"\btm_[a-z0-9_]+\b", f.read()))
    return names


def sccs(nodes, edges):
    """Tarjan's strongly connected parts, each a sorted list."""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            out.append(sorted(part))
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nm", default=os.environ.get("NM", "nm"))
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--expect", action="append", default=None)
    ap.add_argument("root")
    ap.add_argument("build")
    a = ap.parse_args()
    root, build = os.path.abspath(a.root), os.path.abspath(a.build)
    objs = objects(root, build, set(a.only))
    if not objs:
        print("call_graph: FAIL: no object files of %s in %s" % (root, build))
        return 1
    calls, nobj = call_edges(a.nm, objs, root)
    edges, seen = {}, set()
    for x, outs in calls.items():
        for y, ss in outs.items():
            if (x, y) in ALLOWED:
                seen.add((x, y))
            else:
                edges.setdefault(x, {})[y] = "calls " + ", ".join(sorted(ss)[:3])
    bad, detail = [], {}
    may = tools_may_call(root)
    for x, outs in sorted(calls.items()):
        for y, ss in sorted(outs.items()):
            if x.startswith("tools/") and layer(y) <= 3:
                for s in sorted(ss - may):
                    line = "internal: %s -> %s" % (x, s)
                    bad.append(line)
                    detail[line] = ["%s calls %s (%s), which neither include/tracemount.h nor "
                                    "tools/lib_int.h names" % (x, s, y)]
    for x, outs in sorted(edges.items()):
        for y, why in sorted(outs.items()):
            lx, ly = layer(x), layer(y)
            tx, ty = x.split("/")[0], y.split("/")[0]
            if ly > lx or (tx in SIDE and ty in SIDE and tx != ty):
                line = "layer: %s -> %s" % (x, y)
                bad.append(line)
                detail[line] = ["%s %s" % (x, why)]
    nodes = set(edges) | {y for o in edges.values() for y in o}
    for part in sccs(nodes, edges):
        if len(part) < 2:
            continue
        line = "circle: " + " ".join(part)
        bad.append(line)
        detail[line] = ["%s -> %s: %s" % (x, y, edges[x][y])
                        for x in part for y in sorted(edges.get(x, {})) if y in part]
    if a.expect is not None:
        want = set(a.expect)
        for line in sorted(want - set(bad)):
            print("call_graph: FAIL: expected breach not found: " + line)
        for line in sorted(set(bad) - want):
            print("call_graph: FAIL: unexpected breach: " + line)
        ok = want == set(bad)
        print("call_graph: %d objects, %d breaches, %s" %
              (nobj, len(bad), "as expected" if ok else "not as expected"))
        return 0 if ok else 1
    for b in bad:
        print("call_graph: " + b)
        for d in detail[b]:
            print("    " + d)
    for x, y in sorted(ALLOWED - seen):
        bad.append("allowed %s -> %s" % (x, y))
        print("call_graph: %s no longer uses %s: remove it from ALLOWED" % (x, y))
    print("call_graph: %d objects, %d modules, %d edges (%d allowed), %d breaches" %
          (nobj, len(nodes), sum(len(v) for v in calls.values()), len(seen), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
