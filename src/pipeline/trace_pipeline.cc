#include "pipeline/trace_pipeline.h"

#include <memory>
#include <utility>

#include "engine/trace_stream.h"
#include "trace/deepspeed_profile.h"

namespace scaleprof::pipeline {

Result<StreamedReport> stream_report(std::string_view report, const std::vector<std::string>& paths,
                                     const trace::LoadOptions& load, const engine::TraceReportOptions& given) {
  engine::TraceReportOptions options = given;
  // `trace flops --deepspeed-profile FILE`: read before any trace, so a bad file fails at once.
  if (report == "flops" && !options.deepspeed_profile.empty() && !options.deepspeed) {
    auto profile = trace::read_deepspeed_profile(options.deepspeed_profile);
    if (!profile) return profile.error();
    options.deepspeed = std::make_shared<const trace::DsProfile>(std::move(profile.value()));
  }
  const engine::ReportSections sections = sections_of(report, options);
  auto streamed = engine::stream_ranks(sections, paths, load, options);
  if (!streamed) return streamed.error();
  engine::StreamedRanks& ranks = streamed.value();
  StreamedReport out;
  out.set = std::move(ranks.set);
  out.repair_notes = std::move(ranks.repair_notes);
  out.any_read = ranks.any_read;
  out.any_selected = ranks.any_selected;
  if (!out.any_selected) return out;
  out.report = report::report_tables(sections, ranks.results, std::move(ranks.rows), options);
  return out;
}

}  // namespace scaleprof::pipeline
