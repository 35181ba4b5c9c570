"""itwinai 0.4.2's own `generate-scalability-report` on runs that `scaleprof mlflow sync` sent to a real MLflow
server (127.0.0.1): it must print the same epoch times, GPU utilization and computation fraction as scaleprof's
`generate-scalability-report` on the same server, where itwinai's rules define the same number. Energy differs by
design (itwinai: power x probing interval; scaleprof: the driver's counter or the trapezoid rule; docs/mlflow.md),
so the test recomputes itwinai's rule from the points on the server instead.

itwinai runs from its own venv (.venv-itwinai, made by `make test`: itwinai 0.4.2 needs pandas < 3, the project's
venv has pandas 3); its path comes in SCALEPROF_ITWINAI. The runs are recorded by the real DDP example under torchrun
(gloo, CPU) with the stand-in NVML library of the C++ tests, so every rank has GPU samples."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import torchrun
from mlflow_fixtures import mlflow  # noqa: F401  (skips when mlflow is missing)
from mlflow.tracking import MlflowClient  # noqa: E402
import test_mlflow_sync as sync_test  # noqa: E402

ITWINAI = os.environ.get("SCALEPROF_ITWINAI", "")


def itwinai_tables(stdout):
    """itwinai's console report: {section title: [row dicts]} from its pandas tables."""
    tables = {}
    for block in re.split(r"^######## (.+?) ########$", stdout, flags=re.M)[1:]:
        tables.setdefault("_titles", []).append(block)
    titles = tables.pop("_titles", [])
    for title, body in zip(titles[0::2], titles[1::2]):
        lines = [line for line in body.strip("\n").splitlines()]
        rows = []
        if lines and not lines[0].startswith("No "):
            header = lines[0].split()
            for line in lines[1:]:
                if not line.strip():
                    break
                cells = line.split()
                # Values with a unit ("0.40 s", "60.00 %") are two cells.
                merged = []
                for cell in cells:
                    if cell in ("s", "%") and merged:
                        merged[-1] += " " + cell
                    else:
                        merged.append(cell)
                rows.append(dict(zip(header, merged)))
        tables[title] = rows
    return tables


@pytest.fixture(scope="module")
def synced(scaleprof_cli, mlflow_server, tmp_path_factory):
    if not ITWINAI or not Path(ITWINAI).is_file():
        pytest.skip("itwinai 0.4.2 not installed: `make test` makes .venv-itwinai and sets SCALEPROF_ITWINAI")
    fake_nvml = Path(scaleprof_cli).parent / "tests" / "libfake_nvml.so"
    if not fake_nvml.is_file():
        pytest.fail(f"the stand-in NVML library is not built: {fake_nvml}")
    work = tmp_path_factory.mktemp("itwinai")
    script = work / "nvml.txt"
    # One GPU per rank, utilization 50 then 70 %, 100 W flat, no energy counter.
    script.write_text("devices=1\nutil.0=50,70\npower_base_w.0=100\npower_slope_w.0=0\nenergy_counter=0\n")
    plain_env = sync_test.child_env
    env = dict(plain_env(), SCALEPROF_NVML_LIBRARY=str(fake_nvml), SCALEPROF_FAKE_NVML_SCRIPT=str(script))
    root = work / "root"
    experiment = "itwinai-check"
    for nproc, name in ((1, "ddp-w1"), (2, "ddp-w2")):
        torchrun(sync_test.EXAMPLE, nproc, ["--epochs", "3", "--steps-per-epoch", "6", "--root", root, "--experiment",
                                            experiment, "--strategy", "ddp", "--run-name", name], timeout=240, env=env)
    sync_test.sync(scaleprof_cli, root, mlflow_server.url, env=plain_env())
    itwinai = subprocess.run([ITWINAI, "generate-scalability-report", "--tracking-uri", mlflow_server.url,
                              "--experiment-name", experiment, "--plot-dir", str(work / "itwinai-plots")],
                             capture_output=True, text=True, timeout=300, cwd=work,
                             env=dict(os.environ, MPLBACKEND="Agg"))
    assert itwinai.returncode == 0, itwinai.stdout + itwinai.stderr
    ours = subprocess.run([str(scaleprof_cli), "generate-scalability-report", "--tracking-uri", mlflow_server.url,
                           "--experiment-name", experiment, "--plot-dir", str(work / "plots"), "--format", "json"],
                          capture_output=True, text=True, timeout=300, cwd=work)
    assert ours.returncode == 0, ours.stderr
    return {"itwinai": itwinai_tables(itwinai.stdout), "itwinai_out": itwinai.stdout + itwinai.stderr,
            "ours": json.loads(ours.stdout), "url": mlflow_server.url, "experiment": experiment, "root": root}


def rows_by_workers(rows, workers_key="workers"):
    return {(r["strategy"], int(r[workers_key])): r for r in rows}


def test_same_epoch_times(synced):
    theirs = {(r["strategy"], int(r["global_world_size"])): float(r["avg_epoch_time"].split()[0])
              for r in synced["itwinai"]["Epoch Time Report"]}
    ours = rows_by_workers(synced["ours"]["epoch_time"])
    assert sorted(theirs) == [("ddp", 1), ("ddp", 2)]
    for key, seconds in theirs.items():
        assert f"{ours[key]['mean_s']:.2f}" == f"{seconds:.2f}", key
    # Each multi-worker run is one training run, not a Ray HPO sweep: itwinai must not say it was.
    assert "Ray HPO" not in synced["itwinai_out"]


def test_same_gpu_utilization_and_itwinai_energy_rule(synced):
    theirs = rows_by_workers(synced["itwinai"]["GPU Data Report"], "global_world_size")
    ours = rows_by_workers(synced["ours"]["gpu"])
    assert sorted(theirs) == [("ddp", 1), ("ddp", 2)]
    client = MlflowClient(tracking_uri=synced["url"])
    exp = client.get_experiment_by_name(synced["experiment"])
    runs = client.search_runs([exp.experiment_id], max_results=1000)
    for key, row in theirs.items():
        assert f"{ours[key]['utilization_pct']:.2f} %" == row["utilization"], key
        # itwinai's energy: sum of every worker's gpu_power_W points x probing_interval (s), in Wh.
        parent = next(r for r in runs if r.info.run_name == f"ddp-w{key[1]}" and "mlflow.parentRunId" not in r.data.tags)
        workers = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
        wh = sum(m.value * float(w.data.params["probing_interval"])
                 for w in workers for m in client.get_metric_history(w.info.run_id, "gpu_power_W")) / 3600
        assert float(row["total_energy_wh"]) == pytest.approx(wh, rel=1e-4), key


def test_same_computation_fraction(synced, scaleprof_cli):
    """The fraction survives the round trip: from the server as from the run directories. itwinai's rule reads
    self device time only, so on these CPU runs it prints 0.00 % where scaleprof uses the same rule on CPU self
    time (basis cpu_self_time, docs/mlflow.md); on device traces both rules are one (test_mlflow_report.py)."""
    local = subprocess.run([str(scaleprof_cli), "generate-scalability-report", "--log-dir", str(synced["root"]),
                            "--plot-dir", str(synced["root"].parent / "local-plots"), "--format", "json"], capture_output=True, text=True, timeout=300)
    assert local.returncode == 0, local.stderr
    from_dirs = {int(r["num_gpus"]): r for r in json.loads(local.stdout)["computation_fraction"]}
    from_server = {int(r["num_gpus"]): r for r in synced["ours"]["computation_fraction"]}
    assert sorted(from_dirs) == sorted(from_server) == [1, 2]
    for workers, row in from_dirs.items():
        assert row["computation_fraction_pct"] is not None and row["computation_fraction_pct"] > 50, row
        assert from_server[workers]["computation_fraction_pct"] == pytest.approx(row["computation_fraction_pct"],
                                                                                 abs=0.01), workers
    theirs = synced["itwinai"]["Computation Data Report"]
    # itwinai 0.4.2's table has its header shifted by one column: `strategy` shows the GPU count.
    assert sorted(int(r["strategy"]) for r in theirs) == [1, 2]
    for row in theirs:
        basis = from_server[int(row["strategy"])].get("basis")
        if basis == "device_self_time":
            assert row["computation_fraction"] == f"{from_server[int(row['strategy'])]['computation_fraction_pct']:.2f} %"
        else:
            assert row["computation_fraction"] == "0.00 %", row
