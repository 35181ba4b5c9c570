#!/usr/bin/env python3
"""CPU time and peak RSS of several scaleprof builds on the same traces, runs alternating between
the builds so a change in the machine's load hits each alike (issue 18: the reader's memory work
must not cost CPU time). For each file and for 1 and 2 threads, runs
    BIN trace summary FILE --format json -o /dev/null --threads T -q
RUNS times per build and prints user + system CPU seconds (min and median, from wait4's rusage)
and the largest peak RSS.

Usage: reader_cpu_compare.py BIN[,BIN...] FILE[,FILE...] RUNS
"""
import os
import statistics
import subprocess
import sys


def once(binary, path, threads):
    proc = subprocess.Popen([binary, "trace", "summary", path, "--format", "json", "-o", "/dev/null", "--threads",
                             str(threads), "-q"])
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{binary} failed on {path}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binaries, files, runs = sys.argv[1].split(","), sys.argv[2].split(","), int(sys.argv[3])
    for path in files:
        for threads in (1, 2):
            results = {b: [] for b in binaries}
            for _ in range(runs):
                for b in binaries:
                    results[b].append(once(b, path, threads))
            for b in binaries:
                cpu = [r[0] for r in results[b]]
                print(f"{path} threads {threads} {b}: CPU s min {min(cpu):.3f} median {statistics.median(cpu):.3f}, "
                      f"peak RSS {max(r[1] for r in results[b]) / 1e6:.1f} MB", flush=True)


if __name__ == "__main__":
    main()
