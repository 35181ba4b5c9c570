// The tables of a `scaleprof trace` report as users get them: the files read and reduced by the
// engine's one driver, the tables made by the report (pipeline::stream_report), for tests that check
// a report's figures.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/trace_pipeline.h"
#include "scratch_dir.h"

namespace scaleprof::testing {

// The report of `report` over the trace files of `paths`; a failed call fails the test (empty tables).
inline report::TraceReport streamed_report(std::string_view report, const std::vector<std::string>& paths,
                                           const report::TraceReportOptions& options = {}) {
  auto streamed = pipeline::stream_report(report, paths, trace::LoadOptions{}, options);
  EXPECT_TRUE(streamed.ok()) << (streamed.ok() ? "" : streamed.error().message);
  if (!streamed.ok()) return {};
  return std::move(streamed.value().report);
}

// The same over one trace given as its JSON text, written to a scratch file first.
inline report::TraceReport streamed_report_of_text(std::string_view report, std::string_view json,
                                                   const report::TraceReportOptions& options = {}) {
  const ScratchDir dir("trace-report");
  return streamed_report(report, {dir.write("rank.json", json)}, options);
}

}  // namespace scaleprof::testing
