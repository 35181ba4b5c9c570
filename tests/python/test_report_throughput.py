"""Throughput and weak vs. strong scaling in the scalability report, on real DDP over gloo:
examples/ddp_train.py under torchrun at 1 and 2 workers, once as weak scaling (the same
--steps-per-epoch and --batch-size per rank at every scale) and once as strong scaling (a fixed
--dataset-size shared by the ranks). The report's throughput must be the samples over the epoch time
that the runs' own records give (recomputed here from epochs.csv), and the mode the one launched."""
import csv
import json
import subprocess
import sys

import pytest

from conftest import REPO, torchrun, training_env

try:
    import scaleprof  # noqa: F401  the example records through the module
except ImportError as e:  # never skip silently: the module is part of what is tested
    raise ImportError(f"the scaleprof Python module is not installed in {sys.executable} "
                      "(pip install --no-build-isolation . , as tools/run_tests.sh does)") from e

EXAMPLE = REPO / "examples" / "ddp_train.py"
BATCH = 16
# weak: 6 batches of 16 per rank at every scale (96 samples per worker); strong: 192 samples per epoch
# shared by the ranks (12 batches at 1 worker, 6 per rank at 2).
CONFIGS = {"weak": ["--steps-per-epoch", "6"], "strong": ["--dataset-size", str(12 * BATCH)]}


@pytest.fixture(scope="module")
def report(tmp_path_factory, scaleprof_cli):
    root = tmp_path_factory.mktemp("throughput")
    env = training_env()
    for strategy, args in CONFIGS.items():
        for nproc in (1, 2):
            torchrun(EXAMPLE, nproc, ["--epochs", "3", "--batch-size", str(BATCH), *args, "--root", str(root),
                                      "--experiment", "cnn", "--strategy", strategy, "--profile-epoch", "-1"],
                     timeout=240, env=env)
    out = subprocess.run([str(scaleprof_cli), "report", "--no-plots", "--format", "json", "--root", str(root)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return {"json": json.loads(out.stdout), "root": root}


def recorded(run_dir, skip_epochs=1):
    """Samples per epoch (ranks summed) and epoch times (the slowest rank's) of the kept epochs, from
    the run's own epochs.csv files."""
    samples, seconds = {}, {}
    for rank_dir in sorted(run_dir.glob("rank-*")):
        with open(rank_dir / "epochs.csv") as f:
            for e in csv.DictReader(f):
                epoch = int(e["epoch"])
                samples[epoch] = samples.get(epoch, 0) + int(e["samples"])
                seconds[epoch] = max(seconds.get(epoch, 0.0), float(e["duration_s"]))
    kept = sorted(seconds)[skip_epochs:]
    return [samples[e] for e in kept], [seconds[e] for e in kept]


def run_dir(root, strategy, workers):
    (d,) = [p for p in (root / "cnn").iterdir() if p.name.startswith(f"{strategy}-w{workers}-")]
    return d


def test_throughput_is_samples_over_epoch_time_from_the_records(report):
    rows = {(r["strategy"], r["workers"]): r for r in report["json"]["throughput"]}
    assert sorted(rows) == [("strong", 1), ("strong", 2), ("weak", 1), ("weak", 2)]
    for (strategy, workers), row in rows.items():
        samples, seconds = recorded(run_dir(report["root"], strategy, workers))
        assert row["epochs"] == len(samples) == 2
        assert row["samples_per_epoch"] == pytest.approx(sum(samples) / len(samples), rel=1e-12)
        assert row["throughput_sps"] == pytest.approx(sum(samples) / sum(seconds), rel=1e-9)
        assert row["throughput_per_worker_sps"] == pytest.approx(sum(samples) / sum(seconds) / workers, rel=1e-9)
    # What was launched: 96 samples per worker at both scales (weak), 192 per epoch at both (strong).
    assert rows[("weak", 1)]["samples_per_worker"] == rows[("weak", 2)]["samples_per_worker"] == 6 * BATCH
    assert rows[("strong", 1)]["samples_per_epoch"] == rows[("strong", 2)]["samples_per_epoch"] == 12 * BATCH
    one = rows[("weak", 1)]["throughput_sps"]
    assert rows[("weak", 2)]["ideal_throughput_sps"] == pytest.approx(2 * one, rel=1e-12)


def test_the_mode_launched_is_detected_and_named(report):
    doc = report["json"]
    for r in doc["throughput"]:
        assert r["scaling_mode"] == r["strategy"], r
    scaling = {(r["strategy"], r["workers"]): r for r in doc["scaling"]}
    for r in scaling.values():
        assert r["scaling_mode"] == r["strategy"], r
    # Weak-scaling efficiency T(1)/T(2) from the records' mean kept epoch times; none for strong scaling.
    _, t1 = recorded(run_dir(report["root"], "weak", 1))
    _, t2 = recorded(run_dir(report["root"], "weak", 2))
    expected = (sum(t1) / len(t1)) / (sum(t2) / len(t2)) * 100
    assert scaling[("weak", 2)]["weak_efficiency_pct"] == pytest.approx(expected, abs=0.005)
    assert scaling[("strong", 2)]["weak_efficiency_pct"] is None
    text = "\n".join(doc["explanation"])
    assert "weak: weak scaling (the same samples per worker at every scale" in text
    assert "weak-scaling efficiency T(1)/T(2)" in text
    assert "strong: strong scaling (the same samples per epoch at every scale" in text
