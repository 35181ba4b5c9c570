#include "report/name_shorten.h"

#include <vector>

namespace scaleprof::report {

namespace {

constexpr std::string_view kEllipsis = "\u2026";  // one column wide, three bytes

bool is_continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// Replaces the contents of every top-level `opener ... closer` pair by an ellipsis. Only brackets of
// the same kind nest; `->` inside a template list is not a closer of interest because parameter
// lists are removed first. Linear: every opener's partner is found in one pass with a stack (a scan
// from each opener to its partner was quadratic on a name of many unclosed brackets, and every name
// of a page passes here, report/html_page.h).
std::string elide_brackets(std::string_view s, char opener, char closer) {
  std::vector<size_t> open_at;  // positions of the openers, in order
  std::vector<size_t> end_of;   // just after each one's partner; npos without one
  std::vector<size_t> stack;    // indexes into open_at of the openers not closed yet
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == opener) {
      stack.push_back(open_at.size());
      open_at.push_back(i);
      end_of.push_back(std::string_view::npos);
    } else if (s[i] == closer && !stack.empty()) {
      end_of[stack.back()] = i + 1;
      stack.pop_back();
    }
  }
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  size_t k = 0;  // the first opener at or after i
  while (i < s.size()) {
    if (s[i] != opener) {
      out += s[i++];
      continue;
    }
    while (open_at[k] < i) ++k;
    const size_t end = end_of[k];
    // `operator<` / `operator<<` and friends have no partner; a pair with nothing inside stays.
    if (end == std::string_view::npos || end - i <= 2) {
      out += s[i++];
      continue;
    }
    out += opener;
    out += kEllipsis;
    out += closer;
    i = end;
  }
  return out;
}

// Byte offset after the first `n` code points of `s`.
size_t prefix_bytes(std::string_view s, size_t n) {
  size_t i = 0;
  for (size_t cp = 0; i < s.size() && cp < n; ++cp) {
    ++i;
    while (i < s.size() && is_continuation(s[i])) ++i;
  }
  return i;
}

// Byte offset where the last `n` code points of `s` start.
size_t suffix_start(std::string_view s, size_t n) {
  size_t i = s.size();
  for (size_t cp = 0; i > 0 && cp < n; ++cp) {
    --i;
    while (i > 0 && is_continuation(s[i])) --i;
  }
  return i;
}

}  // namespace

size_t display_width(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += is_continuation(c) ? 0 : 1;
  return n;
}

std::string shorten_name(std::string_view name, size_t width) {
  if (width == 0 || display_width(name) <= width) return std::string(name);
  std::string s = elide_brackets(name, '(', ')');
  if (display_width(s) <= width) return s;
  s = elide_brackets(s, '<', '>');
  if (display_width(s) <= width) return s;
  if (width == 1) return std::string(kEllipsis);
  // Keep more of the start (namespace and function name) than of the end.
  const size_t keep = width - 1;
  const size_t tail = keep / 3;
  const size_t head = keep - tail;
  return s.substr(0, prefix_bytes(s, head)) + std::string(kEllipsis) + s.substr(suffix_start(s, tail));
}

}  // namespace scaleprof::report
