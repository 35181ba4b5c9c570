"""Real training under each distributed strategy scaleprof launches (DDP, FSDP, DeepSpeed, Horovod), on CPU
with gloo, recorded with scaleprof: the training that `scaleprof slurm`'s strategies name.

    torchrun --nproc_per_node 2 examples/strategy_train.py --strategy fsdp
    scaleprof run --experiment s --strategy deepspeed -- torchrun --nproc_per_node 2 examples/strategy_train.py \\
        --strategy deepspeed
    horovodrun -np 2 --gloo python examples/strategy_train.py --strategy horovod

A small MLP on synthetic data, so that what is measured is the strategy's start-up and communication rather
than the model. Each strategy is the library's own:
  ddp        torch.nn.parallel.DistributedDataParallel
  fsdp       torch.distributed.fsdp.fully_shard (FSDP2: parameters sharded per layer; the FSDP1 wrapper
             refuses CPU-only machines, "FSDP needs a non-CPU accelerator device")
  deepspeed  deepspeed.initialize with a ZeRO stage 1 or 2 configuration (--zero-stage), DS_ACCELERATOR=cpu,
             gloo; torchrun (or deepspeed's launcher) starts the ranks, deepspeed.init_distributed joins them
  horovod    horovod.torch (its gloo controller; horovodrun starts the ranks)
Every rank records its epochs and steps in <root>/<experiment>/<run>/rank-NNNNN/; the samples of an epoch are
this rank's own. Also runs as one process without a launcher.
"""
import argparse
import contextlib
import gc
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

import scaleprof

STRATEGIES = ("ddp", "fsdp", "deepspeed", "horovod")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--strategy", choices=STRATEGIES, required=True)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--steps-per-epoch", type=int, default=4, help="batches per rank per epoch")
    p.add_argument("--batch-size", type=int, default=8, help="per rank")
    p.add_argument("--features", type=int, default=64)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--zero-stage", type=int, choices=(1, 2), default=2, help="DeepSpeed ZeRO stage")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--experiment", default=None, help="default: $SCALEPROF_EXPERIMENT or 'strategies'")
    p.add_argument("--root", default=None, help="default: $SCALEPROF_ROOT or ./scalability-metrics")
    p.add_argument("--run-name", default=None)
    return p.parse_args(argv)


def model_for(args):
    torch.manual_seed(args.seed)  # the same initial weights on every rank
    return nn.Sequential(nn.Linear(args.features, args.hidden), nn.ReLU(), nn.Linear(args.hidden, args.hidden),
                         nn.ReLU(), nn.Linear(args.hidden, 10))


def launched_by_torchrun():
    return "TORCHELASTIC_RUN_ID" in os.environ or int(os.environ.get("WORLD_SIZE", "1")) > 1


def alone_as_rank_zero():
    """One process without a launcher: the environment of a 1-rank group on a free loopback port, so that
    deepspeed.init_distributed (which reads RANK, WORLD_SIZE and MASTER_*) needs no launcher."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for name, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                        ("MASTER_PORT", str(port))):
        os.environ.setdefault(name, value)


class Trainer:
    """One strategy's model, optimizer and step; `rank`, `world` and `close()` alike for all four."""

    def __init__(self, args):
        self.args = args
        self.engine = None
        self.hvd = None
        self.distributed = True
        model = model_for(args)
        if args.strategy == "deepspeed":
            self._deepspeed(model)
        elif args.strategy == "horovod":
            self._horovod(model)
        else:
            self.distributed = launched_by_torchrun()
            if self.distributed:
                dist.init_process_group("gloo")
            if self.distributed and args.strategy == "ddp":
                from torch.nn.parallel import DistributedDataParallel as DDP
                model = DDP(model)
            elif self.distributed and args.strategy == "fsdp":
                from torch.distributed.fsdp import fully_shard
                for layer in model:
                    if isinstance(layer, nn.Linear):
                        fully_shard(layer)
                fully_shard(model)
            self.model = model
            self.optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
            self.rank = dist.get_rank() if self.distributed else 0
            self.world = dist.get_world_size() if self.distributed else 1

    def _deepspeed(self, model):
        # CPU and gloo whatever the machine has: this example trains on CPU (DS_ACCELERATOR wins over
        # deepspeed's detection).
        os.environ.setdefault("DS_ACCELERATOR", "cpu")
        import deepspeed
        import deepspeed.ops
        # No compiled ops (DS_BUILD_OPS=0): on CPU, deepspeed.init_distributed otherwise JIT-compiles its
        # shared-memory all-reduce (g++ and ninja, a minute or more on a small machine, and every rank of a node
        # waits on one lock in ~/.cache/torch_extensions). Marked incompatible, deepspeed takes its own
        # fallback for platforms without it: gloo's collectives.
        with contextlib.suppress(AttributeError, TypeError):
            deepspeed.ops.__compatible_ops__["deepspeed_shm_comm"] = False
        if not launched_by_torchrun():
            alone_as_rank_zero()
        deepspeed.init_distributed(dist_backend="gloo")
        config = {
            "train_micro_batch_size_per_gpu": self.args.batch_size,
            "gradient_accumulation_steps": 1,
            "zero_optimization": {"stage": self.args.zero_stage},
            # A torch optimizer: DeepSpeed's own (Adam, Lamb) are compiled ops.
            "zero_allow_untested_optimizer": True,
            "steps_per_print": 1 << 30,
        }
        optimizer = torch.optim.SGD(model.parameters(), lr=self.args.lr, momentum=0.9)
        self.engine, self.optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=config)
        self.model = self.engine
        self.rank = dist.get_rank()
        self.world = dist.get_world_size()

    def _horovod(self, model):
        import horovod.torch as hvd
        hvd.init()
        self.hvd = hvd
        self.model = model
        optimizer = torch.optim.SGD(model.parameters(), lr=self.args.lr * hvd.size(), momentum=0.9)
        hvd.broadcast_parameters(model.state_dict(), root_rank=0)
        self.optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
        self.rank = hvd.rank()
        self.world = hvd.size()

    def step(self, x, y, loss_fn):
        if self.engine is not None:
            loss = loss_fn(self.engine(x), y)
            self.engine.backward(loss)
            self.engine.step()
            return loss
        self.optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss

    def close(self):
        if self.hvd is not None:
            self.hvd.join()
            self.hvd.shutdown()
            return
        if not dist.is_initialized():
            return
        dist.barrier()
        # Freed first: a wrapped model alive at exit keeps the process group past destroy_process_group(), and a
        # gloo thread asking for the GIL while the interpreter finalises can abort the process.
        self.model = self.engine = self.optimizer = None
        gc.collect()
        dist.destroy_process_group()


def main(argv=None):
    args = parse_args(argv)
    trainer = Trainer(args)
    rank, world = trainer.rank, trainer.world
    # This rank's shard of a synthetic dataset.
    gen = torch.Generator().manual_seed(args.seed * 1000 + rank)
    n = args.steps_per_epoch * args.batch_size
    inputs = torch.randn(n, args.features, generator=gen)
    labels = torch.randint(0, 10, (n,), generator=gen)
    loss_fn = nn.CrossEntropyLoss()
    experiment = args.experiment or os.environ.get("SCALEPROF_EXPERIMENT") or "strategies"
    with scaleprof.Run(experiment=experiment, strategy=args.strategy, run_name=args.run_name,
                       root=args.root) as run:
        if rank == 0:
            print(f"scaleprof: recording run {run.name} in {run.run_dir} ({world} ranks, {args.strategy})",
                  flush=True)
        for epoch in range(args.epochs):
            start = time.perf_counter()
            with run.epoch(epoch, samples=n):
                for step in range(args.steps_per_epoch):
                    with run.step(samples=args.batch_size):
                        rows = slice(step * args.batch_size, (step + 1) * args.batch_size)
                        loss = trainer.step(inputs[rows], labels[rows], loss_fn)
            print(f"rank {rank} of {world} {args.strategy} epoch {epoch} seconds {time.perf_counter() - start:.6f} "
                  f"loss {loss.item():.4f}", flush=True)
    trainer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
