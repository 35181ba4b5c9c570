"""`scaleprof report --tracking-uri` on itwinai-shaped MLflow runs (tests/python/mlflow_fixtures.py),
logged with MLflow's own client into a real server, a SQLite database and a file store, with each
epoch's samples as `scaleprof mlflow sync` adds them: the same tables from all three, equal to the
numbers worked out by hand below and to the same runs read as run directories, in every column."""
import json
import os
import subprocess

import pytest

from mlflow_fixtures import EXPERIMENT, log_itwinai_runs


def report(cli, uri, *extra, command="report", env=None):
    args = [str(cli), command, "--tracking-uri", uri, "--experiment-name", EXPERIMENT, "--no-plots", "--format",
            "json", "--skip-epochs", "0", *extra]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, f"{args} -> {proc.returncode}\n{proc.stderr}"
    return json.loads(proc.stdout), proc.stderr


SAMPLES = 32  # per worker and epoch


@pytest.fixture(scope="module")
def stores(tmp_path_factory, mlflow_server):
    """The same itwinai runs, with 32 samples per worker and epoch, in a server, a SQLite database and a
    file store."""
    tmp = tmp_path_factory.mktemp("mlflow")
    log_itwinai_runs(mlflow_server.url, tmp / "a", samples=SAMPLES)
    db = tmp / "direct.db"
    log_itwinai_runs(f"sqlite:///{db}", tmp / "b", artifact_location=(tmp / "db-artifacts").as_uri(),
                     samples=SAMPLES)
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # MLflow 3 keeps its file store behind this switch
    store = tmp / "mllogs" / "mlflow"
    log_itwinai_runs(store.as_uri(), tmp / "c", samples=SAMPLES)
    return {"server": mlflow_server.url, "sqlite": f"sqlite:///{db}", "file": str(store)}


def rows(doc, key):
    return {(r["strategy"], r.get("workers", r.get("num_gpus"))): r for r in doc[key]}


def comparable(doc):
    """Every table but the paths (which name the store)."""
    return {k: v for k, v in doc.items() if k not in ("runs",)}


def test_same_tables_from_server_sqlite_and_file_store(scaleprof_cli, stores):
    docs = {kind: report(scaleprof_cli, uri)[0] for kind, uri in stores.items()}
    assert comparable(docs["server"]) == comparable(docs["sqlite"]) == comparable(docs["file"])
    for doc in docs.values():
        assert sorted(r["run"] for r in doc["runs"]) == ["ddp-1", "ddp-1-prof", "ddp-2", "ddp-2-prof",
                                                          "tune-hvd/trial_0"]


def test_numbers_by_hand(scaleprof_cli, stores):
    doc, err = report(scaleprof_cli, stores["server"])
    epoch = rows(doc, "epoch_time")
    # ddp 1 worker: 10, 8, 8 -> 26/3; 2 workers: 6, 4, 4 -> 14/3; horovod (Ray trial) 7, 5, 5 -> 17/3.
    assert epoch[("ddp", 1)]["mean_s"] == pytest.approx(26 / 3, abs=5e-4)
    assert epoch[("ddp", 2)]["mean_s"] == pytest.approx(14 / 3, abs=5e-4)
    assert epoch[("horovod", 2)]["mean_s"] == pytest.approx(17 / 3, abs=5e-4)
    assert epoch[("ddp", 2)]["epochs"] == 3
    scaling = rows(doc, "scaling")
    assert scaling[("ddp", 2)]["speedup"] == pytest.approx((26 / 3) / (14 / 3), abs=5e-4)
    assert scaling[("ddp", 2)]["efficiency_pct"] == pytest.approx(100 * 26 / 28, abs=5e-3)
    gpu = rows(doc, "gpu")
    # itwinai's rule: power x probing interval (1 s). 1 worker: (100 + 200) J; 2 workers: 300 + 300 J.
    assert gpu[("ddp", 1)]["energy_wh_total"] == pytest.approx(300 / 3600, abs=1e-4)
    assert gpu[("ddp", 2)]["energy_wh_total"] == pytest.approx(600 / 3600, abs=1e-4)
    assert gpu[("ddp", 1)]["utilization_pct"] == pytest.approx(60.0)
    assert gpu[("ddp", 2)]["utilization_pct"] == pytest.approx(85.0)
    assert gpu[("ddp", 2)]["energy_method"] == "rectangle"
    comp = rows(doc, "computation_fraction")
    # 1 worker: 600 / (1000 - 100); 2 workers: 2 x 500 / (2 x 1100 - 2 x 100).
    assert comp[("ddp", 1)]["computation_fraction_pct"] == pytest.approx(100 * 600 / 900, abs=5e-3)
    assert comp[("ddp", 2)]["computation_fraction_pct"] == pytest.approx(50.0, abs=5e-3)
    assert comp[("ddp", 2)]["ranks"] == 2
    # Samples: 32 per worker and epoch on every ddp worker, so 32 per worker at 1 and at 2 workers: weak
    # scaling, efficiency T(1)/T(2) = (26/3)/(14/3). tune-hvd's second worker gives none: no throughput.
    assert scaling[("ddp", 2)]["scaling_mode"] == "weak"
    assert scaling[("ddp", 2)]["weak_efficiency_pct"] == pytest.approx(100 * 26 / 14, abs=5e-3)
    assert scaling[("horovod", 2)]["scaling_mode"] == "unknown"
    assert scaling[("horovod", 2)]["weak_efficiency_pct"] is None
    throughput = rows(doc, "throughput")
    assert throughput[("ddp", 1)]["samples_per_epoch"] == pytest.approx(32)
    assert throughput[("ddp", 2)]["samples_per_epoch"] == pytest.approx(64)
    assert throughput[("ddp", 2)]["throughput_sps"] == pytest.approx(3 * 64 / 14, abs=5e-4)
    assert throughput[("horovod", 2)]["epochs"] == 0
    # The profiling runs were joined with the timing runs, and the report says so.
    assert "joined 2 runs of ddp at 2 workers: 'ddp-2' (epoch times, GPU data), 'ddp-2-prof' (profiling averages)" \
        in err


def test_itwinai_runs_without_samples_have_no_throughput(scaleprof_cli, stores, tmp_path):
    """itwinai logs no samples: the report is today's, without throughput or scaling mode, and says why
    nothing about samples is an error."""
    store = tmp_path / "mllogs" / "mlflow"
    log_itwinai_runs(store.as_uri(), tmp_path / "prof")
    doc, err = report(scaleprof_cli, str(store))
    with_samples, _ = report(scaleprof_cli, stores["file"])
    assert "throughput" not in doc
    for row in doc["scaling"]:
        assert "scaling_mode" not in row and "weak_efficiency_pct" not in row
    assert "epoch_samples" not in err
    # Every other figure is the one of the runs with samples.
    for key in ("epoch_time", "computation_fraction", "gpu"):
        assert doc[key] == with_samples[key]
    assert [{k: v for k, v in r.items() if k not in ("scaling_mode", "weak_efficiency_pct")}
            for r in with_samples["scaling"]] == doc["scaling"]


def test_run_names_and_missing_experiment(scaleprof_cli, stores):
    doc, _ = report(scaleprof_cli, stores["file"], "--run-names", "ddp-1,ddp-2")
    assert sorted(r["run"] for r in doc["runs"]) == ["ddp-1", "ddp-2"]
    proc = subprocess.run([str(scaleprof_cli), "report", "--tracking-uri", stores["sqlite"], "--experiment-name",
                           "nope", "--no-plots"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "Experiment 'nope' does not exist in MLflow" in proc.stderr


def test_generate_scalability_report_itwinai_defaults(scaleprof_cli, stores, tmp_path):
    proc = subprocess.run([str(scaleprof_cli), "generate-scalability-report", "--tracking-uri", stores["file"],
                           "--experiment-name", EXPERIMENT, "--plot-dir", str(tmp_path / "plots"),
                           "--include-communication", "--no-no-warnings", "--do-backup", "--backup-root-dir",
                           str(tmp_path / "backup")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout + proc.stderr
    assert "No warm-up epochs skipped (--skip-epochs 0)" in out
    # ddp 2 workers: 14/3 with the warm-up epoch, 4 without it: -14.3 %.
    assert "--skip-epochs 1" in out and "ddp at 2 workers: 4.67 s -> 4.00 s" in out
    assert "DISCLAIMER" in out


def test_credentials_never_printed(scaleprof_cli, stores):
    env = dict(os.environ, MLFLOW_TRACKING_TOKEN="s3cr3t-token", MLFLOW_TRACKING_PASSWORD="pa55word",
               MLFLOW_TRACKING_USERNAME="alice")
    doc, err = report(scaleprof_cli, stores["server"], env=env)
    bad = subprocess.run([str(scaleprof_cli), "report", "--tracking-uri", "http://alice:pa55word@127.0.0.1:9",
                          "--experiment-name", EXPERIMENT, "--no-plots"], capture_output=True, text=True,
                         timeout=60, env=env)
    assert bad.returncode == 1
    for text in (json.dumps(doc), err, bad.stdout, bad.stderr):
        assert "s3cr3t" not in text and "pa55word" not in text
    assert "cannot reach the MLflow server" in bad.stderr


def write_run_dirs(root):
    """The data of log_itwinai_runs as scaleprof run directories (docs/run-directory.md): epoch times in
    epochs.csv, GPU samples in gpu.csv (1 s apart), and the profiling averages as Kineto traces whose
    operator table has exactly the rows of the itwinai CSVs (each a device event of that self time)."""
    from mlflow_fixtures import PROF, PROF_2

    def run(name, strategy, world, ranks):
        d = root / EXPERIMENT / name
        d.mkdir(parents=True)
        (d / "run.json").write_text(json.dumps({
            "schema_version": 1, "experiment": EXPERIMENT, "run": name, "strategy": strategy, "world_size": world,
            "status": "completed", "exit_status": 0}))
        for rank, data in ranks.items():
            r = d / f"rank-{rank:05d}"
            r.mkdir()
            (r / "rank.json").write_text(json.dumps({
                "schema_version": 1, "rank": rank, "local_rank": rank, "world_size": world, "host": "node01",
                "status": "completed", "strategy": strategy}))
            lines = ["epoch,start_unix_ns,end_unix_ns,duration_s,samples"]
            lines += [f"{i},{i * 10**9},{(i + 1) * 10**9},{s},32" for i, s in enumerate(data.get("epochs", []))]
            (r / "epochs.csv").write_text("\n".join(lines) + "\n")
            if "gpu" in data:
                lines = ["time_unix_ns,device,utilization_pct,power_w,memory_used_bytes,energy_j"]
                lines += [f"{1_700_000_000 + i}000000000,0,{u},{p},," for i, (u, p) in enumerate(data["gpu"])]
                (r / "gpu.csv").write_text("\n".join(lines) + "\n")
            if "prof" in data:
                (r / "traces").mkdir()
                events, ts = [], 0
                for n, (op, us) in enumerate(data["prof"]):
                    events.append({"ph": "X", "cat": "kernel", "name": op, "pid": 0, "tid": 7, "ts": ts, "dur": us,
                                   "args": {"stream": 7, "device": 0, "correlation": 100 + n}})
                    ts += us
                trace = {"distributedInfo": {"rank": rank, "world_size": world}, "traceEvents": events}
                (r / "traces" / f"worker_{rank}.pt.trace.json").write_text(json.dumps(trace))

    run("ddp-1", "ddp", 1, {0: {"epochs": [10, 8, 8], "gpu": [(50, 100), (70, 200)]}})
    run("ddp-2", "ddp", 2, {0: {"epochs": [6, 4, 4], "gpu": [(80, 300)]}, 1: {"epochs": [6, 4, 4], "gpu": [(90, 300)]}})
    run("ddp-1-prof", "ddp", 1, {0: {"prof": PROF}})
    run("ddp-2-prof", "ddp", 2, {0: {"prof": PROF_2}, 1: {"prof": PROF_2}})
    run("tune-hvd-trial_0", "horovod", 2, {0: {"epochs": [7, 5, 5]}, 1: {}})


# Energy follows each layout's own rule by design: itwinai's rectangle rule (power x probing_interval)
# for MLflow runs, the trapezoid over the sample times for run directories (docs/mlflow.md). The node
# count comes from the hosts of rank.json, which itwinai does not log (MLflow gives none).
ENERGY_COLUMNS = ("energy_wh_total", "energy_wh_per_run", "energy_wh_per_epoch", "energy_wh", "energy_method")
NOT_IN_ITWINAI = ENERGY_COLUMNS + ("nodes", "run", "device")


def test_same_tables_as_run_directories(scaleprof_cli, stores, tmp_path):
    """The same runs written as scaleprof run directories give the same report tables as from the three
    MLflow stores (energy aside: each layout's rule, checked by hand for both), throughput and scaling
    mode included: samples survive the round trip."""
    root = tmp_path / "runs"
    write_run_dirs(root)
    args = [str(scaleprof_cli), "report", "--root", str(root), "--no-plots", "--format", "json", "--skip-epochs", "0"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    from_dirs = json.loads(proc.stdout)
    from_stores = {kind: report(scaleprof_cli, uri)[0] for kind, uri in stores.items()}
    compared = ("epoch_time", "scaling", "amdahl", "gpu", "gpu_devices", "computation_fraction", "throughput")
    differences = []
    for kind, doc in from_stores.items():
        for key in compared:
            assert key in doc and key in from_dirs, (kind, key)
            mine = sorted(({k: v for k, v in r.items() if k not in NOT_IN_ITWINAI}
                           for r in from_dirs[key]), key=json.dumps)
            theirs = sorted(({k: v for k, v in r.items() if k not in NOT_IN_ITWINAI}
                             for r in doc[key]), key=json.dumps)
            if mine != theirs:
                differences.append((kind, key, mine, theirs))
    assert not differences, "\n".join(map(str, differences))
    assert {r["nodes"] for r in from_dirs["epoch_time"]} == {1}
    assert {r["nodes"] for r in from_stores["server"]["epoch_time"]} == {None}
    assert len(from_dirs["gpu_devices"]) == 3 and len(from_dirs["computation_fraction"]) == 2
    # The throughput columns are compared with real values, not two absent ones.
    assert rows(from_dirs, "scaling")[("ddp", 2)]["scaling_mode"] == "weak"
    assert rows(from_dirs, "throughput")[("ddp", 2)]["samples_per_epoch"] == pytest.approx(64)
    # By hand, as in test_numbers_by_hand: ddp at 1 worker 26/3 s, at 2 workers 14/3 s; 66.67 % and 50 %.
    epoch = rows(from_dirs, "epoch_time")
    assert epoch[("ddp", 1)]["mean_s"] == pytest.approx(26 / 3, abs=5e-4)
    assert epoch[("ddp", 2)]["mean_s"] == pytest.approx(14 / 3, abs=5e-4)
    assert epoch[("horovod", 2)]["mean_s"] == pytest.approx(17 / 3, abs=5e-4)
    comp = rows(from_dirs, "computation_fraction")
    assert comp[("ddp", 1)]["computation_fraction_pct"] == pytest.approx(100 * 600 / 900, abs=5e-3)
    assert comp[("ddp", 2)]["computation_fraction_pct"] == pytest.approx(50.0, abs=5e-3)
    # Energy by each rule: run directories integrate 100 -> 200 W over 1 s (150 J) and cannot integrate a
    # single sample; MLflow's rectangle rule gives 300 J and 600 J (test_numbers_by_hand).
    gpu = rows(from_dirs, "gpu")
    assert gpu[("ddp", 1)]["energy_wh_total"] == pytest.approx(150 / 3600, abs=1e-4)
    assert gpu[("ddp", 1)]["energy_method"] == "trapezoid"
    assert gpu[("ddp", 1)]["utilization_pct"] == pytest.approx(60.0)
    assert gpu[("ddp", 2)]["utilization_pct"] == pytest.approx(85.0)
