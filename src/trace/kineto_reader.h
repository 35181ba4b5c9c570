// Imports one Kineto (PyTorch profiler) Chrome-trace document into a RankTrace.
//
// Understands the envelope `{"traceEvents": [...], ...}` in any key order and the bare event array of
// PyTorch's legacy exporter. Keeps 'X' complete events and [memory] instants; counts metadata, flow
// and counter events without storing them. Event-level problems (missing or negative dur, a ts that
// overflows int64, a name that is not a string) drop that event with a warning naming the byte
// offset; document-level problems (truncated or invalid JSON, no traceEvents) fail the document.
#pragma once

#include <simdjson.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"
#include "trace/byte_stream.h"
#include "trace/event_table.h"

namespace scaleprof::trace {

struct ParseOptions {
  // Repair the invalid JSON some Kineto versions wrote (bare N/A, unescaped quotes in names) and
  // parse again, instead of failing. The number of repairs is reported in ReadStats::repairs.
  bool lenient = true;
  // Bytes of JSON parsed at a time by the streaming reader (0: 512 KiB). Tests make it tiny to cut
  // windows everywhere.
  size_t window_bytes = 0;
  // Threads that read this one file, the calling thread included (1: the calling thread alone).
  // With more, the calling thread inflates and cuts windows between two elements of traceEvents
  // (found from the JSON's depth and strings, whatever the layout), the others parse
  // them (the calling thread too when they are behind), and the rows are appended in file order:
  // the result is the same, byte for byte, as with 1. A caller
  // reading several files at once divides its threads between them (see trace_set.cc) rather than
  // multiplying them.
  unsigned threads = 1;
  // Called by the streaming reader after each window with the bytes of the file read so far
  // (compressed bytes for gzip): lets a caller show progress through one large file.
  std::function<void(uint64_t)> on_bytes_read;
};

// Parses `text` (a whole document). `path` is used only in messages. The rank is left at 0 unless
// the trace's distributedInfo gives one; callers assign ranks (see trace_set.h).
Result<RankTrace> parse_kineto_trace(std::string_view path, const simdjson::padded_string& text,
                                     const ParseOptions& options = {});

// Parses a document read from `in`, window by window, in memory bounded by the window size (a few
// MB) rather than the trace's size. Lenient repairs are not applied here (see read_kineto_trace).
Result<RankTrace> parse_kineto_stream(std::string_view path, ByteStream& in, const ParseOptions& options = {});

// Opens the input again from its first byte (for readers that may need a second pass).
using StreamOpener = std::function<std::unique_ptr<ByteStream>(std::string* error)>;

// Like parse_kineto_stream, on options.threads threads; if the parallel pass gives up (a window
// that does not parse on its own) the input is opened again and read serially.
Result<RankTrace> parse_kineto_stream(std::string_view path, const StreamOpener& open, const ParseOptions& options);

// Reads the file as a stream (inflating gzip on the fly) and parses it, in windows cut from the
// JSON's structure whatever its layout. Falls back to reading the whole document when one element
// of traceEvents is larger than the largest window (256 MiB), or when lenient mode has invalid JSON
// to repair.
Result<RankTrace> read_kineto_trace(const std::string& path, const ParseOptions& options = {});

}  // namespace scaleprof::trace
