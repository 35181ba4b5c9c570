"""The charts of scaleprof.TraceAnalysis(visualize=True): the kinds HTA draws, with plotly when it is
installed (as HTA does), else with matplotlib, else none (a warning says why; the DataFrame is still
returned). Each function takes the DataFrame the method returns and shows one or more figures; it
returns the figures, so a test can look at them without a display.

SCALEPROF_CHARTS=plotly|matplotlib|none picks the library (default: the first installed).
"""
from __future__ import annotations

import os
import sys
import warnings
from typing import Any, List


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel: there a chart shows inline, elsewhere plotly opens a browser,
    so `visualize` defaults to True only here."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    ip = shell.get_ipython() if hasattr(shell, "get_ipython") else None
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def backend() -> str:
    wanted = os.environ.get("SCALEPROF_CHARTS", "")
    if wanted == "none":
        return "none"
    for name in ([wanted] if wanted in ("plotly", "matplotlib") else ["plotly", "matplotlib"]):
        try:
            __import__("plotly.express" if name == "plotly" else "matplotlib.pyplot")
            return name
        except ImportError:
            continue
    warnings.warn("scaleprof: no chart drawn: neither plotly nor matplotlib is installed "
                  "(pip install scaleprof[notebook])", stacklevel=3)
    return "none"


def _show(figures: List[Any], kind: str, renderer: str = "") -> List[Any]:
    for fig in figures:
        if kind == "plotly":
            fig.show(renderer=renderer or None)
        else:
            import matplotlib.pyplot as plt

            # Agg (a test, a script without display) cannot show: the figure is returned, not shown.
            if plt.get_backend().lower() != "agg":
                plt.show()
    return figures


def _bar(x, ys: dict, title: str, xlabel: str, ylabel: str, stacked: bool, kind: str, percent: bool = False):
    if kind == "plotly":
        import plotly.graph_objects as go

        fig = go.Figure([go.Bar(x=list(x), y=list(y), name=name) for name, y in ys.items()])
        fig.update_layout(title=title, barmode="stack" if stacked else "group", xaxis_title=xlabel,
                          yaxis_title=ylabel, yaxis_tickformat=".2%" if percent else None)
        return fig
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    labels = [str(v) for v in x]
    bottom = [0.0] * len(labels)
    width = 0.8 / (1 if stacked else max(1, len(ys)))
    for i, (name, y) in enumerate(ys.items()):
        y = [float(v) for v in y]
        if stacked:
            ax.bar(labels, y, bottom=bottom, label=name)
            bottom = [b + v for b, v in zip(bottom, y)]
        else:
            ax.bar([j + i * width for j in range(len(labels))], y, width=width, label=name)
    if not stacked:
        ax.set_xticks([j + width * (len(ys) - 1) / 2 for j in range(len(labels))], labels)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if len(ys) > 1:
        ax.legend()
    return fig


def _pie(labels, values, title: str, kind: str):
    if kind == "plotly":
        import plotly.graph_objects as go

        fig = go.Figure(go.Pie(labels=list(labels), values=list(values)))
        fig.update_layout(title=title)
        return fig
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.pie([float(v) for v in values], labels=[str(v)[:40] for v in labels], autopct="%1.1f%%")
    ax.set_title(title)
    return fig


def temporal_breakdown(df) -> List[Any]:
    kind = backend()
    if kind == "none":
        return []
    ys = {name: df[f"{name}_pctg"] / 100.0 for name in ("idle_time", "compute_time", "non_compute_time")}
    title = "Temporal breakdown across ranks"
    return _show([_bar(df["rank"], ys, title, "Rank", "Percentage", True, kind, True)], kind)


def comm_comp_overlap(df) -> List[Any]:
    kind = backend()
    if kind == "none":
        return []
    ys = {"comp_comm_overlap_pctg": df["comp_comm_overlap_pctg"]}
    return _show([_bar(df["rank"], ys, "Computation-communication overlap", "Rank", "Overlap (%)", False, kind)], kind)


def kernel_breakdown(type_df, kernel_df, renderer: str = "") -> List[Any]:
    kind = backend()
    if kind == "none":
        return []
    shown = type_df[type_df["percentage"] > 0]
    figures = [_pie(shown["kernel_type"], shown["percentage"], "Kernel Type Percentage Across All Ranks", kind)]
    for kernel_type, of_type in kernel_df.groupby("kernel_type", sort=True):
        for rank, of_rank in of_type.groupby("rank", sort=True):
            figures.append(_pie(of_rank["name"], of_rank["sum (us)"],
                                f'Kernel type "{kernel_type}" - kernel distribution on rank {rank}', kind))
    return _show(figures, kind, renderer)


def user_annotations(df, renderer: str = "") -> List[Any]:
    """HTA's get_gpu_user_annotation_breakdown charts: one pie of the sums per rank."""
    kind = backend()
    if kind == "none":
        return []
    figures = [_pie(of_rank["name"], of_rank["sum (us)"], f"User annotation distribution on rank {rank}", kind)
               for rank, of_rank in df.groupby("rank", sort=True)]
    return _show(figures, kind, renderer)


def idle_time(df, rank: int, pctg: bool) -> List[Any]:
    kind = backend()
    if kind == "none":
        return []
    column = "idle_time_ratio" if pctg else "idle_time"
    streams = sorted(df["stream"].unique())
    ys = {}
    for category, of_cat in df.groupby("idle_category", sort=True):
        by_stream = dict(zip(of_cat["stream"], of_cat[column]))
        ys[category] = [by_stream.get(s, 0.0) for s in streams]
    title = f"Idle time breakdown on rank {rank} per CUDA stream"
    return _show([_bar(streams, ys, title, "Stream", "Percentage" if pctg else "Idle time (us)", True, kind, pctg)],
                 kind)


def launch_stats(df, rank: int, runtime_cutoff: float, launch_delay_cutoff: float) -> List[Any]:
    """HTA's launch charts: GPU against CPU duration per launch, and the outliers past the cutoffs."""
    kind = backend()
    if kind == "none":
        return []
    title = (f"Rank {rank}: GPU vs CPU duration per launch ({int((df['cpu_duration'] > runtime_cutoff).sum())} "
             f"launches over {runtime_cutoff} us, {int((df['launch_delay'] > launch_delay_cutoff).sum())} delayed "
             f"over {launch_delay_cutoff} us)")
    if kind == "plotly":
        import plotly.graph_objects as go

        fig = go.Figure(go.Scatter(x=df["cpu_duration"], y=df["gpu_duration"], mode="markers",
                                   text=df["correlation"]))
        fig.update_layout(title=title, xaxis_title="CPU duration (us)", yaxis_title="GPU duration (us)")
    else:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots()
        ax.scatter(df["cpu_duration"], df["gpu_duration"], s=4)
        ax.set_title(title, fontsize=8)
        ax.set_xlabel("CPU duration (us)")
        ax.set_ylabel("GPU duration (us)")
    return _show([fig], kind)
