#!/usr/bin/env bash
# scaleprof's `trace collectives` / `trace stragglers` against AMD TraceLens' multi-rank collective
# report on the same trace files, figure by figure (bench/tracelens_compare.py prints the tables;
# docs/differences-from-tracelens.md explains every difference). Not part of CI or `make bench`.
#
# Usage: bench/compare_tracelens.sh [TRACELENS_SRC] [CASE ...]   cases: nccl nccl_pair alltoall_pair trace_filter gloo
#   TRACELENS_SRC (or the env var of that name): TraceLens' source tree (with setup.py), or a git
#   directory of it (e.g. what `fetch github:AMD-AGI/TraceLens` brings), whose HEAD is extracted.
#   TraceLens is pip-installed from it into a venv of its own, .cache/venv-tracelens (its code is
#   never copied into the project). Measured at commit 171dd747.
# Skips (exit 0, one line) when ../shared or the TraceLens source is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${SHARED:-../shared/traces/hta}
SRC=${1:-${TRACELENS_SRC:-}}
[ $# -gt 0 ] && shift
SCALEPROF=${SCALEPROF:-$PWD/build/scaleprof}
VENV=${TRACELENS_VENV:-$PWD/.cache/venv-tracelens}
TORCH_PYTHON=${TORCH_PYTHON:-$PWD/.venv/bin/python}

[ -d "$SHARED" ] || { echo "compare_tracelens: skipped: $SHARED not found (the shared traces are needed)"; exit 0; }
[ -n "$SRC" ] && [ -d "$SRC" ] || {
  echo "compare_tracelens: skipped: no TraceLens source (give its directory as the first argument or TRACELENS_SRC)"
  exit 0
}
[ -x "$SCALEPROF" ] || { echo "compare_tracelens: $SCALEPROF not found (cmake --build build --target scaleprof)" >&2; exit 1; }

# A git directory (no work tree): extract the files the package needs. Some large test traces of its
# history may be absent from a partial copy; they are not needed, so only these paths are read.
if [ ! -f "$SRC/setup.py" ] && git -C "$SRC" rev-parse --verify -q HEAD >/dev/null; then
  commit=$(git -C "$SRC" rev-parse HEAD)
  tree=$PWD/.cache/tracelens-src-$commit
  if [ ! -f "$tree/setup.py" ]; then
    rm -rf "$tree" && mkdir -p "$tree"
    git -C "$SRC" archive --format=tar HEAD setup.py README.md MANIFEST.in LICENSE TraceLens 2>/dev/null | tar -x -C "$tree"
  fi
  SRC=$tree
else
  # Only a source tree that is itself a git checkout names its commit (an extracted tree inside
  # some other repository would otherwise get that repository's HEAD); else the extract's name.
  commit=unknown
  if [ "$(git -C "$SRC" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$SRC" && pwd -P)" ]; then
    commit=$(git -C "$SRC" rev-parse HEAD)
  elif [[ $(basename "$SRC") =~ ^tracelens-src-([0-9a-f]{40})$ ]]; then
    commit=${BASH_REMATCH[1]}
  fi
fi
[ -f "$SRC/setup.py" ] || { echo "compare_tracelens: skipped: $SRC has no setup.py (not a TraceLens source)"; exit 0; }

# The venv is remade when the source changes (stamp: the commit, else the tree's checksum).
stamp=$commit
[ "$stamp" = unknown ] && stamp=$(cd "$SRC" && find TraceLens setup.py -type f -print0 | sort -z | xargs -0 cat | sha256sum | cut -c1-16)
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.tracelens-stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  # TraceLens' setup.py names its version after `git rev-parse HEAD` in the current directory: an
  # extracted tree inside this repository got scaleprof's HEAD, and pip failed when that moved
  # mid-install. With no git repository to find, the version is its plain base version.
  GIT_DIR=/nonexistent "$VENV/bin/pip" install -q "$SRC"
  echo "$stamp" >"$VENV/.tracelens-stamp"
fi
"$VENV/bin/python" -c "import TraceLens" || { echo "compare_tracelens: TraceLens did not install into $VENV" >&2; exit 1; }
"$TORCH_PYTHON" -c "import torch" 2>/dev/null || TORCH_PYTHON=""

echo "TraceLens $commit (pandas $("$VENV/bin/python" -c 'import pandas; print(pandas.__version__)')); scaleprof $("$SCALEPROF" --version 2>/dev/null || echo '?')"
echo
python3 bench/tracelens_compare.py --tracelens-python "$VENV/bin/python" --scaleprof "$SCALEPROF" \
  --shared "$SHARED" --torch-python "$TORCH_PYTHON" "$@"
