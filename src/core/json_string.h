// The one JSON string writer: every string scaleprof puts into JSON goes through it.
#pragma once

#include <string>
#include <string_view>

namespace scaleprof {

// `text` as a JSON string literal, quotes included. Quotes, backslashes and control characters are
// escaped; each invalid UTF-8 sequence (names from CSV files, file names, trace strings are bytes,
// not necessarily UTF-8) becomes U+FFFD, so the result is always valid UTF-8 and valid JSON.
std::string json_quote(std::string_view text);

}  // namespace scaleprof
