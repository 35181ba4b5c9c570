"""DDP over gloo with a slow data loader, for the phases and step-decomposition tests. Launched as
    python -m torch.distributed.run --nproc_per_node N ... ddp_phases_model.py --trace-dir DIR [--data-sleep-ms MS]

Each step takes one batch from a DataLoader (num_workers=0, so the loading runs inside the step on
the training thread) whose dataset sleeps --data-sleep-ms per batch: that much data loading per step
is what the test expects to find in the `data_loading` part of every rank's steps. --straggler-rank
sleeps --straggler-ms after its forward pass, outside every operator: the other ranks wait that long
at the gradient all-reduce.
"""
import argparse
import gc
import json
import time

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
from torch.utils.data import DataLoader, Dataset


class SlowDataset(Dataset):
    def __init__(self, batch, sleep_s):
        self.batch, self.sleep_s = batch, sleep_s

    def __len__(self):
        return 64 * self.batch

    def __getitem__(self, i):
        # The whole batch's sleep on its first item, so a batch costs one known sleep.
        if i % self.batch == 0:
            time.sleep(self.sleep_s)
        return torch.randn(32), torch.randn(4)


def measured_lag_us(arrival_log, rank, before):
    """Step -> how much later `rank` reached the step's gradient all-reduce than rank `before` (µs), from the
    files --arrival-log ARRIVAL_LOG wrote."""
    def arrived(r):
        with open(f"{arrival_log}.rank{r}.json") as f:
            return {int(step): ns for step, ns in json.load(f).items()}
    late, early = arrived(rank), arrived(before)
    return {step: (late[step] - early[step]) / 1e3 for step in early}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace-dir", required=True)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--data-sleep-ms", type=float, default=30.0)
    parser.add_argument("--straggler-rank", type=int, default=-1)
    parser.add_argument("--straggler-ms", type=float, default=0.0)
    parser.add_argument("--arrival-log", help="write each rank's arrival at its step's gradient all-reduce here "
                        "(ARRIVAL_LOG.rankN.json, {step: ns} of CLOCK_MONOTONIC, which every process of a host shares)")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.parallel.DistributedDataParallel(
        torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.ReLU(), torch.nn.Linear(256, 4)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    # The arrival, independent of the profiler: DDP's communication hook runs when the gradient bucket is
    # ready, right before the all-reduce (one bucket: the model is small), and the default hook then does
    # what DDP does without one.
    arrived_ns, current = {}, {"step": -1}

    def timed_allreduce(process_group, bucket):
        arrived_ns.setdefault(current["step"], time.monotonic_ns())
        return default_hooks.allreduce_hook(process_group, bucket)

    if args.arrival_log:
        model.register_comm_hook(None, timed_allreduce)
    batch = 16
    loader = DataLoader(SlowDataset(batch, args.data_sleep_ms / 1e3), batch_size=batch, num_workers=0)
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(args.trace_dir, use_gzip=True)) as prof:
        for step, (x, y) in enumerate(loader):
            if step == args.steps:
                break
            current["step"] = step
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            if dist.get_rank() == args.straggler_rank:
                time.sleep(args.straggler_ms / 1e3)  # late at the gradient all-reduce: the others wait
            loss.backward()
            optimizer.step()
            prof.step()
    if args.arrival_log:
        with open(f"{args.arrival_log}.rank{dist.get_rank()}.json", "w") as f:
            json.dump(arrived_ns, f)
    # The same orderly end as ddp_tiny_model.py: a DDP model alive at exit can abort the interpreter's finalisation.
    dist.barrier()
    model = optimizer = prof = None
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
