"""`scaleprof trace fsdp` on traces real DeepSpeed 0.19.8 writes in the test: ZeRO-3 and ZeRO-2 over gloo on
CPU (DS_ACCELERATOR=cpu) under torchrun, 2 ranks, a stack of 4 linear layers, profiled with with_stack=True
(DeepSpeed's Python frames and the nn.Module frames are what name the phase and layer: docs/fsdp.md).

Known answer (ZeRO-3): one run in which every rank joins the all-gather of layers.2's parameters in forward
DELAY_MS late (tests/python/gloo_deepspeed_zero.py wraps DeepSpeed's _dist_allgather_fn during that layer's
fetch), and the counterfactual run without the delay. Kineto names the module by class and the order it
first saw it: layers.2 is `Linear_2`. Its forward all-gather is each rank's most exposed layer row, and its
exposed time per step minus the run without the delay is DELAY_MS within 20 %. Phases: ZeRO-3 gathers in
forward and again in backward (its pre-backward hook, which the trace does not tie to a module: a note
says so), reduce-scatters gradients at the end of engine.backward (backward, though after the autograd
engine's last op) and all-reduces the gradient norm in engine.step (optimizer). ZeRO-2: the gradient
all-reduce at the end of engine.backward is backward, the norm's all-reduce and the parameters'
all-gather after the step are optimizer."""
import pytest

from conftest import deepspeed_env, require_deepspeed, torchrun

pytestmark = pytest.mark.timing  # the counterfactual is a known answer in wall time (conftest.py)

NPROC = 2
LAYERS = 4
STEPS = 6  # schedule(wait=0, warmup=1, active=5): steps 1..5 recorded, the last left out: 4 analysed
ANALYSED = STEPS - 2
DELAY_MS = 80.0
DELAYED = "Linear_2"  # model.layers.2, as Kineto names it


def record(trace_dir, stage, delay_ms=0.0):
    require_deepspeed()
    extra = ["--delay-layer", "2", "--delay-ms", delay_ms] if delay_ms > 0 else []
    torchrun("gloo_deepspeed_zero.py", NPROC, ["--trace-dir", trace_dir, "--stage", stage, "--steps", STEPS,
                                               "--layers", LAYERS, *extra], env=deepspeed_env())
    assert len(list(trace_dir.iterdir())) == NPROC
    return trace_dir


@pytest.fixture(scope="module")
def delayed(tmp_path_factory):
    return record(tmp_path_factory.mktemp("zero3-delayed") / "traces", 3, DELAY_MS)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    return record(tmp_path_factory.mktemp("zero3-baseline") / "traces", 3)


def rows(out, table, rank, **match):
    return [r for r in out[table] if r["rank"] == rank and all(r[k] == v for k, v in match.items())]


def one(out, table, rank, **match):
    found = rows(out, table, rank, **match)
    assert len(found) == 1, (rank, match, rows(out, table, rank))
    return found[0]


def test_zero3_delay_named_and_measured(delayed, baseline, run_cli):
    slow, _ = run_cli("fsdp", delayed, "--top", "0")
    fast, _ = run_cli("fsdp", baseline, "--top", "0")
    for rank in range(NPROC):
        worst = max(rows(slow, "fsdp_layers", rank), key=lambda r: r["exposed_us"])
        assert (worst["layer"], worst["phase"], worst["type"]) == (DELAYED, "forward", "allgather")
        a = one(slow, "fsdp_layers", rank, phase="forward", type="allgather", layer=DELAYED)
        b = one(fast, "fsdp_layers", rank, phase="forward", type="allgather", layer=DELAYED)
        assert a["calls"] == b["calls"] == ANALYSED
        added_ms = (a["exposed_per_step_us"] - b["exposed_per_step_us"]) / 1e3
        assert added_ms == pytest.approx(DELAY_MS, rel=0.2), (rank, a, b)
        # The other layers' forward all-gathers are not slowed.
        for other in range(LAYERS):
            if f"Linear_{other}" != DELAYED:
                r = one(slow, "fsdp_layers", rank, phase="forward", type="allgather", layer=f"Linear_{other}")
                assert r["calls"] == ANALYSED and r["exposed_per_step_us"] < DELAY_MS * 1e3 / 4


def test_zero3_phases_and_totals(delayed, run_cli):
    out, _ = run_cli("fsdp", delayed, "--top", "0")
    ranks = {r["rank"]: r for r in out["fsdp_ranks"]}
    assert sorted(ranks) == list(range(NPROC))
    for rank in range(NPROC):
        info = ranks[rank]
        assert info["steps"] == ANALYSED and info["device"] == "cpu"
        # Backward re-gathers every layer (nothing kept gathered), in DeepSpeed's pre-backward hook: no
        # module frame encloses it, so no layer, and the note says how many.
        bwd = one(out, "fsdp_layers", rank, phase="backward", type="allgather", layer="(none)")
        assert bwd["calls"] == LAYERS * ANALYSED
        assert info["note"].startswith(f"{LAYERS * ANALYSED} DeepSpeed ZeRO-3 parameter fetch(es) outside any "
                                       "nn.Module call")
        # Gradients: one bucketed reduce-scatter per step at the end of engine.backward; the gradient
        # norm's all-reduce in engine.step.
        rs = one(out, "fsdp", rank, type="reduce_scatter")
        assert (rs["phase"], rs["calls"]) == ("backward", ANALYSED)
        assert rs["bytes"] == ANALYSED * LAYERS * (256 * 256 + 256) * 4  # every gradient, fp32, once per step
        ar = one(out, "fsdp", rank, type="allreduce")
        assert (ar["phase"], ar["calls"]) == ("optimizer", ANALYSED)
        totals = rows(out, "fsdp", rank)
        assert not [t for t in totals if t["phase"] == "other"]
        # Layers add up to the totals, and those to the rank's exposed time.
        for t in totals:
            parts = rows(out, "fsdp_layers", rank, group=t["group"], phase=t["phase"], type=t["type"])
            assert sum(p["calls"] for p in parts) == t["calls"]
            assert sum(p["exposed_us"] for p in parts) == pytest.approx(t["exposed_us"], abs=1e-3 * len(parts))
        assert sum(t["exposed_us"] for t in totals) == pytest.approx(info["exposed_us"], abs=1e-3 * len(totals))
        assert info["exposed_us"] <= info["step_us"]


def test_zero2_phases(tmp_path, run_cli):
    traces = record(tmp_path / "traces", 2)
    out, _ = run_cli("fsdp", traces, "--top", "0")
    for rank in range(NPROC):
        got = {(r["phase"], r["type"]): r["calls"] for r in rows(out, "fsdp", rank)}
        # Per step: the gradients' all-reduce (gloo: ZeRO-2 all-reduces its bucket) at the end of
        # engine.backward; the norm's all-reduce and the updated partitions' all-gather in engine.step.
        assert got == {("backward", "allreduce"): ANALYSED, ("optimizer", "allreduce"): ANALYSED,
                       ("optimizer", "allgather"): ANALYSED}, got
        assert {r["layer"] for r in rows(out, "fsdp_layers", rank)} == {"(none)"}
        assert one(out, "fsdp_ranks", rank)["note"] is None
