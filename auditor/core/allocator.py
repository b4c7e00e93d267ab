"""Keep freed memory inside the process for the length of an audit (glibc only).

An audit allocates and frees many short-lived arrays of hundreds of MB (hashes, ranks, n-gram
windows). glibc serves each of them with a fresh ``mmap`` and returns it on ``free``, so every
new array page-faults its memory in again. On bare metal that costs ~0.1 s per GB; on virtual
machines whose memory the host backs lazily and reclaims when the guest frees it (Firecracker
and other micro-VMs, memory ballooning) it costs ~2.5 s per GB, and
``bench/tokens_bench.py`` spent a quarter of its wall time in the kernel. With ``mmap`` off for
heap allocations and trimming off, freed blocks go back to malloc's free lists and the next
array reuses pages that are already mapped: tokens.contamination at 1M documents went from
43.6 s to 32.9 s, with 8% more peak RSS (the heap keeps its high-water mark until exit).

Tried and left out: populating the expected working set up front (``madvise`` with
MADV_POPULATE_WRITE faults 2 GB in 0.8 s instead of 3.9 s) won 4% at 10M rows but raised the
peak RSS from 14.6 to 19.3 GB, because polars allocates through its own jemalloc and never
uses the populated glibc heap.

``tune_for_batch()`` is called by the command line only: a batch process that exits after the
audit. The Python API leaves the host program's allocator alone. Set ``AUDITOR_MALLOC=system``
to turn it off.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4


def tune_for_batch() -> bool:
    """Ask glibc to serve large blocks from the heap and never trim it; True when applied."""
    if os.environ.get("AUDITOR_MALLOC", "").lower() == "system" or not sys.platform.startswith(
            "linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and other libcs have no mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    ok = mallopt(M_MMAP_MAX, 0) == 1
    ok &= mallopt(M_TRIM_THRESHOLD, -1) == 1  # -1: never trim (mallopt(3))
    return bool(ok)

