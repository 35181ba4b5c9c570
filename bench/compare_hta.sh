#!/usr/bin/env bash
# scaleprof against Holistic Trace Analysis (HTA) on the same trace files, in one run.
#
# Both sides read the traces and compute the five analyses HTA offers (temporal breakdown, kernel
# breakdown, idle time, comm/comp overlap, kernel launch statistics), each as a whole process:
#   scaleprof trace summary --only breakdown,kernels,idle,overlap,launch FILES
#   python bench/hta_peer.py RANK=FILE ...        (pip holistictraceanalysis)
# Wall time: hyperfine (median of RUNS after a warm-up). Peak memory: /usr/bin/time's maximum RSS
# (median of 3). Prints a Markdown table; `make bench` runs it.
#
# Usage: bench/compare_hta.sh [CASE ...]   cases: df_index_resolver negative_queue nccl trace_filter
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${SHARED:-../shared/traces/hta}
SCALEPROF=${SCALEPROF:-$PWD/build/scaleprof}
HTA_PY=${HTA_PY:-$PWD/.venv-bench/bin/python}
RUNS=${RUNS:-5}
OUT=${OUT:-build/bench}
mkdir -p "$OUT"

[ -d "$SHARED" ] || { echo "bench: $SHARED not found (the shared traces are needed)" >&2; exit 1; }
if [ ! -x "$HTA_PY" ]; then
  python3 -m venv .venv-bench
  .venv-bench/bin/pip install -q holistictraceanalysis
fi
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
