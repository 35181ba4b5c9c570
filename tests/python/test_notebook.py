"""examples/analyse_traces.ipynb (seed 004's analysis, cell for cell, with scaleprof.TraceAnalysis)
executed by Jupyter's nbclient in a real kernel, on HTA's two-rank trace_filter traces: no cell may
fail, and the DataFrames it shows must hold the figures the CLI computes for the same traces."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "examples" / "analyse_traces.ipynb"
TRACES = REPO.parent / "shared" / "traces" / "hta" / "trace_filter"

nbformat = pytest.importorskip("nbformat", reason="nbformat not installed (make test installs it)")
nbclient = pytest.importorskip("nbclient", reason="nbclient not installed (make test installs it)")
pytest.importorskip("pandas", reason="pandas not installed: TraceAnalysis' DataFrames need it")


def cli(*args):
    exe = os.environ.get("SCALEPROF_CLI", str(REPO / "build" / "scaleprof"))
    out = subprocess.run([exe, *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def outputs_text(cell):
    text = ""
    for o in cell.get("outputs", []):
        text += o.get("text", "") + str(o.get("data", {}).get("text/plain", "")) + "\n"
    return text


@pytest.mark.skipif(not TRACES.is_dir(), reason=f"{TRACES} not found (../shared)")
def test_notebook_runs_every_cell_with_the_engines_figures(monkeypatch):
    # The kernel is the venv's: its python first on the PATH (kernel.json says "python"), charts
    # drawn by matplotlib (the kernel's inline backend: PNG in the notebook).
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("SCALEPROF_CHARTS", "matplotlib")
    monkeypatch.setenv("SCALEPROF_NOTEBOOK_TRACES", str(TRACES))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the notebook without outputs"
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    for c in code:
        assert not any(o.output_type == "error" for o in c.get("outputs", [])), c.source
    by_source = {c.source.strip().splitlines()[-1]: outputs_text(c) for c in code}

    assert "[0, 1]" in by_source["analyzer.ranks"]
    # Temporal breakdown: HTA's columns, the CLI's microseconds for both ranks.
    temporal = by_source["analyzer.get_temporal_breakdown(visualize=True)"]
    assert "idle_time(us)" in temporal and "compute_time_pctg" in temporal
    for row in cli("trace", "breakdown", str(TRACES), "--format", "json", "-q"):
        if row["rank"] is not None:
            assert f"{row['idle_us']:.1f}" in temporal, (row, temporal)
            assert f"{row['compute_us']:.1f}" in temporal, (row, temporal)
    # The matplotlib chart was drawn in the kernel.
    assert any(o.output_type == "display_data" and "image/png" in o.get("data", {})
               for c in code if "get_temporal_breakdown" in c.source for o in c.outputs)
    idle = by_source["analyzer.get_idle_time_breakdown(show_idle_interval_stats=True, visualize_pctg=False)"]
    assert "host_wait" in idle and "kernel_wait" in idle and "idle_time_ratio" in idle
    overlap = by_source["overlap_df"]
    for row in cli("trace", "overlap", str(TRACES), "--format", "json", "-q"):
        if row["rank"] is not None and row["comm_comp_overlap_pct"] is not None:
            assert f"{row['comm_comp_overlap_pct']:.6f}" in overlap, (row, overlap)
    kernels = by_source["analyzer.get_gpu_kernel_breakdown(visualize=False)"]
    assert "COMMUNICATION" in kernels and "COMPUTATION" in kernels and "percentage" in kernels
