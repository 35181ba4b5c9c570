"""`scaleprof trace memory` (issue 23) against figures computed here, independently, from the JSON.

Two traces: the shared df_index_resolver trace (28,010 [memory] events on CUDA 1 and the CPU; skipped
without ../shared), and one this test records with real PyTorch (profile_memory=True,
record_shapes=True, a small MLP on the CPU), where the operator table's memory columns are also
compared with torch's own key_averages() for the same profile.
"""
import gzip
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
DF_INDEX = REPO.parent / "shared" / "traces" / "hta" / "df_index_resolver" / "df_index_resolver.json.gz"
FACTORIES = {"aten::empty", "aten::empty_strided", "aten::resize_", "aten::empty_like", "aten::new_empty",
             "aten::new_empty_strided"}


def load_events(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)["traceEvents"]


def device_name(device_type, device_id):
    return "CPU" if device_type == 0 else {1: "CUDA"}.get(device_type, f"type {device_type} id") + f" {device_id}"


def expected_memory(events):
    """Per device: the figures `trace memory` reports, computed from the raw events."""
    memory = [(e["ts"], i, e) for i, e in enumerate(events) if e.get("name") == "[memory]"]
    by_device = defaultdict(list)
    for ts, i, e in sorted(memory, key=lambda x: (x[0], x[1])):  # time, then file order
        a = e["args"]
        by_device[device_name(a["Device Type"], a["Device Id"])].append((ts, i, e))
    ops = ops_by_thread(events)
    steps = sorted((e["ts"], e["ts"] + e["dur"], int(e["name"].split("#")[1])) for e in events
                   if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))
    out = {}
    for device, rows in by_device.items():
        first = rows[0][2]["args"]
        totals = [r[2]["args"]["Total Allocated"] for r in rows]
        peak_index = max(range(len(rows)), key=lambda k: (totals[k], -k))  # the first to reach the peak
        live = {}
        for ts, i, e in rows[:peak_index + 1]:
            a = e["args"]
            if a["Bytes"] > 0:
                live[a["Addr"]] = (a["Bytes"], e)
            elif a["Bytes"] < 0:
                live.pop(a["Addr"], None)
        holders = defaultdict(int)
        for nbytes, e in live.values():
            holders[owner(e, ops)] += nbytes
        peak = totals[peak_index]
        if peak != sum(holders.values()):
            holders["(allocated before profiling)"] += peak - sum(holders.values())
        step_peaks = {}
        for start, end, number in steps:
            before = [t for (ts, _, _), t in zip(rows, totals) if ts < start]
            inside = [t for (ts, _, _), t in zip(rows, totals) if start <= ts < end]
            carried = before[-1] if before else first["Total Allocated"] - first["Bytes"]
            step_peaks[number] = max([carried] + inside)
        out[device] = {
            "events": len(rows),
            "allocations": sum(1 for r in rows if r[2]["args"]["Bytes"] > 0),
            "frees": sum(1 for r in rows if r[2]["args"]["Bytes"] < 0),
            # Unknown (null) on CPU: its allocator's total counts only what it allocated while profiling.
            "before_profiling_bytes": None if device == "CPU" else first["Total Allocated"] - first["Bytes"],
            "peak_allocated_bytes": peak,
            "peak_ts": rows[peak_index][0],
            "peak_reserved_bytes": max(r[2]["args"]["Total Reserved"] for r in rows),
            "final_allocated_bytes": totals[-1],
            "min_allocated_bytes": min(totals),
            "holders": dict(holders),
            "steps": step_peaks,
        }
    return out


def owner(alloc, ops):
    """The innermost cpu_op (else user annotation) on the allocation's thread holding its time."""
    t = alloc["ts"]
    thread = ops.get((alloc["pid"], alloc["tid"]))
    if thread is None:
        return "(no operator)"
    events, ts, end = thread
    around = [events[k] for k in np.nonzero((ts <= t) & (end >= t))[0]]
    cpu = sorted((o for o in around if o["cat"] == "cpu_op"), key=lambda o: (o["ts"], -o["dur"]))
    if cpu:
        inner = cpu[-1]
        if inner["name"] in FACTORIES and len(cpu) > 1:
            return f'{cpu[-2]["name"]} ({inner["name"]})'
        return inner["name"]
    annotations = sorted(around, key=lambda o: (o["ts"], -o["dur"]))
    return annotations[-1]["name"] if annotations else "(no operator)"


def ops_by_thread(events):
    """Host ops per (pid, tid), with their start and end as arrays (the owner lookups are many)."""
    threads = defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation"):
            threads[(e["pid"], e["tid"])].append(e)
    return {k: (v, np.array([e["ts"] for e in v]), np.array([e["ts"] + e["dur"] for e in v]))
            for k, v in threads.items()}


def check_report(report, events):
    expected = expected_memory(events)
    devices = {r["device"]: r for r in report["memory_devices"]}
    assert set(devices) == set(expected)
    origin = min(e["ts"] for e in events if e.get("name") == "[memory]")
    for name, want in expected.items():
        got = devices[name]
        for key in ("events", "allocations", "frees", "before_profiling_bytes", "peak_allocated_bytes",
                    "peak_reserved_bytes", "final_allocated_bytes", "min_allocated_bytes"):
            assert got[key] == want[key], (name, key)
        assert got["peak_allocated_us"] == pytest.approx(want["peak_ts"] - origin, abs=1e-3), name
        # Holders: every one (--top 0), summing to the peak exactly.
        holders = {r["operator"]: r["bytes"] for r in report["memory_at_peak"] if r["device"] == name}
        assert holders == want["holders"], name
        assert sum(holders.values()) == want["peak_allocated_bytes"]
        steps = {r["step"]: r["peak_allocated_bytes"] for r in report["memory_steps"] if r["device"] == name}
        assert steps == want["steps"], name
        # The thinned timeline keeps the exact peak.
        timeline = [r for r in report["memory_timeline"] if r["device"] == name]
        assert max(r["allocated_bytes"] for r in timeline) == want["peak_allocated_bytes"]
        assert len(timeline) <= 3 * 50 + 2  # 3 per bucket, and the first and last events
    return expected


@pytest.mark.skipif(not DF_INDEX.is_file(), reason=f"shared trace not found at {DF_INDEX}")
def test_df_index_resolver_memory(run_cli):
    report, _ = run_cli("memory", DF_INDEX, "--top", 0, "--points", 50)
    expected = check_report(report, load_events(DF_INDEX))
    # The figures of ../shared/reference/anchor-analyses.md, section 3.2.
    assert expected["CUDA 1"]["events"] == 26770 and expected["CPU"]["events"] == 1240
    assert report["memory_devices"][1]["peak_allocated_bytes"] == 6_629_508_096
    assert report["memory_devices"][1]["before_profiling_bytes"] == 4_096_614_400
    (cuda,) = [r for r in report["memory_ranks"] if r["device_type"] == "CUDA"]
    assert cuda["ranks"] == 1 and cuda["imbalance"] == pytest.approx(1.0)


@pytest.fixture(scope="module")
def mlp_profile(tmp_path_factory):
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    out = tmp_path_factory.mktemp("memory")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True) as prof:
        for _ in range(3):
            x, y = torch.randn(128, 64), torch.randint(0, 10, (128,))
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    trace = out / "mlp.json"
    prof.export_chrome_trace(str(trace))
    rows = defaultdict(lambda: [0, 0, 0])
    for e in prof.key_averages():
        r = rows[e.key]
        r[0] += e.count
        r[1] += e.cpu_memory_usage
        r[2] += e.self_cpu_memory_usage
    return trace, dict(rows)


def test_recorded_mlp_memory(run_cli, mlp_profile):
    trace, _ = mlp_profile
    report, _ = run_cli("memory", trace, "--top", 0, "--points", 50)
    expected = check_report(report, load_events(trace))
    assert set(expected) == {"CPU"}
    assert expected["CPU"]["peak_allocated_bytes"] > 0
    # The model's parameters were allocated before profiling, but a CPU trace cannot say how much
    # (its Total Allocated starts from what the profiler saw): unknown, never 0 (issue 31).
    assert report["memory_devices"][0]["before_profiling_bytes"] is None


@pytest.fixture(scope="module")
def mlp_stack_profile(tmp_path_factory):
    """The MLP under with_stack=True (python_function events in the trace and in key_averages()), with
    Adam created and stepped before profiling, and a record_function annotation around the forward."""
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile, record_function

    out = tmp_path_factory.mktemp("memory_stack")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(128, 64), torch.randint(0, 10, (128,))
    torch.nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()  # optimizer state allocated before profiling
    optimizer.zero_grad()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, with_stack=True,
                 record_shapes=True) as prof:
        for _ in range(2):
            with record_function("## forward ##"):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    trace = out / "mlp_stack.json"
    prof.export_chrome_trace(str(trace))
    rows = defaultdict(lambda: [0, 0, 0])
    for e in prof.key_averages():
        r = rows[e.key]
        r[0] += e.count
        r[1] += e.cpu_memory_usage
        r[2] += e.self_cpu_memory_usage
    return trace, dict(rows)


def test_recorded_mlp_operator_memory_columns(run_cli, mlp_profile):
    """Every operator's memory columns equal key_averages()'s for the same profile, by name."""
    check_operator_memory(run_cli, *mlp_profile)


def test_recorded_stack_profile_operator_memory_columns(run_cli, mlp_stack_profile):
    """With with_stack=True, key_averages() lists the python_function events as rows and nests the
    ops under them: every row, python ones included, must equal it (issue 31: `## forward ##` self
    memory was the sum over its ops, not what its python children left)."""
    trace, torch_rows = mlp_stack_profile
    assert sum(1 for k in torch_rows if k.startswith("nn.Module:")) > 0
    check_operator_memory(run_cli, trace, torch_rows)
    report, _ = run_cli("memory", trace, "--top", 0)
    assert report["memory_devices"][0]["before_profiling_bytes"] is None


def check_operator_memory(run_cli, trace, torch_rows):
    ops, _ = run_cli("ops", trace, "--top", 0)
    ours = defaultdict(lambda: [0, 0, 0])
    for r in ops["operators"]:
        o = ours[r["name"]]
        o[0] += r["calls"]
        o[1] += r["cpu_mem_bytes"]
        o[2] += r["self_cpu_mem_bytes"]
    assert set(ours) == set(torch_rows)
    assert any(v[1] > 0 for v in torch_rows.values())
    for name, (count, total, self_bytes) in torch_rows.items():
        assert ours[name] == [count, total, self_bytes], name


@pytest.mark.skipif(not DF_INDEX.is_file(), reason=f"shared trace not found at {DF_INDEX}")
def test_python_api_memory_timeline(run_cli, tmp_path):
    """TraceAnalysis.get_memory_timeline() gives the CLI's tables (the same pipeline)."""
    pytest.importorskip("pandas")
    scaleprof = pytest.importorskip("scaleprof")
    (tmp_path / "df.json.gz").symlink_to(DF_INDEX)
    tables = scaleprof.TraceAnalysis(trace_dir=str(tmp_path)).get_memory_timeline(top=0)
    cli, _ = run_cli("memory", DF_INDEX, "--top", 0)
    assert set(tables) == set(cli)
    devices = tables["memory_devices"]
    assert list(devices["peak_allocated_bytes"]) == [r["peak_allocated_bytes"] for r in cli["memory_devices"]]
    assert int(tables["memory_at_peak"]["bytes"].sum()) == sum(r["peak_allocated_bytes"] for r in cli["memory_devices"])
    assert len(tables["memory_timeline"]) == len(cli["memory_timeline"])
