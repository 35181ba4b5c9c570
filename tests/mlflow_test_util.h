// Helpers shared by the MLflow importer tests: the store's warnings searched line by line, and SQL run
// on a test's own SQLite store (a failing statement fails the test, naming it).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/diagnostic.h"

namespace scaleprof::testing {

inline bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

inline std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// The same over diagnostics: their texts, as a user reads them.
inline bool any_contains(const std::vector<Diagnostic>& lines, const std::string& part) {
  return any_contains(texts(lines), part);
}

inline std::string joined(const std::vector<Diagnostic>& lines) {
  return joined(texts(lines));
}

inline void exec(sqlite3* db, const std::string& sql) {
  char* message = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK) << (message ? message : "") << sql;
}

}  // namespace scaleprof::testing
