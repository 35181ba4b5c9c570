"""What the two straggler trainings (straggler_clock_train.py, straggler_ddp_train.py) share: their arguments,
the broadcast start time T0, and the stand-in NVML script each rank writes before scaleprof loads the library
(at Run.start), with rank 1's clock drop to 990 MHz under a software power cap (reason bit 0x4) where asked."""
import argparse
import os
import time

import torch
import torch.distributed as dist

SLOW = range(4, 8)  # rank 1's slow steps
STEPS = 12


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--run-name", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--clock-drop", action="store_true")
    return parser.parse_args()


def broadcast_start(after_ns):
    """T0 in Unix nanoseconds, `after_ns` from now on rank 0, the same on every rank."""
    t0 = torch.tensor([time.time_ns() + after_ns], dtype=torch.int64)
    dist.broadcast(t0, 0)
    return int(t0.item())


def use_fake_nvml_script(args, rank, drop_window_ns=None):
    """Writes this rank's stand-in NVML script (a device at 1980 MHz, 90 % busy, 300 W; on rank 1 with
    --clock-drop, 990 MHz under sw_power_cap during drop_window_ns = (begin, end), Unix ns) and points
    SCALEPROF_FAKE_NVML_SCRIPT at it."""
    script = os.path.join(args.work, f"nvml-{args.run_name}-rank{rank}.txt")
    lines = ["devices=1", "util.0=90", "power_base_w.0=300", "power_slope_w.0=0", "sm_clock_mhz.0=1980"]
    if rank == 1 and args.clock_drop:
        begin, end = drop_window_ns
        lines += [f"clock_drop_unix.0={begin}-{end}:990", "clock_drop_reasons.0=0x4"]
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.environ["SCALEPROF_FAKE_NVML_SCRIPT"] = script
