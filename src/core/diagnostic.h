// A problem found while reading input that does not stop the reading: a line skipped, a file
// rejected, a note. Readers collect them in order and say how serious each one is, so a caller
// decides by the severity (a rejection makes `scaleprof report` exit 3), never by the wording.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace scaleprof {

enum class Severity {
  kNote,     // worth knowing, nothing lost (a torn last line of a file being written, a missing rank.json)
  kWarning,  // something was left out on purpose (a symbolic link not followed)
  kError,    // input was rejected: a line skipped, a file unreadable; results are partial
};

struct Diagnostic {
  Severity severity = Severity::kWarning;
  std::string where;    // "file", "file:line" or empty
  std::string message;  // the problem, a sentence without the place

  // "where: message" (or the message alone): the one line a user is shown.
  std::string text() const { return where.empty() ? message : where + ": " + message; }

  // A diagnostic compares equal to, and prints as, its text.
  friend bool operator==(const Diagnostic& d, std::string_view text) { return d.text() == text; }
  friend bool operator==(const Diagnostic& a, const Diagnostic& b) = default;
  friend std::ostream& operator<<(std::ostream& out, const Diagnostic& d) { return out << d.text(); }
};

// A diagnostic whose text is already whole ("file:line: problem"): kept as the message.
inline Diagnostic diagnostic(Severity severity, std::string text) {
  return Diagnostic{severity, {}, std::move(text)};
}

// The text of each diagnostic, in order.
inline std::vector<std::string> texts(const std::vector<Diagnostic>& diagnostics) {
  std::vector<std::string> out;
  out.reserve(diagnostics.size());
  for (const Diagnostic& d : diagnostics) out.push_back(d.text());
  return out;
}

}  // namespace scaleprof
