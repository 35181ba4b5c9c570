"""`scaleprof mlflow sync` against a real MLflow server (127.0.0.1, SQLite backend), on runs recorded by
the real DDP example (examples/ddp_train.py under torchrun, CPU, gloo). Everything is checked with
MLflow's own Python client: counts, values, nesting, artifacts; a second sync changes nothing; a sync
SIGKILLed at several points and resumed ends with every run and point exactly once; a server that is
down or answers 500 leaves the recorded files byte for byte as they were."""
import hashlib
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import torchrun
from mlflow_fixtures import free_port, mlflow

from mlflow.tracking import MlflowClient  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "ddp_train.py"
EXPERIMENT = "cnn-sync"
PROFILING = "torch_profiling_averages/torch_profiling_averages.csv"


def child_env(**extra):
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", MASTER_ADDR="127.0.0.1",
               SCALEPROF_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1",
               SCALEPROF_ROCM_SMI_LIBRARY="/nonexistent/librocm_smi64.so")
    for k in ("SCALEPROF_ROOT", "SCALEPROF_RUN", "SCALEPROF_EXPERIMENT", "SCALEPROF_STRATEGY",
              "SCALEPROF_WRAPPER_PID", "SCALEPROF_GPU_MONITOR", "SCALEPROF_TEST_SYNC_KILL_AFTER"):
        env.pop(k, None)
    env.update(extra)
    return env


def record(root, nproc, strategy, run_name):
    torchrun(EXAMPLE, nproc, ["--epochs", "2", "--steps-per-epoch", "6", "--root", root, "--experiment", EXPERIMENT,
                              "--strategy", strategy, "--run-name", run_name], timeout=240, env=child_env())


def snapshot(root):
    """Every file and folder below root with its content hash: what 'untouched' means."""
    out = {}
    for p in sorted(Path(root).rglob("*")):
        rel = str(p.relative_to(root))
        out[rel] = "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def sync(cli, root, url, *extra, env=None, check=True):
    args = [str(cli), "mlflow", "sync", "--root", str(root), "--tracking-uri", url, "--format", "json", *extra]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env or child_env())
    if check:
        assert proc.returncode == 0, f"{args} -> {proc.returncode}\n{proc.stderr}"
    return proc


def csv_rows(path):
    lines = Path(path).read_text().splitlines()
    header = lines[0].split(",")
    return [dict(zip(header, line.split(","))) for line in lines[1:]]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Two real DDP runs: 2 ranks (with profiler traces) and 1 rank."""
    root = tmp_path_factory.mktemp("sync-root")
    record(root, 2, "ddp", "ddp-w2")
    record(root, 1, "ddp", "ddp-w1")
    return root


def expected(root):
    """What the server must hold, from the recorded files: {run: {worker name: {...}}}."""
    out = {}
    for run_dir in sorted((Path(root) / EXPERIMENT).iterdir()):
        workers = {}
        for rank_dir in sorted(run_dir.glob("rank-*")):
            rank = int(rank_dir.name.split("-")[1])
            name = "worker_0 (main)" if rank == 0 else f"worker_{rank}"
            epochs = csv_rows(rank_dir / "epochs.csv")
            steps = csv_rows(rank_dir / "steps.csv")
            workers[name] = {
                "rank": rank,
                "epoch_time_s": [(int(e["epoch"]), float(e["duration_s"])) for e in epochs],
                "step_time_s": [(i, float(s["duration_s"])) for i, s in enumerate(steps)],
                "traces": sorted(p.name for p in (rank_dir / "traces").glob("*.json*")),
                "dir": rank_dir,
            }
        out[run_dir.name] = workers
    return out


def server_state(url, experiment):
    """Everything the sync put on the server, as MLflow's client reads it back."""
    client = MlflowClient(tracking_uri=url)
    exp = client.get_experiment_by_name(experiment)
    assert exp is not None, f"no experiment {experiment}"
    runs = client.search_runs([exp.experiment_id], max_results=1000)
    state = {"parents": {}, "children": {}}
    by_id = {r.info.run_id: r for r in runs}
    for r in runs:
        parent = r.data.tags.get("mlflow.parentRunId")
        histories = {key: sorted((m.step, m.value, m.timestamp) for m in client.get_metric_history(r.info.run_id, key))
                     for key in r.data.metrics}
        entry = {"id": r.info.run_id, "name": r.info.run_name, "status": r.info.status, "params": r.data.params,
                 "tags": {k: v for k, v in r.data.tags.items() if k.startswith("scaleprof.")}, "metrics": histories,
                 "artifacts": sorted(a.path for folder in ("traces", "scaleprof", "torch_profiling_averages")
                                     for a in client.list_artifacts(r.info.run_id, folder))}
        if parent is None:
            state["parents"][r.info.run_name] = entry
        else:
            state["children"][(by_id[parent].info.run_name, r.info.run_name)] = entry
    return state


def count_points(url, experiment):
    """Every metric point of every run of the experiment (0 when it does not exist yet)."""
    client = MlflowClient(tracking_uri=url)
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        return 0
    return sum(len(client.get_metric_history(r.info.run_id, key))
               for r in client.search_runs([exp.experiment_id], max_results=1000) for key in r.data.metrics)


def check_against_recording(state, root):
    want = expected(root)
    assert sorted(state["parents"]) == sorted(want)  # one parent per scaleprof run, nothing more
    assert sorted(state["children"]) == sorted((run, w) for run, ws in want.items() for w in ws)
    for run, workers in want.items():
        parent = state["parents"][run]
        assert parent["status"] == "FINISHED"
        assert parent["params"]["strategy"] == "ddp"
        assert parent["params"]["global_world_size"] == str(len(workers))
        assert parent["tags"]["scaleprof.sync_complete"] == "true"
        assert parent["tags"]["scaleprof.sync_id"] == f"{EXPERIMENT}/{run}"
        for name, w in workers.items():
            child = state["children"][(run, name)]
            assert child["status"] == "FINISHED"
            assert child["params"]["global_rank"] == str(w["rank"])
            assert child["params"]["global_world_size"] == str(len(workers))
            assert child["params"]["strategy"] == "ddp"
            # Each point exactly once, with the recorded value (no duplicates, nothing missing). The
            # training's epoch time (the slowest rank's) on the main worker only, as itwinai logs it;
            # each worker's own under worker_epoch_time_s.
            assert [(s, v) for s, v, _ in child["metrics"]["worker_epoch_time_s"]] == w["epoch_time_s"]
            if w["rank"] == 0:
                slowest = {}
                for other in workers.values():
                    for e, v in other["epoch_time_s"]:
                        slowest[e] = max(slowest.get(e, 0.0), v)
                assert [(s, v) for s, v, _ in child["metrics"]["epoch_time_s"]] == sorted(slowest.items())
            else:
                assert "epoch_time_s" not in child["metrics"]
            assert [(s, v) for s, v, _ in child["metrics"]["step_time_s"]] == w["step_time_s"]
            assert len(w["step_time_s"]) == 12
            profiling = [PROFILING] if w["traces"] else []
            assert child["artifacts"] == sorted(
                [f"traces/{t}" for t in w["traces"]] + [f"scaleprof/rank-{w['rank']:05d}"] + profiling)
    assert any(w["traces"] for ws in want.values() for w in ws.values())  # the example profiled


def test_sync_counts_values_and_nesting(scaleprof_cli, recorded, mlflow_server, tmp_path):
    before = snapshot(recorded)
    proc = sync(scaleprof_cli, recorded, mlflow_server.url, "--progress-file", str(tmp_path / "p.json"))
    summary = json.loads(proc.stdout)
    rows = summary["rows"] if isinstance(summary, dict) and "rows" in summary else summary
    assert sorted(r["action"] for r in rows) == ["synced", "synced"]
    assert "[2/2] cnn-sync/" in proc.stderr
    state = server_state(mlflow_server.url, EXPERIMENT)
    check_against_recording(state, recorded)
    # The raw files are there byte for byte, and the recording was only read.
    client = MlflowClient(tracking_uri=mlflow_server.url)
    child = state["children"][("ddp-w2", "worker_1")]
    got = Path(client.download_artifacts(child["id"], "scaleprof/rank-00001/epochs.csv", str(tmp_path)))
    assert got.read_bytes() == (recorded / EXPERIMENT / "ddp-w2" / "rank-00001" / "epochs.csv").read_bytes()
    trace = expected(recorded)["ddp-w2"]["worker_1"]["traces"][0]
    got = Path(client.download_artifacts(child["id"], f"traces/{trace}", str(tmp_path)))
    assert got.read_bytes() == (recorded / EXPERIMENT / "ddp-w2" / "rank-00001" / "traces" / trace).read_bytes()
    # itwinai's profiling averages, from the rank's trace: the 2 profiled steps (ProfilerStep#2, #3)
    # and the convolutions of 2 forward passes (2 conv layers each).
    got = Path(client.download_artifacts(child["id"], PROFILING, str(tmp_path)))
    rows = {r["name"]: r for r in csv_rows(got)}
    assert list(csv_rows(got)[0])[:9] == ["name", "node_id", "self_cuda_time_total", "cuda_time_total",
                                          "cuda_time_total_str", "calls", "strategy", "num_gpus", "global_rank"]
    assert rows["ProfilerStep*"]["calls"] == "2"
    assert rows["aten::conv2d"]["calls"] == "4"
    assert rows["aten::conv2d"]["strategy"] == "ddp" and rows["aten::conv2d"]["global_rank"] == "1"
    assert rows["aten::conv2d"]["num_gpus"] == "2"
    assert float(rows["aten::conv2d"]["cpu_time_total"]) > 0
    assert snapshot(recorded) == before
    # scaleprof's own MLflow reader gives the report the run directories give.
    def report_tables(*source):
        p = subprocess.run([str(scaleprof_cli), "report", *source, "--no-plots", "--format", "json"],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode in (0, 3), p.stderr
        doc = json.loads(p.stdout)
        return {key: {(r["strategy"], r["workers"]): r for r in doc[key]}
                for key in ("epoch_time", "scaling", "throughput")}
    from_dirs = report_tables("--root", str(recorded))
    from_mlflow = report_tables("--tracking-uri", mlflow_server.url, "--experiment-name", EXPERIMENT)
    # Every rank's samples went up as epoch_samples and came back: the example's ranks each take the same
    # samples at 1 and 2 workers (weak scaling), read the same from the server as from the directories.
    assert from_mlflow["scaling"][("ddp", 2)]["scaling_mode"] == "weak"
    assert from_mlflow["throughput"][("ddp", 2)]["samples_per_epoch"] > 0
    for key in ("epoch_time", "scaling", "throughput"):
        assert from_dirs[key].keys() == from_mlflow[key].keys() == {("ddp", 1), ("ddp", 2)}
        for config, row in from_dirs[key].items():
            assert from_mlflow[key][config].keys() == row.keys()
            for column, value in row.items():
                if isinstance(value, float):
                    assert from_mlflow[key][config][column] == pytest.approx(value, rel=1e-9), (key, column)
                else:
                    assert from_mlflow[key][config][column] == value, (key, column)

    # A second sync (and one without the progress file: the server is the truth) changes nothing.
    again = sync(scaleprof_cli, recorded, mlflow_server.url, "--progress-file", str(tmp_path / "p.json"))
    rows = json.loads(again.stdout)
    rows = rows["rows"] if isinstance(rows, dict) and "rows" in rows else rows
    assert [r["action"] for r in rows] == ["unchanged", "unchanged"]
    assert [r["metric_points"] for r in rows] == [0, 0]
    sync(scaleprof_cli, recorded, mlflow_server.url, "--progress-file", str(tmp_path / "other.json"))
    assert server_state(mlflow_server.url, EXPERIMENT) == state


@pytest.mark.parametrize("kill_after", [5, 9, 18, 32])
def test_sigkilled_sync_resumes_without_duplicates(scaleprof_cli, recorded, mlflow_server, tmp_path, kill_after):
    """SIGKILL after N answered requests (mid-creation, mid-metrics with 5 points a batch, mid-artifacts;
    each run is searched for by its sync id right before it is created, so creation is requests 4-5),
    then a plain sync: every run and point exactly once."""
    experiment = f"resume-{kill_after}"
    progress = str(tmp_path / "progress.json")
    before = snapshot(recorded)
    killed = sync(scaleprof_cli, recorded, mlflow_server.url, "--experiment-name", experiment, "--batch-size", "5",
                  "--progress-file", progress, env=child_env(SCALEPROF_TEST_SYNC_KILL_AFTER=str(kill_after)),
                  check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    on_server = count_points(mlflow_server.url, experiment)
    resumed = sync(scaleprof_cli, recorded, mlflow_server.url, "--experiment-name", experiment, "--batch-size", "5",
                   "--progress-file", progress)
    rows = json.loads(resumed.stdout)
    actions = [r["action"] for r in rows]
    # Only what was missing was sent: MLflow's SQL store would silently drop a resent duplicate, so
    # the count of points sent is what proves the resume read the server's histories.
    assert sum(r["metric_points"] for r in rows) == count_points(mlflow_server.url, experiment) - on_server
    # The killed sync had started a run (a later one may not have been reached yet).
    assert any(a in ("resumed", "unchanged") for a in actions), actions
    check_against_recording(server_state(mlflow_server.url, experiment), recorded)
    assert snapshot(recorded) == before


def test_server_down_changes_nothing(scaleprof_cli, recorded):
    before = snapshot(recorded)
    proc = sync(scaleprof_cli, recorded, f"http://127.0.0.1:{free_port()}", check=False)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the MLflow server" in lines[0], proc.stderr
    assert snapshot(recorded) == before


class Always500(http.server.BaseHTTPRequestHandler):
    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        body = json.dumps({"error_code": "INTERNAL_ERROR", "message": "database is locked\nTraceback ..."}).encode()
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = _answer

    def log_message(self, *args):
        pass


def test_server_answering_500_changes_nothing(scaleprof_cli, recorded):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Always500)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        before = snapshot(recorded)
        env = child_env(MLFLOW_TRACKING_TOKEN="s3cr3t-token")
        proc = sync(scaleprof_cli, recorded, f"http://alice:pa55word@127.0.0.1:{server.server_address[1]}",
                    env=env, check=False)
    finally:
        server.shutdown()
        server.server_close()
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "HTTP 500: INTERNAL_ERROR: database is locked" in lines[0]
    for text in (proc.stdout, proc.stderr):
        assert "s3cr3t" not in text and "pa55word" not in text
    assert snapshot(recorded) == before


def test_server_failing_mid_sync_then_resumed(scaleprof_cli, recorded, mlflow_server, tmp_path):
    """A proxy passes the first 8 requests to the real server, then answers 500: the sync stops with one
    line, the recorded files are untouched, and a later sync completes with every point exactly once."""
    import urllib.error
    import urllib.request

    answered = {"n": 0}

    class FailingProxy(Always500):
        def _answer(self):
            answered["n"] += 1
            if answered["n"] > 8:
                return super()._answer()
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            request = urllib.request.Request(mlflow_server.url + self.path, data=body, method=self.command,
                                             headers={"Content-Type": self.headers.get("Content-Type", "")})
            try:
                with urllib.request.urlopen(request, timeout=60) as r:
                    status, data = r.status, r.read()
            except urllib.error.HTTPError as e:
                status, data = e.code, e.read()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = _answer

    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FailingProxy)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    experiment, progress = "mid-500", str(tmp_path / "progress.json")
    before = snapshot(recorded)
    try:
        failed = sync(scaleprof_cli, recorded, f"http://127.0.0.1:{proxy.server_address[1]}", "--experiment-name",
                      experiment, "--batch-size", "5", "--progress-file", progress, "-q", check=False)
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert failed.returncode == 1
    assert len(failed.stderr.strip().splitlines()) == 1 and "HTTP 500" in failed.stderr, failed.stderr
    assert snapshot(recorded) == before
    assert Path(progress).is_file()  # what the server accepted is recorded
    sync(scaleprof_cli, recorded, mlflow_server.url, "--experiment-name", experiment, "--batch-size", "5",
         "--progress-file", progress)
    check_against_recording(server_state(mlflow_server.url, experiment), recorded)
    assert snapshot(recorded) == before


def test_usage_errors(scaleprof_cli, recorded, tmp_path):
    proc = sync(scaleprof_cli, recorded, str(tmp_path / "mlruns"), check=False)
    assert proc.returncode == 2 and "must be http://HOST:PORT" in proc.stderr  # a bad command line
    proc = sync(scaleprof_cli, tmp_path / "nothing", "http://127.0.0.1:9", check=False)
    assert proc.returncode == 1 and "no such directory" in proc.stderr
    proc = subprocess.run([str(scaleprof_cli), "mlflow", "sync"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "--tracking-uri" in proc.stderr


FAKE_NVML = REPO / "build" / "tests" / "libfake_nvml.so"
GPU_EXPERIMENT = "gpu-probe"
RANK_LOOP = """
import sys, time, scaleprof
with scaleprof.Run(experiment=sys.argv[1], root=sys.argv[2], strategy=sys.argv[3], run_name=sys.argv[4],
                   gpu_interval=sys.argv[5] if len(sys.argv) > 5 else None) as run:
    for epoch in range(2):
        with run.epoch(epoch):
            time.sleep(0.3)
"""


@pytest.mark.skipif(not FAKE_NVML.is_file(), reason=f"the stand-in NVML is built with the C++ tests ({FAKE_NVML})")
def test_probing_interval_is_synced_for_itwinai(scaleprof_cli, mlflow_server, tmp_path):
    """itwinai's report computes energy as power x the param `probing_interval` of each GPU worker run:
    the sync logs it, in seconds as itwinai's monitor does, from the interval scaleprof's monitor
    recorded (rank.json for a rank sampling its own GPU, run.json for `scaleprof run`'s node samples)."""
    root = tmp_path / "root"
    script = tmp_path / "nvml.txt"
    script.write_text("devices=1\nutil.0=10,30\npower_base_w.0=100\npower_slope_w.0=0\nenergy_counter=0\n")
    env = child_env(SCALEPROF_NVML_LIBRARY=str(FAKE_NVML), SCALEPROF_FAKE_NVML_SCRIPT=str(script))
    loop = tmp_path / "loop.py"
    loop.write_text(RANK_LOOP)
    # A rank that samples its own GPU every 50 ms (the Python API, no wrapper).
    proc = subprocess.run([sys.executable, str(loop), GPU_EXPERIMENT, str(root), "rank-gpu", "rank-monitor", "50ms"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    # `scaleprof run` sampling the node every 40 ms around the same loop, and one with --no-gpu.
    for strategy, run_name, gpu in (("node-gpu", "node-monitor", ["--gpu-interval", "40ms"]),
                                    ("cpu", "no-gpu", ["--no-gpu"])):
        proc = subprocess.run([str(scaleprof_cli), "run", "--root", str(root), "--experiment", GPU_EXPERIMENT,
                               "--strategy", strategy, "--run-name", run_name, *gpu, "--", sys.executable,
                               str(loop), GPU_EXPERIMENT, str(root), strategy, run_name],
                              capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0, proc.stderr
    run_dir = root / GPU_EXPERIMENT
    assert json.loads((run_dir / "rank-monitor" / "rank-00000" / "rank.json").read_text())["gpu_interval_ns"] \
        == 50_000_000
    assert json.loads((run_dir / "node-monitor" / "run.json").read_text())["gpu_interval_ns"] == 40_000_000
    assert json.loads((run_dir / "node-monitor" / "rank-00000" / "rank.json").read_text())["gpu_interval_ns"] is None
    assert json.loads((run_dir / "no-gpu" / "run.json").read_text())["gpu_interval_ns"] is None

    sync(scaleprof_cli, root, mlflow_server.url, env=env)
    client = MlflowClient(tracking_uri=mlflow_server.url)
    exp = client.get_experiment_by_name(GPU_EXPERIMENT)
    runs = client.search_runs([exp.experiment_id], max_results=100)
    names = {r.info.run_id: r.info.run_name for r in runs}
    workers = {names[r.data.tags["mlflow.parentRunId"]]: r for r in runs if "mlflow.parentRunId" in r.data.tags}
    assert sorted(workers) == ["no-gpu", "node-monitor", "rank-monitor"]
    assert workers["rank-monitor"].data.params["probing_interval"] == "0.05"
    assert workers["node-monitor"].data.params["probing_interval"] == "0.04"
    assert "probing_interval" not in workers["no-gpu"].data.params
    assert not any(k.startswith("gpu") for k in workers["no-gpu"].data.metrics)
    # itwinai's energy (gpu_power_W x probing_interval / 3600, summed), computed by hand from what
    # MLflow's client reads back: every sample of the gpu.csv, at 100 W each.
    for run_name, interval in (("rank-monitor", 0.05), ("node-monitor", 0.04)):
        w = workers[run_name]
        power = [m.value for m in client.get_metric_history(w.info.run_id, "gpu_power_W")]
        gpu_csv = (run_dir / run_name / ("rank-00000" if run_name == "rank-monitor" else "node-" + os.uname().nodename)
                   / "gpu.csv")
        assert len(power) == len(csv_rows(gpu_csv)) >= 2
        energy_wh = sum(p * float(w.data.params["probing_interval"]) for p in power) / 3600
        assert energy_wh == pytest.approx(len(power) * 100 * interval / 3600, rel=1e-3)
    # scaleprof's own reader keeps the rule of the run directories for synced runs (their samples carry
    # real times): the trapezoid over the timestamps, not itwinai's rectangle.
    for source in (["--root", str(root)], ["--tracking-uri", mlflow_server.url, "--experiment-name", GPU_EXPERIMENT]):
        p = subprocess.run([str(scaleprof_cli), "report", *source, "--no-plots", "--format", "json"],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode in (0, 3), p.stderr
        gpu = {r["strategy"]: r for r in json.loads(p.stdout)["gpu"]}
        assert sorted(gpu) == ["node-gpu", "rank-gpu"], source
        assert {r["energy_method"] for r in gpu.values()} == {"trapezoid"}, source
