"""The Python API on its own (one process, no torchrun): errors with the C++ message, epochs that
raise, the decorator form, and joining a run handed over by `scaleprof run`'s variables."""
import json
import os
import subprocess
import sys
import time

import pytest

import scaleprof


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for k in list(os.environ):
        if k.startswith(("SCALEPROF_", "TORCHELASTIC", "SLURM_", "OMPI_", "PMI_", "HOROVOD_")) or k in (
                "RANK", "WORLD_SIZE", "LOCAL_RANK"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("SCALEPROF_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    monkeypatch.setenv("SCALEPROF_ROCM_SMI_LIBRARY", "/nonexistent/librocm_smi64.so")


def test_errors_arrive_with_the_cpp_message(tmp_path):
    with pytest.raises(scaleprof.ScaleprofError) as e:
        scaleprof.Run(experiment="a/b", root=str(tmp_path)).start()
    assert str(e.value) == "experiment 'a/b' may only use letters, digits, '.', '_', '-' and '+' (it names a folder)"
    assert isinstance(e.value, RuntimeError)
    assert scaleprof.current_run() is None
    with pytest.raises(ValueError, match="is not a non-negative integer"):
        os.environ["SCALEPROF_RANK"] = "one"
        try:
            scaleprof.Run(root=str(tmp_path))
        finally:
            del os.environ["SCALEPROF_RANK"]
    # A bad argument is found at Run(), before anything is created (test_collect_arguments.py has them all).
    with pytest.raises(ValueError, match="^gpu_interval: interval '1ms' is below the minimum of 10ms$"):
        scaleprof.Run(root=str(tmp_path), gpu_interval="1ms")


def test_epoch_that_raises_is_not_recorded_and_the_run_fails(tmp_path):
    with pytest.raises(ValueError):
        with scaleprof.Run(experiment="e", strategy="s", root=str(tmp_path)) as run:
            with run.epoch(0, samples=4):
                time.sleep(0.01)
            with run.epoch(1):
                raise ValueError("boom")
    data = scaleprof.read_run(run.run_dir)
    assert data["status"] == "failed"
    (rank,) = data["ranks"]
    assert [e["epoch"] for e in rank["epochs"]] == [0]
    assert rank["epochs"][0]["samples"] == 4 and rank["epochs"][0]["duration_s"] >= 0.01
    with pytest.raises(scaleprof.ScaleprofError, match="has finished"):
        with run.epoch(2):
            pass


def test_decorator_and_current_run(tmp_path):
    @scaleprof.recorded(experiment="deco", root=str(tmp_path), run_name="r1")
    def train(n):
        run = scaleprof.current_run()
        for i in range(n):
            with run.epoch(i):
                with run.step(samples=2):
                    pass
        return run.rank_dir

    rank_dir = train(3)
    assert scaleprof.current_run() is None
    assert rank_dir == str(tmp_path / "deco" / "r1" / "rank-00000")
    data = scaleprof.read_run(str(tmp_path / "deco" / "r1"))
    assert data["status"] == "completed" and data["epochs_completed"] == 3
    assert [s["samples"] for s in data["ranks"][0]["steps"]] == [2, 2, 2]
    # The same run name again would mix two launches.
    with pytest.raises(scaleprof.ScaleprofError, match="already has rank 0"):
        train(1)


def test_joins_the_run_of_the_wrapper(tmp_path):
    env = dict(os.environ, SCALEPROF_ROOT=str(tmp_path), SCALEPROF_EXPERIMENT="x", SCALEPROF_RUN="w1",
               SCALEPROF_STRATEGY="fsdp", SCALEPROF_GPU_MONITOR="node", SCALEPROF_WRAPPER_PID=str(os.getpid()))
    code = ("import scaleprof\n"
            "with scaleprof.Run() as run:\n"
            "    print(run.run_dir); print(run.strategy); print(run.gpu_note)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [str(tmp_path / "x" / "w1"), "fsdp",
                                       "the node's GPUs are sampled by `scaleprof run`"]
    # run.json belongs to the wrapper: the rank did not write one.
    assert not (tmp_path / "x" / "w1" / "run.json").exists()
    assert json.loads((tmp_path / "x" / "w1" / "rank-00000" / "rank.json").read_text())["status"] == "completed"


def test_pip_install_ships_the_cli(tmp_path):
    cli = scaleprof.cli_path()
    assert os.path.isabs(cli) and os.access(cli, os.X_OK), cli
    out = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout.strip() == f"scaleprof {scaleprof.__version__}"
    # The installed CLI reads what the installed module wrote.
    with scaleprof.Run(experiment="cli", root=str(tmp_path), run_name="r") as run:
        with run.epoch(0):
            pass
    out = subprocess.run([cli, "runs", "--root", str(tmp_path), "--format", "csv"], capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1].startswith("cli,r,,1,1,1,completed,")
