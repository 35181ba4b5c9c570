#!/usr/bin/env bash
# Runs every test: unit tests (ctest), the same under ASan/UBSan, format check, fuzzing for a bounded
# time, and the PyTorch end-to-end tests (pytest). Called by `make test` and CI.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
echo "== unit tests"
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"
