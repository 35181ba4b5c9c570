#include "pipeline/whatif_pipeline.h"

#include <fmt/format.h>

#include <set>
#include <utility>

#include "analysis/whatif_gains.h"

namespace scaleprof::pipeline {

Result<TraceWhatIf> trace_what_if(const std::vector<std::string>& paths, const std::vector<std::string>& what_ifs,
                                  const trace::LoadOptions& load) {
  std::vector<analysis::WhatIfSpec> specs;
  for (const std::string& text : what_ifs) {
    Result<analysis::WhatIfSpec> spec = analysis::parse_what_if(text);
    if (!spec) return spec.error();
    if (spec.value().kind == analysis::WhatIfSpec::Kind::kPartAtBase) {
      return Error{fmt::format("--what-if '{}': 'at base' compares two scales; use `scaleprof report --what-if` on "
                               "the runs of a scaling test",
                               spec.value().text),
                   ErrorKind::kUsage};
    }
    specs.push_back(std::move(spec).value());
  }
  if (specs.empty()) return Error{"give at least one --what-if", ErrorKind::kUsage};
  const std::vector<std::string> targets = analysis::what_if_targets(specs);
  auto read = engine::read_step_timeline(paths, load, targets);
  if (!read) return read.error();
  TraceWhatIf out;
  out.read = std::move(read).value();
  const tables::RunTimeline& t = out.read.timeline;
  std::set<int64_t> ranks, steps;
  for (const tables::TimelineStep& s : t.steps) {
    ranks.insert(s.rank);
    steps.insert(s.step);
  }
  if (steps.empty()) {
    return Error{"no rank has a ProfilerStep to replay (profile with a torch.profiler schedule and call prof.step())",
                 ErrorKind::kBadInput};
  }
  if (Status ran = analysis::check_what_ifs_apply(specs, {&t}); !ran) return ran.error();
  // One scale: the traces' own steps, their time standing for the epoch (the predicted epoch is then
  // the predicted share of the measured steps).
  analysis::WhatIfScale scale;
  scale.workers = static_cast<int64_t>(ranks.size());
  scale.seconds = 1.0;
  scale.runs = {&t};
  for (const analysis::WhatIfSpec& spec : specs) {
    report::TraceWhatIfRow row;
    row.what_if = spec.text;
    row.ranks = static_cast<int64_t>(ranks.size());
    row.steps = static_cast<int64_t>(steps.size());
    row.outcome = analysis::apply_what_if(spec, scale, scale, false);
    out.rows.push_back(std::move(row));
  }
  out.report = report::what_if_tables(out.rows);
  return out;
}

}  // namespace scaleprof::pipeline
