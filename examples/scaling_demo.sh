#!/usr/bin/env bash
# A real local scaling test, end to end (what `make demo` runs):
#   two strategies (DDP with 25 MB and with 1 MB gradient buckets) x 1 and 2 CPU workers, each a real
#   PyTorch DDP training over gloo under torchrun, recorded by `scaleprof run` and the Python API,
#   then `scaleprof runs` and the scalability report (tables, plots, one HTML page). Every run trains
#   on the same 4096 samples per epoch split across the workers (strong scaling); the profiler records
#   steps of epoch 0, the warm-up epoch the report leaves out, so its overhead does not skew the times
#   (6 active steps: the report splits the first 5 into their causes; 1 step alone was too noisy).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SCALEPROF="$PWD/$BUILD/scaleprof"
ROOT=${ROOT:-.cache/demo/scalability-metrics}
OUT=${OUT:-.cache/demo}
EPOCHS=${EPOCHS:-4}
# One compute thread per worker, as torchrun sets for several workers, so that 1 worker uses one core
# and 2 workers two: otherwise a single worker already uses every core and there is nothing to scale.
export OMP_NUM_THREADS=1

# The example imports the scaleprof Python module: the one `make demo` built next to the CLI (no
# second build of the library by pip).
[ -f "$BUILD/python/scaleprof/__init__.py" ] ||
  { echo "no Python module in $BUILD/python: configure with -DSCALEPROF_PYTHON=ON (make demo does)" >&2; exit 1; }
export PYTHONPATH="$PWD/$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
rm -rf "$ROOT" "$OUT/plots" "$OUT/logs"
mkdir -p "$OUT/logs"
for workers in 1 2; do
  for config in ddp-bucket25mb:25 ddp-bucket1mb:1; do
    strategy=${config%%:*}
    bucket=${config##*:}
    echo "training: $strategy on $workers CPU worker(s), $EPOCHS epochs"
    "$SCALEPROF" run --root "$ROOT" --experiment cnn --strategy "$strategy" -- \
      .venv/bin/torchrun --standalone --nproc_per_node "$workers" examples/ddp_train.py \
      --epochs "$EPOCHS" --strategy "$strategy" --bucket-cap-mb "$bucket" --dataset-size 4096 --profile-epoch 0 --profile-active 6 \
      >"$OUT/logs/$strategy-$workers.log" 2>&1 ||
      { echo "training failed; its output:" >&2; tail -20 "$OUT/logs/$strategy-$workers.log" >&2; exit 1; }
  done
done
echo
"$SCALEPROF" runs --root "$ROOT"
echo
"$SCALEPROF" report --root "$ROOT" --plot-dir "$OUT/plots" --html "$OUT/scalability-report.html"
echo
echo "plots in $OUT/plots, the whole report in $OUT/scalability-report.html"
