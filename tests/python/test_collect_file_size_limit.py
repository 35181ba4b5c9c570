"""Issue 18, finding 1, for the Python API and `scaleprof run` around a Python training: under a
file-size limit (`ulimit -f`) scaleprof's writes fail with EFBIG and are counted, the training is never
ended by SIGXFSZ because of them, and its own writes behave as they would without scaleprof.

CPython itself ignores SIGXFSZ at start-up, so the cases that matter are a training that restored
the default action (as these scripts do, and as an embedding interpreter has it): scaleprof then
blocks the signal only around its own writes, in the writing thread, and leaves the disposition alone."""
import json
import resource
import signal
import subprocess
import sys

from conftest import training_env

import scaleprof

LIMITED_TRAINING = r"""
import os, resource, signal, sys, scaleprof
root, limit = sys.argv[1], int(sys.argv[2])
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # the kernel's default: a write past the limit ends the process
with scaleprof.Run(experiment="lim", run_name="r", root=root, gpu_interval="10ms") as run:
    with run.epoch(0, samples=8):
        pass
    resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(run.rank_dir + "/epochs.csv") + limit,
                                               resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    for e in range(1, 40):
        with run.epoch(e, samples=8):
            with run.step(samples=8):
                pass
    print("trained", run.rank_dir, flush=True)
# The training's own write past the limit still ends it, as it would without scaleprof.
with open(os.path.join(root, "own"), "w") as f:
    f.write("x" * (limit * 4))
    f.flush()
print("not reached", flush=True)
"""


def test_the_python_api_under_a_file_size_limit_counts_write_errors_and_the_training_goes_on(tmp_path):
    proc = subprocess.run([sys.executable, "-c", LIMITED_TRAINING, str(tmp_path), "300"], capture_output=True,
                          text=True, timeout=120, env=training_env())
    # Ended by its own write (SIGXFSZ), after the training and the recording finished.
    assert proc.returncode == -signal.SIGXFSZ, proc.stderr
    assert proc.stdout.startswith("trained ") and "not reached" not in proc.stdout, proc.stderr
    rank_dir = proc.stdout.split()[1]
    epochs_csv = f"{rank_dir}/epochs.csv"
    assert (f"scaleprof: {epochs_csv}: cannot append: File too large; training continues, the records are kept in "
            "memory and written at the next record (reported once)") in proc.stderr
    data = scaleprof.read_run(str(tmp_path / "lim" / "r"))
    assert data["warnings"] == []  # whole lines only
    (rank,) = data["ranks"]
    epochs = [e["epoch"] for e in rank["epochs"]]
    assert epochs == list(range(len(epochs))) and 2 <= len(epochs) < 40  # what fitted is kept, in order


SCRIPT_THEN_EXIT = r"""
import sys, time
time.sleep(1.0)
print("trained", flush=True)
sys.exit(5)
"""


def _limit(nbytes):
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # as a shell has it (Python ignores it for itself)
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    return apply


def test_scaleprof_run_under_a_file_size_limit_returns_the_trainings_exit_code(tmp_path, scaleprof_cli):
    from test_collect_faults import FAKE_NVML
    import pytest

    if not FAKE_NVML.is_file():
        pytest.skip(f"the stand-in NVML is built with the C++ tests ({FAKE_NVML})")
    script = tmp_path / "nvml.txt"
    script.write_text("devices=4\nutil.0=10\n")
    env = training_env(SCALEPROF_NVML_LIBRARY=str(FAKE_NVML), SCALEPROF_FAKE_NVML_SCRIPT=str(script))
    root = tmp_path / "m"
    proc = subprocess.run([str(scaleprof_cli), "run", "--root", str(root), "--experiment", "lim", "--run-name", "r",
                           "--gpu-interval", "10ms", "--", sys.executable, "-c", SCRIPT_THEN_EXIT],
                          capture_output=True, text=True, timeout=120, env=env, preexec_fn=_limit(4096))
    assert proc.returncode == 5, proc.stderr
    assert proc.stdout == "trained\n"
    assert "gpu.csv: cannot append: File too large; training continues" in proc.stderr
    run_json = json.loads((root / "lim" / "r" / "run.json").read_text())
    assert run_json["exit_status"] == 5 and run_json["write_errors"] > 0
    assert "File too large" in run_json["last_write_error"]
    (gpu_csv,) = (root / "lim" / "r").glob("node-*/gpu.csv")
    text = gpu_csv.read_text()
    assert 0 < len(text) <= 4096 and text.endswith("\n")


UNWRITABLE_TRACE_TRAINING = r"""
import os, sys, torch, scaleprof
root = sys.argv[1]
model = torch.nn.Linear(8, 1)
x = torch.randn(16, 8)
with scaleprof.Run(experiment="trace", run_name="r", root=root) as run:
    # The traces folder becomes unusable (here a file in its place; a full disk does the same).
    os.rmdir(run.traces_dir)
    open(run.traces_dir, "w").close()
    with run.torch_profiler(wait=0, warmup=1, active=1, repeat=1) as prof:
        for step in range(4):
            with run.epoch(step):
                model(x).sum().backward()
            prof.step()  # exports the trace at the end of the active step: must not raise
    print("trained", run.trace_write_errors, flush=True)
"""


def test_a_profiler_trace_that_cannot_be_written_is_a_warning_not_an_exception(tmp_path):
    proc = subprocess.run([sys.executable, "-c", UNWRITABLE_TRACE_TRAINING, str(tmp_path)], capture_output=True,
                          text=True, timeout=300, env=training_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "trained 1\n"
    traces = tmp_path / "trace" / "r" / "rank-00000" / "traces"
    assert f"scaleprof: warning: {traces}: cannot write a profiler trace: " in proc.stderr
    (rank,) = scaleprof.read_run(str(tmp_path / "trace" / "r"))["ranks"]
    assert [e["epoch"] for e in rank["epochs"]] == [0, 1, 2, 3]
