"""scaleprof: record how a PyTorch training run scales, from inside the training loop.

    import scaleprof

    with scaleprof.Run(experiment="resnet", strategy="ddp") as run:
        for epoch in range(epochs):
            with run.epoch(epoch, samples=len(dataset)):
                for batch in loader:
                    with run.step(samples=len(batch)):
                        train_step(batch)

Each rank writes only its own folder <root>/<experiment>/<run>/rank-NNNNN/ (epochs.csv, steps.csv,
gpu.csv, traces/), appended record by record, so a crash loses at most the record being written.
The format is documented in docs/run-directory.md. The work is done in C++ (scaleprof._scaleprof);
this module only makes it idiomatic. Errors from the C++ side arrive as ScaleprofError (a
RuntimeError) with the same message and, in `kind`, what went wrong for a program to decide on:
"bad_input", "usage", "not_found", "io", "refused", "too_large", "network", "busy" or "internal"
(the CLI's exit code follows the same kind; docs/cli.md).

Traces are analysed with scaleprof.TraceAnalysis (HTA's API, analysis.py; docs/python.md).
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys
from typing import Any, Callable, Iterator, Optional, Union

from . import _scaleprof
from ._scaleprof import ScaleprofError, read_run, read_runs, scalability_report, write_scalability_report
# HTA's TraceAnalysis on the engine (analysis.py); pandas is imported only when a method makes a DataFrame.
from .analysis import TraceAnalysis
from .trace_diff import TraceDiff

__version__ = _scaleprof.__version__
__all__ = ["Run", "ScaleprofError", "TraceAnalysis", "TraceDiff", "current_run", "recorded", "read_run", "read_runs",
           "scalability_report", "write_scalability_report", "cli_path"]

_current: Optional["Run"] = None  # the innermost active Run of this process, for current_run()


def current_run() -> Optional["Run"]:
    """The Run active in this process (innermost `with scaleprof.Run(...)`), or None."""
    return _current


def cli_path() -> str:
    """Path of the `scaleprof` command installed with this package."""
    exe = os.path.join(os.path.dirname(sys.executable), "scaleprof")
    return exe if os.path.exists(exe) else "scaleprof"


def _usage_error(message: str) -> ScaleprofError:
    """A ScaleprofError of kind "usage": the API called in the wrong order."""
    error = ScaleprofError(message)
    error.kind = "usage"
    return error


def _torch_version() -> str:
    torch = sys.modules.get("torch")
    return getattr(torch, "__version__", "") if torch is not None else ""


def _distributed():
    """torch.distributed when it is initialised, else None (torch is optional for scaleprof)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None
    return dist


class Run:
    """One rank's view of a training run. Use as a context manager (or call start() / finish()).

    Arguments left as None come from the environment: SCALEPROF_* variables (set by `scaleprof run`),
    then torchrun, DeepSpeed, Horovod, Open MPI, PMI or SLURM variables.

    The run name must be the same on every rank. It is taken from `run_name`, SCALEPROF_RUN, the SLURM
    step or torchrun's rendezvous id; otherwise rank 0 generates one and broadcasts it, which needs
    torch.distributed to be initialised: when it is not yet, the rank folder is opened at the first
    epoch(), step() or torch_profiler() call instead.
    """

    def __init__(self, experiment: Optional[str] = None, strategy: Optional[str] = None,
                 run_name: Optional[str] = None, root: Optional[str] = None, *,
                 rank: Optional[int] = None, local_rank: Optional[int] = None,
                 world_size: Optional[int] = None, gpu_interval: Optional[Union[str, float]] = None,
                 gpu_monitor: Optional[str] = None):
        # Every argument is checked here, before anything is created or timed: a value of the wrong
        # type is a TypeError, a bad value a ValueError, each naming the argument (the checks are the
        # C++ library's; the binding converts).
        self._context = _scaleprof.detect_context(
            experiment=experiment, strategy=strategy, run_name=run_name, root=root, rank=rank,
            local_rank=local_rank, world_size=world_size, gpu_monitor=gpu_monitor)
        # "1s", "100ms", or a number of seconds.
        if gpu_interval is not None:
            self._gpu_interval = _scaleprof.check_interval(gpu_interval, "gpu_interval")
        else:
            self._gpu_interval = _scaleprof.check_interval(os.environ.get("SCALEPROF_GPU_INTERVAL") or "1s",
                                                           "SCALEPROF_GPU_INTERVAL")
        # Profiler traces that could not be written (a full disk, a file-size limit); see torch_profiler.
        self.trace_write_errors = 0
        self._recorder: Optional[_scaleprof.RankRecorder] = None
        self._started = False
        self._finished = False
        self._previous: Optional[Run] = None
        # Epochs and steps that could not be recorded because this rank's folder could not be opened
        # at the first record (see _recorder_for_record); training goes on regardless.
        self.unrecorded = 0
        self._unrecorded_reason = ""
        # rank/world_size given here are the caller's word (a test playing several ranks in one process):
        # no process group is looked for. From a launcher's variables, the training must show it.
        self._identity_given = rank is not None or world_size is not None

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> "Run":
        """Joins or creates the run; opens this rank's folder as soon as the run name is agreed."""
        global _current
        if self._started:
            return self
        self._try_open()  # raises on a bad name or an unwritable root, before anything is marked
        self._started = True
        self._previous, _current = _current, self
        return self

    def finish(self, success: bool = True) -> None:
        """Marks this rank completed (or failed) and stops its GPU monitor. Idempotent."""
        global _current
        if self._finished or not self._started:
            return
        self._finished = True
        if _current is self:
            _current = self._previous
        if self._recorder is not None:
            self._note_process_group(self._recorder)
            self._recorder.finish(success)

    def __enter__(self) -> "Run":
        return self.start()

    def __exit__(self, exc_type, exc, tb) -> None:
        ok = exc_type is None or (exc_type is SystemExit and exc.code in (0, None))
        self.finish(ok)

    # -- recording ---------------------------------------------------------------------------------
    @contextlib.contextmanager
    def epoch(self, index: int, samples: Optional[int] = None) -> Iterator[None]:
        """Times one epoch; the line is written when the block ends without an exception.

        `index` and `samples` are checked before the block runs: a non-integer is a TypeError, a
        negative or out-of-range value a ValueError naming the argument."""
        index, samples = _scaleprof.check_record("epoch", index, samples)
        rec = self._recorder_for_record()
        if rec is None:
            yield
            return
        rec.begin_epoch(index, samples)
        ended = False
        try:
            yield
            ended = True
        finally:
            # The epoch is closed on every path, so a later epoch() always works.
            if ended:
                self.last_epoch = rec.end_epoch()
                self._note_process_group(rec)
            else:
                rec.abandon_epoch()  # an epoch that raised is not a finished epoch

    @contextlib.contextmanager
    def step(self, step: Optional[int] = None, samples: Optional[int] = None) -> Iterator[None]:
        """Times one step (numbered from 0 in each epoch unless `step` is given). Arguments are
        checked before the block runs, as for epoch()."""
        step, samples = _scaleprof.check_record("step", step, samples)
        rec = self._recorder_for_record()
        if rec is None:
            yield
            return
        rec.begin_step(step, samples)
        ended = False
        try:
            yield
            ended = True
        finally:
            if ended:
                rec.end_step()
            else:
                rec.abandon_step()

    def torch_profiler(self, skip_first: int = 0, wait: int = 1, warmup: int = 1, active: int = 3,
                       repeat: int = 1, **kwargs: Any):
        """A torch.profiler.profile with this schedule whose traces are written gzip-compressed to
        this rank's traces/ folder (named rank-NNNNN.<host>.<pid>.<time>.pt.trace.json.gz, so
        `scaleprof trace` knows the rank even without distributedInfo). Call .step() on it after
        every training step. Other keyword arguments go to torch.profiler.profile."""
        import torch
        from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

        rec = self._open()
        if "activities" not in kwargs:
            activities = [ProfilerActivity.CPU]
            if torch.cuda.is_available():
                activities.append(ProfilerActivity.CUDA)
            kwargs["activities"] = activities
        worker = f"rank-{self.rank:05d}.{self._context.host}.{os.getpid()}"
        if "on_trace_ready" not in kwargs:
            kwargs["on_trace_ready"] = self._guarded_trace_handler(
                tensorboard_trace_handler(rec.traces_dir, worker_name=worker, use_gzip=True))
        kwargs.setdefault("schedule", schedule(skip_first=skip_first, wait=wait, warmup=warmup,
                                               active=active, repeat=repeat))
        return profile(**kwargs)

    # -- facts -------------------------------------------------------------------------------------
    @property
    def rank(self) -> int:
        return self._context.rank

    @property
    def world_size(self) -> int:
        return self._context.world_size

    @property
    def local_rank(self) -> int:
        return self._context.local_rank

    @property
    def name(self) -> str:
        """The run name ('' until agreed)."""
        return self._context.run

    @property
    def experiment(self) -> str:
        return self._context.experiment

    @property
    def strategy(self) -> str:
        return self._context.strategy

    @property
    def run_dir(self) -> str:
        return self._opened().run_dir

    @property
    def rank_dir(self) -> str:
        return self._opened().rank_dir

    @property
    def traces_dir(self) -> str:
        return self._opened().traces_dir

    @property
    def gpu_note(self) -> str:
        """Why this rank samples no GPU ('' when it does)."""
        return self._opened().gpu_note

    def gpu_summary(self) -> list:
        """Per-device utilization, power and energy so far (empty when this rank samples none)."""
        return self._opened().gpu_summary()

    # -- internals ---------------------------------------------------------------------------------
    def _guarded_trace_handler(self, handler: Callable) -> Callable:
        """The profiler's trace export as a scaleprof write: past a file-size limit (`ulimit -f`) it
        fails with EFBIG instead of ending the process by SIGXFSZ (this thread only; the process's
        own disposition is left as it is), and a trace that cannot be written (full disk, limit, an
        unusable folder; torch raises OSError or wraps it in RuntimeError) is a warning, counted in
        `trace_write_errors`, never an exception in the training's prof.step()."""

        def write_trace(prof) -> None:
            try:
                with _scaleprof.FileSizeSignalBlock():
                    handler(prof)
            except Exception as e:  # noqa: BLE001 - torch wraps OSError (e.g. "Can't create directory")
                self.trace_write_errors += 1
                if self.trace_write_errors == 1:
                    print(f"scaleprof: warning: {self.traces_dir}: cannot write a profiler trace: {e}; training "
                          "continues (reported once, counted in run.trace_write_errors)", file=sys.stderr,
                          flush=True)

        return write_trace

    def _note_process_group(self, rec: "_scaleprof.RankRecorder") -> None:
        """Tells the recorder which process group the training is in now (the largest seen is kept), so
        that a run whose ranks each trained alone is not taken for a multi-rank measurement. Monitoring
        never stops training: whatever the libraries raise here is ignored."""
        if self._identity_given:
            return
        try:
            dist = _distributed()
            if dist is not None:
                rec.note_process_group(int(dist.get_world_size()), "torch.distributed")
                return
            hvd = sys.modules.get("horovod.torch")
            if hvd is not None and hvd.is_initialized():
                rec.note_process_group(int(hvd.size()), "horovod")
                return
            rec.note_process_group(1, "none")
        except Exception:  # noqa: BLE001 - a library's state is a hint; training goes on regardless
            pass

    def _agreed_name(self) -> Optional[str]:
        ctx = self._context
        if ctx.run:
            return ctx.run
        derived = _scaleprof.derived_run_name(ctx)
        if derived:
            return derived
        if ctx.world_size == 1:
            return _scaleprof.generated_run_name(ctx.strategy, 1)
        dist = _distributed()
        if dist is None:
            return None
        name = [_scaleprof.generated_run_name(ctx.strategy, ctx.world_size) if ctx.rank == 0 else None]
        dist.broadcast_object_list(name, src=0)
        return name[0]

    def _try_open(self) -> Optional["_scaleprof.RankRecorder"]:
        if self._recorder is None:
            name = self._agreed_name()
            if name is None:
                return None
            self._context.run = name
            command = [sys.executable, *sys.argv]
            self._recorder = _scaleprof.RankRecorder.open(self._context, _torch_version(), command,
                                                          self._gpu_interval)
        return self._recorder

    def _opened(self) -> "_scaleprof.RankRecorder":
        # Facts stay readable after finish(); recording does not (see _open).
        return self._recorder if self._recorder is not None else self._open()

    def _recorder_for_record(self) -> Optional["_scaleprof.RankRecorder"]:
        """The recorder for epoch() and step(), or None when this rank's folder cannot be opened now
        (the run name is not agreed yet, the root is unwritable or full, the name is taken). Training
        is running by then, and monitoring never stops it: the reason is printed once on stderr, the
        record is counted in `unrecorded`, and the next record tries again."""
        if not self._started or self._finished:
            return self._open()  # a misuse, not a fault of the machine: raised at once, every time
        try:
            rec = self._open()
        except ScaleprofError as e:
            self.unrecorded += 1
            reason = str(e)
            if reason != self._unrecorded_reason:
                self._unrecorded_reason = reason
                print(f"scaleprof: warning: {reason}; training continues unrecorded (reported once, "
                      "retried at the next record)", file=sys.stderr, flush=True)
            return None
        if self._unrecorded_reason:
            print(f"scaleprof: recording works again after {self.unrecorded} unrecorded record(s)",
                  file=sys.stderr, flush=True)
            self._unrecorded_reason = ""
        return rec

    def _open(self) -> "_scaleprof.RankRecorder":
        if not self._started:
            raise _usage_error("the Run has not started: use `with scaleprof.Run(...) as run:` or run.start()")
        if self._finished:
            raise _usage_error("the Run has finished; nothing more can be recorded")
        rec = self._try_open()
        if rec is None:
            raise ScaleprofError(
                f"rank {self.rank} of {self.world_size}: the ranks cannot agree on a run name yet: call "
                "torch.distributed.init_process_group() first, pass run_name=..., or start the job "
                "with `scaleprof run`")
        return rec


def recorded(**run_kwargs: Any) -> Callable:
    """Decorator form: the function runs inside a Run (reach it with scaleprof.current_run()).

        @scaleprof.recorded(experiment="resnet", strategy="ddp")
        def train(model, loader): ...
    """

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with Run(**run_kwargs):
                return fn(*args, **kwargs)

        return wrapper

    return decorate
