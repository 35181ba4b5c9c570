"""MLflow for the tests: a real tracking server on 127.0.0.1 (SQLite backend, free port, stopped by
pid) and runs logged exactly as itwinai 0.4.2 logs them, with MLflow's own Python client."""
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import free_port  # the MLflow tests import it from here too

mlflow = pytest.importorskip("mlflow", reason="mlflow is not installed (make deps installs it)")
from mlflow.tracking import MlflowClient  # noqa: E402

EXPERIMENT = "scaling-test"

# One CSV row set of torch.profiler key_averages as itwinai writes it (self device time in us).
PROFILING_HEADER = "name,node_id,self_cuda_time_total,cuda_time_total,cuda_time_total_str,calls,strategy,num_gpus,global_rank"


class MlflowServer:
    """`mlflow server` with a SQLite backend; start() waits until /health answers."""

    def __init__(self, workdir: Path, job_execution: bool = False):
        self.workdir = workdir
        # MLflow 3's server also starts a job runner (7 huey consumer processes, ~47 polling threads, for
        # its GenAI jobs). On 2 cores it made every runs/log-batch ~5x slower (bench/mlflow_sync_bench.py,
        # docs/mlflow.md); nothing scaleprof reads or writes uses it, so it is off unless asked for.
        self.job_execution = job_execution
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None

    def start(self, timeout=300):
        self.workdir.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, MLFLOW_HOME=str(self.workdir), PYTHONUNBUFFERED="1",
                   MLFLOW_SERVER_ENABLE_JOB_EXECUTION="true" if self.job_execution else "false")
        log = open(self.workdir / "server.log", "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(self.port),
             "--backend-store-uri", f"sqlite:///{self.workdir / 'server.db'}",
             "--artifacts-destination", str(self.workdir / "artifacts"), "--workers", "1"],
            cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mlflow server exited: {(self.workdir / 'server.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError("mlflow server did not answer /health in time")

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            # Its own process group (start_new_session): the server and its uvicorn worker, by pid.
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None


def _worker_name(rank):
    return "worker_0 (main)" if rank == 0 else f"worker_{rank}"


def _log_worker(client, exp_id, parent_id, rank, world, strategy, epochs=None, gpu=None, profiling=None,
                tmp=None, t0=1_700_000_000_000, samples=None):
    """One itwinai worker run: params as TorchTrainer logs them, then its metrics and artifact; `samples`
    (one count per epoch) as `scaleprof mlflow sync` logs them (epoch_samples, step = epoch)."""
    run = client.create_run(exp_id, run_name=_worker_name(rank), tags={"mlflow.parentRunId": parent_id})
    rid = run.info.run_id
    params = {"strategy": strategy, "global_rank": str(rank), "global_world_size": str(world),
              "local_rank": str(rank), "distributed_strategy": "TorchDDPStrategy", "batch_size": "32"}
    if gpu is not None:
        params["probing_interval"] = "1"
    for k, v in params.items():
        client.log_param(rid, k, v)
    for step, seconds in enumerate(epochs or []):
        client.log_metric(rid, "epoch_time_s", seconds, timestamp=t0 + 1000 * step, step=step)
    for step, count in enumerate(samples or []):
        client.log_metric(rid, "epoch_samples", count, timestamp=t0 + 1000 * step, step=step)
    if gpu is not None:
        for idx, (util, power) in enumerate(gpu):
            client.log_metric(rid, "gpu_utilization_percent", util, timestamp=t0 + 1000 * idx, step=idx)
            client.log_metric(rid, "gpu_power_W", power, timestamp=t0 + 1000 * idx, step=idx)
    if profiling is not None:
        folder = tmp / f"prof-{rid}"
        folder.mkdir(parents=True)
        path = folder / "torch_profiling_averages.csv"
        rows = [PROFILING_HEADER] + [f"{name},0,{us},{us},{us}us,1,{strategy},{world},{rank}" for name, us in profiling]
        path.write_text("\n".join(rows) + "\n")
        client.log_artifact(rid, str(path), artifact_path="torch_profiling_averages")
    client.set_terminated(rid, "FINISHED")
    return rid


# Per rank: (ATen op, ProfilerStep, other op) self device times in us.
PROF = [("aten::mm", 600), ("ProfilerStep#1", 100), ("cudaStreamSynchronize", 300)]
PROF_2 = [("aten::mm", 500), ("ProfilerStep#1", 100), ("nccl:all_reduce", 500)]


def log_itwinai_runs(tracking_uri: str, tmp: Path, artifact_location: str | None = None, experiment: str = EXPERIMENT,
                     samples: int | None = None):
    """The experiment every MLflow test reads (numbers worked out by hand in test_mlflow_report.py):

    ddp-1  train run, 1 worker:  epoch_time_s 10, 8, 8; GPU util 50, 70 %, power 100, 200 W (1 s)
    ddp-2  train run, 2 workers: epoch_time_s 6, 4, 4 (main worker); GPU on both: util 80/90, power 300/300
    ddp-2-prof  a separate profiling run of the same configuration (itwinai's docs recommend it):
           both workers log torch_profiling_averages.csv
    ddp-1-prof  profiling for 1 worker
    tune-hvd  Ray-style: tune run -> trial_0 -> worker_0 (main), worker_1; horovod, 2 workers: 7, 5, 5

    With `samples`, what a scaleprof sync adds to this shape: every epoch's `epoch_samples` (that count)
    on both ddp-2 workers and on ddp-1's, on tune-hvd's main worker only (a worker without them: that
    training has no throughput). itwinai itself logs none.
    """
    client = MlflowClient(tracking_uri=tracking_uri)
    exp_id = client.create_experiment(experiment, artifact_location=artifact_location)

    def train(name):
        return client.create_run(exp_id, run_name=name).info.run_id

    def end(rid):
        client.set_terminated(rid, "FINISHED")

    r = train("ddp-1")
    each = [samples] * 3 if samples is not None else None
    _log_worker(client, exp_id, r, 0, 1, "ddp", epochs=[10, 8, 8], gpu=[(50, 100), (70, 200)], samples=each)
    end(r)
    r = train("ddp-2")
    _log_worker(client, exp_id, r, 0, 2, "ddp", epochs=[6, 4, 4], gpu=[(80, 300)], samples=each)
    _log_worker(client, exp_id, r, 1, 2, "ddp", gpu=[(90, 300)], samples=each)
    end(r)
    r = train("ddp-1-prof")
    _log_worker(client, exp_id, r, 0, 1, "ddp", profiling=PROF, tmp=tmp)
    end(r)
    r = train("ddp-2-prof")
    _log_worker(client, exp_id, r, 0, 2, "ddp", profiling=PROF_2, tmp=tmp)
    _log_worker(client, exp_id, r, 1, 2, "ddp", profiling=PROF_2, tmp=tmp)
    end(r)
    tune = train("tune-hvd")
    trial = client.create_run(exp_id, run_name="trial_0", tags={"mlflow.parentRunId": tune}).info.run_id
    _log_worker(client, exp_id, trial, 0, 2, "horovod", epochs=[7, 5, 5], samples=each)
    _log_worker(client, exp_id, trial, 1, 2, "horovod")
    end(trial)
    end(tune)
    return exp_id
