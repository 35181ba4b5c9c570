// FLOP formulas (analysis/flop_formulas.h) against values computed by hand, and the per-rank FLOPs
// (analysis/flops.h) on small traces read by the real reader: which level of nested calls counts,
// device time, steps, MFU's peak table.
#include <gtest/gtest.h>

#include <string>

#include "analysis/device_peaks.h"
#include "analysis/flop_formulas.h"
#include "analysis/flops.h"
#include "trace/kineto_reader.h"

namespace scaleprof::analysis {
namespace {

TEST(FlopFormulas, MatmulFamily) {
  EXPECT_EQ(mm_flops({64, 32}, {32, 128}), 2 * 64 * 32 * 128);  // 524,288, torch's with_flops value
  EXPECT_EQ(mm_flops({64, 32}, {31, 128}), std::nullopt);
  EXPECT_EQ(bmm_flops({4, 8, 16}, {4, 16, 32}), 2 * 4 * 8 * 16 * 32);
  EXPECT_EQ(bmm_flops({4, 8, 16}, {3, 16, 32}), std::nullopt);
  // matmul: [2,3,5,7] x [7,11] broadcasts to 6 batches of 5x7x11.
  EXPECT_EQ(matmul_flops({2, 3, 5, 7}, {7, 11}), 2 * 6 * 5 * 7 * 11);
  EXPECT_EQ(matmul_flops({7}, {7}), 14);  // a dot product
  EXPECT_EQ(matmul_flops({2, 1, 5, 7}, {3, 7, 4}), 2 * 6 * 5 * 7 * 4);
  EXPECT_EQ(linear_flops({8, 10, 128}, {64, 128}), 2 * 80 * 64 * 128);
  EXPECT_EQ(mm_flops({int64_t{1} << 40, int64_t{1} << 40}, {int64_t{1} << 40, 2}), std::nullopt);  // overflow
  EXPECT_EQ(mm_flops({-2, 3}, {3, 4}), std::nullopt);
}

TEST(FlopFormulas, ConvolutionOutputSizeAndFlops) {
  // 16x16 input, 3x3 kernel, stride 2, padding 1: floor((16 + 2 - 2 - 1) / 2) + 1 = 8.
  EXPECT_EQ(conv_output_spatial({2, 3, 16, 16}, {8, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}), Shape({8, 8}));
  // Dilation 2, no padding: 8 + 0 - 2*2 - 1 = 3 -> 3 / 1 + 1 = 4.
  EXPECT_EQ(conv_output_spatial({2, 8, 8, 8}, {8, 2, 3, 3}, {1, 1}, {0, 0}, {2, 2}), Shape({4, 4}));
  // Kernel larger than the padded input: no output.
  EXPECT_EQ(conv_output_spatial({1, 1, 2, 2}, {1, 1, 5, 5}, {1, 1}, {0, 0}, {1, 1}), std::nullopt);
  // 2 * N * Hout * Wout * Cout * (Cin/groups) * kh * kw; groups 4 is in the weight (8, 2, 3, 3).
  EXPECT_EQ(conv_flops({2, 8, 8, 8}, {8, 2, 3, 3}, {4, 4}), 2 * 2 * 16 * 8 * 2 * 9);
  // N=8, Cin=3, 9x9 input, Cout=8, 3x3 kernel, 7x7 output: 2 * 8 * 49 * 9 * 8 * 3 = 169,344.
  EXPECT_EQ(conv_flops({8, 3, 9, 9}, {8, 3, 3, 3}, {7, 7}), 169'344);
  // 3-d convolution: 2 * 1 * (2*2*2) * (3*3*3) * 4 * 2.
  EXPECT_EQ(conv_flops({1, 2, 4, 4, 4}, {4, 2, 3, 3, 3}, {2, 2, 2}), 2 * 8 * 27 * 4 * 2);
}

TEST(FlopFormulas, ConvolutionBackwardFollowsTorch) {
  // Not transposed: grad_input = 2*N*out*k*W0*W1, grad_weight = 2*Cin_total*k*out*Cout*N.
  const Shape go{2, 8, 4, 4}, x{2, 8, 8, 8}, w{8, 2, 3, 3};
  const int64_t grad_input = 2 * 2 * 16 * 9 * 8 * 2;
  const int64_t grad_weight = 2 * 8 * 9 * 16 * 8 * 2;  // torch uses x's 8 channels, not 8/groups
  EXPECT_EQ(conv_backward_flops(go, x, w, false, true, true), grad_input + grad_weight);
  EXPECT_EQ(conv_backward_flops(go, x, w, false, false, true), grad_weight);
  EXPECT_EQ(conv_backward_flops(go, x, w, false, false, false), 0);
  // Transposed (x 2x4x4x4 -> grad_out 2x6x6x6 with w [4, 3, 3, 3]): grad_input over x's spatial size.
  const Shape tx{2, 4, 4, 4}, tgo{2, 3, 6, 6}, tw{4, 3, 3, 3};
  EXPECT_EQ(conv_backward_flops(tgo, tx, tw, true, true, false), 2 * 2 * 16 * 9 * 4 * 3);
  EXPECT_EQ(conv_backward_flops(tgo, tx, tw, true, false, true), 2 * 3 * 9 * 16 * 4 * 2);
}

TEST(FlopFormulas, Attention) {
  // Forward: 2 bmm's of b*h batches: 2*(b*h)*sq*d*sk + 2*(b*h)*sq*sk*dv.
  EXPECT_EQ(sdpa_flops({2, 4, 8, 16}, {2, 4, 8, 16}, {2, 4, 8, 16}), 2 * (2 * 8 * 8 * 16 * 8));
  // GQA: 8 query heads over 2 key/value heads count 8 heads.
  EXPECT_EQ(sdpa_flops({1, 8, 4, 16}, {1, 2, 6, 16}, {1, 2, 6, 16}), 2 * 8 * 4 * 16 * 6 * 2);
  EXPECT_EQ(sdpa_flops({1, 6, 4, 16}, {1, 4, 6, 16}, {1, 4, 6, 16}), std::nullopt);  // 6 % 4 != 0
  // Backward: 5 bmm's of the same size when sq = sk and d = dv.
  EXPECT_EQ(sdpa_backward_flops({2, 4, 8, 16}, {2, 4, 8, 16}, {2, 4, 8, 16}, {2, 4, 8, 16}), 5 * (2 * 8 * 8 * 16 * 8));
}

TEST(FlopFormulas, ParsesKinetoArgumentsAndPicksEntries) {
  // aten::conv2d as torch 2.13 records it (stride 2, padding 1, dilation 1, groups 1).
  auto in = parse_op_inputs("[[2, 3, 16, 16], [8, 3, 3, 3], [8], [], [], [], []]",
                            R"(["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar"])",
                            R"(["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"])");
  ASSERT_TRUE(in);
  auto f = op_flops("aten::conv2d", *in);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->flops, 2 * 2 * 64 * 8 * 3 * 9);
  EXPECT_EQ(f->cls, FlopClass::kConvolution);
  EXPECT_EQ(f->dtype, FlopDtype::kFp32);
  // mkldnn_convolution keeps padding before stride: the same call gives the same FLOPs.
  auto mk = parse_op_inputs("[[2, 3, 16, 16], [8, 3, 3, 3], [8], [], [], [], []]", "",
                            R"(["", "", "", "[1, 1]", "[2, 2]", "[1, 1]", "1"])");
  EXPECT_EQ(op_flops("aten::mkldnn_convolution", *mk)->flops, f->flops);
  // Without Concrete Inputs a forward convolution has no formula (the stride is unknown).
  auto bare = parse_op_inputs("[[2, 3, 16, 16], [8, 3, 3, 3], [8], [], [], [], []]", "", "");
  EXPECT_EQ(op_flops("aten::conv2d", *bare), std::nullopt);
  // addmm counts its two matrices, not the bias; bf16 from the first matrix.
  auto addmm = parse_op_inputs("[[10], [2, 128], [128, 10], [], []]",
                               R"(["float", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"])", "");
  EXPECT_EQ(op_flops("aten::addmm", *addmm)->flops, 2 * 2 * 128 * 10);
  EXPECT_EQ(op_flops("aten::addmm", *addmm)->dtype, FlopDtype::kBf16);
  // Elementwise: the broadcast output, 1 per element; a Scalar operand adds nothing.
  auto add = parse_op_inputs("[[4, 1, 3], [5, 1], []]", "", "");
  EXPECT_EQ(op_flops("aten::add", *add)->flops, 4 * 5 * 3);
  EXPECT_EQ(op_flops("aten::add", *add)->cls, FlopClass::kElementwise);
  auto soft = parse_op_inputs("[[4, 10], [], []]", "", "");
  EXPECT_EQ(op_flops("aten::_softmax", *soft)->flops, 5 * 40);
  // Tensor lists are skipped, unknown names have no formula, malformed dims no inputs.
  auto list = parse_op_inputs("[[[2, 3], [4]], [2, 3]]", "", "");
  ASSERT_TRUE(list);
  EXPECT_TRUE(list->tensor_list[0]);
  EXPECT_EQ(list->dims[1], Shape({2, 3}));
  EXPECT_EQ(op_flops("aten::frobnicate", *add), std::nullopt);
  EXPECT_FALSE(has_flop_formula("mm"));  // only aten:: names
  EXPECT_EQ(parse_op_inputs("[[2, x]]", "", ""), std::nullopt);
  EXPECT_EQ(parse_int_list(" [ 1,2 ] "), std::vector<int64_t>({1, 2}));
  EXPECT_EQ(parse_int_list("False"), std::nullopt);
}

TEST(FlopFormulas, FlashAttentionReadsBatchSeqHeadsDim) {
  // _flash_attention_forward takes [B, S, H, D]: the same call as SDPA's [B, H, S, D].
  auto flash = parse_op_inputs("[[2, 8, 4, 16], [2, 8, 4, 16], [2, 8, 4, 16]]", "", "");
  auto sdpa = parse_op_inputs("[[2, 4, 8, 16], [2, 4, 8, 16], [2, 4, 8, 16]]", "", "");
  EXPECT_EQ(op_flops("aten::_flash_attention_forward", *flash)->flops,
            op_flops("aten::_scaled_dot_product_flash_attention", *sdpa)->flops);
}

TEST(DevicePeaks, MatchesTraceNames) {
  ASSERT_NE(find_device_peak("NVIDIA H100 80GB HBM3"), nullptr);
  EXPECT_EQ(find_device_peak("NVIDIA H100 80GB HBM3")->name, "H100 SXM");
  EXPECT_EQ(find_device_peak("NVIDIA H100 PCIe")->name, "H100 PCIe");
  EXPECT_EQ(find_device_peak("NVIDIA A100-SXM4-40GB")->name, "A100");
  EXPECT_EQ(find_device_peak("AMD Instinct MI250X")->name, "MI250X");
  EXPECT_EQ(find_device_peak("AMD Instinct MI250")->name, "MI250");
  EXPECT_EQ(find_device_peak("h200")->name, "H200");
  EXPECT_EQ(find_device_peak("NVIDIA H100 NVL"), nullptr);
  EXPECT_EQ(find_device_peak("Intel Xeon"), nullptr);
  EXPECT_DOUBLE_EQ(find_device_peak("H100 SXM")->tflops[static_cast<size_t>(FlopDtype::kBf16)], 989.4);
  EXPECT_DOUBLE_EQ(find_device_peak("A100")->tflops[static_cast<size_t>(FlopDtype::kTf32)], 156);
  EXPECT_DOUBLE_EQ(find_device_peak("A100")->tflops[static_cast<size_t>(FlopDtype::kFp8)], 0);  // none
}

trace::RankTrace read(const std::string& json) {
  simdjson::padded_string text(json);
  auto t = trace::parse_kineto_trace("t.json", text);
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  return std::move(t.value());
}

// linear > addmm on the host thread, its kernel launched inside addmm; a relu beside it; a second
// step with a mm of two kernels. The kernels are timed on the device.
constexpr const char* kTrace = R"({"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 10, "dur": 30,
   "args": {"External id": 1, "Input Dims": [[64, 128], [256, 128], [256]], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 12, "dur": 20,
   "args": {"External id": 2, "Input Dims": [[256], [64, 128], [128, 256], [], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 14, "dur": 5, "args": {"External id": 2, "correlation": 7}},
  {"ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7, "ts": 20, "dur": 4, "args": {"External id": 2, "correlation": 7, "stream": 7, "device": 0}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 50, "dur": 10,
   "args": {"External id": 3, "Input Dims": [[64, 256]], "Input type": ["c10::BFloat16"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 52, "dur": 5, "args": {"External id": 3, "correlation": 8}},
  {"ph": "X", "cat": "kernel", "name": "relu_kernel", "pid": 0, "tid": 7, "ts": 60, "dur": 2, "args": {"External id": 3, "correlation": 8, "stream": 7, "device": 0}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 100, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 110, "dur": 30,
   "args": {"External id": 4, "Input Dims": [[32, 32], [32, 32]], "Input type": ["float", "float"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 112, "dur": 2, "args": {"External id": 4, "correlation": 9}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 120, "dur": 2, "args": {"External id": 4, "correlation": 10}},
  {"ph": "X", "cat": "kernel", "name": "gemm_a", "pid": 0, "tid": 7, "ts": 130, "dur": 1, "args": {"correlation": 9, "stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "sm80_xmma_gemm_f32f32_tf32f32_f32_nn", "pid": 0, "tid": 7, "ts": 135, "dur": 3, "args": {"correlation": 10, "stream": 7}}
]})";

TEST(Flops, CountsTheInnermostCallWithItsKernelsAndSteps) {
  const trace::RankTrace t = read(kTrace);
  const RankFlops f = compute_flops(t);
  EXPECT_TRUE(f.has_device);
  EXPECT_EQ(f.shaped_calls, 4);
  EXPECT_EQ(f.counted_calls, 3);  // addmm (not linear), relu, mm
  const int64_t addmm = 2 * 64 * 128 * 256, relu = 64 * 256, mm = 2 * 32 * 32 * 32;
  EXPECT_EQ(f.flops, addmm + relu + mm);
  EXPECT_EQ(f.flop_counter_flops, addmm + mm);
  EXPECT_EQ(f.compute_flops[static_cast<size_t>(FlopDtype::kBf16)], addmm);
  // The fp32 mm ran a TF32 tensor-core kernel (its name says so): counted against the TF32 peak.
  EXPECT_EQ(f.compute_flops[static_cast<size_t>(FlopDtype::kTf32)], mm);
  EXPECT_EQ(f.compute_flops[static_cast<size_t>(FlopDtype::kFp32)], 0);
  ASSERT_EQ(f.operators.size(), 3u);
  EXPECT_EQ(f.operators[0].name, "aten::addmm");
  EXPECT_EQ(f.operators[0].device_ns, 4000);  // the kernel's 4 us, not the 20 us on the host
  EXPECT_EQ(f.operators[0].host_ns, 20000);
  EXPECT_EQ(f.operators[1].name, "aten::mm");
  EXPECT_EQ(f.operators[1].device_ns, 4000);  // two kernels, 1 + 3 us
  EXPECT_EQ(f.operators[1].kernels, 2);
  EXPECT_EQ(f.operators[1].dtype, FlopDtype::kTf32);
  // Only single-kernel calls give a kernel its FLOPs: sm90_gemm and relu_kernel, not the mm's two.
  ASSERT_EQ(f.kernels.size(), 2u);
  EXPECT_EQ(f.kernels[0].name, "sm90_gemm");
  EXPECT_EQ(f.kernels[0].flops, addmm);
  ASSERT_EQ(f.steps.size(), 2u);
  EXPECT_EQ(f.steps[0].flops, addmm + relu);
  EXPECT_EQ(f.steps[1].flops, mm);
  EXPECT_EQ(f.steps[1].duration_ns(), 100000);
}

TEST(Flops, TraceWithoutShapesCountsNothing) {
  const trace::RankTrace t = read(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]})");
  const RankFlops f = compute_flops(t);
  EXPECT_EQ(f.counted_calls, 0);
  EXPECT_EQ(f.flops, 0);
  EXPECT_TRUE(f.operators.empty());
}

TEST(Flops, ConvolutionLevelsCountOnceAndFallBackWithoutConcreteInputs) {
  // conv2d > convolution > mkldnn_convolution: the innermost counts once. The inner call lacks
  // Concrete Inputs (as an old trace would), so the next level up counts instead.
  const trace::RankTrace t = read(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 0, "dur": 100,
     "args": {"Input Dims": [[2, 3, 16, 16], [8, 3, 3, 3], [8], [], [], [], []], "Input type": ["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar"], "Concrete Inputs": ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::convolution", "pid": 1, "tid": 1, "ts": 5, "dur": 90,
     "args": {"Input Dims": [[2, 3, 16, 16], [8, 3, 3, 3], [8], [], [], [], [], [], []], "Input type": ["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"], "Concrete Inputs": ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mkldnn_convolution", "pid": 1, "tid": 1, "ts": 10, "dur": 80,
     "args": {"Input Dims": [[2, 3, 16, 16], [8, 3, 3, 3], [8], [], [], [], []], "Input type": ["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar"]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add_", "pid": 1, "tid": 1, "ts": 20, "dur": 5,
     "args": {"Input Dims": [[2, 8, 8, 8], [8, 1, 1]], "Input type": ["float", "float"]}}
  ]})");
  const RankFlops f = compute_flops(t);
  EXPECT_EQ(f.unmodelled_calls, 1);  // mkldnn_convolution without its scalars
  EXPECT_EQ(f.counted_calls, 1);     // convolution; the bias add inside it is the convolution's
  ASSERT_EQ(f.operators.size(), 1u);
  EXPECT_EQ(f.operators[0].name, "aten::convolution");
  EXPECT_EQ(f.flops, 2 * 2 * 64 * 8 * 3 * 9);
  EXPECT_FALSE(f.has_device);
  EXPECT_EQ(f.operators[0].host_ns, 90000);
}

}  // namespace
}  // namespace scaleprof::analysis
