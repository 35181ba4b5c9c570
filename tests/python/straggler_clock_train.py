"""Two ranks under torchrun (gloo) that record 12 steps of one epoch through scaleprof's Python API, with
the stand-in NVML library: rank 1 is slower in steps 4-7 (a sleep, standing in for what a lower clock
does to its work), and with --clock-drop its GPU's SM clock drops to 990 MHz under a software power cap
for the wall-clock window of those steps. The ranks synchronise only around the loop (a barrier), so each
rank's step times are its own, as a straggler's are before the next collective.

Each rank writes its own fake NVML script before scaleprof loads the library (at Run.start): the drop's
window is in Unix nanoseconds, measured from a start time T0 that rank 0 picks and broadcasts, and both
ranks wait for T0 before their first step, so the steps fall where the window was planned."""
import time

import torch.distributed as dist

import scaleprof
from straggler_common import SLOW, STEPS, broadcast_start, parse_args, use_fake_nvml_script

STEP_S = 0.1
EXTRA_S = 0.25  # rank 1's extra time in each of its slow steps

args = parse_args()

dist.init_process_group("gloo")
rank = dist.get_rank()
t0 = broadcast_start(1_500_000_000)

# Rank 1's slow steps start at T0 + 0.4 s and end at T0 + 1.8 s (plus the little time sleeping overshoots);
# the drop covers T0 + 0.35 s to T0 + 1.75 s: nearly all of those steps and little of any other.
use_fake_nvml_script(args, rank, (t0 + 350_000_000, t0 + 1_750_000_000))

with scaleprof.Run(experiment="stragglers", strategy="ddp", run_name=args.run_name, root=args.root,
                   gpu_interval="20ms") as run:
    if time.time_ns() > t0:
        raise SystemExit(f"rank {rank}: set-up ran past the planned start T0; the window would be missed")
    while time.time_ns() < t0:
        time.sleep(0.001)
    with run.epoch(0):
        for step in range(STEPS):
            with run.step(step):
                time.sleep(STEP_S + (EXTRA_S if rank == 1 and step in SLOW else 0.0))
    dist.barrier()
dist.destroy_process_group()
