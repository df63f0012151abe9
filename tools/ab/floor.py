#!/usr/bin/env python3
"""Measures the floor under a write of a large workbook on this host: what
replacing a file of a given size costs when nothing at all is computed,
only the bytes written the way sheetd writes them (a temp file beside the
target, 256 KiB at a time, fsync, rename over the old file, whose bytes a
hard link keeps alive as `--keep-versions` does, so the rename frees
nothing).

    python3 tools/ab/floor.py --dir target/floor --mb 64 --rounds 8

Each way of writing is timed over `--rounds` replacements (the first is
left out), and its median printed with the CPU the process spent:

- `buffered`: plain writes into the page cache, then fsync.
- `buffered+dontneed`: the same, each block followed by
  `posix_fadvise(DONTNEED)`, which starts its writeback at once (what
  sheetd does: the fsync then waits for the last blocks only).
- `direct`: `O_DIRECT` writes from aligned memory, past the page cache.
- `two-threads`: buffered+dontneed, the two halves of the file written at
  once by two threads (`pwrite`).

Compare the medians with a one-row write's latency at 1k rows
(`tools/ab/alternate.py`) to see how far above it a file of this size
must stand, whatever the writer saves.
"""

import argparse
import mmap
import os
import statistics
import threading
import time

BLOCK = 256 * 1024


def write_range(fd, data, start, end, dontneed):
    view = memoryview(data)
    for at in range(start, end, BLOCK):
        os.pwrite(fd, view[at : min(at + BLOCK, end)], at)
        if dontneed:
            os.posix_fadvise(fd, at, min(BLOCK, end - at), os.POSIX_FADV_DONTNEED)


def replace(directory, data, way):
    target = os.path.join(directory, "workbook.xlsx")
    temp = os.path.join(directory, ".floor-temp.xlsx")
    flags = os.O_CREAT | os.O_TRUNC | os.O_WRONLY
    if way == "direct":
        flags |= os.O_DIRECT
    fd = os.open(temp, flags, 0o644)
    try:
        if way == "two-threads":
            half = len(data) // 2 // BLOCK * BLOCK
            other = threading.Thread(target=write_range, args=(fd, data, half, len(data), True))
            other.start()
            write_range(fd, data, 0, half, True)
            other.join()
        else:
            write_range(fd, data, 0, len(data), way == "buffered+dontneed")
        os.fsync(fd)
    finally:
        os.close(fd)
    # The old version stays linked, as sheetd's kept versions do; the one
    # before it is unlinked outside the time taken (sheetd's discarding
    # thread does that).
    if os.path.exists(target):
        os.link(target, os.path.join(directory, "kept.xlsx"))
    os.rename(temp, target)
    dir_fd = os.open(directory, os.O_RDONLY)
    os.fsync(dir_fd)
    os.close(dir_fd)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", required=True, help="a directory on the data directory's file system")
    parser.add_argument("--mb", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    size = args.mb * 1024 * 1024
    # Page-aligned memory (O_DIRECT asks for it), filled with bytes that
    # do not repeat in whole pages.
    data = mmap.mmap(-1, size)
    data.write(os.urandom(size))
    for way in ("buffered", "buffered+dontneed", "direct", "two-threads"):
        walls, cpus = [], []
        for _ in range(args.rounds):
            cpu, wall = time.process_time(), time.perf_counter()
            replace(args.dir, data, way)
            walls.append((time.perf_counter() - wall) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
            kept = os.path.join(args.dir, "kept.xlsx")
            if os.path.exists(kept):
                os.unlink(kept)
        walls, cpus = walls[1:], cpus[1:]
        print(f"{way:>18}: {statistics.median(walls):6.1f} ms wall, {statistics.median(cpus):6.1f} ms CPU")
    for name in ("workbook.xlsx", "kept.xlsx"):
        path = os.path.join(args.dir, name)
        if os.path.exists(path):
            os.unlink(path)


if __name__ == "__main__":
    main()
