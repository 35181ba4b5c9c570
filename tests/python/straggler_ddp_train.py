"""Two ranks under torchrun training a small model with DDP over gloo, recorded through scaleprof's Python API
with the stand-in NVML library and profiled (torch.profiler, every step after the first): synchronous
training, where the gradient all-reduce makes every rank's step last as long as the slowest rank's.

Rank 1 is slower in steps 4-7 (a sleep before its forward, standing in for what a lower clock does to its
work): rank 0 waits for it at the all-reduce, so both ranks' step times stay equal. With --clock-drop its GPU's
SM clock drops to 990 MHz under a software power cap for the wall-clock window of those steps.

Steps start at planned wall-clock times (T0 plus the planned lengths of the steps before, the waits between
steps outside them), so no drift moves them out of the window planned for the drop; each rank writes its
fake NVML script before scaleprof loads the library (at Run.start)."""
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import scaleprof
from straggler_common import SLOW, STEPS, broadcast_start, parse_args, use_fake_nvml_script

STEP_S = 0.05
EXTRA_S = 0.2  # rank 1's extra time before its forward in each of its slow steps
PLANNED_S = {True: 0.35, False: 0.15}  # from one step's start to the next's (slow, normal)

args = parse_args()

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
torch.set_num_threads(1)
model = DDP(torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(16, 64)
y = torch.randn(16, 8)
# Starting the run and the profiler takes seconds on a loaded machine.
t0 = broadcast_start(10_000_000_000)
starts = [t0]
for step in range(STEPS):
    starts.append(starts[-1] + int(PLANNED_S[step in SLOW] * 1e9))

# The drop covers rank 1's slow steps: from 20 ms before step 4's start to 20 ms after step 7's planned end
# (its start + STEP_S + EXTRA_S), and none of step 3 (ends ~STEP_S after its start) or step 8.
use_fake_nvml_script(args, rank, (starts[SLOW.start] - 20_000_000,
                                  starts[SLOW.stop - 1] + int((STEP_S + EXTRA_S) * 1e9) + 20_000_000))

with scaleprof.Run(experiment="stragglers-ddp", strategy="ddp", run_name=args.run_name, root=args.root,
                   gpu_interval="20ms") as run:
    prof = run.torch_profiler(wait=0, warmup=1, active=STEPS - 1, record_shapes=True)
    with prof:
        with run.epoch(0):
            for step in range(STEPS):
                if step == 0 and time.time_ns() > starts[0]:
                    raise SystemExit(f"rank {rank}: set-up ran past the planned start T0; the window would be missed")
                while time.time_ns() < starts[step]:
                    time.sleep(0.001)
                with run.step(step):
                    time.sleep(STEP_S + (EXTRA_S if rank == 1 and step in SLOW else 0.0))
                    optimizer.zero_grad()
                    torch.nn.functional.mse_loss(model(x), y).backward()  # the all-reduce waits for rank 1
                    optimizer.step()
                prof.step()
    dist.barrier()
model = optimizer = None
dist.destroy_process_group()
