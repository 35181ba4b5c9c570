"""`scaleprof trace pipeline` on GPU (NCCL) traces written by construction: no real GPU pipeline trace was
available, so these files follow Kineto's format for an NCCL pipeline (c10d ops, record_param_comms with
Collective name / Dst Rank / Src Rank / Process Group Ranks, ncclDevKernel_SendRecv kernels, compute
kernels on another stream) and a known device schedule: GPipe with p stages, m micro-batches, every
forward and backward kernel T long. Each stage's device is without computation 2 (p-1) T of its step of
2 (m+p-1) T: the bubble is (p-1)/(m+p-1) exactly, while the host returns from every call at once.
"""
import json

import pytest

T_US = 10_000


def _event(cat, name, pid, tid, ts, dur, args=None):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args or {}}


def _stage_trace(path, rank, stage, stages, m, group_ranks, local_prev, local_next, world_size):
    step_us = 2 * (m + stages - 1) * T_US
    events = [_event("user_annotation", "ProfilerStep#1", 1, 1, 0, step_us)]
    host, corr = 1, 1

    def launch(kernel_ts, kernel_dur, name, stream):
        nonlocal corr
        events.append(_event("cuda_runtime", "cudaLaunchKernel", 1, 1, host + 1, 3, {"correlation": corr}))
        events.append(_event("kernel", name, 0, stream, kernel_ts, kernel_dur,
                             {"device": 0, "stream": stream, "correlation": corr}))
        corr += 1

    def compute(start):
        nonlocal host
        events.append(_event("cpu_op", "aten::mm", 1, 1, host, 5))
        launch(start, T_US, "sm90_xmma_gemm_f16f16_f32", 7)
        host += 6

    def p2p(send, local_peer, kernel_start, kernel_end):
        nonlocal host
        events.append(_event("cpu_op", "c10d::send" if send else "c10d::recv_", 1, 1, host, 10))
        events.append(_event("cpu_op", "record_param_comms", 1, 1, host, 8, {
            "Collective name": "send" if send else "recv", "dtype": "Float", "In msg nelems": 4096,
            "Out msg nelems": 4096, "Group size": len(group_ranks), "Process Group Name": "1",
            "Process Group Ranks": str(group_ranks), ("Dst Rank" if send else "Src Rank"): local_peer}))
        launch(kernel_start, kernel_end - kernel_start, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 20)
        host += 11

    for i in range(m):
        start = (stage + i) * T_US
        if stage > 0:
            p2p(False, local_prev, 0 if i == 0 else start - 100, start)
        compute(start)
        if stage + 1 < stages:
            p2p(True, local_next, start + T_US, start + T_US + 100)
    for j in range(m):
        start = (m + stages - 1 + stages - 1 - stage + j) * T_US
        if stage + 1 < stages:
            p2p(False, local_next, m * T_US if j == 0 else start - 100, start)
        compute(start)
        if stage > 0:
            p2p(True, local_prev, start + T_US, start + T_US + 100)
    events.append(_event("cuda_runtime", "cudaDeviceSynchronize", 1, 1, host, step_us - host))
    events.append(_event("user_annotation", "ProfilerStep#2", 1, 1, step_us, 10))  # closed by the profiler's stop
    path.write_text(json.dumps({"distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world_size},
                                "traceEvents": events}))


def test_device_bubble_over_subgroups(tmp_path, run_cli):
    """Two 2-stage pipelines over the subgroups [0, 2] and [1, 3] of 4 ranks (rank 3 first in the second)."""
    for rank, stage, group in [(0, 0, [0, 2]), (2, 1, [0, 2]), (3, 0, [1, 3]), (1, 1, [1, 3])]:
        _stage_trace(tmp_path / f"rank{rank}.json", rank, stage, 2, 4, group, local_prev=1 - group.index(rank),
                     local_next=1 - group.index(rank), world_size=4)
    out, _ = run_cli("pipeline", tmp_path)
    assert out["notes"] == []
    assert [p["stage_ranks"] for p in out["pipelines"]] == ["0 -> 2", "3 -> 1"]
    assert [p["micro_batches"] for p in out["pipelines"]] == [4, 4]
    for row in out["steps"]:
        assert row["basis"] == "device"
        assert row["step_us"] == pytest.approx(100_000)
        assert row["bubble_us"] == pytest.approx(20_000, abs=1)  # (p-1)/(m+p-1) = 1/5 of the step
        assert row["bubble_pct"] == pytest.approx(row["ideal_pct"])

    scaleprof = pytest.importorskip("scaleprof")
    tables = scaleprof.TraceAnalysis(trace_dir=str(tmp_path)).get_pipeline()
    assert list(tables["stages"]["rank"]) == [0, 2, 3, 1]
    assert set(tables["stages"]["basis"]) == {"device"}
