"""HTA's `TraceDiff` on `scaleprof trace diff` (docs/trace-diff.md): `ops_diff` with HTA's arguments and
result, computed by the C++ pipeline (analysis/ops_diff.h) over every rank and step of each side."""
from __future__ import annotations

import os
from typing import Any, Dict, List

from . import _scaleprof

# HTA's DeviceType names; its enum (hta.trace_diff.DeviceType) is taken by its .name.
_DEVICE_KINDS = {"CPU": ("operator",), "GPU": ("kernel",), "ALL": ("operator", "kernel")}
_CHANGES = ("added", "deleted", "increased", "decreased", "unchanged")


def _device(value: Any) -> str:
    name = getattr(value, "name", value)
    if not isinstance(name, str) or name.upper() not in _DEVICE_KINDS:
        raise ValueError(f"device_type: expected CPU, GPU or ALL (or HTA's DeviceType), got {value!r}")
    return name.upper()


def _side(value: Any, name: str) -> str:
    # HTA's LabeledTrace / Trace objects carry no path scaleprof could read; its TraceDir is a path.
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise ValueError(f"{name}: expected a trace file or folder (HTA's TraceDir), got {type(value).__name__}")
    return os.fsdecode(_scaleprof.fs_path(value, name))


class TraceDiff:
    """HTA's `hta.trace_diff.TraceDiff` on scaleprof's engine."""

    @classmethod
    def ops_diff(cls, control: Any, test: Any, control_rank: Any = None, test_rank: Any = None,
                 control_iteration: Any = None, test_iteration: Any = None, device_type: Any = "ALL", *,
                 warmup: int = 1, include_last_profiler_step: bool = False,
                 threads: int = 0) -> Dict[str, List[str]]:
        """The operators and kernels `added`, `deleted`, `increased`, `decreased` and `unchanged` in `test`
        against `control` (each a trace file, a folder of traces or a scaleprof run directory), by HTA's
        rules on their calls per (rank, step): every rank and every ProfilerStep after `warmup` of each side
        (HTA: the first rank and the first iteration; docs/differences-from-hta.md, section 10). Each list
        holds names in name order, operators before kernels. `device_type`: "CPU" (operators), "GPU"
        (kernels) or "ALL", or HTA's DeviceType."""
        for arg, value in (("control_rank", control_rank), ("test_rank", test_rank),
                           ("control_iteration", control_iteration), ("test_iteration", test_iteration)):
            if value is not None:
                raise ValueError(f"{arg}: scaleprof compares every rank and every step after the warm-up of each "
                                 "side; give a trace of the ranks and steps to compare instead")
        kinds = _DEVICE_KINDS[_device(device_type)]
        result = _scaleprof.trace_diff(_side(control, "control"), _side(test, "test"), warmup=warmup,
                                       include_last_step=include_last_profiler_step, threads=threads)
        table = result["tables"]["ops_diff"]
        out: Dict[str, List[str]] = {change: [] for change in _CHANGES}
        for change, kind, name in zip(table["change"], table["kind"], table["name"]):
            if kind in kinds:
                out[change].append(name)
        return out
