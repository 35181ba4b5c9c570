// The one way scaleprof opens an SQLite file it did not write (an MLflow database, an nsys export):
// read-only, with the file's schema not trusted, every query under a deadline and every value
// bounded. The file may be anything: a copy, a corrupt file, a hostile one. So:
//  - it is opened SQLITE_OPEN_READONLY (a report never changes or locks out a writer);
//  - no SQL function with side effects runs from its views or triggers (TRUSTED_SCHEMA off) and its
//    schema tables cannot be written (DEFENSIVE);
//  - one cell is at most SqliteLimits::max_value_bytes long (a larger one fails its query);
//  - a query that runs past its deadline is interrupted (a progress handler), so a recursive view
//    or a huge join never hangs the caller; with SqliteLimits::file_deadline set, one deadline also
//    covers every query on the file together (a reader running a few queries cannot take a few
//    deadlines);
//  - a table is read only after check_table() found a real table (sqlite_master type 'table', not a
//    view, not a virtual table) with the columns the reader needs.
// Callers keep SQLite's own result codes (SQLITE_ROW, SQLITE_NULL, ...) from <sqlite3.h>.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace scaleprof {

// "SQLite format 3\0", the first 16 bytes of every SQLite database file.
inline constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};
// True when `head` (the first bytes of a file) starts with kSqliteMagic.
bool has_sqlite_magic(std::string_view head);

struct SqliteLimits {
  std::chrono::milliseconds query_deadline{std::chrono::minutes(5)};  // one query, from prepare to its last row
  // When set: every query together, from open(); each query still ends at its own deadline too.
  std::optional<std::chrono::milliseconds> file_deadline;
  int max_value_bytes = 16 << 20;  // SQLITE_LIMIT_LENGTH
};

// The deadline of the query running now; the progress handler reads it.
struct SqliteClock {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  bool expired = false;
};

// One prepared statement, finalized on every path; preparing it starts the query's deadline.
class SqliteFile;
class SqliteStatement {
 public:
  SqliteStatement(SqliteFile& file, const char* sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  bool ok() const;
  void bind(int index, const std::string& text);
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step();
  int type(int column) const;
  size_t bytes(int column) const;
  // The cell as text, NUL bytes included (the length is SQLite's, not strlen's).
  std::string text(int column) const;
  // The same without a copy; valid until the next step() or another read of the column.
  std::string_view view(int column) const;
  int64_t integer(int column) const;
  double real(int column) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = 1;  // SQLITE_ERROR until prepared
};

// What check_table() found.
enum class SqliteTableCheck { kTable, kMissing, kView, kVirtual, kOther, kFailed };

// An SQLite file opened read-only; closed by the destructor.
class SqliteFile {
 public:
  // Opens `path` read-only with the guards above. ErrorKind::kNotFound when it is not a regular
  // file, kIo when SQLite cannot open it.
  static Result<std::unique_ptr<SqliteFile>> open(const std::string& path, const SqliteLimits& limits = {});
  ~SqliteFile();
  SqliteFile(const SqliteFile&) = delete;
  SqliteFile& operator=(const SqliteFile&) = delete;

  // Whether `table` is a real table; *type_out receives the sqlite_master type of what is there
  // (e.g. "view") when it is not one. Names compare case-insensitively, as SQLite's do.
  SqliteTableCheck check_table(const std::string& table, std::string* type_out = nullptr);
  // The names of `table`'s columns (at most 1,000); empty on failure (see failed()).
  std::set<std::string> columns(const std::string& table);
  // Whether the last query stopped at its deadline; SQLite's message for the last failure.
  bool expired() const { return clock_.expired; }
  std::string message() const;
  const std::string& path() const { return path_; }
  std::chrono::milliseconds deadline() const { return limits_.query_deadline; }
  const std::optional<std::chrono::milliseconds>& file_deadline() const { return limits_.file_deadline; }

 private:
  friend class SqliteStatement;
  SqliteFile(sqlite3* db, std::string path, const SqliteLimits& limits);
  sqlite3* db_;
  std::string path_;
  SqliteLimits limits_;
  SqliteClock clock_;
  std::chrono::steady_clock::time_point file_end_ = std::chrono::steady_clock::time_point::max();
};

// CREATE VIRTUAL TABLE, in any case and spacing: a module's table, not rows in the file.
bool is_virtual_table_sql(std::string_view sql);

}  // namespace scaleprof
