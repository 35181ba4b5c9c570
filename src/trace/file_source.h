// Reads a trace file into a buffer padded for simdjson, inflating gzip when the bytes say so.
//
// Gzip is detected from the magic bytes, not the name, so a mislabelled file still reads. The
// decompressed size is taken from the gzip trailer to allocate once; when the trailer is wrong
// (members over 4 GiB, concatenated members) the reader falls back to streaming inflate.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>

#include "core/result.h"

namespace scaleprof::trace {

struct FileBytes {
  simdjson::padded_string text;
  uint64_t compressed_bytes = 0;  // size on disk
};

// Errors name the file and, for corrupt gzip, the byte offset in the compressed stream.
Result<FileBytes> read_trace_bytes(const std::string& path);

// Inflates gzip data already in memory (exposed for the fuzzer and tests).
Result<FileBytes> inflate_gzip(std::string_view path, std::string_view compressed);

bool looks_gzipped(std::string_view bytes);

}  // namespace scaleprof::trace
