#!/usr/bin/env bash
# The GPU check session 24 ran on an H200 (device tool; OUT set by it): the NVML monitor of `scaleprof run`
# beside nvidia-smi during 20 s of bf16 matmuls, then a profiled phase of known FLOPs whose trace
# `scaleprof trace flops/ops` reads, against key_averages() in ka.json. Figures: docs/flops.md, "On a real GPU".
set -x
S=${1:?usage: run_gpu_check.sh SCALEPROF_CLI, the scaleprof.scripts/scaleprof of the wheel unzipped beside scaleprof.libs}
chmod +x $S; $S --version
nvidia-smi --query-gpu=name,driver_version --format=csv
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/local/nvidia/lib:$LD_LIBRARY_PATH
ls /usr/local/nvidia/lib64 2>/dev/null | grep -i nvidia-ml | head -3
nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,utilization.gpu,temperature.gpu --format=csv,noheader,nounits -lms 200 > $OUT/smi.csv 2>&1 &
SMI=$!
PYTHONUNBUFFERED=1 $S run --root /tmp/runs --experiment gpu --strategy single --gpu-interval 100ms -- python3 tools/device/gpu_check.py $OUT 2>&1 | tail -20
kill $SMI
$S runs --root /tmp/runs 2>&1 | head
find /tmp/runs -type f | head -20
tar czf $OUT/runs.tgz -C /tmp runs
ls -la $OUT
$S trace flops --device H200 --format json -o $OUT/flops.json $OUT/trace.json; echo flops rc=$?
$S trace flops --device H200 $OUT/trace.json 2>&1 | head -40
$S trace ops --format json -o $OUT/ops.json $OUT/trace.json; echo ops rc=$?
$S trace breakdown $OUT/trace.json 2>&1 | head -20
$S trace summary $OUT/trace.json > $OUT/summary.txt 2>&1; echo summary rc=$?
gzip -9 $OUT/trace.json
ls -la $OUT
