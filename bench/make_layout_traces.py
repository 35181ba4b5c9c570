#!/usr/bin/env python3
"""Writes one trace in three JSON layouts, for the reader's layout benchmark (issue 18, finding 20).

The same events, the same envelope, the same values; only the white space differs:
  pytorch.json        Kineto's own layout: one event over several lines, its args on lines of their own
  one_per_line.json   one event per line (compact, as some exporters and scripts write)
  indent2.json        every value on its own line, as Python's json.dump(indent=2) writes
The events are those of SRC (a trace, .json or .json.gz) or, with --simple, synthetic events with
few fields (a runtime call with one id, like MTIA runtime events); they are repeated until each file
holds about BYTES of JSON. Output is temporary: never commit it.

Usage: make_layout_traces.py [--simple] [--bytes N] [--src SRC] OUTDIR
"""
import argparse
import gzip
import json
import os


def load_source(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    events = doc.pop("traceEvents")
    return doc, events


def simple_events(count=20000):
    """Events with few fields each: runtime calls carrying one id, and the kernels they launch."""
    events = []
    for i in range(count):
        if i % 2 == 0:
            events.append({"ph": "X", "cat": "mtia_runtime", "name": f"runFunction_{i % 13}", "pid": 7,
                           "tid": 7 + i % 3, "ts": 1000 + i * 5, "dur": 3, "args": {"correlation": i}})
        else:
            events.append({"ph": "X", "cat": "mtia_ccp_events", "name": f"kernel_{i % 29}", "pid": 0,
                           "tid": 1, "ts": 1002 + i * 5, "dur": 2, "args": {"correlation": i - 1}})
    return {"schemaVersion": 1, "displayTimeUnit": "ms"}, events


def dumps(value, **kw):
    return json.dumps(value, ensure_ascii=False, **kw)


def event_pytorch(event):
    """Kineto's writer: the fields on one or two lines, then args one member a line."""
    fields = [f"{dumps(k)}: {dumps(v)}" for k, v in event.items() if k != "args"]
    text = "  {\n    " + ", ".join(fields)
    if "args" in event:
        args = event["args"]
        if isinstance(args, dict) and args:
            members = ",\n      ".join(f"{dumps(k)}: {dumps(v)}" for k, v in args.items())
            text += ",\n    \"args\": {\n      " + members + "\n    }"
        else:
            text += ",\n    \"args\": " + dumps(args)
    return text + "\n  }"


def event_one_line(event):
    return dumps(event)


def event_indent2(event):
    # As json.dump(doc, indent=2) writes an element of the top-level object's traceEvents list.
    return "\n".join("    " + line for line in dumps(event, indent=2).split("\n"))


def envelope_member(key, value, indent2):
    if indent2:
        return "  " + dumps(key) + ": " + "\n".join(
            ("  " + line if n else line) for n, line in enumerate(dumps(value, indent=2).split("\n")))
    return "  " + dumps(key) + ": " + dumps(value)


def write_layout(path, envelope, events, event_text, copies, indent2=False):
    body = ",\n".join(event_text(e) for e in events).encode("utf-8")
    members = [envelope_member(k, v, indent2) for k, v in envelope.items()]
    head = ("{\n" + "".join(m + ",\n" for m in members) + "  \"traceEvents\": [\n").encode("utf-8")
    tail = "\n  ]\n}\n".encode("utf-8")
    with open(path, "wb") as f:
        f.write(head)
        for i in range(copies):
            f.write(body)
            f.write(b",\n" if i + 1 < copies else b"")
        f.write(tail)
    return os.path.getsize(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outdir")
    parser.add_argument("--src", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "traces",
                                                      "hta", "df_index_resolver", "df_index_resolver.json.gz"))
    parser.add_argument("--simple", action="store_true", help="synthetic events with few fields, not SRC's")
    parser.add_argument("--bytes", type=int, default=400_000_000, help="about this many bytes of JSON per file")
    args = parser.parse_args()
    envelope, events = simple_events() if args.simple else load_source(args.src)
    os.makedirs(args.outdir, exist_ok=True)
    # The same number of copies in every layout (Kineto's sets it), so the three hold the same events.
    copies = max(1, args.bytes // (len(",\n".join(event_pytorch(e) for e in events)) + 2))
    for name, text, indent2 in (("pytorch", event_pytorch, False), ("one_per_line", event_one_line, False),
                                ("indent2", event_indent2, True)):
        path = os.path.join(args.outdir, name + ".json")
        size = write_layout(path, envelope, events, text, copies, indent2)
        print(f"{path}: {copies} copies of {len(events)} events, {size} bytes")


if __name__ == "__main__":
    main()
