#include "cli/trace_common.h"

#include <fmt/format.h>
#include <unistd.h>

#include <optional>
#include <string_view>

#include "cli/exit_codes.h"
#include "cli/output.h"
#include "core/number_text.h"

namespace scaleprof::cli {

// Parses "0,2,5-7" into a list of ranks.
bool parse_rank_list(const std::string& text, std::vector<int64_t>* out, std::string* error) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? text.size() : comma + 1;
    if (item.empty()) continue;
    const size_t dash = item.find('-', 1);
    const std::string_view view(item);
    const std::optional<int64_t> lo = parse_int64(view.substr(0, dash));
    const std::optional<int64_t> hi = dash == std::string::npos ? lo : parse_int64(view.substr(dash + 1));
    if (!lo || !hi || *hi < *lo || *hi - *lo > 1'000'000) {
      *error = fmt::format("--ranks: '{}' is not a rank or a range like 2-5", item);
      return false;
    }
    for (int64_t r = *lo; r <= *hi; ++r) out->push_back(r);
  }
  return true;
}

// How text tables fit: the terminal's width (report/table_layout.h), --wide keeping every column,
// --full-names every name.
void text_width(const std::string& output, bool wide, bool full_names, report::RenderOptions* render) {
  render->max_width = terminal_columns(output.empty() ? STDOUT_FILENO : -1);
  render->wide = wide;
  render->full_names = full_names;
}

// The help of --wide and --full-names, for every subcommand.
void add_width_flags(CLI::App* cmd, bool* wide, bool* full_names) {
  cmd->add_flag("--wide", *wide,
                "Text tables keep every column on one line (default: they fit the terminal, $COLUMNS or 120 when "
                "not a terminal: headers wrap, names are shortened, the least needed columns are left out with a "
                "note, the rest folded; CSV and JSON always have every column)");
  if (full_names != nullptr) {
    cmd->add_flag("--full-names", *full_names,
                  "Print kernel and operator names whole in text tables (default: shortened to fit; CSV and JSON "
                  "never shorten); columns are still left out or folded to fit, unless --wide");
  }
}

// Renders the tables to stdout or -o FILE.
int emit(const report::TraceReport& result, report::RenderOptions render, const std::string& output) {
  render.color = table_color(output, render.format);
  // Written as rendered: the per-call-per-rank table of collectives is never held as one text.
  auto produce = [&](const TextSink& put) {
    if (result.tables.size() == 1 && render.format != report::Format::kTable) {
      report::render_to(result.tables[0], render, put);
    } else {
      report::render_many_to(result.tables, result.keys, render, put);
    }
  };
  if (Status written = write_output_file(output, produce); !written) {
    return fail_with(written.error());
  }
  return kExitOk;
}

bool partial_exit(const trace::StreamedSet& set) {
  if (!set.partial()) return false;
  print_message(stderr, "warning",
                fmt::format("results are partial: {} file(s) unreadable, some events rejected (exit code {})",
                            set.errors.size(), kExitPartial));
  return true;
}

}  // namespace scaleprof::cli
