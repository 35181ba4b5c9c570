// What every command shares about output: colour only on a terminal, and the width text tables
// should fit. The output-file writer (core/output_file.h) and the terminal sanitiser
// (core/terminal_text.h) are the library's.
#pragma once

#include <cstddef>
#include <string>

#include "core/output_file.h"  // IWYU pragma: export
#include "core/result.h"
#include "core/terminal_text.h"  // IWYU pragma: export
#include "report/table.h"

namespace scaleprof::cli {

// True when colours may be used on this stream (a terminal, and NO_COLOR unset).
bool color_allowed(int fd);

// The width text tables should fit: $COLUMNS when it holds a number (as ls and friends honour it;
// tests set it), else the width of the terminal on `fd` (TIOCGWINSZ), else kDefaultColumns when `fd`
// is no terminal (a pipe or --output file is still read by a person; --full-names keeps every name).
inline constexpr size_t kDefaultColumns = 120;
size_t terminal_columns(int fd);

// Prints `error` as "scaleprof: error: <message>" and returns the exit code its kind calls for
// (exit_code_for in cli/exit_codes.h): the code follows the kind, never the wording.
int fail_with(const Error& error);

// Whether output in `format` going to `output` ("" for standard output) is coloured: a text table on
// a terminal only.
bool table_color(const std::string& output, report::Format format);

// The tail of every command that prints a table: colour only for a text table going to a terminal,
// the rendered text written to `output` (-o FILE; "" for standard output), and the exit code: 0, or
// the write error's (printed).
int write_table(const report::Table& table, report::RenderOptions render, const std::string& output);

}  // namespace scaleprof::cli
