"""The scalability report's "where scaling is lost" on real DDP over gloo: examples/ddp_train.py under
torchrun at 1 and 2 workers, rank 1 a straggler that sleeps a known time after every step. The
collectives table must give the numbers the traces themselves give (recomputed here from the raw
Kineto events) with a wait close to the sleep, and the loss must put that wait under waiting for
stragglers, naming rank 1, without communication and waiting exceeding what the steps lost."""
import csv
import gzip
import json
import subprocess
import sys

import pytest

from conftest import REPO, torchrun, training_env

pytestmark = pytest.mark.timing  # a known answer in wall time (conftest.py)

try:
    import scaleprof  # the example records through the module; the last test calls it
except ImportError as e:  # never skip silently: the module is part of what is tested
    raise ImportError(f"the scaleprof Python module is not installed in {sys.executable} "
                      "(pip install --no-build-isolation . , as tools/run_tests.sh does)") from e

EXAMPLE = REPO / "examples" / "ddp_train.py"
SLEEP_S = 0.05  # rank 1 sleeps after every step: rank 0 waits for it at the next all-reduce


@pytest.fixture(scope="module")
def report(tmp_path_factory, scaleprof_cli):
    root = tmp_path_factory.mktemp("gloo-split")
    env = training_env()
    for nproc in (1, 2):
        # Profiled: steps 2 to 6 of epoch 0 (wait 1, warm-up 1, active 5; 4 decomposed, so that one slow
        # step on a loaded machine does not decide the loss's shares); epochs 1 and 2 are timed.
        torchrun(EXAMPLE, nproc, ["--epochs", "3", "--steps-per-epoch", "8", "--dataset-size", "512", "--root",
                                  str(root), "--experiment", "cnn", "--strategy", "ddp", "--profile-epoch", "0",
                                  "--profile-active", "5", "--step-sleep", str(SLEEP_S), "--sleep-rank", "1"],
                 timeout=240, env=env)
    out = subprocess.run([str(scaleprof_cli), "report", "--no-plots", "--format", "json", "--root", str(root)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = subprocess.run([str(scaleprof_cli), "report", "--no-plots", "--root", str(root)],
                          capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    run2 = next(p for p in (root / "cnn").iterdir() if p.name.startswith("ddp-w2-"))
    return {"json": json.loads(out.stdout), "text": text.stdout, "run2": run2, "root": root}


def events(path):
    with gzip.open(path, "rt") if str(path).endswith(".gz") else open(path) as f:
        return json.load(f)["traceEvents"]


def expected_split(run_dir):
    """Step time, latency and wait sums over both ranks, from the raw events: the gloo all-reduces
    launched inside a ProfilerStep, paired by order (one process group, the same calls on both ranks)."""
    per_rank = []
    step_ns = 0
    for rank in (0, 1):
        (trace,) = (run_dir / f"rank-{rank:05d}" / "traces").iterdir()
        ev = [e for e in events(trace) if e.get("ph") == "X"]
        steps = [(e["ts"], e["ts"] + e["dur"]) for e in ev if e["name"].startswith("ProfilerStep#")]
        step_ns += sum(b - a for a, b in steps) * 1e3
        calls = sorted((e["ts"], e["dur"]) for e in ev if e["name"].startswith("gloo:")
                       and any(a <= e["ts"] < b for a, b in steps))
        per_rank.append(calls)
    assert len(per_rank[0]) == len(per_rank[1]) > 0, per_rank
    latency = wait = 0.0
    for (s0, d0), (s1, d1) in zip(*per_rank):
        latency += 2 * min(d0, d1) * 1e3
        wait += (max(s0, s1) - min(s0, s1)) * 1e3
    return step_ns, latency, wait, len(per_rank[0])


def test_the_split_is_what_the_traces_say(report):
    rows = {r["workers"]: r for r in report["json"]["collective_time"]}
    assert sorted(rows) == [1, 2]
    two = rows[2]
    step_ns, latency, wait, calls = expected_split(report["run2"])
    assert two["ranks"] == 2 and two["calls"] == two["matched"] == calls
    assert two["step_ms"] == pytest.approx(step_ns / 1e6, rel=1e-3)
    assert two["communication_pct"] == pytest.approx(100 * latency / step_ns, abs=0.01)
    assert two["waiting_pct"] == pytest.approx(100 * wait / step_ns, abs=0.01)
    # Plausible: rank 0 waits at least about the sleep at every call (one all-reduce per step here);
    # more on a loaded machine, where rank 1 also waits for a core (88 ms per call seen at load 10),
    # but never more than the steps last.
    assert 0.75 * SLEEP_S * 1e9 <= wait / calls <= step_ns / (2 * calls)
    assert 0 < two["communication_pct"] < 50


def outside_steps_share(run_dir, skip_epochs=1):
    """The share of the epoch time outside the training steps, from the run's own records: per kept
    epoch, the slowest rank's duration minus its steps (epochs.csv, steps.csv), pooled over epochs."""
    def rows(path):
        with open(path) as f:
            return list(csv.DictReader(f))
    per_epoch = {}  # epoch -> (duration, steps) of the slowest rank
    for rank_dir in sorted(run_dir.glob("rank-*")):
        steps = {}
        for s in rows(rank_dir / "steps.csv"):
            steps[int(s["epoch"])] = steps.get(int(s["epoch"]), 0.0) + float(s["duration_s"])
        for e in rows(rank_dir / "epochs.csv"):
            epoch, duration = int(e["epoch"]), float(e["duration_s"])
            if epoch not in per_epoch or duration > per_epoch[epoch][0]:
                per_epoch[epoch] = (duration, steps[epoch])
    kept = [per_epoch[e] for e in sorted(per_epoch)[skip_epochs:]]
    return sum(d - s for d, s in kept) / sum(d for d, _ in kept)


def test_where_scaling_is_lost_names_communication_and_waiting(report):
    (loss,) = report["json"]["scaling_loss"]
    assert loss["basis"] == "decomposition"
    assert loss["from_workers"] == 1 and loss["to_workers"] == 2
    times = {r["workers"]: r["mean_s"] for r in report["json"]["epoch_time"]}
    runs = {n: next(p for p in (report["root"] / "cnn").iterdir() if p.name.startswith(f"ddp-w{n}-")) for n in (1, 2)}
    outside = {n: outside_steps_share(runs[n]) for n in (1, 2)}
    assert all(0 < o < 0.2 for o in outside.values()), outside  # set-up between steps, no evaluation
    # Points of a cause = its share of the epoch at 2 workers - its share at 1 worker x the efficiency
    # (its time beyond what it would be had it shrunk with the workers, over the epoch time at 2
    # workers). Outside the steps comes from the step records.
    eff = loss["efficiency_pct"] / 100
    assert eff == pytest.approx(times[1] / (2 * times[2]), rel=1e-9)
    assert loss["outside_the_steps_pts"] == pytest.approx(max(0.0, 100 * (outside[2] - eff * outside[1])), abs=0.02)
    # The columns are what fixing each cause would gain (issue 29, the what-if model). The straggler
    # sleeps SLEEP_S after each of the 8 steps of an epoch at 2 workers and not at all at 1: removing
    # it saves 8 x SLEEP_S per epoch, the known answer (within 25 %). Communication is the gloo
    # all-reduces' own transfer: never 0 while they take time, and never the straggler's wait.
    assert loss["measure"] == "what-if"
    assert loss["communication_pts"] > 0, loss
    gains = {g["cause"]: g for g in loss["gains"]}
    assert gains["waiting for stragglers"]["rank"] == 1
    assert max(loss["gains"], key=lambda g: g["pts"])["cause"] == "waiting for stragglers", loss["gains"]
    # The gains and the rest add up to the points lost (the rest, gains_rest_pts, is what no cause's
    # removal explains). A gain is at most the loss when the rest is not negative; the rest is
    # negative when the 2-worker steps' own work came out at less than half the 1-worker's (a
    # superlinear remainder: in a CI run 1 worker took 0.461 s an epoch, 2 workers 0.585 s, and without
    # the sleeps 0.202 s < 0.461 / 2, so the straggler's 65.4 points exceeded the 60.6 lost by what the
    # rest gave back, -7.3). So: bounded by the loss plus what the rest gave back, and the rest small.
    rest = loss["gains_rest_pts"]
    assert 0 < loss["waiting_for_stragglers_pts"] <= loss["lost_pts"] - min(0.0, rest) + 1e-9, loss
    assert abs(rest) < 15, loss
    assert all(g["pts"] >= 0 for g in loss["gains"]), loss["gains"]
    # The exclusive split (what each rank was doing) stays in `causes`: slices of one rank's steps (the
    # rank that waited, rank 0) that add up to the loss.
    causes = {c["cause"]: c for c in loss["causes"]}
    assert causes["waiting for stragglers"]["detail"] == "the others waited most for rank 1"
    assert sum(c["pts"] for c in loss["causes"]) == pytest.approx(loss["lost_pts"], abs=0.02)
    assert abs(causes["unattributed"]["pts"]) < 1
    assert loss["unattributed_pts"] == loss["other_pts"] == loss["gains_rest_pts"]
    text = " ".join(report["text"].split())  # the console wraps notes at the terminal's width (120 here)
    assert "waiting for stragglers growth accounts for" in text
    assert "its waits at the collectives matched across ranks moved from communication" in text


def test_python_module_gives_the_cli_json(report):
    """scaleprof.scalability_report() runs the same pipeline, trace stage included, and the same JSON
    writer: the dict equals the CLI's `report --format json` on these runs with their traces."""
    ours = scaleprof.scalability_report(root=str(report["root"]))
    assert ours == report["json"]
    assert any(r["workers"] == 2 for r in ours["epoch_time"])


def test_the_straggler_is_worth_its_sleep(report):
    """The known answer: removing rank 1's sleep saves 8 x SLEEP_S per epoch at 2 workers (within 25 %)."""
    (loss,) = report["json"]["scaling_loss"]
    times = {r["workers"]: r["mean_s"] for r in report["json"]["epoch_time"]}
    assert loss["waiting_for_stragglers_pts"] == pytest.approx(100 * 8 * SLEEP_S / times[2], rel=0.25), loss


def test_trace_analysis_what_if_removes_the_sleep_in_every_step(report):
    """TraceAnalysis.what_if on the 2-worker run's traces: with rank 1 at the median the mean step loses
    rank 1's sleep (SLEEP_S after each step, the others waiting for it at the next all-reduce), within
    25 %; every step loses at least half of it (a step that kept the wait gained 0: a collective whose
    end was recorded after the waiting rank's step), and the per-step rows average to the summary row.
    (Single steps of ~45 ms of work vary by 10-15 ms on a loaded 2-core machine, so the 25 % is on the
    mean.)"""
    traces = sorted(str(p) for p in report["run2"].glob("rank-*/traces/*.pt.trace.json*"))
    assert len(traces) == 2, traces
    analysis = scaleprof.TraceAnalysis(traces)
    summary = analysis.what_if("rank 1 at median")
    steps = analysis.what_if("rank 1 at median", per_step=True)
    assert len(summary) == 1 and len(steps) >= 3, (summary, steps)
    assert summary["step_ms"][0] - summary["predicted_step_ms"][0] == pytest.approx(1000 * SLEEP_S, rel=0.25), summary
    for measured, predicted in zip(steps["step_ms"], steps["predicted_step_ms"]):
        assert measured - predicted >= 0.5 * 1000 * SLEEP_S, steps
    assert summary["predicted_step_ms"][0] == pytest.approx(steps["predicted_step_ms"].mean(), rel=1e-6)
    with pytest.raises(ValueError):
        analysis.what_if("rank 1 at base")


def test_scalability_report_takes_what_ifs(report, scaleprof_cli):
    """scaleprof.scalability_report(what_if=...) gives the CLI's `report --what-if` rows: one text or a list."""
    one = scaleprof.scalability_report(root=str(report["root"]), what_if="rank 1 at median")
    both = scaleprof.scalability_report(root=str(report["root"]), what_if=["rank 1 at median", "communication free"])
    cli = subprocess.run([str(scaleprof_cli), "report", "--no-plots", "--format", "json", "--root", str(report["root"]),
                          "--what-if", "rank 1 at median", "--what-if", "communication free"],
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr
    assert {w["what_if"] for w in one["what_if"]} == {"rank 1 at median"}
    assert both["what_if"] == json.loads(cli.stdout)["what_if"]
    # At 2 workers the sleep of rank 1 is what its median removes (8 steps of SLEEP_S an epoch, within 25 %).
    row = next(w for w in one["what_if"] if w["workers"] == 2)
    assert row["gain_s"] == pytest.approx(8 * SLEEP_S, rel=0.25), row
