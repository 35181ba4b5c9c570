"""FSDP2 (`fully_shard`) over gloo with the profiler on; one trace per rank. Launched by the tests with
    python -m torch.distributed.run --nproc_per_node N ... gloo_fsdp.py --trace-dir DIR

A stack of --layers linear layers (model.layers.0 ... N-1), each sharded with fully_shard, and the
root module sharded too; --steps steps of forward, backward and an SGD step, each a ProfilerStep
(schedule: warmup 1, then the rest recorded). With --delay-layer L --delay-ms D, layer L's all-gather
in forward is slowed by D ms: its custom all-gather (FSDPModule.set_custom_all_gather) makes rank
--delay-rank (-1: every rank) sleep D ms before it joins the collective, so that rank's training thread
spends D ms more inside that layer's all-gather, and a rank not delayed waits for the delayed ones
(D ms less the time it arrives after them, which depends on the other work on the machine).
Only the forward all-gather is slowed (the training loop marks the forward pass; FSDP gathers under
no_grad in both passes, so grad mode cannot tell them apart). Compute is untouched: the known answer of tests/python/test_fsdp_exposed.py.

With --root the same loop is a recorded scaleprof run (scaleprof.Run, experiment "fsdp", strategy "fsdp2":
--epochs epochs of --steps steps timed, the first epoch profiled into the run's traces/), for the
scalability report's "where scaling is lost" (tests/python/test_fsdp_scaling_loss.py). The model, the
arguments and the loop are sharded_stack.py's, shared with gloo_deepspeed_zero.py.
"""
import argparse
import time

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard
from torch.distributed.fsdp._fully_shard._fsdp_collectives import DefaultAllGather

from sharded_stack import Stack, add_arguments, train


class DelayedAllGather(DefaultAllGather):
    """The default all-gather, joined `delay_s` late by this rank in forward (0: not delayed)."""

    def __init__(self, delay_s, in_forward):
        super().__init__()
        self.delay_s = delay_s
        self.in_forward = in_forward  # {"now": bool}, set by the training loop

    def __call__(self, output_tensor, input_tensor, group, async_op=False):
        if self.delay_s > 0 and self.in_forward["now"]:
            time.sleep(self.delay_s)
        return super().__call__(output_tensor, input_tensor, group, async_op)


def main():
    parser = argparse.ArgumentParser()
    add_arguments(parser, steps=4)
    parser.add_argument("--delay-rank", type=int, default=-1)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    in_forward = {"now": False}
    model = Stack(args.layers, args.width)
    for i, layer in enumerate(model.layers):
        fully_shard(layer)
        if i == args.delay_layer:
            layer.set_custom_all_gather(
                DelayedAllGather(args.delay_ms / 1000.0 if args.delay_rank in (-1, rank) else 0.0, in_forward))
    fully_shard(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(args.batch, args.width)

    def one_step():
        optimizer.zero_grad()
        in_forward["now"] = True
        loss = model(x).square().mean()
        in_forward["now"] = False
        loss.backward()
        optimizer.step()

    train(args, one_step, experiment="fsdp", strategy="fsdp2")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
