"""Shared fixtures of the PyTorch end-to-end tests: the scaleprof binary and how to run it."""
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def pytest_configure(config):
    # Known answers measured in wall time (a sleep of known length, a counterfactual run without a
    # cost): other work on the machine shifts them, so tools/run_tests.sh runs these modules first,
    # before it starts its background builds, and the rest after (`-m timing`, `-m "not timing"`).
    config.addinivalue_line("markers", "timing: a known answer measured in wall time; run alone on the machine")


@pytest.fixture(scope="session")
def scaleprof_cli():
    cli = Path(os.environ.get("SCALEPROF_CLI", REPO / "build" / "scaleprof"))
    if not cli.is_file():
        pytest.fail(f"scaleprof CLI not found at {cli}: build it or set SCALEPROF_CLI")
    return cli


@pytest.fixture(scope="session")
def run_cli(scaleprof_cli):
    """Runs `scaleprof trace <sub> <paths> --format json ...` and returns (parsed JSON, stderr)."""

    def run(sub, *args):
        proc = subprocess.run([str(scaleprof_cli), "trace", sub, *map(str, args), "--format", "json"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"scaleprof trace {sub} failed ({proc.returncode}):\n{proc.stderr}"
        return json.loads(proc.stdout), proc.stderr

    return run


def trace_json(cli, sub, *args, timeout=120):
    """`scaleprof trace <sub> <args> --format json`, parsed (outside a test function, where the run_cli
    fixture cannot reach)."""
    proc = subprocess.run([str(cli), "trace", sub, *map(str, args), "--format", "json"], capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, f"scaleprof trace {sub} failed ({proc.returncode}):\n{proc.stderr}"
    return json.loads(proc.stdout)


def report_json(cli, root, *what_if, timeout=180):
    """`scaleprof report --no-plots --format json --root ROOT` with each of `what_if` as --what-if, parsed."""
    args = [str(cli), "report", "--no-plots", "--format", "json", "--root", str(root)]
    for spec in what_if:
        args += ["--what-if", spec]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def decomposed_loss(report, to_workers):
    """A report's "where scaling is lost" row at `to_workers` (its JSON), checked to be the step decomposition's
    with causes that add up to its lost points (to their rounding), and its causes by name."""
    (row,) = [r for r in report["scaling_loss"] if r["to_workers"] == to_workers]
    assert row["basis"] == "decomposition", row
    assert sum(c["pts"] for c in row["causes"]) == pytest.approx(row["lost_pts"], abs=0.05)
    return row, {c["cause"]: c for c in row["causes"]}


def seconds_in_steps(report, causes, workers, end):
    """An epoch's mean time at `workers` less its time outside the profiled steps (`end`: "from" or "to", the
    side of the scaling-loss row `causes` belong to): what the decomposition's shares of the steps apply to."""
    epoch_s = {r["workers"]: r["mean_s"] for r in report["epoch_time"]}[workers]
    return epoch_s - causes["outside the steps"][f"seconds_per_epoch_{end}"]


def run_python(args, timeout=60, env=None):
    """Runs the current interpreter (the venv's, with torch) and fails the test with its output."""
    proc = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env=env)
    assert proc.returncode == 0, f"{args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc


def clock_drop_report(scaleprof_cli, work, train, runs):
    """Trains `train` (a straggler script of these tests) on 2 gloo ranks under torchrun, once per (run name,
    extra arguments) of `runs`, recorded under work/root with the stand-in NVML library (tests/fake_nvml);
    returns {"json": `scaleprof report --format json` of that root, "root": the root}."""
    fake = scaleprof_cli.parent / "tests" / "libfake_nvml.so"
    if not fake.is_file():
        pytest.fail(f"the stand-in NVML library is not built: {fake}")
    root = work / "root"
    env = training_env(SCALEPROF_NVML_LIBRARY=str(fake))
    for name, extra in runs:
        torchrun(train, 2, ["--root", root, "--run-name", name, "--work", work, *extra], timeout=240, env=env)
    out = subprocess.run([str(scaleprof_cli), "report", "--no-plots", "--format", "json", "--root", str(root)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    return {"json": json.loads(out.stdout), "root": root}


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory):
    """One real `mlflow server` (SQLite backend, 127.0.0.1, free port) for every MLflow test of the
    session: it takes tens of seconds to start on a loaded machine. Stopped by pid at the end."""
    from mlflow_fixtures import MlflowServer  # imports mlflow, or skips when it is not installed

    server = MlflowServer(tmp_path_factory.mktemp("mlflow-server")).start()
    try:
        yield server
    finally:
        server.stop()


def free_port():
    """A TCP port free on 127.0.0.1 now (torchrun's rendezvous)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def training_env(**extra):
    """The environment of a real gloo training under test: loopback only, one thread, no GPU library
    (nothing sampled on any machine), and no SCALEPROF_* run identity inherited from the caller."""
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", MASTER_ADDR="127.0.0.1",
               SCALEPROF_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1",
               SCALEPROF_ROCM_SMI_LIBRARY="/nonexistent/librocm_smi64.so")
    for k in ("SCALEPROF_ROOT", "SCALEPROF_RUN", "SCALEPROF_EXPERIMENT", "SCALEPROF_STRATEGY",
              "SCALEPROF_WRAPPER_PID", "SCALEPROF_GPU_MONITOR"):
        env.pop(k, None)
    env.update(extra)
    return env


def torchrun(script, nproc, args, timeout=180, env=None):
    """Runs `script` of this folder on `nproc` ranks under torchrun (one node, loopback, a free port) with
    `args`, in `env` (training_env() by default); fails the test with its output."""
    return run_python(["-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", nproc, "--master_addr",
                       "127.0.0.1", "--master_port", free_port(), HERE / script, *args], timeout=timeout,
                      env=env if env is not None else training_env())


def mean_profiled_step_s(scaleprof_cli, experiment_dir, nproc, rank, analysed):
    """The mean analysed step of one rank of the run at `nproc` ranks under `experiment_dir` (a recorded
    run's traces, `trace decompose`), to turn a part's share of the report back into time per profiled step."""
    files = sorted(f for f in experiment_dir.glob("*/rank-*/traces/*.json.gz")
                   if json.loads((f.parents[2] / "run.json").read_text()).get("world_size") == nproc)
    assert len(files) == nproc, files
    rows = [r for r in trace_json(scaleprof_cli, "decompose", *files)["decompose"] if r["rank"] == rank]
    assert len(rows) == analysed, rows
    return sum(r["step_us"] for r in rows) / len(rows) / 1e6


def deepspeed_env():
    """training_env() for DeepSpeed on CPU: its CPU accelerator, no compiled ops."""
    return training_env(DS_ACCELERATOR="cpu", DS_BUILD_OPS="0")


def require_deepspeed():
    """Skips, saying why, where DeepSpeed cannot be imported (make test installs it into .venv)."""
    probe = subprocess.run([sys.executable, "-c", "import deepspeed"], capture_output=True, text=True, timeout=120,
                           env=deepspeed_env())
    if probe.returncode != 0:
        pytest.skip("DeepSpeed cannot be imported (make test installs deepspeed==0.19.8 into .venv): "
                    + (probe.stderr.strip().splitlines() or ["?"])[-1])


PIPELINE_SLOT_OVERHEAD_MS = 5.0  # per micro-batch slot of a step: a P2P transfer and the schedule's Python


def pipeline_bubble_bounds(p, m, step_us):
    """(lowest, highest) bubble in % of a step that balanced stages of a real torch.distributed.pipelining
    schedule may show, p stages and m micro-batches. The ideal (p-1)/(m+p-1) counts compute slots only;
    every slot also pays a P2P transfer and the schedule's Python, about 4 ms on this machine (session 20:
    p=4 GPipe m=8 at 28.1-29.4 % against 27.3 %; fresh-clone CI: p=2 1F1B m=8 at 13.0 % against 11.1 %,
    27 ms over 9 slots of a 1.44 s step; p=2 GPipe m=4 at 22.1-22.3 % against 20.0 %, each slot a forward and a
    backward, so two transfers), which the waiting stages see as bubble. So: no less than 10 % under the ideal, no
    more than 10 % over it plus PIPELINE_SLOT_OVERHEAD_MS per slot of the step."""
    ideal = 100.0 * (p - 1) / (m + p - 1)
    slots_pct = 100.0 * (m + p - 1) * PIPELINE_SLOT_OVERHEAD_MS * 1000 / step_us
    return ideal * 0.90, ideal * 1.10 + slots_pct


def hta_python():
    """HTA 0.6.1 (PyPI traceinsight) in its own venv (it needs pandas < 3): SCALEPROF_HTA_PYTHON, else
    .cache/venv-traceinsight/bin/python (make test and bench/compare_hta.sh make it)."""
    return Path(os.environ.get("SCALEPROF_HTA_PYTHON", REPO / ".cache" / "venv-traceinsight" / "bin" / "python"))


def run_hta_on_cases(script, cases, timeout=300):
    """Runs `script` with HTA's Python on the trace folders of `cases` ({name: folder}, passed as
    name folder ...) and returns the JSON it prints; skips, saying why, without HTA or the traces."""
    python = hta_python()
    if not python.is_file():
        pytest.skip(f"HTA (traceinsight 0.6.1) not found at {python}: set SCALEPROF_HTA_PYTHON or run "
                    "bench/compare_hta.sh")
    missing = [str(p) for p in cases.values() if not Path(p).is_dir()]
    if missing:
        pytest.skip(f"shared traces missing: {', '.join(missing)}")
    args = [x for case, path in cases.items() for x in (case, str(path))]
    proc = subprocess.run([str(python), "-c", script, *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)

