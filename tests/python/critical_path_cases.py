"""Small Kineto traces for the critical path, each made to test one rule against HTA 0.6.1 run live
(tests/python/test_critical_path_hta.py): a GPU tail with no later sync, a stream sync, an event
sync, a blocking copy, nested annotations and operators. Times are whole microseconds (HTA rounds
fractions), one ProfilerStep each."""
import json
from pathlib import Path


class Trace:
    def __init__(self, step_end):
        self.events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
                        "ts": 0, "dur": step_end, "args": {}}]
        self.corr = 0

    def op(self, name, ts, dur, cat="cpu_op", tid=1):
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur,
                            "args": {"External id": len(self.events)}})

    def runtime(self, name, ts, dur, tid=1):
        self.corr += 1
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1, "tid": tid, "ts": ts,
                            "dur": dur, "args": {"correlation": self.corr}})
        return self.corr

    def device(self, name, ts, dur, corr, stream=7, cat="kernel"):
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
                            "args": {"correlation": corr, "stream": stream, "device": 0}})

    def sync(self, name, ts, dur, corr, stream=7, **args):
        self.events.append({"ph": "X", "cat": "cuda_sync", "name": name, "pid": 0, "tid": stream, "ts": ts,
                            "dur": dur, "args": {"correlation": corr, "stream": stream, "device": 0, **args}})

    def write(self, path):
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": self.events}))
        return path


def gpu_tail():
    """One operator launching a 1,400 us kernel in a 1,500 us step, no sync after it."""
    t = Trace(1500)
    t.op("aten::mm", 0, 100)
    c = t.runtime("cudaLaunchKernel", 20, 10)
    t.device("sm90_gemm", 50, 1400, c)
    return t


def stream_sync():
    """A kernel the host waits for at cudaStreamSynchronize, then more host work."""
    t = Trace(1200)
    t.op("aten::mm", 10, 60)
    c = t.runtime("cudaLaunchKernel", 20, 10)
    t.device("gemm", 40, 700, c)
    t.op("aten::item", 100, 700)
    s = t.runtime("cudaStreamSynchronize", 110, 640)
    t.sync("Stream Sync", 740, 10, s)
    t.op("aten::add", 900, 200)
    return t


def event_sync():
    """cudaEventRecord after a kernel on stream 7, a longer kernel on stream 8, then
    cudaEventSynchronize: the host waits for stream 7's kernel only; stream 8's ends the step."""
    t = Trace(1000)
    c1 = t.runtime("cudaLaunchKernel", 10, 5)
    t.device("first", 100, 300, c1, stream=7)
    rec = t.runtime("cudaEventRecord", 20, 5)
    c2 = t.runtime("cudaLaunchKernel", 30, 5)
    t.device("second", 110, 700, c2, stream=8)
    s = t.runtime("cudaEventSynchronize", 40, 370)
    t.sync("Event Sync", 405, 5, s, wait_on_cuda_event_record_corr_id=rec, wait_on_stream=7)
    t.op("aten::add", 450, 100)
    return t


def blocking_copy():
    """cudaMemcpyAsync that returns when its copy is done (HTA weighs the call's span in full)."""
    t = Trace(800)
    t.op("aten::copy_", 0, 600)
    c = t.runtime("cudaMemcpyAsync", 10, 490)
    t.device("Memcpy HtoD (Pageable -> Device)", 100, 390, c, cat="gpu_memcpy")
    t.op("aten::relu", 650, 100)
    return t


def nested():
    """Nested annotations and operators: a user annotation enclosing a linear whose addmm launches a
    kernel queued behind another, with Python gaps between operators."""
    t = Trace(2000)
    t.op("## forward ##", 0, 1500, cat="user_annotation")
    t.op("aten::linear", 10, 300)
    t.op("aten::addmm", 20, 200)
    c1 = t.runtime("cudaLaunchKernel", 30, 10)
    t.device("k1", 60, 600, c1)
    c2 = t.runtime("cudaLaunchKernel", 100, 10)
    t.device("k2", 670, 500, c2)
    t.op("aten::relu", 400, 50)
    c3 = t.runtime("cudaLaunchKernel", 410, 10)
    t.device("k3", 1180, 100, c3)
    t.op("aten::sum", 1600, 100)
    return t


CASES = {"gpu_tail": gpu_tail, "stream_sync": stream_sync, "event_sync": event_sync,
         "blocking_copy": blocking_copy, "nested": nested}


def write_cases(root):
    """Writes each case to root/<case>/trace.json; returns {case: folder}."""
    out = {}
    for name, make in CASES.items():
        make().write(Path(root) / name / "trace.json")
        out[name] = Path(root) / name
    return out
