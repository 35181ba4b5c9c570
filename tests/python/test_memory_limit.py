"""Issue 30, item 1: the engine's worker threads under an address-space limit. A std::bad_alloc in a
worker thread called std::terminate and killed the interpreter (SIGABRT; a Jupyter kernel dies); now
it reaches Python as a MemoryError or a ScaleprofError and the interpreter keeps running. Two ranks,
read with one thread and with four, under RLIMIT_AS limits from tight to loose above what the
interpreter already uses (docs/development.md, "Threads")."""
import json
import subprocess
import sys
import textwrap

import pytest


def write_rank(path, rank, events):
    parts = [f'{{"distributedInfo": {{"rank": {rank}, "world_size": 2}}, "traceEvents": [']
    for i in range(events):
        parts.append(f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, '
                     f'"ts": {i * 10}, "dur": 3, "args": {{"correlation": {i}}}}},')
        parts.append(f'{{"ph": "X", "cat": "kernel", "name": "kernel_{i % 5000}", "pid": 0, "tid": 7, '
                     f'"ts": {i * 10 + 4}, "dur": 5, "args": {{"correlation": {i}, "stream": 7, "device": 0}}}},')
    parts.append('{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, '
                 '"ts": 0, "dur": 10}]}')
    path.write_text("".join(parts))


# Runs in a child interpreter: the limit is set after the module is imported, relative to the address
# space already in use, then every limit is tried in turn in the same interpreter.
CHILD = textwrap.dedent("""
    import json, resource, sys
    import numpy  # the binding's tables are numpy arrays: imported before the limit, not under it
    import scaleprof

    def vm_bytes():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024

    paths, threads = json.loads(sys.argv[1]), int(sys.argv[2])
    outcomes = []
    base = vm_bytes()
    for extra_mib in (8, 16, 32, 64, 128, 256, 512, 1024):
        resource.setrlimit(resource.RLIMIT_AS, (base + (extra_mib << 20), resource.RLIM_INFINITY))
        try:
            scaleprof.TraceAnalysis(trace_files=paths, threads=threads)
            outcomes.append("ok")
        except MemoryError:
            outcomes.append("MemoryError")
        except scaleprof.ScaleprofError as e:
            outcomes.append("ScaleprofError: " + str(e))
        finally:
            resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    # The interpreter is still alive and usable after the failures.
    print(json.dumps({"outcomes": outcomes, "alive": sum(range(10))}))
""")


# Four threads: a thread is started only where the limit leaves room for its stack and a malloc arena
# of its own (core/task_group.cc): started without it, glibc ended the process when the thread's
# thread-local storage could not be allocated ("cannot allocate memory for thread-local data: ABORT",
# exit 127). Each arena is 64 MiB of address space, hence the loosest limit of 1 GiB.
@pytest.mark.parametrize("threads", [1, 4])
def test_worker_out_of_memory_is_an_exception_not_an_abort(tmp_path, threads):
    paths = []
    for rank in (0, 1):
        p = tmp_path / f"rank{rank}.json"
        write_rank(p, rank, 150_000)
        paths.append(str(p))
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(paths), str(threads)], capture_output=True,
                          text=True, timeout=600)
    # Never killed by a signal (SIGABRT: -6), never a non-zero exit.
    assert proc.returncode == 0, f"exit {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["alive"] == 45
    outcomes = result["outcomes"]
    assert len(outcomes) == 8
    # Some limit is too tight for the two ranks, and the loosest is not.
    assert any(o != "ok" for o in outcomes), outcomes
    assert outcomes[-1] == "ok", outcomes
    for o in outcomes:
        assert o in ("ok", "MemoryError") or "out of memory" in o, outcomes
