"""`scaleprof mlflow sync` throughput against a real local MLflow server (SQLite backend, 127.0.0.1).

    .venv/bin/python bench/mlflow_sync_bench.py [--runs 100] [--ranks 8] [--points 1000] [--artifacts]

Writes RUNS x RANKS synthetic run directories in the run-directory format (docs/run-directory.md):
per rank, POINTS metric points (50 epochs in epochs.csv, the rest as steps in steps.csv), starts
`mlflow server`, times one sync (wall and scaleprof's own CPU), checks the point count on the server
with MLflow's client (a sample of runs), times a second sync (idempotent: nothing sent), and stops the
server by pid. Prints one JSON line. --artifacts also uploads each rank's files (3 PUTs per rank).
--client-baseline then sends the same points again with MLflow's own client on the same server
(`MlflowClient.log_batch`, batches of 1,000 metrics, one run per rank in a fresh experiment) and
times that too.
The server runs without MLflow 3's job runner (MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false) unless
--server-jobs is given.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))


def write_runs(root, runs, ranks, points):
    epochs = min(50, points)
    steps = points - epochs
    t0 = 1_763_767_200_000_000_000
    for r in range(runs):
        run = root / "bench" / f"run-{r:04d}"
        for k in range(ranks):
            d = run / f"rank-{k:05d}"
            d.mkdir(parents=True)
            (d / "rank.json").write_text(json.dumps({
                "schema_version": 1, "rank": k, "local_rank": k % 4, "world_size": ranks, "host": f"n{k // 4}",
                "pid": 1, "start_unix_ns": t0, "end_unix_ns": t0 + 10**12, "status": "completed",
                "strategy": "ddp", "experiment": "bench", "run": run.name}) + "\n")
            lines = ["epoch,start_unix_ns,end_unix_ns,duration_s,samples"]
            for e in range(epochs):
                s = t0 + e * 10**10
                lines.append(f"{e},{s},{s + 9 * 10**9},{9 + (r * ranks + k + e) % 97 / 1000:.9f},")
            (d / "epochs.csv").write_text("\n".join(lines) + "\n")
            lines = ["epoch,step,start_unix_ns,duration_s,samples"]
            for i in range(steps):
                lines.append(f"{i * epochs // max(steps, 1)},{i},{t0 + i * 10**8},{0.05 + (i % 89) / 10**5:.9f},32")
            (d / "steps.csv").write_text("\n".join(lines) + "\n")
        (run / "run.json").write_text(json.dumps({
            "schema_version": 1, "experiment": "bench", "run": run.name, "strategy": "ddp", "world_size": ranks,
            "start_unix_ns": t0, "end_unix_ns": t0 + 10**12, "exit_status": 0, "status": "completed",
            "writer": "wrapper", "writer_host": "n0", "writer_pid": 1}) + "\n")


def session_cpu_s(pid):
    """CPU seconds (user + system) of every process in the server's session (it runs in its own, see
    MlflowServer): the server, its uvicorn workers and, when on, the job runner."""
    out = subprocess.run(["ps", "-s", str(pid), "-o", "cputimes="], capture_output=True, text=True).stdout
    return sum(int(x) for x in out.split())


def timed_sync(cli, root, url, artifacts):
    args = [str(cli), "mlflow", "sync", "--root", str(root), "--tracking-uri", url, "--format", "json", "-q"]
    if not artifacts:
        args.append("--no-artifacts")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"sync failed ({proc.returncode}): {proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(proc.stdout)


def client_baseline(url, root):
    """MLflow's own client sending the points of every rank's CSVs: one run per rank, log_batch of
    at most 1,000 metrics (the server's limit), one request at a time. Returns (points, wall s)."""
    import csv
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient
    client = MlflowClient(tracking_uri=url)
    exp = client.create_experiment("bench-mlflow-client")
    ranks = []
    for rank_dir in sorted(root.glob("bench/run-*/rank-*")):
        metrics = []
        with open(rank_dir / "epochs.csv") as f:
            for row in csv.DictReader(f):
                metrics.append(Metric("epoch_time_s", float(row["duration_s"]),
                                      int(row["start_unix_ns"]) // 10**6, int(row["epoch"])))
        with open(rank_dir / "steps.csv") as f:
            for row in csv.DictReader(f):
                metrics.append(Metric("step_time_s", float(row["duration_s"]),
                                      int(row["start_unix_ns"]) // 10**6, int(row["step"])))
        ranks.append((f"{rank_dir.parent.name}/{rank_dir.name}", metrics))
    start = time.monotonic()
    points = 0
    for name, metrics in ranks:
        run_id = client.create_run(exp, run_name=name).info.run_id
        for i in range(0, len(metrics), 1000):
            client.log_batch(run_id, metrics=metrics[i:i + 1000])
        client.set_terminated(run_id)
        points += len(metrics)
    return points, time.monotonic() - start


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--ranks", type=int, default=8)
    p.add_argument("--points", type=int, default=1000, help="metric points per rank")
    p.add_argument("--artifacts", action="store_true")
    p.add_argument("--server-jobs", action="store_true",
                   help="keep MLflow 3's job runner on (its default; ~5x slower log-batch on 2 cores)")
    p.add_argument("--client-baseline", action="store_true",
                   help="also time MLflow's own client (MlflowClient.log_batch) sending the same points")
    p.add_argument("--cli", default=os.environ.get("SCALEPROF_CLI", str(REPO / "build" / "scaleprof")))
    args = p.parse_args()
    from mlflow_fixtures import MlflowServer  # the tests' server: SQLite backend, free port, stopped by pid
    from mlflow.tracking import MlflowClient

    with tempfile.TemporaryDirectory(prefix="scaleprof-sync-bench-") as tmp:
        tmp = Path(tmp)
        write_runs(tmp / "root", args.runs, args.ranks, args.points)
        server = MlflowServer(tmp / "server", job_execution=args.server_jobs).start()
        try:
            server_cpu = session_cpu_s(server.proc.pid)
            wall, cpu, rows = timed_sync(args.cli, tmp / "root", server.url, args.artifacts)
            server_cpu = session_cpu_s(server.proc.pid) - server_cpu
            sent = sum(r["metric_points"] for r in rows)
            again_wall, _, again = timed_sync(args.cli, tmp / "root", server.url, args.artifacts)
            assert all(r["action"] == "unchanged" and r["metric_points"] == 0 for r in again)
            client = MlflowClient(tracking_uri=server.url)
            exp = client.get_experiment_by_name("bench")
            checked = 0
            for r in rows[:: max(1, len(rows) // 5)]:
                for child in client.search_runs([exp.experiment_id], f"tags.`mlflow.parentRunId` = '{r['run_id']}'"):
                    # Each worker's own epochs are `worker_epoch_time_s` (`epoch_time_s`, the slowest
                    # rank's, only on the main worker, as itwinai logs it: docs/mlflow.md).
                    n = len(client.get_metric_history(child.info.run_id, "worker_epoch_time_s")) + \
                        len(client.get_metric_history(child.info.run_id, "step_time_s"))
                    assert n == args.points, (child.info.run_name, n)
                    checked += 1
            baseline = client_baseline(server.url, tmp / "root") if args.client_baseline else None
        finally:
            server.stop()
    extra = {}
    if baseline is not None:
        extra = {"mlflow_client_points": baseline[0], "mlflow_client_wall_s": round(baseline[1], 2),
                 "mlflow_client_points_per_s": round(baseline[0] / baseline[1])}
    print(json.dumps({"runs": args.runs, "ranks": args.ranks, "points_per_rank": args.points,
                      "points_sent": sent, "artifacts": args.artifacts, "server_jobs": args.server_jobs, "sync_wall_s": round(wall, 2),
                      "scaleprof_cpu_s": round(cpu, 2), "server_cpu_s": server_cpu, "points_per_s": round(sent / wall),
                      "second_sync_wall_s": round(again_wall, 2), "children_checked": checked,
                      "load_1min": round(os.getloadavg()[0], 1), "cpus": os.cpu_count(), **extra}))


if __name__ == "__main__":
    main()
