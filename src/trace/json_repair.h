// Repairs of the invalid JSON that older Kineto versions wrote, used by the reader's lenient mode.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace scaleprof::trace {

// Rewrites `in` into `*out`, quoting bare words outside strings (N/A, nan, inf), escaping quotes
// inside strings that do not end the string (the next non-space character is not one of , : ] }),
// and replacing raw control characters inside strings with a space. Returns the number of repairs.
size_t repair_kineto_json(std::string_view in, std::string* out);

// Offset of the first byte that is not valid UTF-8, if any.
std::optional<size_t> first_invalid_utf8(std::string_view text);

}  // namespace scaleprof::trace
