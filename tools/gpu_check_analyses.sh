#!/bin/bash
# Issue 23's analyses on real CUDA traces, with torch's own answers beside them, in one short run on a
# machine with an NVIDIA GPU: tools/gpu_record_analyses.py records a transformer block (shapes and
# memory) and bf16 matrix products; every `scaleprof trace` analysis then reads them (JSON). What is
# compared afterwards, off the GPU: FLOPs against FlopCounterMode, achieved TFLOP/s and MFU of the
# products against CUDA-event timing, the memory columns against key_averages(), the peak against
# torch.cuda.max_memory_allocated(). Everything is packed into $OUT/gpu_analyses.tar.gz.
#
#   OUT=/tmp/out bash tools/gpu_check_analyses.sh
set -u
OUT=${OUT:-/tmp/gpu-analyses-out}
work=/tmp/gpu-analyses
mkdir -p "$OUT" "$work/logs" "$work/scaleprof"
log() { echo "== $(date +%T) $*"; }
py=$(command -v python3)

log "machine"
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv
"$py" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"
log "build"
# shellcheck source=tools/gpu_build.sh
source tools/gpu_build.sh || exit 1
log "record"
timeout 300 "$py" tools/gpu_record_analyses.py "$work/traces" 2>&1 | grep -v USDT | tail -40
log "scaleprof on the traces"
for name in transformer matmul; do
  for sub in summary ops flops memory counters critical-path; do
    "$scaleprof" trace "$sub" --help >/dev/null 2>&1 || { echo "no trace $sub: skipped"; continue; }
    "$scaleprof" trace "$sub" "$work/traces/$name.pt.trace.json" --format json \
      >"$work/scaleprof/$name-$sub.json" 2>"$work/scaleprof/$name-$sub.err"
    echo "$name $sub: exit $?, $(wc -c <"$work/scaleprof/$name-$sub.json") bytes"
    COLUMNS=160 "$scaleprof" trace "$sub" "$work/traces/$name.pt.trace.json" 2>&1 | head -40
  done
done
log "FLOPs and MFU of known matmuls (bench/flops_mfu_check.py: torch's CUDA-event TFLOP/s beside scaleprof's)"
timeout 240 "$py" bench/flops_mfu_check.py --cli "$scaleprof" --out "$work/mfu" 2>&1 | grep -v USDT | tee "$work/mfu.txt" | tail -20
log "pack"
tar czf "$OUT/gpu_analyses.tar.gz" -C "$work" --exclude build . && ls -la "$OUT"
