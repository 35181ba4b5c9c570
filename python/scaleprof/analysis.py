"""scaleprof.TraceAnalysis: Holistic Trace Analysis' (HTA 0.6.1) TraceAnalysis API, computed by scaleprof's engine.

    from scaleprof import TraceAnalysis

    analyzer = TraceAnalysis(trace_dir="traces/")
    time_df = analyzer.get_temporal_breakdown()
    idle_df, stats_df = analyzer.get_idle_time_breakdown(ranks=[0, 1], show_idle_interval_stats=True)

The methods have HTA's names, arguments and defaults and return pandas DataFrames with HTA's column
names; docs/python.md lists them and docs/differences-from-hta.md where a value differs. Every number
comes from the C++ engine (the same functions `scaleprof trace breakdown|kernels|idle|overlap|launch|...`
run), handed over as one numpy array per column by _scaleprof.trace_report(); this module only renames
columns, picks rows and draws charts. pandas is imported only when a DataFrame is made, so `import
scaleprof` and the recording API work without it (`pip install scaleprof[notebook]` brings it).
"""
from __future__ import annotations

import os
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _charts, _scaleprof
from ._arguments import _check_visualize, _index, _path, _ranks_list
from ._frames import _frame, _pandas, _per_rank, shorten_name

# HTA's default trace folder (hta.configs.default_values.DEFAULT_TRACE_DIR).
DEFAULT_TRACE_DIR = "/tmp/trace"

# HTA's kernel types in its per-kernel table (OTHER, the sync records, is not listed there).
_KERNEL_TYPES = ("COMMUNICATION", "COMPUTATION", "MEMORY")
# The memory launches HTA drops with include_memory_events=False, and their ROCm counterparts.
# The default limit of a full launch queue: None, the level at which the trace's launches start to
# block (analysis::find_queue_limit, docs/cli.md).
_QUEUE_LIMIT = None
_STATS = ("count", "mean", "std", "min", "25%", "50%", "75%", "max")
_MEMORY_LAUNCHES = ("cudaMemcpyAsync", "cudaMemsetAsync", "hipMemcpyAsync", "hipMemsetAsync", "hipMemcpyWithStream")
# HTA's get_gpu_kernel_breakdown default: kernels that make up 80 % of a type's time are listed.
_HTA_DURATION_RATIO = 0.8


class CriticalPathTables(dict):
    """What TraceAnalysis.critical_path_analysis returns: {key: DataFrame}, and the window it was
    asked for (`window`: rank, annotation, instance_id), which overlay_critical_path_analysis takes."""

    window: Tuple[int, str, Any] = (-1, "", None)

    def get_critical_path_breakdown(self):
        """HTA's CPGraph.get_critical_path_breakdown(): the path's edges in order."""
        return self["critical_path_breakdown"]


class TraceAnalysis:
    """The traces of one job: `trace_dir` (a folder, or one trace file) or `trace_files` ({rank: file}
    or [file, ...], relative to `trace_dir` unless absolute), as HTA's TraceAnalysis takes them.

    The traces are read (and checked) once here: a missing folder, an unreadable or corrupt trace is a
    ValueError or ScaleprofError naming the file and the place in it. Each method then runs its analysis
    in the engine; results of the default arguments are kept, so calling a method twice costs nothing.
    `threads` (0: one per core) is how many threads the engine reads and analyses with.
    """

    def __init__(self, trace_files: Optional[Union[Dict[int, str], List[str]]] = None,
                 trace_dir: Union[str, "os.PathLike[str]"] = DEFAULT_TRACE_DIR,
                 include_last_profiler_step: Optional[bool] = False, *, threads: int = 0):
        trace_dir = _path(trace_dir, "trace_dir")
        if include_last_profiler_step is None:
            include_last_profiler_step = False
        if not isinstance(include_last_profiler_step, bool):
            raise ValueError("include_last_profiler_step: expected True or False, got "
                             f"{type(include_last_profiler_step).__name__}")
        self._paths: List[str] = []
        self._rank_files: Optional[Dict[Any, str]] = None
        if trace_files is None:
            if not os.path.exists(trace_dir):
                raise ValueError(f"trace_dir: {trace_dir}: no such file or folder")
            self._paths = [trace_dir]
        elif isinstance(trace_files, dict):
            self._rank_files = {rank: self._joined(trace_dir, f, f"trace_files[{rank!r}]")
                                for rank, f in trace_files.items()}
        elif isinstance(trace_files, (list, tuple)):
            self._paths = [self._joined(trace_dir, f, f"trace_files[{i}]") for i, f in enumerate(trace_files)]
        else:
            raise ValueError(f"trace_files: expected a dict of rank to file or a list of files, got "
                             f"{type(trace_files).__name__}")
        if not self._paths and not self._rank_files:
            raise ValueError("trace_files: no trace file given")
        self._include_last_step = include_last_profiler_step
        self._threads = threads
        self._cache: Dict[Tuple, Dict[str, Any]] = {}
        # Reads every trace once (a corrupt one fails here, as in HTA) and keeps the summary's tables,
        # computed with the defaults of HTA's kernel and launch analyses (duration_ratio 0.8, every
        # launch), so that seed 004's analysis cells all read this one pass instead of reading again.
        summary = self._report("summary", ranks=None, duration_ratio=_HTA_DURATION_RATIO, launch_top=0)
        self.ranks: List[int] = sorted(summary["ranks"])
        self.files: List[str] = list(summary["files"])
        # What the engine noted while reading: rank assignments, rejected events, repaired JSON.
        self.warnings: List[str] = list(summary["warnings"]) + list(summary["notes"])

    @staticmethod
    def _joined(trace_dir: str, f: Any, name: str) -> str:
        f = _path(f, name)
        # HTA's rule (Trace._normalize_trace_filenames): relative to trace_dir unless absolute or under it.
        return f if os.path.isabs(f) or (trace_dir and f.startswith(trace_dir)) else os.path.join(trace_dir, f)

    # -- the engine --------------------------------------------------------------------------------
    def _report(self, report: str, ranks: Optional[Sequence[int]], top: int = 10, duration_ratio: float = 1.0,
                consecutive_kernel_delay: float = 30, sort_by: str = "self_cpu",
                launch_top: Optional[int] = None, max_queue_length: Optional[int] = _QUEUE_LIMIT,
                deepspeed_profile: Any = None, deepspeed_forwards: int = 1, align: bool = True) -> Dict[str, Any]:
        def run():
            # The binding checks every argument (a ValueError naming it) before anything is read.
            return _scaleprof.trace_report(
                report, self._paths, rank_files=self._rank_files, ranks=ranks, top=top,
                duration_ratio=duration_ratio, consecutive_kernel_delay_us=consecutive_kernel_delay,
                include_last_step=self._include_last_step, sort_by=sort_by, threads=self._threads,
                launch_top=launch_top, max_queue_length=max_queue_length, deepspeed_profile=deepspeed_profile,
                deepspeed_forwards=deepspeed_forwards, align=align)

        if deepspeed_profile is not None:
            return run()  # the profile file may change between calls: never cached
        key = (report, tuple(ranks) if ranks is not None else None, top, duration_ratio, consecutive_kernel_delay,
               sort_by, launch_top, max_queue_length, align)
        try:
            hash(key)
        except TypeError:
            return run()  # an argument of the wrong type (a list for a number): the binding says which
        if key not in self._cache:
            self._cache[key] = run()
        return self._cache[key]

    def _summary_tables(self) -> Dict[str, Any]:
        """The tables of the constructor's one pass over every rank."""
        return self._report("summary", ranks=None, duration_ratio=_HTA_DURATION_RATIO, launch_top=0)["tables"]

    def _summary_table(self, key: str) -> Dict[str, Any]:
        return self._summary_tables()[key]

    def _check_ranks(self, ranks: List[int]) -> None:
        missing = [r for r in ranks if r not in self.ranks]
        if missing:
            raise ValueError(f"ranks: {missing} not among the ranks read ({self.ranks})")

    # -- HTA's analyses ----------------------------------------------------------------------------
    def get_temporal_breakdown(self, visualize: Optional[bool] = None):
        """Idle, compute and non-compute GPU time per rank (HTA's columns; times in us)."""
        visualize = _check_visualize(visualize)
        table, rows = _per_rank(self._summary_table("breakdown"))
        df = _frame(table, {
            "rank": "rank", "idle_us": "idle_time(us)", "compute_us": "compute_time(us)",
            "non_compute_us": "non_compute_time(us)", "kernel_us": "kernel_time(us)", "idle_pct": "idle_time_pctg",
            "compute_pct": "compute_time_pctg", "non_compute_pct": "non_compute_time_pctg"}, rows)
        if visualize:
            _charts.temporal_breakdown(df)
        return df

    def get_comm_comp_overlap(self, visualize: Optional[bool] = None):
        """Share of communication time overlapped by computation, per rank (NaN: no communication)."""
        visualize = _check_visualize(visualize)
        table, rows = _per_rank(self._summary_table("overlap"))
        df = _frame(table, {"rank": "rank", "comm_comp_overlap_pct": "comp_comm_overlap_pctg"}, rows)
        if visualize:
            _charts.comm_comp_overlap(df)
        return df

    def get_gpu_kernel_breakdown(self, visualize: Optional[bool] = None, duration_ratio: float = 0.8,
                                 num_kernels: int = 10, include_memory_kernels: bool = True,
                                 image_renderer: str = ""):
        """(time by kernel type across ranks, per rank and type the longest kernels and "others")."""
        visualize = _check_visualize(visualize)
        if not isinstance(include_memory_kernels, bool):
            raise ValueError("include_memory_kernels: expected True or False, got "
                             f"{type(include_memory_kernels).__name__}")
        if not isinstance(image_renderer, str):
            raise ValueError(f"image_renderer: expected a str, got {type(image_renderer).__name__}")
        if isinstance(num_kernels, bool) or not isinstance(num_kernels, int) or num_kernels < 1:
            raise ValueError(f"num_kernels: expected an integer of at least 1, got {num_kernels!r}")
        if num_kernels == 10 and duration_ratio == _HTA_DURATION_RATIO:  # HTA's defaults: the constructor's pass
            tables = self._summary_tables()
        else:
            tables = self._report("kernels", ranks=None, top=num_kernels, duration_ratio=duration_ratio)["tables"]
        import numpy as np

        types = tables["kernel_types"]
        type_df = _frame(types, {"kernel_type": "kernel_type", "time_us": "sum", "pct": "percentage"})
        type_df = type_df.sort_values(by="sum", ascending=False, ignore_index=True, kind="stable")
        kernels = tables["kernels"]
        wanted = _KERNEL_TYPES if include_memory_kernels else _KERNEL_TYPES[:2]
        rows = np.isin(np.asarray(kernels["kernel_type"], dtype=object), wanted)
        kernel_df = _frame(kernels, {"name": "name", "sum_us": "sum (us)", "max_us": "max (us)", "min_us": "min (us)",
                                     "std_us": "stddev", "mean_us": "mean (us)", "kernel_type": "kernel_type",
                                     "rank": "rank"}, rows)
        kernel_df = kernel_df.sort_values(by=["kernel_type", "name", "rank"], ignore_index=True, kind="stable")
        if visualize:
            _charts.kernel_breakdown(type_df, kernel_df, image_renderer)
        return type_df, kernel_df

    def get_idle_time_breakdown(self, ranks: Optional[List[int]] = None, streams: Optional[List[int]] = None,
                                visualize: Optional[bool] = None, visualize_pctg: bool = True,
                                show_idle_interval_stats: bool = False, consecutive_kernel_delay: float = 30):
        """(idle time per rank, stream and cause in us, the gap statistics per cause or None).

        `consecutive_kernel_delay` is in microseconds, as in HTA (default 30)."""
        visualize = _check_visualize(visualize)
        for name, value in (("visualize_pctg", visualize_pctg), ("show_idle_interval_stats", show_idle_interval_stats)):
            if not isinstance(value, bool):
                raise ValueError(f"{name}: expected True or False, got {type(value).__name__}")
        ranks = _ranks_list(ranks)
        stream_list = _ranks_list(streams, "streams", empty=[]) or None  # None or []: every stream
        self._check_ranks(ranks)
        if consecutive_kernel_delay == 30:
            tables = self._summary_tables()
        else:
            tables = self._report("idle", ranks=None, consecutive_kernel_delay=consecutive_kernel_delay)["tables"]
        import numpy as np

        idle, gaps = tables["idle"], tables["idle_gaps"]
        category = np.asarray(idle["category"], dtype=object)
        # HTA lists a cause only where some gap has it, and always "other" (its first kernel's gap,
        # which is not a gap, falls there).
        rows = np.isin(idle["rank"], ranks) & ((idle["gaps"] > 0) | (category == "other"))
        if stream_list is not None:
            rows &= np.isin(idle["stream"], stream_list)
        idle_df = _frame(idle, {"rank": "rank", "stream": "stream", "category": "idle_category", "idle_us": "idle_time",
                                "idle_pct": "idle_time_ratio"}, rows)
        idle_df["idle_time_ratio"] = idle_df["idle_time_ratio"] / 100.0
        stats_df = None
        if show_idle_interval_stats:
            stats_df = _frame(gaps, {"category": "idle_category", "rank": "rank", "stream": "stream", "count": "count",
                                     "mean_us": "mean", "std_us": "std", "min_us": "min", "p25_us": "25%",
                                     "p50_us": "50%", "p75_us": "75%", "max_us": "max"}, rows)
            stats_df["count"] = stats_df["count"].astype(float)
            stats_df = stats_df.set_index("idle_category")
        if visualize:
            for r in ranks:
                _charts.idle_time(idle_df[idle_df["rank"] == r], r, visualize_pctg)
        return idle_df, stats_df

    def get_cuda_kernel_launch_stats(self, ranks: Optional[List[int]] = None, runtime_cutoff: int = 50,
                                     launch_delay_cutoff: int = 100, include_memory_events: bool = True,
                                     visualize: Optional[bool] = None):
        """{rank: DataFrame of correlation, cpu_duration, gpu_duration, launch_delay (us), one row per launch}."""
        visualize = _check_visualize(visualize)
        if not isinstance(include_memory_events, bool):
            raise ValueError("include_memory_events: expected True or False, got "
                             f"{type(include_memory_events).__name__}")
        for name, value in (("runtime_cutoff", runtime_cutoff), ("launch_delay_cutoff", launch_delay_cutoff)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{name}: expected a number of microseconds >= 0, got {value!r}")
        ranks = _ranks_list(ranks)
        self._check_ranks(ranks)
        table = self._summary_table("launch_delays")  # every launch of every rank, from the one pass
        import numpy as np

        launch = np.asarray(table["launch"], dtype=object)
        keep = np.ones(len(launch), dtype=bool) if include_memory_events else ~np.isin(launch, _MEMORY_LAUNCHES)
        out = {}
        for r in ranks:
            df = _frame(table, {"correlation": "correlation", "cpu_duration_us": "cpu_duration",
                                "gpu_duration_us": "gpu_duration", "launch_delay_us": "launch_delay"},
                        keep & (table["rank"] == r))
            out[r] = df.sort_values(by="correlation", ignore_index=True, kind="stable")
            if visualize:
                _charts.launch_stats(out[r], r, runtime_cutoff, launch_delay_cutoff)
        return out

    def get_profiler_steps(self) -> List[int]:
        """The ProfilerStep numbers of the traces, sorted. As in HTA, each rank's last step is left out
        (the profiler often stops inside it) unless include_last_profiler_step was True."""
        table = self._summary_table("steps")
        last: Dict[int, int] = {}
        for rank, step in zip(table["rank"], table["step"]):
            last[int(rank)] = max(last.get(int(rank), int(step)), int(step))
        return sorted({int(step) for rank, step in zip(table["rank"], table["step"])
                       if self._include_last_step or int(step) != last[int(rank)]})

    # -- counters (issue 23): HTA's TraceCounters -----------------------------------------------
    def _counters(self, ranks: Optional[List[int]], key: str, max_queue_length: Optional[int] = _QUEUE_LIMIT):
        ranks = _ranks_list(ranks)
        self._check_ranks(ranks)
        return ranks, self._report("counters", ranks=ranks, max_queue_length=max_queue_length)["tables"][key]

    @staticmethod
    def _described(table: Dict[str, Any], by: str, value: str):
        """HTA's groupby([rank, by]).describe() layout: index (rank, by), columns (value, statistic)."""
        pd = _pandas()
        import numpy as np

        if len(table["rank"]) == 0:
            return None
        index = pd.MultiIndex.from_arrays([np.asarray(table["rank"], dtype=np.int64),
                                           np.asarray(table[by], dtype=object if by == "name" else np.int64)],
                                          names=["rank", by])
        data = {(value, stat): np.asarray(table[f"{value}_{stat}"], dtype=float) for stat in _STATS}
        return pd.DataFrame(data, index=index)

    def get_queue_length_summary(self, ranks: Optional[List[int]] = None):
        """Queue length statistics per rank and stream over its change points, as HTA's (index rank, stream;
        columns (queue_length, count/mean/std/min/25%/50%/75%/max)); None without launches. The statistics
        weighted by time are in get_queue_length_time_weighted_summary()."""
        _, table = self._counters(ranks, "queue_length")
        return self._described(table, "stream", "queue_length")

    def get_queue_length_time_weighted_summary(self, ranks: Optional[List[int]] = None):
        """Per rank and stream: launches, span (us), and the queue length weighted by the time each value
        held (mean, p50, p95, max), with the share of the span the queue was empty (scaleprof's own)."""
        _, table = self._counters(ranks, "queue_length")
        return _frame(table, {"rank": "rank", "stream": "stream", "launches": "launches", "span_us": "span_us",
                              "mean": "mean", "p50": "p50", "p95": "p95", "max": "max", "empty_pct": "empty_pct"})

    def get_queue_length_time_series(self, ranks: Optional[List[int]] = None):
        """{rank: DataFrame of ts, pid, tid, stream, queue_length}, one row per change (HTA's columns; ts in
        the trace's own microseconds)."""
        ranks, _ = self._counters(ranks, "queue_length")
        table = self._report("counters_series", ranks=ranks)["tables"]["queue_length_series"]
        rank = table["rank"]
        out = {}
        for r in ranks:
            df = _frame(table, {"ts": "ts", "pid": "pid", "tid": "tid", "stream": "stream",
                                "queue_length": "queue_length"}, rank == r)
            if len(df):
                out[r] = df
        return out

    def get_time_spent_blocked_on_full_queue(self, queue_length_dict: Optional[Dict[int, Any]] = None,
                                             max_queue_length: Optional[int] = _QUEUE_LIMIT,
                                             ranks: Optional[List[int]] = None):
        """Per rank and stream (every stream, where HTA keeps one per rank): the time the queue was at or above
        max_queue_length (duration_at_max_queue_length, us) and its share of the rank's trace
        (relative_duration_at_max_queue_length), as HTA's columns, plus the launches made while full and
        their host time. Streams never full are left out, as in HTA. `queue_length_dict` (HTA's first
        argument, get_queue_length_time_series()'s result) only picks the ranks; the default limit (None) is
        the level at which the trace's launches start to block (HTA: 1024, never reached; docs/cli.md)."""
        if max_queue_length is not None and (isinstance(max_queue_length, bool) or
                                             not isinstance(max_queue_length, int) or max_queue_length < 1):
            raise ValueError(f"max_queue_length: expected an integer >= 1, got {max_queue_length!r}")
        if ranks is None and queue_length_dict is not None:
            ranks = sorted(queue_length_dict)
        _, table = self._counters(ranks, "queue_full", max_queue_length)
        import numpy as np

        full = np.asarray(table["duration_at_max_queue_length_us"], dtype=float) > 0
        return _frame(table, {"rank": "rank", "stream": "stream",
                              "duration_at_max_queue_length_us": "duration_at_max_queue_length",
                              "relative_duration_at_max_queue_length": "relative_duration_at_max_queue_length",
                              "full_launches": "full_launches", "full_launch_call_us": "full_launch_call_us"},
                      full)

    # The name issue 23 used for it.
    get_time_blocked_on_full_queue = get_time_spent_blocked_on_full_queue

    def get_memory_bw_summary(self, ranks: Optional[List[int]] = None):
        """Memcpy/memset bandwidth statistics (GB/s) per rank and direction over the change points above 0, as
        HTA's (index rank, name; columns (memory_bw_gbps, count/.../max)); None without copies. The
        statistics weighted by time, bytes and busy time are in get_memory_bw_time_weighted_summary()."""
        _, table = self._counters(ranks, "memory_bandwidth")
        return self._described(table, "name", "memory_bw_gbps")

    def get_memory_bw_time_weighted_summary(self, ranks: Optional[List[int]] = None):
        """Per rank and direction: copies, bytes, busy time (us) and the bandwidth weighted by time (mean, p50,
        p95, max GB/s) (scaleprof's own)."""
        _, table = self._counters(ranks, "memory_bandwidth")
        return _frame(table, {"rank": "rank", "name": "name", "copies": "copies", "bytes": "bytes",
                              "busy_us": "busy_us", "mean_gbps": "mean_gbps", "p50_gbps": "p50_gbps",
                              "p95_gbps": "p95_gbps", "max_gbps": "max_gbps"})

    def get_memory_bw_time_series(self, ranks: Optional[List[int]] = None):
        """{rank: DataFrame of ts, pid, name, memory_bw_gbps}, one row per change (HTA's columns; ts in the
        trace's own microseconds)."""
        ranks, _ = self._counters(ranks, "memory_bandwidth")
        table = self._report("counters_series", ranks=ranks)["tables"]["memory_bandwidth_series"]
        rank = table["rank"]
        out = {}
        for r in ranks:
            df = _frame(table, {"ts": "ts", "pid": "pid", "name": "name", "memory_bw_gbps": "memory_bw_gbps"},
                        rank == r)
            if len(df):
                out[r] = df
        return out

    def _inputs(self) -> Dict[str, Any]:
        return dict(paths=self._paths, rank_files=self._rank_files, include_last_step=self._include_last_step,
                    threads=self._threads)

    def get_potential_stragglers(self, profiler_steps: Optional[List[int]] = None, num_candidates: int = 2,
                                 visualize: bool = False, straggler_identification_impl: Any = None) -> List[int]:
        """HTA's potential stragglers (`scaleprof trace potential-stragglers`): the `num_candidates` ranks that
        most often start the dominant communication kernel of a step last, over `profiler_steps` (None: every
        step but the last). HTA's default metric only: `straggler_identification_impl` must be None (a Python
        callable over HTA's DataFrame cannot run on the engine). [] when there is no such kernel (one rank,
        no communication); ValueError when none of `profiler_steps` was profiled."""
        _check_visualize(visualize)
        if straggler_identification_impl is not None:
            raise ValueError("straggler_identification_impl: only HTA's default metric (late start of the "
                             "communication kernels) is computed; leave it None")
        steps = None if profiler_steps is None else _ranks_list(profiler_steps, "profiler_steps", empty=[])
        result = _scaleprof.trace_potential_stragglers(profiler_steps=steps, num_candidates=num_candidates,
                                                       **self._inputs())
        return [int(r) for r in result["stragglers"]]

    def get_frequent_cuda_kernel_sequences(self, operator_name: str, output_dir: Any = None, min_pattern_len: int = 3,
                                           rank: int = 0, top_k: int = 5, visualize: bool = False,
                                           compress_other_kernels: bool = True):
        """HTA's frequent kernel sequences (`scaleprof trace kernel-sequences`): every sequence of device work
        launched under the shallowest calls whose name contains `operator_name` (that launched at least
        `min_pattern_len`) on `rank`, as HTA's DataFrame: `pattern` (the operator then its kernels, joined by
        '|'), `count`, `GPU kernel duration (us)`, `CPU op duration (us)`, by count then pattern. HTA also writes
        the trace with the top_k patterns overlaid into `output_dir`; scaleprof writes no file, so `output_dir`,
        `top_k` and `compress_other_kernels` are accepted and unused (docs/differences-from-hta.md)."""
        _check_visualize(visualize)
        if not isinstance(operator_name, str) or not operator_name:
            raise ValueError("operator_name: must name an operator (a non-empty string)")
        rank = _index(rank, "rank")
        self._check_ranks([rank])
        result = _scaleprof.trace_kernel_sequences(operator_name=operator_name, min_pattern_len=min_pattern_len,
                                                   ranks=[rank], **self._inputs())
        table = result["tables"]["kernel_sequences"]
        return _frame(table, {"pattern": "pattern", "count": "count",
                              "gpu_kernel_duration_us": "GPU kernel duration (us)",
                              "cpu_op_duration_us": "CPU op duration (us)"})

    def get_gpu_kernels_with_user_annotations(self, rank: int, expand_names: bool = True,
                                              shorten_names: bool = True):
        """HTA's device work with its GPU user annotation (`scaleprof trace annotations --kernels`): every kernel,
        copy, set and sync record of `rank` in the analysis window, by start, with the innermost
        gpu_user_annotation span on its track that overlaps it in `user_annotation` ("" when none). Columns as
        HTA's: `name`, `cat`, `pid`, `tid`, `ts`, `dur`, `end` (microseconds, the trace's own clock), `stream`,
        `correlation`, `external_id`, `user_annotation`; with `expand_names`, `s_name`, `s_cat` and
        `s_user_annotation` too (shortened with HTA's shorten_name when `shorten_names`). scaleprof has no symbol
        table, so `name`, `cat` and `user_annotation` hold the text where HTA has symbol ids
        (docs/differences-from-hta.md). None, as HTA, when the rank has no gpu_user_annotation span."""
        rank = _index(rank, "rank")
        self._check_ranks([rank])
        for value, name in ((expand_names, "expand_names"), (shorten_names, "shorten_names")):
            if not isinstance(value, bool):
                raise ValueError(f"{name}: expected True or False, got {type(value).__name__}")
        result = _scaleprof.trace_annotated_kernels(ranks=[rank], **self._inputs())
        counts = result["tables"]["user_annotation_kernel_counts"]
        if len(counts["spans"]) == 0 or int(counts["spans"][0]) == 0:
            warnings.warn(f"Trace for rank {rank} does not contain any GPU user annotations", stacklevel=2)
            return None
        table = result["tables"]["gpu_kernels_with_user_annotations"]
        df = _frame(table, {"name": "name", "cat": "cat", "pid": "pid", "tid": "tid", "ts_us": "ts", "dur_us": "dur",
                            "stream": "stream", "correlation": "correlation", "external_id": "external_id",
                            "user_annotation": "user_annotation"})
        df.insert(df.columns.get_loc("dur") + 1, "end", df["ts"] + df["dur"])
        df["user_annotation"] = [a if isinstance(a, str) else "" for a in table["user_annotation"]]
        for column in ("pid", "tid", "stream", "correlation", "external_id"):
            df[column] = df[column].fillna(-1).astype("int64")
        if expand_names:
            short = shorten_name if shorten_names else (lambda n: n)
            df["s_name"] = df["name"].map(short)
            df["s_cat"] = df["cat"].map(short)
            df["s_user_annotation"] = df["user_annotation"].map(short)
        return df

    def get_gpu_user_annotation_breakdown(self, use_gpu_annotation: bool = True, visualize: Optional[bool] = None,
                                          duration_ratio: float = 0.8, num_kernels: int = 1000,
                                          allowlist_patterns: Optional[List[str]] = None, image_renderer: Any = None):
        """HTA's time per user annotation (`scaleprof trace annotations`): per rank and name, the durations of the
        gpu_user_annotation spans (`use_gpu_annotation=False`: of the host's user_annotation spans, record_function
        and ProfilerStep#N, nested ones each counted) in the analysis window, as HTA's DataFrame: `name`,
        `sum (us)`, `max (us)`, `min (us)`, `stddev`, `mean (us)`, `rank`, by rank then name. With more than
        `num_kernels` names a rank's names past the `duration_ratio` quantile of the running sums, or past
        position `num_kernels`, are folded into "others" unless they contain one of `allowlist_patterns` (HTA's
        rule; the statistics stay those of the spans, docs/differences-from-hta.md). None, as HTA, when no rank
        has such spans. `visualize` draws HTA's pies of the sums per rank."""
        show = _check_visualize(visualize)
        if not isinstance(use_gpu_annotation, bool):
            raise ValueError(f"use_gpu_annotation: expected True or False, got {type(use_gpu_annotation).__name__}")
        if isinstance(allowlist_patterns, str):
            raise ValueError("allowlist_patterns: expected a list of str, got str")
        result = _scaleprof.trace_annotation_breakdown(use_gpu_annotation=use_gpu_annotation,
                                                       duration_ratio=duration_ratio, num_kernels=num_kernels,
                                                       allowlist_patterns=allowlist_patterns, **self._inputs())
        if not result["present"]:
            kind = "gpu_user_annotation" if use_gpu_annotation else "user_annotation"
            warnings.warn(f"Trace does not contain any {kind}", stacklevel=2)
            return None
        table = result["tables"]["user_annotation_breakdown"]
        df = _frame(table, {"name": "name", "sum_us": "sum (us)", "max_us": "max (us)", "min_us": "min (us)",
                            "stddev_us": "stddev", "mean_us": "mean (us)", "rank": "rank"})
        df["rank"] = df["rank"].astype("int64")
        if show:
            _charts.user_annotations(df, image_renderer or "")
        return df

    def get_cupti_counter_data_with_operators(self, ranks: Optional[List[int]] = None):
        """HTA's CUPTI counters per kernel (`scaleprof trace cupti-counters`): for each rank of `ranks` (None or []:
        [0], as HTA) a DataFrame with one row per cuda_profiler_range event (a kernel measured in CUPTI profiler
        mode), by start: `name`, `cat`, `pid`, `tid`, `ts`, `dur` (microseconds), `op_stack` (the cpu_op calls
        holding its launch, outermost first, as a list), `top_level_op`, `bottom_level_op` ("" when none), then
        one column per counter. The range events are paired with the cudaLaunchKernel calls in start order; a
        rank where their numbers differ is left out with a warning, as HTA leaves it out. [] when no rank
        has such events."""
        wanted = _ranks_list(ranks)
        self._check_ranks(wanted)
        result = _scaleprof.trace_cupti_counters(ranks=wanted, **self._inputs())
        for rank, why in sorted(result["errors"].items()):
            warnings.warn(f"rank {rank}: {why}", stacklevel=2)
        tables = result["tables"]
        summary = tables["cupti_ranks"]
        if all(int(n) == 0 for n in summary["ranges"]):
            warnings.warn("Could not find events of 'cuda_profiler_range' category", stacklevel=2)
            return []
        pd = _pandas()
        kernels, values, stacks = tables["cupti_counters"], tables["cupti_counter_values"], tables["cupti_op_stacks"]
        out = []
        for position, rank in enumerate(summary["rank"]):
            rank = int(rank)
            if int(summary["kernels"][position]) == 0:
                continue
            of_rank = [i for i, r in enumerate(kernels["rank"]) if int(r) == rank]
            df = pd.DataFrame({"name": [kernels["name"][i] for i in of_rank]})
            df["cat"] = "cuda_profiler_range"
            for column in ("pid", "tid"):
                df[column] = [kernels[column][i] for i in of_rank]
                df[column] = df[column].fillna(-1).astype("int64")
            df["ts"] = [float(kernels["ts_us"][i]) for i in of_rank]
            df["dur"] = [float(kernels["dur_us"][i]) for i in of_rank]
            stack = [[] for _ in of_rank]
            for r, k, op in zip(stacks["rank"], stacks["kernel"], stacks["op"]):
                if int(r) == rank:
                    stack[int(k)].append(op)  # rows come by kernel, then depth
            df["op_stack"] = stack
            df["top_level_op"] = [kernels["top_level_op"][i] for i in of_rank]
            df["bottom_level_op"] = [kernels["bottom_level_op"][i] for i in of_rank]
            counters: Dict[str, List[Any]] = {}
            for r, k, name, value in zip(values["rank"], values["kernel"], values["counter"], values["value"]):
                if int(r) == rank:
                    counters.setdefault(name, [None] * len(of_rank))[int(k)] = value
            for name, column in counters.items():
                series = pd.to_numeric(pd.Series(column, dtype=object), errors="coerce")
                df[name] = series.astype("int64") if series.notna().all() and (series % 1 == 0).all() else series
            out.append(df)
        return out

    # -- scaleprof's own ---------------------------------------------------------------------------
    def get_report(self, report: str, ranks: Optional[List[int]] = None, top: int = 10,
                   sort_by: str = "self_cpu", *, align: bool = True) -> Dict[str, Any]:
        """Every table of `scaleprof trace REPORT` (summary, breakdown, kernels, idle, overlap, launch, ops,
        steps, collectives, stragglers, phases, decompose, memory, critical-path, counters, flops, fsdp,
        pipeline) as
        {key: DataFrame}, with the CLI's JSON keys as column names (docs/trace-json.md). `ranks`: None for all.
        `align` False: collectives and stragglers on each host's raw clock (`--no-align`)."""
        tables = self._report(report, ranks=None if ranks is None else _ranks_list(ranks), top=top,
                              sort_by=sort_by, align=align)["tables"]
        return {key: _frame(cols, {c: c for c in cols}) for key, cols in tables.items()}

    def get_operator_table(self, ranks: Optional[List[int]] = None, sort_by: str = "self_cpu", top: int = 10):
        """The operator table per rank (`scaleprof trace ops`): the `top` operators by `sort_by`."""
        return self.get_report("ops", ranks=ranks, top=top, sort_by=sort_by)["operators"]

    def get_collectives(self, *, align: bool = True) -> Dict[str, Any]:
        """Collectives matched across ranks, their waits and bandwidth (`scaleprof trace collectives`), with
        how each group was matched (`collective_matching`) and the hosts' clock offsets (`clocks`). `align`
        False: every host on its raw clock (`--no-align`), the offsets still estimated."""
        return self.get_report("collectives", align=align)

    def get_stragglers(self, *, align: bool = True) -> Dict[str, Any]:
        """Which ranks arrive last at the collectives and what it costs (`scaleprof trace stragglers`);
        `align` as in get_collectives."""
        return self.get_report("stragglers", align=align)

    def get_step_times(self) -> Dict[str, Any]:
        """ProfilerStep durations per rank and their spread (`scaleprof trace steps`)."""
        return self.get_report("steps")

    def get_flops(self, ranks: Optional[List[int]] = None, top: int = 10, deepspeed_profile: Any = None,
                  deepspeed_forwards: int = 1) -> Dict[str, Any]:
        """FLOPs from recorded shapes, TFLOP/s and MFU per rank, step, operator and kernel
        (`scaleprof trace flops`, docs/flops.md; the trace's device sets the peak).

        `deepspeed_profile`: the file DeepSpeed's flops profiler wrote (`print_model_profile(output_file=...)`,
        e.g. profiler_ds.txt), shown beside the trace's forward FLOPs per forward pass: two more tables,
        `deepspeed_flops` (per rank) and `deepspeed_modules` (per rank and DeepSpeed module), as
        `--deepspeed-profile` adds them; `deepspeed_forwards`: the forward passes the profile covers (the
        DeepSpeed engine profiles one). ScaleprofError, naming the file and line, for a file that is not one."""
        if deepspeed_profile is None:
            return self.get_report("flops", ranks=ranks, top=top)
        tables = self._report("flops", ranks=None if ranks is None else _ranks_list(ranks), top=top,
                              deepspeed_profile=deepspeed_profile, deepspeed_forwards=deepspeed_forwards)["tables"]
        return {key: _frame(cols, {c: c for c in cols}) for key, cols in tables.items()}

    def get_phases(self) -> Dict[str, Any]:
        """Forward, backward, optimizer and data loading per step (`scaleprof trace phases`)."""
        return self.get_report("phases")

    def get_exposed_collectives(self, ranks: Optional[List[int]] = None, top: int = 10) -> Dict[str, Any]:
        """Exposed all-gather, reduce-scatter and all-reduce time per rank, process group, phase and FSDP
        layer or DeepSpeed ZeRO-3 module (`scaleprof trace fsdp`, docs/fsdp.md): tables `fsdp` (per group x phase x collective),
        `fsdp_layers` (the `top` most exposed per rank; 0: all) and `fsdp_ranks`."""
        return self.get_report("fsdp", ranks=ranks, top=top)
    def get_pipeline(self) -> Dict[str, Any]:
        """Pipeline-parallel bubbles (`scaleprof trace pipeline`, docs/pipeline.md): the stages found from
        the ranks' send/recv, the micro-batches per step, and each stage's bubble per step beside the ideal
        (p-1)/(m+p-1); tables pipelines, stages, steps and notes."""
        return self.get_report("pipeline")

    def what_if(self, *changes: str, per_step: bool = False) -> Any:
        """The what-if model (`scaleprof trace what-if`, docs/report.md): every rank's profiled steps
        re-timed under each change, e.g. `what_if("rank 1 at median", "communication free")`, as a
        DataFrame with one row per change: the mean step measured and predicted, the gain, the fastest and
        slowest predicted step; with per_step=True one row per change and profiled step instead (the mean
        over ranks, measured and predicted). Changes: 'rank N at median', 'stragglers at median',
        'communication free', 'communication 2x faster', 'all-to-all balanced' (each all-to-all whose split
        sizes are in the trace with its bytes spread evenly over its pairs of ranks), computation, data
        loading, optimizer, host overhead, idle followed by '2x faster' or 'free', or the name of an
        operator, annotation or kernel (any whose name contains it) followed by '2x faster' or 'free'.
        ValueError for a change not understood; ScaleprofError for one with nothing to change (a name that
        ran nowhere, 'all-to-all balanced' without an all-to-all whose splits are in the trace)."""
        if not changes or not all(isinstance(c, str) for c in changes):
            raise ValueError("what_if: give one or more changes as text, e.g. 'rank 1 at median'")
        paths = list(self._paths) + [f for _, f in sorted((self._rank_files or {}).items())]
        tables = _scaleprof.trace_what_if(paths, list(changes), threads=self._threads)["tables"]
        cols = tables["what_if_steps" if per_step else "what_if"]
        return _frame(cols, {c: c for c in cols})

    def critical_path_analysis(self, rank: int = 0, annotation: str = "ProfilerStep", instance_id=None,
                               top: int = 10) -> Dict[str, Any]:
        """HTA's name for the critical path (`scaleprof trace critical-path`, docs/critical-path.md): the
        path of `rank` in each window, as {key: DataFrame}: `critical_path` (its time by category, adding
        up to the window, and by HTA's bound_by), `critical_path_top` (its `top` longest items),
        `critical_path_breakdown` (every edge in order with HTA's columns: s_name, duration (HTA's weight),
        type, cat, stream, bound_by; and the real times: offset_us, duration_us) and `cross_rank_path` (at
        the matched collectives, the rank that arrived last). Windows as HTA's: `annotation`
        "ProfilerStep" (each step, or step number `instance_id`), any other text (the host annotations
        and operators whose name contains it: every instance, or the `instance_id`-th from 0), "" (the
        whole trace); `instance_id` may be a (first, last) pair, taken as one window. HTA returns its
        graph instead; pass this result to overlay_critical_path_analysis."""
        if not isinstance(annotation, str):
            raise ValueError(f"annotation: expected text, got {type(annotation).__name__}")
        rank = _index(rank, "rank")  # numpy and torch integers as the other methods take them
        self._check_ranks([rank])
        if isinstance(instance_id, tuple):
            if len(instance_id) != 2:
                raise ValueError("instance_id: a tuple is (first, last)")
            instance_id = (_index(instance_id[0], "instance_id"), _index(instance_id[1], "instance_id"))
        elif instance_id is not None:
            instance_id = _index(instance_id, "instance_id (a ProfilerStep number or None)")
        annotation = "ProfilerStep" if annotation == "ProfilerStep#" else annotation
        tables = self._path_report(rank, annotation, instance_id, top)
        out = CriticalPathTables()
        for key, cols in tables.items():
            df = _frame(cols, {c: c for c in cols})
            if "rank" in df.columns and key != "cross_rank_path":
                df = df[df["rank"] == rank].reset_index(drop=True)
            out["critical_path_breakdown" if key == "critical_path_events" else key] = df
        out.window = (rank, annotation, instance_id)
        return out

    def _path_report(self, rank: int, annotation: str, instance_id: Any, top: int,
                     output_dir: Any = None) -> Dict[str, Any]:
        result = _scaleprof.trace_report(
            "critical-path", self._paths, rank_files=self._rank_files, ranks=None, top=top,
            include_last_step=self._include_last_step, threads=self._threads, annotation=annotation,
            instance_id=instance_id, path_events=True, output_dir=output_dir)
        if output_dir is not None:
            return result
        return result["tables"]

    def overlay_critical_path_analysis(self, rank: int, critical_path_graph: Any, output_dir: Any,
                                       only_show_critical_events: bool = False, show_all_edges: bool = False) -> str:
        """HTA's overlay: `rank`'s trace with the critical path of `critical_path_graph` (what
        critical_path_analysis returned for that rank) drawn on it, written to
        `output_dir`/overlaid_critical_path_<file> (`scaleprof trace critical-path --overlay`): the path's
        events marked args.critical = 1, its dependency, launch and sync edges as flows, and a track of its
        own with one slice per edge. Returns the file's path. Every event of the input is kept
        (only_show_critical_events and show_all_edges are HTA's and not supported: ValueError)."""
        if only_show_critical_events or show_all_edges:
            raise ValueError("only_show_critical_events and show_all_edges are not supported: the overlay keeps "
                             "every event and draws the path's edges")
        rank = _index(rank, "rank")
        window = getattr(critical_path_graph, "window", None)
        if window is None or window[0] != rank:
            raise ValueError("critical_path_graph: pass what critical_path_analysis(rank=...) returned for this rank")
        _, annotation, instance_id = window
        result = self._path_report(rank, annotation, instance_id, 10, output_dir=_path(output_dir, "output_dir"))
        ours = [f for f in result["overlays"] if f]
        files = [f for r, f in zip(result["ranks"], result["files"]) if r == rank]
        for written in ours:
            name = os.path.basename(written)
            if any(name.endswith(os.path.basename(f).removesuffix(".gz")) for f in files):
                return written
        raise ValueError(f"rank {rank}: no window of the critical path, so no overlay was written")

    def get_memory_timeline(self, ranks: Optional[List[int]] = None, top: int = 10) -> Dict[str, Any]:
        """Memory from the traces' [memory] events (`scaleprof trace memory`, issue 23; the name of HTA's
        PR #223): per rank and device the peaks, bytes allocated before profiling, the peak per step, the
        `top` operators holding the peak, and allocated/reserved over time (the `memory_timeline` key)."""
        return self.get_report("memory", ranks=ranks, top=top)
