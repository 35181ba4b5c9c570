"""The argument checks of scaleprof.TraceAnalysis's methods: HTA's argument types, each refused with
a ValueError naming the argument (the binding's own conversions for paths)."""
from __future__ import annotations

import operator
import os
from typing import Any, List, Optional

from . import _charts, _scaleprof


def _check_visualize(value: Any, name: str = "visualize") -> bool:
    if value is None:
        return _charts.in_notebook()
    if not isinstance(value, bool):
        raise ValueError(f"{name}: expected True or False, got {type(value).__name__}")
    return value


def _index(value: Any, name: str) -> int:
    """An integer argument: an int or anything with __index__ (numpy and torch integers), never a bool or
    a float; a ValueError naming the argument otherwise. The one conversion of every integer argument
    the methods check here (ranks, rank, instance_id)."""
    try:
        if isinstance(value, (bool, float)):
            raise TypeError
        return operator.index(value)  # int, numpy integer; an array of several fails
    except (TypeError, AttributeError):
        raise ValueError(f"{name}: expected an integer, got {type(value).__name__}") from None


def _path(value: Any, name: str) -> str:
    """A path argument (str, bytes or os.PathLike) checked by the binding's one path conversion
    (python/path_argument.h: os.fsencode, NUL refused, a ValueError naming `name`) and kept as str the
    way os.fsdecode gives it, so that joining it to trace_dir works and the binding gets the same bytes
    back."""
    return os.fsdecode(_scaleprof.fs_path(value, name))


def _ranks_list(value: Any, name: str = "ranks", empty: Optional[List[int]] = None) -> List[int]:
    """HTA's ranks argument (None or [] means [0]; for streams, `empty`), checked by the binding's rules."""
    if empty is None:
        empty = [0]
    if value is None:
        return list(empty)
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise ValueError(f"{name}: expected a list of ranks, got {type(value).__name__}")
    try:
        items = list(value)
    except TypeError:  # a 0-d array has __iter__ but cannot be iterated
        raise ValueError(f"{name}: expected a list of ranks, got {type(value).__name__}") from None
    out = []
    for i, r in enumerate(items):
        index = _index(r, f"{name}[{i}]")
        if not 0 <= index <= 2147483647:
            raise ValueError(f"{name}[{i}]: must be between 0 and 2147483647, got {index}")
        out.append(index)
    return out or list(empty)
