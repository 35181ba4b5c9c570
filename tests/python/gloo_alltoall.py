"""all_to_all_single over gloo with known split sizes, profiled; one trace per rank. Launched by the tests with
    python -m torch.distributed.run --nproc_per_node N ... gloo_alltoall.py --trace-dir DIR --mode uneven

The bytes rank i sends rank j are elements[i][j] float32 elements (consistent on every rank: rank j's output
splits are column j). --mode uneven: every rank sends --small elements to each rank (itself included), except
rank 0, which sends --big elements to rank 1. --mode even: the same bytes between distinct ranks spread evenly
over the pairs (the counterfactual with no imbalance), the sends to self unchanged. Each step's call runs
inside record_function("moe_layer"), after a barrier so that no rank's lateness is counted as transfer.

With --root the same loop is a recorded scaleprof run (scaleprof.Run: epochs and steps timed, the first epoch's
steps profiled into the run's traces/), for the scalability report's "where scaling is lost".
"""
import argparse

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler


def split_matrix(mode, world, big, small):
    m = [[small] * world for _ in range(world)]
    m[0][1] = big
    if mode == "even":
        pairs = world * (world - 1)
        total = sum(m[i][j] for i in range(world) for j in range(world) if i != j)
        assert total % pairs == 0, "choose sizes whose peer total divides evenly"
        m = [[small if i == j else total // pairs for j in range(world)] for i in range(world)]
    return m


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace-dir")
    parser.add_argument("--root", help="record a scaleprof run under this root instead of writing to --trace-dir")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--mode", choices=["uneven", "even"], required=True)
    parser.add_argument("--steps", type=int, default=7)
    parser.add_argument("--big", type=int, default=8_000_000)
    parser.add_argument("--small", type=int, default=1000)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    m = split_matrix(args.mode, world, args.big, args.small)
    in_splits = m[rank]
    out_splits = [m[i][rank] for i in range(world)]
    inp = torch.ones(sum(in_splits), dtype=torch.float32)
    out = torch.empty(sum(out_splits), dtype=torch.float32)

    def step():
        dist.barrier()
        with record_function("moe_layer"):
            dist.all_to_all_single(out, inp, out_splits, in_splits)

    if args.root:
        import contextlib

        import scaleprof
        with scaleprof.Run(experiment="alltoall", strategy=f"a2a-{args.mode}", root=args.root) as run:
            for epoch in range(args.epochs):
                prof = (run.torch_profiler(wait=0, warmup=1, active=args.steps - 1, record_shapes=True)
                        if epoch == 0 else contextlib.nullcontext())
                dist.barrier()
                with prof, run.epoch(epoch, samples=args.steps):
                    for _ in range(args.steps):
                        with run.step(samples=1):
                            step()
                        if epoch == 0:
                            prof.step()
    else:
        with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=0, warmup=1, active=args.steps - 1),
                     on_trace_ready=tensorboard_trace_handler(args.trace_dir), record_shapes=True) as prof:
            for _ in range(args.steps):
                step()
                prof.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
