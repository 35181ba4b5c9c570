// Where command output goes: stdout or --output FILE, with colour only on a terminal.
#pragma once

#include <string>

namespace scaleprof::cli {

// True when colours may be used on this stream (a terminal, and NO_COLOR unset).
bool color_allowed(int fd);

// Writes `text` to `path` ("" or "-" means stdout). Returns false and fills *error on failure.
bool write_output(const std::string& path, const std::string& text, std::string* error);

}  // namespace scaleprof::cli
