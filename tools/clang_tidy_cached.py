#!/usr/bin/env python3
"""clang-tidy on every src/*.cc, each file checked once per content, as ccache does for compiles.

A file is skipped when its text, the name (relative to the checkout) and text of every project header it includes (directly or not, as
the build's compiler recorded it: `ninja -t deps`), the CMake files, .clang-tidy and the clang-tidy
version are all unchanged since a clean check of it. Editing one header rechecks only the files that
include it. A file the build has no record of depends on every project header (the safe answer).
Only clean results are kept, so a finding is reported on every run until it is fixed.

    usage: tools/clang_tidy_cached.py BUILD_DIR   (BUILD_DIR has compile_commands.json and was built)

A unity build (SCALEPROF_UNITY, CMakeLists.txt) compiles batches, so its compile_commands.json names
the batch files, not the sources: clang-tidy then reads the commands of a tree configured (not built)
beside it with SCALEPROF_UNITY=OFF, BUILD_DIR/tidy-commands, and a source's headers are those its
batch included (a superset: a header edit may recheck the batch's other files too).

The cache: $SCALEPROF_TIDY_CACHE, default ~/.cache/scaleprof/clang-tidy (a fresh machine checks all).
"""
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def git_files(*patterns):
    out = subprocess.run(["git", "ls-files", "-z", "--", *patterns], cwd=REPO, check=True, capture_output=True).stdout
    return [REPO / p for p in out.decode().split("\0") if p]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def unity_sources(batch: Path):
    """The sources a CMake unity batch file includes: absolute, or (UNITY_BUILD_RELOCATABLE) relative to
    the checkout, which CMake then puts on the include path."""
    sources = []
    for line in batch.read_text(errors="replace").splitlines():
        if line.startswith('#include "') and line.rstrip().endswith('.cc"'):
            sources.append((REPO / line.strip()[len('#include "'):-1]).resolve())
    return sources


def recorded_deps(build: Path):
    """{source: [project headers it includes]} from the compiler's dependency records of the build."""
    out = subprocess.run(["ninja", "-C", str(build), "-t", "deps"], capture_output=True, text=True)
    deps, current = {}, None
    for line in out.stdout.splitlines():
        if not line.startswith(" "):
            current = None
            if "(VALID)" in line or "(STALE)" in line:
                current = []
            continue
        path = (build / line.strip()).resolve()
        if current is None:
            continue
        if not current and path.suffix in (".cc", ".cxx"):  # the first dependency is the source itself
            current.append(path)
            for source in unity_sources(path) if path.suffix == ".cxx" else [path]:
                deps[source] = current
        elif current and path.suffix == ".h" and REPO in path.parents:
            current.append(path)
    return {src: headers[1:] for src, headers in deps.items()}


def commands_dir(build: Path) -> Path:
    """A folder whose compile_commands.json has an entry per source: BUILD_DIR's own, or for a unity
    build a tree configured beside it without unity batches (same build type and compiler)."""
    db = build / "compile_commands.json"
    if any(e["file"].endswith(".cc") and "/src/" in e["file"] for e in json.loads(db.read_text())):
        return build
    cache = {}
    for line in (build / "CMakeCache.txt").read_text().splitlines():
        name, _, value = line.partition("=")
        cache[name.split(":")[0]] = value
    tidy = build / "tidy-commands"
    subprocess.run(["cmake", "-S", str(REPO), "-B", str(tidy), "-G", "Ninja", "-DSCALEPROF_UNITY=OFF",
                    "-DSCALEPROF_TESTS=OFF", "-DSCALEPROF_PYTHON=OFF",
                    f"-DCMAKE_BUILD_TYPE={cache.get('CMAKE_BUILD_TYPE', 'RelWithDebInfo')}",
                    f"-DCMAKE_CXX_COMPILER={cache['CMAKE_CXX_COMPILER']}"],
                   check=True, stdout=subprocess.DEVNULL)
    return tidy


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tools/clang_tidy_cached.py BUILD_DIR")
    build = Path(sys.argv[1]).resolve()
    cache = Path(os.environ.get("SCALEPROF_TIDY_CACHE")
                 or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "scaleprof" / "clang-tidy")
    cache.mkdir(parents=True, exist_ok=True)
    version = subprocess.run(["clang-tidy", "--version"], capture_output=True, check=True).stdout
    builds = git_files("CMakeLists.txt", "*/CMakeLists.txt", "cmake/*.cmake")
    common = sha(version + (REPO / ".clang-tidy").read_bytes() + b"".join(sha(p.read_bytes()).encode() for p in builds))
    text_hash = {}

    def hashed(path: Path) -> str:
        if path not in text_hash:
            text_hash[path] = sha(path.read_bytes()) if path.exists() else "missing"
        return text_hash[path]

    all_headers = git_files("src/*.h")
    deps = recorded_deps(build)
    commands = commands_dir(build)
    todo, skipped = [], 0
    for source in git_files("src/*.cc"):
        headers = deps.get(source, all_headers)
        # Paths relative to the checkout: a fresh clone elsewhere (CI's) finds the keys of this one.
        named = sorted(f"{h.relative_to(REPO) if REPO in h.parents else h}:{hashed(h)}" for h in headers)
        key = sha("\n".join([common, hashed(source)] + named).encode())
        if (cache / key).exists():
            skipped += 1
        else:
            todo.append((source, key))

    def check(item):
        source, key = item
        proc = subprocess.run(["clang-tidy", "-p", str(commands), "--quiet", str(source)], capture_output=True, text=True)
        if proc.returncode == 0:
            (cache / key).touch()
            return None
        return proc.stdout + proc.stderr

    findings = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for text in pool.map(check, todo):
            if text is not None:
                findings += 1
                sys.stdout.write(text)
    if findings:
        sys.exit(f"clang-tidy: findings above ({findings} of {len(todo)} files checked)")
    print(f"clang-tidy: no findings ({len(todo)} files checked, {skipped} unchanged since a clean check)")


if __name__ == "__main__":
    main()
