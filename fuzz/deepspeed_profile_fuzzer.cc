// libFuzzer target for DeepSpeed's flops profiler output (trace/deepspeed_profile.h, issue 31): any
// bytes give a profile or one line of error naming the file (and its line), never a crash, hang or
// sanitizer report. An accepted profile must be a tree (every parent before its child, depth within
// the bound) of finite, non-negative figures; it is then paired (analysis/deepspeed_compare.h) with a
// trace module tree made from the profile itself, where every module must find its own twin.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/deepspeed_compare.h"
#include "analysis/module_flops.h"
#include "trace/deepspeed_profile.h"

namespace {

bool good(const scaleprof::trace::DsFigure& f) {
  return std::isfinite(f.value) && f.value >= 0 && std::isfinite(f.rounding) && f.rounding >= 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace scaleprof;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = trace::parse_deepspeed_profile(text, "fuzz");
  if (!parsed) {
    const std::string& m = parsed.error().message;
    if (m.find('\n') != std::string::npos || m.rfind("fuzz", 0) != 0) __builtin_trap();
    return 0;
  }
  const trace::DsProfile& p = parsed.value();
  for (const trace::DsFigure& f : {p.params, p.fwd_macs, p.fwd_flops, p.fwd_latency_s}) {
    if (!good(f)) __builtin_trap();
  }
  // The same tree as the trace would show it: one module per DeepSpeed module with a call of its own
  // (ModuleList and ModuleDict have none: their children hang from their parent), `repeat` copies.
  analysis::ModuleFlops trace;
  std::vector<int64_t> node_of(p.modules.size(), -1);
  for (size_t i = 0; i < p.modules.size(); ++i) {
    const trace::DsModule& m = p.modules[i];
    if (m.parent >= static_cast<int64_t>(i) || (i > 0) != (m.parent >= 0)) __builtin_trap();
    if (m.depth > trace::kMaxDsDepth || m.repeat < 1) __builtin_trap();
    if (m.has_figures &&
        (!good(m.params) || !good(m.macs) || !good(m.latency_s) || !good(m.flops_per_s) || !good(m.flops()))) {
      __builtin_trap();
    }
    if (trace::ds_module_path(p, i).size() > (trace::kMaxDsNameBytes + 1) * (trace::kMaxDsDepth + 1)) __builtin_trap();
    if (analysis::is_forwardless_container(m.cls) || p.modules.size() > 2000) continue;
    int64_t parent = -1;
    for (int64_t a = m.parent; a >= 0; a = p.modules[static_cast<size_t>(a)].parent) {
      if (node_of[static_cast<size_t>(a)] >= 0) {
        parent = node_of[static_cast<size_t>(a)];
        break;
      }
    }
    if (m.repeat > 4 || (parent < 0 && i > 0)) continue;
    node_of[i] = static_cast<int64_t>(trace.modules.size());
    for (int64_t k = 0; k < m.repeat; ++k) {
      analysis::TraceModule t;
      t.name = m.cls + "_" + std::to_string(trace.modules.size());
      t.cls = m.cls;
      t.parent = parent;
      t.depth = parent < 0 ? 0 : trace.modules[static_cast<size_t>(parent)].depth + 1;
      t.calls = 1;
      t.flops = 1;
      trace.modules.push_back(t);
    }
  }
  const analysis::DsComparison c = analysis::compare_with_deepspeed(p, trace);
  if (c.modules.size() != p.modules.size()) __builtin_trap();
  if (!p.modules.empty() && !trace.modules.empty() && c.root != 0) __builtin_trap();
  (void)analysis::compare_with_deepspeed(p, analysis::ModuleFlops{});
  return 0;
}
