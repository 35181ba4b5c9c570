#!/usr/bin/env python3
"""Synthetic gloo all-to-all traces for many ranks: the memory of `scaleprof trace collectives` at 1,024 ranks.

Each rank's file has the shape PyTorch 2.x writes over gloo with record_shapes=True (as
tests/python/gloo_alltoall.py records it): per step a ProfilerStep#N, a record_function("moe_layer") holding a
c10d::alltoall_base_ whose Concrete Inputs carry the output and input split lists (one entry per rank: what makes
the per-peer data n^2 per call), and the gloo:all_to_all on the work thread. Rank r sends --small float32
elements to every rank and --big to rank (r + 1) % n. Nothing here is from a real run; it is a load, not a
known answer.

    python3 bench/alltoall_scale.py OUT_DIR [--ranks 1024] [--calls 50]
    /usr/bin/time -v build/scaleprof trace collectives OUT_DIR --format json > /dev/null
"""
import argparse
import json
from pathlib import Path


def rank_trace(rank, n, calls, big, small):
    in_splits = [small] * n
    in_splits[(rank + 1) % n] = big
    out_splits = [small] * n
    out_splits[(rank - 1) % n] = big
    ins, outs = json.dumps(in_splits), json.dumps(out_splits)
    events = []
    t = 1_000_000.0 + rank * 3.0  # µs; a few µs of skew per rank
    for step in range(calls):
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step + 1}", "pid": 1, "tid": 1,
                       "ts": t, "dur": 900.0, "args": {}})
        events.append({"ph": "X", "cat": "user_annotation", "name": "moe_layer", "pid": 1, "tid": 1, "ts": t + 10,
                       "dur": 800.0, "args": {}})
        events.append({"ph": "X", "cat": "cpu_op", "name": "c10d::alltoall_base_", "pid": 1, "tid": 1, "ts": t + 20,
                       "dur": 50.0, "args": {"Concrete Inputs": ["", "", "", outs, ins, "False", "-1"],
                                              "Input type": ["float", "float", "", "ScalarList", "ScalarList",
                                                             "Scalar", "Scalar"],
                                              "Input Dims": [[sum(out_splits)], [sum(in_splits)], [], [], [], [],
                                                             []]}})
        events.append({"ph": "X", "cat": "user_annotation", "name": "gloo:all_to_all", "pid": 1, "tid": 2,
                       "ts": t + 80, "dur": 700.0 - (rank % 7) * 3.0,
                       "args": {"Input type": ["float"], "Input Dims": [[sum(in_splits)]]}})
        t += 1000.0
    return {"schemaVersion": 1, "record_shapes": 1,
            "distributedInfo": {"backend": "gloo", "rank": rank, "world_size": n, "pg_count": 1,
                                "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cpu:gloo",
                                               "pg_size": n, "ranks": list(range(n))}]},
            "host_name": "node0", "baseTimeNanoseconds": 1_700_000_000_000_000_000, "traceEvents": events}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--ranks", type=int, default=1024)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--big", type=int, default=4000)
    parser.add_argument("--small", type=int, default=10)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for r in range(args.ranks):
        (args.out / f"rank{r}.pt.trace.json").write_text(
            json.dumps(rank_trace(r, args.ranks, args.calls, args.big, args.small)))


if __name__ == "__main__":
    main()
