#!/usr/bin/env python3
"""The notebook's cells (examples/analyse_traces.ipynb, seed 004's analysis) timed with HTA and with
scaleprof's TraceAnalysis, on the same trace folder, in one run (issue 22: the five HTA cells together
at least 50x faster than with HTA on df_index_resolver).

Each side runs in a fresh Python process of its own venv (HTA: traceinsight 0.6.1 in
.cache/venv-traceinsight, as `make test` installs it, or $SCALEPROF_HTA_PYTHON; scaleprof: .venv with
the module of build/python, or $SCALEPROF_PYTHONPATH) and times, with time.perf_counter inside the
process (imports, pandas' and numpy's included, and interpreter start are not counted, as a notebook
has them before the cells):

    analyzer = TraceAnalysis(trace_dir=DIR)                                   # the "load" cell
    analyzer.get_temporal_breakdown(visualize=False)                           # the five analysis cells
    analyzer.get_idle_time_breakdown(ranks=RANKS, show_idle_interval_stats=True, visualize=False)
    analyzer.get_comm_comp_overlap(visualize=False)
    analyzer.get_cuda_kernel_launch_stats(ranks=RANKS, visualize=False)
    analyzer.get_gpu_kernel_breakdown(visualize=False)

(visualize=False on both sides: the charts' drawing time is plotly's, not the analysis'; RANKS is
--ranks, 1 by default: df_index_resolver's one trace is rank 1, and HTA's default of [0] fails there.) Each side
runs --repeat times, alternating, and the least time of each cell is kept. Prints one Markdown table.

    python3 bench/notebook_cells.py [--trace-dir DIR] [--repeat 5]
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DIR = REPO.parent / "shared" / "traces" / "hta" / "df_index_resolver"

CELLS = [
    ("load", "analyzer = TraceAnalysis(trace_dir=DIR)"),
    ("get_temporal_breakdown", "analyzer.get_temporal_breakdown(visualize=False)"),
    ("get_idle_time_breakdown",
     "analyzer.get_idle_time_breakdown(ranks=RANKS, show_idle_interval_stats=True, visualize=False)"),
    ("get_comm_comp_overlap", "analyzer.get_comm_comp_overlap(visualize=False)"),
    ("get_cuda_kernel_launch_stats", "analyzer.get_cuda_kernel_launch_stats(ranks=RANKS, visualize=False)"),
    ("get_gpu_kernel_breakdown", "analyzer.get_gpu_kernel_breakdown(visualize=False)"),
]

CHILD = """
import json, logging, sys, time, warnings
warnings.filterwarnings("ignore")
import numpy, pandas  # a notebook has them loaded before its cells (HTA imports them with itself)
{import_line}
logging.getLogger("hta").setLevel(logging.ERROR)
DIR = sys.argv[1]
RANKS = [int(r) for r in sys.argv[2].split(",")]
times = {{}}
for name, code in {cells!r}:
    start = time.perf_counter()
    exec(code)
    times[name] = time.perf_counter() - start
print(json.dumps(times))
"""


def run_side(python, import_line, trace_dir, ranks, env):
    code = CHILD.format(import_line=import_line, cells=CELLS)
    out = subprocess.run([python, "-c", code, str(trace_dir), ranks], capture_output=True, text=True, env=env,
                         timeout=900)
    if out.returncode != 0:
        sys.exit(f"{python}: exit {out.returncode}\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trace-dir", default=str(DEFAULT_DIR))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ranks", default="1", help="ranks of the idle and launch cells (HTA's default, [0], is "
                        "not in df_index_resolver, whose one trace is rank 1)")
    args = parser.parse_args()
    trace_dir = Path(args.trace_dir)
    if not trace_dir.is_dir():
        sys.exit(f"skipped: {trace_dir} not found")
    hta_python = os.environ.get("SCALEPROF_HTA_PYTHON", str(REPO / ".cache" / "venv-traceinsight" / "bin" / "python"))
    if not Path(hta_python).exists():
        sys.exit(f"skipped: no HTA venv at {hta_python} (make test installs it)")
    ours_python = str(REPO / ".venv" / "bin" / "python")
    ours_env = dict(os.environ, PYTHONPATH=os.environ.get("SCALEPROF_PYTHONPATH", str(REPO / "build" / "python")))
    hta_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    best = {"hta": {}, "scaleprof": {}}
    for _ in range(args.repeat):
        for side, python, import_line, env in (
            ("hta", hta_python, "from hta.trace_analysis import TraceAnalysis", hta_env),
            ("scaleprof", ours_python, "from scaleprof import TraceAnalysis", ours_env),
        ):
            for name, seconds in run_side(python, import_line, trace_dir, args.ranks, env).items():
                best[side][name] = min(seconds, best[side].get(name, float("inf")))
    print(f"trace folder: {trace_dir}; least of {args.repeat} runs per cell; seconds")
    print()
    print("| cell | HTA 0.6.1 (s) | scaleprof (s) | HTA / scaleprof |")
    print("| --- | ---: | ---: | ---: |")
    for name, _ in CELLS:
        h, s = best["hta"][name], best["scaleprof"][name]
        print(f"| `{name}` | {h:.3f} | {s:.4f} | {h / s:.0f}x |")
    five = [n for n, _ in CELLS[1:]]
    h5, s5 = sum(best["hta"][n] for n in five), sum(best["scaleprof"][n] for n in five)
    print(f"| **the five analysis cells** | {h5:.3f} | {s5:.4f} | **{h5 / s5:.0f}x** |")
    hall, sall = h5 + best["hta"]["load"], s5 + best["scaleprof"]["load"]
    print(f"| all six cells (load included) | {hall:.3f} | {sall:.4f} | {hall / sall:.0f}x |")


if __name__ == "__main__":
    main()
