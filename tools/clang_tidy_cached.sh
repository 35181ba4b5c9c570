#!/usr/bin/env bash
# clang-tidy on every src/*.cc, each file checked once per content, as ccache does for compiles: a
# file is skipped when its text, every project header, the CMake files, .clang-tidy and the
# clang-tidy version are all unchanged since a clean check of it. Only clean results are kept, so a
# finding is reported on every run until it is fixed.
#   usage: tools/clang_tidy_cached.sh BUILD_DIR   (BUILD_DIR has compile_commands.json)
# The cache: $SCALEPROF_TIDY_CACHE, default ~/.cache/scaleprof/clang-tidy (a fresh machine checks all).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1
cache=${SCALEPROF_TIDY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scaleprof/clang-tidy}
mkdir -p "$cache"
# What every file's result depends on besides its own text.
common=$({
  clang-tidy --version
  cat .clang-tidy
  git ls-files -z -- 'src/*.h' 'CMakeLists.txt' '*/CMakeLists.txt' 'cmake/*.cmake' | xargs -0 sha256sum
} | sha256sum | cut -c1-64)
todo=()
skipped=0
while IFS= read -r -d '' f; do
  key=$( { echo "$common"; cat "$f"; } | sha256sum | cut -c1-64)
  if [ -e "$cache/$key" ]; then skipped=$((skipped + 1)); else todo+=("$f=$key"); fi
done < <(git ls-files -z -- 'src/*.cc')
check_one() { # FILE=KEY: runs clang-tidy on FILE; records KEY only when it is clean
  local f=${1%=*} key=${1##*=}
  if clang-tidy -p "$build" --quiet "$f" 2>/dev/null; then touch "$cache/$key"; else return 1; fi
}
export -f check_one
export build cache
status=0
if [ ${#todo[@]} -gt 0 ]; then
  printf '%s\0' "${todo[@]}" | xargs -0 -P "$(nproc)" -n 1 bash -c 'check_one "$1"' _ || status=1
fi
[ "$status" -eq 0 ] || { echo "clang-tidy: findings above"; exit 1; }
echo "clang-tidy: no findings (${#todo[@]} files checked, $skipped unchanged since a clean check)"
