#!/usr/bin/env python3
"""Checks `scaleprof trace flops` on a known matmul workload (docs/flops.md, "Checking it on a GPU").

Runs `torch.mm` of N x N matrices in each dtype, times it with CUDA events (torch's own measurement:
2*N^3 FLOPs per call over the events' time), records the same loop with the profiler
(record_shapes=True, one ProfilerStep#N annotation per iteration), and prints scaleprof's TFLOP/s and MFU of the
aten::mm rows next to torch's. It fails (exit 1) when scaleprof's FLOPs are not exactly
iterations x 2*N^3 per dtype. Without CUDA it runs on the CPU (host times, no MFU unless
--peak-tflops), which is how it is tested off the GPU machine.

  python bench/flops_mfu_check.py --cli build/scaleprof [--n 8192] [--iters 50] [--dtypes bf16,fp16,fp32]
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, record_function

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def torch_tflops(a, b, iters, cuda):
    """torch's own measurement: the loop timed by CUDA events (wall clock on the CPU)."""
    for _ in range(3):
        torch.mm(a, b)
    if cuda:
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            torch.mm(a, b)
        end.record()
        torch.cuda.synchronize()
        seconds = start.elapsed_time(end) / 1e3
    else:
        t0 = time.perf_counter()
        for _ in range(iters):
            torch.mm(a, b)
        seconds = time.perf_counter() - t0
    n = a.shape[0]
    return iters * 2 * n**3 / seconds / 1e12


def record(pairs, iters, cuda, path):
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities, record_shapes=True) as prof:
        for i in range(iters):
            # The annotation prof.step() writes under a schedule, without the schedule's windows.
            with record_function(f"ProfilerStep#{i}"):
                for a, b in pairs.values():
                    torch.mm(a, b)
                if cuda:
                    torch.cuda.synchronize()
    prof.export_chrome_trace(str(path))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", default="build/scaleprof", help="the scaleprof binary")
    p.add_argument("--n", type=int, default=0, help="matrix size (default 8192 on CUDA, 256 on the CPU)")
    p.add_argument("--iters", type=int, default=0, help="matmuls per dtype (default 50 on CUDA, 5 on the CPU)")
    p.add_argument("--dtypes", default="", help="comma-separated: fp32, bf16, fp16 (default all on CUDA, fp32 on CPU)")
    p.add_argument("--peak-tflops", default="", help="passed to scaleprof (e.g. the TF32 peak)")
    p.add_argument("--out", default="", help="keep the trace in this folder")
    args = p.parse_args()

    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    n = args.n or (8192 if cuda else 256)
    iters = args.iters or (50 if cuda else 5)
    names = [d for d in (args.dtypes or ("bf16,fp16,fp32" if cuda else "fp32")).split(",") if d]
    torch.manual_seed(0)
    pairs = {d: (torch.randn(n, n, device=device, dtype=DTYPES[d]), torch.randn(n, n, device=device, dtype=DTYPES[d]))
             for d in names}
    measured = {d: torch_tflops(a, b, iters, cuda) for d, (a, b) in pairs.items()}

    folder = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="flops_mfu_"))
    folder.mkdir(parents=True, exist_ok=True)
    trace = folder / "matmul.pt.trace.json"
    record(pairs, iters, cuda, trace)
    cmd = [args.cli, "trace", "flops", str(trace), "--format", "json", "--top", "0", "-q"]
    if args.peak_tflops:
        cmd += ["--peak-tflops", args.peak_tflops]
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)

    rank = out["flops_ranks"][0]
    device_name = torch.cuda.get_device_name() if cuda else "CPU"
    print(f"device: {device_name} (trace: {rank['device']}, peak from: {rank['peak']}); N={n}, {iters} matmuls per dtype")
    print(f"{'dtype':6} {'FLOPs (scaleprof)':>18} {'expected':>18} {'torch TFLOP/s':>14} {'scaleprof TFLOP/s':>18} "
          f"{'scaleprof MFU %':>16} {'torch MFU %':>12}")
    ok = True
    mm_rows = {r["dtype"]: r for r in out["flops_operators"] if r["operator"] == "aten::mm"}
    for d in names:
        row = mm_rows.get(d)
        expected = iters * 2 * n**3
        if row is None:
            print(f"{d:6} no aten::mm row in scaleprof's output")
            ok = False
            continue
        ok &= row["flops"] == expected
        mfu = row["mfu_pct"]
        # torch's MFU against the same peak: scaleprof's MFU scaled by the ratio of the two rates.
        torch_mfu = mfu * measured[d] / row["tflops"] if mfu is not None and row["tflops"] else None
        print(f"{d:6} {row['flops']:>18,} {expected:>18,} {measured[d]:>14.4f} {row['tflops']:>18.4f} "
              f"{'-' if mfu is None else f'{mfu:.1f}':>16} {'-' if torch_mfu is None else f'{torch_mfu:.1f}':>12}")
    steps = out["flops_steps"]
    if steps:
        mfu = "-" if rank["mfu_pct"] is None else f"{rank['mfu_pct']:.2f} %"
        print(f"steps: {len(steps)}; rank MFU {mfu} over {rank['time_basis']} ({rank['tflops']:.4f} TFLOP/s of the "
              f"steps' wall time, each step synchronised)")
    print(f"trace: {trace}")
    if not ok:
        print("FAIL: scaleprof's FLOPs differ from iterations x 2*N^3", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
