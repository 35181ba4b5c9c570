"""MLflow stores as real MLflow writes them, read back by `scaleprof report --tracking-uri` (issue 18):

* finding 22: runs recorded by scaleprof, sent by `scaleprof mlflow sync` to a real server and read back
  through it, have the computation fraction of their run directories (CPU-only gloo runs included);
* finding 3: the SQLite database of a standard `mlflow server` (artifacts at mlflow-artifacts:/...) is
  read: every table but the artifact-based one, with one warning naming the runs and the scheme."""
import json
import subprocess

import pytest

from mlflow_fixtures import log_itwinai_runs


def report_json(cli, *source, ok=(0,)):
    args = [str(cli), "report", *source, "--no-plots", "--format", "json", "--skip-epochs", "0"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=180)
    assert proc.returncode in ok, f"{args} -> {proc.returncode}\n{proc.stderr}"
    return json.loads(proc.stdout), proc.stderr


def by_config(doc, key):
    return {(r["strategy"], r.get("workers", r.get("num_gpus"))): r for r in doc[key]}


def cpu_trace(rank, world, ops):
    """A Kineto trace of a CPU-only (gloo) rank: CPU operators only, no device event at all, so the
    computation fraction falls back to self CPU time (analysis/computation_fraction.h)."""
    events, ts = [], 0
    for name, us in ops:
        events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": us,
                       "args": {}})
        ts += us + 1
    return {"distributedInfo": {"rank": rank, "world_size": world, "backend": "gloo"}, "traceEvents": events}


def write_cpu_runs(root, experiment):
    """Two run directories of CPU-only ranks with profiler traces (docs/run-directory.md)."""
    ops = {1: [("ProfilerStep#1", 100), ("aten::conv2d", 700), ("gloo:all_reduce", 200)],
           2: [("ProfilerStep#1", 100), ("aten::conv2d", 500), ("aten::mm", 100), ("gloo:all_reduce", 300)]}
    for world in (1, 2):
        d = root / experiment / f"cpu-w{world}"
        d.mkdir(parents=True)
        (d / "run.json").write_text(json.dumps({
            "schema_version": 1, "experiment": experiment, "run": f"cpu-w{world}", "strategy": "ddp",
            "world_size": world, "status": "completed", "exit_status": 0}))
        for rank in range(world):
            r = d / f"rank-{rank:05d}"
            (r / "traces").mkdir(parents=True)
            (r / "rank.json").write_text(json.dumps({
                "schema_version": 1, "rank": rank, "local_rank": rank, "world_size": world, "host": "node01",
                "status": "completed", "strategy": "ddp"}))
            lines = ["epoch,start_unix_ns,end_unix_ns,duration_s,samples"]
            lines += [f"{i},{(i + 1) * 10**12},{(i + 2) * 10**12},{s / world},32" for i, s in enumerate([10, 8, 8])]
            (r / "epochs.csv").write_text("\n".join(lines) + "\n")
            (r / "traces" / f"worker_{rank}.pt.trace.json").write_text(json.dumps(cpu_trace(rank, world, ops[world])))


def sync(cli, root, url, experiment):
    args = [str(cli), "mlflow", "sync", "--root", str(root), "--tracking-uri", url, "--experiment-name", experiment,
            "--format", "json"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{args} -> {proc.returncode}\n{proc.stderr}"


def test_computation_fraction_survives_the_round_trip(scaleprof_cli, mlflow_server, tmp_path):
    """Finding 22: the fraction from the run directories (CPU basis, by hand below) is the one read back
    from the server after `mlflow sync` (it was blank: the artifact's self device times are all 0)."""
    experiment = "roundtrip-cpu"
    root = tmp_path / "runs"
    write_cpu_runs(root, experiment)
    sync(scaleprof_cli, root, mlflow_server.url, experiment)
    from_dirs, _ = report_json(scaleprof_cli, "--root", str(root))
    from_server, err = report_json(scaleprof_cli, "--tracking-uri", mlflow_server.url, "--experiment-name", experiment)
    dirs = by_config(from_dirs, "computation_fraction")
    server = by_config(from_server, "computation_fraction")
    # By hand: 1 rank 700 / (1000 - 100); 2 ranks pooled 2 x 600 / (2 x 1000 - 2 x 100).
    assert dirs[("ddp", 1)]["computation_fraction_pct"] == pytest.approx(100 * 700 / 900, abs=5e-3)
    assert dirs[("ddp", 2)]["computation_fraction_pct"] == pytest.approx(100 * 1200 / 1800, abs=5e-3)
    assert server.keys() == dirs.keys() == {("ddp", 1), ("ddp", 2)}, err
    for config, row in dirs.items():
        assert row["basis"] == "cpu_self_time"
        assert server[config]["basis"] == "cpu_self_time"
        assert server[config]["computation_fraction_pct"] == pytest.approx(row["computation_fraction_pct"], abs=1e-9)
        assert server[config]["ranks"] == row["ranks"]


def test_computation_fraction_of_real_ddp_runs(scaleprof_cli, mlflow_server, tmp_path):
    """The same on runs of the real DDP example (examples/ddp_train.py under torchrun, CPU, gloo), where
    the issue saw 92-96 % from the run directories and a blank from the server."""
    pytest.importorskip("torch")
    from test_mlflow_sync import record

    experiment = "cnn-sync"  # record() writes this experiment
    root = tmp_path / "ddp"
    record(root, 2, "ddp", "ddp-w2")
    sync(scaleprof_cli, root, mlflow_server.url, "roundtrip-ddp")
    from_dirs, _ = report_json(scaleprof_cli, "--root", str(root), ok=(0, 3))
    from_server, err = report_json(scaleprof_cli, "--tracking-uri", mlflow_server.url, "--experiment-name",
                                   "roundtrip-ddp", ok=(0, 3))
    dirs = by_config(from_dirs, "computation_fraction")
    server = by_config(from_server, "computation_fraction")
    assert dirs.keys() == {("ddp", 2)}, experiment
    assert server.keys() == dirs.keys(), err
    assert 0 < dirs[("ddp", 2)]["computation_fraction_pct"] < 100
    assert server[("ddp", 2)]["computation_fraction_pct"] == pytest.approx(
        dirs[("ddp", 2)]["computation_fraction_pct"], abs=1e-6)
    assert server[("ddp", 2)]["basis"] == dirs[("ddp", 2)]["basis"]


def test_server_database_read_directly(scaleprof_cli, mlflow_server, tmp_path):
    """Finding 3: `report --tracking-uri sqlite:///<the server's database>` reads the runs a standard
    `mlflow server` holds (artifacts at mlflow-artifacts:/...); it failed whole. Epoch times and GPU
    figures are those read through the server; the profiling runs' artifacts cannot be read from the
    database, and one warning says so, naming the runs and the scheme."""
    experiment = "served-db"
    log_itwinai_runs(mlflow_server.url, tmp_path / "prof", experiment=experiment)
    db = mlflow_server.workdir / "server.db"
    args = ("--experiment-name", experiment)
    through_server, _ = report_json(scaleprof_cli, "--tracking-uri", mlflow_server.url, *args)
    from_db, err = report_json(scaleprof_cli, "--tracking-uri", f"sqlite:///{db}", *args)
    assert by_config(from_db, "epoch_time") == by_config(through_server, "epoch_time")
    assert by_config(from_db, "gpu") == by_config(through_server, "gpu")
    assert by_config(through_server, "computation_fraction")  # the server reads the artifacts
    assert not from_db.get("computation_fraction")
    warnings = [line for line in err.splitlines() if "mlflow-artifacts:" in line]
    assert len(warnings) == 1, err
    assert "'mlflow-artifacts:' artifact URIs, which cannot be read here" in warnings[0]
    assert "(worker_0 (main))" in warnings[0]
    assert "error" not in err, err


def test_file_store_bad_items_cost_only_themselves(scaleprof_cli, tmp_path, monkeypatch):
    """Finding 13 on a file store MLflow itself wrote: a garbage metric line, an unterminated quote in a
    run's meta.yaml, an s3:// artifact root and `params/strategy -> a secret file` cost only those items:
    exit code 3, each named, every other table reported, the secret never printed."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps its file store behind this switch
    store = tmp_path / "mllogs" / "mlflow"
    log_itwinai_runs(store.as_uri(), tmp_path / "prof", experiment="bad-items")
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-TOKEN\n")
    runs = {}
    for meta in store.glob("*/*/meta.yaml"):
        name = next(line.split(": ", 1)[1] for line in meta.read_text().splitlines() if line.startswith("run_name:"))
        parent = meta.parent / "tags" / "mlflow.parentRunId"
        runs.setdefault(name.strip("'\""), []).append((meta.parent, parent.read_text() if parent.exists() else ""))
    by_id = {d.name: n for n, entries in runs.items() for d, _ in entries}
    worker = {}  # (training, worker name) -> folder
    for n, entries in runs.items():
        for d, parent in entries:
            worker[(by_id.get(parent, ""), n)] = d
    ddp1 = worker[("ddp-1", "worker_0 (main)")]
    with open(ddp1 / "metrics" / "epoch_time_s", "a") as f:
        f.write("this is not a metric line\n")
    ddp2_w1 = worker[("ddp-2", "worker_1")]
    (ddp2_w1 / "params" / "strategy").unlink()
    (ddp2_w1 / "params" / "strategy").symlink_to(secret)
    prof = worker[("ddp-2-prof", "worker_1")]
    meta = prof / "meta.yaml"
    meta.write_text(meta.read_text().replace("run_name:", "run_name: 'unterminated\nold_name:"))
    prof1 = worker[("ddp-1-prof", "worker_0 (main)")]
    meta = prof1 / "meta.yaml"
    lines = [line for line in meta.read_text().splitlines() if not line.startswith("artifact_uri:")]
    meta.write_text("\n".join(lines + ["artifact_uri: s3://bucket/1/x/artifacts"]) + "\n")

    doc, err = report_json(scaleprof_cli, "--tracking-uri", str(store), "--experiment-name", "bad-items", ok=(3,))
    assert "TOP-SECRET" not in err and "TOP-SECRET" not in json.dumps(doc)
    assert f"{ddp1 / 'metrics' / 'epoch_time_s'}:4: expected 'timestamp value step'; line skipped" in err
    assert f"{ddp2_w1 / 'params' / 'strategy'}: a symbolic link, not followed; skipped" in err
    assert f"{prof / 'meta.yaml'}:" in err and "unterminated quoted value" in err
    assert "1 run with 's3:' artifact URIs, which cannot be read here" in err
    epoch = by_config(doc, "epoch_time")
    assert epoch[("ddp", 1)]["mean_s"] == pytest.approx(26 / 3, abs=5e-4)  # the 3 good lines
    assert epoch[("horovod", 2)]["mean_s"] == pytest.approx(17 / 3, abs=5e-4)
    # ddp-2's worker_1 lost only its strategy param (its GPU run is skipped, named); ddp-2-prof's worker_0
    # still gives the 2-worker fraction: 500 / (1100 - 100).
    assert "run skipped" in err
    assert by_config(doc, "computation_fraction")[("ddp", 2)]["computation_fraction_pct"] == pytest.approx(50.0)
