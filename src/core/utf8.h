// UTF-8 decoding shared by every writer that must emit valid text (JSON, HTML, the terminal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace scaleprof {

// The Unicode replacement character U+FFFD, which stands in for each invalid byte sequence.
inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

// Length (1 to 4) of the well-formed UTF-8 sequence that starts at text[pos], or 0 when the bytes
// there are not one (stray continuation byte, overlong form, surrogate, above U+10FFFF, cut short).
// Follows the table of well-formed sequences in the Unicode standard (section 3.9, table 3-7).
size_t utf8_sequence_length(std::string_view text, size_t pos);

// The code point of the well-formed sequence of `length` bytes at text[pos].
uint32_t utf8_code_point(std::string_view text, size_t pos, size_t length);

}  // namespace scaleprof
