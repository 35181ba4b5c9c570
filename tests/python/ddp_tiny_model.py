"""DDP over gloo on a tiny model with the profiler on; one trace per rank. Launched by the tests with
    python -m torch.distributed.run --nproc_per_node 2 ... ddp_tiny_model.py --trace-dir DIR --torch-dir DIR2

Trace files keep tensorboard_trace_handler's default "<host>_<pid>" worker name, so the reader must
take each rank from the trace's distributedInfo, not from the file name. DIR2 receives, per rank,
rank<R>.json with the pid and torch's key_averages() rows.
"""
import argparse
import gc
import json
import os

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace-dir", required=True)
    parser.add_argument("--torch-dir", required=True)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.parallel.DistributedDataParallel(
        torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    saved = []

    def on_trace_ready(prof):
        tensorboard_trace_handler(args.trace_dir, use_gzip=True)(prof)
        saved.append([{"name": e.key, "count": e.count, "self_cpu_us": e.self_cpu_time_total,
                       "cpu_total_us": e.cpu_time_total, "is_async": bool(e.is_async)}
                      for e in prof.key_averages()])

    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=on_trace_ready, record_shapes=True) as prof:
        for _ in range(args.steps):
            x, y = torch.randn(16, 32), torch.randn(16, 4)
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()  # DDP all-reduces the gradients here
            optimizer.step()
            # One explicit collective per step, so the expected call counts do not depend on DDP's buckets.
            dist.all_reduce(loss.detach().clone())
            prof.step()

    with open(os.path.join(args.torch_dir, f"rank{rank}.json"), "w") as f:
        json.dump({"rank": rank, "pid": os.getpid(), "world_size": dist.get_world_size(),
                   "key_averages": saved}, f)
    # With the DDP model alive at exit the process group outlives destroy_process_group(), and one of its
    # pt_gloo_runloop threads can ask for the GIL while the interpreter finalises, which aborts the process
    # ("terminate called without an active exception", 1 run in 7 on 2 cores). So every collective ends, the
    # objects that hold the group are freed, and only then is the group destroyed.
    dist.barrier()
    model = optimizer = prof = None
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
