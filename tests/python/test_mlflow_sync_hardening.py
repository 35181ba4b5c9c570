"""`scaleprof mlflow sync` under hostile conditions, against a real MLflow server on 127.0.0.1 (SQLite
backend), everything checked with MLflow's own Python client (issue 18, findings 2, 5, 11, 12, 21, 23):

- two syncs of one root at once: one lock per root and server (the second stops with exit code 5, or
  waits with --wait), and a run another sync created meanwhile is found by its sync id and adopted;
- symbolic links below a run folder are never followed, so a planted link's target is never uploaded;
- the server is the truth: a progress file that says "complete" while the server lacks points, or one
  cut short, never costs a point (each point exactly once);
- two run folders with one run name are two runs on the server;
- itwinai's layout: epoch_time_s on the main worker only (the slowest rank's per epoch);
- MLFLOW_TRACKING_URI as the default of --tracking-uri, and bad URIs as usage errors (exit 2).

The runs are written here as scaleprof's recorder writes them (docs/run-directory.md), so the numbers
are known exactly and no training has to run."""
import fcntl
import http.server
import json
import os
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from mlflow_fixtures import free_port, mlflow  # noqa: F401  (skips when MLflow is missing)

from mlflow.tracking import MlflowClient  # noqa: E402

T0 = 1_763_767_200_000_000_000  # ns


def child_env(**extra):
    env = dict(os.environ)
    for k in ("SCALEPROF_ROOT", "SCALEPROF_TEST_SYNC_KILL_AFTER", "MLFLOW_TRACKING_URI", "MLFLOW_TRACKING_TOKEN",
              "MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"):
        env.pop(k, None)
    env.update(extra)
    return env


def write_run(root, experiment, folder, ranks=2, epochs=3, steps=40, run_name=None, epoch_seconds=None):
    """A completed run as scaleprof records it: run.json, and per rank rank.json, epochs.csv, steps.csv.
    epoch_seconds[rank][epoch] gives the durations (default: 1.5 + rank/100 + epoch/10)."""
    run = Path(root) / experiment / folder
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({
        "schema_version": 1, "experiment": experiment, "run": run_name or folder, "strategy": "ddp",
        "world_size": ranks, "status": "completed", "exit_status": 0, "start_unix_ns": T0,
        "end_unix_ns": T0 + 600 * 10**9, "writer": "wrapper"}) + "\n")
    for r in range(ranks):
        d = run / f"rank-{r:05d}"
        d.mkdir()
        (d / "rank.json").write_text(json.dumps({
            "schema_version": 1, "rank": r, "local_rank": r, "world_size": ranks, "host": "node1",
            "status": "completed", "strategy": "ddp", "start_unix_ns": T0, "end_unix_ns": T0 + 500 * 10**9}) + "\n")
        lines = ["epoch,start_unix_ns,end_unix_ns,duration_s,samples"]
        for e in range(epochs):
            sec = epoch_seconds[r][e] if epoch_seconds else 1.5 + r / 100 + e / 10
            lines.append(f"{e},{T0 + e * 10**10},{T0 + e * 10**10 + int(sec * 1e9)},{sec},64")
        (d / "epochs.csv").write_text("\n".join(lines) + "\n")
        lines = ["epoch,step,start_unix_ns,duration_s,samples"]
        for s in range(steps):
            lines.append(f"{s * epochs // steps},{s},{T0 + s * 10**8},{0.05 + s / 1000 + r / 10000},8")
        (d / "steps.csv").write_text("\n".join(lines) + "\n")
    return run


def sync(cli, root, url, *extra, env=None, check=True, timeout=300):
    args = [str(cli), "mlflow", "sync", "--root", str(root), "--format", "json", *extra]
    if url is not None:
        args += ["--tracking-uri", url]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env or child_env())
    if check:
        assert proc.returncode == 0, f"{args} -> {proc.returncode}\n{proc.stderr}"
    return proc


def rows(proc):
    doc = json.loads(proc.stdout)
    return doc["rows"] if isinstance(doc, dict) and "rows" in doc else doc


def server_runs(url, experiment):
    """{sync id: (run, {metric: [(step, value, timestamp), ...]})} with every point as the server keeps it;
    fails when two active runs carry one sync id."""
    client = MlflowClient(tracking_uri=url)
    exp = client.get_experiment_by_name(experiment)
    assert exp is not None, f"no experiment {experiment}"
    out = {}
    for r in client.search_runs([exp.experiment_id], max_results=1000):
        sid = r.data.tags.get("scaleprof.sync_id")
        assert sid not in out, f"two runs hold sync id {sid}"
        hist = {k: sorted((m.step, m.value, m.timestamp) for m in client.get_metric_history(r.info.run_id, k))
                for k in r.data.metrics}
        out[sid] = (r, hist)
    return out


def expected_points(run_dir):
    """{sync id suffix: {metric: sorted [(step, value)]}} of one synthetic run, itwinai's layout."""
    out = {}
    slowest = {}
    for d in sorted(Path(run_dir).glob("rank-*")):
        rows_ = [line.split(",") for line in (d / "epochs.csv").read_text().splitlines()[1:]]
        steps = [line.split(",") for line in (d / "steps.csv").read_text().splitlines()[1:]]
        out[d.name] = {
            "worker_epoch_time_s": sorted((int(e[0]), float(e[3])) for e in rows_),
            "epoch_samples": sorted((int(e[0]), float(e[4])) for e in rows_),
            "step_time_s": sorted((i, float(s[3])) for i, s in enumerate(steps)),
        }
        for e in rows_:
            slowest[int(e[0])] = max(slowest.get(int(e[0]), 0.0), float(e[3]))
    out["rank-00000"]["epoch_time_s"] = sorted(slowest.items())
    return out


def assert_exactly_once(url, experiment, root):
    """Every run of root on the server once, every point exactly once, nothing else."""
    state = server_runs(url, experiment)
    want_ids = set()
    for run_dir in sorted((Path(root) / experiment).iterdir()):
        parent_id = f"{experiment}/{run_dir.name}"
        want_ids.add(parent_id)
        parent, _ = state[parent_id]
        assert parent.data.tags["scaleprof.sync_complete"] == "true"
        for rank, metrics in expected_points(run_dir).items():
            sid = f"{parent_id}/{rank}"
            want_ids.add(sid)
            child, hist = state[sid]
            assert child.data.tags["mlflow.parentRunId"] == parent.info.run_id
            assert set(hist) == set(metrics), (sid, sorted(hist))
            for key, points in metrics.items():
                assert [(s, v) for s, v, _ in hist[key]] == points, (sid, key)
    assert set(state) == want_ids


@pytest.fixture
def root(tmp_path):
    return tmp_path / "root"


# --- 2: two syncs at once -----------------------------------------------------------------------


def test_second_sync_of_a_locked_root_stops_with_exit_5_or_waits(scaleprof_cli, mlflow_server, root, tmp_path):
    experiment = "lock-held"
    write_run(root, experiment, "a")
    lock_path = root / ".scaleprof-sync" / f"127.0.0.1_{mlflow_server.port}.lock"
    lock_path.parent.mkdir(parents=True)
    with open(lock_path, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        busy = sync(scaleprof_cli, root, mlflow_server.url, check=False)
        assert busy.returncode == 5, busy.stderr
        assert "another sync of" in busy.stderr and "--wait" in busy.stderr and str(lock_path) in busy.stderr
        assert busy.stdout == ""
        assert MlflowClient(tracking_uri=mlflow_server.url).get_experiment_by_name(experiment) is None
        # --wait: blocks until the holder lets go, then syncs.
        waiting = subprocess.Popen([str(scaleprof_cli), "mlflow", "sync", "--root", str(root), "--tracking-uri",
                                    mlflow_server.url, "--wait", "--format", "json"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())
        time.sleep(1.5)
        assert waiting.poll() is None  # still waiting for the lock
    out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, err
    assert [r["action"] for r in json.loads(out)] == ["synced"]
    assert_exactly_once(mlflow_server.url, experiment, root)


@pytest.mark.parametrize("wait", [False, True])
def test_two_syncs_started_together_send_every_point_once(scaleprof_cli, mlflow_server, root, wait):
    """Without the lock both found every run missing and created it: every run and point twice."""
    experiment = f"together-{int(wait)}"
    for i in range(4):
        write_run(root, experiment, f"run-{i}", ranks=2, steps=150)
    args = [str(scaleprof_cli), "mlflow", "sync", "--root", str(root), "--tracking-uri", mlflow_server.url,
            "--batch-size", "20", "--no-artifacts", "--format", "json"] + (["--wait"] if wait else [])
    procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())
             for _ in range(2)]
    results = [p.communicate(timeout=600) + (p.returncode,) for p in procs]
    codes = sorted(code for _, _, code in results)
    if wait:
        assert codes == [0, 0], results
    else:
        assert codes in ([0, 0], [0, 5]), results  # [0, 0] only if one ended before the other began
    assert_exactly_once(mlflow_server.url, experiment, root)


class Proxy(http.server.BaseHTTPRequestHandler):
    """Passes every request to the real server; `before` may act first (as another sync would)."""
    target = ""
    before = None

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        if type(self).before is not None:
            type(self).before(self.command, self.path, body)
        request = urllib.request.Request(self.target + self.path, data=body, method=self.command,
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

    def log_message(self, *args):
        pass


def serve(handler):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_run_created_by_another_sync_meanwhile_is_adopted(scaleprof_cli, mlflow_server, root):
    """Another sync (of a copy of the root, or an older version without the lock) creates run b's
    parent after this sync searched the experiment: it is found by its sync id and used, not made twice."""
    experiment = "adopt"
    write_run(root, experiment, "a")
    write_run(root, experiment, "b")
    client = MlflowClient(tracking_uri=mlflow_server.url)
    exp_id = client.create_experiment(experiment)
    done = {"created": None}

    def before(command, path, body):
        # Right after the sync's first create (run a's parent): "another sync" makes b's parent.
        if done["created"] is None and path.endswith("/runs/create"):
            run = client.create_run(exp_id, run_name="b", tags={"scaleprof.sync_id": f"{experiment}/b"})
            client.log_metric(run.info.run_id, "x", 1.0, timestamp=1, step=0)
            done["created"] = run.info.run_id

    handler = type("AdoptProxy", (Proxy,), {"target": mlflow_server.url, "before": staticmethod(before)})
    proxy = serve(handler)
    try:
        proc = sync(scaleprof_cli, root, f"http://127.0.0.1:{proxy.server_address[1]}", "--no-artifacts")
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert done["created"] is not None
    by_run = {r["run"]: r for r in rows(proc)}
    assert by_run["b"]["run_id"] == done["created"]
    state = server_runs(mlflow_server.url, experiment)  # one run per sync id
    assert state[f"{experiment}/b"][0].info.run_id == done["created"]
    assert len(state) == 6


# --- 11: the server is the truth ------------------------------------------------------------------


def mark_all_complete(progress):
    doc = json.loads(Path(progress).read_text())
    for entry in doc["runs"].values():
        entry["metrics_done"] = entry["complete"] = True
    Path(progress).write_text(json.dumps(doc))


def test_progress_saying_complete_is_not_trusted_over_the_server(scaleprof_cli, mlflow_server, root, tmp_path):
    """A sync stopped mid-metrics, then a progress file that says every run is complete: the next sync
    reads what the server holds and sends exactly the missing points (it used to skip them and mark the
    run complete for good: 130 of 200 steps)."""
    experiment = "trust-server"
    write_run(root, experiment, "a", ranks=2, steps=200)
    progress = tmp_path / "progress.json"
    killed = sync(scaleprof_cli, root, mlflow_server.url, "--batch-size", "10", "--progress-file", str(progress),
                  "--no-artifacts", env=child_env(SCALEPROF_TEST_SYNC_KILL_AFTER="20"), check=False)
    assert killed.returncode == -9, killed.stderr
    mark_all_complete(progress)
    resumed = sync(scaleprof_cli, root, mlflow_server.url, "--batch-size", "10", "--progress-file", str(progress),
                   "--no-artifacts")
    assert [r["action"] for r in rows(resumed)] == ["resumed"]
    assert rows(resumed)[0]["metric_points"] > 0
    assert_exactly_once(mlflow_server.url, experiment, root)
    again = sync(scaleprof_cli, root, mlflow_server.url, "--progress-file", str(progress), "--no-artifacts")
    assert [(r["action"], r["metric_points"]) for r in rows(again)] == [("unchanged", 0)]


def test_verify_repairs_a_run_the_server_marks_complete(scaleprof_cli, mlflow_server, root, tmp_path):
    """A run the server marks complete, with this very plan's digest, while points are missing (a
    database restored from a mixed backup): --verify reads every history and sends what is missing,
    each point once."""
    write_run(root, "v", "a", steps=120)
    # The same plan in two MLflow experiments: complete in one (its digest), part way in the other.
    sync(scaleprof_cli, root, mlflow_server.url, "--experiment-name", "v-full", "--no-artifacts",
         "--progress-file", str(tmp_path / "full.json"))
    digest = server_runs(mlflow_server.url, "v-full")["v/a"][0].data.tags["scaleprof.sync_digest"]
    killed = sync(scaleprof_cli, root, mlflow_server.url, "--experiment-name", "v-part", "--batch-size", "10",
                  "--no-artifacts", "--progress-file", str(tmp_path / "part.json"),
                  env=child_env(SCALEPROF_TEST_SYNC_KILL_AFTER="12"), check=False)
    assert killed.returncode == -9
    client = MlflowClient(tracking_uri=mlflow_server.url)
    parent = server_runs(mlflow_server.url, "v-part")["v/a"][0]
    client.set_tag(parent.info.run_id, "scaleprof.sync_complete", "true")
    client.set_tag(parent.info.run_id, "scaleprof.sync_digest", digest)
    before = sum(len(h) for _, hists in server_runs(mlflow_server.url, "v-part").values() for h in hists.values())
    proc = sync(scaleprof_cli, root, mlflow_server.url, "--experiment-name", "v-part", "--no-artifacts", "--verify",
                "--progress-file", str(tmp_path / "part.json"))
    [row] = rows(proc)
    assert row["action"] == "repaired"
    after = sum(len(h) for _, hists in server_runs(mlflow_server.url, "v-part").values() for h in hists.values())
    assert row["metric_points"] == after - before > 0
    full = server_runs(mlflow_server.url, "v-full")
    part = server_runs(mlflow_server.url, "v-part")
    assert {k: v[1] for k, v in part.items()} == {k: v[1] for k, v in full.items()}  # every point once
    again = sync(scaleprof_cli, root, mlflow_server.url, "--experiment-name", "v-part", "--no-artifacts", "--verify",
                 "--progress-file", str(tmp_path / "part.json"))
    assert [(r["action"], r["metric_points"]) for r in rows(again)] == [("unchanged", 0)]


def test_truncated_progress_file_is_set_aside_and_rebuilt(scaleprof_cli, mlflow_server, root, tmp_path):
    experiment = "truncated"
    write_run(root, experiment, "a")
    progress = tmp_path / "progress.json"
    sync(scaleprof_cli, root, mlflow_server.url, "--progress-file", str(progress), "--no-artifacts")
    whole = progress.read_bytes()
    cut = whole[: len(whole) // 2]
    progress.write_bytes(cut)
    proc = sync(scaleprof_cli, root, mlflow_server.url, "--progress-file", str(progress), "--no-artifacts")
    set_aside = [p for p in tmp_path.iterdir() if p.name.startswith("progress.json.bad-")]
    assert len(set_aside) == 1 and set_aside[0].read_bytes() == cut  # nothing recorded is lost
    assert f"{progress}: not a sync progress file" in proc.stderr and str(set_aside[0]) in proc.stderr
    assert [(r["action"], r["metric_points"]) for r in rows(proc)] == [("unchanged", 0)]
    rebuilt = json.loads(progress.read_text())
    assert set(rebuilt["runs"]) == {f"{experiment}/a"}
    assert_exactly_once(mlflow_server.url, experiment, root)


# --- 12: two folders, one run name ----------------------------------------------------------------


def test_two_run_folders_with_one_run_name_are_both_sent(scaleprof_cli, mlflow_server, root):
    experiment = "one-name"
    write_run(root, experiment, "same", run_name="same")
    write_run(root, experiment, "same-copy", run_name="same", epoch_seconds=[[2.0, 2.1, 2.2], [2.0, 2.1, 2.2]])
    proc = sync(scaleprof_cli, root, mlflow_server.url, "--no-artifacts")
    assert sorted((r["run"], r["action"]) for r in rows(proc)) == [("same", "synced"), ("same", "synced")]
    assert all(r["metric_points"] > 0 for r in rows(proc))
    assert_exactly_once(mlflow_server.url, experiment, root)
    state = server_runs(mlflow_server.url, experiment)
    assert state[f"{experiment}/same"][0].info.run_name == state[f"{experiment}/same-copy"][0].info.run_name == "same"


# --- 5: symbolic links ----------------------------------------------------------------------------


def test_symlinks_below_a_run_folder_are_not_uploaded(scaleprof_cli, mlflow_server, root, tmp_path):
    """A group member plants links in a colleague's run folder: the colleague's sync uploads none of
    their targets, and names each link in a warning."""
    experiment = "links"
    secret = tmp_path / "colleague" / ".netrc"
    secret.parent.mkdir()
    secret.write_text("machine example.org login alice password s3cr3t-netrc\n")
    run = write_run(root, experiment, "a", ranks=2)
    planted = [run / "rank-00000" / "gpu.csv", run / "rank-00001" / "steps.csv.tmp",
               run / "rank-00000" / "traces" / "x.pt.trace.json", run / "node-n1" / "gpu.csv"]
    (run / "rank-00000" / "traces").mkdir()
    (run / "node-n1").mkdir()
    for link in planted:
        link.symlink_to(secret)
    (run / "rank-00001" / "epochs.csv").rename(run / "rank-00001" / "epochs.real")
    (run / "rank-00001" / "epochs.csv").symlink_to(run / "rank-00001" / "epochs.real")
    (run / "rank-00002").symlink_to(secret.parent, target_is_directory=True)
    proc = sync(scaleprof_cli, root, mlflow_server.url)
    for link in [planted[0], planted[2], planted[3], run / "rank-00001" / "epochs.csv", run / "rank-00002"]:
        assert f"{link}: a symbolic link; not followed (skipped)" in proc.stderr, (link, proc.stderr)
    client = MlflowClient(tracking_uri=mlflow_server.url)
    state = server_runs(mlflow_server.url, experiment)
    assert sorted(state) == [f"{experiment}/a", f"{experiment}/a/rank-00000", f"{experiment}/a/rank-00001"]
    for sid, (r, hist) in state.items():
        files = []
        stack = [""]
        while stack:
            for a in client.list_artifacts(r.info.run_id, stack.pop() or None):
                (stack if a.is_dir else files).append(a.path)
        for path in files:
            local = client.download_artifacts(r.info.run_id, path, str(tmp_path / "dl" / r.info.run_id))
            assert b"s3cr3t-netrc" not in Path(local).read_bytes(), (sid, path)
        assert not any(k.startswith("gpu") for k in hist)
        if sid.endswith("rank-00001"):
            assert "worker_epoch_time_s" not in hist  # its epochs.csv is a link: not read
            assert "epochs.csv" not in " ".join(files)


# --- 21: itwinai's layout ---------------------------------------------------------------------------


def itwinai_epoch_time_runs(client, exp_id, parent):
    """itwinai 0.4.2's get_epoch_time_runs_by_parent: the children (or grandchildren) that log
    epoch_time_s; more than one makes it warn "Ray HPO was used" and average them."""
    children = client.search_runs([exp_id], filter_string=f"tags.mlflow.parentRunId = '{parent.info.run_id}'")
    found = []
    for child in children:
        grand = client.search_runs([exp_id], filter_string=f"tags.mlflow.parentRunId = '{child.info.run_id}'")
        found += [g for g in grand if "epoch_time_s" in g.data.metrics] if grand else (
            [child] if "epoch_time_s" in child.data.metrics else [])
    return found


def test_epoch_time_is_logged_where_itwinai_logs_it(scaleprof_cli, mlflow_server, root):
    experiment = "itwinai-layout"
    seconds = [[1.70, 1.60, 1.50], [1.71, 1.55, 1.52]]
    write_run(root, experiment, "w2", ranks=2, epoch_seconds=seconds)
    sync(scaleprof_cli, root, mlflow_server.url, "--no-artifacts")
    client = MlflowClient(tracking_uri=mlflow_server.url)
    exp = client.get_experiment_by_name(experiment)
    parent = next(r for r in client.search_runs([exp.experiment_id]) if "mlflow.parentRunId" not in r.data.tags)
    found = itwinai_epoch_time_runs(client, exp.experiment_id, parent)
    assert [r.info.run_name for r in found] == ["worker_0 (main)"]  # one: no "Ray HPO" warning
    main = found[0]
    assert main.data.params["global_rank"] == "0"
    history = sorted((m.step, m.value) for m in client.get_metric_history(main.info.run_id, "epoch_time_s"))
    assert history == [(0, 1.71), (1, 1.60), (2, 1.52)]  # the slowest rank's, per epoch
    # scaleprof's report gives the same epoch times from the server as from the run directory.
    def epoch_rows(*source):
        p = subprocess.run([str(scaleprof_cli), "report", *source, "--no-plots", "--format", "json",
                            "--skip-epochs", "0"], capture_output=True, text=True, timeout=120, env=child_env())
        assert p.returncode in (0, 3), p.stderr
        return {(r["strategy"], r["workers"]): r for r in json.loads(p.stdout)["epoch_time"]}
    from_dirs = epoch_rows("--root", str(root))
    from_server = epoch_rows("--tracking-uri", mlflow_server.url, "--experiment-name", experiment)
    assert from_dirs.keys() == from_server.keys() == {("ddp", 2)}
    for column, value in from_dirs[("ddp", 2)].items():
        if isinstance(value, float):
            assert from_server[("ddp", 2)][column] == pytest.approx(value, rel=1e-12), column


# --- 23: MLFLOW_TRACKING_URI and bad URIs ----------------------------------------------------------


def test_mlflow_tracking_uri_is_the_default_and_the_flag_wins(scaleprof_cli, mlflow_server, root, tmp_path):
    experiment = "env-uri"
    write_run(root, experiment, "a")
    env = child_env(MLFLOW_TRACKING_URI=mlflow_server.url)
    proc = sync(scaleprof_cli, root, None, "--no-artifacts", env=env)
    assert [r["action"] for r in rows(proc)] == ["synced"]
    # The flag wins over the variable (which names a port nobody listens on).
    dead = child_env(MLFLOW_TRACKING_URI=f"http://127.0.0.1:{free_port()}")
    proc = sync(scaleprof_cli, root, mlflow_server.url, "--no-artifacts", env=dead)
    assert [r["action"] for r in rows(proc)] == ["unchanged"]
    # An upper-case scheme is a scheme.
    upper = mlflow_server.url.replace("http://", "HTTP://")
    assert [r["action"] for r in rows(sync(scaleprof_cli, root, upper, "--no-artifacts"))] == ["unchanged"]
    # report: the variable is the default of --tracking-uri ...
    p = subprocess.run([str(scaleprof_cli), "report", "--experiment-name", experiment, "--no-plots", "--format",
                        "json"], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert p.returncode in (0, 3), p.stderr
    assert json.loads(p.stdout)["epoch_time"][0]["workers"] == 2
    # ... and --root (an explicit choice of the run folders) is read instead of it.
    p = subprocess.run([str(scaleprof_cli), "report", "--root", str(root), "--no-plots", "--format", "json"],
                       capture_output=True, text=True, timeout=120, env=dead)
    assert p.returncode in (0, 3), p.stderr
    # Both a run folder here and the variable: the variable is read, and a note says how to choose.
    (tmp_path / "scalability-metrics").symlink_to(root)
    p = subprocess.run([str(scaleprof_cli), "report", "--experiment-name", experiment, "--no-plots", "--format",
                        "json"], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert p.returncode in (0, 3), p.stderr
    assert "MLFLOW_TRACKING_URI" in p.stderr and "--root scalability-metrics" in p.stderr


def test_bad_tracking_uris_are_usage_errors(scaleprof_cli, root, tmp_path):
    write_run(root, "x", "a")
    for uri in (str(tmp_path / "mlruns"), "127.0.0.1:5000", "htp://127.0.0.1:5000", "sqlite:///x.db"):
        proc = sync(scaleprof_cli, root, uri, check=False)
        assert proc.returncode == 2, (uri, proc.stderr)
        assert "must be http://HOST:PORT" in proc.stderr
    proc = sync(scaleprof_cli, root, "http://u:pa55word@127.0.0.1:1".replace("http", "ftp"), check=False)
    assert proc.returncode == 2 and "pa55word" not in proc.stderr
    proc = subprocess.run([str(scaleprof_cli), "mlflow", "sync", "--root", str(root)], capture_output=True,
                          text=True, timeout=30, env=child_env())
    assert proc.returncode == 2 and "--tracking-uri" in proc.stderr and "MLFLOW_TRACKING_URI" in proc.stderr
    for uri in ("127.0.0.1:5000", "htp://127.0.0.1:5000", "sqlite:/x.db"):
        p = subprocess.run([str(scaleprof_cli), "report", "--tracking-uri", uri, "--no-plots"], capture_output=True,
                           text=True, timeout=60, env=child_env(), cwd=tmp_path)
        assert p.returncode == 2, (uri, p.stderr)


def test_generate_report_says_which_source_it_reads(scaleprof_cli, root, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    # Neither source here: the error names every way to give one.
    p = subprocess.run([str(scaleprof_cli), "generate-scalability-report", "--no-warnings"], capture_output=True,
                       text=True, timeout=60, env=child_env(), cwd=work)
    assert p.returncode == 1
    assert "--log-dir" in p.stderr and "--tracking-uri" in p.stderr and "mllogs/mlflow" in p.stderr, p.stderr
    # Both: the run folder is read and a note says how to read the MLflow store instead.
    write_run(work / "scalability-metrics", "x", "a")
    (work / "mllogs" / "mlflow").mkdir(parents=True)
    p = subprocess.run([str(scaleprof_cli), "generate-scalability-report", "--plot-dir", str(tmp_path / "plots"),
                        "--format", "json"], capture_output=True, text=True, timeout=60, env=child_env(), cwd=work)
    assert p.returncode in (0, 3, 4), p.stderr
    assert "reading scalability-metrics" in p.stderr and "--tracking-uri mllogs/mlflow" in p.stderr, p.stderr
