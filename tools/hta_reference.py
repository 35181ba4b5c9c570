#!/usr/bin/env python3
"""Holistic Trace Analysis' own results on a set of traces, as the JSON that tests/hta_reference_test.cc
compares scaleprof's analyses with (the layout of ../shared/traces/hta-reference/*.json).

    hta_reference.py --name CASE --base DIR RANK=FILE [RANK=FILE ...] > CASE.json

FILE is relative to DIR, and is written so into `files`. Needs HTA (`pip install traceinsight==0.6.1`,
its PyPI name); `make` keeps one in .cache/venv-traceinsight for the benchmarks. Each key holds one
analysis with HTA's own column names: temporal breakdown, comm/comp overlap, kernel breakdown (both
frames), idle time breakdown with interval statistics, kernel launch statistics (row count, sums and
the first 5 rows), and the events HTA keeps per rank after loading. HTA's numbers can move with the
pandas version (its groupby and rounding): the versions are recorded in `versions`.
"""
import argparse
import gzip
import importlib.metadata
import json
import logging
import math
import os
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore")
from hta.trace_analysis import TraceAnalysis  # noqa: E402

logging.getLogger("hta").setLevel(logging.ERROR)


def plain(value):
    """A JSON value for one DataFrame cell (numpy scalars, NaN as null)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def rows(frame):
    return [{k: plain(v) for k, v in r.items()} for r in frame.reset_index().to_dict(orient="records")]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--name", required=True)
    p.add_argument("--base", required=True, help="folder the trace paths are relative to")
    p.add_argument("--drop-category", action="append", default=[], metavar="CAT",
                   help="give HTA a copy of each trace without the events of this category (repeatable); "
                        "`files` still names the originals")
    p.add_argument("files", nargs="+", metavar="RANK=FILE")
    args = p.parse_args()
    files = {int(r): f for r, f in (s.split("=", 1) for s in args.files)}
    ranks = sorted(files)
    paths = {r: os.path.join(args.base, f) for r, f in files.items()}
    with tempfile.TemporaryDirectory() as tmp:
        if args.drop_category:
            paths = {r: without_categories(p, set(args.drop_category), tmp) for r, p in paths.items()}
        out = analyse(args, files, ranks, paths)
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


def without_categories(path, categories, folder):
    """A copy of the trace at path, gzip JSON in folder, without the events of these categories."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") not in categories]
    copy = os.path.join(folder, os.path.basename(path))
    with gzip.open(copy if copy.endswith(".gz") else copy + ".gz", "wt") as f:
        json.dump(doc, f)
    return copy if copy.endswith(".gz") else copy + ".gz"


def analyse(args, files, ranks, paths):
    a = TraceAnalysis(trace_files=paths, trace_dir="")
    kernel_types, kernel_top = a.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
    idle, interval_stats = a.get_idle_time_breakdown(ranks=ranks, visualize=False, show_idle_interval_stats=True)
    launches = a.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)
    launch_stats = {}
    for r, frame in sorted(launches.items()):
        launch_stats[str(r)] = {
            "rows": len(frame),
            "sum_cpu_duration": plain(frame["cpu_duration"].sum()),
            "sum_gpu_duration": plain(frame["gpu_duration"].sum()),
            "sum_launch_delay": plain(frame["launch_delay"].sum()),
            "head": rows(frame[["correlation", "cpu_duration", "gpu_duration", "launch_delay"]].head(5)),
        }
    return {
        "name": args.name,
        "files": {str(r): files[r] for r in ranks},
        "versions": {pkg: importlib.metadata.version(pkg) for pkg in ("traceinsight", "pandas", "numpy")},
        "events_after_filter": {str(r): len(a.t.get_trace(r)) for r in ranks},
        "temporal_breakdown": rows(a.get_temporal_breakdown(visualize=False)),
        "comm_comp_overlap": rows(a.get_comm_comp_overlap(visualize=False)),
        "gpu_kernel_breakdown": {"kernel_type": rows(kernel_types), "kernel_top": rows(kernel_top)},
        "idle_time_breakdown": {"idle": rows(idle), "interval_stats": rows(interval_stats)},
        "cuda_kernel_launch_stats": launch_stats,
        "dropped_categories": sorted(args.drop_category),
    }


if __name__ == "__main__":
    main()
