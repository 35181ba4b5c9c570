#!/usr/bin/env python3
"""The trace reader on one trace in three JSON layouts (issue 18, finding 20): peak memory and the
gain of a second thread must not depend on how the JSON is laid out.

Writes the layouts with make_layout_traces.py (Kineto's own, one event per line, every value on its
own line as json.dump(indent=2) writes) into a temporary folder, then times
    scaleprof trace summary FILE [--only A] --format json -o /dev/null --threads T -q
for T = 1 and 2, RUNS times each, alternating the two so a change in the machine's load hits both.
Each run is a child process whose peak RSS and CPU times come from wait4's rusage. Prints one
Markdown table: JSON size, peak RSS (largest of the runs) and its ratio to the JSON with 1 and 2
threads, median wall time with 1 and 2 threads and their ratio, CPU time (user + system, min and
median). The traces are deleted afterwards (--keep keeps them).

--all-sets runs the three sets of events docs/benchmarks.md reports, each in its own subfolder of
the work folder: sampled_rank-0 (record_shapes, lists in args), df_index_resolver (GPU events)
and --simple (MTIA-like runtime calls and device events, few fields each).

Usage: layout_bench.py [--scaleprof BIN] [--src TRACE | --simple | --all-sets] [--bytes N] [--runs N]
                       [--dir D [--reuse]]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LAYOUTS = ("pytorch", "one_per_line", "indent2")


def run_once(cmd):
    """Wall seconds, peak RSS in bytes, user and system CPU seconds of one run of cmd."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed: {err.strip()}")
    return wall, usage.ru_maxrss * 1024, usage.ru_utime, usage.ru_stime


def main():
    root = os.path.dirname(HERE)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scaleprof", default=os.path.join(root, "build-bench", "scaleprof"))
    parser.add_argument("--src", default=os.path.join(root, "..", "shared", "traces", "hta", "trace_filter",
                                                      "sampled_rank-0.json.gz"),
                        help="events to repeat (default: a trace recorded with record_shapes, lists in its args)")
    parser.add_argument("--simple", action="store_true", help="synthetic events with few fields instead of SRC's")
    parser.add_argument("--all-sets", action="store_true", help="sampled_rank-0, df_index_resolver and --simple, "
                                                                 "one after the other")
    parser.add_argument("--bytes", type=int, default=400_000_000, help="about this many bytes of JSON (Kineto layout)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", help="pass --only to trace summary (breakdown: the reader and its cheapest "
                                       "analysis, as bench/compare_hta.sh times the reader)")
    parser.add_argument("--dir", help="write the traces here (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the traces")
    parser.add_argument("--reuse", action="store_true", help="with --dir: use the traces already there")
    args = parser.parse_args()
    if not os.access(args.scaleprof, os.X_OK):
        sys.exit(f"{args.scaleprof}: not built (cmake --build build-bench --target scaleprof)")

    folder = args.dir or tempfile.mkdtemp(prefix="scaleprof-layouts-")
    traces = os.path.join(root, "..", "shared", "traces", "hta")
    if args.all_sets:
        sets = [("sampled_rank-0", os.path.join(traces, "trace_filter", "sampled_rank-0.json.gz")),
                ("df_index_resolver", os.path.join(traces, "df_index_resolver", "df_index_resolver.json.gz")),
                ("simple", None)]
    else:
        sets = [("simple" if args.simple else os.path.basename(args.src).split(".")[0], None if args.simple
                 else args.src)]
    try:
        print(f"command: scaleprof trace summary FILE{' --only ' + args.only if args.only else ''} --format json "
              f"-o /dev/null --threads T -q")
        print(f"scaleprof: {args.scaleprof}; {args.runs} runs per cell, 1 and 2 threads alternating; load average "
              f"before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print()
        print("| events | layout | JSON MB | peak RSS MB (1 / 2 threads) | RSS / JSON (1 / 2 threads) | "
              "wall s, 1 / 2 threads (median) | 1 / 2 threads | CPU s, 1 thread (min / median) | "
              "CPU s, 2 threads (min / median) |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for name, src in sets:
            sub = os.path.join(folder, name) if args.all_sets else folder
            make = [sys.executable, os.path.join(HERE, "make_layout_traces.py"), "--bytes", str(args.bytes), sub]
            make += ["--src", src] if src else ["--simple"]
            if not (args.reuse and all(os.path.exists(os.path.join(sub, n + ".json")) for n in LAYOUTS)):
                subprocess.run(make, check=True, stdout=subprocess.DEVNULL)
            for layout in LAYOUTS:
                print(bench_layout(args, name, layout, os.path.join(sub, layout + ".json")), flush=True)
        print()
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(folder, ignore_errors=True)


def bench_layout(args, name, layout, path):
    """One table row: `runs` runs of 1 and 2 threads, alternating, on one file."""
    json_bytes = os.path.getsize(path)
    runs = {1: [], 2: []}
    for _ in range(args.runs):
        for threads in (1, 2):
            cmd = [args.scaleprof, "trace", "summary", path, "--format", "json", "-o", "/dev/null",
                   "--threads", str(threads), "-q"] + (["--only", args.only] if args.only else [])
            runs[threads].append(run_once(cmd))
    wall = {t: statistics.median(r[0] for r in runs[t]) for t in runs}
    rss = {t: max(r[1] for r in runs[t]) for t in runs}
    cpu = {t: [r[2] + r[3] for r in runs[t]] for t in runs}
    return (f"| {name} | {layout} | {json_bytes / 1e6:.0f} | {rss[1] / 1e6:.0f} / {rss[2] / 1e6:.0f} | "
            f"{rss[1] / json_bytes:.2f} / {rss[2] / json_bytes:.2f} | {wall[1]:.2f} / {wall[2]:.2f} | "
            f"{wall[1] / wall[2]:.2f} | {min(cpu[1]):.2f} / {statistics.median(cpu[1]):.2f} | "
            f"{min(cpu[2]):.2f} / {statistics.median(cpu[2]):.2f} |")


if __name__ == "__main__":
    main()
