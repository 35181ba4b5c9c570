"""`scaleprof trace pipeline` on traces real PyTorch writes: torch.distributed.pipelining (PipelineStage
with ScheduleGPipe or Schedule1F1B) over gloo under torchrun, 2 and 4 stages (one per rank), m
micro-batches per step (gloo_pipeline.py).

Each stage's forward and backward take a known time per micro-batch (a custom autograd Function that
sleeps besides a small matmul), so the stages are balanced however few cores the machine has: 4 stage
processes on 2 cores would otherwise compete for the CPU. With balanced stages GPipe and 1F1B both
leave each stage idle (p-1)(t_f+t_b) of a step of (m+p-1)(t_f+t_b): the measured bubble of every
stage must be within 10 % (relative) of (p-1)/(m+p-1). With one stage made slower by a known delay,
that stage must be named as the slow one.
"""
import pytest

from conftest import HERE, free_port, run_python, training_env

pytestmark = pytest.mark.timing  # known answers in wall time (conftest.py)

FWD_MS = 20.0
BWD_MS = 20.0
STEPS = 6  # step 0 not profiled, 1 warm-up, 2-5 recorded, the last left out: 3 analysed

# (stages, schedule, micro-batches): 2 and 4 stages, both schedules, m = 4 and 8.
BALANCED = [(2, "gpipe", 4), (2, "1f1b", 8), (4, "gpipe", 8), (4, "1f1b", 4)]


def train(trace_dir, stages, schedule, m, slow_rank=-1, slow_ms=0.0):
    run_python(["-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", stages, "--master_addr",
                "127.0.0.1", "--master_port", free_port(), HERE / "gloo_pipeline.py", "--trace-dir", trace_dir,
                "--schedule", schedule, "--microbatches", m, "--steps", STEPS, "--fwd-ms", FWD_MS, "--bwd-ms", BWD_MS,
                "--slow-rank", slow_rank, "--slow-ms", slow_ms], timeout=150, env=training_env())
    assert len(list(trace_dir.iterdir())) == stages
    return trace_dir


@pytest.fixture(scope="module", params=BALANCED, ids=lambda c: f"p{c[0]}-{c[1]}-m{c[2]}")
def balanced(request, tmp_path_factory):
    stages, schedule, m = request.param
    return request.param, train(tmp_path_factory.mktemp("pipeline") / "traces", stages, schedule, m)


def test_balanced_stages_bubble_is_the_ideal(balanced, run_cli):
    (p, schedule, m), traces = balanced
    out, _ = run_cli("pipeline", traces)
    assert out["notes"] == []
    [pipe] = out["pipelines"]
    assert pipe["stages"] == p and pipe["micro_batches"] == m
    assert pipe["stage_ranks"] == " -> ".join(str(r) for r in range(p))  # activations flow rank 0 -> p-1
    ideal = 100.0 * (p - 1) / (m + p - 1)
    assert pipe["ideal_bubble_pct"] == pytest.approx(ideal, abs=0.01)
    assert pipe["slowest_rank"] is None, out["stages"]  # balanced: nobody named
    stages = out["stages"]
    assert [s["rank"] for s in stages] == list(range(p))
    for s in stages:
        assert s["steps"] == STEPS - 3
        assert s["prev_rank"] == (s["rank"] - 1 if s["rank"] > 0 else None)
        assert s["bubble_pct"] == pytest.approx(ideal, rel=0.10), (schedule, s)
        # The busy time is the stage's m forwards and backwards (plus a little Python and the optimizer).
        assert s["busy_us"] >= m * (FWD_MS + BWD_MS) * 1000
    rows = out["steps"]
    assert len(rows) == p * (STEPS - 3)
    assert all(r["micro_batches"] == m for r in rows)


@pytest.mark.parametrize("stages,schedule,m,slow_rank", [(2, "gpipe", 4, 0), (4, "1f1b", 4, 2)])
def test_slow_stage_is_named(tmp_path, run_cli, stages, schedule, m, slow_rank):
    # 10 ms more in each forward and backward: that stage computes 1.5x as long as the others.
    traces = train(tmp_path / "traces", stages, schedule, m, slow_rank=slow_rank, slow_ms=10.0)
    out, _ = run_cli("pipeline", traces)
    [pipe] = out["pipelines"]
    assert pipe["slowest_rank"] == slow_rank, out["stages"]
    assert pipe["busy_ratio"] > 1.3
    slow = [s for s in out["stages"] if s["slowest"] == "yes"]
    assert [s["rank"] for s in slow] == [slow_rank]
    # The others wait for it: each waits more than the slow stage does.
    others = [s for s in out["stages"] if s["rank"] != slow_rank]
    assert all(s["bubble_us"] > slow[0]["bubble_us"] for s in others)


def test_python_api_and_one_rank_alone(balanced, run_cli):
    """The Python API gives the CLI's tables; one stage's trace alone gives a note, not a pipeline."""
    scaleprof = pytest.importorskip("scaleprof")
    (p, _, m), traces = balanced
    tables = scaleprof.TraceAnalysis(trace_dir=str(traces)).get_pipeline()
    assert list(tables["pipelines"]["micro_batches"]) == [m]
    assert list(tables["stages"]["rank"]) == list(range(p))
    first = sorted(traces.iterdir())[0]
    out, _ = run_cli("pipeline", first)
    assert out["pipelines"] == [] and out["stages"] == []
    assert any("has no trace here" in n["note"] for n in out["notes"]), out["notes"]
