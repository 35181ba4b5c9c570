"""The critical path in any annotation's window or the whole trace, its edges in order, and the overlay
trace (issue 31 item 2), on HTA's own critical-path traces against HTA 0.6.1's results for them
(../shared/traces/hta-reference/critical_path.json: annotation "[param|...|forward]", instance 1)."""
import json
from pathlib import Path

import pytest

import chromium_trace_engine

SHARED = Path(__file__).resolve().parents[3] / "shared" / "traces"
TRACES = SHARED / "hta" / "critical_path"
REFERENCE = SHARED / "hta-reference" / "critical_path.json"
ANNOTATION = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"

pytestmark = pytest.mark.skipif(not REFERENCE.is_file(), reason=f"no HTA reference results at {REFERENCE}")


def reference(case):
    ref = json.loads(REFERENCE.read_text())[case]
    assert ref["annotation"] == ANNOTATION and ref["instance_id"] == 1
    return ref


def one_file(case):
    [f] = list((TRACES / case).glob("*.json*"))
    return f


def path_of(run_cli, case, *args):
    out, _ = run_cli("critical-path", one_file(case), "--annotation", ANNOTATION, "--instance", "1", *args)
    return out


def test_simple_add_window_equals_htas_path(run_cli):
    ref = reference("simple_add")
    out = path_of(run_cli, "simple_add")
    [row] = out["critical_path"]
    assert row["step"] == 1
    assert row["hta_length_us"] == ref["critical_path_length_us"] == 241724
    for bound_by, pct in ref["summary_pct"].items():
        if not bound_by:
            continue
        ours = 100.0 * row[f"hta_{bound_by}_us"] / row["hta_length_us"]
        assert ours == pytest.approx(pct, abs=0.01), bound_by
    cats = ["computation_us", "communication_us", "host_us", "waiting_for_gpu_us", "idle_us", "waiting_for_rank_us"]
    assert sum(row[c] for c in cats) == pytest.approx(row["step_us"], abs=0.001)


def test_alexnet_window_equals_htas_path(run_cli):
    # cuDNN's streams wait on each other (cudaEventRecord, cudaStreamWaitEvent): the path runs through
    # the FFT kernels on stream 20 that the next kernel on stream 7 waited for, found by the waits'
    # wait_on_cuda_event_record_corr_id and wait_on_stream, and that kernel has no launch delay.
    ref = reference("alexnet")
    [row] = path_of(run_cli, "alexnet")["critical_path"]
    assert row["hta_length_us"] == ref["critical_path_length_us"] == 35834
    for bound_by, pct in ref["summary_pct"].items():
        if bound_by:
            assert 100.0 * row[f"hta_{bound_by}_us"] / row["hta_length_us"] == pytest.approx(pct, abs=0.01), bound_by


def test_events_are_the_path_in_order(run_cli):
    out = path_of(run_cli, "simple_add", "--events")
    [row] = out["critical_path"]
    events = out["critical_path_events"]
    assert len(events) == row["segments"]
    at = 0.0
    for k, e in enumerate(events):
        assert e["seq"] == k
        assert e["offset_us"] == pytest.approx(at, abs=0.002)
        at += e["duration_us"]
    assert at == pytest.approx(row["step_us"], abs=0.01)
    assert sum(e["hta_weight_us"] for e in events) == pytest.approx(row["hta_length_us"], abs=0.01)
    kernels = [e for e in events if e["bound_by"] == "gpu_compute_bound"]
    assert kernels and all(e["cat"] in ("kernel", "gpu_memset", "gpu_memcpy") and e["stream"] >= 0 and e["event_index"] >= 0 for e in kernels)
    assert sum(e["hta_weight_us"] for e in kernels) == pytest.approx(row["hta_gpu_compute_bound_us"], abs=0.01)


def test_whole_trace_is_one_window(run_cli):
    out, _ = run_cli("critical-path", one_file("simple_add"), "--annotation", "")
    [row] = out["critical_path"]
    assert row["step"] == -1
    raw = json.loads(__import__("gzip").open(one_file("simple_add")).read())
    spans = [(e["ts"], e["ts"] + e.get("dur", 0)) for e in raw["traceEvents"] if e.get("ph") == "X"]
    assert row["step_us"] == pytest.approx(max(b for _, b in spans) - min(a for a, _ in spans), abs=0.01)
    assert row["hta_length_us"] <= row["step_us"]


def test_instances_and_missing_ones(run_cli):
    every, _ = run_cli("critical-path", one_file("simple_add"), "--annotation", ANNOTATION)
    # Instance 1 (the one HTA was asked for) lies inside instance 0 on the same thread: taken one by
    # one, the nested instance is left out as nested steps are.
    assert [r["step"] for r in every["critical_path"]] == [0]
    none, _ = run_cli("critical-path", one_file("simple_add"), "--annotation", ANNOTATION, "--instance", "999")
    assert none["critical_path"] == []
    [missing] = none["critical_path_missing"]
    assert "instance 999" in missing["missing"]


def bound(events, flow):
    """The X event on the flow's thread that holds its time (how Chrome and Perfetto bind it)."""
    return [e for e in events if e.get("ph") == "X" and e.get("pid") == flow["pid"] and e.get("tid") == flow["tid"]
            and e["ts"] <= flow["ts"] < e["ts"] + e.get("dur", 0)]


def test_overlay_marks_the_path_and_draws_it(run_cli, tmp_path):
    out = path_of(run_cli, "simple_add", "--events", "--overlay", tmp_path / "overlay")
    [row] = out["critical_path"]
    [written] = list((tmp_path / "overlay").iterdir())
    assert written.name == "overlaid_critical_path_" + one_file("simple_add").name.removesuffix(".gz")
    original = json.loads(__import__("gzip").open(one_file("simple_add")).read())["traceEvents"]
    overlay = json.loads(written.read_text())
    events = overlay["traceEvents"]
    # Every event of the input is kept in place; those on the path are marked as HTA marks them.
    for a, b in zip(original, events):
        b = dict(b, args={k: v for k, v in b.get("args", {}).items() if k != "critical"})
        if "args" not in a:
            b.pop("args") if b["args"] == {} else None
        assert a == b
    marked = [k for k, e in enumerate(events[:len(original)]) if e.get("args", {}).get("critical") == 1]
    on_path = {e["event_index"] for e in out["critical_path_events"]
               if e["type"] == "critical_path_operator" and e["event_index"] >= 0}
    assert marked == sorted(on_path) and marked
    added = events[len(original):]
    # The path's own track: its slices add up to the window, in order.
    slices = [e for e in added if e.get("ph") == "X"]
    assert sum(s["dur"] for s in slices) == pytest.approx(row["step_us"], abs=0.05)
    assert all(b["ts"] >= a["ts"] + a["dur"] - 0.002 for a, b in zip(slices, slices[1:]))
    assert sum(s["args"]["hta_weight_us"] for s in slices) == pytest.approx(row["hta_length_us"], abs=0.05)
    # Flows: each start has its finish, and each binds to an event of its thread.
    starts = {e["id"]: e for e in added if e.get("ph") == "s"}
    ends = {e["id"]: e for e in added if e.get("ph") == "f"}
    assert starts and set(starts) == set(ends)
    types = {e["args"]["type"] for e in starts.values()}
    assert "critical_path_kernel_launch_delay" in types
    for flow in list(starts.values()) + list(ends.values()):
        assert bound(original, flow), flow
    # scaleprof reads the overlay back to the same path.
    again, _ = run_cli("critical-path", written, "--annotation", ANNOTATION, "--instance", "1")
    assert again["critical_path"][0]["hta_length_us"] == row["hta_length_us"]


@pytest.mark.skipif(not chromium_trace_engine.chromium(), reason="no chromium on PATH (make test installs it)")
def test_overlay_opens_in_chromiums_trace_engine(run_cli, tmp_path):
    """The overlay loaded by the engine Chromium opens trace files with (DevTools' Performance panel;
    chrome://tracing is gone from Chromium): every path slice on its own track, every mark kept."""
    path_of(run_cli, "simple_add", "--events", "--overlay", tmp_path / "overlay")
    [written] = list((tmp_path / "overlay").iterdir())
    events = json.loads(written.read_text())["traceEvents"]
    engine = chromium_trace_engine.load_trace(written)
    [track] = [t for t in engine["tracks"] if t["name"] == "critical path"]
    drawn = [e for e in events if e.get("ph") == "X" and e["pid"] == track["pid"]]
    assert len(track["entries"]) == len(drawn) > 100
    for shown, written_slice in zip(track["entries"], drawn):
        assert shown["name"] == written_slice["name"]
        assert shown["ts"] == pytest.approx(written_slice["ts"], abs=1e-3)
        assert shown["dur"] == pytest.approx(written_slice["dur"], abs=1e-3)
    # The marks: the engine shows exactly the events the overlay flags, on their own threads.
    flagged = sorted((e["name"], e["ts"]) for e in events if e.get("ph") == "X"
                     and e.get("args", {}).get("critical") == 1)
    shown_flagged = sorted((e["name"], e["ts"]) for t in engine["tracks"] if t is not track
                           for e in t["entries"] if e["critical"] == 1)
    assert shown_flagged == flagged and len(flagged) > 100


def test_python_api_windows_breakdown_and_overlay(tmp_path):
    pytest.importorskip("pandas")
    scaleprof = pytest.importorskip("scaleprof")
    analysis = scaleprof.TraceAnalysis(trace_files={0: str(one_file("simple_add"))}, trace_dir="")
    graph = analysis.critical_path_analysis(rank=0, annotation=ANNOTATION, instance_id=1)
    assert list(graph["critical_path"]["hta_length_us"]) == [241724]
    breakdown = graph.get_critical_path_breakdown()
    assert {"s_name", "duration_us", "hta_weight_us", "type", "bound_by", "cat", "stream"} <= set(breakdown.columns)
    assert breakdown["hta_weight_us"].sum() == pytest.approx(241724, abs=0.01)
    pair = analysis.critical_path_analysis(rank=0, annotation=ANNOTATION, instance_id=(0, 1))
    [row] = pair["critical_path"].to_dict("records")
    assert row["step"] == 0 and row["step_us"] > graph["critical_path"]["step_us"].iloc[0]
    written = analysis.overlay_critical_path_analysis(0, graph, tmp_path / "o")
    assert Path(written).is_file() and Path(written).parent == tmp_path / "o"
    with pytest.raises(ValueError, match="critical_path_graph"):
        analysis.overlay_critical_path_analysis(0, {}, tmp_path / "o")
