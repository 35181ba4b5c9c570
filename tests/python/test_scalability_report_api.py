"""scaleprof.scalability_report(): the report pipeline called from Python returns the dict that
`scaleprof report --format json` writes for the same runs (one pipeline, one JSON writer), and its
errors arrive as ScaleprofError with the CLI's one-line message."""
import json
import os
import subprocess
import time

import pytest

import scaleprof

EPOCH_S = {1: 0.02, 2: 0.012}  # each rank's epoch time at 1 and 2 workers (the sleep; real time is a bit more)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for k in list(os.environ):
        if k.startswith(("SCALEPROF_", "TORCHELASTIC", "SLURM_", "OMPI_", "PMI_", "HOROVOD_", "MLFLOW_")) or k in (
                "RANK", "WORLD_SIZE", "LOCAL_RANK"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("SCALEPROF_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    monkeypatch.setenv("SCALEPROF_ROCM_SMI_LIBRARY", "/nonexistent/librocm_smi64.so")


@pytest.fixture()
def runs(tmp_path):
    """Two runs of experiment "api", at 1 and 2 workers, 3 epochs each, recorded rank by rank in this process."""
    for world in (1, 2):
        for rank in range(world):
            with scaleprof.Run(experiment="api", strategy="ddp", run_name=f"w{world}", root=str(tmp_path), rank=rank,
                               world_size=world) as run:
                for epoch in range(3):
                    with run.epoch(epoch, samples=64 // world):
                        time.sleep(EPOCH_S[world])
    return tmp_path


def cli_json(scaleprof_cli, *args):
    proc = subprocess.run([str(scaleprof_cli), "report", "--no-plots", "--format", "json", *map(str, args)],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "LC_ALL": "C"})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_equals_the_cli_json(runs, scaleprof_cli):
    for kwargs, flags in (({}, []), ({"skip_epochs": 0}, ["--skip-epochs", "0"]),
                          ({"run_names": ["w1", "w2"]}, ["--run-names", "w1,w2"]),
                          ({"run_names": "w2", "experiment": "api"}, ["--run-names", "w2", "--experiment", "api"])):
        ours = scaleprof.scalability_report(root=str(runs), threads=1, **kwargs)
        assert ours == cli_json(scaleprof_cli, "--root", runs, *flags), kwargs
    report = scaleprof.scalability_report(root=str(runs))
    # Real values, not only equality with the CLI: one group per worker count, the warm-up epoch
    # skipped, the 1-worker mean that of the epochs the run recorded, the speedup their ratio.
    groups = {g["workers"]: g for g in report["epoch_time"]}
    assert sorted(groups) == [1, 2]
    assert [g["epochs"] for g in report["epoch_time"]] == [2, 2]
    (w1,) = [r for r in scaleprof.read_runs(str(runs), "api") if r["run"] == "w1"]
    epochs = [e["duration_s"] for e in w1["ranks"][0]["epochs"]]
    assert len(epochs) == 3 and min(epochs) >= EPOCH_S[1]
    assert groups[1]["mean_s"] == pytest.approx(sum(epochs[1:]) / 2, rel=1e-6)
    assert groups[2]["min_s"] >= EPOCH_S[2]
    (scaling,) = [g for g in report["scaling"] if g["workers"] == 2]
    assert scaling["speedup"] == pytest.approx(groups[1]["mean_s"] / groups[2]["mean_s"], rel=1e-9)
    assert report["skip_epochs"] == 1 and report["errors"] == []
    every = scaleprof.scalability_report(root=str(runs), skip_epochs=0)
    assert [g["epochs"] for g in every["epoch_time"]] == [3, 3]
    only_two = scaleprof.scalability_report(root=str(runs), run_names=["w2"])
    assert [g["workers"] for g in only_two["epoch_time"]] == [2]


def test_root_from_the_environment(runs, scaleprof_cli, monkeypatch):
    monkeypatch.setenv("SCALEPROF_ROOT", str(runs))
    assert scaleprof.scalability_report() == cli_json(scaleprof_cli)


def test_errors_carry_the_pipeline_message(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no ./scalability-metrics here
    with pytest.raises(scaleprof.ScaleprofError) as e:
        scaleprof.scalability_report()
    assert str(e.value) == (
        "no data to read: scalability-metrics does not exist. Pass --root DIR (scaleprof run folders or itwinai "
        "CSVs) or --tracking-uri URI (an MLflow server, sqlite:///file.db or a file store folder; or set "
        "MLFLOW_TRACKING_URI)")
    with pytest.raises(scaleprof.ScaleprofError) as e:
        scaleprof.scalability_report(tracking_uri="localhost:5000")
    assert str(e.value) == "usage: --tracking-uri 'localhost:5000' has no scheme: for a server write http://localhost:5000"
    (tmp_path / "empty").mkdir()
    with pytest.raises(scaleprof.ScaleprofError) as e:
        scaleprof.scalability_report(root=str(tmp_path / "empty"))
    assert str(e.value) == f"no runs found under {tmp_path / 'empty'}"
    with pytest.raises(ValueError, match=r"^skip_epochs must be 0 or more \(got -1\)$"):
        scaleprof.scalability_report(root=str(tmp_path), skip_epochs=-1)


def test_write_report_writes_the_cli_outputs(runs, scaleprof_cli, tmp_path):
    """write_scalability_report(): the CLI's pipeline with its outputs; the CSV file, the backup and the HTML
    page are the ones `scaleprof report` writes, holding the real speedup."""
    out = tmp_path / "out"
    out.mkdir()
    result = scaleprof.write_scalability_report(root=runs, format="csv", output=out / "report.csv",
                                                html=out / "report.html", trace_pages=False,
                                                backup_root_dir=out / "backup", threads=1)
    assert result["text"] is None and result["input_errors"] == 0 and result["plots"] == []
    csv_text = (out / "report.csv").read_text()
    proc = subprocess.run([str(scaleprof_cli), "report", "--root", str(runs), "--no-plots", "--format", "csv"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "LC_ALL": "C"})
    assert proc.returncode == 0, proc.stderr
    assert csv_text == proc.stdout
    # The speedup row at 2 workers is the ratio of the mean epoch times the JSON report gives.
    report = scaleprof.scalability_report(root=str(runs))
    groups = {g["workers"]: g for g in report["epoch_time"]}
    (scaling,) = [g for g in report["scaling"] if g["workers"] == 2]
    assert scaling["speedup"] == pytest.approx(groups[1]["mean_s"] / groups[2]["mean_s"], rel=1e-9)
    section = csv_text.split("# scaling\n", 1)[1].split("\n\n", 1)[0].splitlines()
    rows = [dict(zip(section[0].split(","), line.split(","))) for line in section[1:]]
    (row,) = [r for r in rows if r["workers"] == "2"]
    assert float(row["speedup"]) == pytest.approx(scaling["speedup"], rel=1e-12) and float(row["speedup"]) > 0
    (backup,) = list((out / "backup").iterdir())
    assert backup.name.startswith("aggregated_run_")
    assert result["backup_dir"] == str(backup)
    assert (backup / "report.csv").read_text() == csv_text
    assert result["html"] == str(out / "report.html")
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    labels = [label for label, _ in result["messages"]]
    assert labels[-2:] == ["", ""] and result["messages"][-1][1].startswith("Saved a backup of the report data at")
    # Without an output file the text comes back: the JSON the dict API parses.
    as_json = scaleprof.write_scalability_report(root=runs, format="json", threads=1)
    assert json.loads(as_json["text"]) == report
    with pytest.raises(ValueError, match=r"^format must be table, csv or json \(got 'xml'\)$"):
        scaleprof.write_scalability_report(root=runs, format="xml")
