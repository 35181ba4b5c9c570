#include "cli/output.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "cli/exit_codes.h"
#include "core/number_text.h"

namespace scaleprof::cli {

int fail_with(const Error& error) {
  print_message(stderr, "error", error.message);
  return exit_code_for(error.kind);
}

bool table_color(const std::string& output, report::Format format) {
  return output.empty() && color_allowed(STDOUT_FILENO) && format == report::Format::kTable;
}

int write_table(const report::Table& table, report::RenderOptions render, const std::string& output) {
  render.color = table_color(output, render.format);
  if (Status written = write_output_file(output, report::render(table, render)); !written) {
    return fail_with(written.error());
  }
  return kExitOk;
}

bool color_allowed(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return isatty(fd) != 0;
}

size_t terminal_columns(int fd) {
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr) {
    const std::optional<int64_t> value = parse_int64(columns);
    if (value && *value >= 20 && *value <= 100'000) return static_cast<size_t>(*value);
  }
  winsize size{};
  if (fd >= 0 && isatty(fd) != 0 && ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col >= 20) return size.ws_col;
  return kDefaultColumns;
}

}  // namespace scaleprof::cli
