#include "trace/json_repair.h"

#include <cctype>
#include <cstdint>

namespace scaleprof::trace {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// True if the quote at `i` plausibly closes the string: what follows is JSON structure.
bool closes_string(std::string_view in, size_t i) {
  size_t j = i + 1;
  while (j < in.size() && is_space(in[j])) ++j;
  if (j >= in.size()) return true;
  char c = in[j];
  return c == ',' || c == ':' || c == ']' || c == '}';
}

bool starts_literal(std::string_view in, size_t i, std::string_view word) {
  if (in.substr(i, word.size()) != word) return false;
  size_t end = i + word.size();
  return end >= in.size() || !(std::isalnum(static_cast<unsigned char>(in[end])) || in[end] == '_');
}

}  // namespace

size_t repair_kineto_json(std::string_view in, std::string* out) {
  out->clear();
  out->reserve(in.size() + in.size() / 64);
  size_t repairs = 0;
  bool in_string = false;
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (in_string) {
      if (c == '\\' && i + 1 < in.size()) {
        out->push_back(c);
        out->push_back(in[++i]);
      } else if (c == '"') {
        if (closes_string(in, i)) {
          in_string = false;
          out->push_back(c);
        } else {
          out->append("\\\"");
          ++repairs;
        }
      } else if (static_cast<unsigned char>(c) < 0x20) {
        out->push_back(' ');
        ++repairs;
      } else {
        out->push_back(c);
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out->push_back(c);
      continue;
    }
    bool word_start = std::isalpha(static_cast<unsigned char>(c)) ||
                      (c == '-' && i + 1 < in.size() && std::isalpha(static_cast<unsigned char>(in[i + 1])));
    if (word_start && !starts_literal(in, i, "true") && !starts_literal(in, i, "false") &&
        !starts_literal(in, i, "null")) {
      // A bare word such as N/A or inf: quote it up to the next structural character.
      size_t end = i;
      while (end < in.size() && in[end] != ',' && in[end] != '}' && in[end] != ']' && !is_space(in[end])) ++end;
      out->push_back('"');
      out->append(in.substr(i, end - i));
      out->push_back('"');
      ++repairs;
      i = end - 1;
      continue;
    }
    out->push_back(c);
  }
  return repairs;
}

std::optional<size_t> first_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::nullopt;
}

}  // namespace scaleprof::trace
