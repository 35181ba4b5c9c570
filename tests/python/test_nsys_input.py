"""HTA's API (scaleprof.TraceAnalysis) on an Nsight Systems export (docs/nsys.md): the shared H200
capture's temporal breakdown, checked against the same sums computed here from the file with
Python's own sqlite3 module. Skips without ../shared."""
import sqlite3
from pathlib import Path

import pytest

import scaleprof

REPO = Path(__file__).resolve().parents[2]
CAPTURE = REPO.parent / "shared" / "traces" / "nsys" / "fuser_report1.sqlite"

pytestmark = pytest.mark.skipif(not CAPTURE.exists(), reason=f"shared nsys capture not found at {CAPTURE}")


def union_length(intervals):
    total, cur_start, cur_end = 0, None, None
    for start, end in sorted(intervals):
        if cur_end is None or start > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    if cur_end is not None:
        total += cur_end - cur_start
    return total


def test_temporal_breakdown_of_an_nsys_export():
    db = sqlite3.connect(f"file:{CAPTURE}?mode=ro", uri=True)
    kernels = db.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
    device = list(kernels)
    for table in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"):
        device += db.execute(f"SELECT start, end FROM {table}").fetchall()
    db.close()
    span = max(e for _, e in device) - min(s for s, _ in device)
    idle = span - union_length(device)
    compute = union_length(kernels)  # no NCCL kernels: every kernel is computation

    analysis = scaleprof.TraceAnalysis(trace_files={0: str(CAPTURE)})
    row = analysis.get_temporal_breakdown().to_dict("records")[0]
    assert row["rank"] == 0
    assert row["kernel_time(us)"] == pytest.approx(span / 1000, abs=1e-3)
    assert row["idle_time(us)"] == pytest.approx(idle / 1000, abs=1e-3)
    assert row["compute_time(us)"] == pytest.approx(compute / 1000, abs=1e-3)
    assert row["compute_time(us)"] == pytest.approx(10167.602, abs=1e-3)  # the 18 kernels' 10.17 ms
