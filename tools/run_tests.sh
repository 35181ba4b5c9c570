#!/usr/bin/env bash
# Every test, as `make test` and CI run it (the Makefile has already built ./build and the venv):
#   0. layer check (tools/check_layers.py: every cross-folder include against the layer order)
#   1. clang-format check            4. unit tests again under AddressSanitizer + UBSan
#   2. unit tests (ctest)            5. every fuzz target for FUZZ_SECONDS (default 60)
#   3. PyTorch end-to-end (pytest)   6. clang-tidy on src/
#   3b. SLURM integration (tests/slurm/slurm_integration_test.sh, a real 16-node cluster)
# Any failure fails the run; each step prints its own summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ASAN_BUILD=${ASAN_BUILD:-build-asan}
FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
JOBS=$(nproc)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

step() { printf '\n== %s\n' "$*"; }

sources() { git ls-files -- 'src/*.cc' 'src/*.h' 'tests/*.cc' 'tests/*.h' 'fuzz/*.cc' 'bench/*.cc' 'python/*.cc'; }

step "layers"
python3 tools/check_layers.py

step "clang-format"
sources | xargs clang-format --dry-run --Werror
echo "clang-format: all $(sources | wc -l) files formatted"

step "unit tests"
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS"

step "PyTorch end-to-end tests"
if [ -d tests/python ]; then
  # The scaleprof Python module (and CLI) as users get it: pip install . into the venv; build-py/
  # keeps the CMake build between runs. Same build type as $BUILD, so with the Makefile's ccache
  # settings every library source is a cache hit, not a second compile. The tests use the CLI of $BUILD.
  .venv/bin/python -m pip install -q --no-build-isolation -C cmake.build-type=RelWithDebInfo .
  SCALEPROF_CLI="$PWD/$BUILD/scaleprof" .venv/bin/python -m pytest -q tests/python --ignore-glob='tests/python/test_mlflow_*'
fi

step "MLflow: a real server on 127.0.0.1, a SQLite database and a file store (budget 4 min)"
# The tests start `mlflow server` (SQLite backend, free port) themselves and stop it by pid; they skip
# only when mlflow is not installed (make deps installs it).
mlflow_log="$BUILD/mlflow-tests.log"
if SCALEPROF_CLI="$PWD/$BUILD/scaleprof" .venv/bin/python -m pytest -q tests/python/test_mlflow_*.py >"$mlflow_log" 2>&1; then
  echo "mlflow: $(tail -1 "$mlflow_log")"
else
  tail -80 "$mlflow_log"
  exit 1
fi

step "SLURM integration (a real 16-node cluster on this machine; budget 4 minutes)"
# Starts munged, slurmctld and 16 slurmd itself and stops them by pid; skips, saying why, only where
# SLURM cannot start. The venv has the scaleprof module from the step above.
timeout --signal=TERM --kill-after=20 300 bash tests/slurm/slurm_integration_test.sh

step "unit tests under AddressSanitizer and UBSan"
cmake -S . -B "$ASAN_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSCALEPROF_SANITIZE=ON >/dev/null
cmake --build "$ASAN_BUILD" -j "$JOBS"
ctest --test-dir "$ASAN_BUILD" --output-on-failure -j "$JOBS"

# Every libFuzzer target of fuzz/CMakeLists.txt is built; each one with a seed corpus in
# fuzz/corpus/<name>/ (target fuzz/<name>_fuzzer.cc) runs for FUZZ_SECONDS, two at a time. The
# seeds are copied to $FUZZ_BUILD/corpus/<name> so what the fuzzer adds never lands in the repo.
fuzz_targets=$(tr '\n' ' ' <fuzz/CMakeLists.txt | grep -oE 'add_executable\([[:space:]]*[A-Za-z0-9_]+_fuzzer' | sed -E 's/.*[( ]//')
step "fuzzing $(echo "$fuzz_targets" | wc -w) targets for ${FUZZ_SECONDS}s each"
CXX=clang++ cmake -S . -B "$FUZZ_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCALEPROF_FUZZ=ON \
  -DSCALEPROF_TESTS=OFF >/dev/null
# shellcheck disable=SC2086  # one argument per target
cmake --build "$FUZZ_BUILD" -j "$JOBS" --target $fuzz_targets
fuzz_one() { # name: runs one target on a copy of its seeds; prints one line; non-zero on a finding
  local name=$1 bin="$FUZZ_BUILD/fuzz/$1_fuzzer" work="$FUZZ_BUILD/corpus/$1" log="$FUZZ_BUILD/fuzz-$1.log"
  mkdir -p "$work" && cp -r "fuzz/corpus/$name/." "$work/"
  if ! "$bin" -max_total_time="$FUZZ_SECONDS" -max_len=65536 -rss_limit_mb=2048 -timeout=25 \
    -print_final_stats=1 -artifact_prefix="$FUZZ_BUILD/fuzz-$name-" "$work" 2>"$log"; then
    tail -50 "$log"
    echo "fuzz: $name FAILED (reproducer: $FUZZ_BUILD/fuzz-$name-*, log: $log)"
    return 1
  fi
  echo "fuzz: $name: $(sed -n 's/^stat::number_of_executed_units: *//p' "$log") executions in ${FUZZ_SECONDS}s, no finding"
}
export -f fuzz_one
export FUZZ_BUILD FUZZ_SECONDS
fuzz_run=()
for t in $fuzz_targets; do
  name=${t%_fuzzer}
  if [ -d "fuzz/corpus/$name" ]; then fuzz_run+=("$name"); else echo "fuzz: $name has no fuzz/corpus/$name/: not run"; fi
done
[ ${#fuzz_run[@]} -gt 0 ] || { echo "fuzz: no target with a seed corpus"; exit 1; }
printf '%s\n' "${fuzz_run[@]}" | xargs -P 2 -I{} bash -c 'fuzz_one "$1"' _ {}
echo "fuzz: ${#fuzz_run[@]} targets, no finding"

step "clang-tidy"
bash tools/clang_tidy_cached.sh "$BUILD"
