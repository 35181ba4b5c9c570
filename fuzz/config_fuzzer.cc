// Fuzzes the configuration mechanism and the script generator: the input is a YAML file, then after a
// NUL byte lines of "--field value" overrides. Whatever the input — alias bombs included (seeds in
// fuzz/corpus/config/alias-*) — the result is an error message or scripts, never a crash, a hang,
// memory beyond the configuration's limits, or a script holding a character the terminal sanitiser
// escapes (control, C1, bidirectional or invisible format characters, invalid UTF-8).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/config.h"
#include "core/terminal_text.h"
#include "launch/launch_config.h"
#include "launch/slurm_script.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view yaml = input.substr(0, nul);
  scaleprof::config::Config config(scaleprof::launch::launch_fields());
  (void)config.merge_text(yaml, "fuzz.yaml");
  if (nul != std::string_view::npos) {
    std::string_view rest = input.substr(nul + 1);
    while (!rest.empty()) {
      const size_t end = rest.find('\n');
      const std::string_view line = rest.substr(0, end);
      const size_t space = line.find(' ');
      (void)config.set_override(line.substr(0, space),
                                space == std::string_view::npos ? std::string_view() : line.substr(space + 1));
      if (end == std::string_view::npos) break;
      rest.remove_prefix(end + 1);
    }
  }
  auto launch = scaleprof::launch::make_launch_config(config, "/work", "/bin/scaleprof");
  if (!launch) return 0;
  const auto jobs = scaleprof::launch::plan_jobs(launch.value());
  size_t rendered = 0;
  for (const auto& job : jobs) {
    if (++rendered > 16) break;  // a scaling test may plan thousands of jobs; the text of a few is enough
    const std::string script = scaleprof::launch::render_job_script(launch.value(), job);
    // The only such character a script may hold is the line break the generator writes.
    std::string_view rest = script;
    while (auto c = scaleprof::first_unsafe_character(rest)) {
      if (!c->valid_utf8 || c->code_point != '\n') std::abort();
      rest.remove_prefix(c->byte_offset + 1);
    }
  }
  (void)scaleprof::launch::render_report_script(launch.value());
  return 0;
}
