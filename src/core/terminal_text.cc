#include "core/terminal_text.h"

#include <fmt/format.h>

#include "core/utf8.h"

namespace scaleprof {

namespace {

bool is_bidi_control(uint32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const auto c = static_cast<unsigned char>(text[pos]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++pos;
    } else if (c == '\n') {
      out += "\\n";
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
      if (cp < 0xA0 || is_bidi_control(cp)) {
        out += fmt::format("\\u{:04x}", cp);
      } else {
        out.append(text, pos, length);
      }
      pos += length;
    }
  }
  return out;
}

void print_message(FILE* stream, std::string_view prefix, std::string_view text) {
  std::string line;
  if (!prefix.empty()) line = fmt::format("{}: ", prefix);
  line += terminal_safe(text);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stream);
}

}  // namespace scaleprof
