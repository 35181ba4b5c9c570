// `scaleprof trace flops` (issue 23): FLOPs from recorded shapes (analysis/flops.h), achieved
// FLOP/s and MFU against the device's peak (analysis/device_peaks.h), per rank, per step, per
// operator and per kernel; the per-rank table is also summary's FLOPs line. docs/flops.md.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "analysis/device_peaks.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The peaks one rank's MFU is taken against: --peak-tflops for every dtype, else the table's row for
// --device or the trace's device name.
struct RankPeak {
  const analysis::DevicePeak* device = nullptr;
  double override_tflops = 0;

  double tflops(analysis::FlopDtype d) const {
    if (override_tflops > 0) return override_tflops;
    if (device == nullptr) return kNaN;
    const double p = device->tflops[static_cast<size_t>(d)];
    return p > 0 ? p : kNaN;
  }
  std::string label() const {
    if (override_tflops > 0) return fmt::format("--peak-tflops {}", override_tflops);
    return device != nullptr ? std::string(device->name) : std::string("none");
  }
};

RankPeak peak_of(const engine::RankFlopsResult& f, const TraceReportOptions& options) {
  RankPeak p;
  p.override_tflops = options.peak_tflops;
  p.device = analysis::find_device_peak(options.flops_device.empty() ? f.device : options.flops_device);
  return p;
}

// Achieved FLOP/s in TFLOP/s; null without time or with FLOPs past int64 (unknown).
Cell tflops_cell(int64_t flops, int64_t ns) {
  if (ns <= 0 || is_unknown_figure(flops)) return Cell::null();
  return Cell(static_cast<double>(flops) / static_cast<double>(ns) / 1e3, 4);
}

// MFU in percent: the time the FLOPs would take at each dtype's peak over the time they took. Null
// when some of them have no peak (a CPU trace, fp8 on an A100) or there is no time.
Cell mfu_cell(const analysis::DtypeFlops& by_dtype, int64_t ns, const RankPeak& peak) {
  if (ns <= 0) return Cell::null();
  double ideal_s = 0;
  bool any = false;
  for (int d = 0; d < analysis::kFlopDtypeCount; ++d) {
    if (by_dtype[static_cast<size_t>(d)] == 0) continue;
    if (is_unknown_figure(by_dtype[static_cast<size_t>(d)])) return Cell::null();
    const double p = peak.tflops(static_cast<analysis::FlopDtype>(d));
    if (!std::isfinite(p)) return Cell::null();
    ideal_s += static_cast<double>(by_dtype[static_cast<size_t>(d)]) / (p * 1e12);
    any = true;
  }
  if (!any) return Cell::null();
  return pct_cell(100.0 * ideal_s / (static_cast<double>(ns) / 1e9));
}

analysis::DtypeFlops one_dtype(analysis::FlopClass cls, analysis::FlopDtype dtype, int64_t flops) {
  analysis::DtypeFlops out{};
  // MFU is of the FLOPs a device's peak is quoted for: matmul, convolution, attention.
  if (analysis::is_flop_counter_class(cls)) out[static_cast<size_t>(dtype)] = flops;
  return out;
}

int64_t steps_ns(const analysis::RankFlops& f) {
  int64_t ns = 0;
  for (const analysis::FlopStep& s : f.steps) ns += s.duration_ns();  // disjoint windows of one trace: bounded
  return ns;
}

// Whether some FLOPs figure of the selected ranks is unknown (a sum past int64: analysis/flops.h).
bool any_flops_unknown(const engine::RankStore& all) {
  bool any = false;
  all->for_each([&](const engine::RankResults& r) {
    if (!r.flops) return;
    const analysis::RankFlops& f = r.flops->flops;
    any |= is_unknown_figure(f.flops) || is_unknown_figure(f.flop_counter_flops);
    for (int64_t v : f.compute_flops) any |= is_unknown_figure(v);
    for (const analysis::FlopStep& s : f.steps) any |= is_unknown_figure(s.flops);
    for (const analysis::FlopOperator& o : f.operators) any |= is_unknown_figure(o.flops);
    for (const analysis::FlopKernel& k : f.kernels) any |= is_unknown_figure(k.flops);
  });
  return any;
}

Table ranks_table(const engine::RankStore& all, const TraceReportOptions& options) {
  Table t;
  t.title = "FLOPs per rank (from recorded shapes; MFU of the matmul, convolution and attention FLOPs)";
  t.columns = {{"rank", "Rank"},
               {"device", "Device"},
               {"peak", "Peak from"},
               {"shaped_calls", "Calls with shapes"},
               {"counted_calls", "Counted calls"},
               {"unmodelled_calls", "Unmodelled calls"},
               {"flops", "FLOPs"},
               {"flop_counter_flops", "Matmul/conv/attn FLOPs"},
               {"time_basis", "Time of"},
               {"time_us", "Time (us)"},
               {"tflops", "TFLOP/s"},
               {"mfu_pct", "MFU (%)"}};
  t.set_importance(Importance::kKey, {"rank"});
  t.set_importance(Importance::kUseful, {"device", "peak", "time_basis", "flop_counter_flops"});
  t.set_importance(Importance::kDetail, {"shaped_calls", "counted_calls", "unmodelled_calls"});
  t.row_source = [all, options](const RowVisitor& visit) {
    all->for_each([&](const engine::RankResults& r) {
      const engine::RankFlopsResult& fr = *r.flops;
      const analysis::RankFlops& f = fr.flops;
      const RankPeak peak = peak_of(fr, options);
      // With steps: the FLOPs inside them over their wall time; else every FLOP over the trace's span.
      int64_t flops = f.flops;
      int64_t ns = f.span_ns;
      analysis::DtypeFlops compute = f.compute_flops;
      std::string basis = "trace span";
      if (!f.steps.empty()) {
        flops = 0;
        compute = {};
        for (const analysis::FlopStep& s : f.steps) {
          add_or_unknown(&flops, s.flops);  // checked: unknown past int64, never wrapped
          for (size_t d = 0; d < compute.size(); ++d) add_or_unknown(&compute[d], s.compute_flops[d]);
        }
        ns = steps_ns(f);
        basis = fmt::format("{} step{}", f.steps.size(), f.steps.size() == 1 ? "" : "s");
      }
      visit({r.rank, fr.device.empty() ? Cell("none") : Cell(fr.device), peak.label(), f.shaped_calls, f.counted_calls,
             f.unmodelled_calls, figure_cell(f.flops), figure_cell(f.flop_counter_flops), basis, us_cell(ns),
             tflops_cell(flops, ns), mfu_cell(compute, ns, peak)});
    });
  };
  return t;
}

Table steps_table(const engine::RankStore& all, const TraceReportOptions& options) {
  Table t;
  t.title = "FLOPs per ProfilerStep";
  t.columns = {{"rank", "Rank"},      {"step", "Step"},   {"duration_us", "Duration (us)"},
               {"calls", "Calls"},    {"flops", "FLOPs"}, {"tflops", "TFLOP/s"},
               {"mfu_pct", "MFU (%)"}};
  t.set_importance(Importance::kKey, {"rank", "step"});
  t.set_importance(Importance::kDetail, {"calls"});
  t.row_source = [all, options](const RowVisitor& visit) {
    all->for_each([&](const engine::RankResults& r) {
      const RankPeak peak = peak_of(*r.flops, options);
      for (const analysis::FlopStep& s : r.flops->flops.steps) {
        visit({r.rank, s.step, us_cell(s.duration_ns()), s.calls, figure_cell(s.flops),
               tflops_cell(s.flops, s.duration_ns()), mfu_cell(s.compute_flops, s.duration_ns(), peak)});
      }
    });
  };
  return t;
}

Table operators_table(const engine::RankStore& all, const TraceReportOptions& options) {
  Table t;
  t.title = "FLOPs per operator (the counted calls; time: their kernels', or their own on a CPU trace)";
  t.columns = {{"rank", "Rank"},       {"operator", "Operator"}, {"class", "Class"},        {"dtype", "Dtype"},
               {"calls", "Calls"},     {"flops", "FLOPs"},       {"time_basis", "Time of"}, {"time_us", "Time (us)"},
               {"kernels", "Kernels"}, {"tflops", "TFLOP/s"},    {"mfu_pct", "MFU (%)"}};
  t.set_importance(Importance::kKey, {"rank", "operator"});
  t.set_importance(Importance::kUseful, {"class", "dtype"});
  t.set_importance(Importance::kDetail, {"time_basis", "kernels"});
  t.row_source = [all, options](const RowVisitor& visit) {
    all->for_each([&](const engine::RankResults& r) {
      const RankPeak peak = peak_of(*r.flops, options);
      const bool device = r.flops->flops.has_device;
      for (const analysis::FlopOperator& o : r.flops->flops.operators) {
        const int64_t ns = device ? o.device_ns : o.host_ns;
        visit({r.rank, o.name, std::string(analysis::flop_class_name(o.cls)),
               std::string(analysis::flop_dtype_name(o.dtype)), o.calls, figure_cell(o.flops),
               device ? "device" : "host", us_cell(ns), o.kernels, tflops_cell(o.flops, ns),
               mfu_cell(one_dtype(o.cls, o.dtype, o.flops), ns, peak)});
      }
    });
  };
  return t;
}

Table kernels_table(const engine::RankStore& all, const TraceReportOptions& options) {
  Table t;
  t.title = "FLOPs per kernel (from calls that launched one kernel)";
  t.columns = {{"rank", "Rank"},      {"kernel", "Kernel"}, {"class", "Class"},           {"dtype", "Dtype"},
               {"calls", "Calls"},    {"flops", "FLOPs"},   {"device_us", "Device (us)"}, {"tflops", "TFLOP/s"},
               {"mfu_pct", "MFU (%)"}};
  t.set_importance(Importance::kKey, {"rank", "kernel"});
  t.set_importance(Importance::kUseful, {"class", "dtype"});
  t.row_source = [all, options](const RowVisitor& visit) {
    all->for_each([&](const engine::RankResults& r) {
      const RankPeak peak = peak_of(*r.flops, options);
      for (const analysis::FlopKernel& k : r.flops->flops.kernels) {
        visit({r.rank, k.name, std::string(analysis::flop_class_name(k.cls)),
               std::string(analysis::flop_dtype_name(k.dtype)), k.calls, figure_cell(k.flops), us_cell(k.device_ns),
               tflops_cell(k.flops, k.device_ns), mfu_cell(one_dtype(k.cls, k.dtype, k.flops), k.device_ns, peak)});
      }
    });
  };
  return t;
}

}  // namespace

TraceReport flops_tables(const engine::RankStore& ranks, const TraceReportOptions& options, bool ranks_only) {
  TraceReport report;
  if (ranks_only) {
    // summary: the line only where some rank has shapes with formulas (traces without
    // record_shapes get no empty table).
    bool any = false;
    ranks->for_each([&](const engine::RankResults& r) { any |= r.flops && r.flops->flops.counted_calls > 0; });
    if (any) report.add("flops", ranks_table(ranks, options));
    if (any && any_flops_unknown(ranks)) report.tables.back().title += kUnknownFigureNote;
    return report;
  }
  report.add("flops_ranks", ranks_table(ranks, options));
  report.add("flops_steps", steps_table(ranks, options));
  report.add("flops_operators", operators_table(ranks, options));
  report.add("flops_kernels", kernels_table(ranks, options));
  TraceReport deepspeed = deepspeed_tables(ranks, options);
  for (size_t i = 0; i < deepspeed.tables.size(); ++i) report.add(deepspeed.keys[i], std::move(deepspeed.tables[i]));
  if (any_flops_unknown(ranks)) {
    for (Table& t : report.tables) t.title += kUnknownFigureNote;
  }
  return report;
}

}  // namespace scaleprof::report
