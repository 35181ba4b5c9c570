#!/usr/bin/env bash
# scaleprof against Holistic Trace Analysis (HTA) on the same trace files, in one run.
#
# Both sides read the traces and compute the five analyses HTA offers (temporal breakdown, kernel
# breakdown, idle time, comm/comp overlap, kernel launch statistics), each as a whole process:
#   scaleprof trace summary --only breakdown,kernels,idle,overlap,launch FILES
#   python bench/hta_peer.py RANK=FILE ...        (pip traceinsight==0.6.1: HTA's current PyPI name)
# Wall time: hyperfine (median of RUNS after a warm-up). Peak memory: /usr/bin/time's maximum RSS
# (median of 3). Prints a Markdown table; `make bench` runs it.
#
# Usage: bench/compare_hta.sh [CASE ...]   cases: df_index_resolver negative_queue nccl trace_filter
# (SKIP_HTA=1: only the reader against the single-core limit, READER_RUNS runs each, default 10;
# SKIP_READER_LIMIT=1: only HTA)
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${SHARED:-../shared/traces/hta}
# The Release build `make bench` makes (build-bench/, like read_limit below), else build/.
SCALEPROF=${SCALEPROF:-$PWD/build-bench/scaleprof}
[ -x "$SCALEPROF" ] || SCALEPROF=$PWD/build/scaleprof
HTA_VENV=${HTA_VENV:-$PWD/.cache/venv-traceinsight}
HTA_PY=${HTA_PY:-$HTA_VENV/bin/python}
HTA_VERSION=0.6.1
RUNS=${RUNS:-5}
OUT=${OUT:-build/bench}
mkdir -p "$OUT"

[ -d "$SHARED" ] || { echo "bench: $SHARED not found (the shared traces are needed)" >&2; exit 1; }
# HTA in a venv of its own: PyPI renamed it `traceinsight` at 0.6.0 (`holistictraceanalysis` stops
# at 0.5.0). The import name is still `hta`.
# pandas < 3, as the Makefile's venv: HTA 0.6.1's critical path fails under pandas 3.
if [ ! -x "$HTA_PY" ] || ! "$HTA_PY" -c "import importlib.metadata as m; assert m.version('traceinsight') == '$HTA_VERSION'; assert int(m.version('pandas').split('.')[0]) < 3" 2>/dev/null; then
  python3 -m venv "$HTA_VENV"
  "$HTA_VENV/bin/pip" install -q "traceinsight==$HTA_VERSION" "pandas<3"
fi
echo "peer: traceinsight $("$HTA_PY" -c "import importlib.metadata as m; print(m.version('traceinsight'))"), pandas $("$HTA_PY" -c "import pandas; print(pandas.__version__)")"
command -v hyperfine >/dev/null || { echo "bench: hyperfine not installed (apt-get install hyperfine)" >&2; exit 1; }

# name|rank=file ...
declare -A CASES=(
  [df_index_resolver]="1=df_index_resolver/df_index_resolver.json.gz"
  [negative_queue]="0=negative_queue_length_values_check/rank0.json.gz"
  [nccl]="0=nccl_parser_config/nccl_data.json.gz"
  [trace_filter]="0=trace_filter/sampled_rank-0.json.gz 1=trace_filter/sampled_rank-1.json.gz"
)
ORDER=(df_index_resolver negative_queue nccl trace_filter)
[ $# -gt 0 ] && ORDER=("$@")
[ "${SKIP_HTA:-0}" = 1 ] && ORDER=()  # only the reader's table below

peak_mb() {  # median of 3 maximum-RSS readings, in MB
  local runs=()
  for _ in 1 2 3; do
    /usr/bin/time -f '%M' -o "$OUT/rss.txt" "$@" >/dev/null 2>&1
    runs+=("$(tail -1 "$OUT/rss.txt")")
  done
  printf '%s\n' "${runs[@]}" | sort -n | sed -n 2p | awk '{printf "%.0f", $1 / 1024}'
}

median_s() {  # median wall seconds from a hyperfine JSON export, for command index $2
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][int(sys.argv[2])]['median'])" "$1" "$2"
}

echo "| trace | ranks | JSON | scaleprof | HTA | speed-up | scaleprof peak RSS | HTA peak RSS | scaleprof RSS / JSON |"
echo "|---|---|---|---|---|---|---|---|---|"
for name in "${ORDER[@]}"; do
  files=()
  specs=()
  json_bytes=0
  for spec in ${CASES[$name]}; do
    f="$SHARED/${spec#*=}"
    files+=("$f")
    specs+=("${spec%%=*}=$f")
    json_bytes=$((json_bytes + $(gzip -dc "$f" | wc -c)))
  done
  ours=("$SCALEPROF" trace summary --only breakdown,kernels,idle,overlap,launch -q "${files[@]}")
  peer=("$HTA_PY" bench/hta_peer.py "${specs[@]}")
  hyperfine --style none --warmup 1 --runs "$RUNS" --export-json "$OUT/$name.json" \
    "${ours[*]}" "${peer[*]}" >/dev/null
  ours_s=$(median_s "$OUT/$name.json" 0)
  peer_s=$(median_s "$OUT/$name.json" 1)
  ours_mb=$(peak_mb "${ours[@]}")
  peer_mb=$(peak_mb "${peer[@]}")
  python3 - "$name" "${#files[@]}" "$json_bytes" "$ours_s" "$peer_s" "$ours_mb" "$peer_mb" <<'PY'
import sys
name, ranks, json_bytes, ours, peer, ours_mb, peer_mb = sys.argv[1:]
json_mb = int(json_bytes) / 1e6
ours, peer = float(ours), float(peer)
print(f"| {name} | {ranks} | {json_mb:.1f} MB | {ours * 1000:.0f} ms | {peer:.2f} s | {peer / ours:.0f}x "
      f"| {ours_mb} MB | {peer_mb} MB | {int(ours_mb) * 1.048576 / json_mb:.2f}x |")
PY
done

# Issue 12: the reader against the single-core limit (ISA-L inflate + simdjson DOM walk of every
# field, build-bench/bench/read_limit) and on 1 vs 2 threads, side by side in one hyperfine run per
# trace: df_index_resolver and a ~500 MB trace generated from it (temporary, deleted at the end).
# The reader end to end is `scaleprof trace summary --only breakdown` (reading plus the cheapest
# analysis). Wall medians, and the CPU seconds (user + system) hyperfine measured: on a machine shared
# with others the CPU time is the steadier figure for one thread.
LIMIT=${LIMIT:-$PWD/build-bench/bench/read_limit}
BIG_BYTES=${BIG_BYTES:-500000000}
# Runs of a second or less vary by 5-10 % from run to run on a shared VM, and hyperfine runs each
# command's runs back to back: 10 keep the 2-vs-1-thread ratio's median steady to about 3 %.
READER_RUNS=${READER_RUNS:-10}
if [ -x "$LIMIT" ] && [ "${SKIP_READER_LIMIT:-0}" != 1 ]; then
  big="$OUT/big-trace.json.gz"
  trap 'rm -f "$big"' EXIT
  python3 bench/make_big_trace.py "$SHARED/df_index_resolver/df_index_resolver.json.gz" "$BIG_BYTES" "$big" >/dev/null
  echo
  echo "| trace | JSON | limit (1 core) | scaleprof 1 thread | / limit | scaleprof 2 threads | 2 vs 1 thread | limit CPU | 1 thread CPU | MB/s per core, 1 thread | MB/s per core, 2 threads | peak RSS 1 thread | RSS / JSON |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for f in "$SHARED/df_index_resolver/df_index_resolver.json.gz" "$big"; do
    name=$(basename "$f" .json.gz)
    json_bytes=$(gzip -dc "$f" | wc -c)
    one=("$SCALEPROF" trace summary --only breakdown -q --threads 1 "$f")
    two=("$SCALEPROF" trace summary --only breakdown -q --threads 2 "$f")
    hyperfine --style none --warmup 1 --runs "$READER_RUNS" --export-json "$OUT/reader-$name.json" \
      "$LIMIT $f" "${one[*]}" "${two[*]}" >/dev/null
    rss=$(peak_mb "${one[@]}")
    python3 - "$name" "$json_bytes" "$OUT/reader-$name.json" "$rss" <<'PY'
import json, sys
name, json_bytes, path, rss = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
r = json.load(open(path))["results"]
limit, one, two = (x["median"] for x in r)
cpu = [x["user"] + x["system"] for x in r]
# Per core: JSON MB per CPU second (user + system) of the whole process, so start-up and the
# analysis after reading count against it.
mb = json_bytes / 1e6
print(f"| {name} | {mb:.1f} MB | {limit:.3f} s | {one:.3f} s | {one / limit:.2f}x | {two:.3f} s "
      f"| {one / two:.2f}x | {cpu[0]:.3f} s | {cpu[1]:.3f} s ({cpu[1] / cpu[0]:.2f}x) | {mb / cpu[1]:.0f} "
      f"| {mb / cpu[2]:.0f} | {rss} MB | {rss * 1.048576e6 / json_bytes:.2f}x |")
PY
  done
fi
