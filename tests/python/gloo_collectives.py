"""Known collectives over gloo with the profiler on; one trace per rank. Launched by the tests with
    python -m torch.distributed.run --nproc_per_node N ... gloo_collectives.py --trace-dir DIR

Every step all-reduces float32 tensors of the sizes given in --sizes (elements), then all-gathers and
broadcasts the first one. With --sleep-rank R --sleep-ms S, rank R sleeps S ms before every collective,
so it arrives last at each one by about S ms: a straggler of known lag. With --late-rank R, rank R's
profiler window starts one step later than the others' (its schedule waits one step): every rank
runs one more step, the others record steps 1 to STEPS-1 and rank R steps 2 to STEPS.
"""
import argparse
import time

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace-dir", required=True)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--sizes", default="1024,262144")
    parser.add_argument("--sleep-rank", type=int, default=-1)
    parser.add_argument("--sleep-ms", type=float, default=0.0)
    parser.add_argument("--late-rank", type=int, default=-1)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    sizes = [int(s) for s in args.sizes.split(",")]
    tensors = [torch.ones(n, dtype=torch.float32) for n in sizes]
    gathered = [torch.empty(sizes[0], dtype=torch.float32) for _ in range(world)]

    def before_collective():
        if rank == args.sleep_rank:
            time.sleep(args.sleep_ms / 1000.0)

    steps = args.steps
    when = schedule(wait=0, warmup=1, active=args.steps - 1)
    if args.late_rank >= 0:
        steps += 1  # room for the late rank's window; repeat=1: the others record one window only
        when = schedule(wait=1 if rank == args.late_rank else 0, warmup=1, active=args.steps - 1, repeat=1)
    with profile(activities=[ProfilerActivity.CPU], schedule=when,
                 on_trace_ready=tensorboard_trace_handler(args.trace_dir), record_shapes=True) as prof:
        for _ in range(steps):
            for t in tensors:
                before_collective()
                dist.all_reduce(t)
            before_collective()
            dist.all_gather(gathered, tensors[0])
            before_collective()
            dist.broadcast(tensors[0], src=0)
            prof.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
