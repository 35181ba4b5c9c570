#!/usr/bin/env python3
"""The NVML monitor against nvidia-smi on the same GPU: what tools/gpu_check.sh records.

    nvml_vs_nvidia_smi.py DIR        (DIR: tools/gpu_check.sh's output, unpacked)

For every run under DIR/runs with a gpu.csv (the wrapper's node-*/gpu.csv or a rank's own), takes the
nvidia-smi samples of DIR/nvidia-smi.csv inside the run's first and last sample and prints: samples,
span, mean utilization and mean/max power from both, and the run's energy three ways: the driver's
counter as scaleprof recorded it (energy_j, last - first), the trapezoid rule over scaleprof's power
samples and over nvidia-smi's. nvidia-smi's timestamps are read as UTC (the GPU machine's clock)."""
import csv
import datetime
import glob
import json
import os
import sys


def smi_samples(path):
    out = []
    for row in csv.reader(open(path)):
        t = datetime.datetime.strptime(row[0].strip(), "%Y/%m/%d %H:%M:%S.%f")
        out.append((t.replace(tzinfo=datetime.timezone.utc).timestamp(), float(row[1]), float(row[2])))
    return out


def trapezoid(times, watts):
    return sum((times[i + 1] - times[i]) * (watts[i + 1] + watts[i]) / 2 for i in range(len(times) - 1))


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    smi = smi_samples(os.path.join(root, "nvidia-smi.csv"))
    print("run | samples | span s | util % (scaleprof / nvidia-smi) | power W mean | power W max | "
          "energy J: counter / trapezoid scaleprof / trapezoid nvidia-smi")
    for run_json in sorted(glob.glob(os.path.join(root, "runs", "*", "*", "run.json"))):
        run = os.path.dirname(run_json)
        name = json.load(open(run_json))["run"]
        for gpu_csv in sorted(glob.glob(os.path.join(run, "node-*", "gpu.csv")) +
                              glob.glob(os.path.join(run, "rank-*", "gpu.csv"))):
            rows = list(csv.DictReader(open(gpu_csv)))
            if len(rows) < 2:
                continue
            t = [int(r["time_unix_ns"]) / 1e9 for r in rows]
            util = [float(r["utilization_pct"]) for r in rows]
            power = [float(r["power_w"]) for r in rows]
            energy = [float(r["energy_j"]) for r in rows]
            ref = [s for s in smi if t[0] <= s[0] <= t[-1]]
            if len(ref) < 2:
                continue
            print(f"{name} ({os.path.relpath(gpu_csv, run)}) | {len(rows)} / {len(ref)} | {t[-1] - t[0]:.2f} | "
                  f"{sum(util) / len(util):.1f} / {sum(s[1] for s in ref) / len(ref):.1f} | "
                  f"{sum(power) / len(power):.1f} / {sum(s[2] for s in ref) / len(ref):.1f} | "
                  f"{max(power):.0f} / {max(s[2] for s in ref):.0f} | "
                  f"{energy[-1] - energy[0]:.1f} / {trapezoid(t, power):.1f} / "
                  f"{trapezoid([s[0] for s in ref], [s[2] for s in ref]):.1f}")


if __name__ == "__main__":
    main()
