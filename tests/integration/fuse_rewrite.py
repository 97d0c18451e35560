#!/usr/bin/env python3
"""Readers of a mounted view while its archive is rewritten in place.

usage: fuse_rewrite.py VIEW ARCHIVE SECONDS SEED VERSION...

VERSION is ARCHIVE_FILE=EXPECTED_VIEW_TEXT: the archive's bytes and the
view's text as `tracetool cat` gives it. The archive starts as the first
version. Four reader processes open VIEW (a path under the mount), take
its size with fstat and pread random ranges (1 B to 64 KiB) inside that
size, 40 reads a handle, then reopen; a writer copies the versions over
ARCHIVE in turn (open with O_TRUNC and write, as cp does) every 0.3 s.
Every read must return the bytes of some version's view at that offset,
or fail with EIO (then the reader reopens; an open or fstat may fail
while the archive is mid-rewrite: it retries). Counted apart: reads of
neither version, reads of 0 bytes inside the size fstat gave. Prints the
counts; exits 1 if either is not 0 or if fewer than 100 reads returned
bytes. Seeded: the offsets and lengths are the same at every run (which
read meets which rewrite depends on timing)."""
import errno
import multiprocessing as mp
import os
import random
import sys
import time

READERS = 4
READS_PER_OPEN = 40
PERIOD = 0.3


def reader(view, texts, until, seed, out):
    rnd = random.Random(seed)
    c = dict(ok=0, eio=0, neither=0, zero=0, open_err=0, other=0)
    first = []
    try:
        read_loop(view, texts, until, rnd, c, first)
    except OSError as e:  # an error other than EIO: counted, the reader stops
        c["other"] += 1
        first.append("%s" % e)
    out.put((c, first))


def read_loop(view, texts, until, rnd, c, first):
    while time.time() < until:
        try:
            fd = os.open(view, os.O_RDONLY)
        except OSError:
            c["open_err"] += 1  # the path is mid-rewrite: not a trace yet
            time.sleep(0.01)
            continue
        try:
            try:
                size = os.fstat(fd).st_size
            except OSError as e:
                if e.errno != errno.EIO:
                    raise
                c["open_err"] += 1  # the version it opened is gone: reopen
                continue
            for _ in range(READS_PER_OPEN):
                if size == 0 or time.time() >= until:
                    break
                off = rnd.randrange(size)
                n = rnd.randint(1, 65536)
                try:
                    b = os.pread(fd, n, off)
                except OSError as e:
                    if e.errno != errno.EIO:
                        raise
                    c["eio"] += 1
                    break
                if not b:
                    c["zero"] += 1
                    if len(first) < 5:
                        first.append("0 bytes at %d inside size %d" % (off, size))
                    break
                if any(t[off:off + len(b)] == b for t in texts):
                    c["ok"] += 1
                else:
                    c["neither"] += 1
                    if len(first) < 5:
                        first.append("%d bytes at %d of neither version (size %d)" %
                                     (len(b), off, size))
        finally:
            os.close(fd)


def writer(archive, blobs, until):
    i = 0
    while time.time() < until:
        time.sleep(PERIOD)
        i = (i + 1) % len(blobs)
        fd = os.open(archive, os.O_WRONLY | os.O_TRUNC)
        try:
            mv = memoryview(blobs[i])
            while mv:  # cp's 128 KiB writes
                k = os.write(fd, mv[:131072])
                mv = mv[k:]
        finally:
            os.close(fd)
    return i


def main():
    view, archive, secs, seed = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    blobs, texts = [], []
    for v in sys.argv[5:]:
        a, t = v.split("=", 1)
        with open(a, "rb") as f:
            blobs.append(f.read())
        with open(t, "rb") as f:
            texts.append(f.read())
    until = time.time() + secs
    q = mp.Queue()
    ps = [mp.Process(target=reader, args=(view, texts, until, seed * 100 + k, q))
          for k in range(READERS)]
    for p in ps:
        p.start()
    writer(archive, blobs, until)
    tot = dict(ok=0, eio=0, neither=0, zero=0, open_err=0, other=0)
    firsts = []
    for _ in ps:
        c, first = q.get()
        for k in tot:
            tot[k] += c[k]
        firsts += first
    for p in ps:
        p.join()
    print("%s: %d reads of one version's bytes, %d EIO, %d of neither version, "
          "%d of 0 bytes inside the size, %d failed opens or fstats, %d other errors" %
          (view, tot["ok"], tot["eio"], tot["neither"], tot["zero"], tot["open_err"],
           tot["other"]))
    for f in firsts[:10]:
        print("  " + f)
    bad = tot["neither"] or tot["zero"] or tot["other"] or tot["ok"] < 100
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
