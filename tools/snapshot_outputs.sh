#!/usr/bin/env bash
# Records what the scaleprof CLI prints on a fixed set of inputs, so that two builds can be shown to
# give byte-identical outputs (issue 19: a refactoring that must change no output).
#
#   tools/snapshot_outputs.sh prepare DATA_DIR [PART...]  make the inputs, once (PART: traces itwinai
#                                                          slurm mlflow demo; default all; BUILD=build)
#   tools/snapshot_outputs.sh record BIN DATA_DIR OUT_DIR  run BIN on them: one file per output
#   tools/snapshot_outputs.sh compare A B                  "N outputs, all byte-identical", or each
#                                                          differing output (exit 1)
#
# Typical use: build the commit before the change, `prepare` once, `record` with the old binary into
# A and with the new one into B, `compare A B`. Record the same binary twice to see that the script
# itself is deterministic.
#
# The inputs (`prepare`, into DATA_DIR):
#   traces/      a copy of every Kineto trace in ../shared/traces/hta (.json, .json.gz)
#   demo/        `make demo`'s runs: examples/scaling_demo.sh, real PyTorch DDP trainings (needs the
#                build's Python module, .venv with torch; several minutes)
#   itwinai/     itwinai's CSV layout, the files the C++ tests write (tests/scalability_report_test.cc,
#                tests/report_validation_test.cc)
#   mlflow/      the itwinai-shaped MLflow runs of tests/python/mlflow_fixtures.py, logged with MLflow's
#                own client into a SQLite database and into a file store
#   slurm/       the YAML configs the tests use (tests/slurm_script_test.cc, tests/slurm/, fuzz corpus)
# Real trainings and MLflow runs differ from one run to the next (times, run ids), so the data is made
# once and both snapshots read the same DATA_DIR; never `prepare` between the two `record`s.
#
# What `record` runs (cwd DATA_DIR, relative paths, COLUMNS=120, LC_ALL=C, TZ=UTC, so that nothing
# run-dependent is printed; in the outputs BIN's own path reads SCALEPROF_BIN, DATA_DIR's DATA_DIR and
# the scratch folder's SCRATCH):
#   - every `scaleprof trace` subcommand x table/csv/json on every shared trace, on each folder of
#     several traces (trace_filter), on all shared traces in one call (each its own rank) and on each
#     demo run's ranks; `trace merge` of two shards (--partial: rank 0, the others) of each multi-rank
#     set, and the shard files themselves;
#   - `scaleprof report` (json, and csv/table) and `scaleprof runs` on the demo's runs, the itwinai
#     CSVs and both MLflow stores; `generate-scalability-report` on the itwinai and MLflow data;
#   - `scaleprof slurm --no-submit-job --no-save-script` (and --print-config) on the test configs;
#   - every command's --help.
# Each output file holds the command, its exit code, its stdout and its stderr. About 860 outputs,
# about a minute on 2 cores.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  sed -n '5,9p' "$0" | sed 's/^# //' >&2
  exit 2
}

# --- prepare -----------------------------------------------------------------------------------------

prepare() {
  local data=$1
  shift
  local parts=${*:-traces itwinai slurm mlflow demo}
  local build=${BUILD:-build}
  local shared=${SHARED:-$REPO/../shared}
  mkdir -p "$data"
  data=$(cd "$data" && pwd)

  if [[ " $parts " == *" traces "* ]]; then
    echo "traces: copying $shared/traces/hta"
    rm -rf "$data/traces"
    mkdir -p "$data/traces"
    cp -r "$shared/traces/hta" "$data/traces/hta"
  fi
  if [[ " $parts " == *" itwinai "* ]]; then
    echo "itwinai: CSV layouts of the tests"
    rm -rf "$data/itwinai"
    prepare_itwinai "$data/itwinai"
  fi
  if [[ " $parts " == *" slurm "* ]]; then
    echo "slurm: configs of the tests"
    rm -rf "$data/slurm"
    prepare_slurm "$data/slurm"
  fi
  if [[ " $parts " == *" mlflow "* ]]; then prepare_mlflow "$data"; fi
  if [[ " $parts " == *" demo "* ]]; then prepare_demo "$data" "$build"; fi
  echo "prepared $data"
}

prepare_mlflow() {
  local data=$1
  echo "mlflow: itwinai's runs in a SQLite database and a file store (MLflow's client)"
  rm -rf "$data/mlflow"
  mkdir -p "$data/mlflow"
  (cd "$REPO/tests/python" && MLFLOW_ALLOW_FILE_STORE=true "$REPO/.venv/bin/python" - "$data/mlflow" <<'PY'
import sys
from pathlib import Path
from mlflow_fixtures import log_itwinai_runs
out = Path(sys.argv[1])
log_itwinai_runs(f"sqlite:///{out / 'itwinai.db'}", out / "db-csv", artifact_location=(out / "db-artifacts").as_uri())
log_itwinai_runs((out / "mllogs" / "mlflow").as_uri(), out / "file-csv")
PY
  )
}

prepare_demo() {
  local data=$1 build=$2
  echo "demo: examples/scaling_demo.sh with BUILD=$build (real trainings)"
  rm -rf "$data/demo"
  (cd "$REPO" && BUILD=$build ROOT="$data/demo/scalability-metrics" OUT="$data/demo" bash examples/scaling_demo.sh \
    >"$data/demo.log" 2>&1) || { tail -20 "$data/demo.log" >&2; exit 1; }
}

# The itwinai CSV files of tests/scalability_report_test.cc (build_itwinai, the MNIST example of its
# docs; two jobs with GPU data) and tests/report_cli_test.cc.
prepare_itwinai() {
  local d=$1
  w() { mkdir -p "$(dirname "$d/$1")" && printf '%b' "$2" >"$d/$1"; }
  w mnist/run1/epoch-time/epochtime_deepspeed_1N.csv 'epoch_id,time,name,nodes\n1,5.00,deepspeed,1\n2,2.60,deepspeed,1\n3,2.70,deepspeed,1\n'
  w mnist/run1/epoch-time/epochtime_deepspeed_2N.csv 'epoch_id,time,name,nodes\n1,3.00,deepspeed,2\n2,1.68,deepspeed,2\n3,1.70,deepspeed,2\n'
  w mnist/run1/epoch-time/epochtime_torch-ddp_1N.csv 'epoch_id,time,name,nodes\n1,6.00,torch-ddp,1\n2,2.90,torch-ddp,1\n3,2.94,torch-ddp,1\n'
  w mnist/run1/epoch-time/epochtime_torch-ddp_2N.csv 'epoch_id,time,name,nodes\n1,4.00,torch-ddp,2\n2,1.98,torch-ddp,2\n3,2.00,torch-ddp,2\n'
  local h=',name,node_id,self_cuda_time_total,cuda_time_total,cuda_time_total_str,calls,strategy,num_gpus,global_rank\n'
  w mnist/run1/computation-data/deepspeed_4_0.csv "${h}0,ProfilerStep*,0,500.0,900.0,900us,2,deepspeed,4,0\n1,aten::mm,0,300.0,300.0,300us,10,deepspeed,4,0\n2,\"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, float, char*)\",0,154.7,154.7,154us,3,deepspeed,4,0\n"
  w mnist/run1/computation-data/deepspeed_4_1.csv "${h}0,ProfilerStep*,0,500.0,900.0,900us,2,deepspeed,4,1\n1,aten::mm,0,300.0,300.0,300us,10,deepspeed,4,1\n2,ncclKernel_AllReduce_RING_LL_Sum_float,0,245.3,245.3,245us,4,deepspeed,4,1\n"
  w mnist/run1/computation-data/deepspeed_8_0.csv "${h}0,ProfilerStep*,0,100.0,0,,1,deepspeed,8,0\n1,aten::add_,0,30.66,0,,1,deepspeed,8,0\n2,ncclDevKernel_AllReduce,0,69.34,0,,1,deepspeed,8,0\n"
  local g='sample_idx,utilization,power,local_rank,node_idx,num_global_gpus,strategy,probing_interval\n'
  w mnist/run1/gpu-energy-data/deepspeed_4.csv "${g}0,10,100,0,0,4,deepspeed,2\n1,20,200,0,0,4,deepspeed,2\n2,30,300,0,0,4,deepspeed,2\n0,40,50,1,0,4,deepspeed,2\n1,50,50,1,0,4,deepspeed,2\n2,60,50,1,0,4,deepspeed,2\n"
  w jobs/job1/epoch-time/epochtime_ddp_1N.csv 'epoch_id,time,name,nodes\n1,9,ddp,1\n2,8,ddp,1\n'
  w jobs/job1/gpu-energy-data/ddp_8.csv "${g}0,50,100,0,0,8,ddp,1\n0,50,100,7,0,8,ddp,1\n"
  w jobs/job2/epoch-time/epochtime_ddp_2N.csv 'epoch_id,time,name,nodes\n1,6,ddp,2\n2,5,ddp,2\n'
  w jobs/job2/gpu-energy-data/ddp_16.csv "${g}0,60,100,0,0,16,ddp,1\n0,60,100,3,1,16,ddp,1\n"
  # A bad value and a GPU value out of range: warnings and exit code 3 (tests/report_validation_test.cc).
  w invalid/epoch-time/epochtime_ddp_1N.csv 'epoch_id,time,name,nodes\n0,10,ddp,1\n1,9,ddp,1\n2,9,ddp,1\n'
  w invalid/epoch-time/epochtime_ddp_2N.csv 'epoch_id,time,name,nodes\n0,6,ddp,2\n1,oops,ddp,2\n2,5,ddp,2\n'
  w invalid/gpu-energy-data/ddp_4.csv "${g}0,50,100,0,0,4,ddp,1\n1,250,-100,0,0,4,ddp,1\n2,70,100,0,0,4,ddp,1\n"
}

prepare_slurm() {
  local d=$1
  mkdir -p "$d"
  # tests/slurm_script_test.cc (the CLI tests) and its base config.
  printf 'experiment: cnn\ntraining_cmd: python train.py\nstrategies: [ddp, horovod]\n' >"$d/a.yaml"
  printf 'experiment: cnn\ntraining_cmd: python train.py --epochs 5\nroot: /data/metrics\nscaleprof_bin: /opt/scaleprof/bin/scaleprof\n' \
    >"$d/test.yaml"
  # tests/slurm/slurm_integration_test.sh, its paths made relative.
  cat >"$d/base.yaml" <<'YAML'
experiment: slurm-it
job_name: it
time: "00:10:00"
gpus_per_node: 0
strategies: [ddp]
scalability_nodes: [1, 2, 4, 8]
root: metrics
script_dir: scripts
std_out: logs/%x-%j.out
std_err: logs/%x-%j.err
env:
  OMP_NUM_THREADS: "1"
  PYTHONUNBUFFERED: "1"
YAML
  cat >"$d/train.yaml" <<'YAML'
training_cmd: python examples/ddp_train.py --epochs 3 --steps-per-epoch 4 --batch-size 8 --profile-epoch -1 --strategy {strategy}
gpu_interval: 100ms
YAML
  # The fuzz corpus's configs that are valid.
  cp "$REPO/fuzz/corpus/config/scaling.yaml" "$REPO/fuzz/corpus/config/itwinai.yaml" "$d/"
}

# --- record ------------------------------------------------------------------------------------------

record() {
  local bin=$1 data=$2 out=$3
  bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
  [ -x "$bin" ] || { echo "not an executable: $bin" >&2; exit 2; }
  data=$(cd "$data" && pwd)
  [ -d "$data/traces" ] || { echo "$data: no traces/ (run prepare first)" >&2; exit 2; }
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  [ -z "$(ls -A "$out")" ] || { echo "$out is not empty" >&2; exit 2; }
  export COLUMNS=120 LC_ALL=C TZ=UTC MLFLOW_ALLOW_FILE_STORE=true
  unset SCALEPROF_ROOT SCALEPROF_GNUPLOT MLFLOW_TRACKING_URI
  BIN=$bin
  OUT=$out
  DATA=$data
  SCRATCH=$(mktemp -d)
  trap 'rm -rf "$SCRATCH"' EXIT
  cd "$data"
  COUNT=0

  local subcommands=("${TRACE_SUBCOMMANDS[@]}")
  local formats=(table csv json) s

  # --help of every command.
  snap help "" --help
  for c in trace run runs report generate-scalability-report slurm "slurm status" mlflow "mlflow sync"; do
    # shellcheck disable=SC2086
    snap "help-${c// /-}" "" $c --help
  done
  for s in "${subcommands[@]}" merge diff what-if kernel-sequences; do snap "help-trace-$s" "" trace "$s" --help; done

  # Every shared trace, one by one; each folder of several traces; all shared traces in one call,
  # each given its own rank (--rank FILE=N, N in file order); each demo run's ranks together.
  local files=() dirs=() f dir
  while IFS= read -r f; do files+=("$f"); done < <(find traces -type f \( -name '*.json' -o -name '*.json.gz' \) | LC_ALL=C sort)
  for f in "${files[@]}"; do trace_set "$f" "$f"; done
  while IFS= read -r dir; do
    if [ "$(find "$dir" -maxdepth 1 -type f \( -name '*.json' -o -name '*.json.gz' \) | wc -l)" -ge 2 ]; then
      dirs+=("$dir")
      trace_set "$dir" "$dir"
    fi
  done < <(find traces -type d | LC_ALL=C sort)
  # --rank FILE=N also matches every file of the same name, so of two files with one name only the
  # first is in this set (critical_path/cuda_event_sync{,_multi_stream}/event_sync_trace.json.gz).
  local all=() i=0
  declare -A seen=()
  for f in "${files[@]}"; do
    [ -z "${seen[$(basename "$f")]:-}" ] || continue
    seen[$(basename "$f")]=1
    all+=("$f" --rank "$f=$i")
    i=$((i + 1))
  done
  trace_set all-shared-traces "${all[@]}"
  local run runs=()
  while IFS= read -r run; do runs+=("$run"); done < <(find demo/scalability-metrics -mindepth 2 -maxdepth 2 -type d | LC_ALL=C sort)
  for run in "${runs[@]}"; do
    local rank_dirs=()
    while IFS= read -r dir; do rank_dirs+=("$dir"); done < <(find "$run" -path '*/rank-*/traces' -type d | LC_ALL=C sort)
    if [ ${#rank_dirs[@]} -gt 0 ]; then trace_set "$run" "${rank_dirs[@]}"; fi
    if [ ${#rank_dirs[@]} -ge 2 ]; then dirs+=("$run"); fi
  done

  # Shards (--partial) of the multi-rank sets, rank 0 in one and the others in the other, and their
  # merge; the shard files themselves are outputs too.
  for dir in "${dirs[@]}"; do
    local paths=("$dir")
    if [[ $dir == demo/* ]]; then mapfile -t paths < <(find "$dir" -path '*/rank-*/traces' -type d | LC_ALL=C sort); fi
    for s in collectives stragglers; do
      rm -f "$SCRATCH"/*.partial
      snap "trace-$s-partial0" "$dir" trace "$s" "${paths[@]}" --ranks 0 -q --partial "$SCRATCH/0.partial"
      snap "trace-$s-partial1" "$dir" trace "$s" "${paths[@]}" --ranks 1-100000 -q --partial "$SCRATCH/1.partial"
      for p in 0 1; do
        if [ -f "$SCRATCH/$p.partial" ]; then
          cp "$SCRATCH/$p.partial" "$OUT/trace-$s-partial${p}__${dir//\//_}__file.out"
          COUNT=$((COUNT + 1))
        fi
      done
      for f in "${formats[@]}"; do
        snap "trace-merge-$s" "$dir" trace merge "$SCRATCH/0.partial" "$SCRATCH/1.partial" --format "$f"
      done
    done
  done

  # Reports: the demo's runs, itwinai's CSVs, both MLflow stores.
  local root
  for root in demo/scalability-metrics itwinai/mnist itwinai/jobs itwinai/invalid; do
    for f in "${formats[@]}"; do
      snap report "$root" report --root "$root" --no-plots --format "$f"
      snap runs "$root" runs --root "$root" --format "$f"
    done
    snap report-skip0 "$root" report --root "$root" --no-plots --format json --skip-epochs 0
  done
  # generate-scalability-report has no --no-plots: its plots go to the scratch folder, unrecorded.
  snap generate-scalability-report itwinai/mnist generate-scalability-report --log-dir itwinai/mnist \
    --plot-dir "$SCRATCH/plots" --format json
  local uri
  for uri in sqlite:///mlflow/itwinai.db mlflow/mllogs/mlflow; do
    for f in "${formats[@]}"; do
      snap report "$uri" report --tracking-uri "$uri" --experiment-name scaling-test --no-plots --format "$f"
    done
    snap report-skip0 "$uri" report --tracking-uri "$uri" --experiment-name scaling-test --no-plots --format json \
      --skip-epochs 0
    snap generate-scalability-report "$uri" generate-scalability-report --tracking-uri "$uri" \
      --experiment-name scaling-test --plot-dir "$SCRATCH/plots" --format json
  done

  # SLURM scripts, printed and not submitted.
  cd "$data/slurm"
  snap slurm a.yaml slurm -c a.yaml --mode runall --gpus-per-node 2 --no-submit-job --no-save-script
  snap slurm test.yaml slurm -c test.yaml --no-submit-job --no-save-script
  snap slurm test.yaml-scaling slurm -c test.yaml --mode scaling-test --scalability_nodes 1,2,4 --no-submit-job --no-save-script
  snap slurm base+train slurm -c base.yaml -c train.yaml --mode scaling-test --scalability_nodes 1,2,4 --no-submit-job --no-save-script
  snap slurm base+train-big slurm -c base.yaml -c train.yaml --mode scaling-test --scalability_nodes 8,16 --no-submit-job --no-save-script
  snap slurm scaling.yaml slurm -c scaling.yaml --no-submit-job --no-save-script
  snap slurm itwinai.yaml slurm -c itwinai.yaml --no-submit-job --no-save-script
  snap slurm-print-config base+train slurm -c base.yaml -c train.yaml --num_nodes 3 --print-config
  snap slurm flags-only slurm --training_cmd 'python train.py' --num_nodes 2 --no-submit-job --no-save-script
  snap slurm bad-option slurm -c a.yaml --num-node 2 --no-submit-job
  echo "$COUNT outputs in $OUT"
}

# The `trace` subcommands that take trace paths alone, each run on every input set.
TRACE_SUBCOMMANDS=(summary breakdown kernels idle overlap launch ops steps collectives stragglers memory counters
  critical-path flops phases decompose potential-stragglers annotations cupti-counters)

# trace_set LABEL PATH...: every `trace` subcommand in every format on PATH...
trace_set() {
  local label=$1 s f
  shift
  for s in "${TRACE_SUBCOMMANDS[@]}"; do
    for f in table csv json; do snap "trace-$s" "$label" trace "$s" "$@" --format "$f"; done
  done
}

# snap NAME INPUT ARGS...: run BIN ARGS, write OUT/NAME__INPUT__FORMAT.out
snap() {
  local name=$1 input=$2
  shift 2
  local fmt=""
  local prev=""
  for a in "$@"; do
    [ "$prev" = --format ] && fmt=$a
    prev=$a
  done
  local file="$name"
  [ -n "$input" ] && file+="__${input//\//_}"
  [ -n "$fmt" ] && file+="__$fmt"
  file="$OUT/${file//:/_}.out"
  [ ! -e "$file" ] || { echo "two outputs named $file" >&2; exit 2; }
  local rc=0
  "$BIN" "$@" >"$SCRATCH/stdout" 2>"$SCRATCH/stderr" </dev/null || rc=$?
  {
    printf '$ scaleprof'
    printf ' %q' "$@"
    printf '\nexit: %d\n--- stdout\n' "$rc"
    cat "$SCRATCH/stdout"
    printf -- '--- stderr\n'
    cat "$SCRATCH/stderr"
  } | sed "s#$BIN#SCALEPROF_BIN#g; s#$SCRATCH#SCRATCH#g; s#$DATA#DATA_DIR#g" >"$file"
  COUNT=$((COUNT + 1))
}

# --- compare -----------------------------------------------------------------------------------------

compare() {
  local a=$1 b=$2 n=0 bad=0 name
  while IFS= read -r name; do
    n=$((n + 1))
    if [ ! -f "$a/$name" ]; then
      echo "only in $b: $name"
      bad=$((bad + 1))
    elif [ ! -f "$b/$name" ]; then
      echo "only in $a: $name"
      bad=$((bad + 1))
    elif ! cmp -s "$a/$name" "$b/$name"; then
      echo "differs: $name"
      # diff exits 1 on a difference; under pipefail that must not end the comparison.
      { diff -u "$a/$name" "$b/$name" || true; } | sed -n '3,12p' | sed 's/^/    /'
      bad=$((bad + 1))
    fi
  done < <({ (cd "$a" && ls) && (cd "$b" && ls); } | LC_ALL=C sort -u)
  if [ "$bad" = 0 ]; then
    echo "$n outputs, all byte-identical"
  else
    echo "$n outputs, $bad differ"
    return 1
  fi
}

case "${1:-}" in
  prepare) [ $# -ge 2 ] || usage; shift; prepare "$@" ;;
  record) [ $# = 4 ] || usage; record "$2" "$3" "$4" ;;
  compare) [ $# = 3 ] || usage; compare "$2" "$3" ;;
  *) usage ;;
esac
