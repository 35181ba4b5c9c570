#!/usr/bin/env python3
"""Issue 33's cross-rank analyses against reading the same traces: CPU and peak RSS of each
`scaleprof trace REPORT` over N ranks, beside `trace steps` (reading every rank plus the cheapest
analysis: the baseline), as a ratio (the goal: each analysis within 1.5x of reading, and peak RSS
bounded as the ranks grow).

The ranks are bench/collectives_scale.py's (the shared nccl_parser_config trace, a process group over
all ranks, rank 5 a 3 ms straggler), placed 8 to a host (Kineto's host_name) with each host's clock
shifted by a known offset, so that `collectives`, `stragglers`, `decompose` and `critical-path`
estimate and apply host offsets as on a real multi-node job. Files go to a temporary folder.

    python3 bench/analyses_vs_reading.py [--ranks 256,1024] [--threads 2] [--repeat 3]
                                         [--reports collectives,stragglers,...]
"""
import argparse
import gzip
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import collectives_scale as cs  # noqa: E402

DEFAULT_REPORTS = "collectives,stragglers,decompose,critical-path,phases,pipeline,fsdp"


def place_on_hosts(folder, world, per_host=8):
    """host_name = host-(rank // per_host), and each host's clock moved by a known offset."""
    for r in range(world):
        f = folder / f"rank-{r}.json"
        trace = json.loads(f.read_text())
        host = r // per_host
        trace["host_name"] = f"host-{host}"
        trace["baseTimeNanoseconds"] += (host * 104_729 % 2_000) * 1_000  # up to 2 ms, per host
        f.write_text(json.dumps(trace))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", default="256,1024")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--keep", type=float, default=0.25)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command (the least CPU kept)")
    parser.add_argument("--reports", default=DEFAULT_REPORTS)
    parser.add_argument("--scaleprof", default=str(cs.REPO / "build" / "scaleprof"))
    args = parser.parse_args()
    if not cs.BASE.is_file():
        sys.exit(f"skipped: {cs.BASE} not found")
    if not os.access("/usr/bin/time", os.X_OK):
        sys.exit("needs /usr/bin/time (apt-get install time) to measure peak RSS")
    known = set()
    help_text = os.popen(f"{args.scaleprof} trace --help").read()
    for report in args.reports.split(","):
        if f" {report} " in help_text or f"  {report}" in help_text:
            known.add(report)
    reports = [r for r in args.reports.split(",") if r in known]
    left_out = [r for r in args.reports.split(",") if r not in known]
    base = json.load(gzip.open(cs.BASE))
    events = cs.thinned_events(base, args.keep)
    print(f"{'ranks':>6} {'report':<14} {'CPU s':>7} {'x steps':>8} {'peak RSS MiB':>12} {'x steps':>8}")
    for world in (int(x) for x in args.ranks.split(",")):
        with tempfile.TemporaryDirectory(prefix="scaleprof-bench-") as tmp:
            folder = Path(tmp)
            cs.make_ranks(folder, base, events, world)
            place_on_hosts(folder, world)
            # Alternate the commands, keep each one's least-CPU run: other load only ever adds.
            runs = {r: [] for r in ["steps"] + reports}
            for _ in range(args.repeat):
                for report in runs:
                    runs[report].append(cs.measure(args.scaleprof, folder, args.threads, report))
            _, base_rss, base_cpu = min(runs["steps"], key=lambda r: r[2])
            for report, measured in runs.items():
                _, rss, cpu = min(measured, key=lambda r: r[2])
                print(f"{world:>6} {report:<14} {cpu:>7.2f} {cpu / base_cpu:>8.2f} {rss:>12.1f} {rss / base_rss:>8.2f}")
    if left_out:
        print(f"not in this build: {', '.join(left_out)}")


if __name__ == "__main__":
    main()
