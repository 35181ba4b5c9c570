"""Issue 18, finding 6: every argument of the Python API is checked before anything starts. A value
of the wrong type is a TypeError, a bad value a ValueError, each naming the argument and the value
(never pybind11's cast dump); a record's arguments are checked before the block runs, so the work
is never done twice nor the epoch left open, and the training goes on recording afterwards."""
import os
import pathlib

import numpy as np
import pytest

import scaleprof


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for k in list(os.environ):
        if k.startswith(("SCALEPROF_", "TORCHELASTIC", "SLURM_", "OMPI_", "PMI_", "HOROVOD_", "CUDA_")) or k in (
                "RANK", "WORLD_SIZE", "LOCAL_RANK"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("SCALEPROF_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    monkeypatch.setenv("SCALEPROF_ROCM_SMI_LIBRARY", "/nonexistent/librocm_smi64.so")


def _no_cast_dump(err):
    text = str(err.value)
    assert "incompatible function arguments" not in text and "Unable to cast" not in text, text


# -- Run(...) ---------------------------------------------------------------------------------------
BAD_RUN_ARGUMENTS = [
    # (keyword arguments, exception, the message must match)
    ({"experiment": 123}, TypeError, r"^experiment must be a str, not int \(123\)$"),
    ({"strategy": b"ddp"}, TypeError, r"^strategy must be a str, not bytes \(b'ddp'\)$"),
    ({"run_name": 1.5}, TypeError, r"^run_name must be a str, not float \(1\.5\)$"),
    ({"root": 7}, TypeError, r"^root must be a str or os\.PathLike, not int \(7\)$"),
    ({"gpu_monitor": ["rank"]}, TypeError, r"^gpu_monitor must be a str, not list"),
    ({"experiment": ""}, ValueError, r"^experiment is empty: give a value or leave it out \(None\)"),
    ({"run_name": ""}, ValueError, r"^run_name is empty"),
    ({"strategy": ""}, ValueError, r"^strategy is empty"),
    ({"root": ""}, ValueError, r"^root is empty"),
    ({"root": pathlib.Path("a\0b")}, ValueError, r"^root contains a NUL byte$"),
    ({"experiment": "a\0b"}, ValueError, r"^experiment contains a NUL byte$"),
    ({"experiment": "caf\udce9"}, ValueError, r"^experiment 'caf\\udce9' is not valid text"),
    ({"gpu_monitor": "gpu"}, ValueError, r"^GPU monitor mode 'gpu' is not rank, node or off$"),
    ({"rank": 2**70}, ValueError, r"^rank 1180591620717411303424 is out of range \(at most 9223372036854775807\)$"),
    ({"rank": 2**63}, ValueError, r"^rank 9223372036854775808 is out of range"),
    ({"world_size": -2**70}, ValueError, r"^world_size -1180591620717411303424 is out of range"),
    ({"rank": 1.0}, TypeError, r"^rank must be an integer, not float \(1\.0\)$"),
    ({"rank": "0"}, TypeError, r"^rank must be an integer, not str \('0'\)$"),
    ({"rank": True}, TypeError, r"^rank must be an integer, not bool \(True\)$"),
    ({"local_rank": None, "world_size": 2.5}, TypeError, r"^world_size must be an integer, not float"),
    ({"rank": -1}, ValueError, r"^rank -1 is negative$"),
    ({"local_rank": -4}, ValueError, r"^local rank -4 is negative$"),
    ({"world_size": 0}, ValueError, r"^world size 0 is not positive$"),
    ({"rank": 3, "world_size": 2}, ValueError, r"^rank 3 is not below the world size 2$"),
    ({"gpu_interval": "fast"}, ValueError, r"^gpu_interval: 'fast' is not an interval like 1s, 500ms or 0\.1$"),
    ({"gpu_interval": "1ms"}, ValueError, r"^gpu_interval: interval '1ms' is below the minimum of 10ms$"),
    ({"gpu_interval": -1}, ValueError, r"^gpu_interval: '-1' is not an interval"),
    ({"gpu_interval": float("nan")}, ValueError, r"^gpu_interval: 'nan' is not an interval"),
    ({"gpu_interval": True}, TypeError, r"^gpu_interval must be a str like '1s' or a number of seconds, not bool"),
    ({"gpu_interval": ""}, ValueError, r"^gpu_interval is empty"),
    ({"gpu_interval": 10**400}, ValueError, r"^gpu_interval 1000000000000000000000000000000000000000000000000"),
    ({"gpu_interval": 10**6}, ValueError, r"^gpu_interval: '1000000' is not an interval"),
]


@pytest.mark.parametrize("kwargs,exc,message", BAD_RUN_ARGUMENTS, ids=[repr(a[0]) for a in BAD_RUN_ARGUMENTS])
def test_a_bad_run_argument_raises_before_anything_is_created(tmp_path, kwargs, exc, message):
    kwargs.setdefault("root", str(tmp_path / "root"))
    with pytest.raises(exc, match=message) as err:
        scaleprof.Run(**kwargs)
    _no_cast_dump(err)
    assert not (tmp_path / "root").exists()
    assert scaleprof.current_run() is None


class _BadRepr:
    def __repr__(self):
        raise RuntimeError("no repr")


def test_a_value_whose_repr_raises_still_gets_the_message(tmp_path):
    with pytest.raises(TypeError, match=r"^rank must be an integer, not _BadRepr \(<_BadRepr object>\)$"):
        scaleprof.Run(rank=_BadRepr(), root=str(tmp_path))
    with pytest.raises(TypeError, match=r"^samples must be an integer, not _BadRepr"):
        with scaleprof.Run(run_name="r", root=str(tmp_path)) as run:
            with run.epoch(0, samples=_BadRepr()):
                pass


def test_an_empty_root_does_not_record_into_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="^root is empty"):
        scaleprof.Run(root="", run_name="r")
    assert list(tmp_path.iterdir()) == []


def test_a_bad_environment_interval_is_a_value_error_naming_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("SCALEPROF_GPU_INTERVAL", "often")
    with pytest.raises(ValueError, match="^SCALEPROF_GPU_INTERVAL: 'often' is not an interval"):
        scaleprof.Run(root=str(tmp_path))


def test_good_arguments_of_other_integer_and_path_types_are_taken(tmp_path):
    with scaleprof.Run(experiment="types", run_name="r", root=tmp_path, rank=np.int64(0), world_size=np.int32(1),
                       gpu_interval=np.int64(2)) as run:
        with run.epoch(np.int64(0), samples=np.uint16(64)):
            with run.step(np.int8(0), samples=64):
                pass
    (rank,) = scaleprof.read_run(run.run_dir)["ranks"]
    assert rank["epochs"][0]["epoch"] == 0 and rank["epochs"][0]["samples"] == 64
    assert rank["steps"][0]["samples"] == 64
    assert run.run_dir == str(tmp_path / "types" / "r")


# -- run.epoch(...) and run.step(...) ---------------------------------------------------------------
BAD_RECORD_ARGUMENTS = [
    # (index, samples, exception, message)
    (0, "50k", TypeError, r"^samples must be an integer, not str \('50k'\)$"),
    (0, 2**63, ValueError, r"^samples 9223372036854775808 is out of range \(at most 9223372036854775807\)$"),
    (0, 10**30, ValueError, r"^samples 1000000000000000000000000000000 is out of range"),
    (0, -5, ValueError, r"^samples -5 is negative$"),
    (0, 64.0, TypeError, r"^samples must be an integer, not float \(64\.0\)$"),
    (0, True, TypeError, r"^samples must be an integer, not bool"),
    (1.7, None, TypeError, r"^{what} must be an integer, not float \(1\.7\)$"),
    ("1", None, TypeError, r"^{what} must be an integer, not str \('1'\)$"),
    (-1, None, ValueError, r"^{what} -1 is negative$"),
    (2**64, None, ValueError, r"^{what} 18446744073709551616 is out of range"),
]


@pytest.mark.parametrize("what", ["epoch", "step"])
@pytest.mark.parametrize("index,samples,exc,message", BAD_RECORD_ARGUMENTS,
                         ids=[f"{a[0]!r}-{a[1]!r}" for a in BAD_RECORD_ARGUMENTS])
def test_a_bad_record_argument_raises_before_the_block_and_training_goes_on(tmp_path, what, index, samples, exc,
                                                                            message):
    body_ran = []
    with scaleprof.Run(experiment="rec", run_name="r", root=str(tmp_path)) as run:
        with run.epoch(0, samples=8):
            pass
        record = run.epoch if what == "epoch" else run.step
        with pytest.raises(exc, match=message.format(what=what)) as err:
            with record(index, samples=samples):
                body_ran.append(True)  # the epoch's work must not run and then be lost
        _no_cast_dump(err)
        assert body_ran == []
        # Nothing was left open: later epochs and steps record as usual.
        for e in (1, 2):
            with run.epoch(e, samples=16):
                with run.step(samples=4):
                    pass
    data = scaleprof.read_run(run.run_dir)
    assert data["status"] == "completed" and data["warnings"] == []
    (rank,) = data["ranks"]
    assert [(e["epoch"], e["samples"]) for e in rank["epochs"]] == [(0, 8), (1, 16), (2, 16)]
    assert [(s["epoch"], s["step"], s["samples"]) for s in rank["steps"]] == [(1, 0, 4), (2, 0, 4)]


def test_record_arguments_are_checked_even_when_the_rank_records_nothing(tmp_path):
    # world_size 2 without torch.distributed: the run name cannot be agreed, records are unrecorded,
    # and a bad argument is still an error at the call (a programming error, found on any machine).
    with scaleprof.Run(experiment="late", root=str(tmp_path), rank=0, world_size=2) as run:
        with pytest.raises(ValueError, match="^samples -5 is negative$"):
            with run.epoch(0, samples=-5):
                pass
        with run.epoch(0, samples=5):
            pass
    assert run.unrecorded == 1


def test_an_epoch_whose_body_raises_leaves_nothing_open(tmp_path):
    with scaleprof.Run(experiment="raise", run_name="r", root=str(tmp_path)) as run:
        for e in range(3):
            try:
                with run.epoch(e, samples=1):
                    with run.step():
                        raise KeyError("data loader hiccup")
            except KeyError:
                pass
        with run.epoch(3, samples=1):
            with run.step():
                pass
    (rank,) = scaleprof.read_run(run.run_dir)["ranks"]
    assert [e["epoch"] for e in rank["epochs"]] == [3]
    assert [(s["epoch"], s["step"]) for s in rank["steps"]] == [(3, 0)]


def test_the_largest_step_number_does_not_wrap(tmp_path):
    with scaleprof.Run(experiment="big", run_name="r", root=str(tmp_path)) as run:
        with run.epoch(0):
            with run.step(2**63 - 1):
                pass
            with run.step():  # the next default index saturates instead of overflowing to a negative one
                pass
    (rank,) = scaleprof.read_run(run.run_dir)["ranks"]
    assert [s["step"] for s in rank["steps"]] == [2**63 - 1, 2**63 - 1]
