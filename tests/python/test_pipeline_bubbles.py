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

from conftest import pipeline_bubble_bounds, torchrun

pytestmark = pytest.mark.timing  # known answers in wall time (conftest.py)

FWD_MS = 80.0
BWD_MS = 80.0
STEPS = 6  # step 0 not profiled, 1 warm-up, 2-5 recorded, the last left out: 3 analysed
SLOW_MS = 40.0  # the slow stage's extra time in each forward and backward: 1.5x the others' compute

# Per number of stages, one torchrun launch running these one after the other: (schedule, m, slow rank).
RUNS = {2: [("gpipe", 4, -1), ("1f1b", 8, -1), ("gpipe", 4, 0)],
        4: [("gpipe", 8, -1), ("1f1b", 4, -1), ("1f1b", 4, 2)]}
BALANCED = [(p, schedule, m) for p, runs in RUNS.items() for schedule, m, slow in runs if slow < 0]
SLOW = [(p, schedule, m, slow) for p, runs in RUNS.items() for schedule, m, slow in runs if slow >= 0]


def run_name(schedule, m, slow=-1):
    return f"{schedule}-m{m}" + (f"-slow{slow}" if slow >= 0 else "")


@pytest.fixture(scope="module")
def launches(tmp_path_factory):
    """Trace directory per (stages, run name), each launch made on first use."""
    made = {}

    def traces(stages, name):
        if stages not in made:
            root = tmp_path_factory.mktemp(f"pipeline-p{stages}")
            runs = ",".join(f"{s}:{m}" + (f":{slow}:{SLOW_MS}" if slow >= 0 else "") for s, m, slow in RUNS[stages])
            torchrun("gloo_pipeline.py", stages, ["--trace-dir", root, "--runs", runs, "--steps", STEPS, "--fwd-ms",
                                                  FWD_MS, "--bwd-ms", BWD_MS], timeout=300)
            made[stages] = root
        directory = made[stages] / name
        assert len(list(directory.iterdir())) == stages
        return directory

    return traces


@pytest.mark.parametrize("p,schedule,m", BALANCED, ids=[f"p{p}-{s}-m{m}" for p, s, m in BALANCED])
def test_balanced_stages_bubble_is_the_ideal(launches, run_cli, p, schedule, m):
    out, _ = run_cli("pipeline", launches(p, run_name(schedule, m)))
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
        # The ideal plus each slot's P2P transfer and schedule overhead (conftest.py).
        low, high = pipeline_bubble_bounds(p, m, s["step_us"])
        assert low <= s["bubble_pct"] <= high, (schedule, s, low, high)
        # The busy time is the stage's m forwards and backwards (plus a little Python and the optimizer).
        assert s["busy_us"] >= m * (FWD_MS + BWD_MS) * 1000
    rows = out["steps"]
    assert len(rows) == p * (STEPS - 3)
    assert all(r["micro_batches"] == m for r in rows)


@pytest.mark.parametrize("p,schedule,m,slow", SLOW, ids=[f"p{p}-{s}-m{m}-slow{r}" for p, s, m, r in SLOW])
def test_slow_stage_is_named(launches, run_cli, p, schedule, m, slow):
    out, _ = run_cli("pipeline", launches(p, run_name(schedule, m, slow)))
    [pipe] = out["pipelines"]
    assert pipe["slowest_rank"] == slow, out["stages"]
    assert pipe["busy_ratio"] > 1.1  # 1.5 in compute; the Python and optimizer time common to all stages dilutes it
    named = [s for s in out["stages"] if s["slowest"] == "yes"]
    assert [s["rank"] for s in named] == [slow]
    # The others wait for it: each waits longer than the slow stage does.
    others = [s for s in out["stages"] if s["rank"] != slow]
    assert all(s["bubble_us"] > named[0]["bubble_us"] for s in others)
    # `trace summary` carries the same line per pipeline (and only that table of the report).
    summary, _ = run_cli("summary", launches(p, run_name(schedule, m, slow)))
    assert summary["pipelines"] == out["pipelines"]
    assert "stages" not in summary


def test_python_api_and_one_rank_alone(launches, run_cli):
    """The Python API gives the CLI's tables; one stage's trace alone gives a note, not a pipeline."""
    scaleprof = pytest.importorskip("scaleprof")
    traces = launches(4, run_name("gpipe", 8))
    tables = scaleprof.TraceAnalysis(trace_dir=str(traces)).get_pipeline()
    assert list(tables["pipelines"]["micro_batches"]) == [8]
    assert list(tables["stages"]["rank"]) == [0, 1, 2, 3]
    first = sorted(traces.iterdir())[0]
    out, _ = run_cli("pipeline", first)
    assert out["pipelines"] == [] and out["stages"] == []
    summary, _ = run_cli("summary", first)
    assert "pipelines" not in summary  # no pipeline, no line in the summary
    assert any("has no trace here" in n["note"] for n in out["notes"]), out["notes"]
