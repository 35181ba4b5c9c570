"""Two ranks of DDP over gloo under torchrun: ranks from distributedInfo, steps and collectives."""
import json

import pytest

from conftest import torchrun

ACTIVE_STEPS = [2, 3]  # schedule(wait=1, warmup=1, active=2)


@pytest.fixture(scope="module")
def ddp_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("ddp")
    trace_dir, torch_dir = root / "traces", root / "torch"
    torch_dir.mkdir()
    torchrun("ddp_tiny_model.py", 2, ["--trace-dir", trace_dir, "--torch-dir", torch_dir], timeout=55)
    torch_side = {}
    for rank in (0, 1):
        data = json.loads((torch_dir / f"rank{rank}.json").read_text())
        assert data["world_size"] == 2 and len(data["key_averages"]) == 1
        torch_side[rank] = data
    traces = sorted(trace_dir.iterdir())
    assert len(traces) == 2, traces
    return {"dir": trace_dir, "traces": traces, "torch": torch_side}


def test_ranks_come_from_distributed_info(ddp_run, run_cli):
    for rank, data in ddp_run["torch"].items():
        (path,) = [p for p in ddp_run["traces"] if f"_{data['pid']}." in p.name]
        assert "rank" not in path.name  # nothing in the name gives the rank away
        out, stderr = run_cli("steps", path)
        assert {s["rank"] for s in out["steps"]} == {rank}, path
        assert "no rank" not in stderr


def test_both_ranks_have_the_profiler_steps(ddp_run, run_cli):
    out, stderr = run_cli("steps", ddp_run["dir"])
    for rank in (0, 1):
        assert [s["step"] for s in out["steps"] if s["rank"] == rank] == ACTIVE_STEPS
    spread = {r["step"]: r for r in out["step_spread"]}
    assert sorted(spread) == ACTIVE_STEPS
    assert all(r["ranks"] == 2 and r["min_us"] > 0 for r in spread.values())
    # Both ranks run the same steps at the same time (same host clock): the starts agree within a step.
    for step in ACTIVE_STEPS:
        starts = [s["start_us"] for s in out["steps"] if s["step"] == step]
        assert abs(starts[0] - starts[1]) < spread[step]["max_us"]


def test_collectives_and_self_cpu_match_torch(ddp_run, run_cli):
    out, _ = run_cli("ops", ddp_run["dir"], "--top", 0)
    totals = {t["rank"]: t for t in out["operator_totals"]}
    assert sorted(totals) == [0, 1]
    for rank in (0, 1):
        theirs = {r["name"]: r for r in ddp_run["torch"][rank]["key_averages"][0]}
        ours = {r["name"]: r for r in out["operators"] if r["rank"] == rank}
        # DDP's gradient all-reduce plus the explicit one: 2 per active step, via c10d and gloo.
        for name in ["c10d::allreduce_", "gloo:all_reduce"]:
            assert ours[name]["calls"] == theirs[name]["count"] == 2 * len(ACTIVE_STEPS), (rank, name)
        # gloo:* runs on gloo's worker threads and torch treats it as async: no self time.
        gloo = ours["gloo:all_reduce"]
        assert theirs["gloo:all_reduce"]["is_async"] and gloo["async"] == "yes"
        assert gloo["self_cpu_us"] == 0 and gloo["cpu_total_us"] > 0
        assert gloo["cpu_total_us"] == pytest.approx(theirs["gloo:all_reduce"]["cpu_total_us"], rel=0.01)
        torch_total = sum(r["self_cpu_us"] for r in theirs.values())
        assert totals[rank]["self_cpu_total_us"] == pytest.approx(torch_total, rel=0.05)
        assert totals[rank]["async_calls"] == 2 * len(ACTIVE_STEPS)
        for name, row in theirs.items():
            assert ours[name]["calls"] == row["count"], (rank, name)
    fractions = out["computation_fraction"]
    assert [f["rank"] for f in fractions] == [0, 1, None]  # the last row pools both ranks
    assert all(f["basis"] == "cpu_self_time" and 0 < f["fraction_pct"] < 100 for f in fractions)
