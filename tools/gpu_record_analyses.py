#!/usr/bin/env python3
"""Records what issue 23's analyses need from a real device, with torch's own answers beside it:

  transformer.pt.trace.json  a transformer block's forward and backward, 4 ProfilerSteps, with
                             record_shapes, profile_memory and with_stack off (what users record)
  matmul.pt.trace.json       N products of two SIZE x SIZE bf16 matrices (fp32 on CPU), one step each
  torch.json                 FlopCounterMode's FLOPs per step of each workload (by aten op), the
                             matmuls' time from CUDA events (TFLOP/s achieved), key_averages() of the
                             transformer with its memory columns, torch.cuda.max_memory_allocated()
                             per step, and the device's name

On a GPU machine (tools/gpu_check.sh runs it there) and, for a test of the script itself, on CPU:

    python3 tools/gpu_record_analyses.py OUT_DIR [--size 8192] [--products 20]
"""
import argparse
import json
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, schedule
from torch.utils.flop_counter import FlopCounterMode


def flops_by_op(fn):
    """FlopCounterMode's count of one call of fn: total and per aten op."""
    counter = FlopCounterMode(display=False)
    with counter:
        fn()
    per_op = {}
    for module_counts in counter.get_flop_counts().values():
        for op, n in module_counts.items():
            per_op[str(op)] = max(per_op.get(str(op), 0), int(n))  # the Global entry holds every op once
    return {"total": int(counter.get_total_flops()), "by_op": per_op}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--products", type=int, default=20)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    result = {"device": torch.cuda.get_device_name(0) if cuda else "cpu", "torch": torch.__version__}

    # The transformer block: batch 8, sequence 512, width 1024, 16 heads (fp32: FlopCounterMode and the
    # trace's shapes both see the same aten ops).
    torch.manual_seed(0)
    # On CPU (a test of this script) a quarter of the width and sequence.
    width, seq = (1024, 512) if cuda else (256, 128)
    block = torch.nn.TransformerEncoderLayer(d_model=width, nhead=16, dim_feedforward=4 * width, batch_first=True,
                                             dropout=0.0).to(device)
    x = torch.randn(8, seq, width, device=device)
    opt = torch.optim.SGD(block.parameters(), lr=1e-3)

    def train_step():
        opt.zero_grad(set_to_none=True)
        block(x).float().pow(2).mean().backward()
        opt.step()

    for _ in range(2):
        train_step()  # warm-up: cuBLAS handles and allocator pools exist before the profile
    sync()
    result["transformer_flops_per_step"] = flops_by_op(train_step)
    sync()
    steps_peak = []
    # The trace is written when the schedule's cycle ends (on_trace_ready): at the end of a cycle the
    # profiler clears its events, so exporting after the block would write an empty trace.
    transformer_trace = str(args.out / "transformer.pt.trace.json")
    with profile(activities=activities, record_shapes=True, profile_memory=True,
                 schedule=schedule(wait=0, warmup=1, active=4, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(transformer_trace)) as prof:
        for _ in range(5):
            if cuda:
                torch.cuda.reset_peak_memory_stats()
            train_step()
            sync()
            steps_peak.append(torch.cuda.max_memory_allocated() if cuda else None)
            prof.step()
    result["transformer_max_memory_allocated_per_step"] = steps_peak[1:]
    rows = []
    for e in prof.key_averages():
        rows.append({"name": e.key, "count": e.count, "cpu_memory_usage": e.cpu_memory_usage,
                     "self_cpu_memory_usage": e.self_cpu_memory_usage,
                     "device_memory_usage": getattr(e, "device_memory_usage", 0),
                     "self_device_memory_usage": getattr(e, "self_device_memory_usage", 0),
                     "flops": e.flops, "self_cpu_time_total_us": e.self_cpu_time_total,
                     "device_time_total_us": getattr(e, "device_time_total", 0)})
    result["transformer_key_averages"] = rows

    # The matmuls: one product per step, timed by CUDA events (or the wall clock on CPU) outside the profile.
    n = args.size if cuda else min(args.size, 1024)
    dtype = torch.bfloat16 if cuda else torch.float32
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn_like(a)
    for _ in range(3):
        a @ b
    sync()
    result["matmul"] = {"n": n, "dtype": str(dtype), "products": args.products,
                        "flops_per_product": flops_by_op(lambda: a @ b)["total"]}
    if cuda:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.products):
            a @ b
        end.record()
        sync()
        seconds = start.elapsed_time(end) / 1e3
    else:
        t0 = time.perf_counter()
        for _ in range(args.products):
            a @ b
        seconds = time.perf_counter() - t0
    result["matmul"]["seconds_unprofiled"] = seconds
    result["matmul"]["tflops_unprofiled"] = result["matmul"]["flops_per_product"] * args.products / seconds / 1e12
    matmul_trace = str(args.out / "matmul.pt.trace.json")
    with profile(activities=activities, record_shapes=True,
                 schedule=schedule(wait=0, warmup=1, active=args.products, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(matmul_trace)) as prof:
        for _ in range(args.products + 1):
            a @ b
            sync()
            prof.step()
    (args.out / "torch.json").write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "transformer_key_averages"}, indent=1)[:3000])


if __name__ == "__main__":
    main()
