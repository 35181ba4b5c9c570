#!/usr/bin/env python3
"""Writes a large trace for the reader benchmarks (issue 12) by repeating the events of one real
trace: SRC.json.gz's envelope, its traceEvents array repeated until about BYTES of JSON, as gzip
members (the reader reads concatenated members as one stream). The output is temporary: never
commit it. Usage: make_big_trace.py SRC.json.gz BYTES OUT.json.gz"""
import gzip
import sys


def main():
    src_path, target, out_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    src = gzip.open(src_path).read()
    start = src.index(b"[", src.index(b'"traceEvents"')) + 1
    end = src.rindex(b"]", 0, src.rindex(b"}"))  # the events array's closing bracket
    head, body, tail = src[:start], src[start:end].rstrip(), src[end:]
    if not (body.lstrip().startswith(b"{") and body.endswith(b"}")):
        sys.exit(f"{src_path}: events array not in the expected shape")
    copies = max(1, target // len(body))
    middle = gzip.compress(body + b",\n", 1)
    with open(out_path, "wb") as f:
        f.write(gzip.compress(head, 1))
        for _ in range(copies - 1):
            f.write(middle)
        f.write(gzip.compress(body + b"\n" + tail, 1))
    print(f"{out_path}: {copies} copies of {len(body)} bytes of events")


if __name__ == "__main__":
    main()
