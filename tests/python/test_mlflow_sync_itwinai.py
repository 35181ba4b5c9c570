"""itwinai 0.4.2's own `generate-scalability-report` on runs `scaleprof mlflow sync` sent: the same epoch
times as `scaleprof generate-scalability-report`, and no "Ray HPO was used" warning on multi-worker
runs (issue 18, finding 21), on runs whose ranks disagree by construction. itwinai runs from its own venv
(.venv-itwinai, made by `make test`: it needs pandas < 3); its executable comes in SCALEPROF_ITWINAI."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from test_mlflow_sync_hardening import child_env, write_run

ITWINAI = os.environ.get("SCALEPROF_ITWINAI", "")


@pytest.mark.skipif(not ITWINAI or not Path(ITWINAI).is_file(),
                    reason="itwinai 0.4.2 not installed: `make test` makes .venv-itwinai and sets SCALEPROF_ITWINAI")
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
        [ITWINAI, "generate-scalability-report", "--tracking-uri",
         mlflow_server.url, "--experiment-name", experiment, "--plot-dir", str(tmp_path / "itwinai-plots")],
        capture_output=True, text=True, timeout=300, env=child_env(MPLBACKEND="Agg"), cwd=tmp_path)
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
