#!/usr/bin/env python3
"""scaleprof's `trace collectives` / `trace stragglers` against TraceLens' multi-rank collective report
(TraceLens_generate_multi_rank_collective_report_pytorch, its NcclAnalyser) on the same trace files,
figure by figure. Run by bench/compare_tracelens.sh, which makes TraceLens' venv; not part of CI.

Cases (each skipped when its input is missing):
  nccl          ../shared nccl_parser_config: one rank of a two-rank job, all-reduces and broadcasts
                with sizes (TraceLens is run with --world_size 1: it needs files for ranks 0..N-1).
  nccl_pair     that rank plus a rank 1 written here from it (temporary): every NCCL kernel moved by
                s x 20 % of its duration, s = 7k mod 5 - 2 for the k-th kernel, and shortened by 90 %
                of the move, so the two ranks differ in start, duration and end as real ranks do;
                ties (s = 0) included. The only shared input on which both tools see two ranks of
                a collective with sizes.
  alltoall_pair both ranks of nccl_pair written here (temporary) with every all-reduce made an
                all_to_allv: kernel `ncclDevKernel_SendRecv`, `In/Out split size` in rows of
                n / (8 r) elements (r = 2 + k mod 4 for the k-th kernel; rank 0 sends [r, 3r], rank 1
                [2r, r + k mod 3], each rank's `Out split size` what the other sends it), so the ranks
                send different amounts. No shared trace holds an all-to-all.
  trace_filter  ../shared trace_filter: ranks 0 and 1 of a 128-rank job, SendRecv kernels with no
                collective metadata.
  gloo          2 ranks of real PyTorch over gloo (tests/python/gloo_collectives.py under torchrun),
                when a Python with torch is given.

TraceLens' "MB" is MiB and its "GB/s" is GiB/s (MiB / 1024 / s); scaleprof's GB/s is 10^9 B/s, so
TraceLens' bandwidths are multiplied by 1.073741824 before comparing. Times are compared to 0.002 us:
TraceLens holds timestamps as float64 microseconds (~1e-3 us resolution at 4e12 us), scaleprof as
int64 nanoseconds.
"""
import argparse
import csv
import gzip
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

GIB_PER_GB = 1.073741824  # 2^30 / 10^9
TIME_TOL_US = 0.002
BW_REL_TOL = 1e-6
# TraceLens' implicit-sync categories (nccl_analyser.py: implicit_sync_cat) in scaleprof's names.
TL_TYPE = {"allreduce": "allreduce", "reducescatter": "reduce_scatter", "allgather": "allgather",
           "alltoall": "alltoall"}
TL_NAME2TYPE = {"allreduce": "allreduce", "allreduce_coalesced": "allreduce", "reducescatter": "reducescatter",
                "_reduce_scatter_base": "reducescatter", "reduce_scatter_tensor_coalesced": "reducescatter",
                "allgather": "allgather", "all_gather": "allgather", "_allgather_base": "allgather",
                "all_gather_into_tensor_coalesced": "allgather", "allgather_into_tensor_coalesced": "allgather",
                "all_to_all": "alltoall"}
IMPLICIT_SYNC = set(TL_TYPE.values())


def fnum(x):
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def read_csv(path):
    if not path.is_file() or path.stat().st_size == 0:
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------------------------------------- inputs

def load_json(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def make_pair_rank(src, dst):
    """Rank 1 of nccl_pair, from rank 0's trace (see the module comment)."""
    d = load_json(src)
    d["distributedInfo"] = dict(d["distributedInfo"], rank=1)
    kernels = sorted((e for e in d["traceEvents"] if e.get("cat") == "kernel" and e.get("name", "").startswith("nccl")),
                     key=lambda e: e["ts"])
    for k, e in enumerate(kernels):
        shift = round(((k * 7) % 5 - 2) * 0.2 * e["dur"], 3)
        e["ts"] = round(e["ts"] + shift, 3)
        e["dur"] = round(e["dur"] - 0.9 * shift, 3)
    with gzip.open(dst, "wt") as f:
        json.dump(d, f)


def make_alltoall_rank(src, dst, rank):
    """Rank `rank` of alltoall_pair (see the module comment); rank 1 is also moved as in nccl_pair."""
    d = load_json(src)
    d["distributedInfo"] = dict(d["distributedInfo"], rank=rank)
    kernels = sorted((e for e in d["traceEvents"] if e.get("cat") == "kernel" and e.get("name", "").startswith("nccl")),
                     key=lambda e: e["ts"])
    for k, e in enumerate(kernels):
        if rank == 1:
            shift = round(((k * 7) % 5 - 2) * 0.2 * e["dur"], 3)
            e["ts"] = round(e["ts"] + shift, 3)
            e["dur"] = round(e["dur"] - 0.9 * shift, 3)
        a = e["args"]
        if a.get("Collective name") != "allreduce":
            continue
        r = 2 + k % 4
        row = max(1, a["In msg nelems"] // (8 * r))
        splits = {0: [r, 3 * r], 1: [2 * r, r + k % 3]}
        a["Collective name"] = "all_to_allv"
        a["In split size"] = str(splits[rank])
        a["Out split size"] = str([splits[0][rank], splits[1][rank]])
        a["In msg nelems"] = sum(splits[rank]) * row
        a["Out msg nelems"] = (splits[0][rank] + splits[1][rank]) * row
        e["name"] = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"
    with gzip.open(dst, "wt") as f:
        json.dump(d, f)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_gloo_ranks(torch_python, repo, folder):
    """2 ranks of real PyTorch over gloo; files renamed rank<R>.json from their distributedInfo."""
    raw = folder / "raw"
    raw.mkdir()
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", MASTER_ADDR="127.0.0.1")
    subprocess.run([torch_python, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", "2",
                    "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
                    str(repo / "tests/python/gloo_collectives.py"), "--trace-dir", str(raw), "--steps", "4",
                    "--sizes", "1024,262144"], check=True, env=env, timeout=170,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    files = {}
    for f in raw.iterdir():
        files[int(load_json(f)["distributedInfo"]["rank"])] = f
    return files


def gpus_per_node_of(path):
    """What TraceLens auto-detects (reporting_utils.detect_gpus_per_node): len(deviceProperties)."""
    props = load_json(path).get("deviceProperties")
    return len(props) if isinstance(props, list) and props else None


# ---------------------------------------------------------------------------------------------- runs

def run_tracelens(tl_python, files, work):
    """The report's CLI on rank<R><ext> links; returns (sheets, error line or None)."""
    ext = "".join(Path(files[0]).suffixes)
    inputs = work / "tl-in"
    inputs.mkdir()
    for r, f in files.items():
        (inputs / f"rank{r}{ext}").symlink_to(Path(f).resolve())
    out = work / "tl-out"
    cli = Path(tl_python).parent / "TraceLens_generate_multi_rank_collective_report_pytorch"
    proc = subprocess.run([str(cli), "--trace_pattern", str(inputs / f"rank*{ext}"), "--world_size", str(len(files)),
                           "--output_csvs_dir", str(out)], capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        return {}, lines[-1] if lines else f"exit {proc.returncode}"
    sheets = {p.stem: read_csv(p) for p in out.glob("*.csv")}
    return sheets, None


def run_scaleprof(cli, files, gpus_per_node):
    common = [a for r, f in files.items() for a in ("--rank", f"{f}={r}")] + ["--format", "json", "-q"]
    if gpus_per_node:
        common += ["--gpus-per-node", str(gpus_per_node)]
    paths = [str(f) for f in files.values()]
    out = {}
    for report in ("collectives", "stragglers"):
        proc = subprocess.run([cli, "trace", report, *common, *paths], capture_output=True, text=True, check=True)
        out.update(json.loads(proc.stdout))
    return out


# ---------------------------------------------------------------------------------------------- comparison

class Tally:
    """Per figure: calls compared, calls that agree, the largest difference, one example."""

    def __init__(self):
        self.rows = {}

    def add(self, figure, ours, peer, tol=None, rel=None, unit=""):
        t = self.rows.setdefault(figure, {"n": 0, "agree": 0, "max": 0.0, "example": None, "first_diff": None,
                                          "unit": unit})
        t["n"] += 1
        if isinstance(ours, (int, float)) and isinstance(peer, (int, float)):
            diff = abs(ours - peer)
            limit = tol if tol is not None else (rel or 0.0) * max(abs(ours), abs(peer))
            ok = diff <= limit
            t["max"] = max(t["max"], diff)
        else:
            ok = ours == peer
        if ok:
            t["agree"] += 1
        if t["example"] is None:
            t["example"] = (ours, peer)
        if not ok and t["first_diff"] is None:
            t["first_diff"] = (ours, peer)


def show(v):
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    if isinstance(v, float):
        return f"{v:.6g}" if abs(v) < 1e-3 or abs(v) >= 1e6 else f"{v:.3f}".rstrip("0").rstrip(".")
    return str(v)


def compare_kernels(tl, sp, tally):
    """Every collective kernel of every rank, paired or not: start (from the earliest of all ranks)
    and duration. TraceLens' nccl_long against scaleprof's collective_ranks."""
    long_rows = tl.get("nccl_long", [])
    if not long_rows:
        return
    t0 = min(fnum(r["ts"]) for r in long_rows)
    peer = sorted((int(r["rank"]), fnum(r["ts"]) - t0, fnum(r["dur"])) for r in long_rows)
    ours = sorted((r["rank"], r["start_us"], r["duration_us"]) for r in sp.get("collective_ranks", []))
    if len(ours) != len(peer):
        tally.add("kernels per rank (count)", len(ours), len(peer))
        return
    for (r1, s1, d1), (r2, s2, d2) in zip(ours, peer):
        tally.add("kernel of a rank: rank", r1, r2)
        tally.add("kernel of a rank: start from the first (us)", s1, s2, tol=TIME_TOL_US)
        tally.add("kernel of a rank: duration (us)", d1, d2, tol=TIME_TOL_US)


def compare_calls(tl, sp, tally):
    """TraceLens' nccl_implicit_sync rows against scaleprof's collectives, keyed by (group, index)."""
    ours = {(c["group"], c["position"]): c for c in sp.get("collectives", []) if c["status"] != "unmatched"}
    ranks = {}
    for r in sp.get("collective_ranks", []):
        ranks.setdefault((r["group"], r["position"]), {})[r["rank"]] = r
    paired_differently = 0
    for row in tl.get("nccl_implicit_sync", []):
        group, _, index = row["collective_id"].rpartition("_")
        c = ours.get((group, int(index)))
        if c is None:
            tally.add("call present in both", "absent", "present")
            continue
        tl_ranks = sorted(int(k[5:-4]) for k in row if k.startswith("rank_") and k.endswith("_dur"))
        per_rank = ranks.get((group, int(index)), {})
        if sorted(per_rank) != tl_ranks or any(
                abs(per_rank[r]["duration_us"] - fnum(row[f"rank_{r}_dur"])) > TIME_TOL_US for r in tl_ranks):
            paired_differently += 1
            continue
        tally.add("call present in both", "present", "present")
        tl_type = TL_NAME2TYPE.get(row["Collective name"])
        tally.add("type", c["type"], TL_TYPE.get(tl_type, row["Collective name"]))
        size_mib = fnum(row["Full msg size (MB)"])
        if size_mib is not None:
            tally.add("message size (bytes; TraceLens MiB x 2^20)", c["bytes"], size_mib * 2**20, tol=0.5)
        tally.add("group size", c["group_size"], int(float(row["Group size"])))
        tally.add("latency (us)", c["latency_us"], fnum(row["comm_latency"]), tol=TIME_TOL_US)
        if len(tl_ranks) > 1:
            tally.add("skew of start times (us)", c["skew_us"], fnum(row["skew in start time"]), tol=TIME_TOL_US)
            tally.add("spread of end times (us)", c["end_spread_us"], fnum(row["skew in end time"]), tol=TIME_TOL_US)
            waits = {r: fnum(row[f"rank_{r}_wait_time"]) for r in tl_ranks}
            tally.add("last rank (TraceLens: lowest wait, first on ties)", c["last_rank"], min(tl_ranks, key=lambda r: waits[r]))
            for r in tl_ranks:
                tally.add("wait per rank (us)", per_rank[r]["wait_us"], waits[r], tol=TIME_TOL_US)
        else:
            tally.add("one-rank call: skew / last rank", (c["skew_us"], c["last_rank"]),
                      (fnum(row["skew in start time"]), min(tl_ranks)))
        algbw = fnum(row["algo bw (GB/s)"])
        if algbw is not None:
            tally.add("algbw (GB/s; TraceLens GiB/s x 1.0737)", c["algbw_gbps"], algbw * GIB_PER_GB, rel=BW_REL_TOL)
        busbw = fnum(row["bus bw (GB/s)"])
        if busbw is not None:
            tally.add("busbw (GB/s; TraceLens GiB/s x 1.0737)", c["busbw_gbps"], busbw * GIB_PER_GB, rel=BW_REL_TOL)
        if "node_span" in row:
            tally.add("intra/inter-node", c["locality"], row["node_span"].replace("_", "-"))
    if paired_differently:
        tally.add("calls paired the same way", "no", f"{paired_differently} differ")
    return ours


def bucket_bound(nbytes):
    """scaleprof's message-size bucket (src/report/trace_collectives_report.cc): 1 KiB, 4 KiB, 16 KiB, ..."""
    bound = 1024
    while bound < nbytes:
        bound *= 4
    return bound


def quantile(values, q):
    """Linear interpolation between the closest ranks, as scaleprof (analysis/distribution.cc) and pandas."""
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])


def compare_summary(tl, sp, lines):
    """scaleprof's (type, size bucket) summary against TraceLens' figures put in the same buckets: call
    count and latency total from TraceLens' summary sheet (rows per name, dtype and exact size), skew
    sum and bus-bandwidth quantiles from its per-call sheet (its summary gives only per-size medians).
    scaleprof's summary bandwidths are whole MB/s."""
    buckets = {}
    for row in tl.get("nccl_summary_implicit_sync", []):
        t = TL_TYPE.get(TL_NAME2TYPE.get(row["Collective name"]))
        size = fnum(row["Full msg size (MB)"])
        if t is None or size is None:
            continue
        b = buckets.setdefault((t, bucket_bound(round(size * 2**20))), {"calls": 0, "latency": 0.0, "skew": 0.0, "busbw": []})
        b["calls"] += int(row["count"])
        b["latency"] += fnum(row["Total comm latency (ms)"]) * 1000
    for row in tl.get("nccl_implicit_sync", []):
        t = TL_TYPE.get(TL_NAME2TYPE.get(row["Collective name"]))
        size = fnum(row["Full msg size (MB)"])
        b = buckets.get((t, bucket_bound(round(size * 2**20)))) if t and size is not None else None
        if b is None:
            continue
        b["skew"] += fnum(row["skew in start time"]) or 0.0
        if fnum(row["bus bw (GB/s)"]) is not None:
            b["busbw"].append(round(fnum(row["bus bw (GB/s)"]) * GIB_PER_GB * 1000) / 1000)
    if not buckets and not sp.get("collective_summary"):
        return
    lines.append("")
    lines.append("| type | bucket | calls (sp / TL) | latency sum us (sp / TL) | skew sum us (sp / TL) "
                 "| busbw min / p50 / max GB/s: scaleprof | busbw min / p50 / max GB/s: TraceLens |")
    lines.append("|---|---|---|---|---|---|---|")
    for s in sp.get("collective_summary", []):
        b = buckets.get((s["type"], s["size_bucket_bytes"]))
        ours = f"{show(s['busbw_min_gbps'])} / {show(s['busbw_p50_gbps'])} / {show(s['busbw_max_gbps'])}"
        if b is None:
            lines.append(f"| {s['type']} | {s['size_bucket']} | {s['calls']} / - | {show(s['latency_us'])} / - "
                         f"| {show(s['skew_us'])} / - | {ours} | - |")
            continue
        peer = " / ".join(show(quantile(b["busbw"], q)) for q in (0, 0.5, 1)) if b["busbw"] else "-"
        lines.append(f"| {s['type']} | {s['size_bucket']} | {s['calls']} / {b['calls']} "
                     f"| {show(s['latency_us'])} / {show(b['latency'])} | {show(s['skew_us'])} / {show(b['skew'])} "
                     f"| {ours} | {peer} |")


def compare_stragglers(tl, sp, ours_calls, lines):
    """Per rank: TraceLens' straggler_summary against scaleprof's stragglers, as reported (scaleprof
    counts every matched collective, TraceLens only its implicit-sync types) and with scaleprof's
    per-call rows restricted to TraceLens' types."""
    tl_rows = {int(r["rank"]): r for r in tl.get("straggler_summary", [])}
    sp_rows = {r["rank"]: r for r in sp.get("stragglers", [])}
    if not tl_rows and not sp_rows:
        return
    restricted = {}
    for key, c in ours_calls.items():
        if c["type"] not in IMPLICIT_SYNC:
            continue
        for r in sp.get("collective_ranks", []):
            if (r["group"], r["position"]) != key:
                continue
            x = restricted.setdefault(r["rank"], {"calls": 0, "wait": 0.0, "last": 0})
            x["calls"] += 1
            x["wait"] += r["wait_us"] or 0.0
            # A one-rank call has no last rank in scaleprof; TraceLens counts its only rank as last.
            x["last"] += 1 if (c["last_rank"] if c["last_rank"] is not None else r["rank"]) == r["rank"] else 0
    lines.append("")
    lines.append("| rank | calls: sp / sp (TL types) / TL | own wait us: sp / sp (TL types) / TL "
                 "| arrived last: sp / sp (TL types, one-rank calls as last) / TL |")
    lines.append("|---|---|---|---|")
    for rank in sorted(set(tl_rows) | set(sp_rows)):
        s, t, x = sp_rows.get(rank, {}), tl_rows.get(rank, {}), restricted.get(rank, {})
        lines.append(f"| {rank} | {s.get('calls', '-')} / {x.get('calls', '-')} / {t.get('num_collectives', '-')} "
                     f"| {show(s.get('own_wait_us', '-'))} / {show(x.get('wait', '-'))} / {t.get('total_wait_time_us', '-')} "
                     f"| {s.get('arrived_last', '-')} / {x.get('last', '-')} / {t.get('times_arrived_last', '-')} |")


def compare_alltoall(tl, sp, lines):
    """All-to-all(v): TraceLens' nccl_summary_all2allv (per group and dtype: calls, size_imbalance
    mean and max, start skew mean and max) against scaleprof's `alltoall` and `collectives` rows."""
    tl_rows = tl.get("nccl_summary_all2allv", [])
    ours = sp.get("alltoall", [])
    if not tl_rows and not ours:
        return
    skews = {(c["group"], c["position"]): c["skew_us"] for c in sp.get("collectives", []) if c["type"] == "alltoall"}
    imb = [r["imbalance"] for r in ours if r["imbalance"] is not None]
    sk = [skews[(r["group"], r["position"])] for r in ours if skews.get((r["group"], r["position"])) is not None]
    lines.append("")
    lines.append("| all-to-all(v) | scaleprof | TraceLens | agree (sizes: rel. 1e-9; times: 0.002 us) |")
    lines.append("|---|---|---|---|")
    t = tl_rows[0] if len(tl_rows) == 1 else {}
    mean = (lambda v: sum(v) / len(v) if v else None)
    for label, mine, key in (("calls", len(ours), "count"),
                             ("size imbalance, mean", mean(imb), "size_imbalance_mean"),
                             ("size imbalance, max", max(imb) if imb else None, "size_imbalance_max"),
                             ("start skew us, mean", mean(sk), "skew in start time_mean"),
                             ("start skew us, max", max(sk) if sk else None, "skew in start time_max")):
        peer = fnum(t.get(key)) if t else None
        limit = TIME_TOL_US if "skew" in label else 1e-9 * max(abs(mine or 0), abs(peer or 0))
        agree = mine is not None and peer is not None and abs(mine - peer) <= limit
        lines.append(f"| {label} | {show(mine) if mine is not None else '-'} | {show(peer) if peer is not None else '-'} "
                     f"| {'yes' if agree else 'no'} |")
    if len(tl_rows) > 1:
        lines.append(f"TraceLens gave {len(tl_rows)} all2allv summary rows (one per group and dtype); compared only with one")


def counts(tl, sp):
    status = {}
    for c in sp.get("collectives", []):
        status[c["status"]] = status.get(c["status"], 0) + 1
    tl_long = tl.get("nccl_long", [])
    return (f"scaleprof: {sum(status.values())} calls ({', '.join(f'{v} {k}' for k, v in sorted(status.items())) or 'none'}); "
            f"TraceLens: {len(tl_long)} per-rank events in {len({r['collective_id'] for r in tl_long})} collective ids, "
            f"{len(tl.get('nccl_implicit_sync', []))} with latency/skew/bandwidth (implicit-sync sheet)")


def report_case(name, files, tl_python, scaleprof, work):
    gpn = gpus_per_node_of(files[0])
    tl, error = run_tracelens(tl_python, files, work)
    sp = run_scaleprof(scaleprof, files, gpn)
    lines = [f"### {name}: {len(files)} rank(s)" + (f", gpus per node {gpn} (deviceProperties)" if gpn else "")]
    if error:
        lines.append(f"TraceLens failed: `{error}`")
    lines.append(counts(tl, sp))
    tally = Tally()
    compare_kernels(tl, sp, tally)
    ours_calls = compare_calls(tl, sp, tally)
    if tally.rows:
        lines.append("")
        lines.append("| figure (per call) | compared | agree | max difference | example (scaleprof / TraceLens) | first disagreement |")
        lines.append("|---|---|---|---|---|---|")
        for fig, t in tally.rows.items():
            ex = " / ".join(show(v) for v in t["example"])
            bad = " / ".join(show(v) for v in t["first_diff"]) if t["first_diff"] else ""
            lines.append(f"| {fig} | {t['n']} | {t['agree']} | {show(t['max'])} | {ex} | {bad} |")
    compare_summary(tl, sp, lines)
    compare_stragglers(tl, sp, ours_calls, lines)
    compare_alltoall(tl, sp, lines)
    print("\n".join(lines) + "\n", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tracelens-python", required=True)
    p.add_argument("--scaleprof", required=True)
    p.add_argument("--shared", required=True)
    p.add_argument("--torch-python", default="")
    p.add_argument("cases", nargs="*", default=["nccl", "nccl_pair", "alltoall_pair", "trace_filter", "gloo"])
    args = p.parse_args()
    repo = Path(__file__).resolve().parents[1]
    shared = Path(args.shared)
    nccl = shared / "nccl_parser_config" / "nccl_data.json.gz"
    with tempfile.TemporaryDirectory(prefix="scaleprof-tracelens-") as tmp:
        for name in args.cases:
            work = Path(tmp) / name
            work.mkdir()
            if name == "nccl":
                files = {0: nccl}
            elif name == "nccl_pair":
                make_pair_rank(nccl, work / "rank1.json.gz")
                files = {0: nccl, 1: work / "rank1.json.gz"}
            elif name == "alltoall_pair":
                for r in (0, 1):
                    make_alltoall_rank(nccl, work / f"rank{r}.json.gz", r)
                files = {r: work / f"rank{r}.json.gz" for r in (0, 1)}
            elif name == "trace_filter":
                files = {r: shared / "trace_filter" / f"sampled_rank-{r}.json.gz" for r in (0, 1)}
            elif name == "gloo":
                if not args.torch_python:
                    print("### gloo: skipped (no Python with torch: run tools' mkvenv or set TORCH_PYTHON)\n")
                    continue
                try:
                    files = make_gloo_ranks(args.torch_python, repo, work)
                except (subprocess.SubprocessError, OSError, KeyError, ValueError) as e:
                    print(f"### gloo: skipped (the 2-rank gloo run failed: {e})\n")
                    continue
            else:
                sys.exit(f"unknown case {name}")
            if not all(Path(f).is_file() for f in files.values()):
                print(f"### {name}: skipped (input not found)\n")
                continue
            report_case(name, files, args.tracelens_python, args.scaleprof, work)


if __name__ == "__main__":
    main()
