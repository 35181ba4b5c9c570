"""itwinai 0.4.2's own `generate-scalability-report` on runs `scaleprof mlflow sync` sent: the same epoch
times as `scaleprof generate-scalability-report`, and no "Ray HPO was used" warning on multi-worker
runs (issue 18, finding 21). itwinai is not a dependency of scaleprof: the test runs when
SCALEPROF_ITWINAI_SITE names a folder where it was installed apart from the project's venv, e.g.

    .venv/bin/pip install --target /tmp/itwinai-site --no-deps itwinai==0.4.2 'pandas<3' pytz tzdata \\
        typer click==8.1.8 rich markdown-it-py mdurl pygments shellingham hydra-core omegaconf \\
        antlr4-python3-runtime==4.9.3 validators seaborn

(MLflow, numpy and matplotlib come from the venv), and is skipped otherwise."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_mlflow_sync_hardening import child_env, write_run

SITE = os.environ.get("SCALEPROF_ITWINAI_SITE", "")


@pytest.mark.skipif(not SITE or not (Path(SITE) / "itwinai").is_dir(),
                    reason="set SCALEPROF_ITWINAI_SITE to a folder with itwinai 0.4.2 installed (see the docstring)")
def test_itwinai_and_scaleprof_print_the_same_epoch_times(scaleprof_cli, mlflow_server, tmp_path):
    experiment = "itwinai-demo"
    root = tmp_path / "root"
    # The demo's 2-worker run: the ranks disagree by 10 ms (1.70 s vs 1.71 s before the fix).
    write_run(root, experiment, "ddp-w2", ranks=2, epoch_seconds=[[1.70, 1.60, 1.50], [1.71, 1.55, 1.52]])
    write_run(root, experiment, "ddp-w1", ranks=1, epoch_seconds=[[3.0, 2.9, 2.8]])
    p = subprocess.run([str(scaleprof_cli), "mlflow", "sync", "--root", str(root), "--tracking-uri", mlflow_server.url,
                        "--no-artifacts"], capture_output=True, text=True, timeout=300, env=child_env())
    assert p.returncode == 0, p.stderr
    itwinai = subprocess.run(
        [sys.executable, "-c", "from itwinai.cli import app; app()", "generate-scalability-report", "--tracking-uri",
         mlflow_server.url, "--experiment-name", experiment, "--plot-dir", str(tmp_path / "itwinai-plots")],
        capture_output=True, text=True, timeout=300, env=child_env(PYTHONPATH=SITE), cwd=tmp_path)
    assert itwinai.returncode == 0, itwinai.stderr[-3000:]
    text = itwinai.stdout + itwinai.stderr
    assert "Ray HPO" not in text and "Multiple epoch times" not in text, text
    # itwinai's table: "ddp  2  1.61 s"
    theirs = {int(w): float(s) for w, s in re.findall(r"^\s*ddp\s+(\d+)\s+([0-9.]+) s\s*$", itwinai.stdout, re.M)}
    ours = subprocess.run([str(scaleprof_cli), "generate-scalability-report", "--tracking-uri", mlflow_server.url,
                           "--experiment-name", experiment, "--plot-dir", str(tmp_path / "plots"), "--format", "json",
                           "--no-warnings"], capture_output=True, text=True, timeout=300, env=child_env(), cwd=tmp_path)
    assert ours.returncode in (0, 4), ours.stderr
    mine = {r["workers"]: r["mean_s"] if "mean_s" in r else r["mean"] for r in json.loads(ours.stdout)["epoch_time"]}
    assert theirs == {1: 2.90, 2: 1.61}
    assert {w: round(v, 2) for w, v in mine.items()} == theirs
