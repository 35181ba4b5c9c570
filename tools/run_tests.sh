#!/usr/bin/env bash
# Every test, as `make test` and CI run it (the Makefile has already built ./build and the venv):
#   0. layer check (tools/check_layers.py: every cross-folder include against the layer order)
#   1. clang-format check            4. unit tests again under AddressSanitizer + UBSan (clang)
#   2. unit tests (ctest)            5. every fuzz target for FUZZ_SECONDS (default 30)
#   3. PyTorch end-to-end (pytest)   6. clang-tidy on src/
#   3b. MLflow (a real server) beside 3c. SLURM integration (a real 16-node cluster)
# Any failure fails the run; each step prints its own summary line and how long it took.
#
# Order. The PyTorch tests marked `timing` (tests/python/conftest.py: known answers measured in wall
# time, a sleep of known length or a counterfactual run) run first, alone on the machine: other work
# shifts what they measure. Then a background chain starts at the lowest priority (nice 19: the
# foreground keeps the CPUs whenever it wants them) and uses the CPU time the later steps leave idle
# while they wait on real time (servers, trainings, job schedulers): the sanitizer tree's build,
# clang-tidy, and the fuzz targets (which run for a fixed wall time, so running them beside the
# foreground costs no wall time, only executions). The foreground waits for each part's result only
# where it needs it. One sanitizer tree serves steps 4 and 5: clang with ASan, UBSan and libFuzzer's
# coverage instrumentation (-fsanitize=fuzzer-no-link), holding the unit tests and the fuzz targets,
# so the library is compiled once for both.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SANITIZE_BUILD=${SANITIZE_BUILD:-build-sanitize}
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
JOBS=$(nproc)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_start=$SECONDS
step_start=$SECONDS
step_name=""
step_done() { [ -z "$step_name" ] || printf -- '-- %s: %d s\n' "$step_name" $((SECONDS - step_start)); }
step() { step_done; step_name="$*"; step_start=$SECONDS; printf '\n== %s\n' "$*"; }
trap 'step_done' EXIT

sources() { git ls-files -- 'src/*.cc' 'src/*.h' 'tests/*.cc' 'tests/*.h' 'fuzz/*.cc' 'bench/*.cc' 'python/*.cc'; }

# The background chain (see the top): each part writes $BUILD/ci-<part>.log and, when done, its exit
# status to $BUILD/ci-<part>.rc; await PART prints the log and fails the run on a non-zero status.
chain_part() { # part command...
  local part=$1
  shift
  rm -f "$BUILD/ci-$part.rc"
  local rc=0
  "$@" >"$BUILD/ci-$part.log" 2>&1 || rc=$?
  echo "$rc" >"$BUILD/ci-$part.rc"
}
build_sanitized() {
  CXX=clang++ cmake -S . -B "$SANITIZE_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCALEPROF_FUZZ=ON \
    -DSCALEPROF_TESTS=ON >/dev/null &&
    cmake --build "$SANITIZE_BUILD" -j "$JOBS"
}
background_chain() {
  chain_part sanitize-build build_sanitized
  chain_part clang-tidy python3 tools/clang_tidy_cached.py "$BUILD"
  # The fuzz targets need the sanitizer tree; a failed build leaves them nothing to run.
  if [ "$(cat "$BUILD/ci-sanitize-build.rc")" = 0 ]; then chain_part fuzz fuzz_all; else
    echo 1 >"$BUILD/ci-fuzz.rc"; echo "fuzz: not run, the sanitizer tree failed to build" >"$BUILD/ci-fuzz.log"; fi
}
# Every fuzz target with a seed corpus in fuzz/corpus/<name>/ (target fuzz/<name>_fuzzer.cc) runs
# for FUZZ_SECONDS, two at a time, in the background chain. The seeds are copied to
# $SANITIZE_BUILD/corpus/<name> so what the fuzzer adds never lands in the repo. -timeout is the
# wall time one input may take: generous, since a part at nice 19 waits whenever the foreground runs.
fuzz_one() { # name: runs one target on a copy of its seeds; prints one line; non-zero on a finding
  local name=$1 bin="$SANITIZE_BUILD/fuzz/$1_fuzzer" work="$SANITIZE_BUILD/corpus/$1" log="$SANITIZE_BUILD/fuzz-$1.log"
  mkdir -p "$work" && cp -r "fuzz/corpus/$name/." "$work/"
  if ! "$bin" -max_total_time="$FUZZ_SECONDS" -max_len=65536 -rss_limit_mb=2048 -timeout=120 \
    -print_final_stats=1 -artifact_prefix="$SANITIZE_BUILD/fuzz-$name-" "$work" 2>"$log"; then
    tail -50 "$log"
    echo "fuzz: $name FAILED (reproducer: $SANITIZE_BUILD/fuzz-$name-*, log: $log)"
    return 1
  fi
  echo "fuzz: $name: $(sed -n 's/^stat::number_of_executed_units: *//p' "$log") executions in ${FUZZ_SECONDS}s, no finding"
}
fuzz_all() { # every target with seeds; non-zero when one finds something or none can run
  local targets t name run=()
  targets=$(tr '\n' ' ' <fuzz/CMakeLists.txt | grep -oE 'add_executable\([[:space:]]*[A-Za-z0-9_]+_fuzzer' | sed -E 's/.*[( ]//')
  for t in $targets; do
    name=${t%_fuzzer}
    if [ -d "fuzz/corpus/$name" ]; then run+=("$name"); else echo "fuzz: $name has no fuzz/corpus/$name/: not run"; fi
  done
  [ ${#run[@]} -gt 0 ] || { echo "fuzz: no target with a seed corpus"; return 1; }
  printf '%s\n' "${run[@]}" | xargs -P 2 -I{} bash -c 'fuzz_one "$1"' _ {} || return 1
  echo "fuzz: ${#run[@]} targets, no finding"
}

chain_pid=""
await() { # part [lines]: waits for it, shows the last `lines` (1) of its log, fails on its failure
  local part=$1 lines=${2:-1} rc
  while [ ! -e "$BUILD/ci-$part.rc" ]; do
    kill -0 "$chain_pid" 2>/dev/null || { echo "$part: the background chain ended without a result"; exit 1; }
    sleep 2
  done
  rc=$(cat "$BUILD/ci-$part.rc")
  if [ "$rc" != 0 ]; then
    tail -80 "$BUILD/ci-$part.log"
    echo "$part: FAILED (exit $rc, log: $BUILD/ci-$part.log)"
    exit 1
  fi
  tail -"$lines" "$BUILD/ci-$part.log"
}
stop_chain() { [ -z "$chain_pid" ] || kill -- -"$chain_pid" 2>/dev/null || true; }

step "layers"
python3 tools/check_layers.py

step "clang-format"
sources | xargs clang-format --dry-run --Werror
echo "clang-format: all $(sources | wc -l) files formatted"

step "unit tests"
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS"

PYTEST=(env SCALEPROF_CLI="$PWD/$BUILD/scaleprof" .venv/bin/python -m pytest -q)
step "the scaleprof Python module, as users get it (pip install .)"
# Into the venv; build-py/ keeps the CMake build between runs. Same build type as $BUILD, so with the
# Makefile's ccache settings every library source is a cache hit, not a second compile. The tests
# use the CLI of $BUILD.
.venv/bin/python -m pip install -q --no-build-isolation -C cmake.build-type=RelWithDebInfo .

step "PyTorch known answers in wall time (alone on the machine)"
# A known answer in wall time (a sleep, an injected delay, a counterfactual run) measures real trainings of
# several processes on a 2-core VM, where a neighbour's burst can shift one figure past its bound: three
# fresh-clone runs on 2026-11-30 each missed once, each time a different test (0.24 against 0.3, 13.0 % against
# 11.1 % ± 10 %, a gain of 2.2 against 3), and each passed alone. So the tests that failed run once more, in a
# new pytest process (`--lf`: new trainings, new traces), and the step fails only if one fails again: a wrong
# answer fails both times.
timing_tests=(-m timing tests/python --ignore-glob='tests/python/test_mlflow_*')
# --durations: the slowest ten, so that a run's log says where this step's minutes went.
if ! "${PYTEST[@]}" --durations=10 "${timing_tests[@]}"; then
  echo "timing: the failed known answers once more, in fresh runs"
  "${PYTEST[@]}" --lf --lfnf=none "${timing_tests[@]}"
fi

rm -f "$BUILD"/ci-*.rc
set -m  # the chain gets a process group of its own, so stop_chain ends all of it
nice -n 19 bash -c "$(declare -f chain_part build_sanitized fuzz_one fuzz_all background_chain); \
  export -f fuzz_one; export BUILD='$BUILD' SANITIZE_BUILD='$SANITIZE_BUILD' JOBS=$JOBS FUZZ_SECONDS=$FUZZ_SECONDS; \
  background_chain" &
chain_pid=$!
set +m
trap 'stop_chain; step_done' EXIT

step "PyTorch end-to-end tests"
"${PYTEST[@]}" --durations=10 -m "not timing" tests/python --ignore-glob='tests/python/test_mlflow_*'

step "the wheel: built, repaired, installed without root where the build's libraries are hidden"
# The same build-py/ as the pip install above: nothing is compiled again.
if [ "$(id -u)" = 0 ] && unshare --mount true 2>/dev/null; then
  wheel=$(bash tools/wheel.sh build "$BUILD/wheelhouse")
  bash tools/wheel.sh check "$wheel"
else
  echo "skipped: the check hides the build's libraries in a mount namespace, which needs root (uid $(id -u))"
fi

# The MLflow tests and the SLURM integration test both wait on real time most of theirs (a server
# starting, jobs scheduled, trainings of a few seconds), so they run at once: the MLflow tests in the
# background at normal priority, their output in a log shown when they end.
step "MLflow (a real server on 127.0.0.1, a SQLite database and a file store) beside SLURM integration"
# The tests start `mlflow server` (SQLite backend, free port) themselves and stop it by pid; they skip
# only when mlflow is not installed (make deps installs it).
mlflow_log="$BUILD/mlflow-tests.log"
"${PYTEST[@]}" tests/python/test_mlflow_*.py >"$mlflow_log" 2>&1 &
mlflow_pid=$!
trap 'kill "$mlflow_pid" 2>/dev/null; stop_chain; step_done' EXIT
# SLURM: starts munged, slurmctld and 16 slurmd itself and stops them by pid; skips, saying why, only
# where SLURM cannot start. The venv has the scaleprof module from the step above. The budget is a
# guard against a hang, not a timing: 272 s in the last fresh-clone run, beside clang-tidy at nice 19.
slurm_rc=0
timeout --signal=TERM --kill-after=20 480 bash tests/slurm/slurm_integration_test.sh || slurm_rc=$?
mlflow_rc=0
wait "$mlflow_pid" || mlflow_rc=$?
if [ "$mlflow_rc" = 0 ]; then echo "mlflow: $(tail -1 "$mlflow_log")"; else tail -80 "$mlflow_log"; fi
[ "$slurm_rc" = 0 ] || echo "SLURM integration: FAILED (exit $slurm_rc)"
[ "$mlflow_rc" = 0 ] && [ "$slurm_rc" = 0 ] || exit 1
trap 'stop_chain; step_done' EXIT

step "unit tests under AddressSanitizer and UBSan (clang, the fuzz targets' tree)"
await sanitize-build
ctest --test-dir "$SANITIZE_BUILD" --output-on-failure -j "$JOBS"

step "fuzzing every target for ${FUZZ_SECONDS}s (background chain)"
await fuzz 100

step "clang-tidy (background chain)"
await clang-tidy
step_done
step_name=""
printf '\n== all steps passed in %d s\n' $((SECONDS - run_start))
