"""Collect end to end: examples/ddp_train.py under torchrun (1 and 2 processes, real torch CPU, gloo)
and under `scaleprof run`, checking what lands in the run directory against what the training
measured on its own, and that the trace engine reads the profiler traces with the right ranks."""
import gzip
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from conftest import REPO, free_port, training_env

try:
    import scaleprof
except ImportError as e:  # never skip silently: the module is part of what is tested
    raise ImportError(f"the scaleprof Python module is not installed in {sys.executable} "
                      "(pip install --no-build-isolation . , as tools/run_tests.sh does)") from e

EXAMPLE = REPO / "examples" / "ddp_train.py"
EPOCHS, STEPS = 3, 12
PROFILED_STEPS = [2, 3]  # --profile-epoch 1 with wait=1, warmup=1, active=2: ProfilerStep#2 and #3


def torchrun(nproc, *example_args):
    return [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", str(nproc),
            "--master_addr", "127.0.0.1", "--master_port", str(free_port()), str(EXAMPLE), *map(str, example_args)]


def printed_epochs(stdout):
    """{rank: {epoch: seconds}} from the example's own perf_counter measurements."""
    out = {}
    for rank, epoch, seconds in re.findall(r"rank (\d+) epoch (\d+) done seconds ([\d.]+)", stdout):
        out.setdefault(int(rank), {})[int(epoch)] = float(seconds)
    return out


def read_csv(path):
    lines = Path(path).read_text().splitlines()
    header = lines[0].split(",")
    return [dict(zip(header, line.split(","))) for line in lines[1:]]


def only_run_dir(root, experiment):
    runs = [p for p in (Path(root) / experiment).iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


@pytest.fixture(scope="module", params=[1, 2], ids=["1proc", "2procs"])
def torchrun_run(request, tmp_path_factory):
    nproc = request.param
    root = tmp_path_factory.mktemp(f"collect{nproc}")
    before_ns = time.time_ns()
    proc = subprocess.run(torchrun(nproc, "--epochs", EPOCHS, "--steps-per-epoch", STEPS, "--root", root,
                                   "--experiment", "cnn", "--strategy", "ddp"),
                          capture_output=True, text=True, timeout=240, env=training_env())
    after_ns = time.time_ns()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = only_run_dir(root, "cnn")
    return {"nproc": nproc, "root": root, "dir": run_dir, "stdout": proc.stdout, "before_ns": before_ns,
            "after_ns": after_ns, "run_json": json.loads((run_dir / "run.json").read_text())}


def test_run_json_is_complete(torchrun_run):
    info, n = torchrun_run["run_json"], torchrun_run["nproc"]
    assert info["schema_version"] == 1
    assert info["experiment"] == "cnn" and info["run"] == torchrun_run["dir"].name
    assert info["run"].startswith(f"ddp-w{n}-")
    assert info["strategy"] == "ddp" and info["world_size"] == n and info["nodes"] == 1
    assert info["launcher"] == "torchrun"
    assert info["command"][0] == sys.executable and info["command"][1] == str(EXAMPLE)
    assert info["hosts"] == [socket.gethostname()]
    assert torchrun_run["before_ns"] < info["start_unix_ns"] < info["end_unix_ns"] < torchrun_run["after_ns"]
    assert info["status"] == "completed"
    assert info["exit_status"] is None  # rank 0 writes run.json; only `scaleprof run` knows the exit code
    assert info["scaleprof_version"] == scaleprof.__version__ == "0.1.0"
    assert info["torch_version"] == torch.__version__
    assert info["writer"] == "rank0" and info["writer_pid"] > 0


def test_every_rank_recorded_its_epochs_consistent_with_measured_time(torchrun_run):
    n = torchrun_run["nproc"]
    measured = printed_epochs(torchrun_run["stdout"])
    assert sorted(measured) == list(range(n))
    wall_s = (torchrun_run["after_ns"] - torchrun_run["before_ns"]) * 1e-9
    for rank in range(n):
        rank_dir = torchrun_run["dir"] / f"rank-{rank:05d}"
        meta = json.loads((rank_dir / "rank.json").read_text())
        assert meta["rank"] == rank and meta["world_size"] == n and meta["status"] == "completed"
        assert meta["local_rank"] == rank and meta["host"] == socket.gethostname()
        assert re.search(rf"rank {rank} host \S+ pid {meta['pid']} ", torchrun_run["stdout"])
        epochs = read_csv(rank_dir / "epochs.csv")
        assert [int(e["epoch"]) for e in epochs] == list(range(EPOCHS))
        total = 0.0
        for e in epochs:
            d = float(e["duration_s"])
            start, end = int(e["start_unix_ns"]), int(e["end_unix_ns"])
            # The example timed the same block with perf_counter: scaleprof's figure sits inside it.
            theirs = measured[rank][int(e["epoch"])]
            assert d <= theirs + 1e-4 and d == pytest.approx(theirs, rel=0.02, abs=0.003), (rank, e, theirs)
            assert abs((end - start) * 1e-9 - d) < 1e-6
            assert torchrun_run["before_ns"] < start < end < torchrun_run["after_ns"]
            assert int(e["samples"]) == STEPS * 32
            total += d
        assert 0 < total < wall_s
        steps = read_csv(rank_dir / "steps.csv")
        assert len(steps) == EPOCHS * STEPS
        for e in epochs:
            mine = [s for s in steps if s["epoch"] == e["epoch"]]
            assert [int(s["step"]) for s in mine] == list(range(STEPS))
            assert sum(float(s["duration_s"]) for s in mine) <= float(e["duration_s"])
            # Steps lie inside their epoch on the wall clock.
            assert all(int(e["start_unix_ns"]) <= int(s["start_unix_ns"]) <= int(e["end_unix_ns"]) for s in mine)
        assert not (rank_dir / "gpu.csv").exists()


def test_kineto_traces_are_read_with_the_right_ranks(torchrun_run, scaleprof_cli):
    n = torchrun_run["nproc"]
    dirs = []
    for rank in range(n):
        traces = sorted((torchrun_run["dir"] / f"rank-{rank:05d}" / "traces").iterdir())
        assert len(traces) == 1 and traces[0].name.endswith(".pt.trace.json.gz"), traces
        with gzip.open(traces[0], "rt") as f:
            assert "traceEvents" in json.load(f)
        dirs.append(traces[0].parent)
    proc = subprocess.run([str(scaleprof_cli), "trace", "steps", "--format", "json", *map(str, dirs)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    steps = json.loads(proc.stdout)["steps"]
    assert {s["rank"] for s in steps} == set(range(n))
    for rank in range(n):
        assert [s["step"] for s in steps if s["rank"] == rank] == PROFILED_STEPS


def test_runs_lists_the_run(torchrun_run, scaleprof_cli):
    proc = subprocess.run([str(scaleprof_cli), "runs", "--root", str(torchrun_run["root"]), "--format", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    (row,) = json.loads(proc.stdout)
    n = torchrun_run["nproc"]
    assert row == {"experiment": "cnn", "run": torchrun_run["dir"].name, "strategy": "ddp", "workers": n,
                   "nodes": 1, "epochs": EPOCHS, "status": "completed",
                   "start": row["start"], "exit_status": None, "layout": "scaleprof"}
    data = scaleprof.read_run(str(torchrun_run["dir"]))
    assert data["status"] == "completed" and data["warnings"] == []
    assert [len(r["epochs"]) for r in data["ranks"]] == [EPOCHS] * n


def test_under_scaleprof_run_the_ranks_join_the_wrapper_run(tmp_path, scaleprof_cli):
    root = tmp_path / "m"
    cmd = [str(scaleprof_cli), "run", "--root", str(root), "--experiment", "cnn", "--strategy", "ddp-bucket1",
           "--gpu-interval", "100ms", "--",
           *torchrun(2, "--epochs", 2, "--steps-per-epoch", 6, "--strategy", "ddp-bucket1", "--bucket-cap-mb", 1,
                     "--profile-epoch", -1)]
    start = time.time_ns()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=training_env())
    end = time.time_ns()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no GPU library found" in proc.stderr  # said once, not fatal
    run_dir = only_run_dir(root, "cnn")
    info = json.loads((run_dir / "run.json").read_text())
    assert info["writer"] == "wrapper" and info["exit_status"] == 0 and info["status"] == "completed"
    assert info["world_size"] == 2 and info["nodes"] == 1 and info["launcher"] == "torchrun"
    assert info["run"].startswith("ddp-bucket1-w2-")
    assert info["torch_version"] == torch.__version__
    assert start < info["start_unix_ns"] < info["end_unix_ns"] < end
    assert info["command"][:3] == [sys.executable, "-m", "torch.distributed.run"]
    for rank in (0, 1):
        rank_dir = run_dir / f"rank-{rank:05d}"
        assert len(read_csv(rank_dir / "epochs.csv")) == 2
        assert json.loads((rank_dir / "rank.json").read_text())["strategy"] == "ddp-bucket1"
        assert list((rank_dir / "traces").iterdir()) == []  # --profile-epoch -1
        assert not (rank_dir / "gpu.csv").exists()  # the wrapper samples the node, not the ranks
    assert (run_dir / f"node-{socket.gethostname()}").is_dir()


def test_sigkill_of_one_rank_keeps_every_completed_epoch(tmp_path, scaleprof_cli):
    root = tmp_path / "m"
    cmd = [str(scaleprof_cli), "run", "--root", str(root), "--experiment", "kill", "--strategy", "ddp", "--",
           *torchrun(2, "--epochs", 50, "--steps-per-epoch", 5, "--step-sleep", 0.02, "--profile-epoch", -1)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=training_env())
    try:
        deadline = time.time() + 120
        victim = None
        while time.time() < deadline and victim is None:
            time.sleep(0.05)
            for epochs_csv in root.glob("kill/*/rank-00001/epochs.csv"):
                if len(epochs_csv.read_text().splitlines()) >= 3:  # header + 2 finished epochs
                    victim = json.loads((epochs_csv.parent / "rank.json").read_text())["pid"]
        assert victim is not None, "rank 1 never finished two epochs"
        time.sleep(0.05)  # somewhere inside the next epoch
        os.kill(victim, signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0, stdout + stderr
    run_dir = only_run_dir(root, "kill")
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "failed" and info["exit_status"] == proc.returncode

    # Every epoch a rank printed as done (after scaleprof wrote it) is in its epochs.csv.
    printed = printed_epochs(stdout)
    assert len(printed.get(1, {})) >= 2
    for rank in (0, 1):
        recorded = [int(e["epoch"]) for e in read_csv(run_dir / f"rank-{rank:05d}" / "epochs.csv")]
        assert recorded == list(range(len(recorded)))
        assert set(printed.get(rank, {})) <= set(recorded), (rank, printed.get(rank), recorded)
    assert json.loads((run_dir / "rank-00001" / "rank.json").read_text())["status"] == "running"

    # A kill in the middle of a write() on a network file system leaves a partial last line; a local
    # SIGKILL cannot split one write(), so the torn tail is appended here by hand.
    steps_csv = run_dir / "rank-00001" / "steps.csv"
    lines_before = len(steps_csv.read_text().splitlines())
    with open(steps_csv, "a") as f:
        f.write("3,2,17953")
    listing = subprocess.run([str(scaleprof_cli), "runs", "--root", str(root), "--format", "json"],
                             capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0, listing.stderr
    torn = f"{steps_csv}:{lines_before + 1}: torn last line (the writer stopped mid-record)"
    assert f"warning: {torn}" in listing.stderr
    (row,) = json.loads(listing.stdout)
    assert row["status"] == "failed" and row["workers"] == 2
    assert row["epochs"] == min(len(read_csv(run_dir / f"rank-{r:05d}" / "epochs.csv")) for r in (0, 1))
    data = scaleprof.read_run(str(run_dir))
    assert torn in data["warnings"]
    assert data["ranks"][1]["status"] == "interrupted"  # rank.json says running, but its pid is gone
    assert len(data["ranks"][1]["steps"]) == lines_before - 1


def test_each_rank_notes_the_process_group_it_trained_in(torchrun_run):
    n = torchrun_run["nproc"]
    for rank in range(n):
        info = json.loads((torchrun_run["dir"] / f"rank-{rank:05d}" / "rank.json").read_text())
        assert info["process_group_size"] == n
        assert info["process_group_by"] == ("torch.distributed" if n > 1 else info["process_group_by"])


ALONE_TRAINING = r"""
import time
import scaleprof
# Launched as 2 ranks, but torch.distributed is never initialised: each process trains alone. The run,
# its root and name come from `scaleprof run`, as in a job that `scaleprof slurm` wrote.
with scaleprof.Run() as run:
    for epoch in range(2):
        with run.epoch(epoch, samples=64):
            time.sleep(0.05)
"""


def test_ranks_that_never_formed_a_process_group_are_flagged_and_left_out(tmp_path, scaleprof_cli):
    # Issue 21: two tasks training independently were recorded as one completed 2-rank run, and the report
    # took their epoch times for a 2-worker measurement.
    script = tmp_path / "alone.py"
    script.write_text(ALONE_TRAINING)
    root = tmp_path / "m"
    cmd = [str(scaleprof_cli), "run", "--root", str(root), "--experiment", "e", "--strategy", "ddp", "--",
           sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", "2",
           "--master_addr", "127.0.0.1", "--master_port", str(free_port()), str(script)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=training_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the training itself is not disturbed
    run_dir = only_run_dir(root, "e")
    for rank in (0, 1):
        info = json.loads((run_dir / f"rank-{rank:05d}" / "rank.json").read_text())
        assert (info["status"], info["process_group_size"], info["process_group_by"]) == ("completed", 1, "none")
    data = scaleprof.read_run(str(run_dir))
    assert data["status"] == "not_distributed"
    reason = ("launched as 2 ranks, but the training of rank 0 never joined a process group (neither "
              "torch.distributed nor Horovod was initialised): the ranks trained independently, so this is no "
              "2-rank measurement")
    assert data["status_reason"] == reason
    listing = subprocess.run([str(scaleprof_cli), "runs", "--root", str(root), "--format", "json"],
                             capture_output=True, text=True, timeout=60)
    assert json.loads(listing.stdout)[0]["status"] == "not_distributed"
    # Beside it, one process alone is a real 1-rank run: the report shows that one and names the other.
    single = subprocess.run([str(scaleprof_cli), "run", "--root", str(root), "--experiment", "e", "--strategy", "ddp",
                             "--", sys.executable, str(script)],
                            capture_output=True, text=True, timeout=120, env=training_env())
    assert single.returncode == 0, single.stdout + single.stderr
    report = subprocess.run([str(scaleprof_cli), "report", "--root", str(root), "--format", "json"],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)  # its plots/ land there
    assert report.returncode == 3, report.stdout + report.stderr
    assert f"{run_dir}: left out: {reason}" in report.stderr
    rows = json.loads(report.stdout)["scaling"]
    assert [(r["strategy"], r["workers"]) for r in rows] == [("ddp", 1)]
