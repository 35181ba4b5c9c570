"""The critical path against HTA 0.6.1 (PyPI traceinsight) run live on small traces that each test one
rule (tests/python/critical_path_cases.py): a GPU tail with no later sync, a stream sync, an event
sync, a blocking copy, nested annotations. scaleprof's HTA length and its split by bound_by
(`hta_*_us`) must equal HTA's `get_critical_path_breakdown()` summed, and its categories must still
add up to the step."""
import pytest

from conftest import run_hta_on_cases
from critical_path_cases import write_cases

BOUND_BY = ["cpu_bound", "gpu_compute_bound", "gpu_communication_bound", "gpu_kernel_kernel_overhead",
            "gpu_kernel_launch_overhead"]
CATEGORIES = ["computation_us", "communication_us", "host_us", "waiting_for_gpu_us", "idle_us",
              "waiting_for_rank_us"]

HTA_SCRIPT = r"""
import contextlib, glob, io, json, logging, sys, warnings
warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
out = {}
args = sys.argv[1:]
for name, folder in zip(args[::2], args[1::2]):
    with contextlib.redirect_stdout(io.StringIO()):
        a = TraceAnalysis(trace_files={0: glob.glob(folder + "/*.json")[0]}, trace_dir="")
        g, ok = a.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=0)
        df = g.get_critical_path_breakdown()
    out[name] = {"length_us": float(df.duration.sum()),
                 "by": {str(k): float(v) for k, v in df.groupby("bound_by").duration.sum().items()}}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    return write_cases(tmp_path_factory.mktemp("critical_path_cases"))


@pytest.fixture(scope="module")
def hta(cases):
    return run_hta_on_cases(HTA_SCRIPT, cases)


# HTA 0.6.1's lengths on these traces, as run live when the test was written: the test fails if
# HTA's live result moves from them too, so a changed HTA cannot pass unnoticed.
EXPECTED_HTA_US = {"gpu_tail": 1450, "stream_sync": 980, "event_sync": 790, "blocking_copy": 700, "nested": 1270}


@pytest.mark.parametrize("case", sorted(EXPECTED_HTA_US))
def test_length_and_bound_by_equal_htas(case, cases, hta, run_cli):
    ref = hta[case]
    assert ref["length_us"] == EXPECTED_HTA_US[case]
    out, _ = run_cli("critical-path", cases[case])
    [row] = out["critical_path"]
    assert row["hta_length_us"] == pytest.approx(ref["length_us"], abs=0.001), row
    for b in BOUND_BY:
        assert row[f"hta_{b}_us"] == pytest.approx(ref["by"].get(b, 0.0), abs=0.001), (b, row, ref)
    assert sum(row[k] for k in CATEGORIES) == pytest.approx(row["step_us"], abs=0.001), row


def test_a_gpu_tail_bounds_the_step(cases, run_cli):
    """The issue's smallest case: the path ends on the kernel, not on the host."""
    out, _ = run_cli("critical-path", cases["gpu_tail"])
    [row] = out["critical_path"]
    assert row["computation_us"] == pytest.approx(1400)
    assert row["idle_us"] == pytest.approx(50)  # after the kernel, to the step's end
    top = {r["name"]: r for r in out["critical_path_top"]}
    assert top["sm90_gemm"]["path_us"] == pytest.approx(1400)
    assert top["(after the device work)"]["path_us"] == pytest.approx(50)


def test_waits_are_named_by_the_work_waited_for(cases, run_cli):
    out, _ = run_cli("critical-path", cases["stream_sync"])
    [row] = out["critical_path"]
    assert row["waiting_for_gpu_us"] == pytest.approx(10)  # gemm's end at 740 -> the sync's end at 750
    assert any(r["name"] == "wait for: gemm" for r in out["critical_path_top"])
    # The blocking copy waited for its copy: its span is waiting for the GPU, weighed in full by HTA.
    out, _ = run_cli("critical-path", cases["blocking_copy"])
    [row] = out["critical_path"]
    assert row["waiting_for_gpu_us"] == pytest.approx(490)
    assert row["hta_cpu_bound_us"] == pytest.approx(700)
