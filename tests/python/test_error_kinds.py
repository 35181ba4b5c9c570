"""scaleprof.ScaleprofError carries the error's kind (`kind`: "not_found", "io", "usage", ...), the
same kind the CLI's exit code follows, so that a program decides on the kind, never on the wording."""
import pytest

scaleprof = pytest.importorskip("scaleprof")


def test_a_missing_run_is_not_found(tmp_path):
    with pytest.raises(scaleprof.ScaleprofError) as raised:
        scaleprof.read_run(str(tmp_path / "no-such-run"))
    assert raised.value.kind == "not_found", (raised.value.kind, str(raised.value))
    assert "no-such-run" in str(raised.value)


def test_a_trace_that_is_not_json_is_bad_input(tmp_path):
    """A file that is there but not a trace is the input's fault: bad_input, not not_found."""
    bad = tmp_path / "rank0.json"
    bad.write_text("{not json")
    with pytest.raises(scaleprof.ScaleprofError) as raised:
        scaleprof.TraceAnalysis([str(bad)])
    assert raised.value.kind == "bad_input", (raised.value.kind, str(raised.value))
    assert "rank0.json" in str(raised.value)


def test_a_report_of_a_missing_root_is_not_found(tmp_path):
    with pytest.raises(scaleprof.ScaleprofError) as raised:
        scaleprof.scalability_report(root=str(tmp_path / "nothing-here"))
    assert raised.value.kind == "not_found", (raised.value.kind, str(raised.value))


def test_recording_outside_a_started_run_is_a_usage_error(tmp_path):
    run = scaleprof.Run(root=str(tmp_path), experiment="e", run_name="r", strategy="ddp")
    with pytest.raises(scaleprof.ScaleprofError) as raised:
        run._open()  # what every record does first
    assert raised.value.kind == "usage"
    assert isinstance(raised.value, RuntimeError)


def test_an_error_raised_in_python_has_the_default_kind():
    assert scaleprof.ScaleprofError("x").kind == "bad_input"
