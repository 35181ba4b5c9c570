"""All-to-all imbalance on traces that real PyTorch writes in the test: all_to_all_single over gloo under
torchrun, 2 ranks, known uneven split sizes (rank 0 sends tens of MB to rank 1, every other split is small),
and the counterfactual run that moves the same bytes between the ranks evenly."""
import json
import os
import statistics

import pytest

from conftest import torchrun
from gloo_alltoall import split_matrix

pytestmark = pytest.mark.timing  # the counterfactual is a known answer in wall time (conftest.py)

NPROC = 2
STEPS = 7  # schedule(wait=0, warmup=1, active=6): steps 1..6 recorded
BIG = 8_000_000  # float32 elements rank 0 sends rank 1: 32 MB
SMALL = 1000


def alltoall_traces(trace_dir, mode):
    torchrun("gloo_alltoall.py", NPROC,
             ["--trace-dir", trace_dir, "--mode", mode, "--steps", STEPS, "--big", BIG, "--small", SMALL], timeout=110)
    traces = sorted(trace_dir.iterdir())
    assert len(traces) == NPROC, traces
    return trace_dir


@pytest.fixture(scope="module")
def uneven(tmp_path_factory):
    return alltoall_traces(tmp_path_factory.mktemp("a2a-uneven") / "traces", "uneven")


@pytest.fixture(scope="module")
def even(tmp_path_factory):
    return alltoall_traces(tmp_path_factory.mktemp("a2a-even") / "traces", "even")


def peer_figures(m):
    """max / mean bytes over the pairs of distinct ranks, from the split matrix (elements)."""
    off = [4 * m[i][j] for i in range(len(m)) for j in range(len(m)) if i != j]
    return max(off), sum(off) / len(off)


def test_split_sizes_are_in_the_trace(uneven):
    # gloo writes no record_param_comms: the splits are only in c10d::alltoall_base_'s Concrete Inputs.
    m = split_matrix("uneven", NPROC, BIG, SMALL)
    for path in sorted(uneven.iterdir()):
        trace = json.loads(path.read_text())
        rank = trace["distributedInfo"]["rank"]
        ops = [e for e in trace["traceEvents"] if e.get("name") == "c10d::alltoall_base_"]
        assert len(ops) == STEPS - 1
        for op in ops:
            concrete = op["args"]["Concrete Inputs"]
            assert json.loads(concrete[4]) == m[rank]  # input splits: what this rank sends
            assert json.loads(concrete[3]) == [m[i][rank] for i in range(NPROC)]  # output splits


def test_bytes_per_peer_and_imbalance(uneven, run_cli):
    out, _ = run_cli("collectives", uneven)
    m = split_matrix("uneven", NPROC, BIG, SMALL)
    calls = [c for c in out["alltoall"]]
    assert len(calls) == STEPS - 1
    peer_max, peer_mean = peer_figures(m)
    for c in calls:
        assert c["ranks"] == NPROC and c["annotation"] == "moe_layer"
        assert c["peer_max_bytes"] == peer_max
        assert c["peer_mean_bytes"] == pytest.approx(peer_mean, rel=1e-9)
        assert c["peer_imbalance"] == pytest.approx(peer_max / peer_mean, abs=1e-4)  # 2 x 32 MB / (32 MB + 4 KB)
        assert c["send_max"] == 4 * sum(m[0]) and c["recv_max"] == 4 * sum(m[i][1] for i in range(NPROC))
        assert c["imbalance_cost_us"] == pytest.approx(c["latency_us"] * (1 - peer_mean / peer_max), abs=1e-3)
    peers = out["alltoall_peers"]
    assert len(peers) == (STEPS - 1) * NPROC * NPROC
    for p in peers:
        assert p["bytes"] == 4 * m[p["rank"]][p["peer"]]  # float32: the splits x 4 bytes
    steps = out["alltoall_steps"]
    assert [s["step"] for s in steps] == list(range(1, STEPS))
    by_step = {c["step"]: c for c in calls}
    for s in steps:
        assert s["calls"] == 1 and s["imbalance_cost_us"] == pytest.approx(by_step[s["step"]]["imbalance_cost_us"])
    (layer,) = out["alltoall_annotations"]
    assert layer["annotation"] == "moe_layer" and layer["calls"] == STEPS - 1
    assert layer["imbalance_cost_us"] == pytest.approx(sum(c["imbalance_cost_us"] for c in calls), abs=1e-2)


def test_even_splits_have_no_imbalance(even, run_cli):
    out, _ = run_cli("collectives", even)
    for c in out["alltoall"]:
        assert c["peer_imbalance"] == pytest.approx(1.0) and c["imbalance_cost_us"] == 0


def test_counterfactual_cost_of_imbalance(uneven, even, run_cli):
    """The time the imbalance costs, measured (the uneven run's all-to-all latency minus the even run's,
    medians over the steps), against what scaleprof attributes to it (median per call)."""
    a, _ = run_cli("collectives", uneven)
    b, _ = run_cli("collectives", even)
    measured = statistics.median(c["latency_us"] for c in a["alltoall"]) - \
        statistics.median(c["latency_us"] for c in b["alltoall"])
    attributed = statistics.median(c["imbalance_cost_us"] for c in a["alltoall"])
    print(f"measured {measured:.0f} us, attributed {attributed:.0f} us, uneven latencies "
          f"{[c['latency_us'] for c in a['alltoall']]}, even {[c['latency_us'] for c in b['alltoall']]}")
    # The model (all_to_all_cost.h) gives every pair its own link. Over loopback a transfer is a sending and
    # a receiving thread copying bytes: the even run's two opposite transfers need 4 free cores to run as
    # two links. With fewer, they share the CPUs, the even run is not faster by the full share, and the
    # model's cost is an upper bound (2-core VM, loaded: measured 15.5, 8.0 and 19.9 ms against 21.0, 19.6
    # and 25.9 ms attributed, docs/trace-json.md).
    if (os.cpu_count() or 1) >= 2 * NPROC:
        assert measured == pytest.approx(attributed, rel=0.20)
    else:
        assert measured <= attributed * 1.20


def test_shards_keep_the_peer_figures(uneven, scaleprof_cli, tmp_path):
    """--partial shards carry the split bytes and the annotation: their merge is the single run."""
    import subprocess

    def cli(*args):
        proc = subprocess.run([str(scaleprof_cli), "trace", *map(str, args)], capture_output=True, timeout=60)
        assert proc.returncode == 0, proc.stderr.decode()
        return proc.stdout

    single = cli("collectives", uneven, "--format", "json")
    cli("collectives", uneven, "--ranks", "1", "--partial", tmp_path / "b.json")
    cli("collectives", uneven, "--ranks", "0", "--partial", tmp_path / "a.json")
    assert cli("merge", tmp_path / "a.json", tmp_path / "b.json", "--format", "json") == single
    assert json.loads(single)["alltoall"][0]["annotation"] == "moe_layer"
