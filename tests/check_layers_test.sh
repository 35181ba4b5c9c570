#!/usr/bin/env bash
# tools/check_layers.py on small trees: a tree that follows the layer order passes; a planted include
# against it (analysis/ including report/), file I/O in analysis/, and a front-end (cli/, python/)
# including trace/, analysis/ or engine/ instead of calling pipeline/, each fail naming file and line.
set -euo pipefail
check=$(cd "$(dirname "$0")/.." && pwd)/tools/check_layers.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/core" "$tmp/src/analysis" "$tmp/src/report"
printf '#pragma once\n' >"$tmp/src/core/result.h"
printf '#pragma once\n#include "core/result.h"\n' >"$tmp/src/analysis/sums.h"
printf '#pragma once\n#include "analysis/sums.h"\n' >"$tmp/src/report/table.h"
python3 "$check" "$tmp" >"$tmp/out" || { cat "$tmp/out"; echo "FAIL: a tree in layer order was refused"; exit 1; }

printf '#include "analysis/sums.h"\n#include "report/table.h"\n' >"$tmp/src/analysis/sums.cc"
if python3 "$check" "$tmp" >"$tmp/out"; then
  cat "$tmp/out"; echo "FAIL: analysis including report/ passed"; exit 1
fi
cat "$tmp/out"
grep -q 'src/analysis/sums.cc:2: analysis may not include "report/table.h"' "$tmp/out"

printf '#include <fstream>\n' >"$tmp/src/analysis/sums.cc"
if python3 "$check" "$tmp" >"$tmp/out"; then
  cat "$tmp/out"; echo "FAIL: file I/O in analysis/ passed"; exit 1
fi
cat "$tmp/out"
grep -q 'src/analysis/sums.cc:1: analysis is pure functions over tables, no file I/O' "$tmp/out"
rm "$tmp/src/analysis/sums.cc"

# A front-end reaches the analyses only through pipeline/: the CLI and the Python module may include a
# pipeline header, not an analysis (nor trace/ or engine/) one.
mkdir -p "$tmp/src/pipeline" "$tmp/src/cli" "$tmp/python"
printf '#pragma once\n#include "analysis/sums.h"\n' >"$tmp/src/pipeline/sums_pipeline.h"
printf '#include "pipeline/sums_pipeline.h"\n' >"$tmp/src/cli/sums_command.cc"
printf '#include "pipeline/sums_pipeline.h"\n' >"$tmp/python/sums_binding.cc"
python3 "$check" "$tmp" >"$tmp/out" || { cat "$tmp/out"; echo "FAIL: front-ends calling pipeline/ were refused"; exit 1; }
for planted in "src/cli/sums_command.cc" "python/sums_binding.cc"; do
  printf '#include "pipeline/sums_pipeline.h"\n#include "analysis/sums.h"\n' >"$tmp/$planted"
  if python3 "$check" "$tmp" >"$tmp/out"; then
    cat "$tmp/out"; echo "FAIL: $planted including analysis/ passed"; exit 1
  fi
  cat "$tmp/out"
  grep -q "$planted:2: front-end .* may not include \"analysis/sums.h\"" "$tmp/out"
  printf '#include "pipeline/sums_pipeline.h"\n' >"$tmp/$planted"
done
echo "PASS"
