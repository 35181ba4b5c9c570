// Which reader a trace file needs, found from its content (and, for nsys reports, its name), and
// the one entry point that reads any of them into a RankTrace: a Kineto JSON trace (plain or gzip),
// an Nsight Systems SQLite export (found by SQLite's magic "SQLite format 3\0", whatever the file
// is called), or an Nsight Systems report (.nsys-rep, .qdrep: a format only nsys reads), exported
// first with `nsys export --type sqlite` when nsys is on PATH.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "core/result.h"
#include "trace/event_table.h"
#include "trace/kineto_reader.h"

namespace scaleprof::trace {

enum class TraceFormat { kKineto, kNsysSqlite, kNsysReport };

// The format of the file at `path`: SQLite's magic in its first 16 bytes makes it an nsys export;
// a name ending in .nsys-rep or .qdrep an nsys report; anything else (a pipe, gzip, JSON, garbage)
// goes to the Kineto reader, whose errors say what is wrong with it.
TraceFormat detect_trace_format(const std::string& path);

// True for the names of nsys reports (.nsys-rep, .qdrep).
bool is_nsys_report_name(std::string_view path);

// Reads `path` with the reader its format needs. For an nsys report: `nsys export` into a private
// temporary folder (removed afterwards) within `export_deadline`; a one-line error naming the file
// when nsys is not on PATH, fails or runs out of time.
Result<RankTrace> read_trace_file(const std::string& path, const ParseOptions& options = {},
                                  std::chrono::seconds export_deadline = std::chrono::seconds(600));

}  // namespace scaleprof::trace
