// `scaleprof trace flops --deepspeed-profile FILE` (issue 31): DeepSpeed's flops profiler beside the
// trace's FLOPs of the same run, in total and per module (analysis/deepspeed_compare.h), per forward
// pass. docs/flops.md, "DeepSpeed's flops profiler".
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "analysis/deepspeed_compare.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

// (trace - DeepSpeed) / DeepSpeed in percent; 0 when both are 0, null when only DeepSpeed's is.
Cell difference_cell(double trace, double ds) {
  if (!std::isfinite(trace) || !std::isfinite(ds)) return Cell::null();
  if (ds == 0) return trace == 0 ? Cell(0.0, 2) : Cell::null();
  return pct_cell(100.0 * (trace - ds) / ds);
}

// Whether the trace's figure lies within what DeepSpeed's printed figure may stand for: "yes", "no",
// or "unknown" where the printed figure is too coarse to say (its rounding past 1 % of it and past
// half a FLOP: a module's FLOP/s printed "0 FLOPS" over a long latency, as the DeepSpeed engine's root
// module shows, stands for anything up to millions of FLOPs).
Cell agrees_cell(double trace, const trace::DsFigure& ds, double forwards) {
  if (!std::isfinite(trace)) return Cell::null();
  const double value = ds.value / forwards;
  const double rounding = ds.rounding / forwards;
  if (rounding > std::max(0.01 * std::fabs(value), 0.5)) return "unknown";
  // The printed rounding, plus one part in 10^12 for the division by the forward passes.
  return std::fabs(trace - value) <= rounding + 1e-12 * std::fabs(value) ? "yes" : "no";
}

double per_forward(int64_t figure, int64_t forwards) {
  if (is_unknown_figure(figure) || forwards <= 0) return std::nan("");
  return static_cast<double>(figure) / static_cast<double>(forwards);
}

Cell number_cell(double v, int digits) {
  return std::isfinite(v) ? Cell(v, digits) : Cell::null();
}

std::string match_text(const trace::DsModule& m, const analysis::DsModuleMatch& row, bool root_found) {
  if (!root_found) return "no nn.Module events of its root class (record with with_stack=True)";
  if (row.container) return row.instances > 0 ? "container: its children's" : "container: children not in the trace";
  if (row.instances == 0) return "not in the trace";
  std::string how = row.by_order ? "by class and order" : "by class";
  if (row.instances < row.expected) how += fmt::format(" ({} of {} in the trace)", row.instances, row.expected);
  (void)m;
  return how;
}

Table totals_table(const engine::RankStore& all, const TraceReportOptions& options) {
  const trace::DsProfile& ds = *options.deepspeed;
  Table t;
  t.title = fmt::format(
      "DeepSpeed's flops profiler ({}, step {}) beside the trace's forward FLOPs, per forward pass (DeepSpeed's "
      "figures over {} forward pass{}; agrees: within DeepSpeed's printed rounding)",
      ds.path, ds.profile_step, options.deepspeed_forwards, options.deepspeed_forwards == 1 ? "" : "es");
  t.columns = {{"rank", "Rank"},
               {"ds_params", "DS params"},
               {"ds_fwd_macs", "DS fwd MACs"},
               {"ds_fwd_flops", "DS fwd FLOPs"},
               {"ds_forwards", "DS forwards"},
               {"ds_flops_per_forward", "DS FLOPs/forward"},
               {"trace_scope", "Trace FLOPs of"},
               {"trace_forwards", "Trace forwards"},
               {"trace_forwards_basis", "Forwards from"},
               {"trace_flops_per_forward", "Trace FLOPs/forward"},
               {"difference_pct", "Difference (%)"},
               {"agrees", "Agrees"},
               {"ds_latency_us_per_forward", "DS latency/forward (us)"},
               {"trace_time_us_per_forward", "Trace time/forward (us)"},
               {"trace_all_flops", "Trace FLOPs, all (window)"}};
  t.set_importance(Importance::kKey, {"rank"});
  t.set_importance(Importance::kUseful, {"ds_params", "ds_fwd_macs", "trace_scope", "trace_forwards_basis",
                                         "ds_latency_us_per_forward", "trace_time_us_per_forward"});
  t.set_importance(Importance::kDetail, {"ds_fwd_flops", "ds_forwards", "trace_all_flops"});
  const auto profile = options.deepspeed;
  const int64_t k = options.deepspeed_forwards;
  t.row_source = [all, profile, k](const RowVisitor& visit) {
    const trace::DsProfile& p = *profile;
    all->for_each([&](const engine::RankResults& r) {
      if (!r.flops || !r.flops->modules) return;
      const analysis::ModuleFlops& m = *r.flops->modules;
      const analysis::DsComparison c = analysis::compare_with_deepspeed(p, m);
      const double kd = static_cast<double>(k);
      const double trace_pf = per_forward(c.trace_flops, c.forwards);
      std::string scope = c.root >= 0 ? "nn.Module: " + m.modules[static_cast<size_t>(c.root)].name
                                      : std::string("outside backward, optimizer and data loading");
      std::string basis = c.forwards_counted ? "calls of the root module"
                          : m.steps > 0      ? "ProfilerSteps (one forward each assumed)"
                                             : "the whole trace (one forward assumed)";
      visit({r.rank, number_cell(p.params.value, 0), number_cell(p.fwd_macs.value, 0),
             number_cell(p.fwd_flops.value, 0), k, number_cell(p.fwd_flops.value / kd, 0), scope, c.forwards, basis,
             number_cell(trace_pf, 0), difference_cell(trace_pf, p.fwd_flops.value / kd),
             agrees_cell(trace_pf, p.fwd_flops, kd), number_cell(p.fwd_latency_s.value / kd * 1e6, 3),
             c.root >= 0 ? number_cell(static_cast<double>(c.trace_host_ns) / static_cast<double>(c.forwards) / 1e3, 3)
                         : Cell::null(),
             figure_cell(m.all_flops)});
    });
  };
  return t;
}

Table modules_table(const engine::RankStore& all, const TraceReportOptions& options) {
  const trace::DsProfile& ds = *options.deepspeed;
  Table t;
  t.title = ds.modules.empty()
                ? std::string("DeepSpeed's modules: none (the profile was printed with detailed=False)")
                : fmt::format(
                      "DeepSpeed's modules beside the trace's nn.Module calls, per forward pass (DS FLOPs: "
                      "its FLOP/s x latency; {} modules)",
                      ds.module_count);
  t.columns = {{"rank", "Rank"},
               {"module", "Module"},
               {"class", "Class"},
               {"depth", "Depth"},
               {"repeat", "Repeat"},
               {"ds_params", "DS params"},
               {"ds_macs", "DS MACs"},
               {"ds_flops", "DS FLOPs"},
               {"ds_latency_us", "DS latency (us)"},
               {"trace_module", "Trace module"},
               {"match", "Paired"},
               {"trace_calls", "Trace calls"},
               {"ds_flops_per_forward", "DS FLOPs/forward"},
               {"trace_flops_per_forward", "Trace FLOPs/forward"},
               {"difference_pct", "Difference (%)"},
               {"agrees", "Agrees"},
               {"trace_time_us_per_forward", "Trace time/forward (us)"}};
  t.set_importance(Importance::kKey, {"rank", "module"});
  t.set_importance(Importance::kUseful,
                   {"class", "ds_params", "ds_macs", "ds_latency_us", "trace_module", "trace_time_us_per_forward"});
  t.set_importance(Importance::kDetail, {"depth", "repeat", "ds_flops", "trace_calls"});
  const auto profile = options.deepspeed;
  const int64_t k = options.deepspeed_forwards;
  t.row_source = [all, profile, k](const RowVisitor& visit) {
    const trace::DsProfile& p = *profile;
    all->for_each([&](const engine::RankResults& r) {
      if (!r.flops || !r.flops->modules) return;
      const analysis::DsComparison c = analysis::compare_with_deepspeed(p, *r.flops->modules);
      const double kd = static_cast<double>(k);
      for (size_t i = 0; i < p.modules.size(); ++i) {
        const trace::DsModule& m = p.modules[i];
        const analysis::DsModuleMatch& row = c.modules[i];
        const double rep = static_cast<double>(m.repeat);
        trace::DsFigure ds_flops = m.flops();
        ds_flops.value *= rep;
        ds_flops.rounding *= rep;
        const bool paired = c.root >= 0 && row.instances > 0;
        const double trace_pf = paired ? per_forward(row.flops, c.forwards) : std::nan("");
        std::string path = trace::ds_module_path(p, i);
        if (path.empty()) path = "(model)";
        std::string trace_name = row.trace_name;
        if (row.instances > 1) trace_name += fmt::format(" (+{})", row.instances - 1);
        visit({r.rank, path, m.cls, static_cast<int64_t>(m.depth), m.repeat,
               m.has_figures ? number_cell(m.params.value * rep, 0) : Cell::null(),
               m.has_figures ? number_cell(m.macs.value * rep, 0) : Cell::null(),
               m.has_figures ? number_cell(ds_flops.value, 0) : Cell::null(),
               m.has_figures ? number_cell(m.latency_s.value * rep * 1e6, 3) : Cell::null(), trace_name,
               match_text(m, row, c.root >= 0), row.calls,
               m.has_figures ? number_cell(ds_flops.value / kd, 0) : Cell::null(), number_cell(trace_pf, 0),
               m.has_figures ? difference_cell(trace_pf, ds_flops.value / kd) : Cell::null(),
               m.has_figures && paired ? agrees_cell(trace_pf, ds_flops, kd) : Cell::null(),
               paired ? number_cell(static_cast<double>(row.host_ns) / static_cast<double>(c.forwards) / 1e3, 3)
                      : Cell::null()});
      }
    });
  };
  return t;
}

}  // namespace

TraceReport deepspeed_tables(const engine::RankStore& ranks, const TraceReportOptions& options) {
  TraceReport report;
  if (!options.deepspeed) return report;
  report.add("deepspeed_flops", totals_table(ranks, options));
  report.add("deepspeed_modules", modules_table(ranks, options));
  return report;
}

}  // namespace scaleprof::report
