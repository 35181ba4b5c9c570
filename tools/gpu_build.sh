# Sourced by the GPU machine's checks (tools/gpu_check.sh, tools/gpu_check_analyses.sh): builds the CLI
# and the Python module there with CMake (16 cores: about a minute) into $work/build, and sets
# $scaleprof and PYTHONPATH. Where the machine lacks the Debian -dev packages, .gpu/debs/*.deb
# (downloaded beside a Debian 12 checkout with `apt-get download`) are unpacked into a private prefix;
# where the build fails anyway, .gpu/bin/scaleprof (a CLI built elsewhere, its libraries in .gpu/lib)
# is used, without the module. Needs $work and $py; fails (return 1) when there is no CLI at all.
prefix=${prefix:-/tmp/gpu-check-prefix}
mkdir -p "$work/logs"
if compgen -G ".gpu/debs/*.deb" >/dev/null; then
  for f in .gpu/debs/*.deb; do dpkg -x "$f" "$prefix"; done
  export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
build=$work/build
scaleprof=""
if cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCALEPROF_TESTS=OFF -DSCALEPROF_PYTHON=ON \
     -DPython_EXECUTABLE="$py" -DCMAKE_PREFIX_PATH="$prefix/usr" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 >"$work/logs/cmake.log" 2>&1 &&
   cmake --build "$build" -j "$(nproc)" --target scaleprof _scaleprof >"$work/logs/build.log" 2>&1; then
  scaleprof=$build/scaleprof
  export PYTHONPATH="$build/python"
  echo "built $scaleprof and the Python module"
else
  tail -30 "$work/logs/cmake.log" "$work/logs/build.log"
  if [ -x .gpu/bin/scaleprof ]; then
    scaleprof=.gpu/bin/scaleprof
    export LD_LIBRARY_PATH="$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "build failed: using the carried CLI (no Python module)"
  else
    echo "build failed and no carried CLI"
    return 1
  fi
fi
"$scaleprof" --version
