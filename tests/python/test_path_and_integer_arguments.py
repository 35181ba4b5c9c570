"""Issue 30, item 6: paths are taken as os.fsencode bytes with NUL refused, at one conversion
(python/path_argument.h) that every binding taking a path uses, and integer arguments as any
__index__ integer at one conversion (_arguments._index). Before: a non-UTF-8 path gave pybind11's raw
"Unable to cast", a NUL in a trace_files path was accepted and the name cut there, and
critical_path_analysis refused the numpy integers the other methods take."""
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import scaleprof
from scaleprof import _scaleprof

pytest.importorskip("pandas")

REPO = Path(__file__).resolve().parents[2]
OWN = REPO / "tests" / "data" / "gpu-h200" / "traces"
OWN_FILE = OWN / "ddp_gloo_w2_rank0.pt.trace.json.gz"


def _no_cast_dump(text):
    assert "Unable to cast" not in text and "incompatible function arguments" not in text, text


@pytest.fixture
def latin1_trace(tmp_path):
    """The repository's trace under a folder whose name is not UTF-8 (b"caf\\xe9", Latin-1)."""
    folder = os.path.join(os.fsencode(tmp_path), b"caf\xe9")
    os.mkdir(folder)
    target = os.path.join(folder, b"rank0.pt.trace.json.gz")
    shutil.copy(os.fsencode(OWN_FILE), target)
    return target


def test_a_non_utf8_path_is_read_as_its_bytes(latin1_trace):
    as_str = os.fsdecode(latin1_trace)  # what os.listdir gives: the byte as a surrogate, "caf\udce9"
    assert "\udce9" in as_str
    expected = scaleprof.TraceAnalysis(trace_dir=str(OWN_FILE)).get_temporal_breakdown(visualize=False)
    for given in (as_str, latin1_trace, Path(as_str)):
        got = scaleprof.TraceAnalysis(trace_dir=given).get_temporal_breakdown(visualize=False)
        assert got.to_dict() == expected.to_dict()
    # As a file of trace_files, in a list and by rank.
    got = scaleprof.TraceAnalysis(trace_files={0: as_str}, trace_dir="").get_temporal_breakdown(visualize=False)
    assert got.to_dict() == expected.to_dict()
    folder = os.path.dirname(as_str)
    got = scaleprof.TraceAnalysis(trace_files=["rank0.pt.trace.json.gz"], trace_dir=folder)
    assert got.files and got.files[0].endswith("rank0.pt.trace.json.gz")


def test_a_non_utf8_path_that_fails_is_a_scaleprof_error_naming_it(tmp_path):
    missing = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"no-such-caf\xe9"))
    for call in (lambda: scaleprof.read_run(missing), lambda: scaleprof.read_runs(missing),
                 lambda: scaleprof.read_run(os.fsencode(missing))):
        with pytest.raises(scaleprof.ScaleprofError) as err:
            call()
        _no_cast_dump(str(err.value))
        assert "no-such-caf\\xe9" in str(err.value), str(err.value)  # the byte shown, not a decode error


def test_a_nul_in_a_path_is_refused_at_the_one_conversion(tmp_path):
    # Before: "rank0.json\0anything" opened rank0.json (the name cut at the NUL).
    cut = str(OWN_FILE) + "\0.ignored"
    with pytest.raises(ValueError, match=r"^trace_files\[0\] contains a NUL byte$"):
        scaleprof.TraceAnalysis(trace_files=[cut], trace_dir="")
    with pytest.raises(ValueError, match=r"^trace_files\[0\] contains a NUL byte$"):
        scaleprof.TraceAnalysis(trace_files={0: cut}, trace_dir="")
    with pytest.raises(ValueError, match=r"^trace_dir\[0\] contains a NUL byte$"):
        _scaleprof.trace_report("idle", [os.fsencode(cut)])
    with pytest.raises(ValueError, match=r"^dir contains a NUL byte$"):
        scaleprof.read_run(str(tmp_path) + "\0x")
    with pytest.raises(ValueError, match=r"^root contains a NUL byte$"):
        scaleprof.scalability_report(root=str(tmp_path) + "\0x")
    with pytest.raises(ValueError, match=r"^root contains a NUL byte$"):
        scaleprof.Run(root=os.fsencode(tmp_path) + b"\0x")


def test_a_str_that_no_encoding_can_write_is_a_value_error(tmp_path):
    # A lone high surrogate is no byte under surrogateescape: os.fsencode raises UnicodeEncodeError,
    # a ValueError, as the docs promise (never pybind11's cast error).
    with pytest.raises(ValueError) as err:
        scaleprof.read_run(str(tmp_path) + "/\ud800")
    _no_cast_dump(str(err.value))
    with pytest.raises(ValueError):
        scaleprof.TraceAnalysis(trace_files=[str(tmp_path) + "/\ud800"], trace_dir="")


def test_wrong_path_types_name_the_argument():
    with pytest.raises(TypeError, match=r"^dir must be a str or os\.PathLike, not int \(3\)$"):
        scaleprof.read_run(3)
    with pytest.raises(ValueError, match=r"^trace_dir\[0\]: expected a path \(str or os\.PathLike\), got int$"):
        _scaleprof.trace_report("idle", [3])


def test_critical_path_takes_numpy_integers_as_the_other_methods():
    analysis = scaleprof.TraceAnalysis(trace_dir=str(OWN_FILE))
    expected = analysis.critical_path_analysis(rank=0)
    step = int(expected["critical_path"]["step"].iloc[0])
    for rank in (np.int64(0), np.int32(0), np.uint8(0)):
        got = analysis.critical_path_analysis(rank=rank)
        assert got["critical_path"].equals(expected["critical_path"])
    one = analysis.critical_path_analysis(rank=0, instance_id=step)
    got = analysis.critical_path_analysis(rank=np.int16(0), instance_id=np.int64(step))
    assert got["critical_path"].equals(one["critical_path"])
    assert len(one["critical_path"]) > 0
    # The same refusals as every other method: a bool or a float is not a rank.
    for bad in (True, 0.0, "0"):
        with pytest.raises(ValueError, match=r"^rank: expected an integer, got "):
            analysis.critical_path_analysis(rank=bad)
    with pytest.raises(ValueError, match=r"^instance_id \(a ProfilerStep number or None\): expected an integer"):
        analysis.critical_path_analysis(rank=0, instance_id=1.0)
