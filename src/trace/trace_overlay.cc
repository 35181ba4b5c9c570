#include "trace/trace_overlay.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <unordered_map>

#include "core/json_string.h"
#include "core/output_file.h"
#include "trace/byte_stream.h"

namespace scaleprof::trace {

namespace {

namespace od = simdjson::ondemand;

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// The raw text of a value: whole for objects and arrays, the token for scalars.
simdjson::error_code raw_of(od::value& v, std::string_view* out) {
  od::json_type type;
  if (auto e = v.type().get(type)) return e;
  if (type == od::json_type::object) {
    od::object o;
    if (auto e = v.get_object().get(o)) return e;
    if (auto e = o.raw_json().get(*out)) return e;
  } else if (type == od::json_type::array) {
    od::array a;
    if (auto e = v.get_array().get(a)) return e;
    if (auto e = a.raw_json().get(*out)) return e;
  } else {
    *out = v.raw_json_token();
  }
  *out = trim(*out);
  return simdjson::SUCCESS;
}

// Microseconds on the file's clock, to the nanosecond.
std::string file_us(int64_t ns, int64_t base_ns) {
  const int64_t t = ns - base_ns;
  const int64_t whole = t / 1000, frac = t % 1000;
  if (frac == 0) return fmt::format("{}", whole);
  if (t < 0) return fmt::format("-{}.{:03}", -whole, -frac);
  return fmt::format("{}.{:03}", whole, frac);
}

// What the overlay needs of one event of the path: its pid and tid as written, and where its args
// object begins (to mark it critical).
struct EventFacts {
  std::string pid, tid;
};

// Copies `raw` (one event object) to `out`, marked `"critical": 1` in its args when `mark`, and
// reads its pid and tid into `facts`. False when it is not an object.
// The parser and its padded copy of the event are the caller's, reused from event to event (a
// parser and a buffer made per event were most of the overlay's time on a large trace).
struct EventParser {
  od::parser parser;
  std::string buffer;
};

bool copy_event(std::string_view raw, bool mark, EventFacts* facts, EventParser* p, std::string* out) {
  p->buffer.assign(raw);
  p->buffer.append(simdjson::SIMDJSON_PADDING, '\0');
  const simdjson::padded_string_view copy(p->buffer.data(), raw.size(), p->buffer.size());
  od::document doc;
  od::object obj;
  if (p->parser.iterate(copy).get(doc) || doc.get_object().get(obj)) return false;
  size_t args_at = std::string::npos;  // offset of the args object's '{' in raw
  bool args_empty = false;
  for (auto field : obj) {
    std::string_view key;
    od::value v;
    if (field.unescaped_key().get(key) || field.value().get(v)) return false;
    std::string_view text;
    if (raw_of(v, &text)) return false;
    if (key == "pid") facts->pid = std::string(text);
    if (key == "tid") facts->tid = std::string(text);
    if (key == "args" && !text.empty() && text.front() == '{') {
      args_at = static_cast<size_t>(text.data() - copy.data());
      args_empty = trim(text.substr(1, text.size() - 2)).empty();
    }
  }
  if (!mark) {
    out->append(raw);
    return true;
  }
  if (args_at != std::string::npos) {
    out->append(raw.substr(0, args_at + 1));
    out->append(args_empty ? "\"critical\": 1" : "\"critical\": 1, ");
    out->append(raw.substr(args_at + 1));
  } else {
    const size_t close = raw.rfind('}');
    out->append(raw.substr(0, close));
    out->append(trim(raw.substr(0, close)).size() > 1 ? ", " : "");
    out->append("\"args\": {\"critical\": 1}");
    out->append(raw.substr(close));
  }
  return true;
}

// `first`: nothing is in the array before it.
void append_track(const OverlaySpec& spec, bool first, std::string* out) {
  const int64_t pid = kOverlayPid;
  *out += fmt::format(
      "{}\n{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {}, \"tid\": 0, \"args\": {{\"name\": {}}}}}",
      first ? "" : ",", pid, json_quote(spec.track_name));
  *out += fmt::format(
      ",\n{{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": {}, \"tid\": 0, \"args\": {{\"name\": {}}}}}", pid,
      json_quote(spec.track_name));
  for (const OverlaySlice& s : spec.slices) {
    *out += fmt::format(
        ",\n{{\"ph\": \"X\", \"cat\": \"critical_path\", \"name\": {}, \"pid\": {}, \"tid\": 0, \"ts\": {}, "
        "\"dur\": {}, \"args\": {{\"category\": {}, \"bound_by\": {}, \"type\": {}, \"hta_weight_us\": {}, "
        "\"window\": {}}}}}",
        json_quote(s.name), pid, file_us(s.start_ns, spec.base_time_ns), file_us(s.end_ns - s.start_ns, 0),
        json_quote(s.category), json_quote(s.bound_by), json_quote(s.type), file_us(s.hta_weight_ns, 0), s.window);
  }
}

}  // namespace

Status write_trace_overlay(const std::string& input, const std::string& output, const OverlaySpec& spec) {
  std::string open_error;
  std::unique_ptr<ByteStream> stream = open_trace_stream(input, &open_error);
  if (!stream) return Error{open_error, ErrorKind::kIo};
  auto text = read_whole_stream(*stream);
  if (!text) return text.error();
  auto drawn = draw_trace_overlay(input, text.value(), spec);
  if (!drawn) return drawn.error();
  return write_output_file(output, drawn.value());
}

Result<std::string> draw_trace_overlay(std::string_view input, const simdjson::padded_string& json,
                                       const OverlaySpec& spec) {
  auto bad = [&](std::string_view what, const char* at) {
    const size_t offset = at != nullptr && at >= json.data() && at <= json.data() + json.size()
                              ? static_cast<size_t>(at - json.data())
                              : 0;
    return Error{fmt::format("{}: cannot draw the critical path on it: {} (byte {})", input, what, offset),
                 ErrorKind::kBadInput};
  };

  std::vector<int64_t> critical = spec.critical;
  std::sort(critical.begin(), critical.end());
  std::unordered_map<int64_t, EventFacts> facts;  // the flows' events
  for (const OverlayFlow& f : spec.flows) {
    facts.try_emplace(f.from_index);
    facts.try_emplace(f.to_index);
  }

  // On-Demand skips what it is not asked to read by counting brackets, without validating it: each
  // value copied is checked whole (a file the reader repaired, e.g. `"name": 555"x"`, is refused
  // rather than copied into an overlay that no viewer could open).
  simdjson::dom::parser validator;
  simdjson::dom::element ignored_element;
  auto valid = [&](std::string_view raw) { return !validator.parse(raw.data(), raw.size()).get(ignored_element); };
  od::parser parser;
  od::document doc;
  od::object top;
  if (parser.iterate(json).get(doc) || doc.get_object().get(top)) {
    return bad("not a JSON object", json.data());
  }
  std::string out;
  out.reserve(json.size() + json.size() / 8);
  out += "{";
  bool first_member = true, events_seen = false;
  for (auto field : top) {
    std::string_view key;
    od::value v;
    if (field.unescaped_key().get(key) || field.value().get(v)) return bad("invalid JSON", nullptr);
    out += first_member ? "\n  " : ",\n  ";
    first_member = false;
    out += json_quote(key);
    out += ": ";
    if (key != "traceEvents" || events_seen) {
      std::string_view raw;
      if (raw_of(v, &raw) || !valid(raw)) {
        return bad(fmt::format("invalid JSON in member {}", json_quote(key)), nullptr);
      }
      out += raw;
      continue;
    }
    events_seen = true;
    od::array events;
    if (v.get_array().get(events)) return bad("traceEvents is not an array", nullptr);
    out += "[";
    int64_t index = 0;
    EventParser event_parser;
    for (auto element : events) {
      od::value e;
      std::string_view raw;
      if (element.get(e) || raw_of(e, &raw) || !valid(raw)) {
        return bad(fmt::format("invalid JSON in event {}", index), nullptr);
      }
      if (index > 0) out += ",";
      out += "\n";
      const bool mark = std::binary_search(critical.begin(), critical.end(), index);
      const auto f = facts.find(index);
      EventFacts ignored;
      if ((mark || f != facts.end()) && raw.front() == '{') {
        if (!copy_event(raw, mark, f != facts.end() ? &f->second : &ignored, &event_parser, &out)) {
          return bad(fmt::format("event {} is not a JSON object", index), raw.data());
        }
      } else {
        out += raw;
      }
      ++index;
    }
    append_track(spec, index == 0, &out);
    int64_t id = 0;
    for (const OverlayFlow& flow : spec.flows) {
      const EventFacts& a = facts[flow.from_index];
      const EventFacts& b = facts[flow.to_index];
      if (a.pid.empty() || a.tid.empty() || b.pid.empty() || b.tid.empty()) continue;
      const std::string args =
          fmt::format("{{\"type\": {}, \"weight\": {}}}", json_quote(flow.type), file_us(flow.weight_ns, 0));
      out += fmt::format(
          ",\n{{\"ph\": \"s\", \"id\": {}, \"pid\": {}, \"tid\": {}, \"ts\": {}, \"cat\": \"critical_path\", "
          "\"name\": \"critical_path\", \"args\": {}}}",
          id, a.pid, a.tid, file_us(flow.from_ns, spec.base_time_ns), args);
      out += fmt::format(
          ",\n{{\"ph\": \"f\", \"bp\": \"e\", \"id\": {}, \"pid\": {}, \"tid\": {}, \"ts\": {}, "
          "\"cat\": \"critical_path\", \"name\": \"critical_path\", \"args\": {}}}",
          id, b.pid, b.tid, file_us(flow.to_ns, spec.base_time_ns), args);
      ++id;
    }
    out += "\n]";
  }
  if (!events_seen) return bad("no traceEvents array", json.data());
  out += "\n}\n";
  return out;
}

}  // namespace scaleprof::trace
