// The one terminal sanitiser: every string from input (names, paths, messages quoting them, values
// of a configuration, generated scripts shown as a preview) passes through it before it reaches a
// terminal, so data can never drive the terminal or display as something it is not. The same
// classification decides which characters a configuration value may not hold (config/config.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace scaleprof {

// True for the code points that are escaped: C0 controls, DEL, C1 controls (U+0080-009F), and the
// invisible format characters that change how text displays: bidirectional embeddings, overrides,
// isolates and marks (U+202A-202E, U+2066-2069, U+200E, U+200F, U+061C), zero-width characters
// (U+200B-200D, U+2060-2064, U+FEFF), other format controls of Unicode's category Cf (U+00AD,
// U+0600-0605, U+06DD, U+070F, U+0890-0891, U+08E2, U+180E, U+206A-206F, U+FFF9-FFFB, U+110BD,
// U+110CD, U+13430-1343F, U+1BCA0-1BCA3, U+1D173-1D17A, U+E0001, U+E0020-E007F) and the line and
// paragraph separators U+2028, U+2029.
bool is_terminal_control(uint32_t code_point);

// `text` with everything that could control a terminal made visible:
//   line feed, carriage return, tab       -> \n  \r  \t   (a name can never fake a second "error:" line)
//   other C0 controls, DEL, C1 controls   -> \u001b, \u007f, \u009b   (escape sequences, OSC 52, CSI)
//   bidi and invisible format characters  -> \u202e, \u200b ...   (text that displays in another order)
//   bytes that are not valid UTF-8        -> \xff
// Printable ASCII and other valid UTF-8 pass unchanged.
std::string terminal_safe(std::string_view text);

// The same for text of several lines (a generated script shown as a preview): line feeds stay line
// breaks, everything else is escaped as above.
std::string terminal_safe_lines(std::string_view text);

// The first character terminal_safe would escape (a line feed included), for validators that refuse
// such text rather than escape it.
struct UnsafeCharacter {
  size_t byte_offset = 0;
  size_t character_number = 1;  // 1-based, counting UTF-8 characters
  uint32_t code_point = 0;      // the byte itself when not valid UTF-8
  bool valid_utf8 = true;
};
std::optional<UnsafeCharacter> first_unsafe_character(std::string_view text);

// A name for it in messages: "a newline", "a NUL byte", "a tab", "the control character U+001B",
// "the bidirectional control U+202E", "the invisible format character U+200B", "the byte 0xff (not
// valid UTF-8)".
std::string describe_character(const UnsafeCharacter& c);

// Writes "<prefix>: <terminal_safe(text)>\n" to `stream` (prefix "" writes the text alone), e.g.
// print_message(stderr, "error", message).
void print_message(FILE* stream, std::string_view prefix, std::string_view text);

}  // namespace scaleprof
