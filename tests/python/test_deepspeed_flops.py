"""`scaleprof trace flops --deepspeed-profile` against DeepSpeed's flops profiler run for real (DeepSpeed
0.19.8 on CPU, DS_ACCELERATOR=cpu): an MLP of nn.Linear and ReLU layers, one of them nested in a block,
trained three steps under torch.profiler (record_shapes=True, with_stack=True) while DeepSpeed's
FlopsProfiler counts the same three forward passes (start_profile before the first,
print_model_profile(output_file=...) after the last).

Both count what these layers do the same way: 2*M*N*K per matmul (the bias add not counted), one FLOP
per element of a ReLU. So the trace's forward FLOPs must equal DeepSpeed's own counter exactly
(`get_total_flops()`, read in the same process before the profiler ends), in total and per module. The
file DeepSpeed writes rounds every figure to two decimals of its unit ("3.33 M"): the figures scaleprof
reads from it must be DeepSpeed's exact counts rounded so (a module's FLOPs, printed only as FLOP/s and
latency, within both roundings), which is the tolerance `agrees` applies and nothing wider."""
import json
import subprocess
import sys

import pytest

from conftest import free_port, run_python, training_env

torch = pytest.importorskip("torch")

SCRIPT = r'''
import json, os, sys
import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile
from deepspeed.profiling.flops_profiler import FlopsProfiler
from deepspeed.profiling.flops_profiler.profiler import get_module_flops, get_module_macs

out = sys.argv[1]
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(),
                      nn.Sequential(nn.Linear(64, 64), nn.ReLU()),
                      nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(16, 32)
model(x).sum().backward()  # warm-up outside both profiles
opt.zero_grad()
ds = FlopsProfiler(model)
with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_stack=True) as prof:
    ds.start_profile()
    for _ in range(3):
        model(x).sum().backward()
        opt.step()
        opt.zero_grad()
        prof.step()
    ds.stop_profile()
    exact = {"flops": ds.get_total_flops(), "macs": ds.get_total_macs(), "params": ds.get_total_params(),
             "modules": {name: {"flops": get_module_flops(m), "macs": get_module_macs(m), "cls": type(m).__name__}
                         for name, m in model.named_modules()},
             "numel": sum(p.numel() for p in model.parameters())}
    ds.print_model_profile(profile_step=3, output_file=os.path.join(out, "profiler_ds.txt"))
    ds.end_profile()
os.makedirs(os.path.join(out, "traces"))
prof.export_chrome_trace(os.path.join(out, "traces", "trace.json"))
with open(os.path.join(out, "exact.json"), "w") as f:
    json.dump(exact, f)
'''

FORWARDS = 3


def deepspeed_env():
    return training_env(DS_ACCELERATOR="cpu", DS_BUILD_OPS="0")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    probe = subprocess.run([sys.executable, "-c", "import deepspeed.profiling.flops_profiler"],
                           capture_output=True, text=True, timeout=120, env=deepspeed_env())
    if probe.returncode != 0:
        pytest.skip("DeepSpeed cannot be imported (make test installs deepspeed==0.19.8 into .venv): "
                    + (probe.stderr.strip().splitlines() or ["?"])[-1])
    out = tmp_path_factory.mktemp("deepspeed")
    script = out / "run.py"
    script.write_text(SCRIPT)
    run_python([script, out], timeout=300, env=deepspeed_env())
    exact = json.loads((out / "exact.json").read_text())
    return out, exact


def rounded(value, params=False):
    """DeepSpeed's number_to_string: two decimals of the unit (T, G/B, M, K)."""
    for scale in (1e12, 1e9, 1e6, 1e3):
        if value >= scale:
            return round(value / scale, 2) * scale
    return round(value, 2)


def test_profile_read_and_totals_agree(recorded, run_cli):
    out, exact = recorded
    tables, _ = run_cli("flops", out / "traces" / "trace.json", "--deepspeed-profile", out / "profiler_ds.txt",
                        "--deepspeed-forwards", FORWARDS)
    [total] = tables["deepspeed_flops"]
    # What scaleprof read from DeepSpeed's file: its exact counts as DeepSpeed rounds them when printing.
    assert total["ds_params"] == pytest.approx(rounded(exact["numel"]), rel=1e-12)
    assert exact["params"] == exact["numel"]
    assert total["ds_fwd_flops"] == pytest.approx(rounded(exact["flops"]), rel=1e-12)
    assert total["ds_fwd_macs"] == pytest.approx(rounded(exact["macs"]), rel=1e-12)
    assert total["ds_forwards"] == FORWARDS
    # The trace's side: inside the model's nn.Module calls, three forward passes counted from them.
    assert total["trace_scope"] == "nn.Module: Sequential_0"
    assert total["trace_forwards"] == FORWARDS
    assert total["trace_forwards_basis"] == "calls of the root module"
    # Equal to DeepSpeed's own counter, exactly; and within the file's rounding of it.
    assert total["trace_flops_per_forward"] * FORWARDS == exact["flops"]
    assert total["agrees"] == "yes"
    # By hand: 16 rows through 32->64, 64->64, 64->10 (2*M*N*K each) and two ReLUs of 16x64.
    by_hand = 2 * 16 * (32 * 64 + 64 * 64 + 64 * 10) + 2 * 16 * 64
    assert total["trace_flops_per_forward"] == by_hand
    # The whole window also holds backward (twice the matmuls) and is larger.
    assert total["trace_all_flops"] > FORWARDS * by_hand


def test_modules_paired_with_deepspeed(recorded, run_cli):
    out, exact = recorded
    tables, _ = run_cli("flops", out / "traces" / "trace.json", "--deepspeed-profile", out / "profiler_ds.txt",
                        "--deepspeed-forwards", FORWARDS)
    rows = tables["deepspeed_modules"]
    # Every module of the model, in named_modules() order (the root as "(model)").
    assert [r["module"] for r in rows] == [n or "(model)" for n in exact["modules"]]
    assert [r["class"] for r in rows] == [m["cls"] for m in exact["modules"].values()]
    assert [r["trace_module"] for r in rows] == ["Sequential_0", "Linear_0", "ReLU_0", "Sequential_1", "Linear_1",
                                                 "ReLU_1", "Linear_2"]
    for r in rows:
        name = "" if r["module"] == "(model)" else r["module"]
        want = exact["modules"][name]
        assert r["trace_calls"] == FORWARDS
        # The trace's FLOPs of each module equal DeepSpeed's exact count of it.
        assert r["trace_flops_per_forward"] * FORWARDS == want["flops"], r
        assert r["ds_macs"] == pytest.approx(rounded(want["macs"]), rel=1e-12, abs=1e-9)
        # DeepSpeed's per-module FLOPs come from FLOP/s x latency: within both roundings.
        assert r["agrees"] == "yes", r
    assert {r["match"] for r in rows} == {"by class", "by class and order"}


def test_python_api_gives_the_same_tables(recorded, run_cli):
    out, _ = recorded
    import scaleprof

    analyzer = scaleprof.TraceAnalysis(trace_dir=str(out / "traces"))
    got = analyzer.get_flops(deepspeed_profile=out / "profiler_ds.txt", deepspeed_forwards=FORWARDS)
    cli, _ = run_cli("flops", out / "traces" / "trace.json", "--deepspeed-profile", out / "profiler_ds.txt",
                     "--deepspeed-forwards", FORWARDS)
    for key in ("deepspeed_flops", "deepspeed_modules"):
        assert len(got[key]) == len(cli[key])
        assert list(got[key]["trace_flops_per_forward"]) == [r["trace_flops_per_forward"] for r in cli[key]]
        assert list(got[key]["agrees"]) == [r["agrees"] for r in cli[key]]
    # Without the profile there are no such tables; a file that is not one fails naming it and the line.
    assert "deepspeed_flops" not in analyzer.get_flops()
    bad = out / "bad.txt"
    text = (out / "profiler_ds.txt").read_text()
    summary_macs = text[text.index("fwd MACs per GPU:"):].split("\n", 1)[0]
    bad.write_text(text.replace(summary_macs, summary_macs[:summary_macs.rindex("MACs")] + "FLOPS"))
    with pytest.raises(scaleprof.ScaleprofError, match=r"bad\.txt:\d+: 'fwd MACs per GPU'"):
        analyzer.get_flops(deepspeed_profile=bad)


def test_bad_profile_is_an_error_naming_file_and_line(recorded, scaleprof_cli):
    out, _ = recorded
    bad = out / "cut.txt"
    text = (out / "profiler_ds.txt").read_text()
    bad.write_text(text[: text.index("(2): Sequential")])
    proc = subprocess.run([str(scaleprof_cli), "trace", "flops", str(out / "traces" / "trace.json"), "--deepspeed-profile",
                           str(bad)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert proc.stdout == ""
    assert proc.stderr.strip().count("\n") == 0
    assert "cut.txt: the model tree ends before its closing ')'" in proc.stderr


ENGINE_SCRIPT = r'''
import os, sys
import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile
import deepspeed

out = sys.argv[1]
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
config = {"train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1,
          "optimizer": {"type": "SGD", "params": {"lr": 0.01}},
          "flops_profiler": {"enabled": True, "profile_step": 2, "detailed": True,
                             "output_file": os.path.join(out, "profiler_ds.txt")}}
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
x = torch.randn(8, 32)
with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_stack=True) as prof:
    for _ in range(4):
        loss = engine(x).sum()
        engine.backward(loss)
        engine.step()
        prof.step()
prof.export_chrome_trace(os.path.join(out, "trace.json"))
'''


def test_deepspeed_engine_profile_of_one_forward(recorded, tmp_path, run_cli):
    """The DeepSpeed engine (one process, gloo, CPU) writes the profile of one forward pass (the step
    of `profile_step`) to its config's output_file, with its engine lines (world size, batch size):
    the default --deepspeed-forwards 1 compares it with each of the trace's four forward passes."""
    script = tmp_path / "engine.py"
    script.write_text(ENGINE_SCRIPT)
    run_python([script, tmp_path], timeout=300,
               env=training_env(DS_ACCELERATOR="cpu", DS_BUILD_OPS="0", RANK="0", LOCAL_RANK="0", WORLD_SIZE="1",
                                MASTER_PORT=str(free_port())))
    tables, _ = run_cli("flops", tmp_path / "trace.json", "--deepspeed-profile", tmp_path / "profiler_ds.txt")
    [total] = tables["deepspeed_flops"]
    by_hand = 2 * 8 * (32 * 64 + 64 * 10) + 8 * 64
    assert total["ds_forwards"] == 1
    # The engine wraps the model: DeepSpeedEngine_0 > Sequential_0; its four calls are the forwards.
    assert total["trace_scope"] == "nn.Module: Sequential_0"
    assert total["trace_forwards"] == 4
    assert total["trace_flops_per_forward"] == by_hand
    assert total["ds_fwd_flops"] == pytest.approx(rounded(by_hand), rel=1e-12)
    assert total["agrees"] == "yes"
    rows = tables["deepspeed_modules"]
    assert [r["trace_module"] for r in rows] == ["Sequential_0", "Linear_0", "ReLU_0", "Linear_1"]
    assert rows[1]["ds_macs"] == 16380  # "16.38 KMACs" read as printed, no binary residue
    # DeepSpeed 0.19.8's engine prints its root module's latency as "1.8 Gs" (its start-time hook did
    # not run: the time since 1970) and so its FLOP/s as "0 FLOPS", which stands for anything up to
    # millions of FLOPs: too coarse to agree or disagree with.
    assert rows[0]["ds_latency_us"] > 1e15
    assert rows[0]["agrees"] == "unknown"
    assert [r["trace_flops_per_forward"] for r in rows[1:]] == [2 * 8 * 32 * 64, 8 * 64, 2 * 8 * 64 * 10]
    assert all(r["agrees"] == "yes" for r in rows[1:]), rows
