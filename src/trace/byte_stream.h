// ByteStream: sequential reads of a trace file's JSON text, inflating gzip on the fly.
//
// The streaming reader pulls a few megabytes at a time, so a trace of any size is read in bounded
// memory. Gzip is recognised by its magic bytes, not the file name; concatenated gzip members are
// read as one stream.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"

namespace scaleprof::trace {

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Reads up to `n` bytes; returns 0 at the end of the data or on error (see error()).
  virtual size_t read(char* dst, size_t n) = 0;
  // Empty while the stream is healthy; otherwise a one-line message naming the file and offset.
  virtual const std::string& error() const = 0;
  // Empty unless something was ignored that the user should hear about (data after the end of the
  // gzip stream); one line naming the file and offset.
  virtual const std::string& warning() const { return no_warning_; }
  // Bytes of the underlying file consumed so far.
  virtual uint64_t compressed_bytes() const = 0;
  // Expected size of the whole (inflated) text, 0 if unknown: the file size, or the gzip trailer's
  // size field when it is plausible. Only a hint for reserving memory.
  uint64_t size_hint() const { return size_hint_; }
  void set_size_hint(uint64_t bytes) { size_hint_ = bytes; }

 private:
  uint64_t size_hint_ = 0;
  std::string no_warning_;
};

// Opens `path`; gzip is inflated transparently. On failure returns nullptr and sets *error.
std::unique_ptr<ByteStream> open_trace_stream(const std::string& path, std::string* error);

// A stream over bytes in memory (gzip-compressed or not); `bytes` must outlive the stream.
std::unique_ptr<ByteStream> memory_stream(std::string_view name, std::string_view bytes);

// True if `path` names a regular file (one that can be opened and read a second time).
bool is_regular_file(const std::string& path);

// For inputs that can be read only once (a pipe such as `<(gzip -dc x)`): wraps `in` so every byte
// read is also written to an unnamed temporary file (disk, not memory). nullptr if none can be made.
std::unique_ptr<ByteStream> recording_stream(std::unique_ptr<ByteStream> in);
// Reads what is left of a recording stream, then returns a stream over all of its text from the
// first byte (the recording is handed over). On failure returns nullptr and sets *error.
std::unique_ptr<ByteStream> replay_recording(std::unique_ptr<ByteStream> recording, std::string* error);

// Reads everything left in `in` into one padded buffer (for the whole-document parser).
Result<simdjson::padded_string> read_whole_stream(ByteStream& in);

bool looks_gzipped(std::string_view bytes);

}  // namespace scaleprof::trace
