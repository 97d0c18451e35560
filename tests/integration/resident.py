#!/usr/bin/env python3
"""resident.py FILE [FROM TO]: which of FILE's pages are in the page cache.

Prints "RESIDENT TOTAL FIRST" for the pages of bytes FROM..TO (default: the
whole file): pages cached, pages there, and the byte offset of the first
cached page (-1: none). Maps the file without touching it and asks
mincore(2), so the check itself caches nothing. (The kernel may evict a
page at any time, so a check should count on fewer cached, never on more.)
"""
import ctypes
import mmap
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]

fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
page = mmap.PAGESIZE
n = (size + page - 1) // page
if n == 0:
    print(0, 0, -1)
    sys.exit(0)
p = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
if p is None or p == ctypes.c_void_p(-1).value:
    sys.exit("resident.py: mmap %s: %s" % (sys.argv[1], os.strerror(ctypes.get_errno())))
vec = ctypes.create_string_buffer(n)
if libc.mincore(p, size, vec) != 0:
    sys.exit("resident.py: mincore %s: %s" % (sys.argv[1], os.strerror(ctypes.get_errno())))
res = [b & 1 for b in vec.raw[:n]]
libc.munmap(p, size)
lo, hi = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (0, size)
res = res[lo // page:(min(hi, size) + page - 1) // page]
first = res.index(1) if 1 in res else -1
print(sum(res), len(res), lo // page * page + first * page if first >= 0 else -1)
