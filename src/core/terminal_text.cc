#include "core/terminal_text.h"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "core/utf8.h"

namespace scaleprof {

namespace {

bool is_bidi_control(uint32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F ||
         cp == 0x061C;
}

// Unicode's general category Cf (format), plus U+2028 and U+2029 (Zl, Zp): characters that are not
// drawn but change how the text around them displays or breaks.
bool is_invisible_format(uint32_t cp) {
  static constexpr std::array<std::pair<uint32_t, uint32_t>, 21> kRanges = {{
      {0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},   {0x06DD, 0x06DD},   {0x070F, 0x070F},
      {0x0890, 0x0891},   {0x08E2, 0x08E2},   {0x180E, 0x180E},   {0x200B, 0x200F},   {0x2028, 0x202E},
      {0x2060, 0x2064},   {0x2066, 0x206F},   {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD},
      {0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001},
      {0xE0020, 0xE007F},
  }};
  for (const auto& [lo, hi] : kRanges) {
    if (cp >= lo && cp <= hi) return true;
  }
  return false;
}

// Escapes `text`; line feeds stay when `keep_newlines`.
std::string sanitise(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const auto c = static_cast<unsigned char>(text[pos]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++pos;
    } else if (c == '\n') {
      out += keep_newlines ? "\n" : "\\n";
      ++pos;
    } else if (c == '\r') {
      out += "\\r";
      ++pos;
    } else if (c == '\t') {
      out += "\\t";
      ++pos;
    } else if (c < 0x80) {
      out += fmt::format("\\u{:04x}", c);
      ++pos;
    } else {
      const size_t length = utf8_sequence_length(text, pos);
      if (length == 0) {
        out += fmt::format("\\x{:02x}", c);
        ++pos;
        continue;
      }
      const uint32_t cp = utf8_code_point(text, pos, length);
      if (is_terminal_control(cp)) {
        out += fmt::format("\\u{:04x}", cp);
      } else {
        out.append(text, pos, length);
      }
      pos += length;
    }
  }
  return out;
}

}  // namespace

bool is_terminal_control(uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || is_bidi_control(cp) || is_invisible_format(cp);
}

std::string terminal_safe(std::string_view text) {
  return sanitise(text, false);
}

std::string terminal_safe_lines(std::string_view text) {
  return sanitise(text, true);
}

std::optional<UnsafeCharacter> first_unsafe_character(std::string_view text) {
  UnsafeCharacter found;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t length = utf8_sequence_length(text, pos);
    if (length == 0) {
      found.byte_offset = pos;
      found.code_point = static_cast<unsigned char>(text[pos]);
      found.valid_utf8 = false;
      return found;
    }
    const uint32_t cp = utf8_code_point(text, pos, length);
    if (is_terminal_control(cp)) {
      found.byte_offset = pos;
      found.code_point = cp;
      return found;
    }
    pos += length;
    ++found.character_number;
  }
  return std::nullopt;
}

std::string describe_character(const UnsafeCharacter& c) {
  if (!c.valid_utf8) return fmt::format("the byte 0x{:02x} (not valid UTF-8)", c.code_point);
  switch (c.code_point) {
    case 0x00:
      return "a NUL byte";
    case '\n':
      return "a newline";
    case '\r':
      return "a carriage return";
    case '\t':
      return "a tab";
    default:
      break;
  }
  if (c.code_point < 0xA0) return fmt::format("the control character U+{:04X}", c.code_point);
  if (is_bidi_control(c.code_point)) return fmt::format("the bidirectional control U+{:04X}", c.code_point);
  return fmt::format("the invisible format character U+{:04X}", c.code_point);
}

void print_message(FILE* stream, std::string_view prefix, std::string_view text) {
  std::string line;
  if (!prefix.empty()) line = fmt::format("{}: ", prefix);
  line += terminal_safe(text);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stream);
}

}  // namespace scaleprof
