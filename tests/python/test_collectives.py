"""Collectives and stragglers on traces that real PyTorch writes in the test: gloo under torchrun,
2 and 4 ranks, all-reduces of known sizes, and a rank that sleeps a known time before each call.
Clock alignment and matching: the traces rewritten in the test as if from two hosts (host_name) with
a known clock offset, with profiler windows that start a step apart, with Seq or step numbers removed."""
import json
import subprocess
from pathlib import Path

import pytest

from conftest import torchrun

pytestmark = pytest.mark.timing  # a known answer in wall time (conftest.py)

SIZES = [1024, 262144]  # float32 elements of the all-reduces
SLEEP_MS = 40.0
STEPS = 4  # schedule(wait=0, warmup=1, active=3): steps 1, 2 and 3 are recorded


def gloo_traces(trace_dir, nproc, *extra, sizes=SIZES):
    torchrun("gloo_collectives.py", nproc,
             ["--trace-dir", trace_dir, "--steps", STEPS, "--sizes", ",".join(map(str, sizes)), *extra], timeout=110)
    traces = sorted(trace_dir.iterdir())
    assert len(traces) == nproc, traces
    return trace_dir


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    return gloo_traces(tmp_path_factory.mktemp("gloo2") / "traces", 2)


@pytest.fixture(scope="module")
def four_ranks_sleeper(tmp_path_factory):
    return gloo_traces(tmp_path_factory.mktemp("gloo4") / "traces", 4, "--sleep-rank", "2", "--sleep-ms", SLEEP_MS)


def test_all_reduce_sizes_and_bus_bandwidth(two_ranks, run_cli):
    out, _ = run_cli("collectives", two_ranks)
    calls = out["collectives"]
    allreduces = [c for c in calls if c["type"] == "allreduce"]
    # 2 all-reduces per recorded step, 3 steps, matched on both ranks of the default group.
    assert len(allreduces) == 2 * (STEPS - 1)
    assert all(c["status"] == "matched" and c["ranks"] == 2 and c["group_size"] == 2 for c in allreduces)
    assert sorted({c["bytes"] for c in allreduces}) == [4 * n for n in SIZES]  # float32: 4 bytes
    per_rank = out["collective_ranks"]
    for c in allreduces:
        durations = [r["duration_us"] for r in per_rank
                     if r["group"] == c["group"] and r["position"] == c["position"]]
        assert len(durations) == 2
        assert c["latency_us"] == pytest.approx(min(durations), abs=1e-3)
        # algbw = bytes / latency; busbw = algbw * 2(n-1)/n, n = 2 -> factor 1 (GB/s = bytes/ns).
        algbw = c["bytes"] / (c["latency_us"] * 1e3)
        assert c["algbw_gbps"] == pytest.approx(algbw, rel=2e-3)
        assert c["busbw_gbps"] == pytest.approx(algbw * 2 * (2 - 1) / 2, rel=2e-3)
    gathers = [c for c in calls if c["type"] == "allgather"]
    assert len(gathers) == STEPS - 1
    assert all(c["bytes"] == 2 * 4 * SIZES[0] for c in gathers)  # gathered output: 2 ranks x 1024 floats
    assert all(c["busbw_gbps"] == pytest.approx(c["algbw_gbps"] * 0.5, rel=2e-3) for c in gathers)
    broadcasts = [c for c in calls if c["type"] == "broadcast"]
    assert len(broadcasts) == STEPS - 1
    assert all(c["busbw_gbps"] == pytest.approx(c["algbw_gbps"], rel=2e-3) for c in broadcasts)
    summary = {(s["type"], s["size_bucket_bytes"]): s for s in out["collective_summary"]}
    assert summary[("allreduce", 4096)]["calls"] == STEPS - 1
    assert summary[("allreduce", 1048576)]["calls"] == STEPS - 1
    assert out["clocks"][0]["node"] and out["clocks"][0]["ranks"] == 2  # host_name from the traces


def test_four_ranks_all_reduce_factor(four_ranks_sleeper, run_cli):
    out, _ = run_cli("collectives", four_ranks_sleeper)
    allreduces = [c for c in out["collectives"] if c["type"] == "allreduce"]
    assert len(allreduces) == 2 * (STEPS - 1)
    for c in allreduces:
        assert c["status"] == "matched" and c["ranks"] == 4
        assert c["busbw_gbps"] == pytest.approx(c["algbw_gbps"] * 2 * 3 / 4, rel=2e-3)
        assert c["last_rank"] == 2


def test_stragglers_name_the_sleeping_rank(four_ranks_sleeper, run_cli):
    out, _ = run_cli("stragglers", four_ranks_sleeper)
    by_rank = {r["rank"]: r for r in out["stragglers"]}
    assert max(by_rank, key=lambda r: by_rank[r]["wait_imposed_us"]) == 2
    sleeper = by_rank[2]
    assert sleeper["arrived_last"] == sleeper["calls"]  # last at every collective
    assert sleeper["mean_lag_when_last_us"] == pytest.approx(SLEEP_MS * 1e3, rel=0.10)
    calls_per_step = len(SIZES) + 2  # all-reduces, all-gather, broadcast
    for step in out["step_stragglers"]:
        assert step["slowest_rank"] == 2
        # The first call of the trace has no previous collective, hence no lag.
        assert step["calls"] in (calls_per_step - 1, calls_per_step)
        assert step["lag_us"] == pytest.approx(step["calls"] * SLEEP_MS * 1e3, rel=0.10)
    compare = {c["quantity"]: c for c in out["straggler_vs_median"]}
    assert all(c["rank"] == 2 for c in compare.values())
    # The sleep is host idle time on the straggler: about calls_per_step x SLEEP_MS more per step.
    assert compare["host idle"]["difference_us"] == pytest.approx(calls_per_step * SLEEP_MS * 1e3, rel=0.25)


def test_summary_includes_collectives_and_stragglers(two_ranks, run_cli):
    out, _ = run_cli("summary", two_ranks, "--only", "collectives,stragglers")
    assert {"collectives", "collective_summary", "stragglers", "step_stragglers"} <= set(out)


@pytest.mark.parametrize("report", ["collectives", "stragglers"])
def test_shards_merge_to_the_single_run_byte_for_byte(four_ranks_sleeper, scaleprof_cli, tmp_path, report):
    def cli(*args):
        proc = subprocess.run([str(scaleprof_cli), "trace", *map(str, args)], capture_output=True, timeout=60)
        assert proc.returncode == 0, proc.stderr.decode()
        return proc.stdout

    single = cli(report, four_ranks_sleeper, "--format", "json")
    cli(report, four_ranks_sleeper, "--ranks", "2-3", "--partial", tmp_path / "b.json")
    cli(report, four_ranks_sleeper, "--ranks", "0-1", "--partial", tmp_path / "a.json")
    merged = cli("merge", tmp_path / "b.json", tmp_path / "a.json", "--format", "json")
    assert merged == single
    assert json.loads(merged)  # and it is the report, not an empty object
    # A rank in two shards is refused.
    proc = subprocess.run([str(scaleprof_cli), "trace", "merge", tmp_path / "a.json", tmp_path / "a.json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "rank 0 is in two shards" in proc.stderr


# -- Clock alignment and matching (issue 33) ---------------------------------------------------------

# 16 all-reduces a step (one of 256 floats, 15 of one float), an all-gather and a broadcast: 51
# all-reduce-like calls over the 3 recorded steps to estimate a host's clock offset from.
ANCHOR_SIZES = [256] + [1] * 15
ANCHOR_CALLS = (len(ANCHOR_SIZES) + 1) * (STEPS - 1)
HOSTS = {0: "host-a", 1: "host-a", 2: "host-b", 3: "host-b"}


@pytest.fixture(scope="module")
def four_ranks_one_clock(tmp_path_factory):
    return gloo_traces(tmp_path_factory.mktemp("gloo4clock") / "traces", 4, sizes=ANCHOR_SIZES)


@pytest.fixture(scope="module")
def two_ranks_late(tmp_path_factory):
    """Rank 1's profiler window starts a step later: rank 0 records steps 1-3, rank 1 steps 2-4."""
    return gloo_traces(tmp_path_factory.mktemp("gloo2late") / "traces", 2, "--late-rank", "1")


def rewrite(src, dst, edit):
    """Each trace of `src`, passed through edit(trace, rank), written under the same name in `dst`."""
    dst.mkdir(parents=True, exist_ok=True)
    for f in sorted(Path(src).iterdir()):
        trace = json.loads(f.read_text())
        edit(trace, trace["distributedInfo"]["rank"])
        (dst / f.name).write_text(json.dumps(trace))
    return dst


def on_hosts(shift_us=0.0):
    """Ranks 0-1 on host-a, 2-3 on host-b (Kineto's top-level host_name), host-b's clock `shift_us` ahead."""
    def edit(trace, rank):
        assert "host_name" in trace  # where torch 2.13 writes it
        trace["host_name"] = HOSTS[rank]
        if HOSTS[rank] == "host-b" and shift_us:
            for e in trace["traceEvents"]:
                if "ts" in e and e.get("ph") != "M":
                    e["ts"] += shift_us
    return edit


def by_call(out, key="collectives"):
    return {(c["group"], c["position"]): c for c in out[key] if c.get("status", "matched") == "matched"}


def starts(out):
    """(group, position) -> {rank: start_us} of the matched calls."""
    matched = by_call(out)
    rows = {}
    for r in out["collective_ranks"]:
        if (r["group"], r["position"]) in matched:
            rows.setdefault((r["group"], r["position"]), {})[r["rank"]] = r
    return rows


@pytest.mark.parametrize("shift_us", [700.0, -1300.0])
def test_host_clock_offset_recovered(four_ranks_one_clock, run_cli, tmp_path, shift_us):
    one_clock, _ = run_cli("collectives", four_ranks_one_clock)
    same, _ = run_cli("collectives", rewrite(four_ranks_one_clock, tmp_path / "same", on_hosts()))
    shifted_dir = rewrite(four_ranks_one_clock, tmp_path / "shifted", on_hosts(shift_us))
    shifted, _ = run_cli("collectives", shifted_dir)
    raw, _ = run_cli("collectives", shifted_dir, "--no-align")
    assert [c["node"] for c in one_clock["clocks"]] == [one_clock["clocks"][0]["node"]]  # one host: nothing shifted
    clock = {c["node"]: c for c in shifted["clocks"]}
    b, b_same = clock["host-b"], {c["node"]: c for c in same["clocks"]}["host-b"]
    assert clock["host-a"]["offset_us"] == 0 and clock["host-a"]["ranks"] == 2
    assert b["ranks"] == 2 and b["samples"] == ANCHOR_CALLS and b["applied"] == "true"
    assert b["spread_us"] is not None and b["spread_us"] >= 0
    # The shift is recovered on top of what the same traces give unshifted (the estimate's own error
    # on one clock, measured in test_one_clock_named_as_two_hosts), bounds and all.
    assert b["offset_us"] - b_same["offset_us"] == pytest.approx(shift_us, abs=1)
    assert b["offset_lowest_us"] - b_same["offset_lowest_us"] == pytest.approx(shift_us, abs=1)
    assert b["offset_highest_us"] - b_same["offset_highest_us"] == pytest.approx(shift_us, abs=1)
    # The true offset lies within the bounds causality sets, and so does the estimate.
    assert b["offset_lowest_us"] <= shift_us <= b["offset_highest_us"]
    assert b["offset_lowest_us"] <= b["offset_us"] <= b["offset_highest_us"]
    error_us = abs(b["offset_us"] - shift_us)  # = abs(b_same["offset_us"]): the estimate's error

    # Every skew and wait on the aligned clocks is the unshifted traces': the same within 1 us when the
    # hosts are named alike, and within the estimate's error against the one-clock run.
    assert set(by_call(shifted)) == set(by_call(one_clock)) and len(by_call(shifted)) >= ANCHOR_CALLS
    for key, call in by_call(shifted).items():
        assert call["skew_us"] == pytest.approx(by_call(same)[key]["skew_us"], abs=1)
        assert call["skew_us"] == pytest.approx(by_call(one_clock)[key]["skew_us"], abs=error_us + 1)
    waits = {k: {r: row["wait_us"] for r, row in v.items()} for k, v in starts(shifted).items()}
    for key, ranks in starts(same).items():
        for rank, row in ranks.items():
            assert waits[key][rank] == pytest.approx(row["wait_us"], abs=1)
    for key, ranks in starts(one_clock).items():
        for rank, row in ranks.items():
            assert waits[key][rank] == pytest.approx(row["wait_us"], abs=error_us + 1)

    # --no-align: the offsets are estimated alike but not applied, and host-b's starts are off from
    # host-a's by exactly that offset: about the shift.
    raw_b = {c["node"]: c for c in raw["clocks"]}["host-b"]
    assert raw_b["applied"] == "false" and raw_b["offset_us"] == pytest.approx(b["offset_us"], abs=1e-3)
    aligned_starts, raw_starts = starts(shifted), starts(raw)
    for key, ranks in raw_starts.items():
        gap_raw = ranks[2]["start_us"] - ranks[0]["start_us"]
        gap_aligned = aligned_starts[key][2]["start_us"] - aligned_starts[key][0]["start_us"]
        assert gap_raw - gap_aligned == pytest.approx(b["offset_us"], abs=1)
        assert gap_raw - gap_aligned == pytest.approx(shift_us, abs=error_us + 1)
    # Each raw skew spans the clocks' difference: within |shift| of the true skew (the aligned one, up
    # to the estimate's error), and at least |shift| less it.
    for key, call in by_call(shifted).items():
        skew_raw = by_call(raw)[key]["skew_us"]
        assert abs(skew_raw - call["skew_us"]) <= abs(shift_us) + error_us + 1
        assert skew_raw + call["skew_us"] >= abs(shift_us) - error_us - 1

    # The stragglers report aligns alike and says so in its own clocks table.
    straggling, _ = run_cli("stragglers", shifted_dir)
    straggling_same, _ = run_cli("stragglers", tmp_path / "same")
    assert {c["node"]: c["offset_us"] for c in straggling["clocks"]}["host-b"] == pytest.approx(b["offset_us"], abs=1e-3)
    assert straggling["collective_matching"][0]["method"] == "step position"
    for r, r_same in zip(straggling["stragglers"], straggling_same["stragglers"]):
        assert r["rank"] == r_same["rank"] and r["arrived_last"] == r_same["arrived_last"]
        assert r["own_wait_us"] == pytest.approx(r_same["own_wait_us"], abs=ANCHOR_CALLS)


def test_decompose_and_cross_rank_path_align(four_ranks_one_clock, run_cli, tmp_path):
    """decompose's collective waits and critical-path's cross-rank path are cross-rank figures too: on
    host-b's clock shifted by 700 us they equal the unshifted traces' (hosts named alike), and with
    --no-align they do not (waits on the raw clocks grow by about the shift on one host's ranks)."""
    same_dir = rewrite(four_ranks_one_clock, tmp_path / "same", on_hosts())
    shifted_dir = rewrite(four_ranks_one_clock, tmp_path / "shifted", on_hosts(700.0))

    def waits(out):
        return {(r["rank"], r["step"]): r["collective_wait_us"] for r in out["decompose"] if r["rank"] is not None}

    same, _ = run_cli("decompose", same_dir)
    shifted, _ = run_cli("decompose", shifted_dir)
    raw, _ = run_cli("decompose", shifted_dir, "--no-align")
    per_step = ANCHOR_CALLS // (STEPS - 1)  # all-reduce-like calls a step; the last step is not analysed
    assert set(waits(same)) == set(waits(shifted)) and len(waits(same)) == 4 * (STEPS - 2)
    # Each step's wait is a sum over its matched calls, each within 1 us of the unshifted call's.
    for key, wait in waits(same).items():
        assert waits(shifted)[key] == pytest.approx(wait, abs=per_step + 1)
    # On the raw clocks host-a's ranks wait about the shift more at every call (host-b arrives "late").
    for (rank, step), wait in waits(same).items():
        if HOSTS[rank] == "host-a":
            assert waits(raw)[(rank, step)] - wait > 0.5 * 700 * per_step

    def path(out):
        return {(r["step"], r["rank"]): (r["last_arrivals"], r["on_path_us"]) for r in out["cross_rank_path"]}

    same_path, _ = run_cli("critical-path", same_dir)
    shifted_path, _ = run_cli("critical-path", shifted_dir)
    raw_path, _ = run_cli("critical-path", shifted_dir, "--no-align")
    assert path(same_path) and set(path(same_path)) == set(path(shifted_path))
    for key, (arrivals, on_path) in path(same_path).items():
        assert path(shifted_path)[key][0] == arrivals
        assert path(shifted_path)[key][1] == pytest.approx(on_path, abs=per_step + 1)
    # host-b's clock runs ahead on the raw clocks: its ranks arrive last at most calls.
    raw_last = {rank: 0 for rank in HOSTS}
    for (step, rank), (arrivals, _) in path(raw_path).items():
        raw_last[rank] += arrivals
    same_last = {rank: 0 for rank in HOSTS}
    for (step, rank), (arrivals, _) in path(same_path).items():
        same_last[rank] += arrivals
    # Measured: one clock {0: 10, 1: 39, 2: 2, 3: 3}; host-b 700 us ahead, raw {0: 1, 1: 4, 2: 38, 3: 11}.
    a_same, b_same = same_last[0] + same_last[1], same_last[2] + same_last[3]
    assert raw_last[2] + raw_last[3] > b_same + a_same // 2


def test_one_clock_named_as_two_hosts(four_ranks_one_clock, run_cli, tmp_path):
    """Two host names on one physical clock: the true offset is 0. It must lie within the bounds the
    clocks table gives; the estimate (the median difference of the earliest ends) is kept within them.
    gloo's ring all-reduce ends rank after rank (a hop each), so the estimate is off by about the hops
    between the hosts' first finishers: printed, and bounded by the interval's width."""
    out, _ = run_cli("collectives", rewrite(four_ranks_one_clock, tmp_path / "named", on_hosts()))
    b = {c["node"]: c for c in out["clocks"]}["host-b"]
    print(f"one clock, two host names: offset {b['offset_us']:.1f} us, bounds [{b['offset_lowest_us']:.1f}, "
          f"{b['offset_highest_us']:.1f}], IQR {b['spread_us']:.1f} us over {b['samples']} calls")
    assert b["samples"] == ANCHOR_CALLS
    assert b["offset_lowest_us"] <= 0 <= b["offset_highest_us"]
    assert b["offset_lowest_us"] <= b["offset_us"] <= b["offset_highest_us"]
    # The bounds come from real calls: far narrower than a step of this run (about 17 calls of ~1 ms).
    assert b["offset_highest_us"] - b["offset_lowest_us"] < 20_000


def seq_from_steps(trace, rank):
    """Seq as PyTorch numbers a group's calls (0, 1, ... from the group's first call), which torch
    2.13's gloo traces lack: each step makes the same calls, so call i of the window starting at step
    N is N x calls-per-step + i. Written with Group size, the arg that makes the op's collective record."""
    first = min(int(e["name"].split("#")[1]) for e in trace["traceEvents"]
                if e.get("name", "").startswith("ProfilerStep#"))
    ops = sorted((e for e in trace["traceEvents"] if e.get("name", "").startswith("gloo:")), key=lambda e: e["ts"])
    per_step = len(SIZES) + 2
    assert len(ops) == per_step * (STEPS - 1)
    for i, e in enumerate(ops):
        e["args"]["Seq"] = first * per_step + i
        e["args"]["Group size"] = 2


def strip_seq_and_steps(trace, rank):
    trace["traceEvents"] = [e for e in trace["traceEvents"] if not e.get("name", "").startswith("ProfilerStep#")]
    for e in trace["traceEvents"]:
        e.get("args", {}).pop("Seq", None)


def test_profiler_windows_a_step_apart(two_ranks_late, run_cli, tmp_path):
    per_step = len(SIZES) + 2
    # torch 2.13's gloo traces carry no Seq (no record_param_comms op): matched by step position.
    assert "\"Seq\"" not in "".join(f.read_text() for f in two_ranks_late.iterdir())
    for source, method in ((two_ranks_late, "step position"),
                           (rewrite(two_ranks_late, tmp_path / "seq", seq_from_steps), "seq")):
        out, _ = run_cli("collectives", source)
        assert out["collective_matching"] == [
            {"group": "0", "ranks": "0-1", "ranks_loaded": 2, "calls": per_step * STEPS, "matched": 2 * per_step,
             "method": method, "uncertain": "false", "note": None}]
        matched = [c for c in out["collectives"] if c["status"] == "matched"]
        # Steps 2 and 3 are in both windows; steps 1 (rank 0 only) and 4 (rank 1 only) are not paired.
        assert sorted({c["step"] for c in matched}) == [2, 3] and len(matched) == 2 * per_step
        assert all(c["match"] == method and c["uncertain"] == "false" for c in matched)
        assert {c["step"] for c in out["collectives"] if c["status"] == "unmatched"} == {1, 4}
        # Each pair is one call: the same type and size, and on this one clock the two ranks' calls overlap.
        rows = starts(out)
        for c in matched:
            r0, r1 = rows[(c["group"], c["position"])][0], rows[(c["group"], c["position"])][1]
            assert r0["type"] == r1["type"] == c["type"]
            assert r0["start_us"] <= r1["start_us"] + r1["duration_us"]
            assert r1["start_us"] <= r0["start_us"] + r0["duration_us"]
        if method == "seq":
            assert all(c["position"] // per_step in (2, 3) for c in matched)  # the Seq of steps 2 and 3

    # Only the order of the calls left: the windows' first calls are paired, a step apart, and said
    # to be uncertain.
    out, _ = run_cli("collectives", rewrite(two_ranks_late, tmp_path / "order", strip_seq_and_steps))
    [group] = out["collective_matching"]
    assert group["method"] == "order" and group["uncertain"] == "true"
    assert "profiler windows began at different calls" in group["note"]
    matched = [c for c in out["collectives"] if c["status"] == "matched"]
    assert len(matched) == per_step * (STEPS - 1)  # every call paired, a third of them (step 1 with 2) wrongly
    assert all(c["match"] == "order" and c["uncertain"] == "true" for c in matched)
    # The stragglers report, built on these pairs, says the same.
    [group] = run_cli("stragglers", tmp_path / "order")[0]["collective_matching"]
    assert group["method"] == "order" and group["uncertain"] == "true"


def test_python_align_keyword(four_ranks_one_clock, tmp_path):
    scaleprof = pytest.importorskip("scaleprof")
    shifted = rewrite(four_ranks_one_clock, tmp_path / "shifted", on_hosts(700.0))
    analysis = scaleprof.TraceAnalysis(trace_dir=str(shifted))
    aligned, raw = analysis.get_collectives(), analysis.get_collectives(align=False)
    b = aligned["clocks"].set_index("node").loc["host-b"]
    assert b["applied"] == "true" and 0 < b["offset_us"] < 2000
    assert raw["clocks"].set_index("node").loc["host-b"]["applied"] == "false"
    # Host-b's starts against host-a's: off by the offset on the raw clocks.
    def gaps(tables):
        ranks = tables["collective_ranks"].dropna(subset=["wait_us"])
        start = ranks.pivot_table(index=["group", "position"], columns="rank", values="start_us")
        return start[2] - start[0]
    assert ((gaps(raw) - gaps(aligned)) - b["offset_us"]).abs().max() < 1
    assert analysis.get_stragglers(align=False)["clocks"].set_index("node").loc["host-b"]["applied"] == "false"
