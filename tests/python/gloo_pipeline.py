"""Pipeline-parallel training with torch.distributed.pipelining over gloo, the profiler on; one trace
per rank. Launched by the tests with
    python -m torch.distributed.run --nproc_per_node P ... gloo_pipeline.py --trace-dir DIR --runs gpipe:4,1f1b:8

One stage per rank (PipelineStage + ScheduleGPipe or Schedule1F1B), M micro-batches per step; several
runs one after the other in the same processes, each with its own traces. Each
stage's compute is a known time that does not depend on the machine's CPU count: a custom autograd
Function whose forward sleeps --fwd-ms and whose backward sleeps --bwd-ms per micro-batch, besides a
small real matmul, so that stages sharing two cores still take equal times (or, with a run's SLOW_RANK and
SLOW_MS, that rank takes SLOW_MS more in each forward and each backward). Real activation tensors and
their gradients go between the stages.

What torch 2.13 needs over gloo: explicit input_args/output_args (issue 33 found its shape inference
hanging without them; not tried again here), inputs of the later stages and outputs marked
requires_grad (without, the first stage got no gradient: "Output gradient: None"), and the loss
function given to the schedule on every rank, not only the last (without it the first stage never ran
its backward: the schedule runs the backward only where it has a loss function). The run fails unless every stage's weight got a non-zero gradient.

With --root the first run of --runs is instead a recorded scaleprof run (scaleprof.Run, experiment "pipeline",
strategy "pp-SCHEDULE-mM"): --epochs epochs of --steps steps timed, the first epoch's steps profiled into the
run's traces/, for the scalability report's "where scaling is lost".
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

HIDDEN = 32
ROWS_PER_MICRO_BATCH = 4


class TimedMatmul(torch.autograd.Function):
    """x @ w, its forward and backward each taking a known extra time (a sleep, not CPU)."""

    @staticmethod
    def forward(ctx, x, w, fwd_s, bwd_s):
        time.sleep(fwd_s)
        ctx.save_for_backward(x, w)
        ctx.bwd_s = bwd_s
        return x @ w

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        time.sleep(ctx.bwd_s)
        return grad @ w.t(), x.t() @ grad, None, None


class Stage(nn.Module):
    def __init__(self, fwd_s, bwd_s):
        super().__init__()
        self.w = nn.Parameter(torch.eye(HIDDEN) + 0.01 * torch.randn(HIDDEN, HIDDEN))
        self.fwd_s, self.bwd_s = fwd_s, bwd_s

    def forward(self, x):
        return TimedMatmul.apply(x, self.w, self.fwd_s, self.bwd_s)


def make_step(args, rank, world, schedule_name, m, slow_rank, slow_ms):
    """One stage's model and schedule; returns (the gradient norms seen so far, a function running one step)."""
    torch.manual_seed(rank)
    extra = slow_ms if rank == slow_rank else 0.0
    model = Stage((args.fwd_ms + extra) / 1000.0, (args.bwd_ms + extra) / 1000.0)
    shape = (ROWS_PER_MICRO_BATCH, HIDDEN)
    stage = PipelineStage(model, rank, world, torch.device("cpu"),
                          input_args=(torch.empty(shape, requires_grad=rank > 0),),
                          output_args=(torch.empty(shape, requires_grad=True),))

    def loss_fn(out, target):
        return ((out - target) ** 2).mean()

    schedule_class = ScheduleGPipe if schedule_name == "gpipe" else Schedule1F1B
    pipe = schedule_class(stage, n_microbatches=m, loss_fn=loss_fn)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(m * ROWS_PER_MICRO_BATCH, HIDDEN)
    target = torch.randn(m * ROWS_PER_MICRO_BATCH, HIDDEN)
    grad_norms = []

    def one_step():
        optimizer.zero_grad()
        if rank == 0:
            pipe.step(x)
        elif rank == world - 1:
            pipe.step(target=target)
        else:
            pipe.step()
        grad_norms.append(0.0 if model.w.grad is None else model.w.grad.norm().item())
        optimizer.step()

    return grad_norms, one_step


def check_gradients(rank, grad_norms, where):
    if min(grad_norms) <= 0.0:
        raise SystemExit(f"rank {rank}: the stage's backward did not run in {where} (gradient norms {grad_norms})")
    print(f"rank {rank}: {where}: gradient norms {grad_norms}", flush=True)


def run(args, rank, world, schedule_name, m, slow_rank, slow_ms, trace_dir):
    """One training run of --steps steps with its own model, stage and schedule; traces into trace_dir."""
    grad_norms, one_step = make_step(args, rank, world, schedule_name, m, slow_rank, slow_ms)
    # Step 0 is not profiled (the first transfers), step 1 warms up, the rest are recorded; the
    # analyses leave the last out.
    when = schedule(wait=1, warmup=1, active=args.steps - 2, repeat=1)
    with profile(activities=[ProfilerActivity.CPU], schedule=when,
                 on_trace_ready=tensorboard_trace_handler(trace_dir), record_shapes=True) as prof:
        for _ in range(args.steps):
            one_step()
            prof.step()
    dist.barrier()
    check_gradients(rank, grad_norms, trace_dir)


def recorded_run(args, rank, world, schedule_name, m, slow_rank, slow_ms):
    """The same training as a recorded scaleprof run: epochs and steps timed, the first epoch profiled (its
    first step warms up, the rest recorded; the analyses leave the last out)."""
    from recorded_training import record_epochs

    grad_norms, one_step = make_step(args, rank, world, schedule_name, m, slow_rank, slow_ms)
    record_epochs(args.root, "pipeline", f"pp-{schedule_name}-m{m}", args.epochs, args.steps, one_step,
                  record_shapes=True)
    dist.barrier()
    check_gradients(rank, grad_norms, args.root)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace-dir")
    parser.add_argument("--root", help="record the first of --runs as a scaleprof run under this root")
    parser.add_argument("--epochs", type=int, default=2)
    # Runs one after the other in the same processes (torch's import and the process group once):
    # SCHEDULE:M or SCHEDULE:M:SLOW_RANK:SLOW_MS, each into TRACE_DIR/SCHEDULE-mM[-slowR].
    parser.add_argument("--runs", default="gpipe:4")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--fwd-ms", type=float, default=20.0)
    parser.add_argument("--bwd-ms", type=float, default=20.0)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    for spec in args.runs.split(","):
        parts = spec.split(":")
        schedule_name, m = parts[0], int(parts[1])
        slow_rank, slow_ms = (int(parts[2]), float(parts[3])) if len(parts) == 4 else (-1, 0.0)
        if args.root:
            recorded_run(args, rank, world, schedule_name, m, slow_rank, slow_ms)
            break
        name = f"{schedule_name}-m{m}" + (f"-slow{slow_rank}" if slow_rank >= 0 else "")
        run(args, rank, world, schedule_name, m, slow_rank, slow_ms, os.path.join(args.trace_dir, name))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
