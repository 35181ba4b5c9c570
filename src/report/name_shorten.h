// Shortening long names (C++ kernel signatures, operator names) to a display width for text tables.
//
// Kernel names run to thousands of characters, almost all of it template arguments and parameter
// lists. shorten_name() removes detail in the order a reader misses it least, stopping as soon as
// the name fits:
//   1. the contents of top-level parameter lists:  f<int>(float*, long) -> f<int>(…)
//   2. the contents of top-level template argument lists: f<int>(…) -> f<…>(…)
//   3. the middle of what is left, keeping the start and the end:  abc…xyz
// so that `void at::native::elementwise_kernel<128, 4, …lambda…>(int, …)` becomes
// `void at::native::elementwise_kernel<…>(…)`. Brackets without a partner are left alone. Widths
// count Unicode code points of UTF-8 text (the ellipsis is one). Only text tables shorten; CSV and
// JSON keep full names, and so does `--full-names`.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace scaleprof::report {

// Display width of UTF-8 text: its number of code points.
size_t display_width(std::string_view text);

// `name` shortened to at most `width` code points (unchanged when it fits; width 0 means no limit).
std::string shorten_name(std::string_view name, size_t width);

}  // namespace scaleprof::report
