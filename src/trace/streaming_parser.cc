#include "trace/streaming_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <future>
#include <span>
#include <utility>

#include "trace/json_repair.h"
#include "trace/window_cut.h"
#include "trace/window_workers.h"

namespace scaleprof::trace {

namespace {

bool is_json_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

}  // namespace

bool StreamingParser::fill(size_t want) {
  if (pos_ > 1) {
    std::memmove(buf_.data() + 1, buf_.data() + pos_, len_ - pos_);
    buf_offset_ += pos_ - 1;
    len_ -= pos_ - 1;
    pos_ = 1;
  }
  if (buf_.size() < want + 2 + simdjson::SIMDJSON_PADDING) buf_.resize(want + 2 + simdjson::SIMDJSON_PADDING);
  while (!eof_ && len_ - pos_ < want) {
    size_t got = in_.read(buf_.data() + len_, want - (len_ - pos_));
    if (got == 0) {
      eof_ = true;
      if (!in_.error().empty()) return false;
    }
    len_ += got;
  }
  // A stream that failed stays failed: a later call (the serial loop after the parallel phase met
  // the error) must report it too, not take the data for ended (the fuzzer found a gzip checksum
  // error read as success on two threads).
  return in_.error().empty();
}

Status StreamingParser::scan_envelope(EnvelopeScanner& scanner, EventImporter& importer, od::parser& parser,
                                      RankTrace* trace, bool* events_found) {
  *events_found = false;
  while (true) {
    if (pos_ == len_) {
      if (eof_) return Ok{};
      if (!fill(kWindow)) return stream_error();
      continue;
    }
    const uint64_t offset = stream_offset(pos_);
    EnvelopeScanner::Event event = scanner.feed(buf_[pos_], offset);
    if (scanner.consumed()) ++pos_;
    switch (event) {
      case EnvelopeScanner::Event::kNone:
      case EnvelopeScanner::Event::kDocumentEnd:
        break;
      case EnvelopeScanner::Event::kEventsArray:
        *events_found = true;
        return Ok{};
      case EnvelopeScanner::Event::kSyntaxError:
        return failed(ParseFailure::kJson, Error{fmt::format("{}:{}: {}", path_, offset, scanner.error())});
      case EnvelopeScanner::Event::kMember: {
        if (!scanner.value_kept()) {
          trace->warnings.push_back(
              Diagnostic{Severity::kError, fmt::format("{}:{}", path_, scanner.value_offset()),
                         fmt::format("the value of '{}' ({} bytes) is larger than {} MiB; skipped",
                                     scanner.key().substr(0, 80), scanner.value_bytes(), kMaxEnvelopeValue >> 20)});
          break;
        }
        std::string bracketed;
        bracketed.reserve(scanner.value().size() + 2);
        bracketed.push_back('[');
        bracketed.append(scanner.value());
        bracketed.push_back(']');
        simdjson::padded_string text(bracketed);
        if (std::string error = importer.import_envelope_member(scanner.key(), text, scanner.value_offset(), parser);
            !error.empty()) {
          return failed(ParseFailure::kJson, Error{std::move(error)});
        }
        break;
      }
    }
  }
}

size_t StreamingParser::serial_cut() const {
  const WindowCut c = find_window_cut(std::string_view(buf_.data() + pos_, len_ - pos_));
  if (c.array_closed) return pos_ + c.array_close + 1;
  if (c.element_end != 0) return pos_ + c.element_end;
  return 0;
}

bool StreamingParser::parse_windows_in_parallel(EventImporter& importer, RankTrace& trace) {
  // The calling thread is one of the threads: it inflates, cuts, merges, and parses when the
  // workers are ahead.
  WindowWorkers workers(path_, options_.threads - 1);
  std::deque<std::future<ParsedWindow>> pending;
  // Windows in flight, bounding memory: more than the workers' backlog, so the calling thread
  // waits on a worker only when it is far ahead.
  const size_t max_pending = 3 * static_cast<size_t>(options_.threads) + 2;
  bool ok = true;
  // Window buffers are reused, one per window in flight: allocating one per window let glibc's
  // moving mmap threshold keep the freed ones on the heap (issue 12: 2-thread peak memory).
  std::vector<std::vector<char>> spare;
  // Parts are reused the same way: a new part's columns were allocated, first touched and freed in
  // every window (1-2 % of the CPU time of two threads). A part keeps its strings, with their rank
  // ids, up to kKeptPartStrings: merging then interns only the strings the part had not seen, where
  // it interned every string of every window again.
  struct SparePart {
    RankTrace part;
    std::vector<StringId> rank_ids;
  };
  std::vector<SparePart> spare_parts;
  // The rows of the rank's tables a worker has been asked to map ahead of the merge: 8 windows'
  // worth, a few hundred KB (WindowWorkers::prefault).
  RowsAhead mapped;
  // JSON bytes of the windows merged, until the columns are sized from their density.
  uint64_t merged_bytes = 0;
  auto merge_front = [&] {
    // Waiting on a worker: first parse the windows still queued, so this core does not idle.
    while (pending.front().wait_for(std::chrono::seconds(0)) != std::future_status::ready && workers.help()) {
    }
    ParsedWindow w = pending.front().get();
    pending.pop_front();
    if (ok && !(w.ok && importer.append_part(w.part, &w.rank_ids, w.dropped_warnings, w.summed))) ok = false;
    if (ok && !density_checked_ && (merged_bytes += w.bytes) >= size_hint_ / kDensityShare) {
      density_checked_ = true;
      reserve_rows_at_density(&trace, merged_bytes, size_hint_);
    }
    if (ok) {
      std::vector<std::span<char>> ranges;
      rows_to_map(&trace, w.part, 8, &mapped, &ranges);
      if (!ranges.empty()) workers.prefault(std::move(ranges));
    }
    spare.push_back(std::move(w.text));
    const bool keep_strings = ok && w.part.strings.memory_bytes() <= kKeptPartStrings;
    clear_for_reuse(&w.part, keep_strings);
    if (!keep_strings) w.rank_ids.clear();
    spare_parts.push_back(SparePart{std::move(w.part), std::move(w.rank_ids)});
  };
  while (ok) {
    // One window of text, cut after its last whole event. The last window (the data ends in it) is
    // left to the serial loop, which reports any error. A window with no boundary (an event longer
    // than it) is read on, up to 8 windows, until one comes; past that the serial loop reads the
    // rest. A read error: the serial reader, reading again, reports it where it is (the serial loop
    // would take the failed stream for ended).
    // The cut is the last ',' between two elements, found from the JSON's structure (depth and
    // strings), so it is exact whatever the layout; once the array's ']' is in the bytes read, the
    // rest is the serial loop's.
    size_t comma = 0;
    bool array_closed = false;
    for (size_t want = kWindow; ok && comma == 0 && !array_closed && want <= 8 * kWindow; want *= 2) {
      if (!fill(want)) {
        ok = false;
      } else if (!eof_) {
        const WindowCut c = find_window_cut(std::string_view(buf_.data() + pos_, len_ - pos_));
        if (c.element_end != 0) comma = pos_ + c.element_end;
        array_closed = c.array_closed;
      } else {
        break;
      }
    }
    if (!ok || comma == 0 || eof_) break;
    // The buffer itself becomes the window `[e1,...,en]` (written over the byte before pos_ and the
    // comma after the last event); only what follows the comma, part of one event, is copied to the
    // next buffer.
    std::vector<char> next;
    if (!spare.empty()) {
      next = std::move(spare.back());
      spare.pop_back();
    }
    const size_t tail = len_ - (comma + 1);
    if (next.size() < tail + 2 + simdjson::SIMDJSON_PADDING) next.resize(tail + 2 + simdjson::SIMDJSON_PADDING);
    std::memcpy(next.data() + 1, buf_.data() + comma + 1, tail);
    WindowText window;
    window.begin = pos_ - 1;
    window.size = comma - pos_ + 2;
    window.offset = stream_offset(pos_) - 1;
    buf_[window.begin] = '[';
    buf_[comma] = ']';
    std::memset(buf_.data() + comma + 1, 0, simdjson::SIMDJSON_PADDING);
    buf_offset_ += comma;  // next[1] is the byte after the comma
    window.text = std::exchange(buf_, std::move(next));
    if (!spare_parts.empty()) {
      window.part = std::move(spare_parts.back().part);
      window.rank_ids = std::move(spare_parts.back().rank_ids);
      spare_parts.pop_back();
    }
    pos_ = 1;
    len_ = 1 + tail;
    pending.push_back(workers.parse(std::move(window)));
    if (options_.on_bytes_read) options_.on_bytes_read(in_.compressed_bytes());
    while (!pending.empty() && (pending.size() >= max_pending ||
                                pending.front().wait_for(std::chrono::seconds(0)) == std::future_status::ready)) {
      merge_front();
    }
  }
  while (!pending.empty()) merge_front();
  return ok;
}

Result<RankTrace> StreamingParser::parse() {
  failure_ = ParseFailure::kNone;
  auto parsed = parse_stream();
  if (!parsed.ok() && failure_ == ParseFailure::kNone) failure_ = ParseFailure::kOther;
  return parsed;
}

Result<RankTrace> StreamingParser::parse_stream() {
  RankTrace trace;
  trace.path = std::string(path_);
  buf_.resize(kWindow + 2 + simdjson::SIMDJSON_PADDING);

  // 1. The envelope before the events: each key is imported as soon as its value ends, so text
  // outside traceEvents is never kept whole (a value over kMaxEnvelopeValue is skipped).
  od::parser parser;
  EventImporter importer(path_, &trace);
  EnvelopeScanner scanner(kMaxEnvelopeValue);
  if (!fill(3)) return stream_error();
  // A UTF-8 byte order mark, as some editors and exporters write (HTA accepts it too).
  if (len_ - pos_ >= 3 && std::memcmp(buf_.data() + pos_, "\xEF\xBB\xBF", 3) == 0) pos_ += 3;
  bool found_events = false;
  if (auto status = scan_envelope(scanner, importer, parser, &trace, &found_events); !status) return status.error();
  if (!found_events) {
    if (!scanner.started()) return Error{fmt::format("{}:0: empty file (no JSON value)", path_)};
    if (!scanner.document_ended()) {
      ended_early_ = true;
      return failed(ParseFailure::kJson,
                    Error{fmt::format("{}:{}: invalid or truncated JSON (the top-level object is not closed)", path_,
                                      stream_offset(pos_))});
    }
    return Error{fmt::format("{}:0: no traceEvents array in the trace", path_)};
  }
  const bool legacy = scanner.legacy_array();
  trace.metadata.legacy_array = legacy;
  reserve_event_rows(size_hint_ ? size_hint_ : kWindow * 4, &trace);

  // 2. The events, window by window (most of them on worker threads when allowed).
  if (parallel_ && !parse_windows_in_parallel(importer, trace)) {
    return failed(ParseFailure::kNeedsSerial, Error{fmt::format("{}: a window did not parse on its own", path_)});
  }
  size_t window = kWindow;
  size_t array_end = 0;  // position in buf_ just after the closing bracket
  // Whether the text before pos_ ends with an element, so exactly one comma must come before the
  // next: the separator between two windows is checked as On-Demand checks it inside one (a missing
  // or doubled comma fails the same way wherever the window is cut). False after the '[' and after
  // the parallel phase, which stops just after a comma.
  bool comma_due = false;
  auto needs_whole_document = [&] {
    return failed(ParseFailure::kNeedsWholeDocument, Error{fmt::format("{}:{}: an element is larger than {} MiB", path_,
                                                                       stream_offset(pos_), kMaxWindow >> 20)});
  };
  auto separator_error = [&] {
    return failed(ParseFailure::kJson,
                  Error{fmt::format("{}:{}: invalid or truncated JSON ({})", path_, stream_offset(pos_),
                                    simdjson::error_message(simdjson::TAPE_ERROR))});
  };
  while (true) {
    // Skip the separator between two elements.
    while (true) {
      if (pos_ == len_) {
        if (eof_) {
          ended_early_ = true;
          return failed(ParseFailure::kJson,
                        Error{fmt::format("{}:{}: invalid or truncated JSON (the traceEvents array is not closed)",
                                          path_, stream_offset(pos_))});
        }
        if (!fill(window)) return stream_error();
        continue;
      }
      if (buf_[pos_] == ',') {
        if (!comma_due) return separator_error();
        comma_due = false;
      } else if (!is_json_space(buf_[pos_])) {
        break;
      }
      ++pos_;
    }
    // The end of the array; after a trailing comma too, as inside a window (see import_window).
    if (buf_[pos_] == ']') {
      array_end = pos_ + 1;
      break;
    }
    if (comma_due) return separator_error();
    if (len_ - pos_ < window && !eof_ && !fill(window)) return stream_error();
    // At the end of the data the whole rest is one window.
    size_t cut = len_;
    if (!eof_) {
      cut = serial_cut();
      if (cut == 0) {
        if (window >= kMaxWindow) return needs_whole_document();
        window *= 2;
        if (!fill(window)) return stream_error();
        continue;
      }
    }
    // The window is parsed in place as `[...]`. The byte after its ']' is set as a padded copy's
    // would be: On-Demand reads it (a ']' there makes it check the brackets' balance, issue 1834 of
    // simdjson), so the file's next byte would make garbage parse differently with each window size.
    const char saved_open = buf_[pos_ - 1];
    const char saved_cut = buf_[cut];
    const char saved_after = buf_[cut + 1];
    buf_[pos_ - 1] = '[';
    buf_[cut] = ']';
    buf_[cut + 1] = '\0';
    const char* start = buf_.data() + pos_ - 1;
    const size_t size = cut - (pos_ - 1) + 1;
    importer.set_window(start, size, stream_offset(pos_ - 1));
    od::document doc;
    reserve_parser(parser, size);
    simdjson::error_code e = parser.iterate(start, size, buf_.size() - (pos_ - 1)).get(doc);
    Result<size_t> resume = size_t{0};
    size_t window_array_end = size;
    if (e == simdjson::UTF8_ERROR) {
      auto bad = first_invalid_utf8(std::string_view(start, size));
      resume = Error{fmt::format("{}:{}: invalid UTF-8", path_, stream_offset(pos_ - 1) + bad.value_or(0))};
    } else if (e) {
      resume = failed(ParseFailure::kJson, Error{fmt::format("{}:{}: {} ({})", path_, stream_offset(pos_),
                                                             eof_ ? "invalid or truncated JSON" : "invalid JSON",
                                                             simdjson::error_message(e))});
    } else {
      // Every error of the importer is the JSON's (a structure or a value of the wrong type).
      resume = importer.import_window(doc, size - 1, &window_array_end);
      if (!resume) failure_ = ParseFailure::kJson;
    }
    buf_[pos_ - 1] = saved_open;
    buf_[cut] = saved_cut;
    buf_[cut + 1] = saved_after;
    if (!resume) return resume.error();
    if (!density_checked_ && stream_offset(cut) >= size_hint_ / kDensityShare) {
      density_checked_ = true;
      reserve_rows_at_density(&trace, stream_offset(cut), size_hint_);
    }
    if (options_.on_bytes_read) options_.on_bytes_read(in_.compressed_bytes());
    // Whether the window's text up to `next` ends with an element (rather than a comma).
    auto ends_with_element = [&](size_t next) {
      size_t at = next;
      while (at > pos_ && is_json_space(buf_[at - 1])) --at;
      return at > pos_ ? buf_[at - 1] != ',' : comma_due;
    };
    if (resume.value() == size) {
      if (window_array_end < size) {  // the real closing bracket was inside the window
        array_end = pos_ - 1 + window_array_end;
        break;
      }
      comma_due = ends_with_element(cut);
      pos_ = cut;
      window = kWindow;
      continue;
    }
    size_t next = pos_ - 1 + resume.value();
    if (next > pos_) {
      comma_due = ends_with_element(next);
      pos_ = next;
      window = kWindow;
      continue;
    }
    // Not even one element fits: a very long event, or the data ends inside it.
    if (eof_) {
      ended_early_ = true;
      return failed(ParseFailure::kJson, Error{fmt::format("{}:{}: invalid or truncated JSON (an event is cut short)",
                                                           path_, stream_offset(pos_))});
    }
    if (window >= kMaxWindow) return needs_whole_document();
    window *= 2;
    if (!fill(window)) return stream_error();
  }
  importer.finish_warnings();

  // 3. The keys after the events, and nothing but white space after the document.
  pos_ = array_end;
  scanner.events_array_closed();
  bool second_events = false;
  if (auto status = scan_envelope(scanner, importer, parser, &trace, &second_events); !status) return status.error();
  if (second_events) {
    return Error{
        fmt::format("{}:{}: a second traceEvents array (only one is supported)", path_, stream_offset(pos_ - 1))};
  }
  if (!scanner.document_ended()) {
    ended_early_ = true;
    return failed(ParseFailure::kJson,
                  Error{fmt::format("{}:{}: invalid or truncated JSON (the top-level object is not closed)", path_,
                                    stream_offset(pos_))});
  }
  importer.finish_warnings();
  if (!in_.warning().empty()) trace.warnings.push_back(diagnostic(Severity::kWarning, in_.warning()));
  trace.stats.json_bytes = stream_offset(len_);
  trace.stats.compressed_bytes = in_.compressed_bytes();
  if (auto status = finalize_trace(&trace); !status) return status.error();
  return trace;
}

}  // namespace scaleprof::trace
