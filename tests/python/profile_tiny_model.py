"""Trains a tiny model under torch.profiler and writes what the scaleprof tests compare against.

Run by the pytest suite in a temporary directory (never imported):
    python profile_tiny_model.py --trace-dir DIR --torch-json FILE [--steps N] [--wait W --warmup U --active A]

Writes the gzip Kineto trace to DIR through tensorboard_trace_handler (the way users collect traces)
and, from the same profiler object, torch's own key_averages() rows to FILE (kept outside DIR so the
reader does not take it for a trace).
"""
import argparse
import json

import torch
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler


def key_average_rows(prof):
    rows = []
    for e in prof.key_averages():
        rows.append({
            "name": e.key,
            "count": e.count,
            "self_cpu_us": e.self_cpu_time_total,
            "cpu_total_us": e.cpu_time_total,
            "cpu_memory_bytes": e.cpu_memory_usage,
            "self_cpu_memory_bytes": e.self_cpu_memory_usage,
            "is_async": bool(e.is_async),
            "is_user_annotation": bool(e.is_user_annotation),
            "device_type": str(e.device_type),
            # CUDA runs only (--device cuda): torch's own device-time totals for the kernels.
            "self_device_us": getattr(e, "self_device_time_total", 0.0),
            "device_total_us": getattr(e, "device_time_total", 0.0),
        })
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace-dir", required=True)
    parser.add_argument("--torch-json", required=True)
    parser.add_argument("--steps", type=int, default=7)
    parser.add_argument("--wait", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--active", type=int, default=3)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                        help="cuda: the model on the GPU, CUDA activity profiled too (GPU machines)")
    args = parser.parse_args()
    device = torch.device(args.device)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if args.device == "cuda" else [])

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    saved = []

    def on_trace_ready(prof):
        tensorboard_trace_handler(args.trace_dir, use_gzip=True)(prof)
        saved.append({"step_num": prof.step_num, "key_averages": key_average_rows(prof)})

    with profile(activities=activities,
                 schedule=schedule(wait=args.wait, warmup=args.warmup, active=args.active, repeat=1),
                 on_trace_ready=on_trace_ready, record_shapes=True, profile_memory=True) as prof:
        for _ in range(args.steps):
            x, y = torch.randn(16, 32, device=device), torch.randn(16, 4, device=device)
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            prof.step()

    with open(args.torch_json, "w") as f:
        json.dump({"torch_version": torch.__version__, "traces": saved}, f)


if __name__ == "__main__":
    main()
