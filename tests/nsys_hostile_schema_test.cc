// The nsys reader against files whose schema lies (issue 30, item 2): StringIds ids shared by many rows
// (a join on them multiplied every kernel), forged sqlite_stat1 statistics (they chose a plan that scanned
// StringIds once per row), many rows naming one string, and a property test over random schemas and
// statistics: every file is either refused in one line naming the file and table, or read with each row
// once and each name as StringIds has it. Timings are measured with the CLI (docs/nsys.md), not here.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/sqlite_read.h"
#include "nsys_fixture.h"
#include "scalability_fixtures.h"
#include "trace/nsys_reader.h"

namespace scaleprof::trace {
namespace {

using testing::kNsysFixtureSchema;
using testing::nsys_fixture_rank_sql;
using testing::write_sqlite;

// StringIds as a hostile file has it: no primary key, so ids need not be unique.
constexpr const char* kLooseStringIds = R"sql(
CREATE TABLE StringIds (id INTEGER, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, gridX INTEGER NOT NULL,
  gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, registersPerThread INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
  callchainId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER);
)sql";

// `n` kernels (1 us each, 2 us apart) named by StringIds id `name_id`, with correlation ids 1..n.
std::string kernels_sql(int n, int64_t name_id) {
  return "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < " + std::to_string(n) +
         ") INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT i * 2000, i * 2000 + 1000, 0, 1, 7, i, 0, " +
         std::to_string(name_id) + ", 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0 FROM c;\n";
}

size_t count(const RankTrace& t, Category c) {
  size_t n = 0;
  for (uint32_t r = 0; r < t.events.size(); ++r) n += t.events.cat[r] == c ? 1 : 0;
  return n;
}

class NsysHostileSchema : public ::testing::Test {
 protected:
  NsysHostileSchema() : dir_("nsys-hostile") {}
  std::string make(const std::string& name, const std::string& sql) {
    const std::string path = dir_ / name;
    EXPECT_EQ(write_sqlite(path, sql), "");
    return path;
  }
  testing::ScratchDir dir_;
};

// 300 rows share id 1: a join made 300 kernels 90,000 (exit 0, every total x300). Refused, naming the
// file, the table and the id.
TEST_F(NsysHostileSchema, SharedStringIdIsRefusedInOneLine) {
  std::string sql = std::string(kLooseStringIds) +
                    "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300) "
                    "INSERT INTO StringIds SELECT 1, 'kernel_' || i FROM c;\n" +
                    kernels_sql(300, 1);
  const std::string path = make("shared-id.sqlite", sql);
  auto read = read_nsys_sqlite(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message, path +
                                      ": table StringIds: id 1 appears more than once; an id must name one string (is "
                                      "this an nsys export? nsys export --type sqlite)");
}

// The runtime and NVTX tables looked names up through the same join: a shared id there is refused too,
// even when no kernel names it.
TEST_F(NsysHostileSchema, SharedIdNamedOnlyByRuntimeAndNvtxIsRefused) {
  const std::string path = make("shared-runtime.sqlite", std::string(kLooseStringIds) + R"sql(
INSERT INTO StringIds VALUES (1, 'kernel'), (5, 'cudaLaunchKernel_v7000'), (5, 'cudaMemcpy_v3020');
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (10, 20, 1, 1, 1, 5, 0, NULL);
INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid) VALUES (10, 20, 59, 5, 1);
)sql");
  auto read = read_nsys_sqlite(path);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message.find(path + ": table StringIds: id 5 appears more than once"), std::string::npos)
      << read.error().message;
}

// A forged sqlite_stat1 (an index on StringIds.id said to be useless, the kernel table said to be tiny)
// made SQLite scan StringIds once per kernel. The reader reads each table with one plain scan, so the
// statistics choose nothing: the result is the one of the same file without them.
TEST_F(NsysHostileSchema, ForgedStatisticsChangeNothing) {
  const std::string base =
      std::string(kLooseStringIds) +
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 2000) "
      "INSERT INTO StringIds SELECT i, 'name_' || i FROM c;\n" +
      kernels_sql(2000, 1234) +
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (10, 20, 1, 1, 1, 77, 0, NULL);\n"
      "INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid) VALUES (5, 9, 59, 1999, 1);\n";
  const std::string plain = make("plain.sqlite", base);
  const std::string forged = make("forged.sqlite", base + R"sql(
CREATE INDEX string_id ON StringIds(id);
CREATE INDEX kernel_name ON CUPTI_ACTIVITY_KIND_KERNEL(demangledName);
ANALYZE;
DELETE FROM sqlite_stat1;
INSERT INTO sqlite_stat1 VALUES ('StringIds', 'string_id', '1000000000 1000000000');
INSERT INTO sqlite_stat1 VALUES ('CUPTI_ACTIVITY_KIND_KERNEL', 'kernel_name', '1 1');
INSERT INTO sqlite_stat1 VALUES ('CUPTI_ACTIVITY_KIND_KERNEL', NULL, '1');
)sql");
  auto a = read_nsys_sqlite(plain);
  auto b = read_nsys_sqlite(forged);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok()) << b.error().message;
  const RankTrace& t = b.value();
  ASSERT_EQ(t.events.size(), a.value().events.size());
  EXPECT_EQ(count(t, Category::kKernel), 2000U);
  EXPECT_EQ(count(t, Category::kCudaRuntime), 1U);
  EXPECT_EQ(count(t, Category::kUserAnnotation), 1U);
  for (uint32_t r = 0; r < t.events.size(); ++r) {
    EXPECT_EQ(t.name(r), a.value().name(r));
    EXPECT_EQ(t.events.ts[r], a.value().events.ts[r]);
    if (t.events.cat[r] == Category::kKernel) {
      EXPECT_EQ(t.name(r), "name_1234");
    }
  }
  EXPECT_EQ(t.name(0), "name_1999");  // NVTX is read first
}

// Many rows naming one string and many strings: each row read once, each name looked up once per row.
TEST_F(NsysHostileSchema, ManyRowsAndStringsAreReadOncePerRow) {
  const std::string path =
      make("many.sqlite", std::string(kLooseStringIds) +
                              "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
                              "WHERE i < 50000) INSERT INTO StringIds SELECT i, 'n' || i FROM c;\n" +
                              kernels_sql(50000, 49999));
  auto read = read_nsys_sqlite(path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  const RankTrace& t = read.value();
  EXPECT_EQ(t.events.size(), 50000U);
  EXPECT_EQ(t.name(0), "n49999");
  EXPECT_EQ(t.name(49999), "n49999");
  EXPECT_EQ(t.events.correlation[49999], 50000);
  EXPECT_TRUE(t.warnings.empty()) << t.warnings[0];
}

// StringIds rows without an integer id or a text value are counted and left out; a name that then
// points nowhere gets the placeholder, as an id that no row has.
TEST_F(NsysHostileSchema, StringRowsOfTheWrongTypeAreCountedNotUsed) {
  const std::string path = make("types.sqlite", std::string(kLooseStringIds) + R"sql(
INSERT INTO StringIds VALUES (1, 'good'), ('x', 'text id'), (2, NULL), (3, x'4142');
)sql" + kernels_sql(3, 1) + "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = correlationId;\n");
  auto read = read_nsys_sqlite(path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  const RankTrace& t = read.value();
  ASSERT_EQ(t.events.size(), 3U);
  EXPECT_EQ(t.name(0), "good");
  EXPECT_EQ(t.name(1), "nsys string 2");
  EXPECT_EQ(t.name(2), "nsys string 3");
  std::string all;
  for (const std::string& w : texts(t.warnings)) all += w + "\n";
  EXPECT_NE(all.find("table StringIds: 1 row(s) without an integer id skipped"), std::string::npos) << all;
  EXPECT_NE(all.find("table StringIds: 2 row(s) without a text value skipped"), std::string::npos) << all;
}

// One deadline covers every query on the file together (SqliteLimits::file_deadline): a query that
// would finish within its own deadline stops when the file's is spent.
TEST_F(NsysHostileSchema, FileDeadlineCoversEveryQuery) {
  const std::string path = make("deadline.sqlite", "CREATE TABLE t (x INTEGER);");
  const char* long_query =
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200000) SELECT count(*) FROM c";
  SqliteLimits per_query;
  per_query.query_deadline = std::chrono::hours(1);
  auto relaxed = SqliteFile::open(path, per_query);
  ASSERT_TRUE(relaxed.ok());
  {
    SqliteStatement s(*relaxed.value(), long_query);
    ASSERT_EQ(s.step(), SQLITE_ROW);
    EXPECT_EQ(s.integer(0), 200000);
  }
  SqliteLimits whole_file = per_query;
  whole_file.file_deadline = std::chrono::milliseconds(0);
  auto strict = SqliteFile::open(path, whole_file);
  ASSERT_TRUE(strict.ok());
  SqliteStatement s(*strict.value(), long_query);
  EXPECT_EQ(s.step(), SQLITE_INTERRUPT);
  EXPECT_TRUE(strict.value()->expired());
  // The reader's message names the file, the table it stopped at and the deadline of the whole file.
  const std::string fixture =
      make("rank.sqlite", std::string(kNsysFixtureSchema) + nsys_fixture_rank_sql(0, 0) + kernels_sql(20000, 1));
  NsysReadOptions options;
  options.limits.query_deadline = std::chrono::milliseconds(0);
  auto read = read_nsys_sqlite(fixture, options);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().kind, ErrorKind::kTooLarge);
  EXPECT_TRUE(read.error().message.starts_with(fixture + ": reading the file took longer than 0 s; stopped at table"))
      << read.error().message;
}

// Property: random schemas (StringIds with or without a primary key, indexes on any column read) and
// random statistics (sqlite_stat1 rows with random counts, for real and made-up indexes), with ids that
// may repeat. Each file is refused with the one-line duplicate-id error exactly when an id repeats, and
// otherwise read with every kernel and runtime row once, each named as StringIds names its id.
TEST_F(NsysHostileSchema, RandomSchemasAndStatisticsReadEachRowOnce) {
  std::mt19937 rng(30);
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    const bool primary_key = pick(2) == 0;
    std::string sql = primary_key ? std::string(kNsysFixtureSchema) : std::string(kLooseStringIds);
    const int strings = 1 + pick(60);
    const bool repeat = !primary_key && pick(3) == 0;
    std::map<int64_t, std::string> names;
    for (int i = 0; i < strings; ++i) {
      const int64_t id = pick(4) == 0 ? -static_cast<int64_t>(i) : i * 3;
      if (names.count(id) != 0) continue;
      names[id] = "s" + std::to_string(round) + "_" + std::to_string(i);
      sql += "INSERT INTO StringIds VALUES (" + std::to_string(id) + ", '" + names[id] + "');\n";
    }
    if (repeat) sql += "INSERT INTO StringIds VALUES (" + std::to_string(names.begin()->first) + ", 'again');\n";
    const int kernels = pick(200);
    std::vector<int64_t> kernel_ids;
    for (int k = 0; k < kernels; ++k) {
      // Mostly ids that exist, sometimes one that does not.
      auto it = names.begin();
      std::advance(it, pick(static_cast<int>(names.size())));
      const int64_t id = pick(10) == 0 ? 1000000 + k : it->first;
      kernel_ids.push_back(id);
      sql += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + std::to_string(1000 + k * 10) + ", " +
             std::to_string(1005 + k * 10) + ", 0, 1, 7, " + std::to_string(k) + ", 0, " + std::to_string(id) +
             ", 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0);\n";
    }
    const int runtime = pick(50);
    for (int k = 0; k < runtime; ++k) {
      sql += "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + std::to_string(k * 10) + ", " +
             std::to_string(k * 10 + 5) + ", 1, 1, " + std::to_string(k) + ", " +
             std::to_string(names.rbegin()->first) + ", 0, NULL);\n";
    }
    const char* indexable[] = {"StringIds(id)",
                               "StringIds(value)",
                               "StringIds(id, value)",
                               "CUPTI_ACTIVITY_KIND_KERNEL(demangledName)",
                               "CUPTI_ACTIVITY_KIND_KERNEL(start, end)",
                               "CUPTI_ACTIVITY_KIND_RUNTIME(nameId)"};
    std::vector<std::string> indexes;
    for (int i = 0; i < 6; ++i) {
      if (pick(2) == 0) continue;
      indexes.push_back("i" + std::to_string(i));
      sql += "CREATE INDEX " + indexes.back() + " ON " + indexable[i] + ";\n";
    }
    sql += "ANALYZE;\n";
    if (pick(4) != 0) {
      sql += "DELETE FROM sqlite_stat1;\n";
      const char* tables[] = {"StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"};
      for (int i = 0, n = pick(8); i < n; ++i) {
        const std::string idx = indexes.empty() || pick(3) == 0
                                    ? "NULL"
                                    : "'" + indexes[static_cast<size_t>(pick(static_cast<int>(indexes.size())))] + "'";
        sql += "INSERT INTO sqlite_stat1 VALUES ('" + std::string(tables[pick(4)]) + "', " + idx + ", '" +
               std::to_string(1 + rng() % 2000000000) + " " + std::to_string(1 + rng() % 2000000000) + "');\n";
      }
    }
    const std::string path = make("random-" + std::to_string(round) + ".sqlite", sql);
    auto read = read_nsys_sqlite(path);
    if (repeat) {
      ASSERT_FALSE(read.ok());
      EXPECT_EQ(read.error().message.find('\n'), std::string::npos);
      EXPECT_NE(read.error().message.find(path + ": table StringIds: id " + std::to_string(names.begin()->first) +
                                          " appears more than once"),
                std::string::npos)
          << read.error().message;
      continue;
    }
    ASSERT_TRUE(read.ok()) << read.error().message;
    const RankTrace& t = read.value();
    ASSERT_EQ(count(t, Category::kKernel), static_cast<size_t>(kernels));
    ASSERT_EQ(count(t, Category::kCudaRuntime) + count(t, Category::kCudaDriver), static_cast<size_t>(runtime));
    for (uint32_t r = 0; r < t.events.size(); ++r) {
      if (t.events.cat[r] != Category::kKernel) continue;
      const int64_t id = kernel_ids[static_cast<size_t>(t.events.correlation[r])];
      const auto it = names.find(id);
      EXPECT_EQ(t.name(r), it != names.end() ? it->second : "nsys string " + std::to_string(id));
    }
  }
}

}  // namespace
}  // namespace scaleprof::trace
