"""The scalability report's straggler causes (issue 33) on real runs: two ranks under torchrun (gloo)
recording through scaleprof's Python API with the stand-in NVML library (tests/fake_nvml). Rank 1 is
slower in steps 4-7; in one run its GPU's SM clock drops from 1980 to 990 MHz under a software power cap
during exactly those steps, in the other it does not. The report must tie the first run's slow steps to
the clock drop (rank 1, steps 4-7, 990 MHz against the other rank's 1980 MHz, sw_power_cap) and give the
second run's slow steps no clock verdict."""
import csv

import pytest

from conftest import HERE, clock_drop_report

pytestmark = pytest.mark.timing  # the slow steps are sleeps lined up with a wall-clock window

TRAIN = HERE / "straggler_clock_train.py"


@pytest.fixture(scope="module")
def report(tmp_path_factory, scaleprof_cli):
    return clock_drop_report(scaleprof_cli, tmp_path_factory.mktemp("stragglers"), TRAIN,
                             [("drop", ["--clock-drop"]), ("nodrop", [])])


def rows_of(report, run):
    return [r for r in report["json"]["straggler_causes"] if r["run"] == run]


def test_gpu_csv_has_the_clock_and_the_reasons(report):
    with open(report["root"] / "stragglers" / "drop" / "rank-00001" / "gpu.csv") as f:
        rows = list(csv.DictReader(f))
    clocks = {int(r["sm_clock_mhz"]) for r in rows}
    assert clocks == {1980, 990}
    for r in rows:
        assert r["throttle_reasons"] == ("sw_power_cap" if r["sm_clock_mhz"] == "990" else "none")


def test_the_clock_drop_is_named_as_the_cause(report):
    rows = rows_of(report, "drop")
    assert [r["rank"] for r in rows] == [1], rows
    row = rows[0]
    assert row["slow_steps"] == 4 and row["steps"] == "steps 4-7"
    assert row["step_s"] == pytest.approx(0.35, abs=0.05)
    assert row["others_step_s"] == pytest.approx(0.1, abs=0.03)
    assert row["sm_clock_mhz"] == 990 and row["others_sm_clock_mhz"] == 1980
    assert row["normal_sm_clock_mhz"] == 1980
    assert row["throttle_reasons"] == "sw_power_cap"
    assert row["verdict"] == "rank 1 ran at 990 MHz (others 1980 MHz) under sw_power_cap in steps 4-7"


def test_slowness_without_a_clock_drop_gets_no_clock_verdict(report):
    rows = rows_of(report, "nodrop")
    assert [r["rank"] for r in rows] == [1], rows
    row = rows[0]
    assert row["steps"] == "steps 4-7"
    assert row["sm_clock_mhz"] == 1980 and row["others_sm_clock_mhz"] == 1980
    assert row["throttle_reasons"] == "none"
    assert row["verdict"] is None
