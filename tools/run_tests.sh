#!/usr/bin/env bash
# Every test, as `make test` and CI run it (the Makefile has already built ./build and the venv):
#   1. clang-format check            4. unit tests again under AddressSanitizer + UBSan
#   2. unit tests (ctest)            5. the reader fuzzer for FUZZ_SECONDS (default 60)
#   3. PyTorch end-to-end (pytest)   6. clang-tidy on src/
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

step "clang-format"
sources | xargs clang-format --dry-run --Werror
echo "clang-format: all $(sources | wc -l) files formatted"

step "unit tests"
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS"

step "PyTorch end-to-end tests"
if [ -d tests/python ]; then
  # The scaleprof Python module (and CLI) as users get it: pip install . into the venv; build-py/
  # keeps the CMake build between runs. The tests themselves use the CLI of $BUILD.
  .venv/bin/python -m pip install -q --no-build-isolation .
  SCALEPROF_CLI="$PWD/$BUILD/scaleprof" .venv/bin/python -m pytest -q tests/python
fi

step "unit tests under AddressSanitizer and UBSan"
cmake -S . -B "$ASAN_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSCALEPROF_SANITIZE=ON >/dev/null
cmake --build "$ASAN_BUILD" -j "$JOBS"
ctest --test-dir "$ASAN_BUILD" --output-on-failure -j "$JOBS"

step "fuzzing the trace reader for ${FUZZ_SECONDS}s"
CXX=clang++ cmake -S . -B "$FUZZ_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCALEPROF_FUZZ=ON \
  -DSCALEPROF_TESTS=OFF >/dev/null
cmake --build "$FUZZ_BUILD" -j "$JOBS" --target trace_reader_fuzzer
corpus="$FUZZ_BUILD/corpus"
mkdir -p "$corpus"
# Seeds: the small real traces when ../shared is present (first byte picks the window size).
if [ -d ../shared/traces/hta ]; then
  n=0
  while IFS= read -r f; do
    n=$((n + 1))
    { printf '\x08'; gzip -dcf "$f"; } >"$corpus/seed$n"
    { printf '\x02'; cat "$f"; } >"$corpus/seedgz$n"
  done < <(find ../shared/traces/hta -name '*.json*' -size -30k)
fi
printf '\x01{"traceEvents":[\n{"ph":"X","name":"a","ts":1.5,"dur":2,"args":{"stream":7}}\n]}' >"$corpus/seed-min"
"$FUZZ_BUILD/fuzz/trace_reader_fuzzer" -max_total_time="$FUZZ_SECONDS" -max_len=65536 -rss_limit_mb=2048 \
  -print_final_stats=1 "$corpus" 2>"$FUZZ_BUILD/fuzz.log" || { tail -50 "$FUZZ_BUILD/fuzz.log"; exit 1; }
grep -E "^stat::number_of_executed_units" "$FUZZ_BUILD/fuzz.log" | sed 's/^/fuzz: /'
echo "fuzz: no crash in ${FUZZ_SECONDS}s"

step "clang-tidy"
git ls-files -- 'src/*.cc' | xargs -P "$JOBS" -n 4 clang-tidy -p "$BUILD" --quiet 2>/dev/null
echo "clang-tidy: no findings"
