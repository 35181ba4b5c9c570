"""Issue 7 for the Python API and `scaleprof run` with real PyTorch: a refused run name changes
nothing, bad arguments are ValueErrors, a full disk never raises into the training loop, a bad
CUDA_VISIBLE_DEVICES is a warning, and kill -9 of the wrapper ends the training it started."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO, training_env
from test_collect_ddp import torchrun

import scaleprof

FAKE_NVML = REPO / "build" / "tests" / "libfake_nvml.so"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for k in list(os.environ):
        if k.startswith(("SCALEPROF_", "TORCHELASTIC", "SLURM_", "OMPI_", "PMI_", "HOROVOD_", "CUDA_")) or k in (
                "RANK", "WORLD_SIZE", "LOCAL_RANK"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("SCALEPROF_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    monkeypatch.setenv("SCALEPROF_ROCM_SMI_LIBRARY", "/nonexistent/librocm_smi64.so")


def test_a_refused_run_name_changes_nothing_of_the_first_run(tmp_path):
    with scaleprof.Run(experiment="e", strategy="ddp", run_name="same", root=str(tmp_path)) as run:
        with run.epoch(0, samples=3):
            pass
    files = [tmp_path / "e" / "same" / "run.json", tmp_path / "e" / "same" / "rank-00000" / "rank.json",
             tmp_path / "e" / "same" / "rank-00000" / "epochs.csv"]
    before = [f.read_bytes() for f in files]
    with pytest.raises(scaleprof.ScaleprofError, match="already has rank 0"):
        scaleprof.Run(experiment="e", strategy="other", run_name="same", root=str(tmp_path)).start()
    import gc
    gc.collect()  # the refused recorder is gone: its destructor must not have written anything
    assert [f.read_bytes() for f in files] == before
    assert json.loads(files[0].read_text())["strategy"] == "ddp"


def test_bad_arguments_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="^rank -1 is negative$"):
        scaleprof.Run(rank=-1, root=str(tmp_path))
    with pytest.raises(ValueError, match="^world size -3 is negative$"):
        scaleprof.Run(world_size=-3, root=str(tmp_path))
    assert not any(tmp_path.rglob("rank--*"))
    with pytest.raises(scaleprof.ScaleprofError, match="^host .*'a/../../x' may only use letters"):
        os.environ["SCALEPROF_HOST"] = "a/../../x"
        try:
            scaleprof.Run(root=str(tmp_path / "root")).start()
        finally:
            del os.environ["SCALEPROF_HOST"]
    assert not (tmp_path / "root").exists() and not (tmp_path / "x").exists()


@pytest.mark.skipif(not FAKE_NVML.is_file(), reason=f"the stand-in NVML is built with the C++ tests ({FAKE_NVML})")
def test_an_impossible_cuda_visible_devices_is_a_warning(tmp_path, monkeypatch, capfd):
    script = tmp_path / "nvml.txt"
    script.write_text("devices=2\nutil.0=10\nutil.1=20\n")
    monkeypatch.setenv("SCALEPROF_NVML_LIBRARY", str(FAKE_NVML))
    monkeypatch.setenv("SCALEPROF_FAKE_NVML_SCRIPT", str(script))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "99999999999999999999")  # gave "IndexError: stoll"
    with scaleprof.Run(experiment="cvd", root=str(tmp_path)) as run:
        with run.epoch(0):
            pass
        assert run.gpu_note == "no GPU visible to this process"
    err = capfd.readouterr().err
    assert "scaleprof: warning: GPU 99999999999999999999 is not among the 2 GPUs NVML sees; not sampled\n" in err
    assert scaleprof.read_run(run.run_dir)["status"] == "completed"


FULL_DISK_TRAINING = """
import resource, signal, sys, torch, scaleprof
root = sys.argv[1]
model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 8), torch.randn(64, 1)

def train_epoch(run, e):
    with run.epoch(e, samples=64):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()

with scaleprof.Run(experiment="disk", run_name="full", root=root) as run:
    train_epoch(run, 0)
    epochs = run.rank_dir + "/epochs.csv"
    import os
    # The disk fills: every file may grow by 10 more bytes only (the next line is cut mid-record).
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(epochs) + 10, hard))
    for e in (1, 2, 3):
        train_epoch(run, e)  # must not raise
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    train_epoch(run, 4)
print("trained", flush=True)
"""


def test_a_full_disk_never_raises_into_the_training_and_loses_no_epoch(tmp_path):
    proc = subprocess.run([sys.executable, "-c", FULL_DISK_TRAINING, str(tmp_path)], capture_output=True, text=True,
                          timeout=120, env=training_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "trained\n"
    epochs_csv = tmp_path / "disk" / "full" / "rank-00000" / "epochs.csv"
    # Reported once, then once more when writing works again.
    lines = proc.stderr.splitlines()
    assert lines == [
        f"scaleprof: {epochs_csv}: cannot append: File too large; training continues, the records are kept in "
        "memory and written at the next record (reported once)",
        f"scaleprof: {epochs_csv}: writing works again after 3 failed write(s); kept records written"], proc.stderr
    data = scaleprof.read_run(str(tmp_path / "disk" / "full"))
    assert data["warnings"] == []
    assert data["status"] == "completed"
    (rank,) = data["ranks"]
    assert [e["epoch"] for e in rank["epochs"]] == [0, 1, 2, 3, 4]
    assert rank["write_errors"] == 3 and "File too large" in rank["last_write_error"]
    assert json.loads((tmp_path / "disk" / "full" / "run.json").read_text())["write_errors"] == 3


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie waits only for its reaper
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def test_kill_9_of_the_wrapper_ends_the_training_and_the_run_says_interrupted(tmp_path, scaleprof_cli):
    root = tmp_path / "m"
    cmd = [str(scaleprof_cli), "run", "--root", str(root), "--experiment", "k9", "--strategy", "ddp", "--no-gpu",
           "--", *torchrun(2, "--epochs", 200, "--steps-per-epoch", 3, "--step-sleep", 0.02, "--profile-epoch", -1)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=training_env())
    pids = []
    try:
        deadline = time.time() + 120
        while time.time() < deadline and len(pids) < 2:
            time.sleep(0.05)
            pids = []
            for epochs_csv in sorted(root.glob("k9/*/rank-*/epochs.csv")):
                if len(epochs_csv.read_text().splitlines()) >= 2:
                    pids.append(json.loads((epochs_csv.parent / "rank.json").read_text())["pid"])
        assert len(pids) == 2, "the ranks never finished an epoch"
        torchrun_pid = int(subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        # The training got SIGTERM when its wrapper died: torchrun and both ranks end (bounded wait).
        deadline = time.time() + 60
        while time.time() < deadline and any(_alive(p) for p in [torchrun_pid, *pids]):
            time.sleep(0.05)
        survivors = [p for p in [torchrun_pid, *pids] if _alive(p)]
        assert survivors == [], f"orphaned training processes: {survivors}"
    finally:
        for p in pids:
            if _alive(p):
                os.kill(p, signal.SIGKILL)
    (run_dir,) = list((root / "k9").iterdir())
    data = scaleprof.read_run(str(run_dir))
    assert data["status"] == "interrupted"
    assert data["status_reason"].startswith(f"the `scaleprof run` wrapper (pid {proc.pid} on ")
    assert data["status_reason"].endswith("is gone without recording an end: it was killed (e.g. kill -9) or its "
                                          "node failed")
    assert all(len(r["epochs"]) >= 1 for r in data["ranks"])
    listing = subprocess.run([str(scaleprof_cli), "runs", "--root", str(root), "--format", "json"],
                             capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0, listing.stderr
    (row,) = json.loads(listing.stdout)
    assert row["status"] == "interrupted"
    assert f"{run_dir}: interrupted: the `scaleprof run` wrapper (pid {proc.pid}" in listing.stderr


LATE_OPEN_TRAINING = r"""
import os, sys, tempfile
import torch.distributed as dist
import scaleprof
root = sys.argv[1]
open(root, "w").close()  # the root is a file: this rank's folder cannot be made there
with scaleprof.Run(experiment="e", strategy="ddp", root=root, rank=0, world_size=2) as run:
    with run.epoch(0):  # no run name agreed yet: torch.distributed is not initialised
        pass
    dist.init_process_group("gloo", init_method="file://" + tempfile.mktemp(), rank=0, world_size=1)
    with run.epoch(1):  # the name is agreed now, but the root cannot hold the run
        with run.step():
            pass
    os.remove(root)
    with run.epoch(2):  # the root works again: recorded
        pass
    print("trained", run.unrecorded, flush=True)
dist.destroy_process_group()
"""


def test_a_rank_folder_that_cannot_be_opened_at_the_first_record_never_raises(tmp_path):
    # Run() started before init_process_group opens its folder at the first record: whatever fails
    # there (no agreed name yet, an unusable root) is a warning per distinct reason, never an exception.
    root = tmp_path / "root"
    proc = subprocess.run([sys.executable, "-c", LATE_OPEN_TRAINING, str(root)], capture_output=True, text=True,
                          timeout=120, env=training_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "trained 3\n"  # epoch 0, epoch 1 and its step
    warnings = [l for l in proc.stderr.splitlines() if l.startswith("scaleprof:")]
    assert len(warnings) == 3, proc.stderr
    assert "cannot agree on a run name yet" in warnings[0] and "training continues unrecorded" in warnings[0]
    assert str(root) in warnings[1] and "training continues unrecorded" in warnings[1]
    assert warnings[2] == "scaleprof: recording works again after 3 unrecorded record(s)"
    (run_dir,) = (root / "e").iterdir()
    data = scaleprof.read_run(str(run_dir))
    (rank,) = data["ranks"]
    assert [e["epoch"] for e in rank["epochs"]] == [2]
