#!/usr/bin/env python3
"""CPU time of `scaleprof trace diff A B` against reading one trace (issue 20), for builds side by side.

bench/trace_diff.sh times wall clock, which on a shared machine follows the other processes more than
scaleprof; CPU time (user + system of each process, from getrusage(RUSAGE_CHILDREN)) does not. Each
run is `trace steps -q` (read one) and `trace diff -q A B` (B: a copy of A) per binary, the binaries
alternating, RUNS times; prints min and median per binary and their ratio.

    python3 bench/trace_diff_cpu.py BIN [BIN...]   (RUNS=7 THREADS=2 TRACE=... in the environment)
"""

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TRACE = os.environ.get("TRACE", "../shared/traces/hta/df_index_resolver/df_index_resolver.json.gz")
RUNS = int(os.environ.get("RUNS", "7"))
THREADS = os.environ.get("THREADS", "2")


def run(args):
    """Wall and CPU seconds of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    binaries = sys.argv[1:]
    if not binaries or not os.path.exists(TRACE):
        sys.exit(__doc__ if not binaries else f"bench: {TRACE} not found (the shared traces are needed)")
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "copy.json.gz" if TRACE.endswith(".gz") else "copy.json")
        shutil.copy(TRACE, copy)
        times = {}
        print("load average before:", " ".join(open("/proc/loadavg").read().split()[:3]))
        for _ in range(RUNS):
            for b in binaries:
                for work, extra in (("read one", []), ("diff", [copy])):
                    cmd = "steps" if work == "read one" else "diff"
                    wall, cpu = run([b, "trace", cmd, "-q", "--threads", THREADS, TRACE] + extra)
                    times.setdefault((b, work), ([], []))
                    times[(b, work)][0].append(wall)
                    times[(b, work)][1].append(cpu)
        print("load average after:", " ".join(open("/proc/loadavg").read().split()[:3]))
    med = statistics.median
    print(f"| binary (--threads {THREADS}) | read one CPU, min / median | diff CPU, min / median | diff / read one |")
    print("| --- | ---: | ---: | ---: |")
    for b in binaries:
        read, diff = times[(b, "read one")][1], times[(b, "diff")][1]
        print(f"| {b} | {min(read) * 1e3:.0f} / {med(read) * 1e3:.0f} ms | {min(diff) * 1e3:.0f} / "
              f"{med(diff) * 1e3:.0f} ms | {med(diff) / med(read):.2f}x |")


if __name__ == "__main__":
    main()
