#include "core/json_string.h"

#include <fmt/format.h>

#include "core/utf8.h"

namespace scaleprof {

std::string json_quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  size_t pos = 0;
  while (pos < text.size()) {
    const auto c = static_cast<unsigned char>(text[pos]);
    if (c >= 0x80) {
      const size_t length = utf8_sequence_length(text, pos);
      if (length == 0) {
        out += kReplacementCharacter;
        ++pos;  // one replacement per invalid byte keeps the count of bad bytes visible
      } else {
        out.append(text, pos, length);
        pos += length;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
    ++pos;
  }
  out += '"';
  return out;
}

}  // namespace scaleprof
