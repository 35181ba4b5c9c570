"""Counterfactual runs of a scaling test: the same DDP training over gloo with and without each injected
cost, the ground truth of the report's what-if gains (issue 29, tests/python/test_whatif_counterfactual.py).

One torchrun launch per scale measures every variant: examples/ddp_train.py --cost-schedule gives each
epoch its own costs, so epoch 0 (all costs, a warm-up) is followed by rounds of one epoch per variant,
interleaved (a load spike on the shared machine hits all variants alike, not one), without a process
start (seconds of torch import on a loaded machine) per variant, and a closing epoch with all costs. An
epoch's time is the slowest rank's.

    .venv/bin/python tests/python/counterfactual.py --scales 1 2 4 --rounds 3 --runs 2

prints, per scale and variant, the median epoch time over all rounds of all runs, the spread of the
per-run medians and of the epochs, and each cause's counterfactual gain in points against the smallest
scale n0 (medians, never the best run):

    gain_pts = 100 * ((t1_with - t1_without) - (t0_with - t0_without) * n0 / n1) / t1_with

and, measured directly, 100 * (t1_with - t1_at_base) / t1_with where the "at base" variant runs the cause
at its smallest-scale size scaled ideally (the serial part and the operator at n0 / n1 of their size, the
data loader at the smallest scale's per-sample time): the two agree when the costs add up. That one is
taken per round against the epochs with all costs that bracket it (bracketed_differences: the machine's
speed drifts over minutes), the median of the rounds' differences over the median epoch with all costs.
"""
import argparse
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from conftest import REPO, free_port, training_env  # noqa: E402

EXAMPLE = REPO / "examples" / "ddp_train.py"

# Strong scaling: a global batch of 32 over 512 samples, 16 steps per epoch at every scale, the per-worker
# batch shrinking with the workers; 8x8 images (the model's own work is a few ms per step).
STEPS = 16
TRAIN = ["--dataset-size", "512", "--global-batch", "32", "--image-size", "8"]

# The injected costs (seconds unless named otherwise), all wait-based where they stand for work, so that
# 4 workers on 2 cores still scale. Sizes: tens of ms per step, so that a loaded machine's scheduling
# delays stay well inside the tests' tolerance.
COSTS = {
    "step_sleep": 0.03,               # rank 1 sleeps in its forward every step (--sleep-where forward)
    "data_sleep_per_worker": 0.0075,  # every batch costs 7.5 ms x world size: loading slows with readers
    "epoch_sleep": 0.45,              # a per-epoch serial part outside the steps (a checkpoint)
    "extra_allreduce_mb": 8.0,        # every step all-reduces 8 MB after backward: communication
    # An operator of 60 ms per step that does not shrink with the batch. 60, not 30: the report's
    # "computation" also counts the model's own work that did not shrink (4 workers sharing 2 cores
    # compute slower, and per-operator overheads stay), which the counterfactual ("the operator at
    # n0/n1 of its size") leaves in place: 4-7 ms a step at 4 workers, 2-5 points over the measured
    # gain with a 30 ms operator. The injected cause dominates at 60 ms.
    "step_compute": 0.06,
}
STRAGGLER = 1  # the slow rank

# The report's cause each injected cost stands for, and the cost's key.
CAUSES = {
    "waiting for stragglers": "step_sleep",
    "data loading": "data_sleep_per_worker",
    "outside the steps": "epoch_sleep",
    "communication": "extra_allreduce_mb",
    "computation": "step_compute",
}


def base_overrides(cause, n0, n1, costs=COSTS):
    """The cost overrides that run `cause` as if it scaled ideally from n0 workers to n1: what removing the
    cause's lost efficiency means. Absent at n0 (the straggler, communication): removed. The serial part
    and the operator: n0 / n1 of their size. The data loader: the smallest scale's per-sample time (a batch
    of B / n1 samples costs S n0 (its world size) x (B / n0) / (B / n1)... per batch S n0 n0 / n1)."""
    key = CAUSES[cause]
    if cause == "communication":
        # Every transfer free, DDP's own all-reduce included, the ranks still meeting where the collectives
        # were (examples/ddp_train.py, comm_free): the report's "communication free".
        return {"comm_free": True}
    if cause == "waiting for stragglers":
        return {key: 0.0}
    if cause == "data loading":
        return {key: 0.0, "data_sleep": costs[key] * n0 * n0 / n1}
    return {key: costs[key] * n0 / n1}


def without(cause):
    return {"comm_free": True} if cause == "communication" else {CAUSES[cause]: 0.0}


def variants_for(n, n0=1, causes=tuple(CAUSES), without_runs=True, at_base=True, joint=(), all_at_base=True,
                 costs=COSTS):
    """Variant name -> cost overrides measured at n workers: "all" (every cost), "without CAUSE" and, at
    n > n0, "CAUSE at base" (the cause scaled ideally from n0); joint: tuples of causes fixed together
    ("A + B at base"); "all at base" fixes every cause at once."""
    out = {"all": {}}
    for cause in causes:
        if without_runs:
            out[f"without {cause}"] = without(cause)
    if n > n0 and at_base:
        for cause in causes:
            out[f"{cause} at base"] = base_overrides(cause, n0, n, costs)
        for group in joint:
            merged = {}
            for cause in group:
                merged.update(base_overrides(cause, n0, n, costs))
            out[" + ".join(group) + " at base"] = merged
        if all_at_base:
            merged = {}
            for cause in causes:
                merged.update(base_overrides(cause, n0, n, costs))
            out["all at base"] = merged
    return out


def launch(n, root, schedule, costs=COSTS, extra=(), profile=False, timeout=300, experiment="whatif"):
    """One torchrun launch of examples/ddp_train.py at n workers with every cost of `costs` on; epoch e
    runs with the overrides schedule[e]. Returns (epoch times: the slowest rank's per epoch, stdout)."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", str(n),
           "--master_addr", "127.0.0.1", "--master_port", str(free_port()), str(EXAMPLE),
           "--epochs", str(len(schedule)), *TRAIN, "--root", str(root), "--experiment", experiment,
           "--strategy", "ddp", "--sleep-rank", str(STRAGGLER), "--sleep-where", "forward",
           "--cost-schedule", json.dumps(schedule)]
    for key, value in costs.items():
        cmd += ["--" + key.replace("_", "-"), str(value)]
    if profile:
        # Epoch 0 profiled (the warm-up; wait 1, warm-up 1, active 13 steps), the others timed.
        cmd += ["--profile-epoch", "0", "--profile-wait", "1", "--profile-active", "13"]
    else:
        cmd += ["--profile-epoch", "-1"]
    cmd += list(extra)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=training_env())
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    times = {}
    for rank, epoch, seconds in re.findall(r"rank (\d+) epoch (\d+) done seconds ([0-9.]+)", proc.stdout):
        times[int(epoch)] = max(times.get(int(epoch), 0.0), float(seconds))
    if sorted(times) != list(range(len(schedule))):
        raise RuntimeError(f"epochs {sorted(times)} of {len(schedule)} in:\n{proc.stdout}")
    return [times[e] for e in range(len(schedule))], proc.stdout


def measure(n, root, variants, rounds, costs=COSTS, extra=(), profile=False):
    """Epoch times of every variant at n workers from one launch: epoch 0 all costs (dropped, a warm-up),
    then `rounds` rounds of one epoch per variant, "all" first, and one closing "all" epoch, so that each
    round is bracketed by two epochs with every cost (bracketed_differences). Returns variant -> [epoch
    seconds], in the order of the rounds ("all" has rounds + 1), its keys in the variants' order."""
    names = list(variants)
    assert names[0] == "all", names
    schedule = [{}] + [variants[name] for _ in range(rounds) for name in names] + [variants["all"]]
    times, _ = launch(n, root, schedule, costs=costs, extra=extra, profile=profile)
    out = {name: [] for name in names}
    for i, seconds in enumerate(times[1:]):
        out[names[i % len(names)]].append(seconds)
    return out


def bracketed_differences(t, variant):
    """Per round, the epoch with every cost less the variant's, the former interpolated at the variant's
    place between the round's first epoch and the next round's (both with every cost). The machine's speed
    drifts by a few percent over minutes (epochs with every cost 2.80-2.87 s, then 2.91-2.99 s ten minutes
    later, 4 workers on the 2-core VM), so a difference of medians taken over a launch mixes that drift into
    the gain; the bracket cancels a drift that is linear over a round."""
    names = list(t)
    place, width = names.index(variant), len(names)
    alls = t["all"]
    return [alls[r] + (alls[r + 1] - alls[r]) * place / width - x for r, x in enumerate(t[variant])]


def gain_at_base_pts(launches, variant):
    """The counterfactual gain of running `variant` instead of every cost, in points of the epoch with every
    cost: the median of the bracketed differences of every launch (each a measure() result) over the median
    epoch with every cost."""
    diffs = [d for t in launches for d in bracketed_differences(t, variant)]
    return 100 * median(diffs) / median([x for t in launches for x in t["all"]])


def median(xs):
    return statistics.median(xs)


def pooled(launches_n):
    """Variant -> every epoch of the launches at one scale (measure() results), in launch order."""
    return {name: [x for t in launches_n for x in t[name]] for name in launches_n[0]}


def gain_pts(launches, cause, n0, n1):
    """The counterfactual gain of `cause` at n1 in points: with the "without" variants (the issue's formula
    from medians, every launch's epochs pooled, the n0 term zero for causes absent at n0) and with the
    "at base" variant (bracketed, from the launches at n1)."""
    t0, t1s = pooled(launches[n0]), pooled(launches[n1])
    t1 = median(t1s["all"])
    t0_cost = median(t0["all"]) - median(t0[f"without {cause}"]) if f"without {cause}" in t0 else 0.0
    out = {}
    if f"without {cause}" in t1s:
        out["without"] = 100 * ((t1 - median(t1s[f"without {cause}"])) - t0_cost * n0 / n1) / t1
    if f"{cause} at base" in t1s:
        out["at_base"] = gain_at_base_pts(launches[n1], f"{cause} at base")
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scales", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--rounds", type=int, default=3, help="epochs per variant per launch")
    p.add_argument("--runs", type=int, default=2, help="launches per scale")
    p.add_argument("--root", default="/tmp/scaleprof-counterfactual")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="change an injected cost (e.g. extra_allreduce_mb=16)")
    p.add_argument("--extra", default="", help="more arguments for ddp_train.py (split on spaces)")
    p.add_argument("--no-without", action="store_true", help="only the 'at base' variants")
    p.add_argument("--json", help="write every epoch time here")
    args = p.parse_args(argv)
    costs = dict(COSTS)
    for kv in args.set:
        k, v = kv.split("=")
        costs[k] = float(v)
    n0 = min(args.scales)
    t, per_run, launches = {}, {}, {}
    for n in args.scales:
        variants = variants_for(n, n0, without_runs=not args.no_without,
                                joint=[("waiting for stragglers", "communication")], costs=costs)
        launches[n] = [measure(n, Path(args.root) / f"w{n}-{run}", variants, args.rounds, costs=costs,
                               extra=args.extra.split()) for run in range(args.runs)]
        t[n] = pooled(launches[n])
        per_run[n] = {name: [median(got[name]) for got in launches[n]] for name in variants}
        print(f"\n{n} workers: variant, median epoch s over {args.runs} runs x {args.rounds} rounds, "
              "per-run medians, epochs min-max", flush=True)
        for name, xs in t[n].items():
            runs = " ".join(f"{x:.3f}" for x in per_run[n][name])
            print(f"  {name:45s} {median(xs):.3f}  runs [{runs}]  epochs {min(xs):.3f}-{max(xs):.3f}")
    for n1 in args.scales:
        if n1 == n0:
            continue
        print(f"\ngains at {n1} workers against {n0} (points; t1 = {median(t[n1]['all']):.3f} s):")
        for cause in CAUSES:
            g = gain_pts(launches, cause, n0, n1)
            print(f"  {cause:25s} " + "  ".join(f"{k} {v:6.2f}" for k, v in g.items()))
        joint = "waiting for stragglers + communication at base"
        if joint in t[n1]:
            both = gain_at_base_pts(launches[n1], joint)
            singles = sum(gain_pts(launches, c, n0, n1)["at_base"]
                          for c in ("waiting for stragglers", "communication"))
            print(f"  straggler + communication together {both:.2f} (sum of singles {singles:.2f}, "
                  f"interaction {both - singles:.2f})")
    if args.json:
        Path(args.json).write_text(json.dumps({"costs": costs, "epochs": t, "per_run": per_run,
                                               "launches": launches}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
