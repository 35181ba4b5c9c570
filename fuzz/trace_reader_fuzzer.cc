// libFuzzer target for the trace reader: any bytes must give a trace or a one-line error, never a
// crash, hang or sanitizer report, and the same result serially and on two threads, with any window. The first byte
// picks the window size so window cuts land everywhere; the rest is the file (plain or gzip).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "trace/byte_stream.h"
#include "trace/kineto_reader.h"

namespace {
// The rows, strings, tracks, warnings and element count two readings gave.
bool same_reading(const scaleprof::trace::RankTrace& a, const scaleprof::trace::RankTrace& b) {
  return a.events.ts == b.events.ts && a.events.dur == b.events.dur && a.events.name == b.events.name &&
         a.events.track == b.events.track && a.events.file_index == b.events.file_index &&
         a.strings.size() == b.strings.size() && a.tracks.tid_label == b.tracks.tid_label && a.warnings == b.warnings &&
         a.stats.events_total == b.stats.events_total && a.stats.rejected_events == b.stats.rejected_events &&
         a.memory.event == b.memory.event && a.memory.addr == b.memory.addr &&
         a.device_args.event == b.device_args.event && a.counter_args.event == b.counter_args.event &&
         a.counter_args.name == b.counter_args.name;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using namespace scaleprof::trace;
  ParseOptions options;
  options.window_bytes = 16 + static_cast<size_t>(data[0]) * 8;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto stream = memory_stream("fuzz", bytes);
  auto streamed = parse_kineto_stream("fuzz", *stream, options);
  if (streamed.ok() && streamed.value().events.size() > streamed.value().stats.events_total) __builtin_trap();
  if (!streamed.ok() && streamed.error().message.find('\n') != std::string::npos) __builtin_trap();
  // The parallel reader (windows parsed on two threads, rows appended in file order) must give the
  // same result as the serial one, error messages included.
  ParseOptions parallel = options;
  parallel.threads = 2;
  auto open = [&](std::string* /*error*/) { return memory_stream("fuzz", bytes); };
  auto par = parse_kineto_stream("fuzz", open, parallel);
  if (par.ok() != streamed.ok()) __builtin_trap();
  if (!par.ok() && par.error().message != streamed.error().message) __builtin_trap();
  if (par.ok() && !same_reading(streamed.value(), par.value())) __builtin_trap();
  // The serial reader's success or failure, and what it reads, do not depend on the window size: one
  // window holding the whole input (gzip: its first MiB inflated) gives the same. The error message
  // may differ: each window reports the first invalid byte simdjson's stage 1 finds in it (see
  // docs/architecture.md).
  ParseOptions one_window;
  const bool gzipped = bytes.size() >= 2 && bytes[0] == '\x1f' && bytes[1] == '\x8b';
  one_window.window_bytes = gzipped ? size_t{1} << 20 : bytes.size() + 64;
  auto stream_once = memory_stream("fuzz", bytes);
  auto once = parse_kineto_stream("fuzz", *stream_once, one_window);
  if (once.ok() != streamed.ok()) __builtin_trap();
  if (once.ok() && !same_reading(streamed.value(), once.value())) __builtin_trap();
  // The whole-document path with lenient repairs, as used for files without line breaks.
  simdjson::padded_string text(bytes.data(), bytes.size());
  auto whole = parse_kineto_trace("fuzz", text, options);
  if (whole.ok() && streamed.ok() && whole.value().events.ts != streamed.value().events.ts) {
    // Both parsers accepted the document: they must agree on every event.
    __builtin_trap();
  }
  return 0;
}
