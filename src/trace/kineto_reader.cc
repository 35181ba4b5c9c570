#include "trace/kineto_reader.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <utility>

#include "trace/byte_stream.h"
#include "trace/event_importer.h"
#include "trace/json_repair.h"
#include "trace/streaming_parser.h"

namespace scaleprof::trace {

namespace {

// One parse of the whole text. On failure, *repairable says whether lenient mode's repair of the text
// could help: not for invalid UTF-8, an empty file or a document without traceEvents.
Result<RankTrace> parse_once(std::string_view path, const simdjson::padded_string& text, bool* repairable) {
  *repairable = false;
  RankTrace trace;
  trace.path = std::string(path);
  trace.stats.json_bytes = text.size();
  reserve_event_rows(text.size(), &trace);
  od::parser parser;
  od::document doc;
  // A UTF-8 byte order mark is skipped (HTA accepts it); offsets stay offsets into the file.
  const size_t bom = text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  if (auto e = parser.iterate(text.data() + bom, text.size() - bom, text.size() - bom + simdjson::SIMDJSON_PADDING)
                   .get(doc)) {
    if (e == simdjson::UTF8_ERROR) {
      auto bad = first_invalid_utf8(std::string_view(text.data(), text.size()));
      return Error{fmt::format("{}:{}: invalid UTF-8", path, bad.value_or(0))};
    }
    if (e == simdjson::EMPTY) return Error{fmt::format("{}:0: empty file (no JSON value)", path)};
    *repairable = true;
    return Error{fmt::format("{}:0: invalid JSON ({})", path, simdjson::error_message(e))};
  }
  EventImporter importer(path, text, &trace);
  if (std::string error = importer.import(doc); !error.empty()) {
    *repairable = !importer.found_no_events();
    return Error{std::move(error)};
  }
  if (auto status = finalize_trace(&trace); !status) {
    *repairable = true;  // as any other failure of a parsed document
    return status.error();
  }
  return trace;
}

}  // namespace

Result<RankTrace> parse_kineto_trace(std::string_view path, const simdjson::padded_string& text,
                                     const ParseOptions& options) {
  bool repairable = false;
  auto first = parse_once(path, text, &repairable);
  if (first.ok() || !options.lenient || !repairable) return first;
  // Lenient mode: repair the known Kineto defects and try once more; report the original error if
  // the repaired text still does not parse.
  std::string repaired;
  size_t repairs = repair_kineto_json(std::string_view(text.data(), text.size()), &repaired);
  if (repairs == 0) return first;
  simdjson::padded_string repaired_text(repaired);
  repaired.clear();
  repaired.shrink_to_fit();
  auto second = parse_once(path, repaired_text, &repairable);
  if (!second.ok()) return first;
  second.value().stats.repairs = repairs;
  second.value().stats.json_bytes = text.size();
  return second;
}

Result<RankTrace> parse_kineto_stream(std::string_view path, ByteStream& in, const ParseOptions& options) {
  StreamingParser streaming(path, in, options, in.size_hint());
  return streaming.parse();
}

Result<RankTrace> parse_kineto_stream(std::string_view path, const StreamOpener& open, const ParseOptions& options) {
  std::string error;
  std::unique_ptr<ByteStream> in = open(&error);
  if (!in) return Error{std::move(error)};
  StreamingParser parallel(path, *in, options, in->size_hint(), /*parallel=*/true);
  auto parsed = parallel.parse();
  // Any failure is read again serially, so an error names the same place and words whatever the
  // thread count (the parallel phase can meet a defect in a different window first); errors are rare.
  if (parsed.ok()) return parsed;
  in = open(&error);
  if (!in) return Error{std::move(error)};
  return parse_kineto_stream(path, *in, options);
}

namespace {
Result<RankTrace> finish_read(const std::string& path, const ParseOptions& options, bool replayable,
                              const StreamingParser& streaming, std::unique_ptr<ByteStream> in,
                              Result<RankTrace> streamed);
}  // namespace

Result<RankTrace> read_kineto_trace(const std::string& path, const ParseOptions& options) {
  std::string error;
  std::unique_ptr<ByteStream> in = open_trace_stream(path, &error);
  if (!in) return Error{std::move(error)};
  // A pipe cannot be opened twice: its text is recorded (to disk) for the whole-document retry.
  const bool replayable = is_regular_file(path);
  if (!replayable) {
    if (auto recording = recording_stream(std::move(in))) {
      in = std::move(recording);
    } else {
      return Error{fmt::format("{}: cannot create a temporary file to read a non-regular input", path), ErrorKind::kIo};
    }
  }
  StreamingParser streaming(path, *in, options, in->size_hint(), /*parallel=*/replayable);
  auto streamed = streaming.parse();
  if (!streamed.ok() && streaming.failure() == ParseFailure::kNeedsSerial) {
    // A window did not parse on its own: read again on this thread alone.
    in = open_trace_stream(path, &error);
    if (!in) return Error{std::move(error)};
    StreamingParser serial(path, *in, options, in->size_hint());
    return finish_read(path, options, replayable, serial, std::move(in), serial.parse());
  }
  return finish_read(path, options, replayable, streaming, std::move(in), std::move(streamed));
}

namespace {

// After a streaming read of `path`: the result, or when that failed with JSON lenient mode may
// repair (or an element larger than the largest window), the whole-document parse.
Result<RankTrace> finish_read(const std::string& path, const ParseOptions& options, bool replayable,
                              const StreamingParser& streaming, std::unique_ptr<ByteStream> in,
                              Result<RankTrace> streamed) {
  std::string error;
  if (streamed.ok()) return streamed;
  const bool too_large = streaming.failure() == ParseFailure::kNeedsWholeDocument;
  const bool json_problem = too_large || streaming.failure() == ParseFailure::kJson;
  // Nothing to repair in data that ends too soon: retrying would only hold the whole text in memory.
  if (!json_problem || streaming.ended_early() || (!too_large && !options.lenient)) return streamed;
  // An element over 256 MiB, or JSON lenient mode may repair: parse the whole document at once.
  if (replayable) {
    in = open_trace_stream(path, &error);
  } else if (in = replay_recording(std::move(in), &error); !in) {
    error = fmt::format("{}: {}", path, error);
  }
  if (!in) return Error{std::move(error)};
  auto text = read_whole_stream(*in);
  if (!text) return text.error();
  auto whole = parse_kineto_trace(path, text.value(), options);
  if (whole) {
    whole.value().stats.compressed_bytes = in->compressed_bytes();
    if (!in->warning().empty()) whole.value().warnings.push_back(diagnostic(Severity::kWarning, in->warning()));
  }
  if (!whole && !too_large) return streamed;  // the streaming error has the better offset
  return whole;
}

}  // namespace

}  // namespace scaleprof::trace
