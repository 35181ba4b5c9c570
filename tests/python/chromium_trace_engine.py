"""Chromium's own trace engine, run headless over the DevTools protocol on a pipe (no port, no network).

chrome://tracing (the about:tracing viewer) is gone from current Chromium; a Chrome JSON trace is
opened there by DevTools' Performance panel, whose engine (models/trace) ships inside Chromium at
devtools://devtools/bundled/. `load_trace` parses a trace file with that engine, as the panel does
when a user loads the file, and returns what the engine made of it:
  {"tracks": [{"pid", "tid", "name", "entries": [{"name", "ts", "dur", "critical"}]}], "flows": n}
The browser is started per call with its own profile, asked to close, and its process group killed
on every path out.
"""
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

ENGINE_PAGE = "devtools://devtools/bundled/trace_app.html"

# Runs in the DevTools page: parse the trace as the Performance panel does, then list each
# thread's entries (the slices the panel draws) and the flows it bound.
LOAD_SCRIPT = """
(async (text) => {
  const Trace = await import('./models/trace/trace.js');
  const file = JSON.parse(text);
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(file.traceEvents, {metadata: {}, isFreshRecording: false});
  const data = model.parsedTrace(0).data;
  const tracks = [];
  for (const [pid, process] of data.Renderer.processes) {
    for (const [tid, thread] of process.threads) {
      tracks.push({pid, tid, name: thread.name ?? null, entries: thread.entries.map(e => ({
        name: e.name, ts: e.ts, dur: e.dur ?? 0, critical: (e.args ?? {}).critical ?? null}))});
    }
  }
  return {tracks, flows: data.Flows.flows.length};
})
"""


def chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


class _Pipe:
    """The DevTools protocol over --remote-debugging-pipe: JSON messages ended by NUL, on fds 3/4."""

    def __init__(self, profile):
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def on_fds_3_and_4():  # in the child: dup first, since either end may already be fd 3 or 4
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.process = subprocess.Popen(
            [chromium(), "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--user-data-dir=" + profile, "about:blank"],
            preexec_fn=on_fds_3_and_4, close_fds=False, start_new_session=True, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._pending = b""
        self._next_id = 0

    def call(self, method, params=None, session=None, timeout=60.0):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._pending:
                raw, self._pending = self._pending.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._next_id:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply["result"]
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"Chromium gave no answer to {method} in {timeout} s")
            readable, _, _ = select.select([self._from_browser], [], [], left)
            if readable:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"Chromium closed the pipe during {method}")
                self._pending += chunk

    def close(self):
        try:  # a clean exit reaps the renderers; the group is killed whatever happens
            self.call("Browser.close", timeout=10)
            self.process.wait(timeout=10)
        except (OSError, RuntimeError, TimeoutError, subprocess.TimeoutExpired):
            pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=30)
        os.close(self._to_browser)
        os.close(self._from_browser)


def evaluate(pipe, session, expression, timeout=60.0):
    result = pipe.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                       session=session, timeout=timeout)
    if "exceptionDetails" in result:
        raise RuntimeError(result["exceptionDetails"].get("exception", {}).get("description", str(result)))
    return result["result"].get("value")


def load_trace(path, timeout=120.0):
    """What Chromium's trace engine reads from the JSON trace at `path` (module docstring)."""
    text = open(path, encoding="utf-8").read()
    with tempfile.TemporaryDirectory(prefix="scaleprof-devtools-") as profile:
        pipe = _Pipe(profile)
        try:
            target = pipe.call("Target.createTarget", {"url": ENGINE_PAGE})["targetId"]
            session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            deadline = time.monotonic() + timeout
            while evaluate(pipe, session, "document.readyState") != "complete":
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{ENGINE_PAGE} did not load in {timeout} s")
                time.sleep(0.1)
            return evaluate(pipe, session, f"({LOAD_SCRIPT})({json.dumps(text)})", timeout=timeout)
        finally:
            pipe.close()
