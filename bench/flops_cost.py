#!/usr/bin/env python3
"""What `scaleprof trace flops` adds to reading a trace (issue 23's speed target: at most 50 % of the
time of reading it), and `trace summary`'s cost with and without its FLOPs line (docs/benchmarks.md).

  python3 bench/flops_cost.py build/scaleprof TRACE... [--runs 10]

Each command runs --runs times with --threads 1; printed: the minimum wall time, the minimum
user + system time (getrusage of the child) and the peak RSS of all its runs."""
import argparse
import resource
import subprocess
import tempfile
import time

ALL_BUT_FLOPS = "breakdown,kernels,idle,overlap,launch,ops,steps,collectives,stragglers"


def measure(cmd, runs):
    """Peak RSS from /usr/bin/time -f %M: getrusage's ru_maxrss of the children only ever grows."""
    wall = cpu = float("inf")
    rss = 0
    with tempfile.NamedTemporaryFile(mode="r") as rss_file:
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file.name, *cmd], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=True)
            wall = min(wall, time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = min(cpu, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            rss_file.seek(0)
            rss = max(rss, int(rss_file.read().split()[-1]))
    return wall, cpu, rss


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("cli")
    p.add_argument("traces", nargs="+")
    p.add_argument("--runs", type=int, default=10)
    args = p.parse_args()
    for trace in args.traces:
        for label, sub in (("steps (reading)", ["steps"]), ("flops", ["flops"]),
                           ("summary without flops", ["summary", "--only", ALL_BUT_FLOPS]), ("summary", ["summary"])):
            wall, cpu, rss = measure([args.cli, "trace", *sub, "--threads", "1", "-q", trace], args.runs)
            print(f"{trace.split('/')[-1]:40} {label:22} wall {wall:.3f} s  cpu {cpu:.3f} s  peak RSS {rss / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
