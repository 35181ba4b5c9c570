"""A small, real PyTorch CPU training loop under torch.profiler, for `make demo`.

    python examples/profile_demo.py --out DIR
    scaleprof trace summary DIR

Trains a little MLP classifier on synthetic data for a few steps with
schedule(wait=1, warmup=1, active=3): steps 2, 3 and 4 are recorded (ProfilerStep#2..#4) and written
as one gzip Kineto trace to DIR by tensorboard_trace_handler, the way users collect traces for
TensorBoard. Shapes and memory are recorded too, so `scaleprof trace ops` shows the memory columns.
"""
import argparse
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler

WAIT, WARMUP, ACTIVE = 1, 1, 3


def make_model():
    return torch.nn.Sequential(
        torch.nn.Linear(128, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 10),
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="directory for the trace (created if missing)")
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    # A fixed synthetic "dataset": 10 batches of random features with random labels.
    batches = [(torch.randn(args.batch, 128), torch.randint(0, 10, (args.batch,))) for _ in range(10)]

    os.makedirs(args.out, exist_ok=True)
    # Traces of earlier runs would be read as more ranks by `scaleprof trace summary DIR`.
    stale = [n for n in os.listdir(args.out) if n.endswith((".pt.trace.json", ".pt.trace.json.gz"))]
    for name in stale:
        os.remove(os.path.join(args.out, name))
    if stale:
        print(f"removed {len(stale)} trace(s) of an earlier run from {args.out}")
    before = set(os.listdir(args.out))
    steps = WAIT + WARMUP + ACTIVE + 1  # one more step so the last active step is closed and saved
    start = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(args.out, use_gzip=True),
                 record_shapes=True, profile_memory=True) as prof:
        for step in range(steps):
            x, y = batches[step % len(batches)]
            with record_function("forward"):
                loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            with record_function("backward"):
                loss.backward()
            optimizer.step()
            prof.step()
    elapsed = time.perf_counter() - start

    written = sorted(set(os.listdir(args.out)) - before)
    if not written:
        print(f"error: the profiler wrote no trace to {args.out}", file=sys.stderr)
        return 1
    print(f"trained {steps} steps in {elapsed:.2f} s (torch {torch.__version__}, final loss {loss.item():.4f})")
    print(f"profiled steps {WAIT + WARMUP}..{WAIT + WARMUP + ACTIVE - 1}; trace written to:")
    for name in written:
        print(f"  {os.path.join(os.path.abspath(args.out), name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
