#!/usr/bin/env python3
"""Writes the reproducers of issue 30's quadratic paths, to time with the CLI (docs/flops.md,
docs/analyses.md): each must finish in well under a second on one core.

  overlapping_steps.json: 40,000 ProfilerStep windows, each starting inside the one before, over
      host ops that launch kernels (the critical path and `decompose` scanned every window's events:
      O(steps x events)). Time: scaleprof trace critical-path / decompose / phases / memory FILE
  nested_ops.json: shaped cpu_ops nested thousands deep on one thread, a mm at the bottom (the FLOPs'
      walk over every call's ancestors: O(n^2)). Time: scaleprof trace flops FILE

Usage: gen_quadratic_traces.py OUT_DIR [--windows N] [--depth N]
"""
import argparse
import json
from pathlib import Path


def overlapping_steps(windows):
    events = []
    for i in range(windows):
        ts = i * 2
        # Each window lasts to the end of the trace: every later window starts inside it.
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}", "pid": 1, "tid": 1,
                       "ts": ts, "dur": windows * 2 + 100 - ts})
        if i % 10:
            continue  # host and device work every tenth window: 12,000 events under 40,000 windows
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": ts, "dur": 1,
                       "args": {"External id": i}})
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts,
                       "dur": 1, "args": {"correlation": i, "External id": i}})
        events.append({"ph": "X", "cat": "kernel", "name": "add_kernel", "pid": 0, "tid": 7, "ts": ts + 1, "dur": 1,
                       "args": {"correlation": i, "External id": i, "stream": 7, "device": 0}})
    return {"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}], "traceEvents": events}


def nested_ops(depth):
    events = []
    shape = {"Input Dims": [[4, 4], [4, 4]], "Input type": ["float", "float"]}
    for i in range(depth):
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": i,
                       "dur": 2 * (depth - i) + 10, "args": shape})
    events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": depth, "dur": 1,
                   "args": shape})
    return {"traceEvents": events}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--windows", type=int, default=40000)
    parser.add_argument("--depth", type=int, default=3000)
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, trace in (("overlapping_steps.json", overlapping_steps(args.windows)),
                        ("nested_ops.json", nested_ops(args.depth))):
        path = args.out_dir / name
        path.write_text(json.dumps(trace, separators=(",", ":")))
        print(f"{path}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
