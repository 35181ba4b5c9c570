"""Straggler causes under synchronous DDP (issue 33 item 6): two ranks under torchrun train with DDP over gloo,
recorded through scaleprof's Python API with the stand-in NVML library (tests/fake_nvml) and profiled. Rank 1
is slower in steps 4-7 (a known sleep before its forward) while its GPU's SM clock drops from 1980 to 990 MHz
under a software power cap. The gradient all-reduce makes both ranks' step times equal, so step time names no
straggler; the traces do (rank 0 waited for rank 1 at the matched all-reduces in those steps), and the report
must tie rank 1's steps 4-7 to the clock drop."""
import re

import pytest

from conftest import HERE, clock_drop_report

pytestmark = pytest.mark.timing  # the slow steps are sleeps lined up with a wall-clock window

TRAIN = HERE / "straggler_ddp_train.py"
EXTRA_S = 0.2  # straggler_ddp_train.py


@pytest.fixture(scope="module")
def report(tmp_path_factory, scaleprof_cli):
    return clock_drop_report(scaleprof_cli, tmp_path_factory.mktemp("stragglers-ddp"), TRAIN,
                             [("drop", ["--clock-drop"])])


def step_seconds(root, rank):
    """Each step's duration from the rank's steps.csv."""
    import csv
    (path,) = (root / "stragglers-ddp" / "drop").glob(f"rank-{rank:05d}/steps.csv")
    with open(path) as f:
        return {int(r["step"]): float(r["duration_s"]) for r in csv.DictReader(f)}


def test_step_times_are_equal(report):
    # Synchronous: rank 0's slow steps last as long as rank 1's (it waited at the all-reduce).
    a, b = step_seconds(report["root"], 0), step_seconds(report["root"], 1)
    for step in range(4, 8):
        assert a[step] == pytest.approx(b[step], abs=0.03), (a, b)
        assert b[step] > 0.2


def test_the_clock_drop_is_tied_to_the_rank_the_others_waited_for(report):
    rows = {r["rank"]: r for r in report["json"]["straggler_causes"] if r["run"] == "drop"}
    # Rank 0 is listed only where the loaded machine's jitter made one of its steps slow (by step time, or as
    # the last to an all-reduce by more than the 10 ms floor), never in steps 4-7; its clock stayed normal, so
    # it gets no verdict.
    assert 1 in rows and set(rows) <= {0, 1}, rows
    if 0 in rows:
        print("rank 0 listed:", rows[0])
        assert rows[0]["verdict"] is None and rows[0]["sm_clock_mhz"] == 1980, rows[0]
        assert not steps_of(rows[0]["steps"]) & set(range(4, 8)), rows[0]
    row = rows[1]
    # Steps 4-7 are the ones made slow. On a loaded machine (2 cores, other builds) rank 1 is now and then the
    # last to an all-reduce by more than the 10 ms floor in another step too, which is then listed as well (a
    # real wait, not an error): at most one such step is accepted, and the medians below stay those of 4-7.
    listed = steps_of(row["steps"])
    assert set(range(4, 8)) <= listed and len(listed) <= 5, row
    assert row["slow_steps"] == len(listed)
    assert row["step_s"] == pytest.approx(row["others_step_s"], abs=0.03)
    assert row["waited_for_s"] == pytest.approx(EXTRA_S, abs=0.06)
    assert row["sm_clock_mhz"] == 990 and row["others_sm_clock_mhz"] == 1980
    assert row["throttle_reasons"] == "sw_power_cap"
    assert re.fullmatch(r"rank 1 ran at 990 MHz \(others 1980 MHz\) under sw_power_cap in steps [0-9,-]+, where the "
                        r"others waited \d+ ms for it", row["verdict"]), row["verdict"]
    assert f"in {row['steps']}," in row["verdict"]


def steps_of(text):
    """{4, 5, 6, 7} from "steps 4-7"."""
    assert text.startswith("steps "), text
    out = set()
    for part in text[len("steps "):].split(","):
        first, _, last = part.partition("-")
        out |= set(range(int(first), int(last or first) + 1))
    return out
