#!/usr/bin/env python3
"""Corrupt archives through a live mount: the helper of fuse_corrupt.sh.

  fuse_corrupt.py make SRC N SEED BASE...   write N damaged copies of each
      intact archive BASE (a path; its name is codec.container) into SRC and
      a manifest SRC/../manifest.json
  fuse_corrupt.py check MNT REFS MANIFEST   read every view of every copy
      through the mount MNT, whole and at random offsets, each read with a
      time limit; compare with the intact archive's views in REFS/<base>/;
      print the outcomes by codec and container; exit 1 on a crash, a hang,
      another error than EIO, or wrong bytes the container could have
      detected.

Damage (one kind a copy, in turn, from a seeded generator, so a run is
reproducible): 'trunc' cuts the file at a random offset, 'flip' flips 1-3
random bits, 'zero' zeroes a block of 1-512 bytes, 'append' adds 1-2048
random bytes.

Outcome of a read: 'right' (the intact view's bytes at that range), 'eio'
(the read, or the open, fails with EIO; a whole read may first return the
intact prefix), 'wrong' (other bytes, a view cut short without an error,
or longer), 'crash' (the daemon is gone: ENOTCONN), 'hang' (no answer
within the time limit), 'other' (another errno); 'report' counts reads of
the views that report on the archive (stats, stats.json, errors), which
differ by design and must only not fail otherwise. 'absent' counts views
that do not exist in the copy (its damage made it no trace, or a trace
without that view: it shows as a plain file or the view is missing).
Wrong bytes are allowed, and counted as 'undetectable', only where the
container carries nothing that could detect the damage: any damage of a
plain archive, and a zstd archive cut exactly between frames (a shorter
but valid stream). A gzip member and a zstd frame are served only once
their checksums passed, so every other wrong byte fails. The summary
counts the wrong bytes served per container ('wrong bytes')."""
import json
import os
import random
import select
import subprocess
import sys
import time

KINDS = ("trunc", "flip", "zero", "append")
# Views that report on the archive rather than decode it: a damaged copy's
# differ from the intact one's by design (its counts, its error). They are
# read like the others (no crash, no hang, no error but EIO) and counted as
# 'report'.
REPORTS = ("stats", "stats.json", "errors")
CHUNK = 65536
RAND_READS = 4
READ_TIMEOUT = float(os.environ.get("TM_CORRUPT_READ_TIMEOUT", "10"))


def make_copy(data, kind, rng):
    b = bytearray(data)
    n = len(b)
    if kind == "trunc":
        at = rng.randrange(n)
        return bytes(b[:at]), "cut at %d of %d" % (at, n)
    if kind == "flip":
        bits = [rng.randrange(n * 8) for _ in range(rng.randint(1, 3))]
        for x in bits:
            b[x // 8] ^= 1 << (x % 8)
        return bytes(b), "bits %s" % ",".join(str(x) for x in bits)
    if kind == "zero":
        at = rng.randrange(n)
        ln = rng.randint(1, 512)
        b[at : at + ln] = bytes(len(b[at : at + ln]))
        return bytes(b), "zero %d bytes at %d" % (ln, at)
    ln = rng.randint(1, 2048)
    return bytes(b) + bytes(rng.randrange(256) for _ in range(ln)), "append %d" % ln


def cmd_make(src, n, seed, bases):
    rng = random.Random(seed)
    man = []
    for base in bases:
        name = os.path.basename(base)
        codec, cont = name.split(".", 1)
        with open(base, "rb") as f:
            data = f.read()
        for k in range(n):
            kind = KINDS[k % len(KINDS)]
            out, what = make_copy(data, kind, rng)
            vname = "%s.%s-%04d-%s" % (codec, cont, k, kind)
            with open(os.path.join(src, vname), "wb") as f:
                f.write(out)
            man.append({"name": vname, "base": name, "codec": codec, "cont": cont,
                        "kind": kind, "what": what})
    with open(os.path.join(os.path.dirname(os.path.abspath(src)), "manifest.json"), "w") as f:
        json.dump(man, f)


# ---- the reader (a child process, so a hung read can be killed) ----

def ref_name(view):
    return view.replace("/", "_")


def wrong_bytes(got, want):
    """How many of got's bytes differ from want's at the same offsets."""
    n = min(len(got), len(want))
    if got[:n] == want[:n]:
        return len(got) - n
    return sum(1 for a, b in zip(got[:n], want[:n]) if a != b) + len(got) - n


def classify(got, want, err):
    """Outcome of a whole read: got the bytes before err (an errno or None)."""
    if got != want[: len(got)]:
        return "wrong"
    if err is None:
        return "right" if len(got) == len(want) else "wrong"
    return "eio" if err == 5 else ("crash" if err in (107, 103) else "other")


def reader(mnt, refs, man, start):
    out = sys.stdout
    rng = random.Random(start)
    cache = {}
    for i in range(start, len(man)):
        v = man[i]
        if v["base"] not in cache:
            d = os.path.join(refs, v["base"])
            with open(os.path.join(d, "VIEWS")) as f:
                views = f.read().split()
            cache[v["base"]] = [(w, open(os.path.join(d, ref_name(w)), "rb").read())
                                for w in views]
        out.write("S %d\n" % i)
        out.flush()
        for view, want in cache[v["base"]]:
            path = os.path.join(mnt, v["name"], view)
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError as e:
                res = "absent" if e.errno in (2, 20) else classify(b"", b"x", e.errno)
                out.write("O %d %s open %s %s\n" % (i, view, res, e.errno))
                out.flush()
                continue
            got, err = bytearray(), None
            try:
                while True:
                    b = os.pread(fd, CHUNK, len(got))
                    if not b:
                        break
                    got += b
                    out.write(".\n")  # a heartbeat per read
                    out.flush()
                    if len(got) > len(want) + 16 * CHUNK:
                        break  # far longer than the view: wrong already
            except OSError as e:
                err = e.errno
            res = classify(bytes(got), want, err)
            if view in REPORTS and res == "wrong":
                res = "report"
            short = "short " if err is None and len(got) < len(want) and \
                bytes(got) == want[: len(got)] else ""
            wb = 0 if view in REPORTS else wrong_bytes(bytes(got), want)
            out.write("O %d %s whole %s %s%d/%d wb=%d\n" % (i, view, res, short, len(got),
                                                            len(want), wb))
            out.flush()
            for _ in range(RAND_READS):
                off = rng.randrange(len(want) + 64)
                ln = rng.randint(1, 16384)
                try:
                    b = os.pread(fd, ln, off)
                    res = "right" if b == want[off : off + ln] else "wrong"
                    if view in REPORTS:
                        res = "report"
                    # a read may stop early where damage follows (the next
                    # read meets the error): a right prefix is not wrong
                    if res == "wrong" and b == want[off : off + len(b)] and len(b) < ln:
                        res = "right"
                    wb = 0 if view in REPORTS else wrong_bytes(b, want[off : off + ln])
                    detail = "%d+%d wb=%d" % (off, ln, wb)
                except OSError as e:
                    res = classify(b"", b"x", e.errno)
                    detail = "%d+%d errno %d" % (off, ln, e.errno)
                out.write("O %d %s pread %s %s\n" % (i, view, res, detail))
                out.flush()
            os.close(fd)
    out.write("E\n")
    out.flush()


# ---- the parent: time limits and counts ----

COLS = ("right", "eio", "undetectable", "wrong", "crash", "hang", "other", "absent",
        "report")


def allowed_wrong(v, detail):
    if v["cont"] == "plain":
        return True
    if v["cont"] == "zst" and v["kind"] == "trunc" and detail.startswith("short"):
        return True
    return False


def cmd_check(mnt, refs, manpath):
    with open(manpath) as f:
        man = json.load(f)
    counts = {}
    wbytes = {}
    bad = []
    start = 0
    t0 = time.time()
    while start < len(man):
        p = subprocess.Popen([sys.executable, __file__, "reader", mnt, refs, manpath,
                              str(start)], stdout=subprocess.PIPE, bufsize=0)
        cur = start
        buf = b""
        done = False
        while True:
            r, _, _ = select.select([p.stdout], [], [], READ_TIMEOUT)
            if not r:
                v = man[cur]
                counts.setdefault((v["codec"], v["cont"]), dict.fromkeys(COLS, 0))["hang"] += 1
                bad.append("%s: hang (no answer within %g s; %s)" % (v["name"], READ_TIMEOUT,
                                                                      v["what"]))
                p.kill()
                p.wait()
                start = cur + 1
                break
            chunk = p.stdout.read1(65536) if hasattr(p.stdout, "read1") else os.read(
                p.stdout.fileno(), 65536)
            if not chunk:
                p.wait()
                if not done:
                    bad.append("reader died at %s (exit %s)" % (man[cur]["name"], p.returncode))
                    start = cur + 1
                else:
                    start = len(man)
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for ln in lines:
                f = ln.decode().split(" ", 5)
                if f[0] == "S":
                    cur = int(f[1])
                elif f[0] == "E":
                    done = True
                elif f[0] == "O":
                    v = man[int(f[1])]
                    res, detail = f[4], f[5] if len(f) > 5 else ""
                    if res == "wrong" and allowed_wrong(v, detail):
                        res = "undetectable"
                    c = counts.setdefault((v["codec"], v["cont"]), dict.fromkeys(COLS, 0))
                    c[res] += 1
                    if "wb=" in detail:
                        wbytes[v["cont"]] = wbytes.get(v["cont"], 0) + int(detail.rsplit("wb=", 1)[1])
                    if res in ("wrong", "crash", "other"):
                        bad.append("%s %s %s: %s %s (%s)" % (v["name"], f[2], f[3], res, detail,
                                                             v["what"]))
        if any(c["crash"] for c in counts.values()):
            break  # the mount is gone
    secs = time.time() - t0
    # the table
    print("%-8s %-5s %8s " % ("codec", "cont", "copies") + " ".join("%12s" % c for c in COLS))
    ncopies = {}
    for v in man:
        k = (v["codec"], v["cont"])
        ncopies[k] = ncopies.get(k, 0) + 1
    tot = dict.fromkeys(COLS, 0)
    bycont, bycodec = {}, {}
    for k in sorted(counts):
        c = counts[k]
        print("%-8s %-5s %8d " % (k[0], k[1], ncopies.get(k, 0)) +
              " ".join("%12d" % c[x] for x in COLS))
        for x in COLS:
            tot[x] += c[x]
            bycont.setdefault(k[1], dict.fromkeys(COLS, 0))[x] += c[x]
            bycodec.setdefault(k[0], dict.fromkeys(COLS, 0))[x] += c[x]
    for name, d in (("container", bycont), ("codec", bycodec)):
        for k in sorted(d):
            print("%-8s %-14s " % ("all" if name == "container" else k,
                                   k if name == "container" else "all") +
                  " ".join("%12d" % d[k][x] for x in COLS))
    print("%-23s " % "total" + " ".join("%12d" % tot[x] for x in COLS))
    print("%d copies, %d reads in %.1f s" % (len(man), sum(tot.values()), secs))
    print("wrong bytes served, by container: " +
          ", ".join("%s %d" % (k, wbytes.get(k, 0)) for k in sorted(set(v["cont"] for v in man))))
    for k in ("gz", "zst"):
        if wbytes.get(k, 0):
            bad.append("%d wrong bytes served from %s archives" % (wbytes[k], k))
    for b in bad[:40]:
        print("FAIL: " + b)
    if len(bad) > 40:
        print("... and %d more" % (len(bad) - 40))
    return 1 if bad else 0


def main():
    if sys.argv[1] == "make":
        cmd_make(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:])
        return 0
    if sys.argv[1] == "reader":
        with open(sys.argv[4]) as f:
            man = json.load(f)
        reader(sys.argv[2], sys.argv[3], man, int(sys.argv[5]))
        return 0
    if sys.argv[1] == "check":
        return cmd_check(sys.argv[2], sys.argv[3], sys.argv[4])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
