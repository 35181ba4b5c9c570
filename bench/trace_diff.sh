#!/usr/bin/env bash
# `scaleprof trace diff A B` against reading one trace (issue 20: the diff of two df_index_resolver
# traces takes at most 2.5x the time of reading one).
#
# Three whole processes on the same trace, timed with hyperfine (median of RUNS after a warm-up):
#   read one:  scaleprof trace steps -q A           (reads every event; the lightest report)
#   summary:   scaleprof trace summary -q A         (reads it and runs every analysis, for scale)
#   diff:      scaleprof trace diff -q A B          (B: a copy of A in another file)
# Prints a Markdown table with the ratio diff / read one, and the machine's load average before and
# after (run it with the machine as quiet as you can: the ratio holds on a busy machine, the times
# do not; bench/trace_diff_cpu.py gives the CPU time, which does not depend on the load).
#
# Usage: bench/trace_diff.sh [TRACE]   (default ../shared/traces/hta/df_index_resolver/df_index_resolver.json.gz)
set -euo pipefail
cd "$(dirname "$0")/.."
TRACE=${1:-../shared/traces/hta/df_index_resolver/df_index_resolver.json.gz}
SCALEPROF=${SCALEPROF:-$PWD/build-bench/scaleprof}
[ -x "$SCALEPROF" ] || SCALEPROF=$PWD/build/scaleprof
RUNS=${RUNS:-10}
THREADS=${THREADS:-2}
OUT=${OUT:-build/bench}
mkdir -p "$OUT"
[ -f "$TRACE" ] || { echo "bench: $TRACE not found (the shared traces are needed)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "bench: hyperfine not installed (apt-get install hyperfine)" >&2; exit 1; }

COPY="$OUT/trace_diff_copy.${TRACE##*.}"
[ "${TRACE%.gz}" != "$TRACE" ] && COPY="$OUT/trace_diff_copy.json.gz"
cp "$TRACE" "$COPY"

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
hyperfine --style none --warmup 1 --runs "$RUNS" --export-json "$OUT/trace_diff.json" \
  "$SCALEPROF trace steps -q --threads $THREADS $TRACE" \
  "$SCALEPROF trace summary -q --threads $THREADS $TRACE" \
  "$SCALEPROF trace diff -q --threads $THREADS $TRACE $COPY" >/dev/null
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$OUT/trace_diff.json" "$TRACE" "$SCALEPROF" "$load_before" "$load_after" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
read, summary, diff = (r["median"] for r in results)
spread = lambda r: f'{r["min"] * 1e3:.0f}-{r["max"] * 1e3:.0f}'
print(f"trace: {sys.argv[2]}\nscaleprof: {sys.argv[3]}\nload average before: {sys.argv[4]}, after: {sys.argv[5]}")
print("| work | median (ms) | min-max (ms) | / read one |")
print("| --- | ---: | ---: | ---: |")
for name, r in zip(("read one (`trace steps`)", "`trace summary`", "`trace diff A B`"), results):
    print(f'| {name} | {r["median"] * 1e3:.0f} | {spread(r)} | {r["median"] / read:.2f}x |')
PY
