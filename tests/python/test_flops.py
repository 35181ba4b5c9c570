"""`scaleprof trace flops` against torch.utils.flop_counter.FlopCounterMode on the same models: a
transformer block, a CNN (strided, grouped, dilated and transposed convolutions) and an MLP, each
recorded on CPU with record_shapes=True over one forward and backward pass. Where FlopCounterMode
counts an operator class (matmul, convolution), scaleprof's FLOPs must equal its count within 1 %
(they are the same formulas, so in practice exactly). FlopCounterMode counts CPU attention
(_scaled_dot_product_flash_attention_for_cpu) as 0; scaleprof counts it in its FLOPs with torch's own
SDPA formulas, checked here against torch.utils.flop_counter's sdpa_flop_count on the recorded
shapes, and leaves it out of `flop_counter_flops`, which must equal FlopCounterMode's total."""
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402
from torch.utils import flop_counter  # noqa: E402

MATMUL_OPS = {"aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm"}
CONV_OPS = {"aten.convolution", "aten._convolution", "aten.convolution_backward", "aten.cudnn_convolution"}


def transformer():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0, batch_first=True)
    return layer, torch.randn(2, 16, 64)


def cnn():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(8, 16, 3, groups=4, dilation=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
        nn.ConvTranspose2d(16, 8, 2, stride=2), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
    return model, torch.randn(4, 3, 32, 32)


def mlp():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64, bias=False), nn.GELU(),
                          nn.Linear(64, 10))
    return model, torch.randn(3, 5, 32)


def step(model, x):
    model.zero_grad(set_to_none=True)
    model(x).sum().backward()


def flop_counter_counts(model, x):
    counter = flop_counter.FlopCounterMode(display=False)
    with counter:
        step(model, x)
    return {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}


def record(model, x, path):
    step(model, x)  # warm-up outside the profile
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        step(model, x)
    prof.export_chrome_trace(str(path))


def scaleprof_by_class(run_cli, path, *extra):
    out, _ = run_cli("flops", path, "--top", "0", *extra)
    by_class = {}
    for row in out["flops_operators"]:
        by_class[row["class"]] = by_class.get(row["class"], 0) + row["flops"]
    return out, by_class


def assert_close(ours, theirs):
    assert theirs > 0
    assert abs(ours - theirs) <= 0.01 * theirs, (ours, theirs)


@pytest.mark.parametrize("make", [transformer, cnn, mlp])
def test_flops_equal_flop_counter_mode(make, tmp_path, run_cli):
    model, x = make()
    counts = flop_counter_counts(model, x)
    path = tmp_path / "trace.json"
    record(model, x, path)
    out, ours = scaleprof_by_class(run_cli, path)
    unknown = set(counts) - MATMUL_OPS - CONV_OPS
    assert not unknown, f"FlopCounterMode counted operators this test does not map: {unknown}"
    matmul = sum(n for op, n in counts.items() if op in MATMUL_OPS)
    conv = sum(n for op, n in counts.items() if op in CONV_OPS)
    assert_close(ours.get("matmul", 0), matmul)
    if conv:
        assert_close(ours.get("convolution", 0), conv)
    else:
        assert "convolution" not in ours
    rank = out["flops_ranks"][0]
    # What FlopCounterMode counted in all, CPU attention (which it counts as 0) left out (issue 31).
    assert rank["flop_counter_flops"] == sum(counts.values())
    assert rank["unmodelled_calls"] == 0
    # A CPU trace: times are the calls' own, and MFU needs a peak the trace cannot name.
    assert {r["time_basis"] for r in out["flops_operators"]} == {"host"}
    assert rank["mfu_pct"] is None


def test_cpu_attention_counted_with_torch_sdpa_formulas(tmp_path, run_cli):
    model, x = transformer()
    path = tmp_path / "trace.json"
    record(model, x, path)
    _, ours = scaleprof_by_class(run_cli, path)
    b, s, e = x.shape
    h = model.self_attn.num_heads
    q = (b, h, s, e // h)
    expected = flop_counter.sdpa_flop_count(q, q, q) + flop_counter.sdpa_backward_flop_count(q, q, q, q)
    assert ours["attention"] == expected


def test_peak_override_gives_mfu_of_the_counted_matmuls(tmp_path, run_cli):
    model, x = mlp()
    path = tmp_path / "trace.json"
    record(model, x, path)
    out, _ = run_cli("flops", path, "--peak-tflops", "1")
    rank = out["flops_ranks"][0]
    # MFU = matmul/conv/attention FLOPs over (time x 1 TFLOP/s); the trace has no steps: its span.
    expected = 100.0 * rank["flop_counter_flops"] / (rank["time_us"] * 1e-6) / 1e12
    assert rank["mfu_pct"] == pytest.approx(expected, rel=1e-3, abs=0.01)
    assert rank["peak"] == "--peak-tflops 1"


def test_python_api_gives_the_cli_tables(tmp_path, run_cli):
    scaleprof = pytest.importorskip("scaleprof")
    model, x = mlp()
    record(model, x, tmp_path / "trace.json")
    cli, _ = run_cli("flops", tmp_path / "trace.json")
    tables = scaleprof.TraceAnalysis(trace_dir=str(tmp_path)).get_flops()
    assert set(tables) == {"flops_ranks", "flops_steps", "flops_operators", "flops_kernels"}
    assert list(tables["flops_operators"]["flops"]) == [r["flops"] for r in cli["flops_operators"]]
