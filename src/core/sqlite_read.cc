#include "core/sqlite_read.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>

namespace scaleprof {

namespace {

using Clock = std::chrono::steady_clock;

int on_progress(void* clock) {
  auto* c = static_cast<SqliteClock*>(clock);
  if (Clock::now() < c->deadline) return 0;
  c->expired = true;
  return 1;  // SQLITE_INTERRUPT
}

}  // namespace

bool has_sqlite_magic(std::string_view head) {
  return head.substr(0, kSqliteMagic.size()) == kSqliteMagic;
}

bool is_virtual_table_sql(std::string_view sql) {
  std::string words;
  for (char c : sql.substr(0, 64)) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (!words.empty() && words.back() != ' ') words += ' ';
    } else {
      words += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
  }
  return words.starts_with("create virtual ");
}

SqliteStatement::SqliteStatement(SqliteFile& file, const char* sql) {
  file.clock_.expired = false;
  file.clock_.deadline = std::min(Clock::now() + file.limits_.query_deadline, file.file_end_);
  rc_ = sqlite3_prepare_v2(file.db_, sql, -1, &stmt_, nullptr);
}
SqliteStatement::~SqliteStatement() {
  sqlite3_finalize(stmt_);
}
bool SqliteStatement::ok() const {
  return rc_ == SQLITE_OK && stmt_ != nullptr;
}
void SqliteStatement::bind(int index, const std::string& text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}
int SqliteStatement::step() {
  return sqlite3_step(stmt_);
}
int SqliteStatement::type(int column) const {
  return sqlite3_column_type(stmt_, column);
}
size_t SqliteStatement::bytes(int column) const {
  return static_cast<size_t>(sqlite3_column_bytes(stmt_, column));
}
std::string SqliteStatement::text(int column) const {
  return std::string(view(column));
}
std::string_view SqliteStatement::view(int column) const {
  const unsigned char* t = sqlite3_column_text(stmt_, column);
  if (t == nullptr) return {};
  return {reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
}
int64_t SqliteStatement::integer(int column) const {
  return sqlite3_column_int64(stmt_, column);
}
double SqliteStatement::real(int column) const {
  return sqlite3_column_double(stmt_, column);
}

Result<std::unique_ptr<SqliteFile>> SqliteFile::open(const std::string& path, const SqliteLimits& limits) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Error{fmt::format("{}: no such SQLite file", path), ErrorKind::kNotFound};
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Error{fmt::format("{}: cannot open the SQLite database: {}", path, message), ErrorKind::kIo};
  }
  // The file's schema is not trusted: no SQL function with side effects runs from a view or
  // trigger, and the schema tables cannot be written.
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, limits.max_value_bytes);
  sqlite3_busy_timeout(db, 5000);  // a writer holding the lock briefly is waited for, not an error
  return std::unique_ptr<SqliteFile>(new SqliteFile(db, path, limits));
}

SqliteFile::SqliteFile(sqlite3* db, std::string path, const SqliteLimits& limits)
    : db_(db), path_(std::move(path)), limits_(limits) {
  if (limits_.file_deadline) file_end_ = Clock::now() + *limits_.file_deadline;
  sqlite3_progress_handler(db_, 1000, on_progress, &clock_);
}

SqliteFile::~SqliteFile() {
  sqlite3_close(db_);
}

SqliteTableCheck SqliteFile::check_table(const std::string& table, std::string* type_out) {
  std::string type;
  std::string sql;
  int found = 0;
  {
    SqliteStatement s(*this, "SELECT type, sql FROM sqlite_master WHERE name = ? COLLATE NOCASE LIMIT 4");
    if (!s.ok()) return SqliteTableCheck::kFailed;
    s.bind(1, table);
    int rc = 0;
    while ((rc = s.step()) == SQLITE_ROW) {
      ++found;
      if (type.empty() || s.text(0) != "table") {
        type = s.text(0);
        sql = s.text(1);
      }
    }
    if (rc != SQLITE_DONE) return SqliteTableCheck::kFailed;
  }
  if (type_out != nullptr) *type_out = type;
  if (found == 0) return SqliteTableCheck::kMissing;
  if (type == "view") return SqliteTableCheck::kView;
  if (type != "table") return SqliteTableCheck::kOther;
  if (is_virtual_table_sql(sql)) return SqliteTableCheck::kVirtual;
  return SqliteTableCheck::kTable;
}

std::set<std::string> SqliteFile::columns(const std::string& table) {
  std::set<std::string> out;
  SqliteStatement s(*this, "SELECT name FROM pragma_table_info(?) LIMIT 1000");
  if (!s.ok()) return out;
  s.bind(1, table);
  int rc = 0;
  while ((rc = s.step()) == SQLITE_ROW) out.insert(s.text(0));
  if (rc != SQLITE_DONE) out.clear();
  return out;
}

std::string SqliteFile::message() const {
  return sqlite3_errmsg(db_);
}

}  // namespace scaleprof
