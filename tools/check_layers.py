#!/usr/bin/env python3
"""The layer check: every cross-folder #include of src/ and python/ against the layer order.

Each folder of src/ is one layer (its subfolders belong to it: src/importers/mlflow/ is importers).
A file may include headers of its own layer and of the layers LAYERS lists for it, nothing else; the
order, and why it has no cycle, is in docs/architecture.md ("Layers"). analysis/ also includes no file
I/O and no trace streaming: analyses are pure functions over tables. The front-ends (src/cli/, python/)
include nothing of trace/, analysis/ or engine/: they parse arguments and call one pipeline function
per command, whose header brings the types they fill.

    tools/check_layers.py [ROOT]        check ROOT (default: the checkout this script is in)
    tools/check_layers.py --list [ROOT] also print every cross-folder include, counted per pair

Exit status 0 when every include follows the order, 1 otherwise (one line per wrong include:
FILE:LINE: LAYER may not include "HEADER" (LAYER may use: ...), or for a front-end FILE:LINE: front-end
LAYER may not include "HEADER": ...). CI runs it first
(tools/run_tests.sh); tests/check_layers_test.sh shows it failing on a planted include.

The compile enforces the order too (cmake/layer_include.cmake: each layer's headers are on the
include path only of the targets that link it), but it admits what a target reaches through the
layers it links; this check holds the exact list and says which rule an include breaks.
"""

import re
import sys
from collections import Counter
from pathlib import Path

# What each layer may include besides itself, lowest layers first. The CMake libraries of
# CMakeLists.txt (scaleprof_<layer>) link the same way, and their include roots follow the links.
LAYERS = {
    "core": [],  # Result, output files, file mechanics, HTTP transport
    "tables": ["core"],  # plain run-data tables (ScalabilityData)
    "trace": ["core"],  # Kineto reader and its columnar tables (RankTrace)
    "collect": ["core"],  # what runs beside training; the run-directory format it writes
    "config": ["core"],  # YAML configuration
    "analysis": ["core", "tables", "trace"],  # pure functions over tables
    "engine": ["core", "tables", "trace", "analysis"],  # streaming ranks, reducing, spilling, shards
    "importers": ["core", "tables", "trace", "analysis", "collect"],  # run data into tables
    "report": ["core", "tables", "trace", "analysis", "engine"],  # results into tables, plots, HTML
    "launch": ["core", "config", "collect", "tables", "importers"],
    "mlflow_sync": ["core", "collect", "tables", "trace", "analysis", "importers"],
    # the commands end to end: what the front-ends call, one function per command
    "pipeline": ["core", "tables", "trace", "collect", "config", "analysis", "engine", "importers", "report",
                 "launch", "mlflow_sync"],
    # A front end: no trace, analysis or engine (BEHIND_PIPELINE below).
    "cli": ["core", "tables", "collect", "config", "importers", "report", "pipeline", "launch", "mlflow_sync"],
}
# The Python module is a front end like the CLI, beside it.
# What a front-end (the CLI, the Python module) reaches only through pipeline/: reading traces, the
# analyses and the engine driving them. An include of one of these in a front-end fails.
FRONT_END_LAYERS = ("cli", "python")
BEHIND_PIPELINE = ("trace", "analysis", "engine")
FRONT_ENDS = {"python": [layer for layer in LAYERS if layer != "cli" and layer not in BEHIND_PIPELINE]}

# analysis/ is pure: no file I/O, no threads reading traces. A line matching one of these fails.
ANALYSIS_FORBIDDEN = [
    (re.compile(r'#\s*include\s*<(fstream|filesystem|cstdio|stdio\.h|fcntl\.h|unistd\.h|thread|mutex)>'),
     "file I/O or threads"),
    (re.compile(r'\b(stream_traces|load_traces|load_trace|read_trace|read_file|read_text_file)\s*\('),
     "reading files"),
    (re.compile(r'\b(fopen|std::ifstream|std::ofstream|std::fstream|::open)\b'), "file I/O"),
]

INCLUDE = re.compile(r'^\s*#\s*include\s*"([a-z_]+)/[^"]+"')
SOURCES = ("*.h", "*.cc")


def files_of(root):
    """(layer, path) of every source file of src/ and python/."""
    for folder in sorted((root / "src").iterdir()) if (root / "src").is_dir() else []:
        if folder.is_dir():
            for pattern in SOURCES:
                for path in sorted(folder.rglob(pattern)):
                    yield folder.name, path
    if (root / "python").is_dir():
        for pattern in SOURCES:
            for path in sorted((root / "python").rglob(pattern)):
                yield "python", path


def check(root, listing):
    allowed = {**LAYERS, **FRONT_ENDS}
    problems = []
    pairs = Counter()
    for layer, path in files_of(root):
        rel = path.relative_to(root)
        if layer not in allowed:
            problems.append(f"{rel}: folder src/{layer}/ is no layer: add it to LAYERS in tools/check_layers.py "
                            "and to docs/architecture.md")
            continue
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for number, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if m and m.group(1) != layer:
                target = m.group(1)
                pairs[(layer, target)] += 1
                if layer in FRONT_END_LAYERS and target in BEHIND_PIPELINE:
                    problems.append(f'{rel}:{number}: front-end {layer} may not include "{line.split(chr(34))[1]}": '
                                    f"{'/, '.join(BEHIND_PIPELINE)}/ are reached through one pipeline/ function "
                                    "per command")
                elif target not in allowed[layer]:
                    may = ", ".join(allowed[layer]) or "only itself"
                    problems.append(f'{rel}:{number}: {layer} may not include "{line.split(chr(34))[1]}" '
                                    f"({layer} may use: {may})")
            if layer == "analysis":
                code = line.split("//", 1)[0]
                for pattern, what in ANALYSIS_FORBIDDEN:
                    if pattern.search(code):
                        problems.append(f"{rel}:{number}: analysis is pure functions over tables, no {what}: "
                                        f"{line.strip()}")
    if listing:
        for (src, dst), n in sorted(pairs.items()):
            print(f"{src} -> {dst}: {n}")
    return problems


def main(argv):
    listing = "--list" in argv
    args = [a for a in argv if a != "--list"]
    root = Path(args[0]) if args else Path(__file__).resolve().parent.parent
    problems = check(root, listing)
    for p in problems:
        print(p)
    if problems:
        print(f"layers: {len(problems)} include(s) against the layer order (docs/architecture.md, \"Layers\")")
        return 1
    print(f"layers: every cross-folder include follows the order ({len(LAYERS)} layers)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
