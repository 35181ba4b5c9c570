#include "pipeline/trace_pages.h"

#include <fmt/format.h>

#include <set>
#include <string_view>

#include "core/file_io.h"
#include "core/output_file.h"
#include "pipeline/trace_pipeline.h"
#include "report/trace_html.h"

namespace scaleprof::pipeline {

namespace {

// A file name from the run's strategy, size and name: letters, digits, '.', '_' and '-' only (run names
// come from run.json and folder names: "../x" or "<script>" must not reach the file system as such),
// at most 96 characters, made unique in the folder by a counter.
std::string page_name(const tables::RunData& run, std::set<std::string>* taken) {
  std::string stem = fmt::format("{}-{}w-{}", run.strategy, run.workers, run.name);
  for (char& c : stem) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!keep) c = '_';
  }
  if (stem.size() > 96) stem.resize(96);
  if (!stem.empty() && stem.front() == '.') stem.front() = '_';  // no hidden files, no ".."
  std::string name = stem + ".html";
  for (int n = 2; taken->count(name) != 0; ++n) name = fmt::format("{}-{}.html", stem, n);
  taken->insert(name);
  return name;
}

}  // namespace

std::string trace_pages_folder(const std::string& html_path) {
  std::string base = html_path;
  constexpr std::string_view kExt = ".html";
  if (base.size() > kExt.size() && base.compare(base.size() - kExt.size(), kExt.size(), kExt) == 0) {
    base.resize(base.size() - kExt.size());
  }
  return base + "-traces";
}

Result<TracePages> write_trace_pages(const tables::ScalabilityData& data, const TracePagesOptions& options) {
  TracePages out;
  std::set<std::string> taken;
  bool folder_made = false;
  for (const tables::RunData& run : data.runs) {
    if (run.trace_files.empty()) continue;
    if (!folder_made) {
      if (Status made = make_directories(options.folder); !made) return made.error();
      folder_made = true;
    }
    trace::LoadOptions load;
    load.parse.lenient = true;  // as `scaleprof trace`: repairable JSON is repaired, with a note
    load.threads = options.threads;
    report::TraceReportOptions report_options;
    auto streamed = stream_report("summary", run.trace_files, load, report_options);
    std::vector<Diagnostic> errors;
    std::string page;
    if (streamed) {
      StreamedReport& r = streamed.value();
      errors = r.set.errors;
      page = report::render_trace_html(r.report, {{run.path}, r.set.warnings, r.set.errors});
    } else {
      errors.push_back(diagnostic(Severity::kError, streamed.error().message));
      page = report::render_trace_html({}, {{run.path}, {}, errors});
    }
    for (const Diagnostic& e : errors) out.errors.push_back(e);
    const std::string name = page_name(run, &taken);
    if (Status written = write_output_file(options.folder + "/" + name, page); !written) return written.error();
    report::TraceLink link;
    link.label = fmt::format("{}, {} worker(s): run {}", run.strategy, run.workers, run.name);
    link.href = options.href_prefix + name;
    link.trace_files = static_cast<int64_t>(run.trace_files.size());
    link.failed = !errors.empty();
    out.links.push_back(std::move(link));
  }
  return out;
}

}  // namespace scaleprof::pipeline
