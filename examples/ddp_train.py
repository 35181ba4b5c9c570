"""Real PyTorch DDP training (a small CNN on synthetic data; CPU and gloo by default) recorded with scaleprof.

    torchrun --nproc_per_node 2 examples/ddp_train.py --epochs 3
    scaleprof run --experiment cnn --strategy ddp -- torchrun --nproc_per_node 2 examples/ddp_train.py
    scaleprof runs

Every rank records its epoch times (and step times) in
<root>/<experiment>/<run>/rank-NNNNN/, and by default a torch.profiler trace of a few steps of one
epoch in rank-NNNNN/traces/. `--bucket-cap-mb` changes DDP's gradient bucket size, a second
"strategy" to compare in the report (label it with --strategy). Also runs as a single process
without torchrun. On a GPU machine: `--device cuda --backend nccl` (each rank on GPU LOCAL_RANK mod the
GPUs there; NCCL needs one GPU per rank, gloo also runs several ranks on one GPU).

Costs of known size, for the report's known-answer tests (tests/python/test_loss_known_answers.py):
`--epoch-sleep` (outside the steps), `--data-sleep` (a slow DataLoader inside the step),
`--step-compute` (an operator per step that does not shrink with the batch), `--step-sleep
--sleep-rank` (a straggler, sleeping at the end of the step or, with `--sleep-where forward`, inside the
model's forward); `--global-batch` keeps the global batch fixed (strong scaling). For the what-if tests
(tests/python/test_whatif_counterfactual.py): `--data-sleep-per-worker` (data loading that slows as readers
are added) and `--extra-grad-mb` (a gradient volume that makes communication large).
"""
import argparse
import contextlib
import gc
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

import scaleprof


@torch.library.custom_op("scaleprof_example::fixed_step_work", mutates_args=())
def fixed_step_work(x: torch.Tensor, seconds: float) -> torch.Tensor:
    """An operator of known duration (the profiler records it as an operator, like aten::mm): the
    per-step work of --step-compute."""
    time.sleep(seconds)
    return x.clone()


class SlowBatches(torch.utils.data.Dataset):
    """This rank's samples, served by a DataLoader that sleeps a known time per batch (on the batch's
    first sample): a data loader of known cost, inside the step (`--data-sleep`)."""

    def __init__(self, images, labels, batch, sleep_s):
        self.images, self.labels, self.batch, self.sleep_s = images, labels, batch, sleep_s

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        if i % self.batch == 0:
            time.sleep(self.sleep_s)
        return self.images[i], self.labels[i]


class ExtraGradient(nn.Module):
    """A parameter of `--extra-grad-mb` megabytes that DDP all-reduces every step, costing little compute:
    its gradient is a constant (the loss gains 0 x its first element, so backward writes one dense
    gradient of the whole parameter, a fill), and the optimizer does not update it (it is not in the
    optimizer's parameters). The gradient volume, not the work, grows: a communication cost of known volume."""

    def __init__(self, inner, megabytes):
        super().__init__()
        self.inner = inner
        self.extra = nn.Parameter(torch.zeros(max(1, int(megabytes * 1e6 / 4))))

    def forward(self, x):
        out = self.inner(x)
        return out + 0.0 * self.extra[:1]


class SmallCNN(nn.Module):
    def __init__(self, classes=10, image_size=32):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Linear(32 * (image_size // 4) ** 2, classes)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32, help="per rank")
    p.add_argument("--steps-per-epoch", type=int, default=20,
                   help="batches per rank per epoch (weak scaling: the work per rank stays the same)")
    p.add_argument("--dataset-size", type=int, default=0,
                   help="samples per epoch shared by all ranks (strong scaling, as in a real epoch over a "
                        "fixed dataset); overrides --steps-per-epoch")
    p.add_argument("--global-batch", type=int, default=0,
                   help="samples per step over all ranks: each rank takes global / workers (strong scaling with a "
                        "fixed global batch, the per-worker batch shrinking with the workers); overrides "
                        "--batch-size, and with --dataset-size the steps per epoch stay the same at every scale")
    p.add_argument("--image-size", type=int, default=32, help="side of the synthetic square images (a multiple of 4)")
    p.add_argument("--data-sleep", type=float, default=0.0,
                   help="batches come from a DataLoader that sleeps this many seconds per batch, inside the step "
                        "(a data loader of known cost for the report's 'data loading')")
    p.add_argument("--data-sleep-per-worker", type=float, default=0.0,
                   help="like --data-sleep, but every batch costs this many seconds times the world size: "
                        "data loading that slows as readers are added (a shared file system), the per-sample "
                        "loading time growing with the workers")
    p.add_argument("--extra-grad-mb", type=float, default=0.0,
                   help="add a parameter of this many MB whose gradient DDP all-reduces every step (the "
                        "optimizer leaves it alone): a gradient volume of known size that makes communication "
                        "large at little compute")
    p.add_argument("--extra-allreduce-mb", type=float, default=0.0,
                   help="every step also all-reduces a buffer of this many MB, after backward: like "
                        "--extra-grad-mb but an explicit collective outside DDP's gradient hooks")
    p.add_argument("--step-compute", type=float, default=0.0,
                   help="every step also runs an operator (scaleprof_example::fixed_step_work) lasting this many "
                        "seconds whatever the batch: a cost per step that does not shrink with the per-worker batch, "
                        "of known size (the report's 'computation'); it waits rather than computes, so that its "
                        "size holds on a CPU shared by more workers than cores")
    p.add_argument("--strategy", default="ddp", help="label of this configuration in the report")
    p.add_argument("--bucket-cap-mb", type=float, default=25.0, help="DDP gradient bucket size (MB)")
    p.add_argument("--experiment", default=None, help="default: $SCALEPROF_EXPERIMENT or 'ddp-cnn'")
    p.add_argument("--root", default=None, help="default: $SCALEPROF_ROOT or ./scalability-metrics")
    p.add_argument("--run-name", default=None)
    # `scaleprof slurm` exports SCALEPROF_PROFILER=on|off (its `profiler` field).
    p.add_argument("--profile-epoch", type=int,
                   default=-1 if os.environ.get("SCALEPROF_PROFILER") == "off" else 1,
                   help="epoch whose first steps are profiled (-1: no profiler traces; default -1 when "
                        "SCALEPROF_PROFILER=off)")
    p.add_argument("--profile-wait", type=int, default=1)
    p.add_argument("--profile-warmup", type=int, default=1)
    p.add_argument("--profile-active", type=int, default=2)
    p.add_argument("--step-sleep", type=float, default=0.0,
                   help="extra seconds per step (tests use it to kill a rank mid-epoch)")
    p.add_argument("--sleep-rank", type=int, default=-1,
                   help="only this rank sleeps --step-sleep (a straggler the others wait for); -1: every rank")
    p.add_argument("--sleep-where", choices=["end", "forward"], default="end",
                   help="where --step-sleep is slept: at the end of the step (after the optimizer) or at the "
                        "start of the model's forward (a rank slow inside its computation)")
    p.add_argument("--cost-schedule", default="",
                   help="JSON list, one object per epoch, overriding the costs of that epoch (keys: epoch_sleep, "
                        "data_sleep, data_sleep_per_worker, step_compute, step_sleep, extra_allreduce_mb, "
                        "ddp_sync: false for an epoch without any gradient all-reduce, comm_free: true for one "
                        "whose collectives move one element, the ranks still meeting); epochs past the list use "
                        "the flags. One run then measures the same training with and without each cost, epoch "
                        "by epoch, without a process start per variant (the what-if tests' counterfactuals)")
    p.add_argument("--epoch-sleep", type=float, default=0.0,
                   help="seconds every rank spends in each epoch outside its steps, as a checkpoint would "
                        "(a serial cost of known size for the report's 'outside the steps')")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                   help="where the model and the batches live (cuda: GPU LOCAL_RANK mod the GPU count)")
    p.add_argument("--backend", choices=["gloo", "nccl"], default="gloo", help="torch.distributed backend")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1 or "TORCHELASTIC_RUN_ID" in os.environ
    device = torch.device("cpu")
    if args.device == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
        torch.cuda.set_device(device)
    if distributed:
        dist.init_process_group(args.backend)
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    torch.manual_seed(args.seed)  # same initial weights everywhere (DDP broadcasts them anyway)

    model = SmallCNN(image_size=args.image_size).to(device)
    params = list(model.parameters())  # what the optimizer updates (never --extra-grad-mb's parameter)
    schedule = json.loads(args.cost_schedule) if args.cost_schedule else []
    flags = {"epoch_sleep": args.epoch_sleep, "data_sleep": args.data_sleep,
             "data_sleep_per_worker": args.data_sleep_per_worker, "step_compute": args.step_compute,
             "step_sleep": args.step_sleep, "extra_allreduce_mb": args.extra_allreduce_mb, "ddp_sync": True,
             "comm_free": False}
    unknown = {k for entry in schedule for k in entry} - set(flags)
    if unknown:
        raise SystemExit(f"--cost-schedule: unknown keys {sorted(unknown)} (known: {sorted(flags)})")
    epoch_costs = [dict(flags, **(schedule[e] if e < len(schedule) else {})) for e in range(args.epochs)]
    costs = dict(epoch_costs[0]) if epoch_costs else dict(flags)  # this epoch's, updated at every epoch
    sleeps_here = args.sleep_rank in (-1, rank)
    if sleeps_here and args.sleep_where == "forward" and any(c["step_sleep"] for c in epoch_costs):
        # A sleep at the start of the model's forward on this rank only (a hook, so that the module tree and
        # DDP's parameters stay the same on every rank): a rank slow inside its computation, as a slower
        # device or a busy neighbour makes it, rather than after its step.
        model.register_forward_pre_hook(lambda module, inputs: time.sleep(costs["step_sleep"]))
    if args.extra_grad_mb > 0:
        model = ExtraGradient(model, args.extra_grad_mb).to(device)
    if distributed:
        model = DDP(model, bucket_cap_mb=args.bucket_cap_mb,
                    device_ids=[device.index] if device.type == "cuda" else None)
    token = torch.zeros(1, device=device)  # comm_free's all-reduces: the ranks meet, nothing is moved
    if distributed and any(c["comm_free"] for c in epoch_costs):
        # comm_free: every collective's transfer made free, nothing else. DDP's reducer does all its work
        # (hooks, bucket copies) and the ranks still meet where its all-reduce was, over one element, so
        # that a rank still waits for the last to arrive, as the report's "communication free" assumes.
        def allreduce_unless_free(process_group, bucket):
            if costs["comm_free"]:
                return dist.all_reduce(token, async_op=True).get_future().then(lambda _: bucket.buffer())
            return default_hooks.allreduce_hook(process_group, bucket)

        model.register_comm_hook(None, allreduce_unless_free)
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    # This rank's shard of a synthetic dataset: CIFAR-sized images with random labels.
    gen = torch.Generator().manual_seed(args.seed * 1000 + rank)
    if args.global_batch > 0:
        args.batch_size = max(1, args.global_batch // world)
    if args.dataset_size > 0:
        args.steps_per_epoch = max(1, -(-args.dataset_size // (args.batch_size * world)))
    n = args.steps_per_epoch * args.batch_size
    images = torch.randn(n, 3, args.image_size, args.image_size, generator=gen).to(device)
    labels = torch.randint(0, 10, (n,), generator=gen).to(device)
    def floats(mb):
        return int(mb * 1e6 / 4)

    most_mb = max(c["extra_allreduce_mb"] for c in epoch_costs) if epoch_costs else 0
    # One process has nothing to all-reduce: the collective exists from 2 workers on, as communication does.
    extra_buffer = torch.zeros(max(1, floats(most_mb)), device=device) if most_mb > 0 and world > 1 else None
    loader = None
    if any(c["data_sleep"] + c["data_sleep_per_worker"] > 0 for c in epoch_costs):
        # num_workers=0: the loading runs on the training thread, inside the step. Its sleep is set per epoch.
        loader = torch.utils.data.DataLoader(SlowBatches(images, labels, args.batch_size, 0.0),
                                             batch_size=args.batch_size, num_workers=0)

    experiment = args.experiment or os.environ.get("SCALEPROF_EXPERIMENT") or "ddp-cnn"
    loop_start = time.perf_counter()
    with scaleprof.Run(experiment=experiment, strategy=args.strategy, run_name=args.run_name,
                       root=args.root) as run:
        if rank == 0:
            print(f"scaleprof: recording run {run.name} in {run.run_dir} ({world} ranks)", flush=True)
            if run.gpu_note:
                print(f"scaleprof: {run.gpu_note}", flush=True)
        for epoch in range(args.epochs):
            profiling = epoch == args.profile_epoch
            # Shapes give the collectives their message sizes (bus bandwidth in the report).
            prof = (run.torch_profiler(wait=args.profile_wait, warmup=args.profile_warmup,
                                       active=args.profile_active, record_shapes=True)
                    if profiling else contextlib.nullcontext())
            costs.update(epoch_costs[epoch])
            if loader is not None:
                loader.dataset.sleep_s = costs["data_sleep"] + costs["data_sleep_per_worker"] * world
            extra = extra_buffer[:floats(costs["extra_allreduce_mb"])] if extra_buffer is not None else None
            if extra is not None and costs["comm_free"]:
                extra = token
            sync = costs["ddp_sync"] or not distributed
            if schedule and distributed:
                # Every epoch starts together, outside its timing: after an epoch without any collective
                # (ddp_sync false) the ranks have drifted apart, and the next epoch's first all-reduce
                # would otherwise count the drift as that epoch's time.
                dist.barrier()
            with prof:
                start = time.perf_counter()
                with run.epoch(epoch, samples=n):
                    batches = iter(loader) if loader is not None else None
                    for step in range(args.steps_per_epoch):
                        with run.step(samples=args.batch_size):
                            if batches is not None:
                                x, y = next(batches)  # inside the step: its cost is the step's
                            else:
                                x = images[step * args.batch_size:(step + 1) * args.batch_size]
                                y = labels[step * args.batch_size:(step + 1) * args.batch_size]
                            if costs["step_compute"]:
                                fixed_step_work(y[:1], costs["step_compute"])
                            optimizer.zero_grad(set_to_none=True)
                            # ddp_sync false: DDP's no_sync, an epoch with no gradient all-reduce at all.
                            with contextlib.nullcontext() if sync else model.no_sync():
                                loss = loss_fn(model(x), y)
                                loss.backward()
                            if extra is not None and extra.numel():
                                dist.all_reduce(extra)
                            optimizer.step()
                            if sleeps_here and args.sleep_where == "end" and costs["step_sleep"]:
                                time.sleep(costs["step_sleep"])
                            if device.type == "cuda":
                                # The step ends when its kernels do, not when they are queued.
                                torch.cuda.synchronize(device)
                        if profiling:
                            prof.step()
                    if costs["epoch_sleep"]:
                        time.sleep(costs["epoch_sleep"])  # inside the epoch, outside every step
                seconds = time.perf_counter() - start
            # Measured independently of scaleprof, for the end-to-end test to compare against.
            print(f"rank {rank} epoch {epoch} done seconds {seconds:.6f} loss {loss.item():.4f}", flush=True)
    print(f"rank {rank} host {socket.gethostname()} pid {os.getpid()} loop_seconds "
          f"{time.perf_counter() - loop_start:.6f}", flush=True)
    if distributed:
        # Freed first: a DDP model alive at exit keeps the process group past destroy_process_group(), and a
        # gloo thread asking for the GIL while the interpreter finalises aborts the process (1 run in 7 seen).
        dist.barrier()
        model = optimizer = prof = None
        gc.collect()
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
