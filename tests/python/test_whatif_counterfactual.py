"""Issue 29, counterfactual known answers: each cause of lost efficiency is worth what removing it gains,
checked against real runs without it.

examples/ddp_train.py under torchrun, DDP over gloo, 1, 2 and 4 workers, strong scaling (a global batch
of 32 over 512 samples: 16 steps per epoch at every scale), with five costs injected at once
(tests/python/counterfactual.py, COSTS):

* a straggler: rank 1 sleeps in its forward every step (--sleep-where forward) -> "waiting for stragglers";
* data loading that slows as readers are added: every batch costs 7.5 ms x the world size
  (--data-sleep-per-worker) -> "data loading";
* a per-epoch serial part outside the steps (--epoch-sleep) -> "outside the steps";
* communication: every step all-reduces an 8 MB buffer after backward (--extra-allreduce-mb) on top of
  DDP's own gradient all-reduce -> "communication";
* an operator of fixed duration per step that does not shrink with the per-worker batch (--step-compute)
  -> "computation".

The report is made from profiled runs with every cost: one at 1 worker, two at 2 and at 4 (one before
and one after the counterfactual launch at that scale). The ground truth comes from one more launch per
scale n1 = 2, 4 whose epochs run, interleaved, with every cost ("all") and with one cause fixed ("CAUSE
at base"): the cause scaled ideally from n0 = 1 worker, which is what removing its lost
efficiency means -- the serial part and the operator at 1 / n1 of their size, the data loader at the
1-worker per-sample time (a batch of 32 / n1 samples costing 7.5 ms / n1), no straggler, and for
communication every transfer free with the ranks still meeting where the collectives were (ddp_train.py's
comm_free: DDP's all-reduce, through a communication hook, and the extra one each move one element; DDP's
own small all-reduce is communication too, and costs several ms per step on a loaded machine). Not "no
collective at all" (DDP's no_sync), as until 2026-11-30: that also frees each rank from waiting for the
others' jitter, which the report's "communication free" (transfers x 0, each rank still waiting for the
last to arrive) keeps; measured on the 2-core VM, 5 rounds, no collective at all gained 4.49 points at 2
workers and 9.97 at 4, the ranks still meeting 3.12 and 7.32, and the model's figure had come out 1.4-4.2
points under the former at 2 workers in five runs of six (the sixth, beside a compile, 3.9 over). So the
measured gain is

    gain_pts = 100 * (t1_all - t1_at_base) / t1_all

the issue's ((t1_with - t1_without) - (t0_with - t0_without) n0 / n1) / t1_with with the n0 term run
rather than subtracted (tests/python/counterfactual.py measures both; they agree within the noise), and
the what-if SPEC that is that counterfactual run: "rank 1 at median" (the other ranks do not sleep, so
their median is the run without the sleep), "communication free" (an epoch whose collectives move nothing),
"data loading at base". "Outside the steps" and "computation" have no SPEC of that meaning ("computation
2x faster" would also halve the model's own work): their gains' predicted_epoch_s is checked instead.
Epoch times are the slowest rank's, medians over the rounds, never the best run; t1_all - t1_at_base is
taken per round against the two epochs with every cost that bracket the round (the median of the rounds'
differences: counterfactual.bracketed_differences).

Two causes at once: every cause here is measured with the four others present, and "all at base" (every
cause fixed in one epoch) checks the report's sum of gains plus interaction_pts. The straggler and
communication overlap: the straggler's lateness is spent by the others inside the all-reduce.

Sizes: 30 ms (straggler), 7.5 ms x n (data), 0.45 s per epoch (serial part), 8 MB (all-reduce; 4 MB until
2026-11-30, below), 60 ms (operator; why 60: counterfactual.py): epochs of about 2.0 s (1 worker), 2.5 s
(2), 3.0 s (4); this module runs 7 launches (5 report runs of 3 epochs, 2 counterfactual launches of 47
and 52 epochs: a warm-up, 5 rounds of 9 variants, 10 where workers outnumber cores, a closing epoch with
every cost): 293-297 s on the 2-core VM (three runs on 2026-11-30, one beside two CPU burners working in
bursts of 0.3-4 s; 269-278 s with 8 MB). The communication is an explicit all-reduce rather than a larger
DDP gradient (--extra-grad-mb) because an epoch can turn it off in the same process (the variants
interleave in one launch), it adds no work besides the collective (a gradient of X MB also costs its fill
and DDP's bucket copies, at every scale, one worker included), and it exists only from 2 workers on.
Measured on the same VM, 2 workers, 5 epochs each: an extra 8 MB all-reduce added 0.19 s per epoch, an 8
MB gradient 0.31 s (both over DDP's own all-reduce: 0.11 s); at 4 workers 0.54 s and 0.98 s (DDP's own:
0.19 s).

Noise. The epochs of one variant in one launch spread by 0.01-0.07 s (medians of 3 then); the report's
figures come from one profiled epoch of 13 steps, measured at another time than the counterfactual
epochs, so a load change between them moves the model's figures and not the measured ones: gloo's
25 kB all-reduce took 0.5-0.8 ms at 2 workers on an idle machine and 1-27 ms (typically 12) with a
compile running beside it. Three runs of this module on 2026-11-29 (the first idle, two beside a
helper's compile at nice 10), report against measured, points: straggler 23.5/25.0, 22.0/20.9,
21.7/20.7 (2 workers) and 16.8/19.4, 16.8/15.7, 14.8/14.2 (4); communication 5.1/7.5, 7.0/8.4,
13.2/9.3 (2) and 12.3/15.1, 15.0/19.6, 18.3/16.7 (4): the last two of communication are where the
tolerance (25 % or 3 points) is closest, one past it (13.2 against 9.3, under the compile). With the
operator at 30 ms, "computation" at 4 workers came out 1-5 points over its counterfactual (the model's
own work that does not shrink, which the counterfactual keeps): hence 60 ms; the run after that change
met every figure (computation 23.2 against 23.6 at 4 workers). Workers that
share cores (4 on 2 cores) make the collectives slower than any formula of the bandwidth (the 25 kB
all-reduce: 9 ms at 4 workers against 0.6 ms at 2). The tolerances are the issue's (25 % or 3 points;
10 % for a predicted epoch; 15 % for the projection), never widened to fit.

Drift (2026-11-30). A landing CI run failed this module twice in a row at 4 workers, each time with the
report at the injected cost and the measured gain off: "outside the steps" 11.7 points reported, 6.9
measured (the report's 0.344 s per epoch against the 0.3375 s removed by construction; 12.7 measured
on the idle VM), and "waiting for stragglers" 15.4 against 12.2; on the rerun a predicted epoch 11 %
over the counterfactual one. The machine's speed drifts: epochs with every cost at 4 workers took
2.80-2.87 s in one launch and 2.91-2.99 s in the next, and 3.02 down to 2.76 s within one; the epochs of
one variant in that CI run spread by 0.18 s, and a difference of medians of 3 took the drift as the
gain. Since then each variant is taken against the epochs with every cost that bracket its round
(counterfactual.bracketed_differences), over 5 rounds, and the report's scales 2 and 4 have a run on
each side of their counterfactual launch. Replayed on 7 rounds recorded beside two burners working in
bursts, the largest error of any 5 rounds against the idle VM's figures fell from 3.5 to 0.7 points
(straggler), 1.3 to 1.1 (outside the steps), 2.3 to 1.9 (computation). With communication's
counterfactual the ranks still meeting (above), the 4 MB all-reduce gained 2.5-5.5 points at 2 workers
in four launches, and a fresh-clone CI run failed the check that the collectives take over 3 points (2.5):
the all-reduce is 8 MB since, which gained 4.6-10.8 points there in three launches (5.1 in the module's
run after the change, the report 5.2).
"""
import os
import shutil
import statistics

import pytest

import counterfactual as cf
from conftest import report_json

pytestmark = pytest.mark.timing  # a known answer in wall time (conftest.py)

try:
    import scaleprof  # noqa: F401  the example records through the module
except ImportError as e:  # never skip silently: the module is part of what is tested
    raise ImportError("the scaleprof Python module is not importable (pip install --no-build-isolation . , as "
                      "tools/run_tests.sh does, or PYTHONPATH=build/python)") from e

SCALES = (1, 2, 4)
ROUNDS = 5  # epochs per variant in the counterfactual launch (why 5: the module docstring, Noise)
JOINT = ("waiting for stragglers", "communication")
SPEC_OF = {  # the what-if SPEC whose counterfactual run is "CAUSE at base"
    "waiting for stragglers": f"rank {cf.STRAGGLER} at median",
    "communication": "communication free",
    "data loading": "data loading at base",
}
# A named operator made faster: the injected operator of --step-compute (a custom op, recorded as
# itself) at half its time, against the run where it takes half (variant "operator at half").
OPERATOR_SPEC = "scaleprof_example::fixed_step_work 2x faster"
NO_COLLECTIVE = "no collective at all"  # a variant where workers outnumber cores (oversubscribed_communication)
SPECS = ["rank 1 at median", "communication free", "communication 2x faster", "data loading at base",
         "optimizer 2x faster", "computation 2x faster", OPERATOR_SPEC]


@pytest.fixture(scope="module")
def data(tmp_path_factory, scaleprof_cli):
    root = tmp_path_factory.mktemp("whatif")
    reported = root / "report"
    # The report's runs: every cost, epoch 0 profiled (and dropped by the report as the warm-up). At the
    # scales measured again, one run before the counterfactual launch and one after it: the machine's speed
    # drifts by a few percent over minutes, and the report's epoch (the mean of both runs) is then the
    # machine's speed while the counterfactual epochs ran, which the predicted epochs are compared against.
    cf.launch(SCALES[0], reported, [{}] * 3, profile=True)
    # The counterfactual launches: epoch 0 all costs (a warm-up), then ROUNDS rounds of every variant.
    measured = {}
    for n in SCALES[1:]:
        cf.launch(n, reported, [{}] * 3, profile=True)
        variants = cf.variants_for(n, n0=SCALES[0], without_runs=False, joint=[JOINT])
        variants["operator at half"] = {"step_compute": cf.COSTS["step_compute"] / 2}
        if oversubscribed_communication("communication", n):
            variants[NO_COLLECTIVE] = {"ddp_sync": False, "extra_allreduce_mb": 0.0}
        measured[n] = cf.measure(n, root / f"counterfactual-w{n}", variants, ROUNDS)
        cf.launch(n, reported, [{}] * 3, profile=True)
    # The projection's input: the same runs at 1 and 2 workers only.
    small = root / "report-1-2"
    for run in (reported / "whatif").iterdir():
        if not run.name.startswith("ddp-w4-"):
            shutil.copytree(run, small / "whatif" / run.name)
    full = report_json(scaleprof_cli, reported, *SPECS)
    print_table(full, measured)
    return {"report": full, "small": report_json(scaleprof_cli, small), "t": measured}


def median(xs):
    return statistics.median(xs)


def measured_gain(t, n1, variant):
    """Points of the epoch with every cost that running `variant` instead gains: per round against the
    epochs with every cost that bracket it (counterfactual.bracketed_differences), the median."""
    return cf.gain_at_base_pts([t[n1]], variant)


def row(report, n1):
    rows = {r["to_workers"]: r for r in report["scaling_loss"] if r.get("from_workers") == SCALES[0]}
    assert n1 in rows, report["scaling_loss"]
    return rows[n1]


def gains(report, n1):
    r = row(report, n1)
    assert "gains" in r, f"no 'gains' in the scaling_loss row (keys {sorted(r)})"
    return {g["cause"]: g for g in r["gains"]}


def what_if(report, spec, n):
    rows = [w for w in report.get("what_if", []) if w["what_if"] == spec and w["workers"] == n]
    assert len(rows) == 1, (spec, n, report.get("what_if"))
    return rows[0]


def oversubscribed_communication(cause, n1):
    """Communication with more workers than cores, where no run is the report's "communication free" (every
    transfer x 0, each rank still waiting for the last to arrive), but two runs bound it:
    * the ranks still meeting over one element ("communication at base") keep what a collective costs on
      shared cores beyond its bytes: every rank must be scheduled before it completes (a 25 kB all-reduce
      took 9 ms at 4 workers on 2 cores against 0.6 ms at 2), which the model's x 0 removes: that run gains
      less than the model; measured 2026-11-30, 4 workers on the 2-core VM: 7.5, 9.9, 10.0 and 11.1 points
      against the model's 8.6, 11.5, 12.4 and 15.6 (the last beside bursty burners);
    * no collective at all (NO_COLLECTIVE: DDP's no_sync, no extra all-reduce) also frees each rank from
      waiting for the others' jitter, and the gloo threads' CPU for the others' compute: it gains more
      (with 4 MB: 9.9 and 12.0 points against the model's 8.6 and 10.8; 19.5 and 16.2 against 9.3 and 9.6).
    There the model's gain is checked between the two, with the same tolerance at each end."""
    return cause == "communication" and n1 > (os.cpu_count() or 1)


def within(got, want, rel, abs_pts=0.0):
    return abs(got - want) <= max(rel * abs(want), abs_pts)


def print_table(report, t):
    """The figures a reader needs when an assertion fails (pytest -s shows them)."""
    for n1 in SCALES[1:]:
        print(f"\n{n1} workers: t1 all costs {median(t[n1]['all']):.3f} s (epochs {t[n1]['all']})")
        got = {}
        for r in report.get("scaling_loss", []):
            if r.get("to_workers") == n1 and "gains" in r:
                got = {g["cause"]: g for g in r["gains"]}
        for cause in cf.CAUSES:
            variant = f"{cause} at base"
            pts = got.get(cause, {}).get("pts")
            print(f"  {cause:25s} measured {measured_gain(t, n1, variant):6.2f} pts "
                  f"(epoch {median(t[n1][variant]):.3f} s)  report {pts}")
        if NO_COLLECTIVE in t[n1]:
            print(f"  {NO_COLLECTIVE:25s} measured {measured_gain(t, n1, NO_COLLECTIVE):6.2f} pts "
                  f"(epoch {median(t[n1][NO_COLLECTIVE]):.3f} s)")


@pytest.mark.parametrize("n1", SCALES[1:])
@pytest.mark.parametrize("cause", list(cf.CAUSES))
def test_each_cause_is_worth_its_counterfactual_gain(data, cause, n1):
    g = gains(data["report"], n1)
    want = measured_gain(data["t"], n1, f"{cause} at base")
    assert cause in g, (cause, sorted(g))
    want_s = median(data["t"][n1][f"{cause} at base"])
    if oversubscribed_communication(cause, n1):
        # Between the run with the ranks still meeting and the run without any collective (see there).
        most = measured_gain(data["t"], n1, NO_COLLECTIVE)
        most_s = median(data["t"][n1][NO_COLLECTIVE])
        assert want - max(0.25 * want, 3.0) <= g[cause]["pts"] <= most + max(0.25 * most, 3.0), \
            (cause, n1, g[cause]["pts"], want, most, g[cause])
        assert most_s * 0.90 <= g[cause]["predicted_epoch_s"] <= want_s * 1.10, (cause, n1, g[cause], want_s, most_s)
        return
    assert within(g[cause]["pts"], want, 0.25, 3.0), (cause, n1, g[cause]["pts"], want, g[cause])
    # The predicted epoch with the cause removed is the counterfactual run's.
    assert within(g[cause]["predicted_epoch_s"], want_s, 0.10), (cause, n1, g[cause], want_s)
    if cause == "waiting for stragglers":
        assert g[cause]["rank"] == cf.STRAGGLER, g[cause]


@pytest.mark.parametrize("n1", SCALES[1:])
@pytest.mark.parametrize("cause", list(SPEC_OF))
def test_what_if_predicts_the_run_without_the_cause(data, cause, n1):
    w = what_if(data["report"], SPEC_OF[cause], n1)
    want = median(data["t"][n1][f"{cause} at base"])
    if oversubscribed_communication(cause, n1):
        most_s = median(data["t"][n1][NO_COLLECTIVE])  # between the two runs (oversubscribed_communication)
        assert most_s * 0.90 <= w["predicted_epoch_s"] <= want * 1.10, (cause, n1, w, want, most_s)
    else:
        assert within(w["predicted_epoch_s"], want, 0.10), (cause, n1, w, want)
    # The row's own arithmetic: the gain is the measured epoch minus the prediction, in points of it.
    # (The JSON rounds seconds to 3 decimals and points to 1.)
    assert w["gain_s"] == pytest.approx(w["epoch_s"] - w["predicted_epoch_s"], abs=2e-3), w
    assert w["gain_pts"] == pytest.approx(100 * w["gain_s"] / w["epoch_s"], abs=0.15), w


@pytest.mark.parametrize("n1", SCALES[1:])
def test_every_spec_has_a_row_with_a_basis(data, n1):
    for spec in SPECS:
        w = what_if(data["report"], spec, n1)
        assert w["series"] == "ddp" and w["basis"], w
        # Making something faster never makes the epoch slower.
        assert w["predicted_epoch_s"] <= w["epoch_s"] + 1e-9, w


@pytest.mark.parametrize("n1", SCALES[1:])
def test_causes_together_and_their_interaction(data, n1):
    r = row(data["report"], n1)
    g = gains(data["report"], n1)
    assert all(isinstance(r[k], (int, float)) for k in ("interaction_pts", "gains_rest_pts", "lost_pts")), r
    together = sum(x["pts"] for x in g.values()) + r["interaction_pts"]
    assert together == pytest.approx(r["lost_pts"] - r["gains_rest_pts"], abs=0.05), r
    # Fixing every injected cause in one epoch gains what the report says fixing all at once gains.
    want = measured_gain(data["t"], n1, "all at base")
    assert within(together, want, 0.25, 3.0), (n1, together, want, r)


@pytest.mark.parametrize("n1", SCALES[1:])
def test_communication_counts_and_no_cause_gives_back(data, n1):
    g = gains(data["report"], n1)
    # Collectives take time here (the injected 8 MB all-reduce alone takes ms per step).
    assert measured_gain(data["t"], n1, "communication at base") > 3, data["t"][n1]
    assert g["communication"]["pts"] > 0, g
    # No counterfactual here shows a cause whose removal slows the epoch.
    for cause, x in g.items():
        assert x["pts"] >= -2, (cause, x)


def test_projection_to_4_workers_from_1_and_2(data):
    rows = [p for p in data["small"].get("model_projection", []) if p["series"] == "ddp" and p["workers"] == 4]
    assert len(rows) == 1, data["small"].get("model_projection")
    p = rows[0]
    measured = median(data["t"][4]["all"])
    model_err = 100 * (p["predicted_epoch_s"] - measured) / measured
    amdahl_err = 100 * (p["amdahl_epoch_s"] - measured) / measured
    print(f"\nprojection to 4 workers: model {p['predicted_epoch_s']:.3f} s ({model_err:+.1f} %), Amdahl "
          f"{p['amdahl_epoch_s']:.3f} s ({amdahl_err:+.1f} %), measured {measured:.3f} s")
    assert p["assumptions"], p
    assert abs(model_err) <= 15, (p, measured, amdahl_err)


@pytest.mark.parametrize("n1", SCALES[1:])
def test_a_named_operator_made_faster_predicts_the_run_where_it_is(data, n1):
    """`--what-if "OPERATOR 2x faster"`: the injected operator (60 ms a step) at half its time, against
    the counterfactual epochs where it takes 30 ms: the predicted epoch within 10 %, the gain within 25 %
    or 3 points of the measured one."""
    w = what_if(data["report"], OPERATOR_SPEC, n1)
    want_s = median(data["t"][n1]["operator at half"])
    assert within(w["predicted_epoch_s"], want_s, 0.10), (n1, w, want_s)
    assert within(w["gain_pts"], measured_gain(data["t"], n1, "operator at half"), 0.25, 3.0), (n1, w, data["t"][n1])
