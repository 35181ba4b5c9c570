"""`scaleprof trace diff` against HTA's own `TraceDiff.compare_traces` on HTA's trace_compare pair.

HTA compares the first rank and the first iteration by name, with inclusive times. scaleprof's diff
of the same pair has one analysed step per side (ProfilerStep#1009: the last step is dropped, and a
rank with no more steps than the warm-up keeps them), so its per-step medians are that step's figures.
Where both define the figure they must be equal (docs/differences-from-hta.md lists the rest):
* kernels (HTA's DeviceType.GPU rows): count and total duration per name;
* host operators: the number of calls per name, and the time of operators with no child operator
  (self time = inclusive time) other than async collectives (self time 0 by torch's rule).

HTA is run from its own venv (traceinsight 0.6.1 needs pandas < 3): SCALEPROF_HTA_PYTHON, else
.cache/venv-traceinsight/bin/python (bench/compare_hta.sh makes it). Skipped without it or without
../shared.
"""
import json
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import hta_python

REPO = Path(__file__).resolve().parents[2]
PAIR = REPO.parent / "shared" / "traces" / "hta" / "trace_compare"

HTA_SCRIPT = r"""
import json, logging, sys
logging.disable(logging.WARNING)
from hta.trace_diff import TraceDiff, LabeledTrace, DeviceType
a = LabeledTrace("Control", trace_dir=sys.argv[1])
b = LabeledTrace("Test", trace_dir=sys.argv[2])
out = {}
for kind, device in (("all", DeviceType.ALL), ("gpu", DeviceType.GPU)):
    df = TraceDiff.compare_traces(a, b, device_type=device)
    out[kind] = {name: {k: int(row[k]) for k in
                        ("Control_counts", "Control_total_duration", "Test_counts", "Test_total_duration")}
                 for name, row in df.iterrows()}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def hta_figures():
    python = hta_python()
    if not python.is_file():
        pytest.skip("HTA (traceinsight) not found: set SCALEPROF_HTA_PYTHON or run bench/compare_hta.sh")
    if not PAIR.is_dir():
        pytest.skip(f"shared traces not found at {PAIR}")
    proc = subprocess.run([str(python), "-c", HTA_SCRIPT, str(PAIR / "base"), str(PAIR / "test")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def diff(scaleprof_cli):
    if not PAIR.is_dir():
        pytest.skip(f"shared traces not found at {PAIR}")
    proc = subprocess.run([str(scaleprof_cli), "trace", "diff", str(PAIR / "base"), str(PAIR / "test"),
                           "--format", "json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_kernels_agree_with_hta_by_name(hta_figures, diff):
    ours = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])  # a count, a us, b count, b us, summed over rows
    for row in diff["kernels"]:
        ours[row["name"]][0] += row["a_count"]
        ours[row["name"]][1] += row["a_us"]
        ours[row["name_b"] or row["name"]][2] += row["b_count"]
        ours[row["name_b"] or row["name"]][3] += row["b_us"]
    hta = hta_figures["gpu"]
    assert hta, "HTA found no kernel in the first iteration"
    assert set(ours) == set(hta)
    for name, h in hta.items():
        assert ours[name] == [h["Control_counts"], h["Control_total_duration"], h["Test_counts"],
                              h["Test_total_duration"]], name


def test_operator_calls_and_leaf_times_agree_with_hta(hta_figures, diff):
    hta = {name: h for name, h in hta_figures["all"].items() if name not in hta_figures["gpu"]}
    ours = {row["name"]: row for row in diff["operators"]}
    # HTA keeps each ProfilerStep#N apart; the operator table names them all ProfilerStep*.
    steps = [name for name in hta if name.startswith("ProfilerStep#")]
    assert steps == ["ProfilerStep#1009"]
    assert set(ours) == (set(hta) - set(steps)) | {"ProfilerStep*"}
    assert ours["ProfilerStep*"]["a_calls"] == hta["ProfilerStep#1009"]["Control_counts"]
    compared = 0
    for name, h in hta.items():
        if name in steps:
            continue
        row = ours[name]
        assert (row["a_calls"], row["b_calls"]) == (h["Control_counts"], h["Test_counts"]), name
        if name.startswith(("nccl:", "gloo:")):  # async: no self time (torch's rule), HTA counts its span
            assert row["a_us"] == 0
            continue
        # Every other host event of this iteration is a leaf: its self time is HTA's inclusive time.
        assert (row["a_us"], row["b_us"]) == (h["Control_total_duration"], h["Test_total_duration"]), name
        compared += 1
    assert compared >= 4


def test_inclusive_step_time_is_not_self_time(hta_figures, diff):
    # The difference docs/differences-from-hta.md names: HTA's ProfilerStep row is the whole step
    # (inclusive), so summing its rows counts the step's operators twice; here the self times of the
    # step's thread add up to the step.
    step = diff["steps"][0]
    assert step["figure"] == "step"
    assert step["a_us"] == hta_figures["all"]["ProfilerStep#1009"]["Control_total_duration"]
    assert diff["operators"] and sum(
        r["a_us"] for r in diff["operators"] if not r["name"].startswith("nccl:")) == step["a_us"]


NCCL_TRACE = REPO.parent / "shared" / "traces" / "hta" / "nccl_parser_config" / "nccl_data.json.gz"


def run_diff(cli, a, b, *args):
    proc = subprocess.run([str(cli), "trace", "diff", str(a), str(b), "--format", "json", *args],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr


def test_real_trace_against_itself_and_with_one_kernel_slowed(scaleprof_cli, tmp_path):
    """A real NCCL training trace against a copy of itself: no significant change; against a copy
    whose every call of one kernel lasts 50 % longer (written here): that kernel comes first."""
    if not NCCL_TRACE.is_file():
        pytest.skip(f"shared traces not found at {NCCL_TRACE}")
    import gzip

    doc = json.loads(gzip.open(NCCL_TRACE).read())
    same = tmp_path / "same.json"
    same.write_text(json.dumps(doc))
    itself, _ = run_diff(scaleprof_cli, NCCL_TRACE, same)
    for table in ("steps", "kernels", "operators"):
        assert itself[table], table
        assert all(row["significant"] == "no" and row["delta_us"] == 0 for row in itself[table]), table
    # The kernel to slow: the one with the most time in the compared step, not the largest change.
    candidates = [r for r in itself["kernels"] if r["a_us"] > 0]
    slowed_name = max(candidates, key=lambda r: r["a_us"])["name"]
    slowed_events = 0
    for event in doc["traceEvents"]:
        if event.get("cat") == "kernel" and event.get("name") == slowed_name:
            event["dur"] = event["dur"] * 1.5
            slowed_events += 1
    assert slowed_events > 0
    slowed = tmp_path / "slowed.json"
    slowed.write_text(json.dumps(doc))
    diff, _ = run_diff(scaleprof_cli, NCCL_TRACE, slowed)
    first = diff["kernels"][0]
    assert first["name"] == slowed_name
    assert first["significant"] == "yes"
    assert first["b_us"] > first["a_us"]
    # Only kernels of that name changed.
    assert all(r["delta_us"] == 0 for r in diff["kernels"] if r["name"] != slowed_name)
