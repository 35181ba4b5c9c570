// HAND-WRITTEN nsys fixtures: small SQLite files written by the tests to the documented schema of
// `nsys export --type sqlite` (nsys 2025.1, schema 3.17; ../shared/reference/anchor-analyses.md,
// section 9.1). They hold only the tables and columns the reader reads, with made-up values. They
// are not captures: the one real capture is ../shared/traces/nsys/fuser_report1.sqlite (never
// committed); multi-rank and NCCL cases exist only as these fixtures.
#pragma once

#include <sqlite3.h>

#include <cstdio>
#include <string>

namespace scaleprof::testing {

// The schema subset, as nsys creates it (types as in the export).
inline const char* kNsysFixtureSchema = R"sql(
PRAGMA page_size = 512;
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, totalMemory INTEGER,
  smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, gridX INTEGER NOT NULL,
  gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, registersPerThread INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
  callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  value INTEGER NOT NULL, bytes INTEGER NOT NULL, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER);
)sql";

// One rank of a data-parallel step (made-up values): process 100, thread 100 (globalTid
// (100 << 24) | 100), device `device`, two NVTX ProfilerStep ranges, per step a GEMM kernel on
// stream 7 and an NCCL AllReduce on stream 13 that overlaps its last 200 us, launched by
// cudaLaunchKernel calls with matching correlation ids; one copy, one set, one stream sync.
// `lag_ns` shifts the rank's AllReduce starts (a late rank).
inline std::string nsys_fixture_rank_sql(int device, long long lag_ns) {
  const long long tid = (100LL << 24) | 100;
  const long long pid = 100LL << 24;
  std::string sql = R"sql(
INSERT INTO StringIds VALUES (1, 'ampere_sgemm_128x64_tn'), (2, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'),
  (3, 'cudaLaunchKernel_v7000'), (4, 'cuLaunchKernel'), (5, 'cudaMemcpyAsync_v3020'), (6, 'ProfilerStep#1'), (7, 'ProfilerStep#2');
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '', '');
)sql";
  auto add = [&](const std::string& s) { sql += s + ";\n"; };
  add("INSERT INTO TARGET_INFO_GPU VALUES (0, " + std::to_string(device) + ", 'NVIDIA H100', 85000000000, 132, 9, 0)");
  for (int step = 0; step < 2; ++step) {
    const long long t0 = 1000000 + step * 5000000LL;  // ns since the session start
    const long long corr = 10 + step * 10;
    add("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId) VALUES (" +
        std::to_string(t0) + ", " + std::to_string(t0 + 4000000) + ", 59, NULL, " + std::to_string(tid) + ", " +
        std::to_string(6 + step) + ", 0)");
    add("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + std::to_string(t0 + 10000) + ", " +
        std::to_string(t0 + 15000) + ", 1, " + std::to_string(tid) + ", " + std::to_string(corr) + ", 3, 0, NULL)");
    add("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + std::to_string(t0 + 20000) + ", " +
        std::to_string(t0 + 26000) + ", 1, " + std::to_string(tid) + ", " + std::to_string(corr + 1) + ", 3, 0, NULL)");
    // GEMM: 1 ms from t0 + 100 us; AllReduce: 500 us from t0 + 900 us (+ lag): 200 us overlap.
    add("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + std::to_string(t0 + 100000) + ", " +
        std::to_string(t0 + 1100000) + ", " + std::to_string(device) + ", 1, 7, " + std::to_string(corr) + ", " +
        std::to_string(pid) + ", 1, 1, 1, 128, 2, 1, 256, 1, 1, 64, 1024, 2048)");
    add("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + std::to_string(t0 + 900000 + lag_ns) + ", " +
        std::to_string(t0 + 1400000 + lag_ns) + ", " + std::to_string(device) + ", 1, 13, " + std::to_string(corr + 1) +
        ", " + std::to_string(pid) + ", 2, 2, 2, 4, 1, 1, 512, 1, 1, 96, 0, 0)");
  }
  add("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (500000, 520000, 1, " + std::to_string(tid) + ", 5, 5, 0, NULL)");
  add("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (510000, 610000, " + std::to_string(device) + ", 1, 7, 5, " +
      std::to_string(pid) + ", 1000000, 1, 1, 2)");
  add("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (620000, 630000, " + std::to_string(device) + ", 1, 7, 6, " +
      std::to_string(pid) + ", 0, 4096, 2)");
  add("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (640000, 650000, " + std::to_string(device) +
      ", 1, 7, 7, " + std::to_string(pid) + ", 3, 0)");
  return sql;
}

// Writes `sql` to a new SQLite file at `path`; "" on success, else SQLite's message.
inline std::string write_sqlite(const std::string& path, const std::string& sql) {
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return "cannot open " + path;
  }
  char* error = nullptr;
  std::string message;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    message = error != nullptr ? error : "error";
    sqlite3_free(error);
  }
  sqlite3_close(db);
  return message;
}

}  // namespace scaleprof::testing
