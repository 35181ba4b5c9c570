// FLOPs of one operator call from the shapes the profiler recorded (record_shapes=True): the
// `Input Dims`, `Input type` and `Concrete Inputs` arguments of a cpu_op, as the trace writes them.
//
// Where torch.utils.flop_counter.FlopCounterMode counts an operator, the formula is its formula,
// literally (torch 2.13, torch/utils/flop_counter.py), so the two agree on the same call:
// * mm / addmm / _scaled_mm: 2·M·N·K (addmm's bias add and alpha/beta scaling are not counted);
//   bmm / baddbmm: 2·B·M·N·K.
// * convolution (every aten entry: convolution, _convolution, conv1d/2d/3d, conv_transpose*,
//   cudnn_/miopen_/mkldnn_convolution, the slow and depthwise CPU kernels):
//   2·N·prod(spatial)·prod(kernel)·W[0]·W[1], spatial = the output's (the input's when transposed),
//   W the weight's shape ([Cout, Cin/groups, k...]; [Cin, Cout/groups, k...] transposed). The output
//   size is computed from stride, padding and dilation (Concrete Inputs), as PyTorch does:
//   floor((in + 2·pad − dil·(k−1) − 1) / stride) + 1. Bias is not counted.
// * convolution_backward: grad_input (output_mask[0]) as the transposed convolution of grad_output
//   and the weight, grad_weight (output_mask[1]) as the convolution of the input and grad_output;
//   torch's grad_weight term multiplies by the input's full channel count, so for a grouped
//   convolution it counts `groups` times the forward's work: kept, to equal FlopCounterMode.
// * scaled dot product attention (flash, efficient, cuDNN, and the CPU flash kernel, which
//   FlopCounterMode does not know and counts 0): forward 2 bmm's, 4·B·H·Sq·Sk·D when D = Dv;
//   backward 5 bmm's (the scores recomputed). Query heads may be a multiple of the key heads (GQA).
//   _flash_attention_* / _efficient_attention_* take [B, S, H, D] tensors: read as such (torch's
//   formula reads them as [B, H, S, D]; it never sees them under SDPA, which it counts instead).
// FlopCounterMode counts no other operator. Counted here as well, and flagged as not FlopCounterMode's
// (class elementwise or normalization): binary elementwise ops (1 FLOP per element of the broadcast
// output), unary activations and their backward (1 per element of the input), softmax and log-softmax
// (5 per element: max, subtract, exp, sum, divide) and the normalisations (5 per element: mean,
// variance as subtract and multiply-add, normalise as subtract and divide; the affine transform is
// not counted). matmul and linear have formulas too, but are counted only where no mm/addmm/bmm call
// is nested in them (flops.h: the innermost call with a formula counts).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scaleprof::analysis {

enum class FlopClass : uint8_t { kMatmul, kConvolution, kAttention, kElementwise, kNormalization };
inline constexpr int kFlopClassCount = 5;
std::string_view flop_class_name(FlopClass c);
// Matmul, convolution and attention: FlopCounterMode's operators (and where a device's peak applies).
inline bool is_flop_counter_class(FlopClass c) {
  return c == FlopClass::kMatmul || c == FlopClass::kConvolution || c == FlopClass::kAttention;
}

// The element type of an operator's main input, as the device peak tables are keyed. kTf32: fp32
// inputs whose kernels ran on TF32 tensor cores, which only the kernel's name tells (flops.h).
enum class FlopDtype : uint8_t { kFp32, kFp64, kFp16, kBf16, kFp8, kInt8, kOther, kTf32 };
inline constexpr int kFlopDtypeCount = 8;
std::string_view flop_dtype_name(FlopDtype d);
// Kineto's `Input type` text: "float" -> fp32, "c10::BFloat16" -> bf16, "c10::Float8_e4m3fn" -> fp8, ...
FlopDtype flop_dtype_of(std::string_view input_type);

using Shape = std::vector<int64_t>;

// One call's recorded arguments, parsed. Inputs that are not tensors have an empty shape (so does a
// 0-d tensor); a tensor list ([[...], [...]] inside the list) is marked and has no shape.
struct OpInputs {
  std::vector<Shape> dims;
  std::vector<bool> tensor_list;
  std::vector<std::string> types;     // empty when the trace has no `Input type`
  std::vector<std::string> concrete;  // empty when the trace has no `Concrete Inputs`
};

// nullopt when `input_dims` is not a list of lists of integers (types and concrete inputs that do not
// parse are left empty: the formulas needing them then give nothing).
std::optional<OpInputs> parse_op_inputs(std::string_view input_dims, std::string_view input_types,
                                        std::string_view concrete_inputs);
// "[2, 2]" -> {2, 2}, "1" -> {1}; nullopt for anything else (a bool, a float, "same", "").
std::optional<std::vector<int64_t>> parse_int_list(std::string_view text);

struct OpFlops {
  int64_t flops = 0;
  FlopClass cls = FlopClass::kMatmul;
  FlopDtype dtype = FlopDtype::kOther;
  // FlopCounterMode counts the call (its class is one it counts and the operator is in its table):
  // false for the CPU flash-attention kernel, which torch's table lacks, so it counts 0 there.
  bool flop_counter = true;
};

// True when `name` ("aten::mm", ...) has a formula here: only those calls need their shapes parsed.
bool has_flop_formula(std::string_view name);
// The call's FLOPs; nullopt when the name has no formula or its arguments do not fit it (missing,
// inconsistent or overflowing shapes, a convolution without its Concrete Inputs).
std::optional<OpFlops> op_flops(std::string_view name, const OpInputs& inputs);

// The formulas, for tests and docs (nullopt on overflow or inconsistent shapes).
std::optional<int64_t> mm_flops(const Shape& a, const Shape& b);      // [M,K] x [K,N]
std::optional<int64_t> bmm_flops(const Shape& a, const Shape& b);     // [B,M,K] x [B,K,N]
std::optional<int64_t> matmul_flops(const Shape& a, const Shape& b);  // torch.matmul's broadcasting
std::optional<int64_t> linear_flops(const Shape& input, const Shape& weight);
// Output spatial size of a convolution (not transposed) from PyTorch's formula.
std::optional<Shape> conv_output_spatial(const Shape& x, const Shape& w, const std::vector<int64_t>& stride,
                                         const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation);
// FlopCounterMode's conv_flop_count: `conv_spatial` is the output's spatial shape (the input's when
// transposed).
std::optional<int64_t> conv_flops(const Shape& x, const Shape& w, const Shape& conv_spatial);
std::optional<int64_t> conv_backward_flops(const Shape& grad_out, const Shape& x, const Shape& w, bool transposed,
                                           bool grad_input, bool grad_weight);
// q, k, v as [B, H, S, D].
std::optional<int64_t> sdpa_flops(const Shape& q, const Shape& k, const Shape& v);
std::optional<int64_t> sdpa_backward_flops(const Shape& grad_out, const Shape& q, const Shape& k, const Shape& v);
// Element count of the broadcast of `shapes` (numpy rules); nullopt when they do not broadcast.
std::optional<int64_t> broadcast_numel(const std::vector<const Shape*>& shapes);

}  // namespace scaleprof::analysis
