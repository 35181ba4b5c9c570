#include "analysis/flop_formulas.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/number_text.h"

namespace scaleprof::analysis {

namespace {

// A product that turns into nullopt on overflow or a negative factor (hostile shapes must not be
// undefined behaviour, and a negative dimension is no shape).
class Product {
 public:
  Product& operator*=(int64_t x) {
    if (x < 0 || __builtin_mul_overflow(value_, x, &value_)) ok_ = false;
    return *this;
  }
  Product& add(std::optional<int64_t> x) {
    if (!x || __builtin_add_overflow(value_, *x, &value_)) ok_ = false;
    return *this;
  }
  std::optional<int64_t> get() const { return ok_ ? std::optional<int64_t>(value_) : std::nullopt; }

 private:
  int64_t value_ = 1;
  bool ok_ = true;
};

std::optional<int64_t> times(std::optional<int64_t> a, int64_t b) {
  if (!a) return std::nullopt;
  Product p;
  p *= *a;
  p *= b;
  return p.get();
}

std::optional<int64_t> numel(const Shape& s) {
  Product p;
  for (int64_t d : s) p *= d;
  return p.get();
}

// The parser of the raw JSON text the reader keeps: lists of integers (shapes) or strings.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])) != 0) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool at_end() {
    skip_space();
    return pos_ == text_.size();
  }
  bool integer(int64_t* out) {
    skip_space();
    const std::optional<NumberPrefix<int64_t>> number = parse_int64_prefix(text_.substr(pos_));
    if (!number) return false;
    *out = number->value;
    pos_ = text_.size() - number->rest.size();
    return true;
  }
  // A JSON string without escapes beyond \" and \\ (Kineto's type names and concrete values).
  bool string(std::string* out) {
    if (!eat('"')) return false;
    out->clear();
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out->push_back(text_[pos_++]);
    }
    return eat('"');
  }
  // Skips one JSON list (nested lists and numbers only), for tensor lists.
  bool skip_list() {
    if (!eat('[')) return false;
    int depth = 1;
    while (pos_ < text_.size() && depth > 0) {
      const char c = text_[pos_++];
      if (c == '[') ++depth;
      if (c == ']') --depth;
    }
    return depth == 0;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

std::optional<std::vector<std::string>> parse_string_list(std::string_view text) {
  Cursor c(text);
  std::vector<std::string> out;
  if (!c.eat('[')) return std::nullopt;
  if (c.eat(']')) return c.at_end() ? std::optional(out) : std::nullopt;
  do {
    std::string s;
    if (!c.string(&s)) return std::nullopt;
    out.push_back(std::move(s));
  } while (c.eat(','));
  if (!c.eat(']') || !c.at_end()) return std::nullopt;
  return out;
}

enum class Kind : uint8_t {
  kMm,       // (a, b)
  kAddmm,    // (self, a, b)
  kBmm,      // (a, b)
  kBaddbmm,  // (self, a, b)
  kMatmul,   // (a, b)
  kLinear,   // (input, weight, bias)
  kConv,     // forward, argument positions in ConvArgs
  kConvBackward,
  kSdpa,           // (q, k, v) as [B, H, S, D]
  kSdpaBackward,   // (grad_out, q, k, v) as [B, H, S, D]
  kFlashForward,   // (q, k, v) as [B, S, H, D]
  kFlashBackward,  // (grad_out, q, k, v) as [B, S, H, D]
  kBinary,
  kUnary,
  kSoftmax,
  kNorm,
};

// Where a convolution entry keeps its scalars in `Concrete Inputs` (-1: the entry has none; stride
// and dilation then 1, padding 0), and whether it is transposed (-1: never, -2: always, else the
// position of its `transposed` flag).
struct ConvArgs {
  int stride, padding, dilation, transposed;
};

struct Formula {
  std::string_view name;  // without "aten::"
  Kind kind;
  ConvArgs conv = {-1, -1, -1, -1};
};

constexpr int kAlways = -2;

// Sorted by name (looked up by binary search).
constexpr auto kFormulas = [] {
  std::array<Formula, 79> f = {{
      {"_conv_depthwise2d", Kind::kConv, {4, 5, 6, -1}},
      {"_convolution", Kind::kConv, {3, 4, 5, 6}},
      {"_efficient_attention_backward", Kind::kFlashBackward},
      {"_efficient_attention_forward", Kind::kFlashForward},
      {"_flash_attention_backward", Kind::kFlashBackward},
      {"_flash_attention_forward", Kind::kFlashForward},
      {"_fused_rms_norm", Kind::kNorm},
      {"_log_softmax", Kind::kSoftmax},
      {"_native_batch_norm_legit", Kind::kNorm},
      {"_native_batch_norm_legit_no_training", Kind::kNorm},
      {"_nnpack_spatial_convolution", Kind::kConv, {4, 3, -1, -1}},
      {"_scaled_dot_product_cudnn_attention", Kind::kSdpa},
      {"_scaled_dot_product_cudnn_attention_backward", Kind::kSdpaBackward},
      {"_scaled_dot_product_efficient_attention", Kind::kSdpa},
      {"_scaled_dot_product_efficient_attention_backward", Kind::kSdpaBackward},
      {"_scaled_dot_product_flash_attention", Kind::kSdpa},
      {"_scaled_dot_product_flash_attention_backward", Kind::kSdpaBackward},
      {"_scaled_dot_product_flash_attention_for_cpu", Kind::kSdpa},
      {"_scaled_dot_product_flash_attention_for_cpu_backward", Kind::kSdpaBackward},
      {"_scaled_mm", Kind::kMm},
      {"_slow_conv2d_forward", Kind::kConv, {4, 5, -1, -1}},
      {"_softmax", Kind::kSoftmax},
      {"add", Kind::kBinary},
      {"add_", Kind::kBinary},
      {"addmm", Kind::kAddmm},
      {"baddbmm", Kind::kBaddbmm},
      {"batch_norm", Kind::kNorm},
      {"bmm", Kind::kBmm},
      {"conv1d", Kind::kConv, {3, 4, 5, -1}},
      {"conv2d", Kind::kConv, {3, 4, 5, -1}},
      {"conv3d", Kind::kConv, {3, 4, 5, -1}},
      {"conv_transpose1d", Kind::kConv, {3, 4, 7, kAlways}},
      {"conv_transpose2d", Kind::kConv, {3, 4, 7, kAlways}},
      {"conv_transpose3d", Kind::kConv, {3, 4, 7, kAlways}},
      {"convolution", Kind::kConv, {3, 4, 5, 6}},
      {"convolution_backward", Kind::kConvBackward},
      {"convolution_overrideable", Kind::kConv, {3, 4, 5, 6}},
      {"cudnn_convolution", Kind::kConv, {3, 2, 4, -1}},
      {"cudnn_convolution_transpose", Kind::kConv, {4, 2, 5, kAlways}},
      {"div", Kind::kBinary},
      {"div_", Kind::kBinary},
      {"elu", Kind::kUnary},
      {"exp", Kind::kUnary},
      {"gelu", Kind::kUnary},
      {"gelu_backward", Kind::kUnary},
      {"group_norm", Kind::kNorm},
      {"hardtanh", Kind::kUnary},
      {"layer_norm", Kind::kNorm},
      {"leaky_relu", Kind::kUnary},
      {"linear", Kind::kLinear},
      {"log_softmax", Kind::kSoftmax},
      {"matmul", Kind::kMatmul},
      {"miopen_convolution", Kind::kConv, {4, 3, 5, -1}},
      {"miopen_convolution_transpose", Kind::kConv, {5, 3, 6, kAlways}},
      {"miopen_depthwise_convolution", Kind::kConv, {4, 3, 5, -1}},
      {"mkldnn_convolution", Kind::kConv, {4, 3, 5, -1}},
      {"mm", Kind::kMm},
      {"mul", Kind::kBinary},
      {"mul_", Kind::kBinary},
      {"native_batch_norm", Kind::kNorm},
      {"native_group_norm", Kind::kNorm},
      {"native_layer_norm", Kind::kNorm},
      {"neg", Kind::kUnary},
      {"relu", Kind::kUnary},
      {"relu_", Kind::kUnary},
      {"rms_norm", Kind::kNorm},
      {"rsqrt", Kind::kUnary},
      {"sigmoid", Kind::kUnary},
      {"sigmoid_backward", Kind::kUnary},
      {"silu", Kind::kUnary},
      {"silu_", Kind::kUnary},
      {"silu_backward", Kind::kUnary},
      {"slow_conv_dilated2d", Kind::kConv, {4, 5, 6, -1}},
      {"softmax", Kind::kSoftmax},
      {"sub", Kind::kBinary},
      {"sub_", Kind::kBinary},
      {"tanh", Kind::kUnary},
      {"tanh_backward", Kind::kUnary},
      {"threshold_backward", Kind::kUnary},
  }};
  return f;
}();

static_assert(std::is_sorted(kFormulas.begin(), kFormulas.end(),
                             [](const Formula& a, const Formula& b) { return a.name < b.name; }));

const Formula* find_formula(std::string_view name) {
  constexpr std::string_view kPrefix = "aten::";
  if (name.substr(0, kPrefix.size()) != kPrefix) return nullptr;
  name.remove_prefix(kPrefix.size());
  auto it = std::lower_bound(kFormulas.begin(), kFormulas.end(), name,
                             [](const Formula& f, std::string_view n) { return f.name < n; });
  return it != kFormulas.end() && it->name == name ? &*it : nullptr;
}

const Shape* tensor(const OpInputs& in, size_t i) {
  if (i >= in.dims.size() || in.tensor_list[i]) return nullptr;
  return &in.dims[i];
}

// A concrete integer list argument; `fallback` when the entry has no such argument (position -1).
std::optional<std::vector<int64_t>> concrete_ints(const OpInputs& in, int position, int64_t fallback, size_t dims) {
  if (position < 0) return std::vector<int64_t>(dims, fallback);
  if (static_cast<size_t>(position) >= in.concrete.size()) return std::nullopt;
  auto v = parse_int_list(in.concrete[static_cast<size_t>(position)]);
  if (!v || v->empty()) return std::nullopt;
  if (v->size() == 1) v->resize(dims, (*v)[0]);  // conv2d(stride=2) records "2"
  if (v->size() != dims) return std::nullopt;
  return v;
}

std::optional<bool> concrete_bool(const OpInputs& in, size_t position) {
  if (position >= in.concrete.size()) return std::nullopt;
  if (in.concrete[position] == "True") return true;
  if (in.concrete[position] == "False") return false;
  return std::nullopt;
}

std::optional<int64_t> conv_forward(const OpInputs& in, const ConvArgs& a) {
  const Shape* x = tensor(in, 0);
  const Shape* w = tensor(in, 1);
  if (x == nullptr || w == nullptr || x->size() < 3 || w->size() != x->size()) return std::nullopt;
  bool transposed = a.transposed == kAlways;
  if (a.transposed >= 0) {
    auto t = concrete_bool(in, static_cast<size_t>(a.transposed));
    if (!t) return std::nullopt;
    transposed = *t;
  }
  // A transposed convolution's FLOPs follow the input's spatial size: no scalar is needed.
  if (transposed) return conv_flops(*x, *w, Shape(x->begin() + 2, x->end()));
  // Weight [Cout, Cin/groups, k...]: the input's channels are a whole number of groups of Cin/groups.
  // Anything else is no convolution PyTorch runs: refused, not counted.
  if ((*w)[1] <= 0 || (*x)[1] < 0 || (*x)[1] % (*w)[1] != 0) return std::nullopt;
  const size_t dims = x->size() - 2;
  // conv2d(padding="same") keeps the spatial size (stride 1 is then required by PyTorch).
  if (a.padding >= 0 && static_cast<size_t>(a.padding) < in.concrete.size() &&
      in.concrete[static_cast<size_t>(a.padding)] == "same") {
    return conv_flops(*x, *w, Shape(x->begin() + 2, x->end()));
  }
  auto stride = concrete_ints(in, a.stride, 1, dims);
  auto padding = concrete_ints(in, a.padding, 0, dims);
  if (!padding && a.padding >= 0 && static_cast<size_t>(a.padding) < in.concrete.size() &&
      in.concrete[static_cast<size_t>(a.padding)] == "valid") {
    padding = std::vector<int64_t>(dims, 0);
  }
  auto dilation = concrete_ints(in, a.dilation, 1, dims);
  if (!stride || !padding || !dilation) return std::nullopt;
  auto out = conv_output_spatial(*x, *w, *stride, *padding, *dilation);
  if (!out) return std::nullopt;
  return conv_flops(*x, *w, *out);
}

// [B, S, H, D] -> [B, H, S, D].
Shape bshd_to_bhsd(const Shape& s) {
  return s.size() == 4 ? Shape{s[0], s[2], s[1], s[3]} : s;
}

// The dtype that decides a call's peak: its first tensor's (addmm's and baddbmm's bias may be
// another type), from `Input type`.
FlopDtype dtype_at(const OpInputs& in, size_t i) {
  return i < in.types.size() ? flop_dtype_of(in.types[i]) : FlopDtype::kOther;
}

}  // namespace

std::string_view flop_class_name(FlopClass c) {
  switch (c) {
    case FlopClass::kMatmul:
      return "matmul";
    case FlopClass::kConvolution:
      return "convolution";
    case FlopClass::kAttention:
      return "attention";
    case FlopClass::kElementwise:
      return "elementwise";
    case FlopClass::kNormalization:
      return "normalization";
  }
  return "?";
}

std::string_view flop_dtype_name(FlopDtype d) {
  switch (d) {
    case FlopDtype::kFp32:
      return "fp32";
    case FlopDtype::kFp64:
      return "fp64";
    case FlopDtype::kFp16:
      return "fp16";
    case FlopDtype::kBf16:
      return "bf16";
    case FlopDtype::kFp8:
      return "fp8";
    case FlopDtype::kInt8:
      return "int8";
    case FlopDtype::kOther:
      return "other";
    case FlopDtype::kTf32:
      return "tf32";
  }
  return "?";
}

FlopDtype flop_dtype_of(std::string_view t) {
  if (t == "float") return FlopDtype::kFp32;
  if (t == "double") return FlopDtype::kFp64;
  if (t == "c10::Half") return FlopDtype::kFp16;
  if (t == "c10::BFloat16") return FlopDtype::kBf16;
  if (t.find("Float8") != std::string_view::npos) return FlopDtype::kFp8;
  if (t == "signed char" || t == "unsigned char") return FlopDtype::kInt8;
  return FlopDtype::kOther;
}

std::optional<std::vector<int64_t>> parse_int_list(std::string_view text) {
  Cursor c(text);
  std::vector<int64_t> out;
  if (c.peek() != '[') {
    int64_t v = 0;
    if (!c.integer(&v) || !c.at_end()) return std::nullopt;
    out.push_back(v);
    return out;
  }
  c.eat('[');
  if (c.eat(']')) return c.at_end() ? std::optional(out) : std::nullopt;
  do {
    int64_t v = 0;
    if (!c.integer(&v)) return std::nullopt;
    out.push_back(v);
  } while (c.eat(','));
  if (!c.eat(']') || !c.at_end()) return std::nullopt;
  return out;
}

std::optional<OpInputs> parse_op_inputs(std::string_view input_dims, std::string_view input_types,
                                        std::string_view concrete_inputs) {
  OpInputs in;
  Cursor c(input_dims);
  if (!c.eat('[')) return std::nullopt;
  if (!c.eat(']')) {
    do {
      if (c.peek() != '[') return std::nullopt;
      // A tensor list: a list whose first element is a list.
      Cursor probe = c;
      probe.eat('[');
      if (probe.peek() == '[') {
        if (!c.skip_list()) return std::nullopt;
        in.dims.emplace_back();
        in.tensor_list.push_back(true);
        continue;
      }
      c.eat('[');
      Shape s;
      if (!c.eat(']')) {
        do {
          int64_t v = 0;
          if (!c.integer(&v)) return std::nullopt;
          s.push_back(v);
        } while (c.eat(','));
        if (!c.eat(']')) return std::nullopt;
      }
      in.dims.push_back(std::move(s));
      in.tensor_list.push_back(false);
    } while (c.eat(','));
    if (!c.eat(']')) return std::nullopt;
  }
  if (!c.at_end()) return std::nullopt;
  if (auto t = parse_string_list(input_types)) in.types = std::move(*t);
  if (auto t = parse_string_list(concrete_inputs)) in.concrete = std::move(*t);
  return in;
}

std::optional<int64_t> mm_flops(const Shape& a, const Shape& b) {
  if (a.size() != 2 || b.size() != 2 || a[1] != b[0]) return std::nullopt;
  Product p;
  p *= a[0];
  p *= b[1];
  p *= 2;
  p *= a[1];
  return p.get();
}

std::optional<int64_t> bmm_flops(const Shape& a, const Shape& b) {
  if (a.size() != 3 || b.size() != 3 || a[0] != b[0] || a[2] != b[1]) return std::nullopt;
  Product p;
  p *= a[0];
  p *= a[1];
  p *= b[2];
  p *= 2;
  p *= a[2];
  return p.get();
}

std::optional<int64_t> broadcast_numel(const std::vector<const Shape*>& shapes) {
  size_t rank = 0;
  for (const Shape* s : shapes) rank = std::max(rank, s->size());
  Product p;
  for (size_t i = 0; i < rank; ++i) {
    int64_t d = 1;
    for (const Shape* s : shapes) {
      if (i >= s->size()) continue;
      const int64_t x = (*s)[s->size() - 1 - i];
      if (x == 1) continue;
      if (d != 1 && x != d) return std::nullopt;
      d = x;
    }
    p *= d;
  }
  return p.get();
}

std::optional<int64_t> matmul_flops(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) return std::nullopt;
  // A 1-d operand is a row (left) or a column (right) vector, its dimension dropped afterwards.
  const int64_t m = a.size() >= 2 ? a[a.size() - 2] : 1;
  const int64_t k = a.back();
  const int64_t k2 = b.size() >= 2 ? b[b.size() - 2] : b[0];
  const int64_t n = b.size() >= 2 ? b.back() : 1;
  if (k != k2) return std::nullopt;
  const Shape batch_a(a.begin(), a.end() - std::min<ptrdiff_t>(2, static_cast<ptrdiff_t>(a.size())));
  const Shape batch_b(b.begin(), b.end() - std::min<ptrdiff_t>(2, static_cast<ptrdiff_t>(b.size())));
  auto batch = broadcast_numel({&batch_a, &batch_b});
  if (!batch) return std::nullopt;
  Product p;
  p *= *batch;
  p *= m;
  p *= n;
  p *= 2;
  p *= k;
  return p.get();
}

std::optional<int64_t> linear_flops(const Shape& input, const Shape& weight) {
  if (input.empty() || weight.empty() || weight.size() > 2) return std::nullopt;
  const int64_t k = input.back();
  if (weight.back() != k) return std::nullopt;
  const int64_t n = weight.size() == 2 ? weight[0] : 1;
  Product p;
  for (size_t i = 0; i + 1 < input.size(); ++i) p *= input[i];
  p *= n;
  p *= 2;
  p *= k;
  return p.get();
}

std::optional<Shape> conv_output_spatial(const Shape& x, const Shape& w, const std::vector<int64_t>& stride,
                                         const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation) {
  if (x.size() < 3 || w.size() != x.size()) return std::nullopt;
  const size_t dims = x.size() - 2;
  if (stride.size() != dims || padding.size() != dims || dilation.size() != dims) return std::nullopt;
  Shape out(dims);
  for (size_t i = 0; i < dims; ++i) {
    const int64_t in = x[i + 2];
    const int64_t k = w[i + 2];
    const int64_t s = stride[i];
    const int64_t p = padding[i];
    const int64_t d = dilation[i];
    // Bounds keep the arithmetic below far from overflow in 128 bits (dilation x kernel alone passes
    // int64: issue 30, UBSan's signed overflow, and a wrapped span made an impossible convolution
    // count 335 M FLOPs); real values are tiny. A kernel of size 0 is no convolution.
    constexpr int64_t kMax = int64_t{1} << 40;
    if (s <= 0 || p < 0 || d <= 0 || k <= 0 || in < 0 || in > kMax || k > kMax || p > kMax || d > kMax) {
      return std::nullopt;
    }
    const __int128 span = __int128{in} + 2 * __int128{p} - __int128{d} * (k - 1) - 1;
    if (span < 0) return std::nullopt;  // the kernel, dilated, is larger than the padded input
    out[i] = static_cast<int64_t>(span / s) + 1;
  }
  return out;
}

std::optional<int64_t> conv_flops(const Shape& x, const Shape& w, const Shape& conv_spatial) {
  if (x.empty() || w.size() < 2) return std::nullopt;
  Product p;
  for (int64_t d : conv_spatial) p *= d;
  for (size_t i = 2; i < w.size(); ++i) p *= w[i];
  p *= x[0];
  p *= w[0];
  p *= w[1];
  p *= 2;
  return p.get();
}

std::optional<int64_t> conv_backward_flops(const Shape& grad_out, const Shape& x, const Shape& w, bool transposed,
                                           bool grad_input, bool grad_weight) {
  if (grad_out.size() < 3 || x.size() != grad_out.size() || w.size() != grad_out.size()) return std::nullopt;
  auto t = [](const Shape& s) {
    Shape r = s;
    std::swap(r[0], r[1]);
    return r;
  };
  auto spatial = [](const Shape& s) { return Shape(s.begin() + 2, s.end()); };
  Product total;
  total *= 0;
  if (grad_input) {
    // conv_flop_count(grad_out, w, grad_input_shape (= x), not transposed): the spatial size is
    // grad_out's when that call is transposed (forward not transposed), the input's otherwise.
    total.add(conv_flops(grad_out, w, transposed ? spatial(x) : spatial(grad_out)));
  }
  if (grad_weight) {
    // grad_weight has the weight's shape; t() swaps its first two dimensions.
    if (transposed) {
      total.add(conv_flops(t(grad_out), t(x), spatial(w)));
    } else {
      total.add(conv_flops(t(x), t(grad_out), spatial(w)));
    }
  }
  return total.get();
}

std::optional<int64_t> sdpa_flops(const Shape& q, const Shape& k, const Shape& v) {
  if (q.size() != 4 || k.size() != 4 || v.size() != 4) return std::nullopt;
  const int64_t b = q[0], hq = q[1], sq = q[2], dq = q[3];
  const int64_t hkv = k[1], sk = k[2], dv = v[3];
  if (k[0] != b || v[0] != b || v[1] != hkv || k[3] != dq || v[2] != sk) return std::nullopt;
  if (hkv <= 0 || hq < hkv || hq % hkv != 0) return std::nullopt;
  const auto bh = times(b, hq);
  if (!bh) return std::nullopt;
  Product p;
  p *= 0;
  p.add(bmm_flops({*bh, sq, dq}, {*bh, dq, sk}));
  p.add(bmm_flops({*bh, sq, sk}, {*bh, sk, dv}));
  return p.get();
}

std::optional<int64_t> sdpa_backward_flops(const Shape& grad_out, const Shape& q, const Shape& k, const Shape& v) {
  if (q.size() != 4 || k.size() != 4 || v.size() != 4 || grad_out.size() != 4) return std::nullopt;
  const int64_t b = q[0], hq = q[1], sq = q[2], dq = q[3];
  const int64_t hkv = k[1], sk = k[2], dv = v[3];
  if (k[0] != b || v[0] != b || grad_out[0] != b || v[1] != hkv || grad_out[1] != hq) return std::nullopt;
  if (k[3] != dq || grad_out[3] != dv || v[2] != sk || grad_out[2] != sq) return std::nullopt;
  if (hkv <= 0 || hq < hkv || hq % hkv != 0) return std::nullopt;
  const auto bh = times(b, hq);
  if (!bh) return std::nullopt;
  Product p;
  p *= 0;
  p.add(bmm_flops({*bh, sq, dq}, {*bh, dq, sk}));
  p.add(bmm_flops({*bh, sq, dv}, {*bh, dv, sk}));
  p.add(bmm_flops({*bh, sk, sq}, {*bh, sq, dv}));
  p.add(bmm_flops({*bh, sq, sk}, {*bh, sk, dq}));
  p.add(bmm_flops({*bh, dq, sq}, {*bh, sq, sk}));
  return p.get();
}

bool has_flop_formula(std::string_view name) {
  return find_formula(name) != nullptr;
}

std::optional<OpFlops> op_flops(std::string_view name, const OpInputs& in) {
  const Formula* f = find_formula(name);
  if (f == nullptr) return std::nullopt;
  const Shape* t0 = tensor(in, 0);
  const Shape* t1 = tensor(in, 1);
  const Shape* t2 = tensor(in, 2);
  const Shape* t3 = tensor(in, 3);
  OpFlops out;
  out.dtype = dtype_at(in, 0);
  std::optional<int64_t> flops;
  switch (f->kind) {
    case Kind::kMm:
      out.cls = FlopClass::kMatmul;
      if (t0 && t1) flops = mm_flops(*t0, *t1);
      break;
    case Kind::kAddmm:
      out.cls = FlopClass::kMatmul;
      out.dtype = dtype_at(in, 1);
      if (t1 && t2) flops = mm_flops(*t1, *t2);
      break;
    case Kind::kBmm:
      out.cls = FlopClass::kMatmul;
      if (t0 && t1) flops = bmm_flops(*t0, *t1);
      break;
    case Kind::kBaddbmm:
      out.cls = FlopClass::kMatmul;
      out.dtype = dtype_at(in, 1);
      if (t1 && t2) flops = bmm_flops(*t1, *t2);
      break;
    case Kind::kMatmul:
      out.cls = FlopClass::kMatmul;
      if (t0 && t1) flops = matmul_flops(*t0, *t1);
      break;
    case Kind::kLinear:
      out.cls = FlopClass::kMatmul;
      if (t0 && t1) flops = linear_flops(*t0, *t1);
      break;
    case Kind::kConv:
      out.cls = FlopClass::kConvolution;
      flops = conv_forward(in, f->conv);
      break;
    case Kind::kConvBackward: {
      // (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
      //  output_padding, groups, output_mask)
      out.cls = FlopClass::kConvolution;
      const auto transposed = concrete_bool(in, 7);
      bool grad_input = true, grad_weight = true;  // without Concrete Inputs: both, as is usual
      if (in.concrete.size() > 10) {
        // "[True, True, True]": grad_input, grad_weight, grad_bias.
        const std::string& mask = in.concrete[10];
        std::vector<bool> bits;
        for (size_t pos = 0; (pos = mask.find_first_of("TF", pos)) != std::string::npos; ++pos) {
          bits.push_back(mask[pos] == 'T');
          pos = mask.find_first_of(",]", pos);
          if (pos == std::string::npos) break;
        }
        if (bits.size() >= 2) {
          grad_input = bits[0];
          grad_weight = bits[1];
        }
      }
      if (t0 && t1 && t2)
        flops = conv_backward_flops(*t0, *t1, *t2, transposed.value_or(false), grad_input, grad_weight);
      break;
    }
    case Kind::kSdpa:
      out.cls = FlopClass::kAttention;
      // torch's FlopCounterMode has no entry for the CPU flash kernel (torch/utils/flop_counter.py):
      // it counts the call 0, so flop_counter_flops leaves it out while FLOPs keep its work.
      out.flop_counter = !name.ends_with("_for_cpu");
      if (t0 && t1 && t2) flops = sdpa_flops(*t0, *t1, *t2);
      break;
    case Kind::kSdpaBackward:
      out.cls = FlopClass::kAttention;
      out.flop_counter = !name.ends_with("_for_cpu_backward");
      out.dtype = dtype_at(in, 1);
      if (t0 && t1 && t2 && t3) flops = sdpa_backward_flops(*t0, *t1, *t2, *t3);
      break;
    case Kind::kFlashForward:
      out.cls = FlopClass::kAttention;
      if (t0 && t1 && t2) flops = sdpa_flops(bshd_to_bhsd(*t0), bshd_to_bhsd(*t1), bshd_to_bhsd(*t2));
      break;
    case Kind::kFlashBackward:
      out.cls = FlopClass::kAttention;
      out.dtype = dtype_at(in, 1);
      if (t0 && t1 && t2 && t3) {
        flops = sdpa_backward_flops(bshd_to_bhsd(*t0), bshd_to_bhsd(*t1), bshd_to_bhsd(*t2), bshd_to_bhsd(*t3));
      }
      break;
    case Kind::kBinary: {
      out.cls = FlopClass::kElementwise;
      std::vector<const Shape*> operands;
      for (size_t i = 0; i < std::min<size_t>(in.dims.size(), 2); ++i) {
        if (const Shape* s = tensor(in, i)) operands.push_back(s);
      }
      if (!operands.empty()) flops = broadcast_numel(operands);
      break;
    }
    case Kind::kUnary:
      out.cls = FlopClass::kElementwise;
      if (t0) flops = numel(*t0);
      break;
    case Kind::kSoftmax:
      out.cls = FlopClass::kElementwise;
      if (t0) flops = times(numel(*t0), 5);
      break;
    case Kind::kNorm:
      out.cls = FlopClass::kNormalization;
      if (t0) flops = times(numel(*t0), 5);
      break;
  }
  if (!flops) return std::nullopt;
  out.flops = *flops;
  return out;
}

}  // namespace scaleprof::analysis
