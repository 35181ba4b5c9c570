"""One process, CPU: scaleprof's `trace ops` / `trace steps` against torch's own key_averages()."""
import json
import re

import pytest

from conftest import HERE, run_python

WAIT, WARMUP, ACTIVE = 1, 1, 3
# Ops every training step of the tiny model runs; their call counts must match torch's exactly.
MAIN_OPS = ["ProfilerStep*", "aten::linear", "aten::addmm", "aten::relu", "aten::mse_loss", "aten::mm",
            "aten::t", "aten::sum", "aten::zero_", "aten::add_", "aten::randn",
            "autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0",
            "Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad"]


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    root = tmp_path_factory.mktemp("single")
    trace_dir, torch_json = root / "traces", root / "torch.json"
    run_python([HERE / "profile_tiny_model.py", "--trace-dir", trace_dir, "--torch-json", torch_json,
                "--wait", WAIT, "--warmup", WARMUP, "--active", ACTIVE, "--steps", WAIT + WARMUP + ACTIVE + 2])
    torch_side = json.loads(torch_json.read_text())
    assert torch_side["torch_version"].startswith("2."), torch_side["torch_version"]
    assert len(torch_side["traces"]) == 1  # repeat=1: one saved trace
    traces = sorted(trace_dir.iterdir())
    assert len(traces) == 1 and re.search(r"\.pt\.trace\.json\.gz$", traces[0].name), traces
    return {"trace": traces[0], "torch": torch_side["traces"][0]["key_averages"]}


@pytest.fixture(scope="module")
def ops(profiled, run_cli):
    out, _ = run_cli("ops", profiled["trace"], "--top", 0)
    return out


def torch_row(rows, name):
    matches = [r for r in rows if r["name"] == name]
    assert len(matches) == 1, f"{name}: {matches}"
    return matches[0]


def our_rows(ops, name):
    rows = [r for r in ops["operators"] if r["name"] == name]
    assert rows, f"no operator row named {name}"
    return rows


def test_steps_found_with_schedule_numbers(profiled, run_cli):
    out, _ = run_cli("steps", profiled["trace"])
    steps = out["steps"]
    # torch >= 2.4 numbers ProfilerStep#N by schedule step; the active ones follow wait + warmup.
    assert [s["step"] for s in steps] == list(range(WAIT + WARMUP, WAIT + WARMUP + ACTIVE))
    assert all(s["rank"] == 0 for s in steps)
    starts = [s["start_us"] for s in steps]
    assert starts[0] == 0 and starts == sorted(starts)
    for prev, cur in zip(steps, steps[1:]):  # windows do not overlap
        assert cur["start_us"] >= prev["start_us"] + prev["duration_us"] - 1e-3
    # The windows are the ProfilerStep* calls torch summed into its CPU total.
    torch_steps = torch_row(profiled["torch"], "ProfilerStep*")
    assert torch_steps["count"] == ACTIVE
    assert sum(s["duration_us"] for s in steps) == pytest.approx(torch_steps["cpu_total_us"], rel=1e-6, abs=0.01)
    assert "gpu_busy_us" not in steps[0]  # CPU-only trace: no device columns
    assert [r["step"] for r in out["step_spread"]] == [s["step"] for s in steps]


def test_total_self_cpu_matches_torch(profiled, ops):
    torch_total = sum(r["self_cpu_us"] for r in profiled["torch"])
    ours = ops["operator_totals"][0]["self_cpu_total_us"]
    assert torch_total > 0
    assert ours == pytest.approx(torch_total, rel=0.05)
    # Every row is printed with --top 0, so the rows add up to the footer total.
    assert sum(r["self_cpu_us"] for r in ops["operators"]) == pytest.approx(ours, rel=1e-9, abs=0.01)


def test_main_ops_call_counts_and_times_match_torch(profiled, ops):
    for name in MAIN_OPS:
        theirs = torch_row(profiled["torch"], name)
        ours = our_rows(ops, name)
        assert sum(r["calls"] for r in ours) == theirs["count"], name
        assert sum(r["self_cpu_us"] for r in ours) == pytest.approx(theirs["self_cpu_us"], rel=0.05, abs=1.0), name
        assert sum(r["cpu_total_us"] for r in ours) == pytest.approx(theirs["cpu_total_us"], rel=0.05, abs=1.0), name
    # The per-step ops ran once per active step (x2 layers where there are two Linear layers).
    assert torch_row(profiled["torch"], "aten::addmm")["count"] == 2 * ACTIVE


def test_every_row_matches_torch(profiled, ops):
    """Not only the main ops: the same set of rows, each with torch's call count and Self CPU."""
    ours = {}
    for r in ops["operators"]:
        ours.setdefault(r["name"], []).append(r)
    assert set(ours) == {r["name"] for r in profiled["torch"]}
    for theirs in profiled["torch"]:
        rows = ours[theirs["name"]]
        assert sum(r["calls"] for r in rows) == theirs["count"], theirs["name"]
        assert sum(r["self_cpu_us"] for r in rows) == pytest.approx(theirs["self_cpu_us"], rel=0.05, abs=1.0)


def test_percentages_follow_torch_definitions(ops):
    total = ops["operator_totals"][0]["self_cpu_total_us"]
    for r in ops["operators"]:
        assert r["self_cpu_pct"] == pytest.approx(100 * r["self_cpu_us"] / total, abs=1e-6)
        assert r["cpu_total_pct"] == pytest.approx(100 * r["cpu_total_us"] / total, abs=1e-6)
    step = our_rows(ops, "ProfilerStep*")[0]
    assert step["cpu_total_pct"] == pytest.approx(100.0, abs=1e-6)  # the steps hold every other op


def test_memory_columns_match_torch(profiled, ops):
    assert "cpu_mem_bytes" in ops["operators"][0]  # profile_memory=True wrote [memory] events
    for name in ["aten::addmm", "aten::mm", "ProfilerStep*", "AddmmBackward0"]:
        theirs = torch_row(profiled["torch"], name)
        ours = our_rows(ops, name)
        assert sum(r["cpu_mem_bytes"] for r in ours) == theirs["cpu_memory_bytes"], name
        assert sum(r["self_cpu_mem_bytes"] for r in ours) == theirs["self_cpu_memory_bytes"], name
    assert torch_row(profiled["torch"], "aten::addmm")["cpu_memory_bytes"] > 0


def test_sorting_and_top(profiled, run_cli, ops):
    out, _ = run_cli("ops", profiled["trace"], "--top", 3, "--sort", "calls")
    calls = [r["calls"] for r in out["operators"]]
    assert len(calls) == 3 and calls == sorted(calls, reverse=True)
    assert calls[0] == max(r["calls"] for r in ops["operators"])


def test_computation_fraction_cpu_fallback(profiled, ops):
    (row,) = ops["computation_fraction"]  # one rank: no pooled row
    assert row["basis"] == "cpu_self_time"
    # itwinai's rule applied to torch's own rows (Self CPU instead of Self CUDA on a CPU-only run).
    rule = re.compile(r".*(?:aten|\sat|c10|autograd)::")
    rows = profiled["torch"]
    comp = sum(r["self_cpu_us"] for r in rows if rule.search(r["name"]))
    total = sum(r["self_cpu_us"] for r in rows)
    overhead = sum(r["self_cpu_us"] for r in rows if r["name"] == "ProfilerStep*")
    expected = 100 * comp / (total - overhead)
    assert 0 < row["fraction_pct"] < 100
    assert row["fraction_pct"] == pytest.approx(expected, abs=0.5)
