// The streaming reader: reads a Kineto trace from a ByteStream in windows cut between two elements
// of traceEvents, the envelope around it member by member, and (with threads > 1) hands windows to
// the window workers. Memory stays bounded by the window whatever the trace's size and layout.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "trace/byte_stream.h"
#include "trace/envelope_scanner.h"
#include "trace/event_importer.h"
#include "trace/kineto_reader.h"

namespace scaleprof::trace {

// Why StreamingParser::parse() failed: the reader decides its retries by this, never by the
// wording of the message.
enum class ParseFailure : uint8_t {
  kNone,
  // The parallel phase gave up on a window that did not parse on its own: the caller reads the
  // file again serially (which then reports any error exactly as it always does).
  kNeedsSerial,
  // One element of the array is larger than the largest window (kMaxWindow): the caller parses
  // the whole document at once.
  kNeedsWholeDocument,
  // The JSON is invalid or ends too soon (ended_early() tells which): lenient mode may repair it.
  kJson,
  // Anything else (I/O, no traceEvents, invalid UTF-8, values past the bounds): the error stands.
  kOther,
};

// Reads the traceEvents array in windows of 512 KiB cut at a ',' outside strings, found from the
// JSON's structure (trace/window_cut.h), each parsed in place as `[e1, e2, ...]` by writing '['
// before it and ']' over that ','. Memory stays bounded by the window whatever the trace's size
// and layout.
class StreamingParser {
 public:
  // `parallel`: the caller can read the input again if the parallel phase gives up (kNeedsSerial).
  StreamingParser(std::string_view path, ByteStream& in, const ParseOptions& options, uint64_t size_hint,
                  bool parallel = false)
      : path_(path),
        in_(in),
        options_(options),
        size_hint_(size_hint),
        parallel_(parallel && options.threads > 1),
        kWindow(options.window_bytes ? options.window_bytes : kDefaultWindow) {}

  Result<RankTrace> parse();
  // After a failed parse(): why it failed.
  ParseFailure failure() const { return failure_; }
  // After a failed parse(): the data ended before the document did (no repair can help).
  bool ended_early() const { return ended_early_; }

 private:
  bool ended_early_ = false;
  ParseFailure failure_ = ParseFailure::kNone;
  Result<RankTrace> parse_stream();
  // `error`, recorded as a failure of kind `why`.
  Error failed(ParseFailure why, Error error) {
    failure_ = why;
    return error;
  }
  static constexpr size_t kDefaultWindow = 512 << 10;
  static constexpr size_t kMaxWindow = 256 << 20;

  // Makes buf_[1..] hold the unread bytes from pos_ and reads until `want` bytes are there or EOF.
  // False once the stream has failed.
  bool fill(size_t want);
  // The middle of the events array on options_.threads worker threads: this thread inflates and
  // cuts windows between two events, workers parse them, rows are appended in file order. The
  // window the data ends in is left to the serial loop. False: a window did not parse on its own,
  // or the stream failed, and the file must be read serially.
  bool parse_windows_in_parallel(EventImporter& importer, RankTrace& trace);
  // Where the serial loop cuts the unread bytes (pos_ at an element): just after the array's ']' if
  // it is there, else at the last ',' between two elements; 0 if none (the first element is longer
  // than the bytes read). Found from the JSON's structure, so windows stay bounded whatever the
  // layout, and a window never ends inside an element (issue 18: cut at a line break inside an
  // event, a window whose ']' closed a list spread over lines read as the end of traceEvents, and
  // the file was read again whole).
  size_t serial_cut() const;
  // Feeds the bytes from pos_ to `scanner`, importing each top-level member as it ends, until the
  // events array opens (*events_found, pos_ just after its '[') or the data ends.
  Status scan_envelope(EnvelopeScanner& scanner, EventImporter& importer, od::parser& parser, RankTrace* trace,
                       bool* events_found);
  // A window part's strings are kept for the next window it is reused for while they hold at most
  // this (each part in flight holds its own copy).
  static constexpr size_t kKeptPartStrings = 1 << 20;
  // Values of keys outside traceEvents larger than this are skipped (with a warning), not kept.
  static constexpr size_t kMaxEnvelopeValue = 16 << 20;
  Error stream_error() const { return Error{in_.error()}; }

  std::string_view path_;
  ByteStream& in_;
  const ParseOptions& options_;
  uint64_t size_hint_;  // expected JSON bytes (0: unknown), to reserve the columns once
  bool parallel_;
  // The columns are sized again from the rows of the first 1/kDensityShare of the file
  // (reserve_rows_at_density), once.
  static constexpr uint64_t kDensityShare = 32;
  bool density_checked_ = false;
  std::vector<char> buf_;
  size_t pos_ = 1;           // next unread byte in buf_
  size_t len_ = 1;           // bytes valid in buf_ (buf_[0] is headroom for the '[')
  uint64_t buf_offset_ = 0;  // stream offset of buf_[0]
  // The file offset of buf_[i] (buf_[0] is headroom and holds no data).
  uint64_t stream_offset(size_t i) const { return buf_offset_ + i - 1; }

  bool eof_ = false;
  const size_t kWindow;  // NOLINT(readability-identifier-naming): a constant per parser
};

}  // namespace scaleprof::trace
