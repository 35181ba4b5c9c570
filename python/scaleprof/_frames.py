"""The DataFrames of scaleprof.TraceAnalysis: the engine's columns renamed the HTA way, and HTA's
shorten_name. pandas is imported only when a DataFrame is made (analysis.py's docstring says why)."""
from __future__ import annotations

import re
from typing import Any, Dict, List

NOTEBOOK_EXTRA = "pip install scaleprof[notebook]"


def _pandas():
    try:
        import pandas
    except ImportError as e:
        raise ImportError(f"scaleprof.TraceAnalysis returns pandas DataFrames, and pandas is not installed: "
                          f"{NOTEBOOK_EXTRA}") from e
    return pandas


def _frame(columns: Dict[str, Any], names: Dict[str, str], rows=None):
    """A DataFrame of `columns` (a table of trace_report) with the columns of `names` renamed, in its
    order; `rows` (a boolean numpy array) picks rows."""
    pd = _pandas()
    import numpy as np

    data = {}
    for key, name in names.items():
        col = columns[key]
        col = np.asarray(col, dtype=object) if isinstance(col, list) else col
        data[name] = col[rows] if rows is not None else col
    df = pd.DataFrame(data)
    for name in df.columns:  # names arrive as Python lists; keep them str columns, not object
        if df[name].dtype == object:
            df[name] = df[name].astype(str)
    return df


def _per_rank(columns: Dict[str, Any]):
    """A per-rank table of the CLI without its totals row (the one without a rank), rank as int."""
    import numpy as np

    rank = np.asarray(columns["rank"], dtype=float)
    rows = ~np.isnan(rank)
    out = dict(columns)
    out["rank"] = np.where(rows, rank, -1).astype(np.int64)
    return out, rows


_MEMORY_KERNEL = re.compile(r"(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)")


def shorten_name(name: str) -> str:
    """HTA's hta.utils.utils.shorten_name: a kernel or operator name without its template arguments, function
    arguments and return type (copies and sets unchanged), as HTA's `shorten_names` shows them."""
    if _MEMORY_KERNEL.search(name):
        return name
    if name.find("<") < 0 and name.find("(") < 0:
        return name
    stack: List[str] = []
    for c in name.replace("->", ""):
        if c == ">":
            while stack and stack[-1] != "<":
                stack.pop()
            if stack and stack[-1] == "<":
                stack.pop()
        elif c == ")":
            while stack and stack[-1] != "(":
                stack.pop()
            if stack and stack[-1] == "(":
                stack.pop()
        else:
            stack.append(c)
    return "".join(stack).split(" ")[-1]
