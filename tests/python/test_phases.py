"""`scaleprof trace phases` and `trace decompose` on real DDP over gloo (2 CPU ranks under torchrun):
a data loader that sleeps a known time per batch and a straggler rank that sleeps a known time after
its forward pass must land in data loading and in the other rank's wait at the collective, within 25 %:
the wait against how much later the straggler reached the all-reduce, as the training measured it apart
from the profiler (test_critical_path.py says why that is more than the sleep on a busy machine)."""
import json

import pytest

from conftest import torchrun
from ddp_phases_model import measured_lag_us

pytestmark = pytest.mark.timing  # a known answer in wall time (conftest.py)

DATA_MS = 30.0
STRAGGLER_MS = 40.0
STRAGGLER = 1


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    trace_dir = tmp_path_factory.mktemp("phases") / "traces"
    torchrun("ddp_phases_model.py", 2, ["--trace-dir", trace_dir, "--data-sleep-ms", DATA_MS, "--straggler-rank",
                                        STRAGGLER, "--straggler-ms", STRAGGLER_MS, "--arrival-log",
                                        trace_dir.parent / "arrived"], timeout=90)
    assert len(list(trace_dir.iterdir())) == 2
    return trace_dir


def rows_by_rank(rows):
    out = {}
    for r in rows:
        if r["rank"] is not None:
            out.setdefault(r["rank"], []).append(r)
    return out


def test_phases_add_up_and_find_the_data_loading(traces, run_cli):
    out, _ = run_cli("phases", traces)
    ranks = rows_by_rank(out["phases"])
    assert sorted(ranks) == [0, 1]
    for rank, steps in ranks.items():
        assert [s["step"] for s in steps] == [2, 3]  # active=3: the last of 2, 3, 4 is left out
        for s in steps:
            parts = [s[k] for k in ("data_loading_us", "forward_us", "backward_us", "optimizer_us", "other_us")]
            assert all(p >= 0 for p in parts)
            assert sum(parts) == pytest.approx(s["step_us"], abs=0.01)
            assert s["data_loading_us"] == pytest.approx(DATA_MS * 1e3, rel=0.25), (rank, s)
            assert s["forward_us"] > 0 and s["backward_us"] > 0 and s["optimizer_us"] > 0, (rank, s)
    median = out["phases"][-1]
    assert median["rank"] is None and median["data_loading_us"] == pytest.approx(DATA_MS * 1e3, rel=0.25)
    regions = {(r["rank"], r["step"], r["region"]) for r in out["regions"]}
    for rank in (0, 1):
        assert (rank, 2, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__") in regions
        assert (rank, 2, "Optimizer.step#SGD.step") in regions


def test_decompose_puts_each_injected_cause_in_its_part(traces, run_cli):
    late_us = measured_lag_us(traces.parent / "arrived", STRAGGLER, 0)
    out, _ = run_cli("decompose", traces)
    ranks = rows_by_rank(out["decompose"])
    assert sorted(ranks) == [0, 1]
    keys = ["compute_us", "exposed_communication_us", "collective_wait_us", "data_loading_us", "optimizer_us",
            "host_overhead_us", "idle_us"]
    for rank, steps in ranks.items():
        for s in steps:
            assert all(s[k] >= 0 for k in keys)
            assert sum(s[k] for k in keys) == pytest.approx(s["step_us"], abs=0.01)
            assert s["data_loading_us"] == pytest.approx(DATA_MS * 1e3, rel=0.25), (rank, s)
            if rank == STRAGGLER:
                # Its sleep is in no operator: idle; it waits for nobody.
                assert s["idle_us"] >= 0.75 * STRAGGLER_MS * 1e3, s
                assert s["collective_wait_us"] < 0.25 * STRAGGLER_MS * 1e3, s
            else:
                assert late_us[s["step"]] >= 0.95 * STRAGGLER_MS * 1e3  # the sleep made the straggler late
                assert s["collective_wait_us"] == pytest.approx(late_us[s["step"]], rel=0.25), (s, late_us)


def test_a_trace_without_steps_is_named_and_the_rest_reported(traces, run_cli, tmp_path):
    (tmp_path / "steps").symlink_to(traces)
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5}]}))
    for sub, key in (("phases", "phases"), ("decompose", "decompose")):
        out, _ = run_cli(sub, tmp_path / "steps", bare, "--rank", f"{bare}=7")
        assert out["missing"] == [{"rank": 7, "file": str(bare), "missing": out["missing"][0]["missing"]}]
        assert "ProfilerStep" in out["missing"][0]["missing"]
        assert sorted(rows_by_rank(out[key])) == [0, 1]
