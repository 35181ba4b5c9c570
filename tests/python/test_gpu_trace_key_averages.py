"""A real CUDA trace (tests/data/gpu-h200: the tiny model on an NVIDIA H200, torch 2.11.0+cu130):
scaleprof's `trace ops` against torch's own key_averages() from the same profiler object, row by row,
device times included. Needs no GPU: the trace and torch's rows were recorded by tools/gpu_check.sh."""
import json
import re

import pytest

from conftest import HERE

DATA = HERE.parent / "data" / "gpu-h200"


@pytest.fixture(scope="module")
def recorded():
    torch_side = json.loads((DATA / "tiny_mlp_key_averages.json").read_text())
    assert torch_side["torch_version"].startswith("2.11.0+cu"), torch_side["torch_version"]
    (saved,) = torch_side["traces"]
    return {"trace": DATA / "traces" / "tiny_mlp.pt.trace.json.gz", "torch": saved["key_averages"]}


@pytest.fixture(scope="module")
def ops(recorded, run_cli):
    out, _ = run_cli("ops", recorded["trace"], "--top", 0)
    return out


def side(torch_row):
    """torch keeps a host row and a device row under one name (ProfilerStep* on the CPU and on the
    GPU); scaleprof's `side` column tells them apart the same way."""
    return "device" if torch_row["device_type"] == "DeviceType.CUDA" else "host"


def test_every_row_matches_torch_device_times_included(recorded, ops):
    ours = {(r["name"], r["side"]): r for r in ops["operators"]}
    assert len(ours) == len(ops["operators"])  # one row per name and side
    assert set(ours) == {(r["name"], side(r)) for r in recorded["torch"]}
    assert sum(r["self_device_us"] > 0 for r in recorded["torch"]) >= 20  # kernels and the ops that launched them
    for theirs in recorded["torch"]:
        mine = ours[(theirs["name"], side(theirs))]
        what = f"{theirs['name'][:80]} ({side(theirs)})"
        assert mine["calls"] == theirs["count"], what
        assert mine["self_cpu_us"] == pytest.approx(theirs["self_cpu_us"], rel=0.05, abs=1.0), what
        assert mine["cpu_total_us"] == pytest.approx(theirs["cpu_total_us"], rel=0.05, abs=1.0), what
        # Device times come from the kernels' own durations in both tools: equal to the nanosecond,
        # up to torch's float sums.
        assert mine["self_device_us"] == pytest.approx(theirs["self_device_us"], rel=1e-4, abs=0.01), what
        assert mine["device_total_us"] == pytest.approx(theirs["device_total_us"], rel=1e-4, abs=0.01), what


def test_device_total_counts_each_kernel_once(recorded, ops):
    (totals,) = ops["operator_totals"]
    # torch lists a kernel's time twice (the kernel's own row and the op that launched it) and the
    # GPU-side annotations (ProfilerStep*) span the kernels again; the footer counts the device work once.
    rows = recorded["torch"]
    kernels = sum(r["self_device_us"] for r in rows if side(r) == "device" and not r["is_user_annotation"])
    launched = sum(r["self_device_us"] for r in rows if side(r) == "host")
    assert kernels == pytest.approx(launched, rel=1e-4)
    assert totals["self_device_total_us"] == pytest.approx(kernels, rel=1e-5)
    assert 50 < totals["self_device_total_us"] < 200
    assert totals["unattributed_device_events"] == 0


def test_computation_fraction_on_device_time(recorded, ops):
    (row,) = ops["computation_fraction"]
    assert row["basis"] == "device_self_time"
    # itwinai's rule applied to torch's own rows: self device time of ATen/c10/autograd operators over
    # all self device time minus ProfilerStep*.
    rule = re.compile(r".*(?:aten|\sat|c10|autograd)::")
    rows = recorded["torch"]
    comp = sum(r["self_device_us"] for r in rows if rule.search(r["name"]))
    total = sum(r["self_device_us"] for r in rows)
    steps = sum(r["self_device_us"] for r in rows if r["name"] == "ProfilerStep*")
    assert row["fraction_pct"] == pytest.approx(100 * comp / (total - steps), abs=0.05)
    assert 70 < row["fraction_pct"] < 90
