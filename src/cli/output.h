// What every command shares about output: colour only on a terminal. The output-file writer
// (core/output_file.h) and the terminal sanitiser (core/terminal_text.h) are the library's.
#pragma once

#include "core/output_file.h"    // IWYU pragma: export
#include "core/terminal_text.h"  // IWYU pragma: export

namespace scaleprof::cli {

// True when colours may be used on this stream (a terminal, and NO_COLOR unset).
bool color_allowed(int fd);

}  // namespace scaleprof::cli
