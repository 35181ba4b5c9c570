"""What balancing the all-to-all splits would gain (issue 33 item 5): `--what-if "all-to-all balanced"`, a known
answer on real PyTorch. tests/python/gloo_alltoall.py's uneven all_to_all_single over gloo (rank 0 sends rank 1
32 MB, every other split 4 KB) and its counterfactual, the same bytes between the ranks spread evenly (16 MB each
way), both recorded as scaleprof runs at 2 ranks (epoch 0 profiled, then timed epochs), then
`scaleprof report --what-if "all-to-all balanced"` on them: the uneven run's epoch predicted under the what-if
against the even run's measured one.

The model (src/analysis/whatif.h) multiplies each all-to-all's transfer (its completion after the last rank
arrived) by mean / max bytes over its pairs of distinct ranks: every pair its own link, the slowest pair setting
the time (all_to_all_cost.h). Over loopback on this 2-core VM a transfer is a sending and a receiving thread copying
bytes, and the even run's two opposite transfers need about 4 free cores to run as two links
(test_alltoall_imbalance.py: measured 15.5, 8.0 and 19.9 ms a call against 21.0, 19.6 and 25.9 ms attributed). So the
20 % agreement is asserted where os.cpu_count() >= 4; elsewhere that the prediction bounds the measured gain from
above (measured <= 1.2 x predicted) and is what the model must give on these traces, derived below from
`trace collectives` on the same traces (test_predicted_gain_is_what_the_model_must_give).
"""
import gzip
import json
import os
import subprocess

import pytest

from conftest import report_json, torchrun, trace_json

pytestmark = pytest.mark.timing  # a known answer in wall time (conftest.py)

try:
    import scaleprof
except ImportError as e:  # never skip silently: the module is part of what is tested
    raise ImportError("the scaleprof Python module is not importable (pip install --no-build-isolation . , as "
                      "tools/run_tests.sh does, or PYTHONPATH=build/python)") from e

NPROC = 2
STEPS = 8  # per epoch; epoch 0: warm-up 1, then 7 profiled steps
EPOCHS = 4  # epoch 0 profiled (and skipped by the report as warm-up), 1-3 timed
BIG = 8_000_000  # float32 elements rank 0 sends rank 1: 32 MB
SMALL = 1000
SPEC = "all-to-all balanced"


@pytest.fixture(scope="module")
def runs(tmp_path_factory, scaleprof_cli):
    root = tmp_path_factory.mktemp("a2a-whatif")
    for mode in ("uneven", "even"):
        torchrun("gloo_alltoall.py", NPROC, ["--root", str(root), "--mode", mode, "--steps", str(STEPS), "--epochs",
                                             str(EPOCHS), "--big", str(BIG), "--small", str(SMALL)], timeout=240)
    return {"root": root, "report": report_json(scaleprof_cli, root, SPEC)}


def traces_of(root, mode):
    files = sorted(str(p) for p in (root / "alltoall").glob("*/rank-*/traces/*.json.gz")
                   if json.loads((p.parents[2] / "run.json").read_text()).get("strategy") == f"a2a-{mode}")
    assert len(files) == NPROC, files
    return files


def what_if_row(report, mode):
    rows = [w for w in report.get("what_if", []) if w["what_if"] == SPEC and w["series"] == f"a2a-{mode}"]
    assert len(rows) == 1, report.get("what_if")
    assert rows[0]["workers"] == NPROC, rows[0]
    return rows[0]


def epoch_s(report, mode):
    (row,) = [r for r in report["epoch_time"] if r["strategy"] == f"a2a-{mode}" and r["workers"] == NPROC]
    assert row["epochs"] >= EPOCHS - 1, row
    return row["mean_s"]


def model_bounds(scaleprof_cli, files, steps):
    """What the model must save on these traces, from `trace collectives` (bounds in µs, mean over the ranks).

    Each rank's step is a barrier, then the all-to-all, both blocking the rank. Scaling an all-to-all's
    transfer tr_r = (its end on rank r) - (the last rank's arrival) by f = mean / max per peer pair moves each
    rank's next instant earlier by (1 - f) tr_r; the next collective starts at the last of the ranks' re-timed
    arrivals, so the shift carried on lies between the smallest and the largest of the ranks' shifts. Summed
    over the calls of the replayed steps (every step starting its measured gap after the previous one's new
    end), each rank's time in the steps shrinks by between sum (1 - f) min_r tr_r and sum (1 - f) max_r tr_r.
    `trace collectives`' imbalance cost, latency x (1 - f), lies in the same interval (the latency, the shortest
    duration over the ranks, is between min_r tr_r and the last rank's own tr_r)."""
    out = trace_json(scaleprof_cli, "collectives", *files)
    by_call = {}
    for r in out["collective_ranks"]:
        if r["type"] == "alltoall":
            by_call.setdefault((r["group"], r["position"]), []).append(r)
    lo = hi = cost = 0.0
    calls = 0
    for c in out["alltoall"]:
        if c["step"] not in steps:
            continue
        ranks = by_call[(c["group"], c["position"])]
        assert len(ranks) == NPROC, ranks
        last = max(r["start_us"] for r in ranks)
        transfer = [r["start_us"] + r["duration_us"] - last for r in ranks]
        saved = 1 - c["peer_mean_bytes"] / c["peer_max_bytes"]
        lo += saved * min(transfer)
        hi += saved * max(transfer)
        cost += c["imbalance_cost_us"]
        calls += 1
    assert calls == len(steps), (calls, steps)
    return lo, hi, cost


def test_split_imbalance_of_the_uneven_run(runs, scaleprof_cli):
    """The uneven calls as test_alltoall_imbalance.py has them: peer max 32 MB, mean (32 MB + 4 KB) / 2."""
    out = trace_json(scaleprof_cli, "collectives", *traces_of(runs["root"], "uneven"))
    assert len(out["alltoall"]) == STEPS - 1
    for c in out["alltoall"]:
        assert c["peer_max_bytes"] == 4 * BIG
        assert c["peer_mean_bytes"] == pytest.approx(4 * (BIG + SMALL) / 2)


def test_predicted_gain_is_what_the_model_must_give(runs, scaleprof_cli):
    """Non-vacuous and exact: the gain `trace what-if` predicts on the uneven traces per step (the report's, below)
    lies in the bounds the model must give (model_bounds), and is most of the imbalance cost `trace collectives`
    reports on them (half of the uneven call's time at a 2:1 max / mean)."""
    files = traces_of(runs["root"], "uneven")
    steps = trace_json(scaleprof_cli, "what-if", *files, "--what-if", SPEC)["what_if_steps"]
    assert len(steps) >= STEPS - 3, steps  # the profiled steps the decomposition keeps
    saved_us = sum(1000 * (s["step_ms"] - s["predicted_step_ms"]) for s in steps)
    lo, hi, cost = model_bounds(scaleprof_cli, files, {s["step"] for s in steps})
    print(f"\nsaved {saved_us:.0f} us over {len(steps)} steps; model bounds {lo:.0f}-{hi:.0f} us; imbalance cost "
          f"{cost:.0f} us")
    assert lo <= cost + 1 and cost <= hi + 1, (lo, cost, hi)  # the cost's own place in the interval
    # Rounding: the steps' ms to 3 decimals (1 µs each), the collectives' µs to 3 decimals.
    tol = 2 * len(steps) + 1
    assert lo - tol <= saved_us <= hi + tol, (saved_us, lo, hi)
    assert saved_us > 0.5 * cost, (saved_us, cost)
    # The report applies the same replay of the same traces: its mean profiled step, measured and predicted.
    w = what_if_row(runs["report"], "uneven")
    mean = sum(s["step_ms"] for s in steps) / len(steps)
    predicted = sum(s["predicted_step_ms"] for s in steps) / len(steps)
    assert w["step_ms"] == pytest.approx(mean, abs=0.02), (w, mean)
    assert w["predicted_step_ms"] == pytest.approx(predicted, abs=0.02), (w, predicted)


def test_balanced_run_gains_nothing(runs):
    """The even run's all-to-alls are balanced (mean / max 1): the what-if replays its steps exactly."""
    w = what_if_row(runs["report"], "even")
    assert w["predicted_epoch_s"] == w["epoch_s"] and w["gain_s"] == 0, w
    assert w["predicted_step_ms"] == w["step_ms"], w


def test_predicted_epoch_against_the_even_run(runs):
    report = runs["report"]
    w = what_if_row(report, "uneven")
    t_uneven, t_even = epoch_s(report, "uneven"), epoch_s(report, "even")
    assert w["epoch_s"] == pytest.approx(t_uneven, abs=1e-3), (w, t_uneven)
    predicted_gain = t_uneven - w["predicted_epoch_s"]
    measured_gain = t_uneven - t_even
    print(f"\nuneven {t_uneven:.3f} s, even {t_even:.3f} s, predicted under '{SPEC}' {w['predicted_epoch_s']:.3f} s: "
          f"gain measured {measured_gain:.3f} s, predicted {predicted_gain:.3f} s; cpus {os.cpu_count()}")
    assert predicted_gain > 0, w
    if (os.cpu_count() or 1) >= 2 * NPROC:
        assert measured_gain == pytest.approx(predicted_gain, rel=0.20)
    else:
        # Fewer cores than two links need: the even run is not faster by the model's full share (module doc).
        assert measured_gain <= 1.2 * predicted_gain


def test_the_python_api_takes_the_spec(runs):
    """scaleprof.scalability_report(what_if=...) is the CLI's pipeline; TraceAnalysis.what_if the trace one."""
    root = runs["root"]
    got = scaleprof.scalability_report(root=str(root), what_if=[SPEC])
    for mode in ("uneven", "even"):
        assert what_if_row(got, mode) == what_if_row(runs["report"], mode)
    files = traces_of(root, "uneven")
    frame = scaleprof.TraceAnalysis(trace_files=files).what_if("alltoall balanced")
    rows = frame.to_dict("records") if hasattr(frame, "to_dict") else frame
    (row,) = rows
    w = what_if_row(runs["report"], "uneven")
    assert row["predicted_step_ms"] == pytest.approx(w["predicted_step_ms"], abs=0.01), (row, w)


def test_without_split_sizes_the_spec_is_refused(runs, scaleprof_cli, tmp_path):
    """Traces whose all-to-alls have no split sizes (gloo profiled without record_shapes: no Concrete Inputs)
    have nothing to balance: an error naming the spec, never "no gain"."""
    stripped = []
    for path in traces_of(runs["root"], "uneven"):
        with gzip.open(path, "rt") as f:
            trace = json.load(f)
        for e in trace["traceEvents"]:
            if e.get("name") == "c10d::alltoall_base_":
                e.get("args", {}).pop("Concrete Inputs", None)
        out = tmp_path / f"rank{trace['distributedInfo']['rank']}.json"
        out.write_text(json.dumps(trace))
        stripped.append(str(out))
    proc = subprocess.run([str(scaleprof_cli), "trace", "what-if", *stripped, "--what-if", SPEC], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode != 0 and f"'{SPEC}'" in proc.stderr, (proc.returncode, proc.stderr)
    assert "split sizes" in proc.stderr, proc.stderr
    with pytest.raises(scaleprof.ScaleprofError, match="all-to-all balanced"):
        scaleprof.TraceAnalysis(trace_files=stripped).what_if(SPEC)
    # The same traces with their splits: accepted.
    assert trace_json(scaleprof_cli, "what-if", *traces_of(runs["root"], "uneven"), "--what-if", SPEC)["what_if"]
