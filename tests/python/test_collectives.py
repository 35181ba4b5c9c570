"""Collectives and stragglers on traces that real PyTorch writes in the test: gloo under torchrun,
2 and 4 ranks, all-reduces of known sizes, and a rank that sleeps a known time before each call."""
import json
import os
import socket
import subprocess

import pytest

from conftest import HERE, run_python

pytestmark = pytest.mark.timing  # a known answer in wall time (conftest.py)

SIZES = [1024, 262144]  # float32 elements of the all-reduces
SLEEP_MS = 40.0
STEPS = 4  # schedule(wait=0, warmup=1, active=3): steps 1, 2 and 3 are recorded


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(trace_dir, nproc, *extra):
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", MASTER_ADDR="127.0.0.1")
    run_python(["-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", nproc,
                "--master_addr", "127.0.0.1", "--master_port", free_port(), HERE / "gloo_collectives.py",
                "--trace-dir", trace_dir, "--steps", STEPS, "--sizes", ",".join(map(str, SIZES)), *extra],
               timeout=110, env=env)
    traces = sorted(trace_dir.iterdir())
    assert len(traces) == nproc, traces
    return trace_dir


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    return torchrun(tmp_path_factory.mktemp("gloo2") / "traces", 2)


@pytest.fixture(scope="module")
def four_ranks_sleeper(tmp_path_factory):
    return torchrun(tmp_path_factory.mktemp("gloo4") / "traces", 4, "--sleep-rank", "2", "--sleep-ms", SLEEP_MS)


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
