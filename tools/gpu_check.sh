#!/bin/bash
# What no CPU stand-in can check, on a machine with an NVIDIA GPU, in one run of a few minutes:
#   1. the NVML monitor: `scaleprof run` around a matrix-multiply burn and around the DDP example, with
#      nvidia-smi sampling the same GPU beside it (the two are compared afterwards, off the GPU);
#   2. real CUDA (and NCCL) profiler traces of the DDP example, recorded through the Python API, and of
#      the tiny model with torch's own key_averages() from the same profiler object.
# Everything recorded is packed into $OUT/gpu_check.tar.gz (default OUT: /tmp/gpu-check-out); the
# traces go to tests/data/gpu-h200 (HTA's results on them: tools/hta_reference.py; key_averages() is
# compared in tests/python/test_gpu_trace_key_averages.py), the monitor to tools/nvml_vs_nvidia_smi.py.
#
#   OUT=/tmp/out bash tools/gpu_check.sh
#
# Builds scaleprof there (tools/gpu_build.sh); with only the carried CLI it still records the NVML part.
set -u
OUT=${OUT:-/tmp/gpu-check-out}
work=/tmp/gpu-check
prefix=/tmp/gpu-check-prefix
mkdir -p "$OUT" "$work/logs"
log() { echo "== $(date +%T) $*"; }
py=$(command -v python3)

log "machine"
nvidia-smi -L
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv
"$py" -c "import torch, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0), 'nccl', torch.cuda.nccl.version(), 'python', sys.version.split()[0])"

log "build"
# shellcheck source=tools/gpu_build.sh
source tools/gpu_build.sh || { log "nothing to check"; exit 1; }

root=$work/runs
# nvidia-smi samples the same GPU every 100 ms for the whole check: the reference for the monitor.
nvidia-smi --query-gpu=timestamp,utilization.gpu,power.draw,memory.used --format=csv,noheader,nounits -lms 100 \
  >"$work/nvidia-smi.csv" 2>"$work/logs/nvidia-smi.err" &
smi=$!

log "NVML: an 8-second matrix-multiply burn under scaleprof run (100 ms samples)"
"$scaleprof" run --root "$root" --experiment gpu-burn --strategy matmul --gpu-interval 100ms -- \
  "$py" -c "
import time, torch
a = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16); b = torch.randn_like(a)
torch.cuda.synchronize(); time.sleep(2)           # 2 s idle first: the monitor must see the step up
t0 = time.time(); n = 0
while time.time() - t0 < 8:
    for _ in range(20): a @ b
    torch.cuda.synchronize(); n += 20
dt = time.time() - t0
print(f'burn: {n} products in {dt:.2f} s: {2 * 8192**3 * n / dt / 1e12:.0f} TFLOP/s', flush=True)
time.sleep(2)                                       # and the step down
" 2>&1 | tee "$work/logs/burn.log"

if [ -n "${PYTHONPATH:-}" ]; then
  ddp() { # strategy nproc backend [extra scaleprof run options]
    local strategy=$1 nproc=$2 backend=$3
    log "DDP example: $strategy ($nproc rank(s), $backend, CUDA)"
    timeout 240 "$scaleprof" run --root "$root" --experiment ddp-gpu --strategy "$strategy" --gpu-interval 100ms -- \
      torchrun --nproc_per_node "$nproc" --master_port $((29500 + nproc)) examples/ddp_train.py --device cuda \
      --backend "$backend" --epochs 3 --steps-per-epoch 60 --batch-size 512 --profile-epoch 1 \
      --profile-active 3 >"$work/logs/ddp-$strategy.log" 2>&1
    echo "exit $?"; grep -E "epoch|error|Error" "$work/logs/ddp-$strategy.log" | grep -v USDT | tail -8
  }
  ddp nccl 1 nccl
  ddp gloo 1 gloo
  ddp gloo 2 gloo
  log "DDP example without the wrapper: each rank's own NVML monitor (Python API)"
  (cd "$work" && SCALEPROF_ROOT="$root" timeout 240 torchrun --nproc_per_node 1 --master_port 29510 \
    "$OLDPWD/examples/ddp_train.py" --device cuda --backend nccl --epochs 2 --steps-per-epoch 60 \
    --batch-size 512 --experiment ddp-gpu-api --strategy nccl-api >"$work/logs/ddp-api.log" 2>&1; echo "exit $?")
  log "tiny model: CUDA trace and key_averages()"
  "$py" tests/python/profile_tiny_model.py --device cuda --trace-dir "$work/tiny" --torch-json "$work/tiny-torch.json" \
    >"$work/logs/tiny.log" 2>&1; echo "exit $?"
  log "scaleprof on what was recorded"
  "$scaleprof" runs --root "$root" 2>&1 | tail -20
  "$scaleprof" report --root "$root" --experiment ddp-gpu --no-plots --format table 2>&1 | head -60
  for d in "$root"/ddp-gpu/*/; do
    "$scaleprof" trace summary "$d"rank-*/traces 2>&1 | head -40
  done
fi
kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
log "pack"
tar czf "$OUT/gpu_check.tar.gz" -C "$work" --exclude build . && ls -la "$OUT"
