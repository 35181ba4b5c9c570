"""`scaleprof report --tracking-uri` on itwinai-shaped MLflow runs (tests/python/mlflow_fixtures.py),
logged with MLflow's own client into a real server, a SQLite database and a file store: the same
tables from all three, equal to the numbers worked out by hand below."""
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


@pytest.fixture(scope="module")
def stores(tmp_path_factory, mlflow_server):
    """The same itwinai runs in a server, a SQLite database and a file store."""
    tmp = tmp_path_factory.mktemp("mlflow")
    log_itwinai_runs(mlflow_server.url, tmp / "a")
    db = tmp / "direct.db"
    log_itwinai_runs(f"sqlite:///{db}", tmp / "b", artifact_location=(tmp / "db-artifacts").as_uri())
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # MLflow 3 keeps its file store behind this switch
    store = tmp / "mllogs" / "mlflow"
    log_itwinai_runs(store.as_uri(), tmp / "c")
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
    # The profiling runs were joined with the timing runs, and the report says so.
    assert "joined 2 runs of ddp at 2 workers: 'ddp-2' (epoch times, GPU data), 'ddp-2-prof' (profiling averages)" \
        in err


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
