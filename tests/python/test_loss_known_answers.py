"""Issue 20 item 4, known answers: every lost point of a real scaling test goes to its cause.

examples/ddp_train.py under torchrun, DDP over gloo, at 1, 2 and 4 workers, strong scaling (a fixed
global batch of 32 over 512 samples: 16 steps per epoch at every scale, the per-worker batch shrinking
with the workers), with four costs of known size injected at once:

* a fixed serial cost outside the steps: every rank sleeps EPOCH_S per epoch (--epoch-sleep);
* a slow data loader: every batch costs DATA_S (--data-sleep), inside the step;
* computation that does not shrink with the per-worker batch: an operator of STEP_COMPUTE_S per step
  (--step-compute; it waits rather than computes, so that its size holds with 4 workers on 2 cores);
* a straggler: rank 1 sleeps STRAGGLER_S at the end of every step (--step-sleep --sleep-rank 1), the
  others wait that long at the next gradient all-reduce.

With n0 = 1 worker and n1 > 1, a cost of c seconds per epoch at both scales should have shrunk to
c n0 / n1: it costs (c - c n0 / n1) / t1 points of efficiency (t1 the epoch time at n1); the
straggler's cost (none at 1 worker) is STRAGGLER_S x 16 steps / t1. The sizes are tens of ms per step
so that a loaded machine's scheduling delays (a few ms per step) stay well inside the 25 %. Each must be attributed to its cause
within 25 %, communication and waiting together never more than the steps lost, and the unattributed
rest under 10 points.
"""
import json
import subprocess

import pytest

from conftest import REPO, torchrun, training_env

pytestmark = pytest.mark.timing  # a known answer in wall time (conftest.py)

EXAMPLE = REPO / "examples" / "ddp_train.py"
STEPS = 16  # 512 samples / global batch 32
EPOCH_S = 0.3
DATA_S = 0.03
STEP_COMPUTE_S = 0.04
STRAGGLER_S = 0.05
SCALES = (1, 2, 4)


@pytest.fixture(scope="module")
def report(tmp_path_factory, scaleprof_cli):
    root = tmp_path_factory.mktemp("loss-known")
    env = training_env()
    for nproc in SCALES:
        # Profiled: steps 2 to 14 of the warm-up epoch 0 (wait 1, warm-up 1, active 13; the last is not
        # decomposed): the more steps, the less a load spike on a shared machine skews the shares;
        # epochs 1 and 2 are timed, without the profiler.
        torchrun(EXAMPLE, nproc, ["--epochs", "3", "--dataset-size", "512", "--global-batch", "32", "--image-size", "8",
                                  "--root", str(root), "--experiment", "known", "--strategy", "ddp", "--profile-epoch",
                                  "0", "--profile-wait", "1", "--profile-active", "13", "--epoch-sleep", str(EPOCH_S),
                                  "--data-sleep", str(DATA_S), "--step-compute", str(STEP_COMPUTE_S), "--step-sleep",
                                  str(STRAGGLER_S), "--sleep-rank", "1"], timeout=240, env=env)
    out = subprocess.run([str(scaleprof_cli), "report", "--no-plots", "--format", "json", "--root", str(root)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def causes(row):
    return {c["cause"]: c for c in row["causes"]}


def losses(report):
    rows = {r["to_workers"]: r for r in report["scaling_loss"]}
    assert sorted(rows) == [2, 4], report["scaling_loss"]
    return rows


@pytest.mark.parametrize("n1", [2, 4])
def test_each_injected_cost_goes_to_its_cause(report, n1):
    row = losses(report)[n1]
    assert row["basis"] == "decomposition", row
    t1 = {r["workers"]: r["mean_s"] for r in report["epoch_time"]}[n1]
    shrink = 1 - 1 / n1
    expected = {  # points, from the injected sizes
        "outside the steps": 100 * EPOCH_S * shrink / t1,
        "data loading": 100 * STEPS * DATA_S * shrink / t1,
        "computation": 100 * STEPS * STEP_COMPUTE_S * shrink / t1,
        "waiting for stragglers": 100 * STEPS * STRAGGLER_S / t1,
    }
    got = causes(row)
    for name, pts in expected.items():
        assert got[name]["pts"] == pytest.approx(pts, rel=0.25), (name, pts, row)
    # The straggler is named, and the computation's detail names the operator that did not shrink.
    assert got["waiting for stragglers"]["detail"] == "the others waited most for rank 1", row
    assert "scaleprof_example::fixed_step_work" in got["computation"]["detail"], row
    # Seconds per epoch at both scales: the data loader's cost is the same at every scale.
    assert got["data loading"]["seconds_per_epoch_from"] == pytest.approx(STEPS * DATA_S, rel=0.25), row
    assert got["data loading"]["seconds_per_epoch_to"] == pytest.approx(STEPS * DATA_S, rel=0.25), row


@pytest.mark.parametrize("n1", [2, 4])
def test_causes_are_exclusive_and_account_for_the_loss(report, n1):
    row = losses(report)[n1]
    got = causes(row)
    steps_lost = row["lost_pts"] - got["outside the steps"]["pts"]
    assert got["communication"]["pts"] + got["waiting for stragglers"]["pts"] <= steps_lost + 0.01, row
    assert abs(got["unattributed"]["pts"]) < 10, row
    assert row["other_pts"] == row["unattributed_pts"]
    assert sum(c["pts"] for c in row["causes"]) == pytest.approx(row["lost_pts"], abs=0.01), row


@pytest.mark.parametrize("n1", [2, 4])
def test_each_injected_cost_is_worth_what_removing_it_gains(report, n1):
    """Issue 29: the what-if model's gain of each cause (gains) against what removing the injected cost
    saves by construction: the same sizes as above, since each cost here is a fixed time at every scale
    (it should have shrunk by n0/n1: its excess is what fixing it gains) or, for the straggler, absent
    at one worker. All four are injected at once: each must still be within 25 %, the overlap shown."""
    row = losses(report)[n1]
    assert row["measure"] == "what-if", row
    t1 = {r["workers"]: r["mean_s"] for r in report["epoch_time"]}[n1]
    shrink = 1 - 1 / n1
    expected = {
        "outside the steps": 100 * EPOCH_S * shrink / t1,
        "data loading": 100 * STEPS * DATA_S * shrink / t1,
        "computation": 100 * STEPS * STEP_COMPUTE_S * shrink / t1,
        "waiting for stragglers": 100 * STEPS * STRAGGLER_S / t1,
    }
    gains = {g["cause"]: g for g in row["gains"]}
    for name, pts in expected.items():
        assert gains[name]["pts"] == pytest.approx(pts, rel=0.25), (name, pts, row["gains"])
    assert gains["waiting for stragglers"]["rank"] == 1, row["gains"]
    # Each column of the table is the gain; the split stays in `causes`.
    assert row["waiting_for_stragglers_pts"] == gains["waiting for stragglers"]["pts"]
    # Communication takes time here (gloo all-reduces): never 0; no cause gives back (gains are >= 0).
    assert gains["communication"]["pts"] > 0, row["gains"]
    assert all(g["pts"] >= 0 for g in row["gains"]), row["gains"]
    assert row["interaction_pts"] is not None
    assert row["unattributed_pts"] == pytest.approx(row["gains_rest_pts"])


def test_sentences_name_the_largest_cause(report):
    text = "\n".join(report["explanation"])
    assert "The main reason ddp does not scale better is" in text, text
    assert "fixing it would gain" in text, text
    assert "What fixing each cause would gain at 4 workers (what-if model)" in text, text
    assert "everything else" not in text
    assert "(Basis: at each scale the profiled steps of one rank split into exclusive parts" in text
