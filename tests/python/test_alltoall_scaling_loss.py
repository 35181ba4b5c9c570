"""All-to-all imbalance as a part of communication in "where scaling is lost" (issue 33 item 5), on real
PyTorch: tests/python/gloo_alltoall.py's uneven all_to_all_single over gloo (rank 0 sends rank 1 32 MB, every
other split 4 KB) recorded as a scaleprof run at 2 and 4 ranks (epoch 0 profiled), then `scaleprof report`.
The report's communication cause must carry the imbalance as a named part, inside its points, of the size
`trace collectives` gives the same traces (the imbalance cost as a share of the profiled steps)."""
import collections
import json
import subprocess

import pytest

from conftest import decomposed_loss, seconds_in_steps, torchrun, trace_json

pytestmark = pytest.mark.timing  # shares of wall time

STEPS = 7  # per epoch; epoch 0: warm-up 1, then 6 profiled steps
BIG = 8_000_000
SMALL = 1000
SCALES = (2, 4)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, scaleprof_cli):
    root = tmp_path_factory.mktemp("a2a-loss")
    for nproc in SCALES:
        torchrun("gloo_alltoall.py", nproc, ["--root", str(root), "--mode", "uneven", "--steps", str(STEPS), "--epochs",
                                             "2", "--big", str(BIG), "--small", str(SMALL)], timeout=240)
    html = root / "report.html"
    out = subprocess.run([str(scaleprof_cli), "report", "--no-plots", "--format", "json", "--root", str(root),
                          "--html", str(html), "--no-trace-pages"], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    return {"report": json.loads(out.stdout), "root": root, "html": html.read_text()}


def traces_of(root, nproc):
    files = sorted(p for p in (root / "alltoall").glob("*/rank-*/traces/*.json.gz")
                   if json.loads((p.parents[2] / "run.json").read_text()).get("world_size") == nproc)
    assert len(files) == nproc, files
    return files


def cost_share_of_steps(scaleprof_cli, files):
    """The imbalance cost's share of the decomposed rank's profiled steps, from `trace collectives` (the cost per
    step) and `trace decompose` (each rank's steps split, waits moved out of exposed communication): the rank
    that waited longest is the loss's view, and a step's cost counts at most its exposed communication."""
    cost = {s["step"]: s["imbalance_cost_us"] for s in trace_json(scaleprof_cli, "collectives", *files)["alltoall_steps"]
            if s["step"] is not None}
    assert len(cost) == STEPS - 1 and all(c > 0 for c in cost.values()), cost
    steps = [r for r in trace_json(scaleprof_cli, "decompose", *files)["decompose"] if r["rank"] is not None]
    wait = collections.defaultdict(float)
    for r in steps:
        wait[r["rank"]] += r["collective_wait_us"]
    view = max(sorted(wait), key=lambda k: wait[k])  # the lowest rank on a tie
    mine = [r for r in steps if r["rank"] == view]
    assert len(mine) >= 4, mine
    return sum(min(cost.get(r["step"], 0), r["exposed_communication_us"]) for r in mine) / sum(r["step_us"] for r in mine)


def test_alltoall_imbalance_is_a_part_of_communication(runs, scaleprof_cli):
    report = runs["report"]
    row, causes = decomposed_loss(report, 4)
    comm = causes["communication"]
    (part,) = comm["parts"]
    assert part["part"] == "all-to-all imbalance"
    # Inside communication: never more than it (the causes add up to the loss: decomposed_loss).
    assert 0 < part["seconds_per_epoch_to"] <= comm["seconds_per_epoch_to"]
    assert 0 < part["seconds_per_epoch_from"] <= comm["seconds_per_epoch_from"]
    assert row["alltoall_imbalance_pts"] == pytest.approx(part["pts"], abs=0.05)
    assert "of it, all-to-all imbalance" in comm["detail"]
    # Its size: the imbalance cost's share of the decomposed steps, applied to the epoch's time in the steps,
    # as every cause of the decomposition is. The same figures rounded to the µs in JSON: equal to 1e-3.
    in_steps = seconds_in_steps(report, causes, 4, "to")
    expected = cost_share_of_steps(scaleprof_cli, traces_of(runs["root"], 4)) * in_steps
    print(f"part {part['seconds_per_epoch_to']:.4f} s per epoch, from trace collectives {expected:.4f} s, "
          f"communication {comm['seconds_per_epoch_to']:.4f} s")
    assert part["seconds_per_epoch_to"] == pytest.approx(expected, rel=1e-3)
    # Not vacuous: a real share of the exposed communication (32 MB one way against 4 KB the others). Its size
    # is the waiting rank's view: each step counts at most that rank's exposed communication, and with 4 ranks
    # on 2 cores which rank waits, and how much of its wait is transfer, follows the scheduler. Measured
    # 2026-11-30: 0.24 of communication in a fresh-clone CI run, 0.50-0.77 in three runs alone; the exact
    # size is pinned above to `trace collectives` and `trace decompose` on the same traces.
    assert part["seconds_per_epoch_to"] > 0.1 * comm["seconds_per_epoch_to"]
    # HTML: the table's column (the loss chart names the part in its communication bar's tooltip where the
    # chart shows the exclusive split: tests/pipeline_loss_test.cc; here the what-if gains lead it).
    assert "Of communication: all-to-all imbalance" in runs["html"]
