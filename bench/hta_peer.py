#!/usr/bin/env python3
"""The peer in the benchmark: Holistic Trace Analysis loading traces and running the five analyses
scaleprof's `trace summary` also runs (temporal breakdown, kernel breakdown, idle time, comm/comp
overlap, kernel launch statistics). Usage: hta_peer.py RANK=FILE [RANK=FILE ...]
Needs `pip install traceinsight==0.6.1` (HTA's PyPI name since 0.6.0); run by bench/compare_hta.sh, not by the tests."""
import logging
import sys
import warnings

warnings.filterwarnings("ignore")
from hta.trace_analysis import TraceAnalysis  # noqa: E402

logging.getLogger("hta").setLevel(logging.ERROR)


def main():
    files = {int(r): f for r, f in (s.split("=", 1) for s in sys.argv[1:])}
    ranks = sorted(files)
    a = TraceAnalysis(trace_files=files, trace_dir="")
    temporal = a.get_temporal_breakdown(visualize=False)
    kernel_types, _ = a.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
    idle, _ = a.get_idle_time_breakdown(ranks=ranks, visualize=False, show_idle_interval_stats=True)
    overlap = a.get_comm_comp_overlap(visualize=False)
    launches = a.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)
    rows = sum(len(d) for d in launches.values())
    print(f"ranks {len(ranks)}: {len(temporal)} temporal rows, {len(kernel_types)} kernel types, "
          f"{len(idle)} idle rows, {len(overlap)} overlap rows, {rows} launches")


if __name__ == "__main__":
    main()
